//! `lore hook` as the agents run it: a process per event, JSON on stdin.
//! Hooks never hurt the agent: with Lore down, frozen, or fed garbage they
//! exit 0, print nothing, and say why in their log. With Lore up, Codex's
//! events (its own tool names and response shapes) record the session, a
//! failing check and its fix.

use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use lore_agent::hooks::HookEvent;
use lore_agent::identity::{AgentKind, lore_session_id};
use lore_e2e::{ServerOptions, ServerProcess, TestDatabase, default_cache_dir, free_port};
use lore_proto::v1 as proto;
use serde_json::{Value, json};
use uuid::Uuid;

/// The budget of hooks under test (see `hook`).
const TEST_BUDGET_MS: &str = "8000";

/// Runs `lore hook <event>` the way an agent does, and how long it took.
fn hook(event: &str, args: &[&str], stdin: &[u8], state: &Path, sidecar: &str, server: &str) -> (Output, Duration) {
    let mut command = Command::new(lore_e2e::workspace_binary("lore"));
    for (key, _) in std::env::vars() {
        if key.starts_with("LORE_") || key.starts_with("CLAUDE") || key.starts_with("CODEX") {
            command.env_remove(key);
        }
    }
    let started = Instant::now();
    let mut child = command
        .args(["hook", event, "--project", "hooks"])
        .args(args)
        .env("LORE_STATE_DIR", state)
        // What a hook does, not how fast: a loaded test machine runs debug
        // builds far slower than the default budgets assume. The budget
        // itself is tested with --budget-ms; the times are in `make bench`.
        .env("LORE_HOOK_BUDGET_MS", TEST_BUDGET_MS)
        .env("LORE_SIDECAR", sidecar)
        .env("LORE_SERVER", server)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("lore runs");
    // A hook may stop reading (an input over its limit): the rest is the
    // agent's broken pipe, not the hook's failure.
    let _ = child.stdin.take().unwrap().write_all(stdin);
    let output = child.wait_with_output().unwrap();
    (output, started.elapsed())
}

fn input(event: &str, extra: Value) -> Vec<u8> {
    let mut input = json!({ "session_id": "agent-session-1", "cwd": "/tmp", "hook_event_name": event });
    input.as_object_mut().unwrap().extend(extra.as_object().cloned().unwrap_or_default());
    input.to_string().into_bytes()
}

fn log(state: &Path) -> String {
    std::fs::read_to_string(state.join("hooks.log")).unwrap_or_default()
}

/// An address that accepts connections and never answers: a frozen
/// sidecar.
fn frozen_listener() -> (std::net::TcpListener, String) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = format!("http://{}", listener.local_addr().unwrap());
    (listener, address)
}

/// Far above any budget: a hook that waited on Lore instead of its budget
/// would hang past it (a frozen peer never answers), so this bounds a hang,
/// not a speed. The hooks' real wall times are in `make bench`.
const NO_HANG: Duration = Duration::from_secs(10);

#[test]
fn every_hook_exits_0_and_prints_nothing_with_the_sidecar_and_the_server_down() {
    let state = tempfile::tempdir().unwrap();
    let (down_sidecar, down_server) =
        (format!("http://127.0.0.1:{}", free_port()), format!("http://127.0.0.1:{}", free_port()));
    let events = [
        ("session-start", input("SessionStart", json!({"source": "startup"}))),
        ("user-prompt-submit", input("UserPromptSubmit", json!({"prompt": "fix the bug"}))),
        ("pre-tool-use", input("PreToolUse", json!({"tool_name": "Bash", "tool_input": {"command": "pytest"}}))),
        (
            "post-tool-use",
            input(
                "PostToolUseFailure",
                json!({"tool_name": "Bash", "tool_input": {"command": "cargo test"}, "error": "Exit code 101"}),
            ),
        ),
        ("stop", input("Stop", json!({"last_assistant_message": "done"}))),
        ("session-end", input("SessionEnd", json!({"reason": "other"}))),
    ];
    for (event, stdin) in &events {
        let (output, took) = hook(event, &[], stdin, state.path(), &down_sidecar, &down_server);
        assert!(output.status.success(), "{event}: {:?}", output.status);
        assert!(output.stdout.is_empty(), "{event} printed {:?}", String::from_utf8_lossy(&output.stdout));
        assert!(took < NO_HANG, "{event} took {took:?}");
    }
    let log = log(state.path());
    for event in ["session-start", "user-prompt-submit", "post-tool-use", "stop", "session-end"] {
        assert!(log.contains(&format!("lore hook {event}: Lore is unreachable")), "{event} not logged:\n{log}");
    }
}

#[test]
fn a_hook_gives_up_on_a_frozen_sidecar_at_its_budget_and_exits_0() {
    let state = tempfile::tempdir().unwrap();
    let (_listener, frozen) = frozen_listener();
    let stdin =
        input("PostToolUse", json!({"tool_name": "Read", "tool_input": {"file_path": "/tmp/x"}, "tool_response": {}}));
    for (event, budget) in [("post-tool-use", "100"), ("session-start", "300")] {
        let (output, took) = hook(event, &["--budget-ms", budget], &stdin, state.path(), &frozen, &frozen);
        assert!(output.status.success() && output.stdout.is_empty(), "{event}: {output:?}");
        assert!(took < NO_HANG, "{event} took {took:?}");
    }
    let log = log(state.path());
    // Either the connection or the call runs out of time; the write then
    // waits in the outbox, or at worst the budget ends.
    assert!(
        log.contains("post-tool-use: gave up after its budget of 100 ms")
            || log.contains("post-tool-use: Lore is unreachable")
            || log.lines().any(|line| line.contains("post-tool-use (session") && line.contains("writes wait in")),
        "{log}"
    );
}

#[test]
fn a_hook_given_malformed_input_exits_0_and_logs_why() {
    let state = tempfile::tempdir().unwrap();
    let down = format!("http://127.0.0.1:{}", free_port());
    let cases: [(&[u8], &str); 5] = [
        (b"not json at all", "not the agent's JSON"),
        (b"", "the hook input is empty"),
        (&[0xff, 0xfe, 0x00], "not UTF-8"),
        (b"[1, 2, 3]", "not the agent's JSON"),
        (br#"{"hook_event_name": "PostToolUse", "tool_name": "Bash"}"#, "no session_id"),
    ];
    for (stdin, reason) in cases {
        let (output, _) = hook("post-tool-use", &[], stdin, state.path(), &down, &down);
        assert!(output.status.success() && output.stdout.is_empty(), "{reason}: {output:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(reason), "stderr says why ({reason}): {stderr}");
        assert!(log(state.path()).contains(reason), "the log says why ({reason})");
    }
    // A huge input is refused by size, not read to the end.
    let huge = vec![b' '; 9 * 1024 * 1024];
    let (output, _) = hook("post-tool-use", &[], &huge, state.path(), &down, &down);
    assert!(output.status.success() && output.stdout.is_empty());
    assert!(log(state.path()).contains("is over"), "{}", log(state.path()));
}

#[tokio::test]
async fn codex_hooks_record_the_session_a_failing_check_and_its_fix_through_the_sidecar() {
    let database = TestDatabase::new().await.unwrap();
    let server = ServerProcess::start(ServerOptions::with_database(&database.url)).await.unwrap();
    let mut knowledge = lore_proto::v1::knowledge_service_client::KnowledgeServiceClient::new(server.channel().await);
    let lesson = proto::Entry {
        project: "hooks".into(),
        kind: proto::EntryKind::Gotcha as i32,
        title: "cargo test fails on the parser's empty input".into(),
        summary: "Return early for empty input.".into(),
        ..Default::default()
    };
    knowledge.upsert_entry(proto::UpsertEntryRequest { entry: Some(lesson) }).await.unwrap();
    let spool = tempfile::tempdir_in(default_cache_dir()).unwrap();
    let sidecar = ServerProcess::start_sidecar(&server.endpoint(), spool.path(), &[]).await.unwrap();
    let state = tempfile::tempdir().unwrap();
    let repo = tempfile::tempdir().unwrap();
    let cwd = repo.path().display().to_string();
    let agent_session = Uuid::now_v7().to_string();
    let event = |name: &str, extra: Value| {
        let mut input =
            json!({"session_id": agent_session, "cwd": cwd, "hook_event_name": name, "model": "gpt-5", "turn_id": "t"});
        input.as_object_mut().unwrap().extend(extra.as_object().cloned().unwrap_or_default());
        input.to_string().into_bytes()
    };
    let run = |name: &str, stdin: Vec<u8>| {
        let (output, _) =
            hook(name, &["--agent", "codex"], &stdin, state.path(), &sidecar.endpoint(), &server.endpoint());
        assert!(output.status.success(), "{name}: {output:?}");
        String::from_utf8_lossy(&output.stdout).into_owned()
    };

    let prompt = run(
        HookEvent::UserPromptSubmit.arg_name(),
        event("UserPromptSubmit", json!({"prompt": "Make cargo test pass: the parser fails on empty input"})),
    );
    let answer: Value = serde_json::from_str(&prompt).expect("a briefing answer");
    assert_eq!(answer["hookSpecificOutput"]["hookEventName"], "UserPromptSubmit");
    assert!(
        answer["hookSpecificOutput"]["additionalContext"].as_str().unwrap().contains("parser's empty input"),
        "{answer}"
    );
    let bash = |exit_code: i64, output: &str| {
        event(
            "PostToolUse",
            json!({"tool_name": "Bash", "tool_use_id": "u", "tool_input": {"command": ["bash", "-lc", "cargo test -p parser"]},
                   "tool_response": {"exit_code": exit_code, "output": output}}),
        )
    };
    run(
        "post-tool-use",
        bash(101, "test empty_input ... FAILED\nthread 'empty_input' panicked at src/lib.rs:9:5:\nindex out of bounds"),
    );
    run(
        "post-tool-use",
        event(
            "PostToolUse",
            json!({"tool_name": "apply_patch", "tool_input": {"input": "*** Begin Patch\n*** Update File: src/lib.rs\n@@\n-x\n+y\n*** End Patch"}, "tool_response": "Done"}),
        ),
    );
    run("post-tool-use", bash(0, "test result: ok. 3 passed"));
    // A sub-agent, as Codex 0.169 tells of it: spawn_agent answers its id
    // as JSON text, SubagentStart and the sub-agent's own calls carry it.
    let child = "01a21a6d-53de-72b1-b6da-55e7d3b43978";
    run(
        "post-tool-use",
        event(
            "PostToolUse",
            json!({"tool_name": "spawn_agent", "tool_use_id": "call_9", "tool_input": {"message": "Review the parser fix"},
                   "tool_response": format!("{{\"agent_id\":\"{child}\",\"nickname\":\"Jason\"}}")}),
        ),
    );
    run("subagent-start", event("SubagentStart", json!({"agent_id": child, "agent_type": "default"})));
    run(
        "post-tool-use",
        event(
            "PostToolUse",
            json!({"agent_id": child, "agent_type": "default", "tool_name": "Bash", "tool_use_id": "call_10",
                   "tool_input": {"command": "cat src/lib.rs"}, "tool_response": {"exit_code": 0, "output": "fn parse() {}"}}),
        ),
    );
    run(
        "subagent-stop",
        event(
            "SubagentStop",
            json!({"agent_id": child, "agent_type": "default", "stop_hook_active": false, "last_assistant_message": "It is right."}),
        ),
    );
    run("stop", event("Stop", json!({"last_assistant_message": "The parser returns early on empty input."})));
    run("session-end", event("SessionEnd", json!({"reason": "other"})));

    let session = lore_session_id(AgentKind::Codex, &agent_session);
    let pool = &database.pool;
    let fixed = lore_e2e::eventually(|| async {
        let ended = lore_e2e::session_state(pool, session).await.is_some_and(|(status, _)| status == "ended");
        let fix: Option<(String, Vec<String>)> = sqlx::query_as(
            "SELECT a.outcome, a.files_changed FROM qa_fix_attempts a JOIN qa_failures f USING (failure_id) WHERE f.session_id = $1",
        )
        .bind(session)
        .fetch_optional(pool)
        .await
        .unwrap();
        fix.filter(|_| ended)
    })
    .await;
    assert_eq!(fixed, Some(("success".to_owned(), vec!["src/lib.rs".to_owned()])), "{}", log(state.path()));
    let (supervisor, agent_id): (String, String) =
        sqlx::query_as("SELECT supervisor_type, agent_id FROM sessions WHERE session_id = $1")
            .bind(session)
            .fetch_one(pool)
            .await
            .unwrap();
    assert_eq!(supervisor, "codex");
    assert!(agent_id.starts_with("codex@"), "{agent_id}");
    let (check, messages): (String, Vec<String>) =
        sqlx::query_as("SELECT failed_checks->0->>'name', error_messages FROM qa_failures WHERE session_id = $1")
            .bind(session)
            .fetch_one(pool)
            .await
            .unwrap();
    assert_eq!(check, "cargo test");
    assert!(messages.iter().any(|message| message.contains("panicked at src/lib.rs")), "{messages:?}");
    let tools: Vec<(String, String)> = sqlx::query_as(
        "SELECT context->>'tool', action_type FROM actions WHERE session_id = $1 AND context ? 'tool' ORDER BY chain_seq",
    )
    .bind(session)
    .fetch_all(pool)
    .await
    .unwrap();
    let typed = |tool: &str, action_type: &str| (tool.to_owned(), action_type.to_owned());
    assert_eq!(
        tools,
        vec![
            typed("Bash", "test_run"),
            typed("apply_patch", "file_edit"),
            typed("Bash", "test_run"),
            typed("spawn_agent", "subagent"),
            typed("Bash", "tool_call"),
        ],
        "Codex's tool calls are typed by what they were"
    );
    // The sub-agent is the spawn_agent call's action (recorded when Codex
    // answered it, before the sub-agent started), and its own call hangs
    // under it.
    let subagents: Vec<(uuid::Uuid, String)> = sqlx::query_as(
        "SELECT action_id, context->>'tool' FROM actions WHERE session_id = $1 AND action_type = 'subagent'",
    )
    .bind(session)
    .fetch_all(pool)
    .await
    .unwrap();
    assert_eq!(subagents.len(), 1, "one sub-agent, one action: {subagents:?}");
    let (subagent, tool) = &subagents[0];
    assert_eq!(tool, "spawn_agent");
    let parents: Vec<(Option<uuid::Uuid>,)> = sqlx::query_as(
        "SELECT parent_action_id FROM actions WHERE session_id = $1 AND context->>'tool' = 'Bash' ORDER BY chain_seq",
    )
    .bind(session)
    .fetch_all(pool)
    .await
    .unwrap();
    assert_eq!(parents, [(None,), (None,), (Some(*subagent),)]);
}

/// Typed without being asked: in a repository on branch
/// `epic/checkout/SHOP-42-cart`, a commit is a `commit` with its sha and the
/// issue its trailer names, a helm upgrade a `deploy` (which the project's
/// report counts), and every action of the session carries its issue and
/// the branch's epic.
#[tokio::test]
async fn commits_and_deploys_are_typed_and_linked_to_the_issue_of_the_branch() {
    let database = TestDatabase::new().await.unwrap();
    let server = ServerProcess::start(ServerOptions::with_database(&database.url)).await.unwrap();
    let spool = tempfile::tempdir_in(default_cache_dir()).unwrap();
    let sidecar = ServerProcess::start_sidecar(&server.endpoint(), spool.path(), &[]).await.unwrap();
    let (state, repo) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let git = |args: &[&str]| {
        let status = Command::new("git").args(args).current_dir(repo.path()).stdout(Stdio::null()).status().unwrap();
        assert!(status.success(), "git {args:?}");
    };
    git(&["init", "-q", "-b", "epic/checkout/SHOP-42-cart"]);
    let cwd = repo.path().display().to_string();
    let agent_session = Uuid::now_v7().to_string();
    let event = |name: &str, extra: Value| {
        let mut input = json!({"session_id": agent_session, "cwd": cwd, "hook_event_name": name});
        input.as_object_mut().unwrap().extend(extra.as_object().cloned().unwrap_or_default());
        input.to_string().into_bytes()
    };
    let run = |name: &str, stdin: Vec<u8>| {
        let (output, _) = hook(name, &[], &stdin, state.path(), &sidecar.endpoint(), &server.endpoint());
        assert!(output.status.success(), "{name}: {output:?}");
    };
    let bash = |command: &str, stdout: &str| {
        event(
            "PostToolUse",
            json!({"tool_name": "Bash", "tool_input": {"command": command}, "tool_response": {"stdout": stdout, "stderr": ""}}),
        )
    };
    run("session-start", event("SessionStart", json!({"source": "startup"})));
    run("post-tool-use", bash("ls src", "cart.rs\n"));
    run(
        "post-tool-use",
        bash(
            "git add -A && git commit -m \"Fix the cart total\n\nFixes #77\"",
            "[feature/SHOP-42-cart 3f2a9c1] Fix the cart total\n 1 file changed, 2 insertions(+)\n",
        ),
    );
    run("post-tool-use", bash("helm upgrade --install shop ./chart -n prod", "Release \"shop\" has been upgraded."));

    let session = lore_session_id(AgentKind::ClaudeCode, &agent_session);
    let pool = &database.pool;
    let stored = lore_e2e::eventually(|| async {
        let rows: Vec<(String, String, Value, String)> = sqlx::query_as(
            "SELECT action_type, issue_id, coalesce(context->'details', 'null'), epic_id FROM actions
              WHERE session_id = $1 AND context ? 'tool' ORDER BY chain_seq",
        )
        .bind(session)
        .fetch_all(pool)
        .await
        .unwrap();
        (rows.len() == 3).then_some(rows)
    })
    .await
    .unwrap_or_else(|| panic!("three actions never arrived: {}", log(state.path())));
    let kinds: Vec<(&str, &str, &str)> =
        stored.iter().map(|(kind, issue, _, epic)| (kind.as_str(), issue.as_str(), epic.as_str())).collect();
    assert_eq!(
        kinds,
        [("tool_call", "SHOP-42", "checkout"), ("commit", "#77", "checkout"), ("deploy", "#77", "checkout")]
    );
    assert_eq!(stored[1].2["sha"], "3f2a9c1");
    assert_eq!(stored[1].2["message"], "Fix the cart total");
    assert_eq!((stored[2].2["release"].as_str(), stored[2].2["namespace"].as_str()), (Some("shop"), Some("prod")));

    // The project's report counts the deploy without anyone logging it.
    let mut actions = lore_proto::v1::action_service_client::ActionServiceClient::new(server.channel().await);
    let today = chrono::Utc::now().format("%Y-%m-%d").to_string();
    let report = actions
        .periodic_report(proto::PeriodicReportRequest {
            project: "hooks".into(),
            period: proto::ReportPeriod::Daily.into(),
            day: today,
        })
        .await
        .unwrap()
        .into_inner();
    assert!(report.markdown.contains("- **Deployments:** 1"), "{}", report.markdown);
}

/// Nothing dropped without a sidecar: with the sidecar and the server both
/// down, a session's hooks keep their writes in the outbox; once the server
/// is back, the next hook sends them first, each once and in order, then
/// its own.
#[tokio::test]
async fn with_lore_down_the_hooks_keep_their_writes_and_the_next_hook_sends_them_once_in_order() {
    let database = TestDatabase::new().await.unwrap();
    let port = free_port();
    let server_address = format!("http://127.0.0.1:{port}");
    let state = tempfile::tempdir().unwrap();
    let repo = tempfile::tempdir().unwrap();
    let cwd = repo.path().display().to_string();
    let agent_session = Uuid::now_v7().to_string();
    let event = |name: &str, extra: Value| {
        let mut input = json!({"session_id": agent_session, "cwd": cwd, "hook_event_name": name});
        input.as_object_mut().unwrap().extend(extra.as_object().cloned().unwrap_or_default());
        input.to_string().into_bytes()
    };
    let run = |name: &str, stdin: Vec<u8>| {
        let (output, took) = hook(name, &[], &stdin, state.path(), "off", &server_address);
        assert!(output.status.success() && output.stdout.is_empty(), "{name}: {output:?}");
        assert!(took < NO_HANG, "{name} took {took:?}");
    };
    let edit = json!({"tool_name": "Edit", "tool_input": {"file_path": format!("{cwd}/src/lib.rs"), "old_string": "a", "new_string": "b"}, "tool_response": {}});
    run("session-start", event("SessionStart", json!({"source": "startup"})));
    run(
        "post-tool-use",
        event(
            "PostToolUseFailure",
            json!({"tool_name": "Bash", "tool_input": {"command": "cargo test"},
                   "error": "Exit code 101\ntest parse_empty ... FAILED\nthread 'parse_empty' panicked at src/lib.rs:4:9"}),
        ),
    );
    run("post-tool-use", event("PostToolUse", edit));
    run(
        "post-tool-use",
        event(
            "PostToolUse",
            json!({"tool_name": "Bash", "tool_input": {"command": "cargo test"}, "tool_response": {"stdout": "test result: ok. 4 passed", "stderr": ""}}),
        ),
    );
    let outbox = state.path().join("outbox");
    assert!(outbox.is_dir(), "the writes wait in the outbox: {}", log(state.path()));

    let _server = ServerProcess::start(
        ServerOptions::with_database(&database.url).env("LORE_LISTEN_ADDR", &format!("127.0.0.1:{port}")),
    )
    .await
    .unwrap();
    run(
        "post-tool-use",
        event(
            "PostToolUse",
            json!({"tool_name": "Read", "tool_input": {"file_path": "README.md"}, "tool_response": {}}),
        ),
    );
    assert!(!outbox.exists(), "the outbox is emptied once sent: {}", log(state.path()));
    assert!(log(state.path()).contains("the outbox sent"), "{}", log(state.path()));

    let session = lore_session_id(AgentKind::ClaudeCode, &agent_session);
    let pool = &database.pool;
    let actions = lore_e2e::session_tool_calls(pool, session).await;
    let row = |tool: &str, kind: &str, outcome: &str| (tool.to_owned(), kind.to_owned(), outcome.to_owned());
    assert_eq!(
        actions,
        vec![
            row("Bash", "test_run", "failure"),
            row("Edit", "file_edit", "success"),
            row("Bash", "test_run", "success"),
            row("Read", "tool_call", "success"),
        ],
        "each write once, in the order the agent made them"
    );
    let fix = lore_e2e::session_fix(pool, session).await.expect("the failure's fix attempt");
    assert_eq!(fix, ("success".to_owned(), vec!["src/lib.rs".to_owned()]), "the failure and its fix arrived");
    let results: Vec<(bool,)> =
        sqlx::query_as("SELECT passed FROM qa_task_results WHERE session_id = $1 ORDER BY attempt")
            .bind(session)
            .fetch_all(pool)
            .await
            .unwrap();
    assert_eq!(results, vec![(false,), (true,)], "the task failed QA, then passed: not a first-time pass");
}

/// A server, and the state directory and checkout of one agent whose hooks
/// talk to the server alone (no sidecar).
struct ServerRig {
    _database: TestDatabase,
    server: ServerProcess,
    state: tempfile::TempDir,
    repo: tempfile::TempDir,
}

impl ServerRig {
    async fn start() -> Self {
        let database = TestDatabase::new().await.unwrap();
        let server = ServerProcess::start(ServerOptions::with_database(&database.url)).await.unwrap();
        let (state, repo) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        Self { _database: database, server, state, repo }
    }

    /// A hook's input: the event of `session` in the checkout, with `extra`.
    fn event(&self, session: &str, name: &str, extra: Value) -> Vec<u8> {
        let cwd = self.repo.path().display().to_string();
        let mut input = json!({"session_id": session, "cwd": cwd, "hook_event_name": name});
        input.as_object_mut().unwrap().extend(extra.as_object().cloned().unwrap_or_default());
        input.to_string().into_bytes()
    }

    /// Runs the hook, which must exit 0, and returns what it printed.
    fn run(&self, name: &str, stdin: Vec<u8>) -> String {
        let (output, _) = hook(name, &[], &stdin, self.state.path(), "off", &self.server.endpoint());
        assert!(output.status.success(), "{name}: {output:?}");
        String::from_utf8(output.stdout).unwrap()
    }
}

/// Right after a failure earlier sessions recovered from, the
/// post-tool-use hook says what worked after, once, though the evidence was
/// too weak to speak before the call (two sessions in ten).
#[tokio::test]
async fn right_after_a_failure_an_earlier_session_recovered_from_what_worked_is_said_once() {
    let rig = ServerRig::start().await;
    let no_rule = "Exit code 2\nmake: *** No rule to make target 'check'.  Stop.";
    let failed = |session: &str| {
        let extra = json!({"tool_name": "Bash", "tool_input": {"command": "make check"}, "error": no_rule});
        rig.event(session, "PostToolUseFailure", extra)
    };
    let passed = |session: &str, command: &str| {
        let extra = json!({"tool_name": "Bash", "tool_input": {"command": command},
                           "tool_response": {"stdout": "ok", "stderr": "", "exit_code": 0}});
        rig.event(session, "PostToolUse", extra)
    };
    for _ in 0..2 {
        let earlier = Uuid::now_v7().to_string();
        rig.run("post-tool-use", failed(&earlier));
        rig.run("post-tool-use", passed(&earlier, "make test"));
    }
    for _ in 0..8 {
        rig.run("post-tool-use", passed(&Uuid::now_v7().to_string(), "make check"));
    }
    let session = Uuid::now_v7().to_string();
    rig.run("session-start", rig.event(&session, "SessionStart", json!({"source": "startup"})));
    let call = json!({"tool_name": "Bash", "tool_input": {"command": "make check"}});
    let before = rig.run("pre-tool-use", rig.event(&session, "PreToolUse", call));
    assert_eq!(before, "", "two sessions in ten are too weak to speak before the call");
    let after = rig.run("post-tool-use", failed(&session));
    let after: Value = serde_json::from_str(&after)
        .unwrap_or_else(|error| panic!("nothing after the failure ({error}); {}", log(rig.state.path())));
    assert_eq!(after["hookSpecificOutput"]["hookEventName"], "PostToolUseFailure");
    let context = after["hookSpecificOutput"]["additionalContext"].as_str().unwrap();
    assert!(
        context.contains("failed this way in 2 of 10 earlier sessions here; what worked after: `make test`"),
        "{context}"
    );
    assert_eq!(rig.run("post-tool-use", failed(&session)), "", "said once a session");
}

/// A pre-tool-use hook never waits on Lore: with no call index it says
/// nothing and starts a refresh in the background, after which the same
/// call in another session gets its warning from the index alone.
#[tokio::test]
async fn a_missing_call_index_is_refreshed_in_the_background_and_then_warns() {
    let rig = ServerRig::start().await;
    let (event, run) = (
        |session: &str, name: &str, extra: Value| rig.event(session, name, extra),
        |name: &str, stdin: Vec<u8>| rig.run(name, stdin),
    );
    let state = &rig.state;
    // An earlier session, recorded by its post-tool-use hooks alone.
    let earlier = Uuid::now_v7().to_string();
    run(
        "post-tool-use",
        event(
            &earlier,
            "PostToolUseFailure",
            json!({"tool_name": "Bash", "tool_input": {"command": "npm test"},
                   "error": "Exit code 1\nnpm error Missing script: \"test\""}),
        ),
    );
    run(
        "post-tool-use",
        event(
            &earlier,
            "PostToolUse",
            json!({"tool_name": "Bash", "tool_input": {"command": "npx vitest run"},
                   "tool_response": {"stdout": "Tests 4 passed", "stderr": "", "exit_code": 0}}),
        ),
    );
    let call = |session: &str| {
        event(session, "PreToolUse", json!({"tool_name": "Bash", "tool_input": {"command": "npm test"}}))
    };
    assert_eq!(run("pre-tool-use", call(&Uuid::now_v7().to_string())), "", "no index yet: nothing, at once");
    let warned = lore_e2e::eventually(|| async {
        let answer = run("pre-tool-use", call(&Uuid::now_v7().to_string()));
        (!answer.is_empty()).then_some(answer)
    })
    .await;
    let log = log(state.path());
    let answer: Value =
        serde_json::from_str(&warned.unwrap_or_else(|| panic!("never warned; hook log: {log}"))).unwrap();
    let context = answer["hookSpecificOutput"]["additionalContext"].as_str().unwrap();
    assert!(context.contains("`npm test` failed") && context.contains("Missing script"), "{context}");
    assert!(context.contains("what worked after: `npx vitest <arg>` (1 of 1)"), "{context}");
}

/// A guard set by a person with `lore qa guards` refuses the call on the
/// next refresh, every time, with its reason and alternative; a call it
/// does not hold still gets its warning. What was given reaches the
/// injection ledger through the next hook that talks to Lore, once.
#[tokio::test]
async fn a_guard_a_person_set_refuses_the_call_and_the_ledger_keeps_what_was_given() {
    let rig = ServerRig::start().await;
    let (event, run) = (
        |session: &str, name: &str, extra: Value| rig.event(session, name, extra),
        |name: &str, stdin: Vec<u8>| rig.run(name, stdin),
    );
    let (server, state) = (&rig.server, &rig.state);
    let failed = |session: &str, command: &str, error: &str| {
        event(
            session,
            "PostToolUseFailure",
            json!({"tool_name": "Bash", "tool_input": {"command": command}, "error": error}),
        )
    };
    let earlier = Uuid::now_v7().to_string();
    run("post-tool-use", failed(&earlier, "npm test", "Exit code 1\nnpm error Missing script: \"test\""));
    run("post-tool-use", failed(&earlier, "pytest tests", "Exit code 4\nERROR: file or directory not found: tests"));

    for args in [
        &[
            "qa",
            "guards",
            "add",
            "--project",
            "hooks",
            "pytest tests/unit",
            "--reason",
            "This repository has no pytest suite.",
            "--instead",
            "npx vitest run",
        ][..],
        &["qa", "guards", "on", "--project", "hooks"][..],
    ] {
        let (ok, stdout, stderr) = lore_e2e::lore_cli(server, None, args).await;
        assert!(ok, "lore {args:?}: {stdout}{stderr}");
    }
    let (ok, listed, _) = lore_e2e::lore_cli(server, None, &["qa", "guards", "list", "--project", "hooks"]).await;
    assert!(
        ok && listed.contains("on: calls of these shapes are refused") && listed.contains("pytest <arg>"),
        "{listed}"
    );

    let session = Uuid::now_v7().to_string();
    run("session-start", event(&session, "SessionStart", json!({"source": "startup"})));
    let call =
        |command: &str| event(&session, "PreToolUse", json!({"tool_name": "Bash", "tool_input": {"command": command}}));
    for _ in 0..2 {
        let answer: Value = serde_json::from_str(&run("pre-tool-use", call("pytest tests")))
            .unwrap_or_else(|error| panic!("no refusal ({error}); hook log: {}", log(state.path())));
        let output = &answer["hookSpecificOutput"];
        assert_eq!(output["permissionDecision"], "deny", "{answer}");
        let reason = output["permissionDecisionReason"].as_str().unwrap();
        assert!(reason.contains("no pytest suite") && reason.contains("Run instead: `npx vitest run`"), "{reason}");
    }
    let warned: Value = serde_json::from_str(&run("pre-tool-use", call("npm test"))).unwrap();
    assert!(warned["hookSpecificOutput"]["additionalContext"].as_str().unwrap().contains("Missing script"), "{warned}");
    assert_eq!(run("pre-tool-use", call("ls -la")), "", "a call that never failed: nothing");

    // The next hook that talks to Lore reports the three; a later one sends nothing again.
    run("post-tool-use", failed(&session, "npm test", "Exit code 1\nnpm error Missing script: \"test\""));
    run("stop", event(&session, "Stop", json!({})));
    let session_id = lore_session_id(AgentKind::ClaudeCode, &session).to_string();
    let request = proto::ListInjectionsRequest { project: "hooks".into(), session_id, ..Default::default() };
    let listed = lore_proto::client::agent(server.channel().await).list_injections(request).await.unwrap().into_inner();
    let given: Vec<(i32, String)> = listed
        .injections
        .iter()
        .filter(|injection| injection.surface == proto::InjectionSurface::Call as i32)
        .map(|injection| (injection.items[0].kind, injection.items[0].label.clone()))
        .collect();
    let (guard, warning) = (proto::InjectedKind::Guard as i32, proto::InjectedKind::CallWarning as i32);
    assert_eq!(given.iter().filter(|(kind, _)| *kind == guard).count(), 2, "{given:?}; log: {}", log(state.path()));
    assert_eq!(given.iter().filter(|(kind, _)| *kind == warning).count(), 1, "{given:?}");
    assert!(given.iter().all(|(_, shape)| shape == "pytest <arg>" || shape == "npm test"), "{given:?}");
}

/// What belongs to one call moves to that call: once the call index warns
/// of a failure at its command, a briefing (here a prompt's) leaves out the
/// QA warning of that failure and the ledger says so, and the briefing is
/// shorter by it.
#[tokio::test]
async fn a_briefing_leaves_to_the_call_the_warning_the_call_index_gives() {
    let rig = ServerRig::start().await;
    let failing = "npm error Missing script: \"test\"";
    for _ in 0..2 {
        let earlier = Uuid::now_v7().to_string();
        let extra = json!({"tool_name": "Bash", "tool_input": {"command": "npm test"}, "error": format!("Exit code 1\n{failing}")});
        rig.run("post-tool-use", rig.event(&earlier, "PostToolUseFailure", extra));
        rig.run("stop", rig.event(&earlier, "Stop", json!({})));
    }
    // The agent's pre-tool-use hook runs on this machine.
    let call = json!({"tool_name": "Bash", "tool_input": {"command": "ls"}});
    rig.run("pre-tool-use", rig.event(&Uuid::now_v7().to_string(), "PreToolUse", call));
    let prompt = |session: &str| {
        let prompt = json!({"prompt": "The npm test script is missing: add it and make npm test pass."});
        rig.run("user-prompt-submit", rig.event(session, "UserPromptSubmit", prompt));
        session.to_owned()
    };
    // The first prompt finds no call index yet (it refreshes one): the
    // warning stays in its briefing.
    let (first, second) = (prompt(&Uuid::now_v7().to_string()), prompt(&Uuid::now_v7().to_string()));
    let mut agent = lore_proto::client::agent(rig.server.channel().await);
    let mut briefing_of = async |session: &str| {
        let session_id = lore_session_id(AgentKind::ClaudeCode, session).to_string();
        let request = proto::ListInjectionsRequest { project: "hooks".into(), session_id, ..Default::default() };
        let listed = agent.list_injections(request).await.unwrap().into_inner();
        listed.injections.into_iter().find(|injection| injection.surface == proto::InjectionSurface::Prompt as i32)
    };
    let log = log(rig.state.path());
    let first = briefing_of(&first).await.unwrap_or_else(|| panic!("no briefing; {log}"));
    let second = briefing_of(&second).await.unwrap_or_else(|| panic!("no briefing; {log}"));
    let warning = |briefing: &proto::Injection| {
        briefing.items.iter().find(|item| item.kind == proto::InjectedKind::Warning as i32).map(|item| item.withheld)
    };
    assert_eq!(warning(&first), Some(proto::Withheld::Unspecified as i32), "shown the first time: {first:?}; {log}");
    assert_eq!(warning(&second), Some(proto::Withheld::AtCall as i32), "left to the call: {second:?}; {log}");
    assert!(second.chars < first.chars, "{} < {}", second.chars, first.chars);

    // A person writes the pattern's fix: the warning at the call says it.
    let pattern_id =
        first.items.iter().find(|item| item.kind == proto::InjectedKind::Warning as i32).unwrap().item_id.clone();
    let fix = "Add a \"test\" script to package.json that runs vitest.";
    let edit = proto::UpdatePatternRequest { pattern_id, recommended_fix: fix.into(), ..Default::default() };
    lore_proto::client::qa(rig.server.channel().await).update_pattern(edit).await.unwrap();
    let third = prompt(&Uuid::now_v7().to_string());
    let call = json!({"tool_name": "Bash", "tool_input": {"command": "npm test"}});
    let warned = rig.run("pre-tool-use", rig.event(&third, "PreToolUse", call));
    assert!(warned.contains(&format!("how to avoid it (reviewed fix): {}", fix.replace('"', "\\\""))), "{warned}");
    let warned: Value = serde_json::from_str(&warned).unwrap();
    assert_eq!(warned["hookSpecificOutput"]["permissionDecision"], "deny", "2 of 2 sessions: held once");

    // A person sets the project's mode with the CLI; the next session's
    // index follows it.
    let server = &rig.server;
    let mode = async |mode: &str| {
        let (ok, stdout, stderr) =
            lore_e2e::lore_cli(server, None, &["qa", "guards", "call-warnings", "--project", "hooks", mode]).await;
        assert!(ok, "{stdout}{stderr}");
        stdout
    };
    let listed = mode("context").await;
    assert!(listed.contains("warnings at the call: beside the result, never refused"), "{listed}");
    let fourth = prompt(&Uuid::now_v7().to_string());
    let call = json!({"tool_name": "Bash", "tool_input": {"command": "npm test"}});
    let beside: Value = serde_json::from_str(&rig.run("pre-tool-use", rig.event(&fourth, "PreToolUse", call.clone())))
        .unwrap_or_else(|error| panic!("no warning ({error}); {log}"));
    assert!(beside["hookSpecificOutput"]["additionalContext"].is_string(), "context, never held: {beside}");
    mode("off").await;
    let fifth = prompt(&Uuid::now_v7().to_string());
    assert_eq!(rig.run("pre-tool-use", rig.event(&fifth, "PreToolUse", call)), "", "off: nothing at the call");
}
