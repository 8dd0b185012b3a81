//! Gemini CLI plugs into Lore: the real `gemini` (npm, 0.61.0) lists Lore's
//! MCP server after `lore init gemini`, and `lore hook --agent gemini` reads
//! Gemini's own hook input (AfterTool with `{llmContent, returnDisplay,
//! error}`, AfterAgent with `prompt_response`) into typed actions, a QA
//! failure and its fix.

use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};

use lore_agent::identity::{AgentKind, lore_session_id};
use lore_e2e::{ServerOptions, ServerProcess, TestDatabase, free_port};
use serde_json::{Value, json};
use uuid::Uuid;

fn gemini_binary() -> std::path::PathBuf {
    lore_e2e::npm_binary("gemini")
}

fn clean(command: &mut Command) -> &mut Command {
    for (key, _) in std::env::vars() {
        if key.starts_with("LORE_") || key.starts_with("GEMINI") || key.starts_with("GOOGLE") {
            command.env_remove(key);
        }
    }
    command
}

fn git_init(dir: &Path) {
    let status = Command::new("git").args(["init", "-q"]).arg(dir).status().unwrap();
    assert!(status.success());
}

#[test]
fn the_real_gemini_cli_lists_lores_server_after_lore_init_gemini() {
    let (home, repo) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    git_init(repo.path());
    let init = clean(&mut Command::new(lore_e2e::workspace_binary("lore")))
        .args(["init", "gemini", "--project", "calc"])
        .current_dir(repo.path())
        .env("HOME", home.path())
        .output()
        .unwrap();
    assert!(init.status.success(), "{}", String::from_utf8_lossy(&init.stderr));
    let listed = clean(&mut Command::new(gemini_binary()))
        .args(["mcp", "list"])
        .current_dir(repo.path())
        .env("HOME", home.path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&listed.stdout), String::from_utf8_lossy(&listed.stderr));
    let line = text.lines().find(|line| line.contains("lore")).unwrap_or_else(|| panic!("gemini mcp list: {text}"));
    assert!(line.contains("mcp --project calc --agent gemini"), "{line}");
    // The folder is trusted by `lore init`: Gemini starts the server.
    assert!(line.contains("Connected"), "{text}");
}

#[tokio::test]
async fn geminis_own_hook_input_becomes_typed_actions_a_failure_and_its_fix() {
    let database = TestDatabase::new().await.unwrap();
    let server = ServerProcess::start(ServerOptions::with_database(&database.url)).await.unwrap();
    let (state, repo) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    git_init(repo.path());
    let agent_session = Uuid::now_v7().to_string();
    let cwd = repo.path().display().to_string();
    let run = |event: &str, input: Value| {
        let mut stdin = json!({"session_id": agent_session, "cwd": cwd, "timestamp": "2026-11-26T21:00:00Z"});
        stdin.as_object_mut().unwrap().extend(input.as_object().cloned().unwrap());
        let mut child = clean(&mut Command::new(lore_e2e::workspace_binary("lore")))
            .args(["hook", event, "--project", "gemini-calc", "--agent", "gemini"])
            .env("LORE_STATE_DIR", state.path())
            .env("LORE_HOOK_BUDGET_MS", "8000")
            .env("LORE_SIDECAR", format!("http://127.0.0.1:{}", free_port()))
            .env("LORE_SERVER", server.endpoint())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(stdin.to_string().as_bytes()).unwrap();
        let output = child.wait_with_output().unwrap();
        assert!(output.status.success(), "{event}: {output:?}");
    };
    let shell = |code: i64, output: &str| {
        json!({"hook_event_name": "AfterTool", "tool_name": "run_shell_command",
               "tool_input": {"command": "cargo test", "description": "Run the tests"},
               "tool_response": {"llmContent": format!("Command: cargo test\nOutput: {output}\nExit Code: {code}"),
                                 "returnDisplay": output, "error": null}})
    };
    run("session-start", json!({"hook_event_name": "SessionStart", "source": "startup"}));
    run("post-tool-use", shell(101, "test parse ... FAILED\nthread 'parse' panicked at src/lib.rs:3:5"));
    run(
        "post-tool-use",
        json!({"hook_event_name": "AfterTool", "tool_name": "replace",
               "tool_input": {"file_path": format!("{cwd}/src/lib.rs"), "old_string": "a", "new_string": "b"},
               "tool_response": {"llmContent": "Successfully modified file", "returnDisplay": "", "error": null}}),
    );
    run("post-tool-use", shell(0, "test result: ok. 2 passed"));
    run("stop", json!({"hook_event_name": "AfterAgent", "prompt": "fix it", "prompt_response": "Fixed the parser."}));

    let session = lore_session_id(AgentKind::Gemini, &agent_session);
    let pool = &database.pool;
    let rows = lore_e2e::session_tool_calls(pool, session).await;
    let row = |tool: &str, kind: &str, outcome: &str| (tool.to_owned(), kind.to_owned(), outcome.to_owned());
    assert_eq!(
        rows,
        vec![
            row("run_shell_command", "test_run", "failure"),
            row("replace", "file_edit", "success"),
            row("run_shell_command", "test_run", "success"),
        ]
    );
    let fix = lore_e2e::session_fix(pool, session).await.expect("the failure's fix attempt");
    assert_eq!(fix, ("success".to_owned(), vec!["src/lib.rs".to_owned()]));
    let (status, summary) = lore_e2e::session_state(pool, session).await.unwrap();
    assert_eq!((status.as_str(), summary.as_str()), ("ended", "Fixed the parser."));
    let supervisor: String = sqlx::query_scalar("SELECT supervisor_type FROM sessions WHERE session_id = $1")
        .bind(session)
        .fetch_one(pool)
        .await
        .unwrap();
    assert_eq!(supervisor, "gemini");
}
