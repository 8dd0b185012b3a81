//! Right after a shell call failed (Claude Code's PostToolUse and
//! PostToolUseFailure, Codex's PostToolUse, Gemini CLI's AfterTool): when
//! earlier sessions of the project failed the same way with the same
//! command and then found what worked, that is said once, beside the
//! failure the model has just read.
//!
//! It answers from the call index, as the warning before the call does,
//! and stays silent when the session was already told of this failure at
//! this command (before the call, or after an earlier failure), when the
//! project's call warnings are off, and when no earlier session recovered.
//! Evidence too weak to speak before a call is enough here: the failure
//! has happened, so what remains uncertain is only what worked after, and
//! that must have worked in at least two sessions.

use std::path::Path;

use lore_calls::Shape;
use lore_calls::shape;
use serde_json::json;
use uuid::Uuid;

use super::input::HookInput;
use super::pre_tool_use::{given_path, keep_given, mark_given, was_given};
use super::record;
use crate::call_index::{self, CallWarnings};
use crate::identity::AgentKind;

/// What the agent is told right after `input`'s call failed, if anything.
pub fn answer(agent: AgentKind, project: &str, session: Uuid, input: &HookInput, state_dir: &Path) -> Option<String> {
    if !record::is_shell(&input.tool_name) || input.is_interrupt || !input.tool_failed() {
        return None;
    }
    let command = input.command()?;
    let index = call_index::load(&call_index::path(state_dir, project), project)?;
    if index.call_warnings == CallWarnings::Off {
        return None;
    }
    let shape = Shape::of(command);
    let failure = call_index::failure_name(&input.tool_output());
    let after = index.memory.recovery_after(command, &shape, &failure)?;
    let given = given_path(state_dir, session);
    if [shape::exact(command), shape.text()].iter().any(|key| was_given(&given, key, &failure))
        || !mark_given(&given, &after.command, &failure)
    {
        return None;
    }
    let text = after.after_failure_text()?;
    keep_given(state_dir, project, session, None, &shape.text(), &failure, &text);
    let event = match agent {
        AgentKind::Gemini => "AfterTool",
        AgentKind::ClaudeCode if input.hook_event_name == "PostToolUseFailure" => "PostToolUseFailure",
        _ => "PostToolUse",
    };
    Some(json!({ "hookSpecificOutput": { "hookEventName": event, "additionalContext": text } }).to_string())
}

#[cfg(test)]
mod tests {
    use lore_calls::{Call, CallMemory, Outcome};

    use super::*;

    const NO_RULE: &str = "make: *** No rule to make target 'check'.  Stop.";

    /// Two earlier sessions in ten failed `make check` and passed `make test`.
    fn indexed(state_dir: &Path, mode: CallWarnings) {
        let mut memory = CallMemory::new();
        let failure = call_index::failure_name(NO_RULE);
        for _ in 0..2 {
            memory.learn(&[
                Call { command: "make check".into(), outcome: Outcome::Failed(failure.clone()) },
                Call { command: "make test".into(), outcome: Outcome::Passed },
            ]);
        }
        for _ in 0..8 {
            memory.learn(&[Call { command: "make check".into(), outcome: Outcome::Passed }]);
        }
        let index = call_index::index_for_tests(memory, mode);
        call_index::save(&call_index::path(state_dir, "acme"), &index).expect("saved");
    }

    fn failed(event: &str, command: &str, error: &str) -> HookInput {
        let bytes = json!({
            "session_id": "s", "hook_event_name": event, "tool_name": "Bash",
            "tool_input": { "command": command }, "error": error, "cwd": "/tmp"
        });
        HookInput::parse(bytes.to_string().as_bytes()).expect("valid input")
    }

    #[test]
    fn a_failure_earlier_sessions_recovered_from_is_followed_once_by_what_worked() {
        let dir = tempfile::tempdir().expect("tempdir");
        indexed(dir.path(), CallWarnings::DenyOnce);
        let session = Uuid::now_v7();
        let call = failed("PostToolUseFailure", "make check", &format!("Exit code 2\n{NO_RULE}"));
        let told = answer(AgentKind::ClaudeCode, "acme", session, &call, dir.path()).expect("what worked after");
        let told: serde_json::Value = serde_json::from_str(&told).expect("JSON");
        assert_eq!(told["hookSpecificOutput"]["hookEventName"], "PostToolUseFailure");
        let context = told["hookSpecificOutput"]["additionalContext"].as_str().expect("context");
        assert!(context.ends_with("what worked after: `make test` (2 of 2)."), "{context}");
        assert_eq!(answer(AgentKind::ClaudeCode, "acme", session, &call, dir.path()), None, "said once");
        let gemini = answer(AgentKind::Gemini, "acme", Uuid::now_v7(), &call, dir.path()).expect("told");
        assert!(gemini.contains(r#""hookEventName":"AfterTool""#), "{gemini}");
    }

    #[test]
    fn nothing_is_said_when_the_warning_came_before_the_call_or_nothing_recovered() {
        let dir = tempfile::tempdir().expect("tempdir");
        indexed(dir.path(), CallWarnings::DenyOnce);
        let session = Uuid::now_v7();
        let failure = call_index::failure_name(NO_RULE);
        assert!(mark_given(&given_path(dir.path(), session), "make check", &failure), "told before the call");
        let call = failed("PostToolUseFailure", "make check", NO_RULE);
        assert_eq!(answer(AgentKind::ClaudeCode, "acme", session, &call, dir.path()), None);
        let other = failed("PostToolUseFailure", "make check", "cc: error: unknown option");
        assert_eq!(answer(AgentKind::ClaudeCode, "acme", Uuid::now_v7(), &other, dir.path()), None, "another failure");
        let passed = json!({"session_id": "s", "hook_event_name": "PostToolUse", "tool_name": "Bash",
            "tool_input": {"command": "make check"}, "tool_response": {"stdout": "ok", "exit_code": 0}});
        let passed = HookInput::parse(passed.to_string().as_bytes()).expect("valid");
        assert_eq!(answer(AgentKind::ClaudeCode, "acme", Uuid::now_v7(), &passed, dir.path()), None, "it passed");
        indexed(dir.path(), CallWarnings::Off);
        assert_eq!(answer(AgentKind::ClaudeCode, "acme", Uuid::now_v7(), &call, dir.path()), None, "off");
    }
}
