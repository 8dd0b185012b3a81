//! ActionService over real gRPC and a real PostgreSQL.

use std::time::Duration;

use chrono::Utc;
use lore_proto::v1 as proto;
use lore_proto::v1::action_service_client::ActionServiceClient;
use lore_server::testing::TestServer;
use prost_types::{Struct, Timestamp, Value as ProtoValue, value::Kind};
use tonic::Code;
use tonic::transport::Channel;
use uuid::Uuid;

type Client = ActionServiceClient<Channel>;

async fn client(server: &TestServer) -> Client {
    ActionServiceClient::new(server.channel().await)
        .max_decoding_message_size(64 * 1024 * 1024)
        .max_encoding_message_size(64 * 1024 * 1024)
}

fn now() -> Timestamp {
    let now = Utc::now();
    Timestamp { seconds: now.timestamp(), nanos: now.timestamp_subsec_nanos() as i32 }
}

fn string_value(text: &str) -> ProtoValue {
    ProtoValue { kind: Some(Kind::StringValue(text.to_owned())) }
}

fn context(pairs: &[(&str, ProtoValue)]) -> Struct {
    Struct { fields: pairs.iter().map(|(key, value)| ((*key).to_owned(), value.clone())).collect() }
}

/// A server, a client and an open session of agent-1 in project "lore".
async fn session_fixture() -> (TestServer, Client, proto::Session) {
    let server = TestServer::start().await;
    let mut client = client(&server).await;
    let session = start_session(&mut client, "lore", "agent-1").await;
    (server, client, session)
}

async fn start_session(client: &mut Client, project: &str, agent: &str) -> proto::Session {
    client
        .start_session(proto::StartSessionRequest {
            project: project.into(),
            agent_id: agent.into(),
            supervisor_type: "claude-code".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .session
        .unwrap()
}

fn action(session: &proto::Session, action_type: &str, outcome: proto::Outcome) -> proto::Action {
    proto::Action {
        action_id: Uuid::now_v7().to_string(),
        session_id: session.session_id.clone(),
        project: session.project.clone(),
        action_type: action_type.into(),
        outcome: outcome as i32,
        occurred_at: Some(now()),
        ..Default::default()
    }
}

async fn log(client: &mut Client, action: proto::Action) -> Result<proto::LogActionResponse, tonic::Status> {
    client.log_action(proto::LogActionRequest { action: Some(action) }).await.map(tonic::Response::into_inner)
}

async fn count_actions(server: &TestServer) -> i64 {
    sqlx::query_scalar("SELECT count(*) FROM actions").fetch_one(server.pool()).await.unwrap()
}

/// Sends batches on one Ingest stream and collects the acks (or the error
/// that ended the stream).
async fn ingest(
    client: &mut Client,
    batches: Vec<proto::IngestRequest>,
) -> Result<Vec<proto::IngestAck>, tonic::Status> {
    let mut acks = client.ingest(tokio_stream::iter(batches)).await?.into_inner();
    let mut received = Vec::new();
    while let Some(ack) = acks.message().await? {
        received.push(ack);
    }
    Ok(received)
}

#[tokio::test]
async fn start_session_retried_with_the_same_id_returns_the_stored_session() {
    let server = TestServer::start().await;
    let mut client = client(&server).await;
    let session_id = Uuid::now_v7().to_string();
    let request = proto::StartSessionRequest {
        session_id: session_id.clone(),
        project: "lore".into(),
        agent_id: "agent-1".into(),
        kind: proto::SessionKind::Qa as i32,
        metadata: Some(context(&[("branch", string_value("main"))])),
        ..Default::default()
    };
    let first = client.start_session(request.clone()).await.unwrap().into_inner();
    let second = client.start_session(request).await.unwrap().into_inner();
    assert!(!first.duplicate);
    assert!(second.duplicate);
    assert_eq!(first.session, second.session);
    let session = first.session.unwrap();
    assert_eq!(session.session_id, session_id);
    assert_eq!(session.kind, proto::SessionKind::Qa as i32);
    assert_eq!(session.status, proto::SessionStatus::Active as i32);
}

#[tokio::test]
async fn a_session_id_taken_by_another_project_is_refused() {
    let server = TestServer::start().await;
    let mut client = client(&server).await;
    let session = start_session(&mut client, "alpha", "agent-1").await;
    let status = client
        .start_session(proto::StartSessionRequest {
            session_id: session.session_id,
            project: "beta".into(),
            agent_id: "agent-1".into(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::AlreadyExists, "{status:?}");
}

#[tokio::test]
async fn heartbeat_keeps_a_session_alive_and_revives_a_disconnected_one() {
    let (server, mut client, session) = session_fixture().await;

    // The sweep with a cut-off in the future marks every active session.
    let marked = lore_store::actions::sessions::mark_silent_sessions_disconnected(
        server.pool(),
        Utc::now() + chrono::Duration::seconds(60),
    )
    .await
    .unwrap();
    assert_eq!(marked, 1);
    let recent = client
        .get_recent_actions(proto::GetRecentActionsRequest {
            session_id: session.session_id.clone(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let swept = recent.session.unwrap();
    assert_eq!(swept.status, proto::SessionStatus::Disconnected as i32);
    assert_eq!(swept.end_reason, proto::EndReason::Timeout as i32);

    let beat = client
        .heartbeat(proto::HeartbeatRequest { session_id: session.session_id.clone() })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(beat.status, proto::SessionStatus::Active as i32);
}

#[tokio::test]
async fn ended_sessions_stay_ended_and_unknown_sessions_are_not_found() {
    let (_server, mut client, session) = session_fixture().await;
    let end = proto::EndSessionRequest {
        session_id: session.session_id.clone(),
        reason: proto::EndReason::NetworkDisconnect as i32,
        summary: "lost the VM".into(),
    };
    let ended = client.end_session(end.clone()).await.unwrap().into_inner().session.unwrap();
    assert_eq!(ended.status, proto::SessionStatus::Ended as i32);
    assert_eq!(ended.end_reason, proto::EndReason::NetworkDisconnect as i32);
    assert_eq!(ended.summary, "lost the VM");
    // Ending again changes nothing.
    let again = client.end_session(end).await.unwrap().into_inner().session.unwrap();
    assert_eq!(again.ended_at, ended.ended_at);

    let status = client.heartbeat(proto::HeartbeatRequest { session_id: session.session_id }).await.unwrap_err();
    assert_eq!(status.code(), Code::FailedPrecondition, "{status:?}");
    let status =
        client.heartbeat(proto::HeartbeatRequest { session_id: Uuid::now_v7().to_string() }).await.unwrap_err();
    assert_eq!(status.code(), Code::NotFound, "{status:?}");
    let status = client
        .end_session(proto::EndSessionRequest {
            session_id: Uuid::now_v7().to_string(),
            reason: 0,
            summary: String::new(),
        })
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument);
    assert!(status.message().starts_with("reason:"), "{status:?}");
}

#[tokio::test]
async fn a_resumed_agent_session_reopens_its_ended_lore_session_and_its_chain_goes_on() {
    let (_server, mut client, session) = session_fixture().await;
    log(&mut client, action(&session, "plan", proto::Outcome::Success)).await.unwrap();
    let end = proto::EndSessionRequest {
        session_id: session.session_id.clone(),
        reason: proto::EndReason::Normal as i32,
        summary: "turn done".into(),
    };
    client.end_session(end).await.unwrap();
    let start = proto::StartSessionRequest {
        session_id: session.session_id.clone(),
        project: session.project.clone(),
        agent_id: session.agent_id.clone(),
        ..Default::default()
    };
    // Without reopen a retried start answers with the session as stored.
    let plain = client.start_session(start.clone()).await.unwrap().into_inner();
    assert!(plain.duplicate);
    assert_eq!(plain.session.unwrap().status, proto::SessionStatus::Ended as i32);
    let reopened = client.start_session(proto::StartSessionRequest { reopen: true, ..start.clone() }).await.unwrap();
    let reopened = reopened.into_inner();
    assert!(reopened.duplicate);
    let stored = reopened.session.unwrap();
    assert_eq!(stored.status, proto::SessionStatus::Active as i32);
    assert_eq!((stored.ended_at, stored.end_reason), (None, proto::EndReason::Unspecified as i32));
    client.heartbeat(proto::HeartbeatRequest { session_id: session.session_id.clone() }).await.unwrap();
    log(&mut client, action(&session, "commit", proto::Outcome::Success)).await.unwrap();
    let chain = chain_of(&mut client, &session).await;
    assert_eq!((chain.checked, chain.first_broken), (2, None));
    // Reopening an active session changes nothing; another agent may not.
    let again = client.start_session(proto::StartSessionRequest { reopen: true, ..start.clone() }).await.unwrap();
    assert_eq!(again.into_inner().session.unwrap().started_at, stored.started_at);
    let stranger = proto::StartSessionRequest { agent_id: "someone-else".into(), reopen: true, ..start };
    assert_eq!(client.start_session(stranger).await.unwrap_err().code(), Code::AlreadyExists);
}

#[tokio::test]
async fn last_session_is_found_by_project_agent_and_supervisor() {
    let server = TestServer::start().await;
    let mut client = client(&server).await;
    let first = start_session(&mut client, "lore", "agent-1").await;
    tokio::time::sleep(Duration::from_millis(5)).await;
    let second = start_session(&mut client, "lore", "agent-2").await;
    let mut request = proto::GetLastSessionRequest { project: "lore".into(), ..Default::default() };
    let last = client.get_last_session(request.clone()).await.unwrap().into_inner();
    assert_eq!(last.session.unwrap().session_id, second.session_id);
    request.agent_id = "agent-1".into();
    let last = client.get_last_session(request.clone()).await.unwrap().into_inner();
    assert_eq!(last.session.unwrap().session_id, first.session_id);
    request.agent_id = String::new();
    request.supervisor_type = "tmux".into();
    let status = client.get_last_session(request).await.unwrap_err();
    assert_eq!(status.code(), Code::NotFound);
}

#[tokio::test]
async fn a_replayed_action_is_acknowledged_as_a_duplicate_and_stored_once() {
    let (server, mut client, session) = session_fixture().await;
    let commit = action(&session, "commit", proto::Outcome::Success);
    let first = log(&mut client, commit.clone()).await.unwrap();
    let replay = log(&mut client, commit.clone()).await.unwrap();
    assert!(!first.ack.unwrap().duplicate);
    let replay_ack = replay.ack.unwrap();
    assert!(replay_ack.duplicate);
    assert_eq!(replay_ack.id, commit.action_id);
    assert_eq!(count_actions(&server).await, 1);
}

#[tokio::test]
async fn an_action_without_an_id_gets_one() {
    let (_server, mut client, session) = session_fixture().await;
    let mut plan = action(&session, "plan", proto::Outcome::Success);
    plan.action_id.clear();
    let ack = log(&mut client, plan).await.unwrap().ack.unwrap();
    assert_eq!(Uuid::parse_str(&ack.id).unwrap().get_version_num(), 7);
}

#[tokio::test]
async fn ingest_acks_each_batch_in_order_with_stored_and_duplicate_counts() {
    let (server, mut client, session) = session_fixture().await;
    let first: Vec<proto::Action> = (0..100).map(|_| action(&session, "tool_call", proto::Outcome::Success)).collect();
    let mut second: Vec<proto::Action> =
        (0..50).map(|_| action(&session, "validate", proto::Outcome::Failure)).collect();
    // Half of the second batch replays the first.
    second.extend(first[..50].iter().cloned());
    let acks = ingest(
        &mut client,
        vec![
            proto::IngestRequest { sequence: 1, actions: first },
            proto::IngestRequest { sequence: 2, actions: second.clone() },
        ],
    )
    .await
    .unwrap();
    assert_eq!(acks.len(), 2);
    assert_eq!((acks[0].sequence, acks[0].stored, acks[0].duplicates), (1, 100, 0));
    assert_eq!((acks[1].sequence, acks[1].stored, acks[1].duplicates), (2, 50, 50));
    assert_eq!(count_actions(&server).await, 150);

    // A whole replay on a new stream (what a sidecar does after reconnecting).
    let acks = ingest(&mut client, vec![proto::IngestRequest { sequence: 7, actions: second }]).await.unwrap();
    assert_eq!((acks[0].stored, acks[0].duplicates), (0, 100));
    assert_eq!(count_actions(&server).await, 150);
}

#[tokio::test]
async fn ingest_rejects_invalid_actions_one_by_one_and_stores_the_rest() {
    let (_server, mut client, session) = session_fixture().await;
    let good = action(&session, "commit", proto::Outcome::Success);
    let mut no_time = action(&session, "commit", proto::Outcome::Success);
    no_time.occurred_at = None;
    let mut unknown_session = action(&session, "commit", proto::Outcome::Success);
    unknown_session.session_id = Uuid::now_v7().to_string();
    let mut bad_outcome = action(&session, "commit", proto::Outcome::Success);
    bad_outcome.outcome = 99;
    let acks = ingest(
        &mut client,
        vec![proto::IngestRequest { sequence: 1, actions: vec![no_time, good, unknown_session, bad_outcome] }],
    )
    .await
    .unwrap();
    let ack = &acks[0];
    assert_eq!(ack.stored, 1);
    let rejected: Vec<(u32, &str)> =
        ack.rejected.iter().map(|rejection| (rejection.index, rejection.reason.as_str())).collect();
    assert_eq!(rejected.len(), 3, "{rejected:?}");
    assert_eq!(rejected[0], (0, "occurred_at: required"));
    assert_eq!(rejected[1].0, 2);
    assert!(rejected[1].1.starts_with("session_id: session"), "{rejected:?}");
    assert_eq!(rejected[2], (3, "outcome: unknown value 99"));
}

#[tokio::test]
async fn ingest_sequences_must_increase() {
    let (_server, mut client, session) = session_fixture().await;
    let batch =
        |sequence| proto::IngestRequest { sequence, actions: vec![action(&session, "plan", proto::Outcome::Success)] };
    let status = ingest(&mut client, vec![batch(5), batch(5)]).await.unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument);
    assert!(status.message().starts_with("sequence:"), "{status:?}");
}

#[tokio::test]
async fn a_batch_whose_connection_dies_before_commit_is_not_acknowledged_and_can_be_replayed() {
    let (server, mut client, session) = session_fixture().await;
    let batch: Vec<proto::Action> = (0..20).map(|_| action(&session, "tool_call", proto::Outcome::Success)).collect();

    // Hold the session row so the batch blocks inside its transaction.
    let mut blocker = server.pool().begin().await.unwrap();
    sqlx::query("SELECT 1 FROM sessions FOR UPDATE").execute(&mut *blocker).await.unwrap();
    let stream = {
        let mut client = client.clone();
        let batch = batch.clone();
        tokio::spawn(
            async move { ingest(&mut client, vec![proto::IngestRequest { sequence: 1, actions: batch }]).await },
        )
    };
    // Wait until the ingest backend waits on our lock, then kill it.
    let killed = loop {
        let killed: Option<bool> = sqlx::query_scalar(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity
              WHERE wait_event_type = 'Lock' AND query LIKE '%FOR UPDATE%' AND pid <> pg_backend_pid()",
        )
        .fetch_optional(server.pool())
        .await
        .unwrap();
        if let Some(killed) = killed {
            break killed;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    assert!(killed);
    blocker.rollback().await.unwrap();

    let status = stream.await.unwrap().unwrap_err();
    assert_eq!(status.code(), Code::Unavailable, "{status:?}");
    assert_eq!(count_actions(&server).await, 0, "rows of an unacknowledged batch were committed");

    let acks = ingest(&mut client, vec![proto::IngestRequest { sequence: 1, actions: batch }]).await.unwrap();
    assert_eq!((acks[0].stored, acks[0].duplicates), (20, 0));
    let report =
        client.verify_chain(proto::VerifyChainRequest { session_id: session.session_id }).await.unwrap().into_inner();
    assert!(report.intact, "{report:?}");
}

#[tokio::test]
async fn secrets_in_context_and_error_are_redacted_before_storage() {
    let (server, mut client, session) = session_fixture().await;
    let mut deploy = action(&session, "deploy", proto::Outcome::Failure);
    deploy.context = Some(context(&[
        ("api_key", string_value("sk_live_ReTllpYQYfIZu2Jnf2lAPFjD")),
        ("command", string_value("git push https://bot: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@github.com/acme/app")),
        ("file", string_value("src/deploy/config.rs")),
    ]));
    deploy.error = "auth failed for AKIAZ52Q4XL3VN7HBK2D".into();
    let response = log(&mut client, deploy).await.unwrap();
    assert_eq!(response.redaction_count, 3);

    let stored: (String, String, i32) = sqlx::query_as("SELECT context::text, error, redaction_count FROM actions")
        .fetch_one(server.pool())
        .await
        .unwrap();
    assert!(!stored.0.contains("sk_live_") && !stored.0.contains("ghp_"), "{}", stored.0);
    assert!(stored.0.contains("src/deploy/config.rs"), "{}", stored.0);
    assert!(stored.0.contains("https://bot:[REDACTED]@github.com/acme/app"), "{}", stored.0);
    assert_eq!(stored.1, "auth failed for [REDACTED]");
    assert_eq!(stored.2, 3);
}

#[tokio::test]
async fn bad_input_is_refused_with_the_field_and_stores_nothing() {
    let (server, mut client, session) = session_fixture().await;
    let valid = || action(&session, "commit", proto::Outcome::Success);

    let mut deep = ProtoValue { kind: Some(Kind::StringValue("bottom".into())) };
    for _ in 0..40 {
        deep = ProtoValue { kind: Some(Kind::StructValue(context(&[("inner", deep)]))) };
    }
    let huge = "x".repeat(10 * 1024 * 1024);
    let cases: Vec<(&str, proto::Action)> = vec![
        ("action.occurred_at: required", proto::Action { occurred_at: None, ..valid() }),
        (
            "action.occurred_at: nanos",
            proto::Action { occurred_at: Some(Timestamp { seconds: 1, nanos: -5 }), ..valid() },
        ),
        (
            "action.occurred_at: seconds",
            proto::Action { occurred_at: Some(Timestamp { seconds: i64::MAX, nanos: 0 }), ..valid() },
        ),
        ("action.outcome: unknown value 42", proto::Action { outcome: 42, ..valid() }),
        ("action.outcome: required", proto::Action { outcome: 0, ..valid() }),
        ("action.action_type: must be", proto::Action { action_type: String::new(), ..valid() }),
        ("action.action_type: must be", proto::Action { action_type: "com\0mit".into(), ..valid() }),
        ("action.agent_id: must not contain control", proto::Action { agent_id: "a\0b".into(), ..valid() }),
        ("action.project: must be", proto::Action { project: "no spaces".into(), ..valid() }),
        ("action.action_id: \"nope\" is not a UUID", proto::Action { action_id: "nope".into(), ..valid() }),
        ("action.context", proto::Action { context: Some(context(&[("deep", deep)])), ..valid() }),
        (
            "action.context: 104857",
            proto::Action { context: Some(context(&[("log", string_value(&huge))])), ..valid() },
        ),
    ];
    for (expected, bad) in cases {
        let status = log(&mut client, bad).await.unwrap_err();
        assert_eq!(status.code(), Code::InvalidArgument, "{expected}: {status:?}");
        assert!(status.message().starts_with(expected), "expected {expected:?}, got {:?}", status.message());
    }
    let status = client.log_action(proto::LogActionRequest { action: None }).await.unwrap_err();
    assert_eq!(status.message(), "action: required");
    let status =
        log(&mut client, proto::Action { session_id: Uuid::now_v7().to_string(), ..valid() }).await.unwrap_err();
    assert_eq!(status.code(), Code::NotFound);
    assert!(status.message().starts_with("action.session_id:"), "{status:?}");
    assert_eq!(count_actions(&server).await, 0);
}

#[tokio::test]
async fn nul_bytes_in_context_and_error_are_removed_not_refused() {
    let (server, mut client, session) = session_fixture().await;
    let mut nul = action(&session, "tool_call", proto::Outcome::Failure);
    nul.context = Some(context(&[("out\0put", string_value("line\0one"))]));
    nul.error = "bad\0byte".into();
    log(&mut client, nul).await.unwrap();
    let (context_text, error): (String, String) =
        sqlx::query_as("SELECT context::text, error FROM actions").fetch_one(server.pool()).await.unwrap();
    assert_eq!(context_text, r#"{"output": "lineone"}"#);
    assert_eq!(error, "badbyte");
}

#[tokio::test]
async fn recent_actions_come_newest_first_from_the_projects_last_session() {
    let (_server, mut client, session) = session_fixture().await;
    let mut ids = Vec::new();
    for step in ["plan", "commit", "validate", "deploy"] {
        let next = action(&session, step, proto::Outcome::Success);
        ids.push(next.action_id.clone());
        log(&mut client, next).await.unwrap();
    }
    let by_project = client
        .get_recent_actions(proto::GetRecentActionsRequest { project: "lore".into(), limit: 3, ..Default::default() })
        .await
        .unwrap()
        .into_inner();
    let got: Vec<String> = by_project.actions.iter().map(|action| action.action_id.clone()).collect();
    let newest_first: Vec<String> = ids[1..].iter().rev().cloned().collect();
    assert_eq!(got, newest_first);
    assert_eq!(by_project.session.unwrap().action_count, 4);
    let chain: Vec<u64> = by_project.actions.iter().map(|action| action.chain_seq).collect();
    assert_eq!(chain, vec![4, 3, 2]);
}

async fn chain_of(client: &mut Client, session: &proto::Session) -> proto::VerifyChainResponse {
    client
        .verify_chain(proto::VerifyChainRequest { session_id: session.session_id.clone() })
        .await
        .unwrap()
        .into_inner()
}

/// Runs `statement` with triggers off, as someone with direct database
/// access would to tamper with the log.
async fn tamper(server: &TestServer, statement: &str) {
    let mut connection = server.pool().acquire().await.unwrap();
    sqlx::query("SET session_replication_role = replica").execute(&mut *connection).await.unwrap();
    sqlx::query(sqlx::AssertSqlSafe(statement.to_owned())).execute(&mut *connection).await.unwrap();
    sqlx::query("SET session_replication_role = origin").execute(&mut *connection).await.unwrap();
}

#[tokio::test]
async fn verify_chain_catches_an_edited_row_a_deleted_row_and_a_cut_tail() {
    let (server, mut client, session) = session_fixture().await;
    let mut batch = Vec::new();
    for index in 0..10 {
        let mut step = action(&session, "tool_call", proto::Outcome::Success);
        step.context = Some(context(&[("step", ProtoValue { kind: Some(Kind::NumberValue(f64::from(index))) })]));
        batch.push(step);
    }
    ingest(&mut client, vec![proto::IngestRequest { sequence: 1, actions: batch }]).await.unwrap();
    log(&mut client, action(&session, "commit", proto::Outcome::Success)).await.unwrap();

    let report = chain_of(&mut client, &session).await;
    assert!(report.intact, "{report:?}");
    assert_eq!(report.checked, 11);

    tamper(&server, "UPDATE actions SET context = '{\"step\": 99}' WHERE chain_seq = 4").await;
    let report = chain_of(&mut client, &session).await;
    assert!(!report.intact);
    let broken = report.first_broken.unwrap();
    assert_eq!((broken.chain_seq, broken.reason.as_str()), (4, "content changed"));
    assert_eq!(report.checked, 3);
    tamper(&server, "UPDATE actions SET context = '{\"step\": 3}' WHERE chain_seq = 4").await;
    assert!(chain_of(&mut client, &session).await.intact, "restoring the content restores the chain");

    tamper(&server, "DELETE FROM actions WHERE chain_seq = 7").await;
    let broken = chain_of(&mut client, &session).await.first_broken.unwrap();
    assert_eq!(broken.chain_seq, 7);
    assert!(broken.reason.starts_with("missing action"), "{broken:?}");

    tamper(&server, "DELETE FROM actions WHERE chain_seq >= 7").await;
    let report = chain_of(&mut client, &session).await;
    let broken = report.first_broken.unwrap();
    assert_eq!((report.checked, broken.chain_seq), (6, 7));
    assert!(broken.reason.contains("recorded 11 actions, 6 remain"), "{broken:?}");
}

/// LogActionRequest as a client with a broken encoder would send it: the
/// same field numbers, but the error field carries raw bytes.
#[derive(Clone, PartialEq, prost::Message)]
struct RawLogActionRequest {
    #[prost(message, optional, tag = "1")]
    action: Option<RawAction>,
}

#[derive(Clone, PartialEq, prost::Message)]
struct RawAction {
    #[prost(string, tag = "3")]
    project: String,
    #[prost(string, tag = "5")]
    action_type: String,
    #[prost(int32, tag = "8")]
    outcome: i32,
    #[prost(bytes = "vec", tag = "9")]
    error: Vec<u8>,
    #[prost(message, optional, tag = "14")]
    occurred_at: Option<Timestamp>,
}

#[tokio::test]
async fn invalid_utf8_in_a_string_field_is_invalid_argument_naming_it() {
    let server = TestServer::start().await;
    let mut grpc = tonic::client::Grpc::new(server.channel().await);
    grpc.ready().await.unwrap();
    let request = RawLogActionRequest {
        action: Some(RawAction {
            project: "lore".into(),
            action_type: "commit".into(),
            outcome: proto::Outcome::Success as i32,
            error: vec![b'o', b'k', 0xff, 0xfe],
            occurred_at: Some(now()),
        }),
    };
    let status = grpc
        .unary::<_, proto::LogActionResponse, _>(
            tonic::Request::new(request),
            tonic::codegen::http::uri::PathAndQuery::from_static("/lore.v1.ActionService/LogAction"),
            tonic_prost::ProstCodec::default(),
        )
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
    assert!(status.message().starts_with("action.error:"), "{status:?}");
    assert_eq!(count_actions(&server).await, 0);
}

fn at_days_ago(days: i64, minutes: i64) -> Timestamp {
    let time = Utc::now() - chrono::Duration::days(days) - chrono::Duration::minutes(minutes);
    Timestamp { seconds: time.timestamp(), nanos: time.timestamp_subsec_nanos() as i32 }
}

/// 30 actions over the last three days: plan/commit/validate/deploy with a
/// mix of outcomes, half in epic E-1, every third with agent xyz789 in its
/// context.
async fn varied_actions(client: &mut Client, session: &proto::Session) -> Vec<proto::Action> {
    let types = ["plan", "commit", "validate", "deploy"];
    let outcomes = [proto::Outcome::Success, proto::Outcome::Success, proto::Outcome::Failure, proto::Outcome::Blocked];
    let mut actions = Vec::new();
    for index in 0..30_usize {
        let mut next = action(session, types[index % 4], outcomes[index % 4]);
        next.occurred_at = Some(at_days_ago((index % 3) as i64, index as i64));
        if index % 2 == 0 {
            next.epic_id = "E-1".into();
        }
        if index % 3 == 0 {
            next.context = Some(context(&[
                ("agent_id", string_value("xyz789")),
                ("n", ProtoValue { kind: Some(Kind::NumberValue(index as f64)) }),
            ]));
        }
        if outcomes[index % 4] == proto::Outcome::Failure {
            next.error = format!("test {index} failed");
        }
        actions.push(next);
    }
    ingest(client, vec![proto::IngestRequest { sequence: 1, actions: actions.clone() }]).await.unwrap();
    actions
}

async fn search(
    client: &mut Client,
    request: proto::SearchActionsRequest,
) -> Result<proto::SearchActionsResponse, tonic::Status> {
    client.search_actions(request).await.map(tonic::Response::into_inner)
}

#[tokio::test]
async fn search_filters_by_type_outcome_epic_window_and_context() {
    let (_server, mut client, session) = session_fixture().await;
    let actions = varied_actions(&mut client, &session).await;
    let base = proto::SearchActionsRequest {
        project: "lore".into(),
        page: Some(proto::PageRequest { page_size: 100, cursor: String::new() }),
        ..Default::default()
    };
    let ids = |response: proto::SearchActionsResponse| {
        let mut ids: Vec<String> = response.actions.into_iter().map(|action| action.action_id).collect();
        ids.sort();
        ids
    };
    let expect = |keep: &dyn Fn(usize, &proto::Action) -> bool| {
        let mut ids: Vec<String> = actions
            .iter()
            .enumerate()
            .filter(|(index, action)| keep(*index, action))
            .map(|(_, action)| action.action_id.clone())
            .collect();
        ids.sort();
        ids
    };

    let commits =
        search(&mut client, proto::SearchActionsRequest { action_types: vec!["commit".into()], ..base.clone() })
            .await
            .unwrap();
    assert_eq!(ids(commits), expect(&|index, _| index % 4 == 1));

    let failed_in_epic = search(
        &mut client,
        proto::SearchActionsRequest {
            outcomes: vec![proto::Outcome::Failure as i32],
            epic_id: "E-1".into(),
            ..base.clone()
        },
    )
    .await
    .unwrap();
    assert_eq!(ids(failed_in_epic), expect(&|index, _| index % 4 == 2 && index % 2 == 0));

    let by_agent = search(
        &mut client,
        proto::SearchActionsRequest {
            context_contains: Some(context(&[("agent_id", string_value("xyz789"))])),
            ..base.clone()
        },
    )
    .await
    .unwrap();
    assert_eq!(ids(by_agent), expect(&|index, _| index % 3 == 0));

    let today = search(
        &mut client,
        proto::SearchActionsRequest {
            window: Some(proto::TimeRange { start: Some(at_days_ago(0, 40)), end: None }),
            ..base.clone()
        },
    )
    .await
    .unwrap();
    assert_eq!(ids(today), expect(&|index, _| index % 3 == 0));

    let by_text =
        search(&mut client, proto::SearchActionsRequest { text: "TEST 10 FAIL".into(), ..base.clone() }).await.unwrap();
    assert_eq!(ids(by_text), expect(&|index, _| index == 10));
}

#[tokio::test]
async fn search_pages_with_a_cursor_cover_everything_once_newest_first() {
    let (_server, mut client, session) = session_fixture().await;
    varied_actions(&mut client, &session).await;
    let mut cursor = String::new();
    let mut seen: Vec<proto::Action> = Vec::new();
    loop {
        let page = search(
            &mut client,
            proto::SearchActionsRequest {
                project: "lore".into(),
                page: Some(proto::PageRequest { page_size: 7, cursor }),
                ..Default::default()
            },
        )
        .await
        .unwrap();
        assert!(page.actions.len() <= 7);
        seen.extend(page.actions);
        if page.next_cursor.is_empty() {
            break;
        }
        cursor = page.next_cursor;
    }
    assert_eq!(seen.len(), 30);
    let times: Vec<(i64, i32)> = seen
        .iter()
        .map(|action| {
            let at = action.occurred_at.unwrap();
            (at.seconds, at.nanos)
        })
        .collect();
    assert!(times.windows(2).all(|pair| pair[0] >= pair[1]), "not newest first");
    let mut ids: Vec<&str> = seen.iter().map(|action| action.action_id.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 30);
}

#[tokio::test]
async fn search_refuses_bad_filters_naming_them() {
    let (_server, mut client, _session) = session_fixture().await;
    let base = proto::SearchActionsRequest { project: "lore".into(), ..Default::default() };
    let cases = [
        ("outcomes[0]: unknown value 99", proto::SearchActionsRequest { outcomes: vec![99], ..base.clone() }),
        (
            "page.cursor: not a cursor",
            proto::SearchActionsRequest {
                page: Some(proto::PageRequest { page_size: 5, cursor: "garbage".into() }),
                ..base.clone()
            },
        ),
        (
            "window: start must be before end",
            proto::SearchActionsRequest {
                window: Some(proto::TimeRange { start: Some(at_days_ago(0, 0)), end: Some(at_days_ago(1, 0)) }),
                ..base.clone()
            },
        ),
        (
            "action_types[0]: must be",
            proto::SearchActionsRequest { action_types: vec!["has space".into()], ..base.clone() },
        ),
        ("session_id: \"x\" is not a UUID", proto::SearchActionsRequest { session_id: "x".into(), ..base.clone() }),
        ("project: required", proto::SearchActionsRequest { project: String::new(), ..base.clone() }),
    ];
    for (expected, request) in cases {
        let status = search(&mut client, request).await.unwrap_err();
        assert_eq!(status.code(), Code::InvalidArgument, "{expected}");
        assert!(status.message().starts_with(expected), "expected {expected:?}, got {:?}", status.message());
    }
}

#[tokio::test]
async fn activity_report_counts_by_day_type_and_outcome_and_renders_markdown() {
    let (_server, mut client, session) = session_fixture().await;
    let actions = varied_actions(&mut client, &session).await;
    // Three days back from now, minus up to 29 minutes: four UTC dates when
    // the test runs just after midnight.
    let mut per_day = std::collections::BTreeMap::<String, u64>::new();
    for action in &actions {
        let at = action.occurred_at.unwrap();
        let day = chrono::DateTime::from_timestamp(at.seconds, 0).unwrap().date_naive().to_string();
        *per_day.entry(day).or_default() += 1;
    }
    let busiest = per_day.iter().rev().max_by_key(|(_, count)| **count).unwrap().0.clone();
    let report = client
        .activity_report(proto::ActivityReportRequest {
            project: "lore".into(),
            render_markdown: true,
            recent_failures_limit: 3,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let totals = report.totals.unwrap();
    // Outcomes cycle success, success, failure, blocked over 30 actions.
    assert_eq!((totals.total, totals.succeeded, totals.failed, totals.blocked), (30, 16, 7, 7));
    assert!((totals.success_rate - 16.0 / 30.0).abs() < 1e-9);
    let by_day: Vec<(String, u64)> = report.by_day.iter().map(|day| (day.key.clone(), day.total)).collect();
    assert_eq!(by_day, per_day.into_iter().collect::<Vec<_>>());
    assert_eq!(report.by_action_type[0].key, "commit", "commit and plan tie at 8; alphabetical first");
    assert_eq!(report.most_common_action_type, "commit");
    assert_eq!(report.busiest_day, busiest, "the most actions; the earliest day on a tie");
    let outcomes: Vec<(&str, u64)> =
        report.by_outcome.iter().map(|counts| (counts.key.as_str(), counts.total)).collect();
    assert_eq!(outcomes, vec![("blocked", 7), ("failure", 7), ("success", 16)]);
    assert_eq!(report.recent_failures.len(), 3);
    assert!(report.recent_failures.iter().all(|action| action.outcome == proto::Outcome::Failure as i32));
    assert!(report.markdown.contains("# Activity of lore"), "{}", report.markdown);
    assert!(report.markdown.contains("- **Success rate:** 53.3%"), "{}", report.markdown);
    assert!(report.markdown.contains("█"), "no chart: {}", report.markdown);
}

async fn export_chunks(
    client: &mut Client,
    request: proto::ExportRequest,
    stop_after: Option<usize>,
) -> Vec<proto::ExportChunk> {
    let mut stream = client.export(request).await.unwrap().into_inner();
    let mut chunks = Vec::new();
    while let Some(chunk) = stream.message().await.unwrap() {
        chunks.push(chunk);
        if stop_after.is_some_and(|stop| chunks.len() >= stop) {
            break;
        }
    }
    chunks
}

fn joined(chunks: &[proto::ExportChunk]) -> String {
    String::from_utf8(chunks.iter().flat_map(|chunk| chunk.data.clone()).collect()).unwrap()
}

fn export_request(format: proto::ExportFormat) -> proto::ExportRequest {
    proto::ExportRequest { project: "lore".into(), format: format as i32, chunk_rows: 7, ..Default::default() }
}

#[tokio::test]
async fn export_writes_jsonl_csv_json_and_training_examples() {
    let (_server, mut client, session) = session_fixture().await;
    varied_actions(&mut client, &session).await;

    let chunks = export_chunks(&mut client, export_request(proto::ExportFormat::Jsonl), None).await;
    assert!(chunks.last().unwrap().last);
    assert_eq!(chunks.iter().map(|chunk| chunk.rows).sum::<u32>(), 30);
    let lines: Vec<serde_json::Value> =
        joined(&chunks).lines().map(|line| serde_json::from_str(line).unwrap()).collect();
    assert_eq!(lines.len(), 30);
    let times: Vec<&str> = lines.iter().map(|line| line["occurred_at"].as_str().unwrap()).collect();
    assert!(times.windows(2).all(|pair| pair[0] <= pair[1]), "oldest first");
    assert_eq!(lines[0]["chain_hash"].as_str().unwrap().len(), 64);

    let csv_text = joined(&export_chunks(&mut client, export_request(proto::ExportFormat::Csv), None).await);
    let mut reader = csv::Reader::from_reader(csv_text.as_bytes());
    assert_eq!(&reader.headers().unwrap()[0], "action_id");
    let records: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    assert_eq!(records.len(), 30);
    assert!(records.iter().any(|record| record[14].contains("xyz789")), "context column");

    let json_text = joined(&export_chunks(&mut client, export_request(proto::ExportFormat::Json), None).await);
    let array: Vec<serde_json::Value> = serde_json::from_str(&json_text).unwrap();
    assert_eq!(array.len(), 30);

    let training = joined(&export_chunks(&mut client, export_request(proto::ExportFormat::Training), None).await);
    let examples: Vec<serde_json::Value> = training.lines().map(|line| serde_json::from_str(line).unwrap()).collect();
    assert_eq!(examples.len(), 30);
    let failed = examples.iter().find(|example| example["output"]["outcome"] == "failure").unwrap();
    assert!(failed["output"]["error"].as_str().unwrap().ends_with("failed"));
    assert!(failed["output"]["duration_seconds"].is_number());
    assert!(failed["input"]["epic_id"].is_string() && failed["input"]["context"].is_object());
    assert!(failed["metadata"]["action_id"].is_string());
}

#[tokio::test]
async fn an_export_resumed_from_any_cursor_equals_an_uninterrupted_one_while_writes_go_on() {
    let (server, mut client, session) = session_fixture().await;
    varied_actions(&mut client, &session).await;

    // A writer keeps adding actions whose timestamps fall inside the range
    // being exported, before and after the export's position.
    let writer = {
        let mut client = self::client(&server).await;
        let session = session.clone();
        tokio::spawn(async move {
            for index in 0..200_i64 {
                let mut late = action(&session, "tool_call", proto::Outcome::Success);
                late.occurred_at = Some(at_days_ago(index % 3, index % 50));
                log(&mut client, late).await.unwrap();
            }
        })
    };

    let whole = export_chunks(&mut client, export_request(proto::ExportFormat::Json), None).await;
    assert!(whole.len() > 3);
    for stop in 1..whole.len() {
        // Each cursor carries the instant of the uninterrupted export.
        let resumed = export_chunks(
            &mut client,
            proto::ExportRequest {
                resume_after: whole[stop - 1].cursor.clone(),
                ..export_request(proto::ExportFormat::Json)
            },
            None,
        )
        .await;
        let mut combined = whole[..stop].to_vec();
        combined.extend(resumed);
        assert_eq!(joined(&combined), joined(&whole), "resumed after chunk {stop}");
    }
    writer.await.unwrap();
    let array: Vec<serde_json::Value> = serde_json::from_str(&joined(&whole)).unwrap();
    assert!(array.len() >= 30);
    let mut ids: Vec<&str> = array.iter().map(|row| row["action_id"].as_str().unwrap()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), array.len(), "a row appeared twice");
}

#[tokio::test]
async fn a_cursor_cannot_resume_a_different_export() {
    let (_server, mut client, session) = session_fixture().await;
    varied_actions(&mut client, &session).await;
    let chunks = export_chunks(&mut client, export_request(proto::ExportFormat::Jsonl), Some(1)).await;
    let request =
        proto::ExportRequest { resume_after: chunks[0].cursor.clone(), ..export_request(proto::ExportFormat::Csv) };
    let status = client.export(request).await.unwrap().into_inner().message().await.unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument);
    assert!(status.message().starts_with("resume_after:"), "{status:?}");
    let request = proto::ExportRequest { resume_after: "garbage".into(), ..export_request(proto::ExportFormat::Csv) };
    let status = client.export(request).await.unwrap_err();
    assert!(status.message().starts_with("resume_after: not a cursor"), "{status:?}");
}

fn resume_event(event: &proto::ResumeEvent) -> &proto::resume_event::Event {
    event.event.as_ref().expect("event set")
}

#[tokio::test]
async fn resume_sends_the_summary_then_recent_actions_oldest_first_then_caught_up() {
    let (_server, mut client, session) = session_fixture().await;
    let mut spawn = action(&session, "spawn", proto::Outcome::InProgress);
    spawn.category = "worker".into();
    spawn.epic_id = "EPIC-3".into();
    let mut validate = action(&session, "validate", proto::Outcome::Failure);
    validate.category = "tests".into();
    validate.error = "2 tests failed: ingest_dedupes, resume_follows".into();
    for next in [
        action(&session, "plan", proto::Outcome::Success),
        spawn,
        action(&session, "commit", proto::Outcome::Success),
        validate,
    ] {
        log(&mut client, next).await.unwrap();
    }
    client
        .end_session(proto::EndSessionRequest {
            session_id: session.session_id.clone(),
            reason: proto::EndReason::NetworkDisconnect as i32,
            summary: String::new(),
        })
        .await
        .unwrap();

    let request = proto::ResumeRequest {
        project: "lore".into(),
        agent_id: "agent-1".into(),
        recent_limit: 3,
        ..Default::default()
    };
    let mut stream = client.resume(request).await.unwrap().into_inner();
    let mut events = Vec::new();
    while let Some(event) = stream.message().await.unwrap() {
        events.push(event);
    }
    assert_eq!(events.len(), 1 + 3 + 1, "summary, 3 actions, caught-up");
    let proto::resume_event::Event::Summary(summary) = resume_event(&events[0]) else {
        panic!("summary first: {events:?}")
    };
    let resumed = summary.session.as_ref().unwrap();
    assert_eq!(resumed.session_id, session.session_id);
    assert_eq!(resumed.end_reason, proto::EndReason::NetworkDisconnect as i32);
    assert_eq!(summary.last_action.as_ref().unwrap().action_type, "validate");
    let kinds: Vec<i32> = summary.work_in_progress.iter().map(|item| item.kind).collect();
    assert_eq!(
        kinds,
        vec![
            proto::WorkKind::ValidationFailed as i32,
            proto::WorkKind::CommitNotDeployed as i32,
            proto::WorkKind::SpawnRunning as i32
        ]
    );
    assert_eq!(
        summary.work_in_progress[0].description,
        "validation of `tests` failed: `2ˆtestsˆfailed:ˆingest_dedupes,ˆresume_follows`"
    );
    assert_eq!(summary.active_epic_id, "EPIC-3");
    assert!(summary.suggested_next_steps[0].contains("lost its network"), "{:?}", summary.suggested_next_steps);
    let types: Vec<String> = events[1..4]
        .iter()
        .map(|event| match resume_event(event) {
            proto::resume_event::Event::Action(action) => action.action_type.clone(),
            other => panic!("expected an action, got {other:?}"),
        })
        .collect();
    assert_eq!(types, vec!["spawn", "commit", "validate"]);
    assert!(matches!(resume_event(&events[4]), proto::resume_event::Event::CaughtUp(_)));
}

#[tokio::test]
async fn resume_with_follow_streams_new_actions_of_the_project_once_with_heartbeats() {
    let mut config = TestServer::config();
    config.actions.follow_heartbeat_secs = 1;
    let server = TestServer::start_with(config).await;
    let mut client = client(&server).await;
    let session = start_session(&mut client, "lore", "agent-1").await;
    log(&mut client, action(&session, "plan", proto::Outcome::Success)).await.unwrap();

    let request = proto::ResumeRequest { session_id: session.session_id.clone(), follow: true, ..Default::default() };
    let mut stream = client.resume(request).await.unwrap().into_inner();
    // Summary, the one action, caught-up.
    for _ in 0..3 {
        stream.message().await.unwrap().unwrap();
    }

    let other_agent = start_session(&mut client, "lore", "agent-2").await;
    let elsewhere = start_session(&mut client, "other-project", "agent-1").await;
    let mut expected = Vec::new();
    for index in 0..3 {
        let next = action(if index == 1 { &other_agent } else { &session }, "tool_call", proto::Outcome::Success);
        expected.push(next.action_id.clone());
        log(&mut client, next).await.unwrap();
        log(&mut client, action(&elsewhere, "tool_call", proto::Outcome::Success)).await.unwrap();
    }

    let mut received = Vec::new();
    let mut heartbeats = 0;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while (received.len() < 3 || heartbeats == 0) && tokio::time::Instant::now() < deadline {
        let event = tokio::time::timeout(Duration::from_secs(5), stream.message())
            .await
            .expect("an event within 5 s")
            .unwrap()
            .unwrap();
        match resume_event(&event) {
            proto::resume_event::Event::Action(action) => received.push(action.action_id.clone()),
            proto::resume_event::Event::Heartbeat(_) => heartbeats += 1,
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(received, expected, "each new action of the project once, in order");
    assert!(heartbeats > 0);
}

#[tokio::test]
async fn resume_needs_a_project_or_a_known_session() {
    let (_server, mut client, _session) = session_fixture().await;
    let status = client.resume(proto::ResumeRequest::default()).await.unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument);
    assert!(status.message().starts_with("project: required"), "{status:?}");
    let status = client
        .resume(proto::ResumeRequest { session_id: Uuid::now_v7().to_string(), ..Default::default() })
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::NotFound);
}

async fn count_in(server: &TestServer, table: &str) -> i64 {
    sqlx::query_scalar(sqlx::AssertSqlSafe(format!("SELECT count(*) FROM {table}")))
        .fetch_one(server.pool())
        .await
        .unwrap()
}

#[tokio::test]
async fn retention_archives_old_months_drops_older_ones_and_keeps_chains_verifiable() {
    // Retention only when asked: the leader's scheduled pass, right after
    // the start, would race the passes this test makes.
    let mut config = TestServer::config();
    config.retention.interval_secs = 0;
    let server = TestServer::start_with(config).await;
    let mut client = client(&server).await;
    let session = start_session(&mut client, "lore", "agent-1").await;
    for days in [400, 200] {
        sqlx::query("SELECT lore_ensure_action_partition((now() - make_interval(days => $1))::date)")
            .bind(days)
            .execute(server.pool())
            .await
            .unwrap();
    }
    // A session that spans an archivable month and the live log.
    let mut old = action(&session, "plan", proto::Outcome::Success);
    old.occurred_at = Some(at_days_ago(200, 0));
    log(&mut client, old).await.unwrap();
    let mut recent = action(&session, "commit", proto::Outcome::Success);
    recent.occurred_at = Some(at_days_ago(10, 0));
    log(&mut client, recent).await.unwrap();
    // Sessionless actions: one old enough to drop, one in no partition at all.
    for occurred_at in [at_days_ago(400, 0), Timestamp { seconds: 978_307_200, nanos: 0 }] {
        let mut stray = action(&session, "deploy", proto::Outcome::Success);
        stray.session_id.clear();
        stray.occurred_at = Some(occurred_at);
        log(&mut client, stray).await.unwrap();
    }
    assert_eq!(count_in(&server, "actions_default").await, 1);

    let preview = client.run_retention(proto::RunRetentionRequest { dry_run: true }).await.unwrap().into_inner();
    assert_eq!(preview.archived.len(), 2, "{preview:?}");
    assert_eq!(preview.dropped.len(), 1, "{preview:?}");
    assert_eq!(count_in(&server, "actions").await, 4, "a dry run changes nothing");

    let applied = client.run_retention(proto::RunRetentionRequest { dry_run: false }).await.unwrap().into_inner();
    assert_eq!((applied.archived, applied.dropped), (preview.archived, preview.dropped.clone()));
    assert_eq!(count_in(&server, "actions").await, 1, "only the 10-day-old action stays live");
    assert_eq!(count_in(&server, "actions_archive").await, 1, "the 200-day-old action is archived");
    let dropped_table: Option<String> = sqlx::query_scalar("SELECT to_regclass($1)::text")
        .bind(&preview.dropped[0])
        .fetch_one(server.pool())
        .await
        .unwrap();
    assert_eq!(dropped_table, None);

    let chain = chain_of(&mut client, &session).await;
    assert!(chain.intact, "{chain:?}");
    assert_eq!(chain.checked, 2);

    let status = client.get_retention_status(proto::GetRetentionStatusRequest {}).await.unwrap().into_inner();
    assert_eq!((status.archive_after_days, status.drop_after_days), (90, 365));
    assert!(status.partitions.iter().any(|partition| partition.archived));
    assert!(status.archived.is_empty() && status.dropped.is_empty(), "nothing left to do: {status:?}");
}

#[tokio::test]
async fn concurrent_log_actions_sharing_transactions_are_each_answered_correctly() {
    let (server, client, session) = session_fixture().await;
    let actions: Vec<proto::Action> = (0..40).map(|_| action(&session, "tool_call", proto::Outcome::Success)).collect();
    // Every action is sent twice, by different tasks at the same time.
    let tasks: Vec<_> = actions
        .iter()
        .chain(actions.iter())
        .cloned()
        .map(|next| {
            let mut client = client.clone();
            tokio::spawn(async move {
                let id = next.action_id.clone();
                (id, log(&mut client, next).await.unwrap().ack.unwrap().duplicate)
            })
        })
        .collect();
    let mut answers: std::collections::HashMap<String, Vec<bool>> = std::collections::HashMap::new();
    for task in tasks {
        let (id, duplicate) = task.await.unwrap();
        answers.entry(id).or_default().push(duplicate);
    }
    for (id, mut flags) in answers {
        flags.sort_unstable();
        assert_eq!(flags, vec![false, true], "action {id}: exactly one copy stored, the other a duplicate");
    }
    assert_eq!(count_actions(&server).await, 40);
    let mut client = client;
    let chain = chain_of(&mut client, &session).await;
    assert!(chain.intact, "{chain:?}");
    assert_eq!(chain.checked, 40);
}
