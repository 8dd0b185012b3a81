//! The real Claude Code CLI plugs into Lore by itself.
//!
//! A repository is set up with `lore init claude-code`, against the real
//! server (auth on) and a real sidecar that holds the only token. Claude
//! Code runs headless against a scripted stand-in for the model API
//! (`lore_e2e::model_stub`): the model loads and calls the `briefing` tool,
//! runs the failing tests, reads and edits the file, runs the tests again
//! (passing) and finishes. The test then checks what the model was shown
//! and what Lore recorded, with nothing done by hand in between.

use std::path::Path;

use lore_e2e::model_stub::{Block, ModelStub};
use lore_e2e::{ServerOptions, ServerProcess, TestDatabase, default_cache_dir, free_port};
use lore_proto::auth::Bearer;
use lore_proto::v1 as proto;
use lore_proto::v1::action_service_client::ActionServiceClient;
use lore_proto::v1::knowledge_service_client::KnowledgeServiceClient;
use lore_server::auth::Role;
use lore_server::store::tokens::NewToken;
use serde_json::{Value, json};
use tonic::service::interceptor::InterceptedService;
use uuid::Uuid;

const PROJECT: &str = "calc";
const AGENT: &str = "claude-agent";
const LESSON: &str = "ZeroDivisionError in calc.divide when the divisor is zero";
/// A secret the agent's own command carries: it must not reach the log.
const SECRET: &str = "sk_live_ReTllpYQYfIZu2Jnf2lAPFjD";

async fn token(database: &TestDatabase, name: &str, role: Role) -> String {
    let token = NewToken { name: name.into(), role, projects: Some(vec![PROJECT.into()]), expires_at: None };
    lore_server::auth::create_token(&database.pool, &token).await.unwrap().1
}

/// Yesterday's session of the agent left the division test failing, and a
/// lesson says how that was fixed before.
async fn seed(server: &ServerProcess, admin: &str) {
    let channel = || async { InterceptedService::new(server.channel().await, Bearer::new(Some(admin)).unwrap()) };
    let mut knowledge = KnowledgeServiceClient::new(channel().await);
    let lesson = proto::Entry {
        key: "PAT-DIV".into(),
        project: PROJECT.into(),
        kind: proto::EntryKind::IssuePattern as i32,
        title: LESSON.into(),
        summary: "calc.divide divides without checking the divisor, so the zero test fails.".into(),
        details: Some(proto::entry::Details::IssuePattern(proto::IssuePatternDetails {
            solutions: vec![proto::Solution {
                description: "Raise ValueError when b is zero, before dividing.".into(),
                ..Default::default()
            }],
            ..Default::default()
        })),
        ..Default::default()
    };
    knowledge.upsert_entry(proto::UpsertEntryRequest { entry: Some(lesson) }).await.unwrap();
    let mut actions = ActionServiceClient::new(channel().await);
    let start = proto::StartSessionRequest { project: PROJECT.into(), agent_id: AGENT.into(), ..Default::default() };
    let yesterday = actions.start_session(start).await.unwrap().into_inner().session.unwrap();
    let validate = proto::Action {
        session_id: yesterday.session_id.clone(),
        project: PROJECT.into(),
        action_type: "validate".into(),
        category: "tests".into(),
        outcome: proto::Outcome::Failure as i32,
        error: "ZeroDivisionError: division by zero in calc.divide".into(),
        occurred_at: Some(lore_e2e::now()),
        ..Default::default()
    };
    actions.log_action(proto::LogActionRequest { action: Some(validate) }).await.unwrap();
    let end = proto::EndSessionRequest {
        session_id: yesterday.session_id,
        reason: proto::EndReason::NetworkDisconnect as i32,
        summary: String::new(),
    };
    actions.end_session(end).await.unwrap();
}

/// A small Python project whose test fails on the division bug.
fn repository(dir: &Path) {
    std::fs::write(dir.join("calc.py"), "def divide(a, b):\n    return a / b\n").unwrap();
    std::fs::write(
        dir.join("test_calc.py"),
        "from calc import divide\n\ntry:\n    divide(1, 0)\nexcept ValueError:\n    print('ok')\nelse:\n    raise SystemExit('divide(1, 0) did not raise ValueError')\n",
    )
    .unwrap();
    std::fs::write(dir.join("Makefile"), "test:\n\tpython3 test_calc.py\n").unwrap();
    let status = std::process::Command::new("git").arg("init").arg("-q").arg(dir).status().unwrap();
    assert!(status.success());
}

fn claude(
    home: &Path,
    repo: &Path,
    state: &Path,
    model: &ModelStub,
    sidecar: &str,
    server: &str,
) -> std::process::Command {
    let mut command = std::process::Command::new(lore_e2e::claude_binary());
    for (key, _) in std::env::vars() {
        if key.starts_with("LORE_") || key.starts_with("ANTHROPIC_") || key.starts_with("CLAUDE") {
            command.env_remove(key);
        }
    }
    command
        .current_dir(repo)
        .env("HOME", home)
        .env("ANTHROPIC_BASE_URL", model.base_url())
        .env("ANTHROPIC_API_KEY", "sk-ant-stand-in")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("LORE_SIDECAR", sidecar)
        .env("LORE_SERVER", server)
        .env("LORE_STATE_DIR", state)
        // The hooks' default budgets are for release builds on an idle
        // machine; here they are debug builds beside other tests, and a
        // post-tool-use hook that gave up would record nothing. Their
        // times are measured in `make bench`, not here.
        .env("LORE_HOOK_BUDGET_MS", "4000")
        .env("LORE_AGENT_ID", AGENT)
        .env("LORE_CACHE_DIR", default_cache_dir());
    command
}

/// The text of every content block of a request's messages, tool results
/// included.
fn texts(request: &Value) -> String {
    request["messages"].to_string()
}

#[tokio::test]
async fn the_real_claude_code_is_briefed_and_its_session_failure_and_fix_are_recorded_with_no_one_asking() {
    let database = TestDatabase::new().await.unwrap();
    let server = ServerProcess::start(ServerOptions::with_database(&database.url).with_auth()).await.unwrap();
    let admin = token(&database, "admin", Role::Admin).await;
    let agent_token = token(&database, "vm-sidecar", Role::Agent).await;
    seed(&server, &admin).await;
    let spool = tempfile::tempdir_in(default_cache_dir()).unwrap();
    let sidecar_port = free_port();
    let sidecar = ServerProcess::start_sidecar_on(
        &format!("127.0.0.1:{sidecar_port}"),
        &server.endpoint(),
        spool.path(),
        &["--token", &agent_token],
    )
    .await
    .unwrap();

    let work = tempfile::tempdir().unwrap();
    let (home, repo, state) = (work.path().join("home"), work.path().join("calc"), work.path().join("state"));
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&repo).unwrap();
    repository(&repo);

    // Set-up in one command (HOME: the approval goes to the user's settings).
    let lore = lore_e2e::workspace_binary("lore");
    let init = std::process::Command::new(&lore)
        .args(["init", "claude-code", "--project", PROJECT])
        .current_dir(&repo)
        .env("HOME", &home)
        .output()
        .unwrap();
    assert!(init.status.success(), "{}", String::from_utf8_lossy(&init.stderr));

    let calc = repo.join("calc.py").display().to_string();
    let test_command = format!("STRIPE_KEY={SECRET} make test");
    let model = ModelStub::start(vec![
        vec![Block::tool("ToolSearch", json!({"query": "select:mcp__lore__briefing", "max_results": 5}))],
        vec![Block::tool("mcp__lore__briefing", json!({"task": "Fix the divide bug in calc.py", "files": ["calc.py"]}))],
        vec![Block::tool("Bash", json!({"command": test_command, "description": "Run the tests"}))],
        vec![Block::tool("Read", json!({"file_path": calc}))],
        vec![Block::tool(
            "Edit",
            json!({"file_path": calc, "old_string": "    return a / b", "new_string": "    if b == 0:\n        raise ValueError(\"b is zero\")\n    return a / b"}),
        )],
        vec![Block::tool("Bash", json!({"command": test_command, "description": "Run the tests again"}))],
        vec![Block::Text("Fixed: divide raises ValueError when b is zero, and the tests pass.".into())],
    ])
    .await;

    let sidecar_url = sidecar.endpoint();
    let run = {
        let mut command = claude(&home, &repo, &state, &model, &sidecar_url, &server.endpoint());
        command.args([
            "-p",
            "Fix the divide bug in calc.py",
            "--output-format",
            "json",
            "--allowedTools",
            "Bash",
            "Read",
            "Edit",
            "ToolSearch",
            "mcp__lore",
        ]);
        tokio::task::spawn_blocking(move || command.output()).await.unwrap().unwrap()
    };
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(run.status.success(), "claude failed: {stdout}\n{}", String::from_utf8_lossy(&run.stderr));
    let result: Value = serde_json::from_str(stdout.trim()).expect("claude's JSON result");
    assert_eq!(result["is_error"], false, "{result}");
    let claude_session = result["session_id"].as_str().expect("the agent's session id").to_owned();
    let session = lore_agent::identity::lore_session_id(lore_agent::identity::AgentKind::ClaudeCode, &claude_session);
    let hook_log = std::fs::read_to_string(state.join("hooks.log")).unwrap_or_default();

    // What the model was shown.
    let requests = model.main_requests();
    assert!(requests.len() >= 7, "{} main-loop requests", requests.len());
    assert!(
        texts(&requests[0]).contains(LESSON),
        "the SessionStart briefing (with the seeded lesson) is in the first request; hook log: {hook_log}\n{}",
        texts(&requests[0])
    );
    let briefed = requests.iter().position(|request| {
        request["messages"].as_array().into_iter().flatten().any(|message| {
            message["content"].as_array().into_iter().flatten().any(|block| {
                block["type"] == "tool_result"
                    && block.to_string().contains("PAT-DIV")
                    && block.to_string().contains("Lore briefing")
            })
        })
    });
    assert!(briefed.is_some_and(|at| at >= 2), "the briefing tool's result reaches the next request");

    // What Lore recorded, once the sidecar has shipped it.
    let pool = &database.pool;
    let shipped = lore_e2e::eventually(|| async {
        let resolved: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM qa_failure_resolutions r JOIN qa_failures f USING (failure_id) WHERE f.session_id = $1",
        )
        .bind(session)
        .fetch_one(pool)
        .await
        .unwrap();
        let ended = lore_e2e::session_state(pool, session).await.is_some_and(|(status, _)| status == "ended");
        (resolved == 1 && ended).then_some(())
    })
    .await;
    let rejects = std::fs::read_to_string(spool.path().join("rejects.jsonl")).unwrap_or_default();
    assert!(rejects.is_empty(), "the server refused spooled writes: {rejects}");
    assert!(
        shipped.is_some(),
        "within a minute, the failing check is resolved by its fix and the session has ended; hook log: {hook_log}"
    );

    let calls: Vec<(String, String, String, Value, String)> = sqlx::query_as(
        "SELECT category, outcome, coalesce(context->>'tool', ''), context, error FROM actions
          WHERE session_id = $1 AND action_type = 'tool_call' ORDER BY chain_seq",
    )
    .bind(session)
    .fetch_all(pool)
    .await
    .unwrap();
    let tools: Vec<&str> = calls.iter().map(|(_, _, tool, _, _)| tool.as_str()).collect();
    for expected in ["ToolSearch", "briefing", "Bash", "Read", "Edit"] {
        assert!(tools.contains(&expected), "{expected} is not in the action log: {tools:?}\nhook log: {hook_log}");
    }
    assert_eq!(tools.iter().filter(|tool| **tool == "Bash").count(), 2, "{tools:?}");
    let briefing = calls.iter().find(|(_, _, tool, _, _)| tool == "briefing").unwrap();
    assert_eq!(briefing.0, "mcp", "the MCP server recorded its own tool call");
    assert!(
        !calls.iter().any(|(_, _, tool, _, _)| tool == "mcp__lore__briefing"),
        "the hook leaves Lore's own tools to the MCP server: {tools:?}"
    );
    let bash_outcomes: Vec<&str> = calls
        .iter()
        .filter(|(_, _, tool, _, _)| tool == "Bash")
        .map(|(_, outcome, _, _, _)| outcome.as_str())
        .collect();
    assert_eq!(bash_outcomes, vec!["failure", "success"]);
    // The failing check and its fix are the task's two QA results: a
    // failure, then a pass on the second attempt.
    let results: Vec<(i32, bool, i32)> = sqlx::query_as(
        "SELECT attempt, passed, cardinality(failure_ids) FROM qa_task_results WHERE session_id = $1 ORDER BY attempt",
    )
    .bind(session)
    .fetch_all(pool)
    .await
    .unwrap();
    assert_eq!(results, [(1, false, 1), (2, true, 0)], "hook log: {hook_log}");
    let edit = calls.iter().find(|(_, _, tool, _, _)| tool == "Edit").unwrap();
    assert_eq!(edit.3["input"]["file_path"], calc, "an edit is logged by its path");
    assert!(edit.3.to_string().len() < 1000, "never the file's content: {}", edit.3);
    let leaked: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM actions WHERE project = $1 AND (context::text LIKE '%sk_live_%' OR error LIKE '%sk_live_%')",
    )
    .bind(PROJECT)
    .fetch_one(pool)
    .await
    .unwrap();
    assert_eq!(leaked, 0, "every tool call is redacted");

    // The failing run became a captured failure of the session's task, and
    // the passing run its fix, with the file edited in between.
    let (failure_id, task_id, check): (Uuid, String, String) =
        sqlx::query_as("SELECT failure_id, task_id, failed_checks->0->>'name' FROM qa_failures WHERE session_id = $1")
            .bind(session)
            .fetch_one(pool)
            .await
            .unwrap();
    assert_eq!((task_id.as_str(), check.as_str()), (format!("session:{session}").as_str(), "make test"));
    let (outcome, files): (String, Vec<String>) =
        sqlx::query_as("SELECT outcome, files_changed FROM qa_fix_attempts WHERE failure_id = $1")
            .bind(failure_id)
            .fetch_one(pool)
            .await
            .unwrap();
    assert_eq!(outcome, "success");
    assert_eq!(files, vec!["calc.py"]);
    let leaked: i64 =
        sqlx::query_scalar("SELECT count(*) FROM qa_failures WHERE failed_checks::text LIKE '%sk_live_%'")
            .fetch_one(pool)
            .await
            .unwrap();
    assert_eq!(leaked, 0);

    // The session ended, with the agent's last answer as its summary.
    let (status, summary) = lore_e2e::session_state(pool, session).await.expect("the session is stored");
    assert_eq!(status, "ended");
    assert!(summary.starts_with("Fixed: divide raises ValueError"), "{summary}");

    // Claude Code sees the server connected.
    let list = {
        let mut command = claude(&home, &repo, &state, &model, &sidecar_url, &server.endpoint());
        command.args(["mcp", "list"]);
        tokio::task::spawn_blocking(move || command.output()).await.unwrap().unwrap()
    };
    let listed = String::from_utf8_lossy(&list.stdout);
    let lore_line = listed.lines().find(|line| line.starts_with("lore:")).unwrap_or_default();
    assert!(lore_line.contains("Connected"), "claude mcp list: {listed}");
}
