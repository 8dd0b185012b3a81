//! Which agent session a repository is in now, as the hooks last saw it.
//!
//! Lore's MCP server records its tool calls in the agent session's Lore
//! session, which it learns from the agent's environment (Claude Code's
//! `CLAUDE_CODE_SESSION_ID`). Codex gives its MCP servers neither that nor
//! any id in their calls, and starts them before the session's first hook.
//! Its hooks do get the session id: SessionStart and each prompt note it
//! here, per agent and repository, and the MCP server reads it at each
//! call.
//!
//! Two sessions of the same agent in the same repository at once, for the
//! same user, share this note: the MCP calls then go to whichever prompted
//! last.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::identity::AgentKind;

/// A note older than this is of a session long gone.
const FRESH_FOR: Duration = Duration::from_secs(24 * 60 * 60);
/// What an agent session id may be (they are UUIDs or similar).
const MAX_ID_CHARS: usize = 200;

fn note_path(state_dir: &Path, kind: AgentKind, repository: &Path) -> PathBuf {
    let hashed = blake3::hash(repository.as_os_str().as_encoded_bytes()).to_hex();
    state_dir.join("current").join(format!("{}-{}", kind.as_str(), &hashed[..16]))
}

/// Notes `agent_session` as the session of `kind` in `repository`.
pub fn remember(state_dir: &Path, kind: AgentKind, repository: &Path, agent_session: &str) -> std::io::Result<()> {
    let agent_session = agent_session.trim();
    if agent_session.is_empty() || agent_session.chars().count() > MAX_ID_CHARS {
        return Ok(());
    }
    let path = note_path(state_dir, kind, repository);
    if std::fs::read_to_string(&path).is_ok_and(|noted| noted == agent_session) {
        // Touched, so it stays fresh: a rename would cost more.
        return std::fs::File::options().append(true).open(&path)?.set_modified(SystemTime::now());
    }
    let dir = path.parent().expect("the note is in a folder");
    std::fs::create_dir_all(dir)?;
    // Written whole, then renamed: a reader never sees half an id.
    let temporary = dir.join(format!(".{}.{}", std::process::id(), path.file_name().unwrap().to_string_lossy()));
    std::fs::write(&temporary, agent_session)?;
    std::fs::rename(&temporary, &path)
}

/// The session of `kind` in `repository`, if a hook noted one lately.
pub fn recall(state_dir: &Path, kind: AgentKind, repository: &Path) -> Option<String> {
    let path = note_path(state_dir, kind, repository);
    let age = std::fs::metadata(&path).ok()?.modified().ok()?.elapsed().unwrap_or_default();
    if age > FRESH_FOR {
        return None;
    }
    let noted = std::fs::read_to_string(&path).ok()?;
    let noted = noted.trim();
    (!noted.is_empty() && noted.chars().count() <= MAX_ID_CHARS).then(|| noted.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_session_noted_for_an_agent_and_repository_is_recalled() {
        let state = tempfile::tempdir().unwrap();
        let (repo, other) = (Path::new("/work/calc"), Path::new("/work/shop"));
        assert_eq!(recall(state.path(), AgentKind::Codex, repo), None);
        remember(state.path(), AgentKind::Codex, repo, "thread-1").unwrap();
        remember(state.path(), AgentKind::Codex, repo, "thread-2").unwrap();
        remember(state.path(), AgentKind::Codex, repo, "thread-2").unwrap();
        remember(state.path(), AgentKind::Codex, other, "thread-9").unwrap();
        assert_eq!(recall(state.path(), AgentKind::Codex, repo).as_deref(), Some("thread-2"));
        assert_eq!(recall(state.path(), AgentKind::Gemini, repo), None, "per agent");
        assert_eq!(recall(state.path(), AgentKind::Codex, other).as_deref(), Some("thread-9"));
        // An empty or oversized id is not noted.
        remember(state.path(), AgentKind::Codex, repo, " ").unwrap();
        remember(state.path(), AgentKind::Codex, repo, &"x".repeat(500)).unwrap();
        assert_eq!(recall(state.path(), AgentKind::Codex, repo).as_deref(), Some("thread-2"));
        // A stale note is of no session.
        let path = note_path(state.path(), AgentKind::Codex, repo);
        let old = SystemTime::now() - FRESH_FOR - Duration::from_secs(60);
        std::fs::File::options().append(true).open(&path).unwrap().set_modified(old).unwrap();
        assert_eq!(recall(state.path(), AgentKind::Codex, repo), None);
    }
}
