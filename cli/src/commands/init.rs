//! `lore init claude-code|codex|gemini`: Lore's MCP server and hooks merged into
//! a repository's agent configuration (see `lore_agent::init`).

use lore_agent::init::{self, InitArgs};

pub fn run(args: InitArgs) -> anyhow::Result<()> {
    let home = std::env::var_os("HOME").filter(|home| !home.is_empty()).map(std::path::PathBuf::from);
    let changes = init::plan(&args, home.as_deref())?;
    for change in &changes {
        let state = match (&change.before, change.changed()) {
            (_, false) => "unchanged",
            (None, true) => "created",
            (Some(_), true) => "updated",
        };
        if args.dry_run && change.changed() {
            print!("{}", change.diff());
        } else {
            println!("{state:>9}  {}", change.path.display());
        }
    }
    if args.dry_run {
        println!("dry run: nothing was written");
        return Ok(());
    }
    init::apply(&changes)?;
    if changes.iter().any(init::FileChange::changed) {
        println!("Lore is plugged in: the next agent session starts with a briefing and records its work.");
    }
    Ok(())
}
