//! lore-sidecar between an agent and the server, with the server going away.

use std::time::Duration;

use lore_e2e::{ServerOptions, ServerProcess, TestDatabase, default_cache_dir, free_port};
use lore_proto::v1 as proto;
use lore_proto::v1::action_service_client::ActionServiceClient;
use nix::sys::signal::Signal;

fn action(session: &proto::Session, index: usize) -> proto::Action {
    proto::Action {
        project: session.project.clone(),
        session_id: session.session_id.clone(),
        action_type: "tool_call".into(),
        outcome: proto::Outcome::Success as i32,
        context: Some(lore_proto::json::to_struct(
            &serde_json::json!({"step": index, "token": "sk_live_ReTllpYQYfIZu2Jnf2lAPFjD"}),
        )),
        ..Default::default()
    }
}

async fn stored_in_order(database: &TestDatabase, session_id: &str) -> Vec<String> {
    sqlx::query_scalar("SELECT action_id::text FROM actions WHERE session_id = $1::uuid ORDER BY chain_seq")
        .bind(session_id)
        .fetch_all(&database.pool)
        .await
        .unwrap()
}

#[tokio::test]
async fn every_action_acked_during_a_server_outage_arrives_once_and_in_order() {
    let database = TestDatabase::new().await.unwrap();
    let port = free_port();
    let server_options =
        || ServerOptions::with_database(&database.url).env("LORE_LISTEN_ADDR", &format!("127.0.0.1:{port}"));
    let mut server = ServerProcess::start(server_options()).await.unwrap();
    let spool = tempfile::tempdir_in(default_cache_dir()).unwrap();
    let sidecar =
        ServerProcess::start_sidecar(&format!("http://127.0.0.1:{port}"), spool.path(), &["--batch-size", "50"])
            .await
            .unwrap();
    let mut agent = ActionServiceClient::new(sidecar.channel().await);
    let session = lore_e2e::start_session(&mut agent, "outage", "agent-1").await;

    let mut acked = Vec::new();
    for index in 0..900 {
        if index == 300 {
            server.signal(Signal::SIGKILL);
            server.wait(Duration::from_secs(10)).await.unwrap();
        }
        if index == 600 {
            server = ServerProcess::start(server_options()).await.unwrap();
        }
        let response =
            agent.log_action(proto::LogActionRequest { action: Some(action(&session, index)) }).await.unwrap();
        let ack = response.into_inner().ack.unwrap();
        acked.push(ack.id);
    }

    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    let stored = loop {
        let stored = stored_in_order(&database, &session.session_id).await;
        if stored.len() >= acked.len() || tokio::time::Instant::now() > deadline {
            break stored;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    if stored.len() != acked.len() {
        let missing: Vec<(usize, &String)> = acked.iter().enumerate().filter(|(_, id)| !stored.contains(id)).collect();
        let anywhere: i64 = sqlx::query_scalar("SELECT count(*) FROM actions WHERE action_id::text = ANY($1)")
            .bind(missing.iter().map(|(_, id)| id.to_string()).collect::<Vec<_>>())
            .fetch_one(&database.pool)
            .await
            .unwrap();
        let rejects = std::fs::read_to_string(spool.path().join("rejects.jsonl")).unwrap_or_default();
        let log = sidecar.log();
        let tail: Vec<&str> = log.lines().rev().take(40).collect();
        panic!(
            "{} of {} acknowledged actions arrived; missing {missing:?} (in the table at all: {anywhere}); rejects: {rejects}; sidecar log tail: {tail:#?}",
            stored.len(),
            acked.len()
        );
    }
    assert_eq!(stored, acked, "in the order the agent logged them");
    let secrets: i64 = sqlx::query_scalar("SELECT count(*) FROM actions WHERE context::text LIKE '%sk_live_%'")
        .fetch_one(&database.pool)
        .await
        .unwrap();
    assert_eq!(secrets, 0, "redacted before shipping");
    let mut direct = ActionServiceClient::new(server.channel().await);
    let chain = direct
        .verify_chain(proto::VerifyChainRequest { session_id: session.session_id.clone() })
        .await
        .unwrap()
        .into_inner();
    assert!(chain.intact && chain.checked == 900, "{chain:?}");
}
