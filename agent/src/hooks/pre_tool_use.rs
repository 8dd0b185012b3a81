//! `lore hook pre-tool-use`: the warning that comes before the call runs.
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
//! [`crate::pending_injections`]).
//!
//! How a warning reaches the model depends on the project's mode
//! ([`CallWarnings`]) and the agent:
//! - **A hold** (`deny_once`, strong evidence: [`CallWarning::is_strong`]):
//!   the call is refused before it runs, with the warning and what worked
//!   after as the reason, for all three agents. It is the only way to be
//!   heard before the call: Claude Code and Codex place a PreToolUse
//!   `additionalContext` after the call's result.
//! - **Context** (weaker evidence, or the `context` mode): Claude Code's
//!   and Codex's `additionalContext`, beside the result of a call that runs.
//! - **Gemini CLI**'s BeforeTool answer has no context field: in
//!   `deny_once` every warning is a hold, in `context` it says nothing.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use lore_calls::Shape;
use serde_json::json;
use uuid::Uuid;

use super::input::HookInput;
use super::record;
use crate::call_index::{self, CallWarnings};
use crate::identity::AgentKind;
use crate::pending_injections::{self, Given};

/// The agent's answer to `input`'s call, when Lore has one: a guard's
/// refusal (every time), or a warning, held or beside the result (once per
/// session). Each is kept for the injection ledger.
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
    if !index.warns_at_call(agent.as_str()) {
        return None;
    }
    let warning = index.warning(command, &shape)?;
    let hold = match (index.call_warnings, agent) {
        (CallWarnings::DenyOnce, AgentKind::Gemini) => true,
        (CallWarnings::DenyOnce, _) => warning.is_strong(),
        (CallWarnings::Context | CallWarnings::Off, _) => false,
    };
    if !mark_given(&given_path(state_dir, session), &warning.command, &warning.failure) {
        return None;
    }
    let (said, text) = if hold { (Said::Refusal, warning.refusal_text()) } else { (Said::Warning, warning.text()) };
    keep_given(state_dir, project, session, None, &shape.text(), &warning.failure, &text);
    Some(agent_answer(agent, said, &text))
}

/// Keeps what was given for the ledger; a record that cannot be kept is
/// not worth failing the call over.
pub(super) fn keep_given(
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
    let _ = pending_injections::keep(state_dir, &given);
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
pub(super) fn given_path(state_dir: &Path, session: Uuid) -> PathBuf {
    state_dir.join("calls").join(format!("given-{session}"))
}

/// The fingerprint of a warning of `failure` at calls of `command` (a
/// command's key: word for word, or its shape).
fn fingerprint(command: &str, failure: &str) -> String {
    blake3::hash(format!("{command}\u{0}{failure}").as_bytes()).to_hex()[..16].to_owned()
}

/// Whether the session was told of `failure` at `command` already.
pub(super) fn was_given(path: &Path, command: &str, failure: &str) -> bool {
    let line = fingerprint(command, failure);
    std::fs::read_to_string(path).is_ok_and(|given| given.lines().any(|given| given == line))
}

/// Records the warning as given; false when it was given already (or
/// cannot be recorded: a warning given on every call is worse than none).
pub(super) fn mark_given(path: &Path, command: &str, failure: &str) -> bool {
    if was_given(path, command, failure) {
        return false;
    }
    let line = fingerprint(command, failure);
    let appended = path.parent().map_or(Ok(()), std::fs::create_dir_all).and_then(|()| {
        let mut file = std::fs::OpenOptions::new().create(true).append(true).open(path)?;
        writeln!(file, "{line}")
    });
    appended.is_ok()
}

/// What Lore says with a call.
#[derive(Clone, Copy)]
enum Said {
    /// A warning beside the result: the call still runs.
    Warning,
    /// A guard's refusal or a warning's hold: the call does not run, and
    /// the reason is what the model reads instead of its output.
    Refusal,
}

/// `text` in the agent's answer format. Gemini's BeforeTool has only a
/// deny to speak with (it is never asked for a warning beside the result).
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

    fn input(tool: &str, command: &str) -> HookInput {
        let bytes = json!({
            "session_id": "s", "hook_event_name": "PreToolUse", "tool_name": tool,
            "tool_input": { "command": command }, "cwd": "/tmp"
        });
        HookInput::parse(bytes.to_string().as_bytes()).expect("valid input")
    }

    /// Two earlier sessions ran pytest, failed, and then the repository's runner passed.
    fn indexed(state_dir: &Path) {
        indexed_with(state_dir, 2, CallWarnings::DenyOnce);
    }

    /// `sessions` earlier sessions as [`indexed`]'s, under `mode`.
    fn indexed_with(state_dir: &Path, sessions: usize, mode: CallWarnings) {
        let mut memory = CallMemory::new();
        for _ in 0..sessions {
            memory.learn(&[
                Call { command: "pytest tests".into(), outcome: Outcome::Failed("No module named <*>".into()) },
                Call { command: "./tests/runtests.py forms".into(), outcome: Outcome::Passed },
            ]);
        }
        let index = call_index::index_for_tests(memory, mode);
        call_index::save(&call_index::path(state_dir, "acme"), &index).expect("saved");
    }

    fn json(answer: Option<String>) -> serde_json::Value {
        serde_json::from_str(&answer.expect("an answer")).expect("JSON")
    }

    #[test]
    fn weak_evidence_is_context_beside_the_result_once_per_session() {
        let dir = tempfile::tempdir().expect("tempdir");
        indexed_with(dir.path(), 1, CallWarnings::DenyOnce);
        let session = Uuid::now_v7();
        let call = input("Bash", "pytest tests/test_forms.py");
        let answer = json(answer(AgentKind::ClaudeCode, "acme", session, &call, dir.path()));
        let context = answer["hookSpecificOutput"]["additionalContext"].as_str().expect("context");
        assert!(context.contains("what worked after: `tests/runtests.py <arg>` (1 of 1)"), "{context}");
        assert_eq!(answer["hookSpecificOutput"]["hookEventName"], "PreToolUse");
        assert_eq!(answer["hookSpecificOutput"]["permissionDecision"], serde_json::Value::Null, "the call runs");
        assert_eq!(super::answer(AgentKind::ClaudeCode, "acme", session, &call, dir.path()), None, "given once");
        assert!(super::answer(AgentKind::ClaudeCode, "acme", Uuid::now_v7(), &call, dir.path()).is_some());
    }

    #[test]
    fn strong_evidence_holds_the_first_call_of_a_session_and_the_same_call_again_runs() {
        let dir = tempfile::tempdir().expect("tempdir");
        indexed(dir.path());
        let session = Uuid::now_v7();
        let call = input("Bash", "pytest tests/test_forms.py");
        for agent in [AgentKind::ClaudeCode, AgentKind::Codex] {
            let session = Uuid::now_v7();
            let held = json(answer(agent, "acme", session, &call, dir.path()));
            assert_eq!(held["hookSpecificOutput"]["permissionDecision"], "deny", "{held}");
            let reason = held["hookSpecificOutput"]["permissionDecisionReason"].as_str().expect("a reason");
            assert!(reason.contains("failed in 2 of 2 earlier sessions here"), "{reason}");
            assert!(reason.contains("what worked after: `tests/runtests.py <arg>` (2 of 2)"), "{reason}");
            assert!(reason.ends_with("make it again to run it."), "{reason}");
            assert_eq!(answer(agent, "acme", session, &call, dir.path()), None, "the same call again runs");
        }
        let gemini =
            json(answer(AgentKind::Gemini, "acme", session, &input("run_shell_command", "pytest x"), dir.path()));
        assert_eq!(gemini["decision"], "deny");
    }

    #[test]
    fn the_projects_mode_keeps_a_call_from_being_held_or_silences_it() {
        let dir = tempfile::tempdir().expect("tempdir");
        indexed_with(dir.path(), 2, CallWarnings::Context);
        let call = input("Bash", "pytest tests");
        let context = json(answer(AgentKind::ClaudeCode, "acme", Uuid::now_v7(), &call, dir.path()));
        assert!(
            context["hookSpecificOutput"]["additionalContext"].is_string(),
            "strong, yet beside the result: {context}"
        );
        let gemini = input("run_shell_command", "pytest tests");
        assert_eq!(
            answer(AgentKind::Gemini, "acme", Uuid::now_v7(), &gemini, dir.path()),
            None,
            "it could only refuse"
        );
        indexed_with(dir.path(), 2, CallWarnings::Off);
        for agent in [AgentKind::ClaudeCode, AgentKind::Codex, AgentKind::Gemini] {
            assert_eq!(answer(agent, "acme", Uuid::now_v7(), &call, dir.path()), None);
        }
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
            answer.contains("how to avoid it (verified fix): Run the suite with tests/runtests.py, not pytest."),
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
        assert!(answer["reason"].as_str().is_some_and(|reason| reason.contains("failed in 2 of 2")));
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
        assert!(warned.is_some_and(|warned| warned.contains("failed in 2 of 2")));
        let taken = pending_injections::take(dir.path());
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
