//! PeriodicReport over real gRPC and a real PostgreSQL: a day with
//! deployments, failures, agents, a QA failure and a draft reads back with
//! every section; the fleet-wide report; and bad input.

use chrono::{Duration, Utc};
use lore_proto::v1 as proto;
use lore_proto::v1::action_service_client::ActionServiceClient;
use lore_proto::v1::knowledge_service_client::KnowledgeServiceClient;
use lore_proto::v1::qa_learning_service_client::QaLearningServiceClient;
use lore_server::testing::TestServer;
use tonic::Code;
use uuid::Uuid;

#[tokio::test]
async fn a_day_reads_back_with_every_section() {
    let server = TestServer::start().await;
    let mut actions = ActionServiceClient::new(server.channel().await);
    let yesterday = (Utc::now() - Duration::days(1)).date_naive();
    let at = |hour: u32| {
        let time = yesterday.and_hms_opt(hour, 0, 0).unwrap().and_utc();
        prost_types::Timestamp { seconds: time.timestamp(), nanos: 0 }
    };
    let session = actions
        .start_session(proto::StartSessionRequest {
            project: "shop".into(),
            agent_id: "agent-<b>7</b>".into(),
            started_at: Some(at(1)),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .session
        .unwrap();
    let steps = [
        ("plan", proto::Outcome::Success, "", 2),
        ("deploy", proto::Outcome::Failure, "rollout stuck | at 3 am", 3),
        ("deploy", proto::Outcome::Success, "", 4),
        ("commit", proto::Outcome::Success, "", 5),
    ];
    for (action_type, outcome, error, hour) in steps {
        let action = proto::Action {
            action_id: Uuid::now_v7().to_string(),
            session_id: session.session_id.clone(),
            project: "shop".into(),
            action_type: action_type.into(),
            outcome: outcome.into(),
            error: error.into(),
            epic_id: "E-9".into(),
            occurred_at: Some(at(hour)),
            ..Default::default()
        };
        actions.log_action(proto::LogActionRequest { action: Some(action) }).await.unwrap();
    }
    QaLearningServiceClient::new(server.channel().await)
        .capture_failure(proto::CaptureFailureRequest {
            project: "shop".into(),
            task: Some(proto::Task { task_id: "T-1".into(), ..Default::default() }),
            error_messages: vec!["TypeError: x is undefined at cart.ts:3:1".into()],
            occurred_at: Some(at(6)),
            ..Default::default()
        })
        .await
        .unwrap();
    KnowledgeServiceClient::new(server.channel().await)
        .create_draft(proto::CreateDraftRequest {
            draft_id: Uuid::now_v7().to_string(),
            project: "shop".into(),
            epic_id: "E-9".into(),
            ..Default::default()
        })
        .await
        .unwrap();

    let day = yesterday.format("%Y-%m-%d").to_string();
    let request = |project: &str, period: proto::ReportPeriod, day: &str| proto::PeriodicReportRequest {
        project: project.into(),
        period: period.into(),
        day: day.into(),
    };
    let report = actions.periodic_report(request("shop", proto::ReportPeriod::Daily, &day)).await.unwrap().into_inner();
    assert_eq!(report.title, format!("Daily report of shop: {day}"));
    let markdown = &report.markdown;
    for section in [
        "## Deployments",
        "## Failures",
        "## Top actions",
        "## Active agents",
        "## QA summary",
        "## Drafts waiting for review",
    ] {
        assert!(markdown.contains(section), "{section} missing:\n{markdown}");
    }
    assert!(markdown.contains("- **Actions:** 4 (75.0% succeeded, 1 failed)"), "{markdown}");
    assert!(markdown.contains("- **Deployments:** 2"), "{markdown}");
    assert!(markdown.contains("rollout stuck \\| at 3 am"), "a pipe in an error does not break the table:\n{markdown}");
    assert!(markdown.contains("| deploy | 2 | 50.0% | 1 |"), "{markdown}");
    assert!(markdown.contains("| agent-<b>7</b> | 1 | 4 | 1 |"), "{markdown}");
    assert!(markdown.contains("- **Failures captured:** 1 (0 resolved)"), "{markdown}");
    assert!(markdown.contains("(`lore drafts show "), "{markdown}");

    // The week holds the day; the fleet has one row per project.
    let weekly =
        actions.periodic_report(request("shop", proto::ReportPeriod::Weekly, &day)).await.unwrap().into_inner();
    assert!(weekly.title.starts_with("Weekly report of shop: "), "{}", weekly.title);
    assert!(weekly.markdown.contains("- **Actions:** 4 "), "{}", weekly.markdown);
    let fleet = actions.periodic_report(request("", proto::ReportPeriod::Daily, &day)).await.unwrap().into_inner();
    assert!(fleet.markdown.contains("| shop | 4 | 1 | 1 | 1 | 1 |"), "{}", fleet.markdown);

    // Bad input names its field.
    let refused = |status: tonic::Status, field: &str| {
        assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
        assert!(status.message().starts_with(field), "{status:?}");
    };
    refused(
        actions.periodic_report(request("shop", proto::ReportPeriod::Unspecified, "")).await.unwrap_err(),
        "period",
    );
    let mut wrong_enum = request("shop", proto::ReportPeriod::Daily, "");
    wrong_enum.period = 9;
    refused(actions.periodic_report(wrong_enum).await.unwrap_err(), "period");
    refused(
        actions.periodic_report(request("shop", proto::ReportPeriod::Daily, "23/11/2026")).await.unwrap_err(),
        "day",
    );
    refused(actions.periodic_report(request("sh op", proto::ReportPeriod::Daily, "")).await.unwrap_err(), "project");
}
