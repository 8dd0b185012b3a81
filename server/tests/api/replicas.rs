//! Reads that scale past one database, with a real streaming replica: a
//! primary of the test's own, a hot standby made from it with
//! `pg_basebackup -R`, and replay paused on the standby to make it lag on
//! purpose. Searches, reports, dashboards and exports read from the
//! replica while it keeps up; its lag never makes one of them lose a write
//! or answer beyond the lag allowed, and Resume right after LogAction reads
//! the primary.

use std::time::{Duration, Instant};

use lore_proto::v1 as proto;
use lore_proto::v1::action_service_client::ActionServiceClient;
use lore_proto::v1::qa_learning_service_client::QaLearningServiceClient;
use lore_server::testing::{Replicated, TestServer};
use sqlx::Connection as _;
use uuid::Uuid;

const MAX_LAG: Duration = Duration::from_millis(400);

async fn caught_up(primary: &sqlx::PgPool, standby: &mut sqlx::PgConnection) {
    lore_server::testing::caught_up(primary, standby, Duration::from_secs(20)).await;
}

fn action(session: &proto::Session, action_type: &str, outcome: proto::Outcome) -> proto::LogActionRequest {
    proto::LogActionRequest {
        action: Some(proto::Action {
            action_id: Uuid::now_v7().to_string(),
            session_id: session.session_id.clone(),
            project: "shop".into(),
            action_type: action_type.into(),
            outcome: outcome as i32,
            occurred_at: Some(lore_server::grpc::convert::to_timestamp(chrono::Utc::now())),
            ..Default::default()
        }),
    }
}

fn failure(message: &str) -> proto::CaptureFailureRequest {
    proto::CaptureFailureRequest {
        failure_id: Uuid::now_v7().to_string(),
        project: "shop".into(),
        task: Some(proto::Task {
            task_id: format!("T-{}", Uuid::now_v7()),
            title: "checkout".into(),
            ..Default::default()
        }),
        failed_checks: vec![proto::FailedCheck { name: "cargo test".into(), output: message.into(), exit_code: 1 }],
        error_messages: vec![message.into()],
        ..Default::default()
    }
}

async fn exported_ids(actions: &mut ActionServiceClient<tonic::transport::Channel>) -> Vec<String> {
    let request = proto::ExportRequest {
        project: "shop".into(),
        format: proto::ExportFormat::Jsonl as i32,
        ..Default::default()
    };
    let mut stream = actions.export(request).await.unwrap().into_inner();
    let mut ids = Vec::new();
    while let Some(chunk) = stream.message().await.unwrap() {
        for line in String::from_utf8(chunk.data).unwrap().lines() {
            let row: serde_json::Value = serde_json::from_str(line).unwrap();
            ids.push(row["action_id"].as_str().unwrap().to_owned());
        }
    }
    ids
}

async fn search_keys(knowledge: &mut crate::KnowledgeClient, text: &str) -> Vec<String> {
    let query = proto::SearchQuery { text: text.into(), limit: 5, ..Default::default() };
    knowledge
        .search(proto::SearchRequest { project: "shop".into(), query: Some(query), ..Default::default() })
        .await
        .unwrap()
        .into_inner()
        .hits
        .into_iter()
        .map(|hit| hit.entry.unwrap().key)
        .collect()
}

async fn dashboard_failures(qa: &mut QaLearningServiceClient<tonic::transport::Channel>) -> u64 {
    qa.dashboard(proto::DashboardRequest { project: "shop".into(), ..Default::default() })
        .await
        .unwrap()
        .into_inner()
        .failures
}

async fn report_total(
    actions: &mut ActionServiceClient<tonic::transport::Channel>,
    request: &proto::ActivityReportRequest,
) -> u64 {
    actions.activity_report(request.clone()).await.unwrap().into_inner().totals.unwrap().total
}

/// Transactions the standby has run for the database (its own reads).
async fn standby_transactions(standby: &mut sqlx::PgConnection, database: &str) -> i64 {
    sqlx::query_scalar("SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = $1")
        .bind(database)
        .fetch_one(standby)
        .await
        .unwrap()
}

#[tokio::test]
async fn reads_go_to_a_streaming_replica_and_its_lag_never_makes_one_lose_a_write() {
    // Commits wait for their WAL to be written (as in production), so the
    // standby receives it at once.
    let replicated = Replicated::start().await;
    let standby_url = replicated.standby_url();
    let Replicated { primary: _primary, standby, database } = replicated;
    let mut watcher = sqlx::PgConnection::connect(&standby_url).await.unwrap();
    let in_recovery: bool = sqlx::query_scalar("SELECT pg_is_in_recovery()").fetch_one(&mut watcher).await.unwrap();
    assert!(in_recovery, "the standby is a replica");

    let mut config = TestServer::config();
    config.database.read_urls = vec![standby_url.clone()];
    config.database.replica_max_lag_ms = MAX_LAG.as_millis() as u64;
    config.database.replica_wait_ms = 100;
    let name = database.name().to_owned();
    let primary_pool = database.pool.clone();
    let server = TestServer::start_on(config, database).await;
    let mut knowledge = crate::knowledge_client(&server).await;
    let mut actions = ActionServiceClient::new(server.channel().await);
    let mut qa = QaLearningServiceClient::new(server.channel().await);

    // Some of everything, replicated.
    let start = proto::StartSessionRequest { project: "shop".into(), agent_id: "agent-1".into(), ..Default::default() };
    let session = actions.start_session(start).await.unwrap().into_inner().session.unwrap();
    actions.log_action(action(&session, "plan", proto::Outcome::Success)).await.unwrap();
    let entry = crate::learning("shop", "KB-1", "Checkout totals round wrongly");
    knowledge.upsert_entry(proto::UpsertEntryRequest { entry: Some(entry) }).await.unwrap();
    qa.capture_failure(failure("assertion failed: total == 10.00")).await.unwrap();
    lore_server::testing::embedded(&primary_pool).await;
    caught_up(&primary_pool, &mut watcher).await;

    // A replica that keeps up takes the reads.
    let (replica_before, _) = server.reads.counts();
    let standby_before = standby_transactions(&mut watcher, &name).await;
    assert_eq!(search_keys(&mut knowledge, "checkout totals").await, ["KB-1"]);
    assert_eq!(dashboard_failures(&mut qa).await, 1);
    assert_eq!(exported_ids(&mut actions).await.len(), 1);
    let report = proto::ActivityReportRequest { project: "shop".into(), ..Default::default() };
    assert_eq!(report_total(&mut actions, &report).await, 1);
    let (replica_after, _) = server.reads.counts();
    assert!(replica_after >= replica_before + 4, "search, dashboard, export and report read the replica");
    let deadline = Instant::now() + Duration::from_secs(10);
    while standby_transactions(&mut watcher, &name).await <= standby_before + 4 {
        assert!(Instant::now() < deadline, "the standby ran none of those reads");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    // The replica stops replaying: it lags behind every write from now on.
    sqlx::query("SELECT pg_wal_replay_pause()").execute(&mut watcher).await.unwrap();
    let logged = actions.log_action(action(&session, "deploy", proto::Outcome::Failure)).await.unwrap().into_inner();
    let entry = proto::Entry {
        key: "KB-2".into(),
        project: "shop".into(),
        kind: proto::EntryKind::Learning as i32,
        title: "Okapi service rejects refunds".into(),
        ..Default::default()
    };
    knowledge.upsert_entry(proto::UpsertEntryRequest { entry: Some(entry) }).await.unwrap();
    qa.capture_failure(failure("refund rejected: okapi returned 409")).await.unwrap();
    let on_standby: i64 = sqlx::query_scalar("SELECT count(*) FROM knowledge_entries WHERE key = 'KB-2'")
        .fetch_one(&mut watcher)
        .await
        .unwrap();
    assert_eq!(on_standby, 0, "the standby really lags");

    // Reads that must see the writes see them at once.
    let mut resume = actions
        .resume(proto::ResumeRequest { session_id: session.session_id.clone(), ..Default::default() })
        .await
        .unwrap()
        .into_inner();
    let mut resumed = Vec::new();
    while let Some(event) = resume.message().await.unwrap() {
        if let Some(proto::resume_event::Event::Action(action)) = event.event {
            resumed.push(action.action_id);
        }
    }
    let logged_id = logged.ack.unwrap().id;
    assert!(resumed.contains(&logged_id), "Resume right after LogAction sees it");
    assert_eq!(search_keys(&mut knowledge, "okapi refunds").await[0], "KB-2", "search sees what its index holds");
    let exported = exported_ids(&mut actions).await;
    assert_eq!(exported.len(), 2, "the export loses nothing");
    assert!(exported.contains(&logged_id));
    // Reports and dashboards may be as old as the lag allowed, no older.
    tokio::time::sleep(MAX_LAG + Duration::from_millis(200)).await;
    assert_eq!(dashboard_failures(&mut qa).await, 2);
    assert_eq!(report_total(&mut actions, &report).await, 2);

    // Replaying again, the replica takes the reads back.
    sqlx::query("SELECT pg_wal_replay_resume()").execute(&mut watcher).await.unwrap();
    caught_up(&primary_pool, &mut watcher).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let (replica_before, primary_before) = server.reads.counts();
    assert_eq!(search_keys(&mut knowledge, "okapi refunds").await[0], "KB-2");
    assert_eq!(dashboard_failures(&mut qa).await, 2);
    let (replica_after, primary_after) = server.reads.counts();
    assert_eq!((replica_after - replica_before, primary_after - primary_before), (2, 0), "both from the replica");
    server.stop().await;
    drop(standby);
}
