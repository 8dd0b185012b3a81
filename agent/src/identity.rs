//! Who speaks to Lore: the project, the agent, and the Lore session of an
//! agent session.
//!
//! An agent session (Claude Code's `session_id`, also in the environment of
//! every hook and MCP server it starts as `CLAUDE_CODE_SESSION_ID`) is one
//! Lore session. Its id is derived, not stored: a UUIDv5 of the agent kind
//! and the agent's session id. Every process that speaks for the session
//! (each hook, the MCP server) arrives at the same id on its own, with no
//! file to share and nothing to race on, and a resumed or compacted agent
//! session, which keeps its id, continues its Lore session.

use std::path::Path;

use uuid::Uuid;

/// The namespace of Lore session ids derived from agent sessions.
const SESSION_NAMESPACE: Uuid = uuid::uuid!("5b0c6a63-21b1-4d4e-9a3b-4c6f1d2e8a17");

/// Which agent a hook or MCP server speaks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AgentKind {
    ClaudeCode,
    Codex,
    /// Google's Gemini CLI.
    Gemini,
    /// Any other MCP client.
    Other,
}

impl AgentKind {
    /// The session's `supervisor_type` in Lore.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ClaudeCode => "claude-code",
            Self::Codex => "codex",
            Self::Gemini => "gemini",
            Self::Other => "mcp",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "claude-code" | "claude" => Some(Self::ClaudeCode),
            "codex" => Some(Self::Codex),
            "gemini" | "gemini-cli" => Some(Self::Gemini),
            "mcp" | "other" => Some(Self::Other),
            _ => None,
        }
    }

    /// The agent that started this process, from the environment it gave.
    pub fn from_environment() -> Self {
        if std::env::var_os("CLAUDECODE").is_some() || std::env::var_os("CLAUDE_CODE_SESSION_ID").is_some() {
            Self::ClaudeCode
        } else if std::env::var_os("CODEX_SESSION_ID").is_some() || std::env::var_os("CODEX_HOME").is_some() {
            Self::Codex
        } else if std::env::var_os("GEMINI_SESSION_ID").is_some() || std::env::var_os("GEMINI_CLI").is_some() {
            Self::Gemini
        } else {
            Self::Other
        }
    }

    /// The agent session this process belongs to, when the agent says.
    pub fn session_from_environment(self) -> Option<String> {
        let variable = match self {
            Self::ClaudeCode => "CLAUDE_CODE_SESSION_ID",
            Self::Codex => "CODEX_SESSION_ID",
            Self::Gemini => "GEMINI_SESSION_ID",
            Self::Other => return None,
        };
        std::env::var(variable).ok().filter(|id| !id.trim().is_empty())
    }
}

/// The Lore session of an agent session.
pub fn lore_session_id(kind: AgentKind, agent_session_id: &str) -> Uuid {
    Uuid::new_v5(&SESSION_NAMESPACE, format!("{}:{}", kind.as_str(), agent_session_id.trim()).as_bytes())
}

/// Who speaks: a project, an agent in it, and what runs the agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    pub project: String,
    pub agent_id: String,
    pub kind: AgentKind,
}

impl Identity {
    /// `project` when given, else `LORE_PROJECT`, else the repository's
    /// name; `agent_id` when given, else `LORE_AGENT_ID`, else
    /// `<kind>@<host>`.
    pub fn resolve(project: Option<&str>, agent_id: Option<&str>, kind: AgentKind, dir: &Path) -> Self {
        let project = project
            .map(str::to_owned)
            .or_else(|| std::env::var("LORE_PROJECT").ok().filter(|value| !value.is_empty()))
            .unwrap_or_else(|| project_name(dir));
        let agent_id = agent_id
            .map(str::to_owned)
            .or_else(|| std::env::var("LORE_AGENT_ID").ok().filter(|value| !value.is_empty()))
            .unwrap_or_else(|| format!("{}@{}", kind.as_str(), hostname()));
        Self { project, agent_id, kind }
    }
}

/// A project name from a directory: the repository's top folder name, made
/// into Lore's project alphabet (`[A-Za-z0-9._-]`, at most 128).
pub fn project_name(dir: &Path) -> String {
    let root = repository_root(dir).unwrap_or_else(|| dir.to_owned());
    let name = root.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();
    let cleaned: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') { c } else { '-' })
        .take(128)
        .collect();
    let cleaned = cleaned.trim_matches('-').to_owned();
    if cleaned.is_empty() { "default".to_owned() } else { cleaned }
}

/// The closest folder at or above `dir` that holds a `.git`.
pub fn repository_root(dir: &Path) -> Option<std::path::PathBuf> {
    dir.ancestors().find(|folder| folder.join(".git").exists()).map(Path::to_path_buf)
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|name| name.trim().to_owned())
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| "localhost".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_agent_session_is_one_lore_session_whoever_asks() {
        let first = lore_session_id(AgentKind::ClaudeCode, "dac6059f-e426-4cd7-aed4-985cfe52432f");
        assert_eq!(first, lore_session_id(AgentKind::ClaudeCode, " dac6059f-e426-4cd7-aed4-985cfe52432f\n"));
        assert_ne!(first, lore_session_id(AgentKind::Codex, "dac6059f-e426-4cd7-aed4-985cfe52432f"));
        assert_ne!(first, lore_session_id(AgentKind::ClaudeCode, "another"));
        assert_eq!(first.get_version_num(), 5);
    }

    #[test]
    fn a_project_name_is_the_repository_folder_in_lores_alphabet() {
        let root = tempfile::tempdir().unwrap();
        let repo = root.path().join("My Repo (fork)");
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        std::fs::create_dir_all(repo.join("src/deep")).unwrap();
        assert_eq!(project_name(&repo.join("src/deep")), "My-Repo--fork");
        assert_eq!(project_name(Path::new("/")), "default");
    }
}
