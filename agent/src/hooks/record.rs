//! A tool call as an action of the audit log: which tool, a summary of its
//! input (the command; file paths, never file contents), the outcome from
//! its response, and how long it took. Secrets in all of it are redacted by
//! the sidecar or the server, as for every action.

use std::path::Path;

use serde_json::{Map, Value, json};

use super::input::HookInput;
use crate::failure_lines::CUT_LINE;

/// A command or other string kept in a summary is cut to this.
const MAX_STRING_CHARS: usize = 2000;
/// Other string fields of an unknown tool's input.
const MAX_FIELD_CHARS: usize = 200;
/// The error kept on a failed action: within the 1,000 characters a
/// server keeps of an action's string by default (`actions.max_string_chars`),
/// which it cuts at the end.
const MAX_ERROR_CHARS: usize = 1000;
/// How much of a long error's start is kept; the rest of the room goes to
/// its end, which is what names most failures (a traceback's exception, a
/// test runner's summary, a shell's last complaint).
const ERROR_HEAD_CHARS: usize = 250;
/// The line that names a long error's failure, when its end does not hold
/// it, is kept to this: enough for an exception and its message, with room
/// left for the end.
const MAX_NAMING_CHARS: usize = 400;

/// The tools that run shell commands, by agent.
pub fn is_shell(tool: &str) -> bool {
    matches!(tool, "Bash" | "shell" | "local_shell" | "exec_command" | "container.exec" | "run_shell_command")
}

/// The action's category: the tool's name as an identifier (`bash`,
/// `edit`, `mcp__github__create_issue`).
pub fn category(tool: &str) -> String {
    let lowered: String = tool
        .to_ascii_lowercase()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-') { c } else { '_' })
        .take(64)
        .collect();
    if lowered.is_empty() { "tool".to_owned() } else { lowered }
}

/// What the log keeps of a tool's input.
pub fn input_summary(input: &HookInput) -> Value {
    let tool_input = &input.tool_input;
    let mut summary = Map::new();
    let keep = |summary: &mut Map<String, Value>, key: &str| {
        if let Some(text) = tool_input.get(key).and_then(Value::as_str) {
            summary.insert(key.to_owned(), Value::String(cut(text, MAX_FIELD_CHARS)));
        }
    };
    match input.tool_name.as_str() {
        tool if is_shell(tool) => {
            if let Some(command) = input.command() {
                summary.insert("command".into(), Value::String(cut(command, MAX_STRING_CHARS)));
            }
            keep(&mut summary, "description");
        }
        "Edit" | "MultiEdit" | "Write" | "Read" | "NotebookEdit" | "NotebookRead" => {
            keep(&mut summary, "file_path");
            keep(&mut summary, "notebook_path");
        }
        "apply_patch" => {
            summary.insert("files".into(), json!(patched_files(tool_input)));
        }
        _ => {
            // An unknown tool: its short scalar fields, nothing nested.
            if let Value::Object(fields) = tool_input {
                for (key, value) in fields.iter().take(12) {
                    match value {
                        Value::String(text) => {
                            summary.insert(key.clone(), Value::String(cut(text, MAX_FIELD_CHARS)));
                        }
                        Value::Number(_) | Value::Bool(_) => {
                            summary.insert(key.clone(), value.clone());
                        }
                        _ => {}
                    }
                }
            }
        }
    }
    Value::Object(summary)
}

/// What the log keeps of a successful tool's response: sizes, not content.
pub fn response_summary(input: &HookInput) -> Value {
    let response = &input.tool_response;
    let lines = |key: &str| response.get(key).and_then(Value::as_str).map(|text| text.lines().count());
    let mut summary = Map::new();
    if let Some(count) = lines("stdout") {
        summary.insert("stdout_lines".into(), json!(count));
    }
    if let Some(count) = lines("stderr").filter(|count| *count > 0) {
        summary.insert("stderr_lines".into(), json!(count));
    }
    if response.get("interrupted").and_then(Value::as_bool) == Some(true) {
        summary.insert("interrupted".into(), json!(true));
    }
    Value::Object(summary)
}

/// The error of a failed tool call: a long one keeps its start, the line
/// that names its failure and its end.
pub fn error_text(input: &HookInput) -> String {
    kept_error(&input.tool_output())
}

/// What the action log keeps of a failed call's `output`, and so what the
/// call index later names its failure from.
pub fn kept_error(output: &str) -> String {
    let naming = crate::failure_lines::error_lines(output).pop().unwrap_or_default();
    start_and_end(output, &naming, MAX_ERROR_CHARS)
}

/// `text` within `max` characters: its start and its end, and between them
/// `naming` when the end does not hold it. The call index names a failure
/// from what is kept here, so a long test run whose explaining line sits
/// above a page of teardown must not lose it.
fn start_and_end(text: &str, naming: &str, max: usize) -> String {
    let count = text.chars().count();
    if count <= max {
        return text.to_owned();
    }
    // The mark stands on a line of its own, so no error line is read with it.
    let mark = format!("\n{CUT_LINE}\n");
    let room = max - ERROR_HEAD_CHARS - mark.chars().count();
    let start: String = text.chars().take(ERROR_HEAD_CHARS).collect();
    let ending = |chars: usize| -> String { text.chars().skip(count - chars).collect() };
    let tail = ending(room);
    let named = naming.is_empty() || tail.lines().any(|line| line.trim() == naming);
    if named {
        return format!("{start}{mark}{tail}");
    }
    let naming: String = naming.chars().take(MAX_NAMING_CHARS).collect();
    let room = room - naming.chars().count() - mark.chars().count();
    format!("{start}{mark}{naming}{mark}{}", ending(room))
}

/// The files a tool call edited, relative to the session's directory when
/// they are under it.
pub fn edited_files(input: &HookInput) -> Vec<String> {
    let tool_input = &input.tool_input;
    let files: Vec<String> = match input.tool_name.as_str() {
        // Claude Code's, and Gemini CLI's `replace` and `write_file`.
        "Edit" | "MultiEdit" | "Write" | "NotebookEdit" | "replace" | "write_file" => ["file_path", "notebook_path"]
            .iter()
            .filter_map(|key| tool_input.get(*key).and_then(Value::as_str).map(str::to_owned))
            .collect(),
        "apply_patch" => patched_files(tool_input),
        _ => Vec::new(),
    };
    files.into_iter().map(|file| relative(&file, &input.cwd)).collect()
}

/// The files a Codex patch touches (`*** Update File: path` and its kin).
fn patched_files(tool_input: &Value) -> Vec<String> {
    let patch = match tool_input {
        Value::String(patch) => patch.as_str(),
        input => ["input", "patch", "command"].iter().find_map(|key| input.get(*key)?.as_str()).unwrap_or_default(),
    };
    patch
        .lines()
        .filter_map(|line| {
            ["*** Update File: ", "*** Add File: ", "*** Delete File: "]
                .iter()
                .find_map(|prefix| line.strip_prefix(prefix))
                .map(|file| file.trim().to_owned())
        })
        .collect()
}

fn relative(file: &str, cwd: &str) -> String {
    if cwd.is_empty() {
        return file.to_owned();
    }
    Path::new(file).strip_prefix(cwd).map(|path| path.display().to_string()).unwrap_or_else(|_| file.to_owned())
}

fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    format!("{}…", text.chars().take(max).collect::<String>())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(json: Value) -> HookInput {
        serde_json::from_value(json).unwrap()
    }

    #[test]
    fn an_edit_is_logged_by_its_path_never_its_content() {
        let edit = input(json!({
            "cwd": "/repo", "tool_name": "Write",
            "tool_input": {"file_path": "/repo/src/calc.py", "content": "API_KEY = 'sk_live_...'\n".repeat(100)}
        }));
        assert_eq!(input_summary(&edit), json!({"file_path": "/repo/src/calc.py"}));
        assert_eq!(edited_files(&edit), vec!["src/calc.py"]);
    }

    #[test]
    fn a_command_is_logged_with_its_description_and_a_patch_by_its_files() {
        let bash = input(
            json!({"tool_name": "Bash", "tool_input": {"command": "pytest -q", "description": "run tests", "timeout": 5}}),
        );
        assert_eq!(input_summary(&bash), json!({"command": "pytest -q", "description": "run tests"}));
        let patch = input(
            json!({"cwd": "/r", "tool_name": "apply_patch", "tool_input": {"input": "*** Begin Patch\n*** Update File: src/a.rs\n@@\n-x\n+y\n*** Add File: src/b.rs\n*** End Patch"}}),
        );
        assert_eq!(edited_files(&patch), vec!["src/a.rs", "src/b.rs"]);
    }

    #[test]
    fn a_long_error_keeps_its_start_and_the_line_that_names_it() {
        let traceback = format!(
            "Traceback (most recent call last):\n{}ModuleNotFoundError: No module named 'reproduce_app'",
            "  File \"/testbed/django/apps/registry.py\", line 91, in populate\n".repeat(40)
        );
        let failed = input(json!({"tool_name": "Bash", "tool_response": {"stderr": traceback, "exit_code": 1}}));
        let kept = error_text(&failed);
        assert_eq!(kept.chars().count(), MAX_ERROR_CHARS);
        assert!(kept.starts_with("Traceback (most recent call last):"), "{kept}");
        assert!(kept.ends_with("No module named 'reproduce_app'"), "{kept}");
        assert!(kept.contains(&format!("\n{CUT_LINE}\n")));
        assert_eq!(start_and_end("short", "", MAX_ERROR_CHARS), "short");
    }

    #[test]
    fn a_long_error_keeps_its_explaining_line_when_its_end_has_moved_on() {
        let run = format!(
            "Creating test database for alias 'default'...\n{}AssertionError: 'constraints_product' unexpectedly found\n\n{}\nRan 20 tests in 0.115s\n\nFAILED (failures=1)\n{}",
            "  File \"/testbed/tests/constraints/tests.py\", line 79, in test\n".repeat(20),
            "-".repeat(70),
            "Destroying test database for alias 'default'...\n".repeat(30)
        );
        let failed = input(json!({"tool_name": "Bash", "tool_response": {"stderr": run, "exit_code": 1}}));
        let kept = error_text(&failed);
        assert!(kept.chars().count() <= MAX_ERROR_CHARS, "{kept}");
        assert!(kept.starts_with("Creating test database"), "{kept}");
        assert!(kept.ends_with("Destroying test database for alias 'default'...\n"), "{kept}");
        assert_eq!(
            crate::call_index::failure_name(&kept),
            "AssertionError: <*> unexpectedly found",
            "the line that names the failure is kept: {kept}"
        );
    }

    #[test]
    fn an_unknown_tool_keeps_its_short_scalars_only() {
        let other = input(
            json!({"tool_name": "mcp__github__create_issue", "tool_input": {"title": "t", "body": "b".repeat(500), "labels": ["x"], "draft": true}}),
        );
        let summary = input_summary(&other);
        assert_eq!(summary["title"], "t");
        assert_eq!(summary["draft"], true);
        assert!(summary["body"].as_str().unwrap().chars().count() <= MAX_FIELD_CHARS + 1);
        assert!(summary.get("labels").is_none());
        assert_eq!(category("mcp__github__create_issue"), "mcp__github__create_issue");
        assert_eq!(category("Web Fetch"), "web_fetch");
    }
}
