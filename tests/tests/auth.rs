//! Tokens made with `lore-server token`, used by a real sidecar: it ships
//! with a sidecar token, forwards an agent's own token for reads, and when
//! its token is revoked it keeps every acknowledged action in its spool
//! until it gets a new one; then they arrive once.

use std::process::Stdio;
use std::time::Duration;

use lore_e2e::{ServerOptions, ServerProcess, TestDatabase, default_cache_dir, server_command};
use lore_proto::v1 as proto;
use lore_proto::v1::action_service_client::ActionServiceClient;
use tonic::Code;

/// Runs `lore-server token <args>` on `database`; returns stdout, or panics
/// with stderr.
async fn token_command(database: &TestDatabase, args: &[&str]) -> String {
    let mut options = ServerOptions::with_database(&database.url);
    options.args = std::iter::once("token").chain(args.iter().copied()).map(str::to_owned).collect();
    let output = server_command(&options).stdout(Stdio::piped()).output().await.expect("lore-server runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "lore-server token {args:?}: {stderr}");
    String::from_utf8(output.stdout).unwrap()
}

async fn stored(database: &TestDatabase, project: &str) -> i64 {
    sqlx::query_scalar("SELECT count(DISTINCT action_id) FROM actions WHERE project = $1")
        .bind(project)
        .fetch_one(&database.pool)
        .await
        .unwrap()
}

async fn wait_for_stored(database: &TestDatabase, project: &str, expected: i64) -> i64 {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        let count = stored(database, project).await;
        if count >= expected || tokio::time::Instant::now() > deadline {
            return count;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn action(session: &proto::Session, index: usize) -> proto::LogActionRequest {
    let action = proto::Action {
        project: session.project.clone(),
        session_id: session.session_id.clone(),
        action_type: "tool_call".into(),
        outcome: proto::Outcome::Success as i32,
        context: Some(lore_proto::json::to_struct(&serde_json::json!({ "step": index }))),
        ..Default::default()
    };
    proto::LogActionRequest { action: Some(action) }
}

#[tokio::test]
async fn a_sidecar_ships_with_its_token_and_holds_its_spool_through_a_revocation() {
    let database = TestDatabase::new().await.unwrap();
    // The first admin token of a deployment comes from its config (a Secret).
    let bootstrap = "lore_bootstrap-admin-token-kept-in-a-kubernetes-secret";
    let options = ServerOptions::with_database(&database.url).with_auth();
    let server = ServerProcess::start(options.env("LORE_AUTH__BOOTSTRAP_ADMIN_TOKEN", bootstrap)).await.unwrap();
    let bearer = lore_proto::auth::Bearer::new(Some(bootstrap)).unwrap();
    let mut admin = ActionServiceClient::with_interceptor(server.channel().await, bearer);
    admin.get_retention_status(proto::GetRetentionStatusRequest::default()).await.unwrap();
    let ship = token_command(&database, &["create", "--name", "vm-1", "--role", "sidecar", "--project", "fleet"]).await;
    let ship = ship.trim().to_owned();
    let reader =
        token_command(&database, &["create", "--name", "dash", "--role", "reader", "--project", "fleet"]).await;
    let reader = reader.trim().to_owned();
    assert!(ship.starts_with("lore_") && reader.starts_with("lore_") && ship != reader);
    let listed = token_command(&database, &["list"]).await;
    assert!(listed.contains("vm-1") && listed.contains("sidecar") && listed.contains("dash"), "{listed}");
    assert!(listed.contains("bootstrap-admin"), "{listed}");
    assert!(!listed.contains(&ship) && !listed.contains(&reader), "secrets are never listed: {listed}");

    let spool = tempfile::tempdir_in(default_cache_dir()).unwrap();
    let mut sidecar =
        ServerProcess::start_sidecar(&server.endpoint(), spool.path(), &["--token", &ship]).await.unwrap();
    let mut agent = ActionServiceClient::new(sidecar.channel().await);
    let session = lore_e2e::start_session(&mut agent, "fleet", "agent-1").await;
    for index in 0..5 {
        agent.log_action(action(&session, index)).await.unwrap();
    }
    assert_eq!(wait_for_stored(&database, "fleet", 5).await, 5);

    // Reads through the sidecar carry the agent's own token; without one
    // they carry the sidecar's, which may only ship.
    let search = || proto::SearchActionsRequest { project: "fleet".into(), ..Default::default() };
    let mut with_token = tonic::Request::new(search());
    with_token.metadata_mut().insert("authorization", format!("Bearer {reader}").parse().unwrap());
    assert_eq!(agent.search_actions(with_token).await.unwrap().into_inner().actions.len(), 5);
    let refused = agent.search_actions(search()).await.unwrap_err();
    assert_eq!(refused.code(), Code::PermissionDenied, "{refused:?}");

    // Revoked: the open Ingest stream ends at once, nothing more arrives,
    // and the agent's actions are still acknowledged by the spool.
    token_command(&database, &["revoke", "vm-1"]).await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while !sidecar.log().contains("revoked token") && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(sidecar.log().contains("revoked token"), "the sidecar hears why: {}", sidecar.log());
    for index in 5..25 {
        agent.log_action(action(&session, index)).await.unwrap();
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(stored(&database, "fleet").await, 5, "nothing ships with a revoked token");

    // A new token: everything held arrives, once.
    sidecar.stop().await;
    let renewed =
        token_command(&database, &["create", "--name", "vm-1", "--role", "sidecar", "--project", "fleet"]).await;
    let sidecar =
        ServerProcess::start_sidecar(&server.endpoint(), spool.path(), &["--token", renewed.trim()]).await.unwrap();
    assert_eq!(wait_for_stored(&database, "fleet", 25).await, 25);
    let total: i64 = sqlx::query_scalar("SELECT count(*) FROM actions WHERE project = 'fleet'")
        .fetch_one(&database.pool)
        .await
        .unwrap();
    assert_eq!(total, 25, "no action stored twice");
    drop(sidecar);
}
