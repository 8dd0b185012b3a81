//! What an agent's own transcript says that its hook input leaves out.
//!
//! Codex 0.169 gives PostToolUse a shell call's output as a bare string,
//! with no exit code; its rollout file (`transcript_path`, JSON lines it
//! appends as the session goes) records the call's end with it. Only the
//! file's tail is read: the call has just ended, and a long session's
//! rollout runs to megabytes.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use serde_json::Value;

/// How much of the rollout's end is read.
const TAIL_BYTES: u64 = 512 * 1024;
/// Codex appends through a writer task: the call's end may land a moment
/// after the hook starts.
const ATTEMPTS: u32 = 4;
const PAUSE: std::time::Duration = std::time::Duration::from_millis(25);

/// The exit code Codex recorded for the shell call `call_id`, if its
/// rollout at `path` holds it.
pub fn codex_exit_code(path: &Path, call_id: &str) -> Option<i64> {
    if call_id.is_empty() {
        return None;
    }
    for attempt in 0..ATTEMPTS {
        if attempt > 0 {
            std::thread::sleep(PAUSE);
        }
        let tail = read_tail(path)?;
        if let Some(code) = exit_code_in(&tail, call_id) {
            return Some(code);
        }
    }
    None
}

fn read_tail(path: &Path) -> Option<String> {
    let mut file = std::fs::File::open(path).ok()?;
    let length = file.metadata().ok()?.len();
    file.seek(SeekFrom::Start(length.saturating_sub(TAIL_BYTES))).ok()?;
    let mut bytes = Vec::new();
    file.take(TAIL_BYTES).read_to_end(&mut bytes).ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// The latest record of `call_id`'s end in rollout lines: the completed
/// command item's `exit_code`, else the "Process exited with code N" line
/// of the output Codex gave the model.
fn exit_code_in(rollout: &str, call_id: &str) -> Option<i64> {
    rollout.lines().rev().filter(|line| line.contains(call_id)).find_map(|line| {
        let record: Value = serde_json::from_str(line).ok()?;
        let payload = record.get("payload")?;
        if let Some(item) = payload.get("item").filter(|item| item.get("id").and_then(Value::as_str) == Some(call_id)) {
            return item.get("exit_code")?.as_i64();
        }
        let is_output = payload.get("type").and_then(Value::as_str) == Some("function_call_output")
            && payload.get("call_id").and_then(Value::as_str) == Some(call_id);
        if !is_output {
            return None;
        }
        payload
            .get("output")?
            .as_str()?
            .lines()
            .find_map(|line| line.trim().strip_prefix("Process exited with code ")?.trim().parse().ok())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROLLOUT: &str = concat!(
        r#"{"type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"make test\"}","call_id":"call_1"}}"#,
        "\n",
        r#"{"type":"event_msg","payload":{"type":"item_completed","item":{"type":"CommandExecution","id":"call_1","status":"failed","aggregated_output":"FAILED\n","exit_code":2}}}"#,
        "\n",
        r#"{"type":"response_item","payload":{"type":"function_call_output","call_id":"call_2","output":"Chunk ID: 1\nProcess exited with code 0\nOutput:\nok\n"}}"#,
        "\n",
        "{\"torn\": \"call_3",
    );

    #[test]
    fn the_exit_code_is_read_from_the_completed_item_or_the_models_output() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rollout.jsonl");
        std::fs::write(&path, ROLLOUT).unwrap();
        assert_eq!(codex_exit_code(&path, "call_1"), Some(2));
        assert_eq!(codex_exit_code(&path, "call_2"), Some(0));
        // A torn last line, an unknown call, no id, no file: nothing.
        assert_eq!(codex_exit_code(&path, "call_3"), None);
        assert_eq!(codex_exit_code(&path, "call_9"), None);
        assert_eq!(codex_exit_code(&path, ""), None);
        assert_eq!(codex_exit_code(&dir.path().join("gone.jsonl"), "call_1"), None);
    }
}
