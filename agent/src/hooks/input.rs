//! What an agent writes on a hook's stdin: one JSON object with the
//! session, the event and its details. Claude Code and Codex share the
//! shape (Codex adopted Claude Code's); fields one of them leaves out are
//! optional, and fields this version does not know are ignored, so a newer
//! agent does not break its hooks.

use serde::Deserialize;
use serde_json::Value;

use crate::call_index::exit_code_in_error;

/// The most a hook reads from stdin: a tool response carrying a whole file
/// can be large, and what is over this is not worth the budget.
pub const MAX_INPUT_BYTES: usize = 8 * 1024 * 1024;

#[derive(Debug, Clone, Default, Deserialize)]
pub struct HookInput {
    /// The agent's session id.
    #[serde(default)]
    pub session_id: String,
    #[serde(default)]
    pub cwd: String,
    #[serde(default)]
    pub hook_event_name: String,
    /// SessionStart: startup, resume, clear or compact.
    #[serde(default)]
    pub source: String,
    #[serde(default)]
    pub model: Option<Value>,
    /// UserPromptSubmit: what the user asked.
    #[serde(default)]
    pub prompt: String,
    /// PostToolUse and PostToolUseFailure.
    #[serde(default)]
    pub tool_name: String,
    #[serde(default)]
    pub tool_input: Value,
    #[serde(default)]
    pub tool_response: Value,
    #[serde(default)]
    pub tool_use_id: String,
    /// The agent's own record of the session (Codex: its rollout file).
    #[serde(default)]
    pub transcript_path: String,
    /// PostToolUseFailure: the error the tool reported ("Exit code 1\n...").
    #[serde(default)]
    pub error: Option<String>,
    #[serde(default)]
    pub is_interrupt: bool,
    #[serde(default)]
    pub duration_ms: Option<u64>,
    /// Stop: the agent's last answer.
    #[serde(default)]
    pub last_assistant_message: Option<String>,
    /// Gemini CLI's AfterAgent: its answer (see [`super::adapter`]).
    #[serde(default)]
    pub prompt_response: Option<String>,
    /// SessionEnd: why (clear, logout, prompt_input_exit, other).
    #[serde(default)]
    pub reason: String,
    /// SubagentStart and SubagentStop: the sub-agent; any other event:
    /// set when it fired inside one.
    #[serde(default)]
    pub agent_id: String,
    #[serde(default)]
    pub agent_type: String,
}

impl HookInput {
    /// Parses the hook's stdin, saying why when it cannot.
    pub fn parse(bytes: &[u8]) -> Result<Self, String> {
        if bytes.len() > MAX_INPUT_BYTES {
            return Err(format!("the hook input is over {MAX_INPUT_BYTES} bytes"));
        }
        let text = std::str::from_utf8(bytes).map_err(|error| format!("the hook input is not UTF-8: {error}"))?;
        if text.trim().is_empty() {
            return Err("the hook input is empty (expected the agent's JSON on stdin)".into());
        }
        serde_json::from_str(text).map_err(|error| format!("the hook input is not the agent's JSON: {error}"))
    }

    /// The sub-agent a spawning tool call started, as its response names
    /// it (Claude Code's Agent tool: `agentId`).
    pub fn spawned_agent_id(&self) -> Option<&str> {
        ["agentId", "agent_id"].iter().find_map(|key| self.tool_response.get(*key)?.as_str())
    }

    /// True for a tool call that failed: Claude Code says so with its own
    /// event; a tool response may carry an exit code or an error flag.
    pub fn tool_failed(&self) -> bool {
        if self.hook_event_name == "PostToolUseFailure" || self.error.is_some() {
            return true;
        }
        let response = &self.tool_response;
        let exit_code = ["exit_code", "exitCode", "returncode"].iter().find_map(|key| response.get(*key)?.as_i64());
        exit_code.is_some_and(|code| code != 0)
            || response.get("is_error").and_then(Value::as_bool) == Some(true)
            || response.get("success").and_then(Value::as_bool) == Some(false)
    }

    /// The exit code of a failed command: Claude Code writes it as the
    /// first line of the error ("Exit code 3"); other agents as a field.
    pub fn exit_code(&self) -> Option<i32> {
        if let Some(code) = self.error.as_deref().and_then(exit_code_in_error) {
            return Some(code);
        }
        ["exit_code", "exitCode", "returncode"]
            .iter()
            .find_map(|key| self.tool_response.get(*key)?.as_i64())
            .and_then(|code| i32::try_from(code).ok())
    }

    /// Everything the tool printed: the error of a failure, else stdout and
    /// stderr (or the whole response when it is a string).
    pub fn tool_output(&self) -> String {
        if let Some(error) = &self.error {
            return error.clone();
        }
        match &self.tool_response {
            Value::String(text) => text.clone(),
            response => ["stdout", "stderr", "output"]
                .iter()
                .filter_map(|key| response.get(*key).and_then(Value::as_str))
                .filter(|text| !text.is_empty())
                .collect::<Vec<_>>()
                .join("\n"),
        }
    }

    /// The shell command of a shell tool call.
    pub fn command(&self) -> Option<&str> {
        let input = &self.tool_input;
        let command = input.get("command").or_else(|| input.get("cmd"))?;
        match command {
            Value::String(command) => Some(command.as_str()),
            // Codex's exec form: ["bash", "-lc", "cargo test"].
            Value::Array(parts) => parts.last().and_then(Value::as_str),
            _ => None,
        }
    }

    /// The agent's model, as a string.
    pub fn model_name(&self) -> Option<String> {
        match &self.model {
            Some(Value::String(name)) => Some(name.clone()),
            Some(Value::Object(model)) => {
                model.get("id").or_else(|| model.get("display_name")).and_then(Value::as_str).map(str::to_owned)
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_codes_failure_and_success_events_are_read() {
        let failed = HookInput::parse(br#"{"session_id":"s","cwd":"/r","hook_event_name":"PostToolUseFailure","tool_name":"Bash","tool_input":{"command":"pytest -q","description":"run"},"tool_use_id":"t","error":"Exit code 3\nE assert 4 == 5","is_interrupt":false,"duration_ms":30,"new_field":{"x":1}}"#).unwrap();
        assert!(failed.tool_failed());
        assert_eq!((failed.exit_code(), failed.command()), (Some(3), Some("pytest -q")));
        assert_eq!(failed.tool_output(), "Exit code 3\nE assert 4 == 5");

        let passed = HookInput::parse(br#"{"session_id":"s","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"pytest -q"},"tool_response":{"stdout":"1 passed","stderr":"","interrupted":false}}"#).unwrap();
        assert!(!passed.tool_failed());
        assert_eq!(passed.tool_output(), "1 passed");
    }

    #[test]
    fn codex_style_responses_with_exit_codes_are_read() {
        let failed = HookInput::parse(br#"{"session_id":"s","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":["bash","-lc","cargo test"]},"tool_response":{"exit_code":101,"output":"test failed"}}"#).unwrap();
        assert!(failed.tool_failed());
        assert_eq!((failed.exit_code(), failed.command()), (Some(101), Some("cargo test")));
    }

    #[test]
    fn bad_input_says_what_is_wrong() {
        assert!(HookInput::parse(b"").unwrap_err().contains("empty"));
        assert!(HookInput::parse(b"{not json").unwrap_err().contains("not the agent's JSON"));
        assert!(HookInput::parse(&[0xff, 0xfe]).unwrap_err().contains("not UTF-8"));
        assert!(HookInput::parse(b"[1,2]").unwrap_err().contains("not the agent's JSON"));
        assert!(HookInput::parse(br#"{"session_id": 7}"#).unwrap_err().contains("not the agent's JSON"));
    }
}
