//! Standing instructions where the repository lives: the project's list,
//! read from Lore (`StandingInstructions`), written into Lore's block of the
//! repository's instructions file on this machine. The SessionStart hook
//! does it at every start, and `lore instructions sync|diff` on request.
//!
//! The file is the one the agent reads: CLAUDE.md for Claude Code,
//! AGENTS.md for Codex and the rest, at the repository's root. Lines
//! outside the block, and entries a person edited, are left as they are
//! (see `lore_instructions`).

use std::path::{Path, PathBuf};

use lore_instructions::{Edit, Instruction, Synced};
use lore_proto::auth::AuthChannel;
use lore_proto::v1 as proto;

use crate::AgentError;
use crate::identity::{AgentKind, repository_root};

/// The project's list as Lore has it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StandingList {
    pub instructions: Vec<Instruction>,
    pub withdrawn: Vec<String>,
}

/// Reads the project's standing instructions from Lore.
pub async fn fetch(channel: AuthChannel, project: &str) -> Result<StandingList, AgentError> {
    let request = proto::StandingInstructionsRequest { project: project.to_owned() };
    let response = lore_proto::client::qa(channel).standing_instructions(request).await?.into_inner();
    Ok(StandingList {
        instructions: response
            .instructions
            .into_iter()
            .map(|instruction| Instruction { key: instruction.key, body: instruction.text })
            .collect(),
        withdrawn: response.withdrawn,
    })
}

/// The instructions file `agent` reads in the repository that holds `dir`;
/// `None` outside a repository, where there is nothing to keep it with.
pub fn file_for(dir: &Path, agent: AgentKind) -> Option<PathBuf> {
    let name = match agent {
        AgentKind::ClaudeCode => "CLAUDE.md",
        AgentKind::Gemini => "GEMINI.md",
        AgentKind::Codex | AgentKind::Other => "AGENTS.md",
    };
    repository_root(dir).map(|root| root.join(name))
}

/// What the file holds now (`None` when it does not exist) and what a sync
/// would make of it, without writing.
pub fn preview(path: &Path, list: &StandingList) -> std::io::Result<(Option<String>, Synced)> {
    let before = lore_instructions::read(path)?;
    let synced = lore_instructions::sync(before.as_deref().unwrap_or_default(), &list.instructions, &list.withdrawn);
    Ok((before, synced))
}

/// Brings the file to the list, writing it whole (a temporary file renamed
/// over it) only when something changed.
pub fn sync_file(path: &Path, list: &StandingList) -> std::io::Result<Synced> {
    let mut outcome = Synced::default();
    let (edit, _) = lore_instructions::apply(
        path,
        |text| {
            outcome = lore_instructions::sync(text, &list.instructions, &list.withdrawn);
            match &outcome.text {
                Some(text) => Edit::Changed(text.clone()),
                None => Edit::Unchanged,
            }
        },
        |_| {},
    )?;
    if let Edit::Conflict(reason) = edit {
        outcome.conflicts.push(reason);
    }
    Ok(outcome)
}

/// One line on what a sync did, for people and the hooks' log.
pub fn summary(path: &Path, synced: &Synced) -> String {
    let name = path.display();
    if synced.written.is_empty() && synced.removed.is_empty() {
        return format!("{name} is up to date");
    }
    let entries = |count: usize| if count == 1 { "1 entry".to_owned() } else { format!("{count} entries") };
    format!("{name}: {} written, {} removed", entries(synced.written.len()), entries(synced.removed.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_is_the_agents_own_at_the_repository_root() {
        let repository = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(repository.path().join(".git")).unwrap();
        std::fs::create_dir_all(repository.path().join("src/deep")).unwrap();
        let deep = repository.path().join("src/deep");
        assert_eq!(file_for(&deep, AgentKind::ClaudeCode), Some(repository.path().join("CLAUDE.md")));
        assert_eq!(file_for(&deep, AgentKind::Codex), Some(repository.path().join("AGENTS.md")));
        let elsewhere = tempfile::tempdir().unwrap();
        assert_eq!(file_for(elsewhere.path(), AgentKind::ClaudeCode), None);
    }

    #[test]
    fn a_sync_writes_once_and_keeps_what_a_person_wrote() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("CLAUDE.md");
        std::fs::write(&path, "# Ours\n\nKeep this.\n").unwrap();
        let list = StandingList {
            instructions: vec![Instruction { key: "QA-1".into(), body: "- **Seed the cache** first.".into() }],
            withdrawn: vec![],
        };
        let (before, preview) = preview(&path, &list).unwrap();
        assert_eq!(before.as_deref(), Some("# Ours\n\nKeep this.\n"));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "# Ours\n\nKeep this.\n", "a preview writes nothing");
        let synced = sync_file(&path, &list).unwrap();
        assert_eq!(synced.written, ["QA-1"]);
        assert_eq!(Some(std::fs::read_to_string(&path).unwrap()), preview.text);
        assert!(std::fs::read_to_string(&path).unwrap().starts_with("# Ours\n\nKeep this.\n"));
        assert_eq!(sync_file(&path, &list).unwrap(), Synced::default());
        assert_eq!(summary(&path, &Synced::default()), format!("{} is up to date", path.display()));
    }
}
