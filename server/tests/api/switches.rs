//! The kill switches and warning acknowledgement over real gRPC: a switch
//! flipped on one replica holds on another at once (the settings table and
//! its notification), warnings off warns of nothing, learning off stores a
//! failure without grouping it, and an acknowledged warning counts in the
//! dashboard.

use std::time::Duration;

use lore_proto::v1 as proto;
use lore_proto::v1::qa_learning_service_client::QaLearningServiceClient;
use lore_server::testing::TestServer;
use tonic::Code;
use tonic::transport::Channel;
use uuid::Uuid;

type Qa = QaLearningServiceClient<Channel>;

fn failure(task_id: &str) -> proto::CaptureFailureRequest {
    let message = "thread 'main' panicked at db/migrate.rs:12: relation \"invoices\" does not exist";
    proto::CaptureFailureRequest {
        failure_id: Uuid::now_v7().to_string(),
        project: "switches".into(),
        task: Some(proto::Task {
            task_id: task_id.into(),
            title: "Add the invoices table".into(),
            files: vec!["db/migrate.rs".into()],
            ..Default::default()
        }),
        failed_checks: vec![proto::FailedCheck { name: "cargo test".into(), output: message.into(), exit_code: 101 }],
        error_messages: vec![message.into()],
        ..Default::default()
    }
}

async fn warnings(qa: &mut Qa, task_id: &str) -> Vec<proto::Warning> {
    let request = proto::GetWarningsRequest {
        project: "switches".into(),
        task: Some(proto::Task { task_id: task_id.into(), files: vec!["db/migrate.rs".into()], ..Default::default() }),
        ..Default::default()
    };
    qa.get_warnings(request).await.unwrap().into_inner().warnings
}

async fn set(qa: &mut Qa, warnings: Option<bool>, learning: Option<bool>) -> proto::Switches {
    let request = proto::SetSwitchesRequest { warnings_enabled: warnings, learning_enabled: learning };
    qa.set_switches(request).await.unwrap().into_inner()
}

/// What `check` answers, once it answers `want` (the other replica hears of
/// the change over a notification): within ten seconds, or the last answer.
async fn eventually<T: PartialEq + std::fmt::Debug, F: Future<Output = T>>(want: T, mut check: impl FnMut() -> F) -> T {
    let mut last = check().await;
    for _ in 0..100 {
        if last == want {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        last = check().await;
    }
    last
}

#[tokio::test]
async fn a_switch_flipped_on_one_replica_holds_on_the_other() {
    let first = TestServer::start().await;
    let second = first.sibling(TestServer::config()).await;
    let (mut one, mut other) =
        (QaLearningServiceClient::new(first.channel().await), QaLearningServiceClient::new(second.channel().await));
    for task in ["T-1", "T-2"] {
        one.capture_failure(failure(task)).await.unwrap();
    }
    assert_eq!(warnings(&mut other, "T-3").await.len(), 1, "the pattern warns, with both switches on");
    let on = other.get_switches(proto::GetSwitchesRequest {}).await.unwrap().into_inner();
    assert_eq!((on.warnings_enabled, on.learning_enabled), (true, true), "the config's values");

    // Warnings off on the first replica: the second warns of nothing.
    let switched = set(&mut one, Some(false), None).await;
    assert_eq!((switched.warnings_enabled, switched.learning_enabled), (false, true));
    let quiet = eventually(0, || {
        let mut other = other.clone();
        async move { warnings(&mut other, "T-4").await.len() }
    })
    .await;
    assert_eq!(quiet, 0, "the other replica stopped warning");
    // Asked before the change arrived, T-4 may have been warned; T-4b is not.
    assert!(warnings(&mut other, "T-4b").await.is_empty());
    let deliveries: i64 = sqlx::query_scalar("SELECT count(*) FROM qa_warning_deliveries WHERE task_id = 'T-4b'")
        .fetch_one(first.pool())
        .await
        .unwrap();
    assert_eq!(deliveries, 0, "nothing was delivered, not even held out");

    // Learning off on the second: a failure is stored, and joins no pattern.
    set(&mut other, None, Some(false)).await;
    let learning = eventually(false, || {
        let mut one = one.clone();
        async move { one.get_switches(proto::GetSwitchesRequest {}).await.unwrap().into_inner().learning_enabled }
    })
    .await;
    assert!(!learning, "the first replica holds learning off too");
    let captured = one.capture_failure(failure("T-5")).await.unwrap().into_inner();
    assert!(captured.links.is_empty(), "no pattern learned: {:?}", captured.links);
    let stored: i64 = sqlx::query_scalar("SELECT count(*) FROM qa_failures WHERE task_id = 'T-5'")
        .fetch_one(first.pool())
        .await
        .unwrap();
    assert_eq!(stored, 1, "the failure itself is kept");
    let remine =
        one.remine_project(proto::RemineProjectRequest { project: "switches".into(), window: 0 }).await.unwrap_err();
    assert_eq!(remine.code(), Code::FailedPrecondition);
    assert!(remine.message().contains("qa.learning.enabled"), "{}", remine.message());

    // Both back on: the next capture groups again, the next task is warned.
    set(&mut one, Some(true), Some(true)).await;
    let back = eventually(1, || {
        let mut other = other.clone();
        async move { warnings(&mut other, "T-6").await.len() }
    })
    .await;
    assert_eq!(back, 1);
    let grouped = one.capture_failure(failure("T-7")).await.unwrap().into_inner();
    assert_eq!(grouped.links.len(), 1);

    let empty = one.set_switches(proto::SetSwitchesRequest::default()).await.unwrap_err();
    assert_eq!(empty.code(), Code::InvalidArgument);
    assert!(empty.message().starts_with("warnings_enabled:"), "{}", empty.message());
}

#[tokio::test]
async fn an_acknowledged_warning_counts_once_in_the_dashboard_and_bad_ids_are_named() {
    let server = TestServer::start().await;
    let mut qa = QaLearningServiceClient::new(server.channel().await);
    for task in ["T-1", "T-2"] {
        qa.capture_failure(failure(task)).await.unwrap();
    }
    let shown = warnings(&mut qa, "T-3").await;
    assert_eq!(shown.len(), 1);
    let acknowledge = |ids: Vec<String>| proto::AcknowledgeWarningRequest { delivery_ids: ids, note: "ran it".into() };
    let first = qa.acknowledge_warning(acknowledge(vec![shown[0].delivery_id.clone()])).await.unwrap().into_inner();
    assert_eq!(first.acknowledged, 1);
    let again = qa.acknowledge_warning(acknowledge(vec![shown[0].delivery_id.clone()])).await.unwrap().into_inner();
    assert_eq!(again.acknowledged, 0, "once");
    let (at, note): (Option<chrono::DateTime<chrono::Utc>>, String) = sqlx::query_as(
        "SELECT acknowledged_at, acknowledgement FROM qa_warning_deliveries WHERE delivery_id = $1::uuid",
    )
    .bind(&shown[0].delivery_id)
    .fetch_one(server.pool())
    .await
    .unwrap();
    assert!(at.is_some());
    assert_eq!(note, "ran it");
    // The task passes: the acknowledged warning prevented its failure.
    qa.record_task_result(proto::RecordTaskResultRequest {
        result_id: Uuid::now_v7().to_string(),
        project: "switches".into(),
        task: Some(proto::Task { task_id: "T-3".into(), ..Default::default() }),
        verdict: proto::TaskVerdict::Passed.into(),
        ..Default::default()
    })
    .await
    .unwrap();
    let dashboard = qa
        .dashboard(proto::DashboardRequest { project: "switches".into(), ..Default::default() })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(dashboard.warnings_acknowledged, 1);
    assert_eq!(dashboard.acknowledged_effectiveness, 1.0);
    let comparison = dashboard.comparison.unwrap();
    assert_eq!(comparison.tasks_needed, None, "no held-out task yet: nothing to size");

    let unknown = Uuid::now_v7().to_string();
    let missing = qa.acknowledge_warning(acknowledge(vec![unknown.clone()])).await.unwrap_err();
    assert_eq!(missing.code(), Code::NotFound);
    assert!(missing.message().contains(&unknown), "{}", missing.message());
    for (ids, field) in [
        (vec![], "delivery_ids"),
        (vec!["not-a-uuid".to_owned()], "delivery_ids[0]"),
        ((0..101).map(|_| Uuid::now_v7().to_string()).collect(), "delivery_ids"),
    ] {
        let refused = qa.acknowledge_warning(acknowledge(ids)).await.unwrap_err();
        assert_eq!(refused.code(), Code::InvalidArgument, "{field}");
        assert!(refused.message().starts_with(field), "{}", refused.message());
    }
    let long =
        proto::AcknowledgeWarningRequest { delivery_ids: vec![shown[0].delivery_id.clone()], note: "x".repeat(2001) };
    let refused = qa.acknowledge_warning(long).await.unwrap_err();
    assert!(refused.message().starts_with("note"), "{}", refused.message());
}
