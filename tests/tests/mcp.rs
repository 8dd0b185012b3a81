//! Lore's MCP server through a client written by others: the official MCP
//! Python SDK (tests/python/mcp_client.py) lists the tools and calls each
//! one over stdio (`lore mcp`, straight to the server) and over
//! streamable HTTP (the sidecar's /mcp); bad arguments are tool errors
//! naming the field. With the server stopped, writes still succeed
//! through the sidecar and arrive once it is back; reads say it is away.

use std::path::Path;
use std::time::Duration;

use lore_e2e::{ServerOptions, ServerProcess, TestDatabase, default_cache_dir, free_port};
use lore_proto::auth::Bearer;
use lore_proto::v1 as proto;
use lore_server::auth::Role;
use lore_store::tokens::NewToken;
use serde_json::Value;
use tonic::service::interceptor::InterceptedService;
use uuid::Uuid;

fn client_script() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("python/mcp_client.py")
}

/// Runs one phase of the Python client and returns what it recorded.
async fn python(args: &[&str], env: &[(&str, &str)]) -> Value {
    let mut command = tokio::process::Command::new(lore_e2e::venv_python());
    for (key, _) in std::env::vars() {
        if key.starts_with("LORE_") || key.starts_with("CLAUDE") {
            command.env_remove(key);
        }
    }
    let output = command.arg(client_script()).args(args).envs(env.iter().copied()).kill_on_drop(true).output();
    let output = tokio::time::timeout(Duration::from_secs(120), output).await.expect("the client finishes").unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{args:?} failed:\n{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_str(stdout.lines().last().unwrap_or_default()).unwrap_or_else(|error| panic!("{error}: {stdout}"))
}

/// What the client's outage run writes, by the id it prints: how to count
/// each in the database.
const OUTAGE_WRITES: [(&str, &str); 5] = [
    ("SELECT count(*) FROM actions WHERE action_id = $1", "action_id"),
    ("SELECT count(*) FROM qa_failures WHERE failure_id = $1", "failure_id"),
    ("SELECT count(*) FROM qa_fix_attempts WHERE attempt_id = $1", "attempt_id"),
    ("SELECT count(*) FROM knowledge_applications WHERE application_id = $1", "application_id"),
    ("SELECT count(*) FROM knowledge_drafts WHERE draft_id = $1", "draft_id"),
];

#[tokio::test]
async fn the_official_python_sdk_calls_every_tool_over_stdio_and_http_and_writes_survive_an_outage() {
    let database = TestDatabase::new().await.unwrap();
    let port = free_port();
    let options = || {
        ServerOptions::with_database(&database.url).with_auth().env("LORE_LISTEN_ADDR", &format!("127.0.0.1:{port}"))
    };
    let mut server = ServerProcess::start(options()).await.unwrap();
    let token =
        |name: &str, role| NewToken { name: name.into(), role, projects: Some(vec!["calc".into()]), expires_at: None };
    let (_, agent_token) = lore_server::auth::create_token(&database.pool, &token("agent", Role::Agent)).await.unwrap();
    // A person's lesson: an agent's would wait for review before any
    // briefing said it.
    let (_, admin_token) = lore_server::auth::create_token(&database.pool, &token("ops", Role::Admin)).await.unwrap();
    let authed = InterceptedService::new(server.channel().await, Bearer::new(Some(&admin_token)).unwrap());
    let lesson = proto::Entry {
        key: "PAT-DIV".into(),
        project: "calc".into(),
        kind: proto::EntryKind::IssuePattern as i32,
        title: "ZeroDivisionError in calc.divide when the divisor is zero".into(),
        details: Some(proto::entry::Details::IssuePattern(proto::IssuePatternDetails {
            solutions: vec![proto::Solution { description: "Raise ValueError first.".into(), ..Default::default() }],
            ..Default::default()
        })),
        ..Default::default()
    };
    lore_proto::v1::knowledge_service_client::KnowledgeServiceClient::new(authed)
        .upsert_entry(proto::UpsertEntryRequest { entry: Some(lesson) })
        .await
        .unwrap();

    let spool = tempfile::tempdir_in(default_cache_dir()).unwrap();
    let sidecar = ServerProcess::start_sidecar(
        &server.endpoint(),
        spool.path(),
        &["--token", &agent_token, "--mcp-listen", "127.0.0.1:0"],
    )
    .await
    .unwrap();
    let mcp_addr = sidecar.logged_addr("lore-sidecar serving MCP at /mcp").expect("the sidecar serves MCP");
    let lore = lore_e2e::workspace_binary("lore").display().to_string();
    let state = tempfile::tempdir().unwrap();
    let state_dir = state.path().display().to_string();
    let server_url = server.endpoint();
    let sidecar_url = sidecar.endpoint();

    // stdio, straight to the server with the agent's own token.
    let direct = [
        ("LORE_SIDECAR", "off"),
        ("LORE_SERVER", server_url.as_str()),
        ("LORE_TOKEN", agent_token.as_str()),
        ("LORE_STATE_DIR", state_dir.as_str()),
    ];
    let over_stdio = python(&["full", "stdio", &lore], &direct).await;
    // streamable HTTP, through the sidecar (which holds the token).
    let url = format!("http://{mcp_addr}/mcp?project=calc");
    let over_http = python(&["full", "http", &url], &[]).await;

    let wait_for = |sql: &'static str, id: Value| {
        let pool = database.pool.clone();
        let id = Uuid::parse_str(id.as_str().unwrap()).unwrap();
        async move {
            lore_e2e::eventually(|| async {
                let found: i64 = sqlx::query_scalar(sql).bind(id).fetch_one(&pool).await.unwrap();
                (found > 0).then_some(found)
            })
            .await
            .unwrap_or(0)
        }
    };
    // Writes through the sidecar are acknowledged once spooled and reach
    // the server a moment later, so both transports are waited for.
    for recorded in [&over_stdio, &over_http] {
        for (sql, key) in [
            ("SELECT count(*) FROM qa_failures WHERE failure_id = $1", "failure_id"),
            ("SELECT count(*) FROM knowledge_drafts WHERE draft_id = $1", "draft_id"),
        ] {
            assert_eq!(wait_for(sql, recorded[key].clone()).await, 1, "{key} recorded once");
        }
    }
    assert_eq!(
        wait_for("SELECT count(*) FROM qa_fix_attempts WHERE attempt_id = $1", over_http["attempt_id"].clone()).await,
        1
    );
    assert_eq!(
        wait_for("SELECT count(*) FROM qa_failure_resolutions WHERE failure_id = $1", over_stdio["failure_id"].clone())
            .await,
        1,
        "record_fix resolved the failure"
    );
    // Every call, bad ones included, is a tool_call action of the stdio
    // session, redacted; the server ended the session it started itself.
    let action = Uuid::parse_str(over_stdio["action_id"].as_str().unwrap()).unwrap();
    let session: Uuid = sqlx::query_scalar("SELECT session_id FROM actions WHERE action_id = $1")
        .bind(action)
        .fetch_one(&database.pool)
        .await
        .unwrap();
    let (calls, failed): (i64, i64) = sqlx::query_as(
        "SELECT count(*), count(*) FILTER (WHERE outcome = 'failure') FROM actions
          WHERE session_id = $1 AND action_type = 'tool_call' AND category = 'mcp'",
    )
    .bind(session)
    .fetch_one(&database.pool)
    .await
    .unwrap();
    assert_eq!(
        (calls, failed),
        (over_stdio["calls"].as_i64().unwrap(), 13),
        "each call recorded once, the refused as failures"
    );
    let leaked: i64 = sqlx::query_scalar("SELECT count(*) FROM actions WHERE context::text LIKE '%hunter2%'")
        .fetch_one(&database.pool)
        .await
        .unwrap();
    assert_eq!(leaked, 0);
    let (status, summary) = lore_e2e::session_state(&database.pool, session).await.expect("the session is stored");
    assert_eq!((status.as_str(), summary.as_str()), ("ended", "the MCP client disconnected"));

    // The server goes away: writes still succeed through the sidecar.
    server.signal(nix::sys::signal::Signal::SIGKILL);
    server.wait(Duration::from_secs(10)).await.unwrap();
    let through_sidecar = [
        ("LORE_SIDECAR", sidecar_url.as_str()),
        ("LORE_SERVER", server_url.as_str()),
        ("LORE_STATE_DIR", state_dir.as_str()),
    ];
    let entry_id = over_stdio["entry_id"].as_str().unwrap().to_owned();
    let offline = python(&["outage", "stdio", &lore, &entry_id], &through_sidecar).await;
    let _server = ServerProcess::start(options()).await.unwrap();
    for (sql, key) in OUTAGE_WRITES {
        assert_eq!(wait_for(sql, offline[key].clone()).await, 1, "{key} shipped once after the outage");
    }
    let rejects = std::fs::read_to_string(spool.path().join("rejects.jsonl")).unwrap_or_default();
    assert!(rejects.is_empty(), "{rejects}");

    // No sidecar and no server: the writes wait in this machine's outbox,
    // and the next `lore` command sends them, each once.
    drop(sidecar);
    drop(_server);
    let outbox_state = tempfile::tempdir().unwrap();
    let outbox_dir = outbox_state.path().display().to_string();
    let nothing_answers = [
        ("LORE_SIDECAR", sidecar_url.as_str()),
        ("LORE_SERVER", server_url.as_str()),
        ("LORE_STATE_DIR", outbox_dir.as_str()),
    ];
    let kept = python(&["outage", "stdio", &lore, &entry_id], &nothing_answers).await;
    assert!(outbox_state.path().join("outbox").is_dir(), "the writes wait in the outbox");
    let _server = ServerProcess::start(options()).await.unwrap();
    let sent = tokio::process::Command::new(&lore)
        .args(["--server", &server_url, "search", "divide", "--project", "calc"])
        .env("LORE_STATE_DIR", outbox_state.path())
        .env("LORE_TOKEN", &agent_token)
        .output()
        .await
        .unwrap();
    let said = String::from_utf8_lossy(&sent.stderr).into_owned();
    assert!(sent.status.success(), "{said}");
    assert!(said.contains("writes kept on this machine"), "the command says it sent the outbox: {said}");
    for (sql, key) in OUTAGE_WRITES {
        assert_eq!(wait_for(sql, kept[key].clone()).await, 1, "{key} sent once from the outbox");
    }
    let refused = std::fs::read_to_string(outbox_state.path().join("outbox-rejects.jsonl")).unwrap_or_default();
    assert!(refused.is_empty(), "{refused}");

    // Another outage; with Lore back, the next MCP write sends what waits
    // first: a fix of the failure kept in the outbox finds it and resolves it.
    drop(_server);
    let kept = python(&["outage", "stdio", &lore, &entry_id], &nothing_answers).await;
    let _server = ServerProcess::start(options()).await.unwrap();
    let back = [nothing_answers.as_slice(), &[("LORE_TOKEN", agent_token.as_str())]].concat();
    let fixed = python(&["back", "stdio", &lore, kept["failure_id"].as_str().unwrap()], &back).await;
    assert!(!outbox_state.path().join("outbox").exists(), "the MCP write emptied the outbox first");
    for (sql, key) in OUTAGE_WRITES {
        assert_eq!(wait_for(sql, kept[key].clone()).await, 1, "{key} sent once ahead of the MCP write");
    }
    assert_eq!(
        wait_for("SELECT count(*) FROM qa_fix_attempts WHERE attempt_id = $1", fixed["attempt_id"].clone()).await,
        1
    );
}

/// The status line of a raw HTTP POST of an MCP `initialize` to `address`.
async fn post_initialize(address: &str, authorization: Option<&str>) -> String {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;
    let header = authorization.map(|value| format!("Authorization: {value}\r\n")).unwrap_or_default();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n{header}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = vec![0; 512];
    let read = stream.read(&mut answer).await.unwrap();
    String::from_utf8_lossy(&answer[..read]).lines().next().unwrap_or_default().to_owned()
}

#[tokio::test]
async fn mcp_over_http_off_loopback_requires_its_bearer_token() {
    let database = TestDatabase::new().await.unwrap();
    let server = ServerProcess::start(ServerOptions::with_database(&database.url)).await.unwrap();
    let spool = tempfile::tempdir_in(default_cache_dir()).unwrap();

    // Reachable from other machines without a token: refused at start.
    let mut refused = tokio::process::Command::new(lore_e2e::workspace_binary("lore-sidecar"));
    refused.args([
        "--listen",
        "127.0.0.1:0",
        "--server",
        &server.endpoint(),
        "--mcp-listen",
        "0.0.0.0:0",
        "--spool-dir",
    ]);
    let output = refused.arg(spool.path().join("refused")).output().await.unwrap();
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("give --mcp-token"), "{output:?}");

    let token = "mcp-token-of-this-machine-0123456789";
    let sidecar = ServerProcess::start_sidecar(
        &server.endpoint(),
        spool.path(),
        &["--mcp-listen", "0.0.0.0:0", "--mcp-token", token, "--mcp-project", "calc"],
    )
    .await
    .unwrap();
    let bound = sidecar.logged_addr("lore-sidecar serving MCP at /mcp").expect("the MCP endpoint");
    let address = bound.replace("0.0.0.0", "127.0.0.1");
    assert!(post_initialize(&address, None).await.contains(" 401 "), "no token");
    assert!(post_initialize(&address, Some("Bearer not-the-token")).await.contains(" 401 "), "a wrong token");
    assert!(post_initialize(&address, Some(&format!("Bearer {token}"))).await.contains(" 200 "), "the token");
}
