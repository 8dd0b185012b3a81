//! A Python agent's whole day (tests/python/agent_day.py), through a client
//! grpcio-tools generates from proto/ here, against the real server and a
//! real sidecar. This test only drives it: it runs each phase as its own
//! process, stops and restarts the server when the agent asks, and checks
//! the database afterwards.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use lore_e2e::{ServerOptions, ServerProcess, TestDatabase, default_cache_dir, free_port};
use lore_server::auth::Role;
use lore_store::tokens::NewToken;
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Generates the Python client from proto/ into `out`
/// (tests/python/generate.py).
async fn generate_client(out: &Path) {
    let output = tokio::process::Command::new(lore_e2e::venv_python())
        .arg(repository().join("tests/python/generate.py"))
        .arg(out)
        .output()
        .await
        .unwrap();
    assert!(output.status.success(), "grpcio-tools failed: {}", String::from_utf8_lossy(&output.stderr));
}

struct Agent {
    client_dir: PathBuf,
    server: String,
    sidecar: String,
    token: String,
}

impl Agent {
    fn command(&self, phase: &str, state: &Path) -> tokio::process::Command {
        let mut command = tokio::process::Command::new(lore_e2e::venv_python());
        command
            .arg(repository().join("tests/python/agent_day.py"))
            .arg(phase)
            .arg(state)
            .env("PYTHONPATH", &self.client_dir)
            .env("LORE_SERVER", &self.server)
            .env("LORE_SIDECAR", &self.sidecar)
            .env("LORE_TOKEN", &self.token)
            .kill_on_drop(true);
        command
    }

    async fn run(&self, phase: &str, state: &Path) -> String {
        let output = self.command(phase, state).output().await.unwrap();
        let text = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
        assert!(output.status.success(), "{phase} failed:\n{text}");
        assert!(text.contains(&format!("ok: {phase}")), "{text}");
        text
    }
}

#[tokio::test]
async fn a_python_agent_lives_its_day_through_the_sidecar_and_a_server_outage() {
    let work = tempfile::tempdir_in(default_cache_dir()).unwrap();
    let client_dir = work.path().join("client");
    std::fs::create_dir_all(&client_dir).unwrap();
    generate_client(&client_dir).await;

    let database = TestDatabase::new().await.unwrap();
    let token =
        |name: &str, role| NewToken { name: name.into(), role, projects: Some(vec!["lore".into()]), expires_at: None };
    let (_, agent_token) =
        lore_server::auth::create_token(&database.pool, &token("py-agent", Role::Agent)).await.unwrap();
    let (_, sidecar_token) =
        lore_server::auth::create_token(&database.pool, &token("py-sidecar", Role::Sidecar)).await.unwrap();
    let address = format!("127.0.0.1:{}", free_port());
    let server_options = || ServerOptions::with_database(&database.url).with_auth().env("LORE_LISTEN_ADDR", &address);
    let mut server = ServerProcess::start(server_options()).await.unwrap();
    let spool = work.path().join("spool");
    let sidecar =
        ServerProcess::start_sidecar(&format!("http://{address}"), &spool, &["--token", &sidecar_token]).await.unwrap();
    let agent = Agent { client_dir, server: address.clone(), sidecar: sidecar.addr().to_owned(), token: agent_token };
    let state = work.path().join("state.json");

    agent.run("yesterday", &state).await;

    let mut morning = agent.command("morning", &state).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    let mut answers = morning.stdin.take().unwrap();
    let mut lines = BufReader::new(morning.stdout.take().unwrap()).lines();
    let mut said = Vec::new();
    while let Some(line) = lines.next_line().await.unwrap() {
        match line.as_str() {
            "need: stop-server" => server.stop().await,
            "need: start-server" => server = ServerProcess::start(server_options()).await.unwrap(),
            _ => {}
        }
        if line.starts_with("need: ") {
            answers.write_all(b"done\n").await.unwrap();
        }
        said.push(line);
    }
    let status = morning.wait().await.unwrap();
    assert!(status.success(), "morning failed:\n{}", said.join("\n"));
    assert!(said.iter().any(|line| line == "ok: morning"), "{said:?}");

    let afternoon = agent.run("afternoon", &state).await;
    assert!(afternoon.contains("exported"), "{afternoon}");

    // Nothing lost, nothing doubled: the ten actions the agent logged, each
    // once, plus its two tool calls.
    let day: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&state).unwrap()).unwrap();
    let stored: Vec<(String, String)> = sqlx::query_as(
        "SELECT action_id::text, action_type FROM actions WHERE session_id = $1::uuid ORDER BY chain_seq",
    )
    .bind(day["session_id"].as_str().unwrap())
    .fetch_all(&database.pool)
    .await
    .unwrap();
    let logged: Vec<&str> = day["action_ids"].as_array().unwrap().iter().map(|id| id.as_str().unwrap()).collect();
    let shells: Vec<&str> = stored.iter().filter(|(_, kind)| kind == "shell").map(|(id, _)| id.as_str()).collect();
    assert_eq!(shells, logged, "every action once, in the order logged");
    assert_eq!(stored.iter().filter(|(_, kind)| kind == "tool_call").count(), 2);
}
