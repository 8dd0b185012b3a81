//! `lore hook pre-tool-use`: the warning that comes with the call.
//!
//! Before a shell command runs, the project's call index (see
//! [`crate::call_index`]) is asked whether earlier sessions failed with this
//! command and what worked after. It answers from a local file: no network,
//! and nothing at all when there is no index or no strong evidence. Each
//! warning is given once per session, so the same call made again goes
//! through in silence.
//!
//! How the warning reaches the model depends on the agent:
//! - **Claude Code** and **Codex**: `additionalContext` of their PreToolUse
//!   answer, added to the model's context with the call, which still runs.
//! - **Gemini CLI**: its BeforeTool answer has no context field; a `deny`
//!   whose `reason` is the warning is what reaches the model (as the tool's
//!   error). Given once, so the model can make the call again.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use lore_calls::{CallWarning, Strength};
use serde_json::json;
use uuid::Uuid;

use super::input::HookInput;
use super::record;
use crate::call_index;
use crate::identity::AgentKind;

/// The warning for `input`'s call, in the agent's answer format, when there
/// is one to give; it is then marked as given for `session`.
pub fn answer(agent: AgentKind, project: &str, session: Uuid, input: &HookInput, state_dir: &Path) -> Option<String> {
    if !record::is_shell(&input.tool_name) {
        return None;
    }
    let command = input.command()?;
    let index = call_index::load(&call_index::path(state_dir, project), project)?;
    let warning = index.memory.warning(command, Strength::default())?;
    if !mark_given(&given_path(state_dir, session), &warning) {
        return None;
    }
    Some(agent_answer(agent, &warning.text()))
}

/// Where a session's given warnings are kept, one fingerprint a line.
fn given_path(state_dir: &Path, session: Uuid) -> PathBuf {
    state_dir.join("calls").join(format!("given-{session}"))
}

/// Records the warning as given; false when it was given already (or
/// cannot be recorded: a warning given on every call is worse than none).
fn mark_given(path: &Path, warning: &CallWarning) -> bool {
    let fingerprint = blake3::hash(format!("{}\u{0}{}", warning.command, warning.failure).as_bytes()).to_hex();
    let line = &fingerprint[..16];
    if std::fs::read_to_string(path).is_ok_and(|given| given.lines().any(|given| given == line)) {
        return false;
    }
    let appended = path.parent().map_or(Ok(()), std::fs::create_dir_all).and_then(|()| {
        let mut file = std::fs::OpenOptions::new().create(true).append(true).open(path)?;
        writeln!(file, "{line}")
    });
    appended.is_ok()
}

fn agent_answer(agent: AgentKind, text: &str) -> String {
    let answer = match agent {
        AgentKind::Gemini => json!({ "decision": "deny", "reason": text }),
        _ => json!({ "hookSpecificOutput": { "hookEventName": "PreToolUse", "additionalContext": text } }),
    };
    answer.to_string()
}

#[cfg(test)]
mod tests {
    use lore_calls::{Call, CallMemory, Outcome};

    use super::*;
    use crate::call_index::CallIndex;

    fn input(tool: &str, command: &str) -> HookInput {
        let bytes = json!({
            "session_id": "s", "hook_event_name": "PreToolUse", "tool_name": tool,
            "tool_input": { "command": command }, "cwd": "/tmp"
        });
        HookInput::parse(bytes.to_string().as_bytes()).expect("valid input")
    }

    /// Two earlier sessions ran pytest, failed, and then the repository's runner passed.
    fn indexed(state_dir: &Path) {
        let mut memory = CallMemory::new();
        for _ in 0..2 {
            memory.learn(&[
                Call { command: "pytest tests".into(), outcome: Outcome::Failed("No module named <*>".into()) },
                Call { command: "./tests/runtests.py forms".into(), outcome: Outcome::Passed },
            ]);
        }
        let index = CallIndex { project: "acme".into(), refreshed_at: 0, refreshed_for: Uuid::nil(), memory };
        call_index::save(&call_index::path(state_dir, "acme"), &index).expect("saved");
    }

    #[test]
    fn a_call_that_failed_before_is_warned_of_once_per_session() {
        let dir = tempfile::tempdir().expect("tempdir");
        indexed(dir.path());
        let session = Uuid::now_v7();
        let call = input("Bash", "pytest tests/test_forms.py");
        let answer = answer(AgentKind::ClaudeCode, "acme", session, &call, dir.path()).expect("a warning");
        let answer: serde_json::Value = serde_json::from_str(&answer).expect("JSON");
        let context = answer["hookSpecificOutput"]["additionalContext"].as_str().expect("context");
        assert!(context.contains("What later worked, in 2 of 2 sessions: `tests/runtests.py <arg>`"), "{context}");
        assert_eq!(answer["hookSpecificOutput"]["hookEventName"], "PreToolUse");
        assert_eq!(super::answer(AgentKind::ClaudeCode, "acme", session, &call, dir.path()), None, "given once");
        assert!(super::answer(AgentKind::ClaudeCode, "acme", Uuid::now_v7(), &call, dir.path()).is_some());
    }

    #[test]
    fn gemini_is_told_by_a_deny_whose_reason_is_the_warning() {
        let dir = tempfile::tempdir().expect("tempdir");
        indexed(dir.path());
        let call = input("run_shell_command", "pytest tests");
        let answer = answer(AgentKind::Gemini, "acme", Uuid::now_v7(), &call, dir.path()).expect("a warning");
        let answer: serde_json::Value = serde_json::from_str(&answer).expect("JSON");
        assert_eq!(answer["decision"], "deny");
        assert!(answer["reason"].as_str().is_some_and(|reason| reason.contains("failed with")));
    }

    #[test]
    fn nothing_is_said_without_an_index_a_match_or_a_shell() {
        let dir = tempfile::tempdir().expect("tempdir");
        let session = Uuid::now_v7();
        assert_eq!(answer(AgentKind::ClaudeCode, "acme", session, &input("Bash", "pytest"), dir.path()), None);
        indexed(dir.path());
        assert_eq!(answer(AgentKind::ClaudeCode, "acme", session, &input("Bash", "ls -la"), dir.path()), None);
        assert_eq!(answer(AgentKind::ClaudeCode, "other", session, &input("Bash", "pytest"), dir.path()), None);
        assert_eq!(answer(AgentKind::ClaudeCode, "acme", session, &input("Read", "pytest"), dir.path()), None);
    }
}
