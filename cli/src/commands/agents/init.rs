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
    if args.agent == init::InitTarget::Codex && !args.no_approve {
        trust_codex_hooks(&args, home.as_deref())?;
    }
    if changes.iter().any(init::FileChange::changed) {
        println!("Lore is plugged in: the next agent session starts with a briefing and records its work.");
    }
    Ok(())
}

/// Codex runs a project's hooks only once they are trusted: Lore's are,
/// with the hashes Codex itself gives them.
fn trust_codex_hooks(args: &InitArgs, home: Option<&std::path::Path>) -> anyhow::Result<()> {
    // The repository is set up already: a Codex that cannot be asked
    // leaves the review to the user, it does not fail the command.
    match init::trust_codex_hooks(args, home).unwrap_or_else(|error| init::CodexHookTrust::Unasked(error.to_string())) {
        init::CodexHookTrust::Change(change) => {
            let state = if change.changed() { "updated" } else { "unchanged" };
            println!("{state:>9}  {} (Lore's hooks trusted for Codex)", change.path.display());
            init::apply(std::slice::from_ref(&change))?;
        }
        init::CodexHookTrust::Unasked(why) => println!(
            "note: Lore's hooks are not trusted for Codex yet ({why}); Codex asks you to review them (/hooks) at its next start."
        ),
    }
    Ok(())
}
