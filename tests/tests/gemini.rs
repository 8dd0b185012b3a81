//! Gemini CLI plugs into Lore: the real `gemini` (npm, 0.61.0) lists Lore's
//! MCP server after `lore init gemini`; `lore hook --agent gemini` reads
//! Gemini's own hook input (AfterTool with `{llmContent, returnDisplay,
//! error}`, AfterAgent with `prompt_response`) into typed actions, a QA
//! failure and its fix; and a headless `gemini -p` against a stand-in for
//! the Gemini API on loopback is briefed by the hooks, calls Lore's
//! `briefing` tool and has its failing check, edit and fix recorded.

use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};

use lore_agent::identity::{AgentKind, lore_session_id};
use lore_e2e::model_stub::{Block, ModelStub};
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

/// Gemini CLI headless (`-p PROMPT`) in `repo` against `model`, its hooks
/// pointed at `lore`.
async fn run_gemini(
    lore: &lore_e2e::CalcLore,
    home: &Path,
    repo: &Path,
    state: &Path,
    model: &ModelStub,
    prompt: &str,
) -> std::process::Output {
    let mut command = Command::new(gemini_binary());
    clean(&mut command)
        // A model named: the default routes each prompt through a
        // classifier call first.
        .args(["-m", "gemini-2.5-flash", "--yolo", "--output-format", "json", "-p", prompt])
        .current_dir(repo)
        .env("HOME", home)
        .env("GEMINI_API_KEY", "stand-in")
        .env("GOOGLE_GEMINI_BASE_URL", model.base_url())
        .env("LORE_SIDECAR", lore.sidecar.endpoint())
        .env("LORE_SERVER", lore.server.endpoint())
        .env("LORE_STATE_DIR", state)
        // Debug builds beside other tests: see claude_code.rs.
        .env("LORE_HOOK_BUDGET_MS", "4000")
        .env("LORE_CACHE_DIR", lore_e2e::default_cache_dir())
        .stdin(Stdio::null());
    tokio::task::spawn_blocking(move || command.output()).await.unwrap().unwrap()
}

/// A home whose user chose API-key sign-in once, and a repository set up
/// with `lore init gemini`.
fn gemini_repository(home: &Path, repo: &Path, make_repository: fn(&Path)) {
    std::fs::create_dir_all(home.join(".gemini")).unwrap();
    std::fs::create_dir_all(repo).unwrap();
    make_repository(repo);
    std::fs::write(home.join(".gemini/settings.json"), r#"{"security": {"auth": {"selectedType": "gemini-api-key"}}}"#)
        .unwrap();
    let init = clean(&mut Command::new(lore_e2e::workspace_binary("lore")))
        .args(["init", "gemini", "--project", "calc"])
        .current_dir(repo)
        .env("HOME", home)
        .output()
        .unwrap();
    assert!(init.status.success(), "{}", String::from_utf8_lossy(&init.stderr));
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

/// The real Gemini CLI, headless (`gemini -p`), against the stand-in
/// model on loopback (`GOOGLE_GEMINI_BASE_URL`, an API key it never checks):
/// its hooks brief it and record the failing `make test`, the edit and the
/// passing run; Lore's MCP tools are offered and `briefing` is called.
#[tokio::test]
async fn the_real_gemini_cli_runs_headless_against_a_stand_in_and_its_hooks_and_tools_reach_lore() {
    let lore = lore_e2e::CalcLore::start().await;

    let work = tempfile::tempdir().unwrap();
    let (home, repo, state) = (work.path().join("home"), work.path().join("calc"), work.path().join("state"));
    gemini_repository(&home, &repo, lore_e2e::calc_repository);

    let calc = repo.join("calc.py").display().to_string();
    let model = ModelStub::start(vec![
        vec![Block::tool("run_shell_command", json!({"command": "make test", "description": "Run the tests"}))],
        vec![Block::tool("mcp_lore_briefing", json!({"task": "Fix the divide bug in calc.py", "files": ["calc.py"]}))],
        vec![Block::tool(
            "replace",
            json!({"file_path": calc, "old_string": "    return a / b",
                   "new_string": "    if b == 0:\n        raise ValueError(\"b is zero\")\n    return a / b",
                   "instruction": "Guard the zero divisor."}),
        )],
        vec![Block::tool("run_shell_command", json!({"command": "make test", "description": "Run the tests again"}))],
        vec![Block::Text("Fixed: divide raises ValueError when b is zero.".into())],
    ])
    .await;
    let run = run_gemini(&lore, &home, &repo, &state, &model, "Fix the divide bug in calc.py").await;
    let stdout = String::from_utf8_lossy(&run.stdout).into_owned();
    let hook_log = std::fs::read_to_string(state.join("hooks.log")).unwrap_or_default();
    assert!(run.status.success(), "gemini failed: {stdout}\n{}", String::from_utf8_lossy(&run.stderr));
    let result: Value = serde_json::from_str(stdout.trim()).expect("gemini's JSON result");
    let agent_session = result["session_id"].as_str().expect("the agent's session id");
    let session = lore_session_id(AgentKind::Gemini, agent_session);

    // What the model was shown: the briefing of the hooks, Lore's tools,
    // and the briefing tool's answer.
    let requests = model.main_requests();
    assert!(requests.len() >= 5, "{} main requests: {stdout}", requests.len());
    assert!(requests[0]["contents"].to_string().contains(lore_e2e::CALC_LESSON), "hook log: {hook_log}");
    let offered: Vec<String> = requests[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|tools| tools["functionDeclarations"].as_array().cloned().unwrap_or_default())
        .filter_map(|declaration| declaration["name"].as_str().map(str::to_owned))
        .collect();
    assert!(offered.iter().any(|name| name == "mcp_lore_briefing"), "{offered:?}");
    let answered = requests[2]["contents"].to_string();
    assert!(answered.contains("functionResponse") && answered.contains("PAT-DIV"), "{answered}");

    // What Lore recorded.
    let pool = &lore.database.pool;
    let results = lore.task_results(session, 2).await;
    assert_eq!(results, Some(vec![(1, false, 1), (2, true, 0)]), "hook log: {hook_log}");
    let rows = lore_e2e::session_tool_calls(pool, session).await;
    let row = |tool: &str, kind: &str, outcome: &str| (tool.to_owned(), kind.to_owned(), outcome.to_owned());
    for expected in [
        row("run_shell_command", "test_run", "failure"),
        row("replace", "file_edit", "success"),
        row("run_shell_command", "test_run", "success"),
        row("briefing", "tool_call", "success"),
    ] {
        assert!(rows.contains(&expected), "{expected:?} is not in {rows:?}\nhook log: {hook_log}");
    }
    let fix = lore_e2e::session_fix(pool, session).await;
    assert_eq!(fix, Some(("success".to_owned(), vec!["calc.py".to_owned()])), "hook log: {hook_log}");
}

const WRONG_RUNNER: &str = "python3 -m pytest_lore_absent test_calc.py";
/// What only the wrong runner's own output says (Lore's warning names the
/// failure by its template, `<*> No module named pytest_lore_absent`).
const RAN: &str = "python3: No module named pytest_lore_absent";

/// Earlier, the wrong runner failed and the repository's own passed. A
/// fresh Gemini session making the same call is told by a deny whose reason
/// is the warning (BeforeTool has no other way to reach the model), once.
#[tokio::test]
async fn the_real_gemini_cli_is_warned_at_the_call_naming_what_worked() {
    let lore = lore_e2e::CalcLore::start().await;
    let work = tempfile::tempdir().unwrap();
    let (home, repo, state) = (work.path().join("home"), work.path().join("calc"), work.path().join("state"));
    gemini_repository(&home, &repo, lore_e2e::calc_repository_with_runner);
    let shell = |command: &str| Block::tool("run_shell_command", json!({"command": command, "description": "Run it"}));
    let earlier = ModelStub::start(vec![
        vec![shell(WRONG_RUNNER)],
        vec![shell("./runtests.sh")],
        vec![Block::Text("The repository's runner passes.".into())],
    ])
    .await;
    let run = run_gemini(&lore, &home, &repo, &state, &earlier, "Run the tests").await;
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let hook_log = || std::fs::read_to_string(state.join("hooks.log")).unwrap_or_default();
    assert!(lore.shell_calls_recorded(2).await, "the earlier commands reach the server; hook log: {}", hook_log());

    let fresh = ModelStub::start(vec![
        vec![shell("ls")],
        vec![shell(WRONG_RUNNER)],
        vec![shell(WRONG_RUNNER)],
        vec![shell("./runtests.sh")],
        vec![Block::Text("Done.".into())],
    ])
    .await;
    let run = run_gemini(&lore, &home, &repo, &state, &fresh, "Run the tests").await;
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let requests = fresh.main_requests();
    assert!(requests.len() >= 5, "{} requests; hook log: {}", requests.len(), hook_log());
    let after_ls = requests[1]["contents"].to_string();
    assert!(!after_ls.contains("earlier sessions of this project"), "a call that never failed: {after_ls}");
    let after_runner = requests[2]["contents"].to_string();
    let held = &after_runner[after_runner.rfind("functionResponse").unwrap_or(0)..];
    assert!(
        held.contains(lore_e2e::WHAT_WORKED) && held.contains(lore_e2e::HELD) && !held.contains(RAN),
        "the call is held before it runs and the model reads Lore's warning instead; hook log: {}\n{held}",
        hook_log()
    );
    // Told once: the same call again runs, and fails as it did before, with
    // nothing more said after it.
    let again = requests[3]["contents"].to_string();
    let last_answer = &again[again.rfind("functionResponse").unwrap_or(0)..];
    assert!(!again[again.rfind("\"model\"").unwrap_or(0)..].contains("what worked after"), "{again}");
    assert!(last_answer.contains(RAN), "{last_answer}");
    assert!(lore.command_recorded("./runtests.sh", 2).await, "the second recovery; hook log: {}", hook_log());

    // In `context` mode Gemini's hook, which can only refuse before the
    // call, says nothing then; right after the call fails as it did
    // before, AfterTool tells what worked after.
    lore.set_call_warnings("context").await;
    let context = ModelStub::start(vec![vec![shell(WRONG_RUNNER)], vec![Block::Text("Done.".into())]]).await;
    let run = run_gemini(&lore, &home, &repo, &state, &context, "Run the tests").await;
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let requests = context.main_requests();
    assert!(requests.len() >= 2, "{} requests; hook log: {}", requests.len(), hook_log());
    let after = requests[1]["contents"].to_string();
    assert!(after.contains(RAN) && !after.contains(lore_e2e::HELD), "the call ran: {after}");
    assert!(
        after.contains("failed this way in 2 of 2 earlier sessions here; what worked after: `runtests.sh` (2 of 2)"),
        "the model reads what worked after, right after the failure; hook log: {}\n{after}",
        hook_log()
    );
    lore.set_call_warnings("deny-once").await;

    // A person guards that call: refused every time, the reason and the
    // alternative in the model's view, the command never run.
    lore.guard(WRONG_RUNNER, "This repository has no pytest plugin.", "./runtests.sh").await;
    let guarded = ModelStub::start(vec![
        vec![shell(WRONG_RUNNER)],
        vec![shell(WRONG_RUNNER)],
        vec![Block::Text("Refused twice; I will use the repository's runner.".into())],
    ])
    .await;
    let run = run_gemini(&lore, &home, &repo, &state, &guarded, "Run the tests").await;
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let requests = guarded.main_requests();
    assert!(requests.len() >= 3, "{} requests; hook log: {}", requests.len(), hook_log());
    for (index, request) in requests[1..3].iter().enumerate() {
        let contents = request["contents"].to_string();
        let answer = &contents[contents.rfind("functionResponse").unwrap_or(0)..];
        assert!(
            answer.contains("Lore guard") && answer.contains("Run instead: `./runtests.sh`"),
            "call {index}: the model reads the guard's refusal; hook log: {}\n{answer}",
            hook_log()
        );
        assert!(!answer.contains("No module named"), "the refused call never ran: {answer}");
    }
    assert!(lore.guard_refusal_recorded().await, "the refusal is in the ledger; hook log: {}", hook_log());
}
