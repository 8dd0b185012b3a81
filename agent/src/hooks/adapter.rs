//! One adapter per agent: each agent's hook input, in its own shape, read
//! into the one [`HookInput`] the hooks work on.
//!
//! - **Claude Code** is the shape `HookInput` follows.
//! - **Codex** adopted it, with its own tool names (`Bash`, `shell`,
//!   `apply_patch`) and a command as a string or an exec array
//!   (`["bash", "-lc", ...]`), which `HookInput` reads as they are. A
//!   shell call's response is its bare output: the exit code comes from
//!   Codex's rollout (see [`super::transcript`]). Its own tools answer
//!   JSON as text (`spawn_agent`'s `{"agent_id": ...}`), read as JSON.
//! - **Gemini CLI** has its own events (BeforeAgent, AfterTool, AfterAgent;
//!   `lore init gemini` maps them to Lore's), tools (`run_shell_command`,
//!   `replace`, `write_file`) and a tool response of its own:
//!   `{llmContent, returnDisplay, error}`, the shell's exit code written in
//!   the text (`Exit Code: 1`); its final answer comes as `prompt_response`.

use serde_json::{Value, json};

use super::input::HookInput;
use crate::identity::AgentKind;

/// Reads an agent's hook input.
pub fn read(agent: AgentKind, bytes: &[u8]) -> Result<HookInput, String> {
    let mut input = HookInput::parse(bytes)?;
    match agent {
        AgentKind::Gemini => gemini(&mut input),
        AgentKind::Codex => codex(&mut input),
        _ => {}
    }
    Ok(input)
}

fn codex(input: &mut HookInput) {
    let Value::String(output) = &input.tool_response else {
        return;
    };
    if input.command().is_none() {
        // Its own tools answer JSON as text (spawn_agent:
        // `{"agent_id": ..., "nickname": ...}`).
        if let Ok(object @ Value::Object(_)) = serde_json::from_str::<Value>(output) {
            input.tool_response = object;
        }
        return;
    }
    let mut normalized = json!({ "output": output });
    // Only a rollout file Codex names as such is read.
    let transcript = std::path::Path::new(&input.transcript_path);
    if transcript.is_absolute()
        && transcript.extension().is_some_and(|extension| extension == "jsonl")
        && let Some(code) = super::transcript::codex_exit_code(transcript, &input.tool_use_id)
    {
        normalized["exit_code"] = json!(code);
    }
    input.tool_response = normalized;
}

fn gemini(input: &mut HookInput) {
    if let Some(response) = input.tool_response.as_object().filter(|response| response.contains_key("llmContent")) {
        let output = text_of(response.get("llmContent"))
            .unwrap_or_else(|| text_of(response.get("returnDisplay")).unwrap_or_default());
        let error = response
            .get("error")
            .filter(|error| !error.is_null())
            .map(|error| error.get("message").and_then(Value::as_str).map_or_else(|| error.to_string(), str::to_owned));
        let exit_code = exit_code_in(&output);
        let output = if input.command().is_some() { printed_by_shell(&output) } else { output };
        let mut normalized = json!({ "output": output });
        if let Some(code) = exit_code {
            normalized["exit_code"] = json!(code);
        }
        if let Some(error) = error {
            // Failure: the error first, then what the tool printed.
            input.error = Some(if output.is_empty() { error } else { format!("{error}\n{output}") });
        }
        input.tool_response = normalized;
    }
    if input.last_assistant_message.is_none() {
        input.last_assistant_message = input.prompt_response.take();
    }
}

/// Text of a Gemini content: a string, or parts with `text`.
fn text_of(content: Option<&Value>) -> Option<String> {
    match content? {
        Value::String(text) => Some(text.clone()),
        Value::Array(parts) => Some(
            parts
                .iter()
                .filter_map(|part| part.get("text").and_then(Value::as_str).or_else(|| part.as_str()))
                .collect::<Vec<_>>()
                .join("\n"),
        ),
        Value::Object(part) => part.get("text").and_then(Value::as_str).map(str::to_owned),
        _ => None,
    }
}

/// What a command printed, out of the report Gemini's shell tool makes of
/// it: without the `<untrusted_context>` wrapper (0.6x), the `Command:` and
/// `Directory:` lines before `Output:`, and the status lines after it
/// (`Exit Code:`, `Process Group PGID:`...), which would otherwise stand as
/// the last line of every failure.
fn printed_by_shell(report: &str) -> String {
    const STATUS: &[&str] =
        &["Error: ", "Exit Code:", "Signal:", "Background PIDs:", "Process Group PGID:", "</untrusted_context>"];
    let mut printed: Vec<&str> = Vec::new();
    let mut in_output = !report.lines().any(|line| line.starts_with("Output:"));
    for line in report.lines() {
        if let Some(first) = line.strip_prefix("Output:") {
            in_output = true;
            printed.push(first.trim_start());
        } else if STATUS.iter().any(|status| line.starts_with(status)) || line.starts_with("<untrusted_context>") {
            if !printed.is_empty() || line.starts_with("</") {
                in_output = false;
            }
        } else if in_output {
            printed.push(line);
        }
    }
    printed.join("\n")
}

/// `Exit Code: 2` as Gemini's shell tool writes it in its output.
fn exit_code_in(output: &str) -> Option<i64> {
    output.lines().find_map(|line| line.trim().strip_prefix("Exit Code:")?.trim().parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn geminis_shell_failure_is_read_with_its_exit_code_and_output() {
        let failed = read(
            AgentKind::Gemini,
            br#"{"session_id":"g-1","cwd":"/r","hook_event_name":"AfterTool","tool_name":"run_shell_command",
                 "tool_input":{"command":"cargo test","description":"run the tests"},
                 "tool_response":{"llmContent":"Command: cargo test\nDirectory: (root)\nOutput: test parse ... FAILED\nError: (none)\nExit Code: 101\nSignal: (none)","returnDisplay":"test parse ... FAILED","error":null}}"#,
        )
        .unwrap();
        assert_eq!((failed.command(), failed.exit_code()), (Some("cargo test"), Some(101)));
        assert!(failed.tool_failed());
        assert!(failed.tool_output().contains("test parse ... FAILED"));
        let passed = read(
            AgentKind::Gemini,
            br#"{"session_id":"g-1","hook_event_name":"AfterTool","tool_name":"run_shell_command","tool_input":{"command":"cargo test"},
                 "tool_response":{"llmContent":[{"text":"Output: test result: ok\nExit Code: 0"}],"returnDisplay":"ok"}}"#,
        )
        .unwrap();
        assert!(!passed.tool_failed());
        assert_eq!(passed.exit_code(), Some(0));
        assert_eq!(passed.tool_output(), "test result: ok");
        // Gemini 0.6x wraps the report.
        let wrapped = read(
            AgentKind::Gemini,
            br#"{"session_id":"g-1","hook_event_name":"AfterTool","tool_name":"run_shell_command","tool_input":{"command":"python3 x.py"},
                 "tool_response":{"llmContent":"<untrusted_context>\nOutput: Traceback (most recent call last):\nNameError: name 'y' is not defined\nExit Code: 1\nProcess Group PGID: 42\n</untrusted_context>"}}"#,
        )
        .unwrap();
        assert_eq!(wrapped.exit_code(), Some(1));
        assert_eq!(wrapped.tool_output(), "Traceback (most recent call last):\nNameError: name 'y' is not defined");
    }

    #[test]
    fn a_tool_error_and_the_final_answer_are_read() {
        let errored = read(
            AgentKind::Gemini,
            br#"{"session_id":"g","hook_event_name":"AfterTool","tool_name":"replace","tool_input":{"file_path":"src/a.rs"},
                 "tool_response":{"llmContent":"","returnDisplay":"","error":{"message":"old_string not found","type":"EDIT_NO_OCCURRENCE_FOUND"}}}"#,
        )
        .unwrap();
        assert!(errored.tool_failed());
        assert_eq!(errored.tool_output(), "old_string not found");
        let answered = read(
            AgentKind::Gemini,
            br#"{"session_id":"g","hook_event_name":"AfterAgent","prompt":"fix it","prompt_response":"Fixed the parser."}"#,
        )
        .unwrap();
        assert_eq!(answered.last_assistant_message.as_deref(), Some("Fixed the parser."));
        // Claude Code's shape passes as it is.
        let claude = read(AgentKind::ClaudeCode, br#"{"session_id":"c","tool_response":{"llmContent":"x"}}"#).unwrap();
        assert_eq!(claude.tool_response["llmContent"], "x");
    }

    #[test]
    fn a_codex_shell_call_gets_its_exit_code_from_the_rollout() {
        let dir = tempfile::tempdir().unwrap();
        let rollout = dir.path().join("rollout.jsonl");
        std::fs::write(
            &rollout,
            r#"{"type":"event_msg","payload":{"type":"item_completed","item":{"type":"CommandExecution","id":"call_7","exit_code":101}}}"#,
        )
        .unwrap();
        let input = |transcript: &str| {
            json!({"session_id":"x","hook_event_name":"PostToolUse","tool_name":"Bash","tool_use_id":"call_7",
                   "tool_input":{"command":"cargo test"},"tool_response":"test parse ... FAILED\n","transcript_path":transcript})
            .to_string()
        };
        let failed = read(AgentKind::Codex, input(&rollout.display().to_string()).as_bytes()).unwrap();
        assert_eq!(failed.exit_code(), Some(101));
        assert!(failed.tool_failed());
        assert_eq!(failed.tool_output(), "test parse ... FAILED\n");
        // A path that is not a rollout is not read: the outcome stays unknown.
        let elsewhere = read(AgentKind::Codex, input("relative/rollout.jsonl").as_bytes()).unwrap();
        assert_eq!((elsewhere.exit_code(), elsewhere.tool_failed()), (None, false));
    }
}
