//! The limits every call meets: a rate per token, calls in flight, a
//! deadline per call; each refused with a status a client retries on, and
//! none of them losing or half-storing data.

use lore_proto::auth::Bearer;
use lore_proto::v1 as proto;
use lore_proto::v1::action_service_client::ActionServiceClient;
use lore_server::auth::{self, Role};
use lore_server::testing::TestServer;
use lore_store::tokens::NewToken;
use tonic::Code;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::Channel;

type Client = ActionServiceClient<InterceptedService<Channel, Bearer>>;

async fn client(server: &TestServer, token: Option<&str>) -> Client {
    ActionServiceClient::with_interceptor(server.channel().await, Bearer::new(token).unwrap())
}

async fn admin_token(server: &TestServer, name: &str) -> String {
    let token = NewToken { name: name.into(), role: Role::Admin, projects: None, expires_at: None };
    auth::create_token(server.pool(), &token).await.unwrap().1
}

async fn status_of(client: &mut Client) -> Code {
    match client.get_retention_status(proto::GetRetentionStatusRequest {}).await {
        Ok(_) => Code::Ok,
        Err(status) => {
            if status.code() == Code::ResourceExhausted {
                assert!(status.message().contains("rate limit of 5 calls/s for token"), "{status:?}");
                assert!(status.message().contains("retry in"), "{status:?}");
            }
            status.code()
        }
    }
}

#[tokio::test]
async fn each_token_has_its_own_rate_and_beyond_it_gets_resource_exhausted() {
    let mut config = TestServer::config();
    config.auth.enabled = true;
    config.grpc.rate_limit_per_token = 5;
    config.grpc.rate_limit_burst = 5;
    let server = TestServer::start_with(config).await;
    let mut busy = client(&server, Some(&admin_token(&server, "busy").await)).await;
    let mut quiet = client(&server, Some(&admin_token(&server, "quiet").await)).await;

    let mut codes = Vec::new();
    for _ in 0..50 {
        codes.push(status_of(&mut busy).await);
    }
    // The burst of 5, what refilled meanwhile, and no more.
    let allowed = codes.iter().filter(|code| **code == Code::Ok).count();
    assert!(codes[..5].iter().all(|code| *code == Code::Ok), "{codes:?}");
    assert!(allowed < codes.len(), "{codes:?}");
    assert!(codes.iter().all(|code| matches!(code, Code::Ok | Code::ResourceExhausted)), "{codes:?}");
    assert_eq!(status_of(&mut quiet).await, Code::Ok, "another token's rate is its own");

    // Health is never limited.
    let mut health = tonic_health::pb::health_client::HealthClient::new(server.channel().await);
    for _ in 0..20 {
        health.check(tonic_health::pb::HealthCheckRequest { service: String::new() }).await.unwrap();
    }
}

/// A heartbeat that waits for the session's row, which `lock` holds.
async fn blocked_heartbeat(server: &TestServer) -> (sqlx::Transaction<'static, sqlx::Postgres>, String) {
    let mut actions = client(server, None).await;
    let start = proto::StartSessionRequest { project: "lim".into(), agent_id: "a".into(), ..Default::default() };
    let session = actions.start_session(start).await.unwrap().into_inner().session.unwrap();
    let mut lock = server.pool().begin().await.unwrap();
    sqlx::query("SELECT 1 FROM sessions WHERE session_id = $1::uuid FOR UPDATE")
        .bind(&session.session_id)
        .execute(&mut *lock)
        .await
        .unwrap();
    (lock, session.session_id)
}

#[tokio::test]
async fn a_full_server_sheds_calls_and_a_slow_call_meets_its_deadline_with_nothing_half_stored() {
    let mut config = TestServer::config();
    config.grpc.max_concurrent_calls = 1;
    config.grpc.call_timeout_secs = 1;
    let server = TestServer::start_with(config).await;
    let (lock, session_id) = blocked_heartbeat(&server).await;

    let mut stuck = client(&server, None).await;
    let heartbeat = proto::HeartbeatRequest { session_id: session_id.clone() };
    let pending = tokio::spawn(async move { stuck.heartbeat(heartbeat).await });
    // While the heartbeat holds the one slot, other calls are shed.
    let mut other = client(&server, None).await;
    let shed = loop {
        match other.get_retention_status(proto::GetRetentionStatusRequest {}).await {
            Err(status) => break status,
            Ok(_) if pending.is_finished() => panic!("the heartbeat finished before a call was shed"),
            Ok(_) => tokio::task::yield_now().await,
        }
    };
    assert_eq!(shed.code(), Code::ResourceExhausted, "{shed:?}");
    assert!(shed.message().contains("server busy"), "{shed:?}");

    let cut = pending.await.unwrap().unwrap_err();
    assert_eq!(cut.code(), Code::DeadlineExceeded, "{cut:?}");
    assert!(cut.message().contains("Heartbeat") && cut.message().contains("1 s"), "{cut:?}");
    lock.rollback().await.unwrap();

    // The slot is free again, and the cut heartbeat left the session whole.
    let mut again = client(&server, None).await;
    let beat = again.heartbeat(proto::HeartbeatRequest { session_id }).await.unwrap().into_inner();
    assert_eq!(beat.status, proto::SessionStatus::Active as i32);
}
