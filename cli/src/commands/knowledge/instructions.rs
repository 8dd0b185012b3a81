//! `lore instructions sync|diff`: the project's standing instructions (the
//! QA promotions people approved) written into the repository's CLAUDE.md
//! or AGENTS.md, or shown as the patch that would write them, for a pull
//! request. The SessionStart hook does the same at every start.

use std::path::PathBuf;

use anyhow::Context as _;
use lore_agent::identity::{AgentKind, Identity};
use lore_agent::instructions::{self, StandingList};

use crate::commands::Channel;

#[derive(clap::Subcommand)]
pub enum Command {
    /// Write them into the file (hand edits and lines outside Lore's block
    /// are kept; running it again changes nothing).
    Sync(Args),
    /// Print the change `sync` would make, as a unified diff.
    Diff(Args),
}

#[derive(clap::Args)]
pub struct Args {
    /// The project (default: LORE_PROJECT, else the repository's name).
    #[arg(long, env = "LORE_PROJECT")]
    project: Option<String>,
    /// Whose file: claude-code (CLAUDE.md) or codex (AGENTS.md), at the
    /// root of the repository holding the current folder.
    #[arg(long, default_value = "claude-code", value_parser = lore_agent::hooks::parse_agent)]
    agent: AgentKind,
    /// This file instead.
    #[arg(long)]
    file: Option<PathBuf>,
}

pub async fn run(channel: Channel, command: Command) -> anyhow::Result<()> {
    let (args, write) = match command {
        Command::Sync(args) => (args, true),
        Command::Diff(args) => (args, false),
    };
    let here = std::env::current_dir().context("cannot read the current folder")?;
    let path = match args.file {
        Some(file) => file,
        None => instructions::file_for(&here, args.agent)
            .with_context(|| format!("{} is not in a git repository; say which file with --file", here.display()))?,
    };
    let project = Identity::resolve(args.project.as_deref(), None, args.agent, &here).project;
    let list = instructions::fetch(channel, &project).await?;
    let shown = path.display().to_string();
    // A sync shows no diff, so only a preview needs the text before.
    let (before, synced) = tokio::task::spawn_blocking({
        let path = path.clone();
        let list: StandingList = list.clone();
        move || {
            if write {
                instructions::sync_file(&path, &list).map(|synced| (None, synced))
            } else {
                instructions::preview(&path, &list)
            }
        }
    })
    .await?
    .with_context(|| format!("cannot update {shown}"))?;
    for conflict in &synced.conflicts {
        eprintln!("left as it is: {conflict}");
    }
    if write {
        println!("{}", instructions::summary(&path, &synced));
        return Ok(());
    }
    if let Some(after) = &synced.text {
        let name = path.file_name().map_or_else(|| shown.clone(), |name| name.to_string_lossy().into_owned());
        print!("{}", lore_instructions::diff(&name, before.as_deref(), after));
    } else {
        eprintln!("{shown} is up to date with the {} standing instructions of {project}", list.instructions.len());
    }
    Ok(())
}
