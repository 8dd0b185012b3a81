//! `lore hook pre-tool-use`: the warning that comes with the call.
//!
//! Before a shell command runs, the project's call index (see
//! [`crate::call_index`]) is asked whether earlier sessions failed with this
//! command and what worked after. It answers from a local file: no network,
//! and nothing at all when there is no index or no strong evidence. Each
//! warning is given once per session, so the same call made again goes
//! through in silence.
//!
//! A guard (a person's refusal of every call of one shape, while the
//! project's guards are on) comes first: the call is denied, every time,
//! with the reason and what to run instead, for all three agents.
//! Everything given is kept for the injection ledger (see
//! [`crate::call_ledger`]).
//!
//! How the warning reaches the model depends on the agent:
//! - **Claude Code** and **Codex**: `additionalContext` of their PreToolUse
//!   answer, added to the model's context with the call, which still runs.
//! - **Gemini CLI**: its BeforeTool answer has no context field; a `deny`
//!   whose `reason` is the warning is what reaches the model (as the tool's
//!   error). Given once, so the model can make the call again.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use lore_calls::{CallWarning, Shape};
use serde_json::json;
use uuid::Uuid;

use super::input::HookInput;
use super::record;
use crate::call_index;
use crate::call_ledger::{self, Given};
use crate::identity::AgentKind;

/// The agent's answer to `input`'s call, when Lore has one: a guard's
/// refusal (every time), or a warning (once per session). Each is kept for
/// the injection ledger.
pub fn answer(agent: AgentKind, project: &str, session: Uuid, input: &HookInput, state_dir: &Path) -> Option<String> {
    if !record::is_shell(&input.tool_name) {
        return None;
    }
    let command = input.command()?;
    let index = call_index::load(&call_index::path(state_dir, project), project)?;
    let shape = Shape::of(command);
    if let Some(guard) = index.guard(&shape) {
        let text = guard.text();
        keep_given(state_dir, project, session, Some(guard.guard_id.clone()), &guard.shape, &guard.reason, &text);
        return Some(agent_answer(agent, Said::Refusal, &text));
    }
    let warning = index.warning(command, &shape)?;
    if !mark_given(&given_path(state_dir, session), &warning) {
        return None;
    }
    let text = warning.text();
    keep_given(state_dir, project, session, None, &shape.text(), &warning.failure, &text);
    Some(agent_answer(agent, Said::Warning, &text))
}

/// Keeps what was given for the ledger; a record that cannot be kept is
/// not worth failing the call over.
fn keep_given(
    state_dir: &Path,
    project: &str,
    session: Uuid,
    guard_id: Option<String>,
    shape: &str,
    label: &str,
    text: &str,
) {
    let given = Given {
        injection_id: Uuid::now_v7(),
        project: project.to_owned(),
        session_id: session,
        guard_id,
        shape: shape.to_owned(),
        label: label.to_owned(),
        chars: text.chars().count(),
        given_at: chrono::Utc::now(),
    };
    let _ = call_ledger::keep(state_dir, &given);
}

/// Sessions' records of given warnings are kept this long: a session
/// resumed after a week may hear a warning again.
const GIVEN_KEPT: std::time::Duration = std::time::Duration::from_secs(7 * 24 * 3600);

/// Deletes the records of given warnings of sessions untouched for
/// [`GIVEN_KEPT`]; the index refresh calls it, so the state directory does
/// not grow with every session.
pub fn prune_given(state_dir: &Path) {
    let Ok(entries) = std::fs::read_dir(state_dir.join("calls")) else { return };
    for entry in entries.flatten() {
        let old = entry
            .metadata()
            .and_then(|metadata| metadata.modified())
            .is_ok_and(|modified| modified.elapsed().unwrap_or_default() >= GIVEN_KEPT);
        if old && entry.file_name().to_str().is_some_and(|name| name.starts_with("given-")) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
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

/// What Lore says with a call.
#[derive(Clone, Copy)]
enum Said {
    /// A warning: the call still runs (except on Gemini, see the module).
    Warning,
    /// A guard's refusal: the call does not run, and the reason is what
    /// the model reads instead of its output.
    Refusal,
}

/// `text` in the agent's answer format. Gemini's BeforeTool has only a
/// deny to speak with, for both.
fn agent_answer(agent: AgentKind, said: Said, text: &str) -> String {
    let answer = match (agent, said) {
        (AgentKind::Gemini, _) => json!({ "decision": "deny", "reason": text }),
        (_, Said::Warning) => {
            json!({ "hookSpecificOutput": { "hookEventName": "PreToolUse", "additionalContext": text } })
        }
        (_, Said::Refusal) => json!({ "hookSpecificOutput": {
            "hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": text
        } }),
    };
    answer.to_string()
}

#[cfg(test)]
mod tests {
    use lore_calls::{Call, CallMemory, Outcome};
    use lore_proto::v1 as proto;

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
        let index = CallIndex {
            project: "acme".into(),
            refreshed_at: 0,
            refreshed_for: Uuid::nil(),
            memory,
            guards: Vec::new(),
            fixes: Default::default(),
        };
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
    fn a_trusted_fix_of_the_failure_says_how_to_avoid_it() {
        let dir = tempfile::tempdir().expect("tempdir");
        indexed(dir.path());
        let path = call_index::path(dir.path(), "acme");
        let mut index = call_index::load(&path, "acme").expect("indexed");
        let fix = |text: &str| lore_calls::KnownFix { trust: "verified".into(), text: text.into() };
        index.fixes.insert("No module named <*>".into(), fix("Run the suite with tests/runtests.py, not pytest."));
        call_index::save(&path, &index).expect("saved");
        let answer = answer(AgentKind::ClaudeCode, "acme", Uuid::now_v7(), &input("Bash", "pytest x"), dir.path());
        let answer = answer.expect("a warning");
        assert!(
            answer.contains("How to avoid it (verified fix): Run the suite with tests/runtests.py, not pytest."),
            "{answer}"
        );
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
    fn a_guard_refuses_every_call_of_its_shape_and_each_refusal_is_kept_for_the_ledger() {
        let dir = tempfile::tempdir().expect("tempdir");
        indexed(dir.path());
        let path = call_index::path(dir.path(), "acme");
        let mut index = call_index::load(&path, "acme").expect("indexed");
        index.guards.push(lore_calls::Guard {
            guard_id: Uuid::nil().to_string(),
            shape: "pytest <arg> -x".into(),
            reason: "This repository runs its tests with runtests.sh.".into(),
            alternative: "./runtests.sh".into(),
        });
        call_index::save(&path, &index).expect("saved");
        let session = Uuid::now_v7();
        let call = input("Bash", "cd /repo && pytest tests/test_forms.py -x");
        for _ in 0..2 {
            let answer = answer(AgentKind::ClaudeCode, "acme", session, &call, dir.path()).expect("refused");
            let answer: serde_json::Value = serde_json::from_str(&answer).expect("JSON");
            assert_eq!(answer["hookSpecificOutput"]["permissionDecision"], "deny");
            let reason = answer["hookSpecificOutput"]["permissionDecisionReason"].as_str().expect("reason");
            assert!(reason.contains("Run instead: `./runtests.sh`"), "{reason}");
        }
        let gemini = answer(AgentKind::Gemini, "acme", session, &call, dir.path()).expect("refused");
        assert!(gemini.contains(r#""decision":"deny""#), "{gemini}");
        // A call the guard does not hold is still warned of, once.
        let warned = answer(AgentKind::ClaudeCode, "acme", session, &input("Bash", "pytest tests"), dir.path());
        assert!(warned.is_some_and(|warned| warned.contains("additionalContext")));
        let taken = call_ledger::take(dir.path());
        let kinds: Vec<i32> = taken
            .writes
            .iter()
            .map(|write| match write {
                lore_spool::entry::Write::RecordCallInjection(given) => given.kind,
                _ => 0,
            })
            .collect();
        let (guard, warning) = (proto::InjectedKind::Guard as i32, proto::InjectedKind::CallWarning as i32);
        assert_eq!(kinds, vec![guard, guard, guard, warning]);
    }

    #[test]
    fn records_of_given_warnings_are_pruned_once_a_week_old() {
        let dir = tempfile::tempdir().expect("tempdir");
        indexed(dir.path());
        let (old, new) = (Uuid::now_v7(), Uuid::now_v7());
        for session in [old, new] {
            assert!(answer(AgentKind::ClaudeCode, "acme", session, &input("Bash", "pytest x"), dir.path()).is_some());
        }
        let week_ago = std::time::SystemTime::now() - GIVEN_KEPT - std::time::Duration::from_secs(60);
        std::fs::File::options()
            .write(true)
            .open(given_path(dir.path(), old))
            .and_then(|file| file.set_modified(week_ago))
            .expect("aged");
        prune_given(dir.path());
        assert!(!given_path(dir.path(), old).exists() && given_path(dir.path(), new).exists());
        assert!(call_index::path(dir.path(), "acme").exists(), "the index stays");
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
