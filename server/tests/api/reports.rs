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

/// The leader stores yesterday's reports once; they read back as they were
/// stored (an action that arrives later does not rewrite them), with their
/// history, and are exported to the folder when one is set.
#[tokio::test]
async fn the_leader_stores_each_report_once_and_it_reads_back_with_its_history() {
    let folder = tempfile::tempdir().unwrap();
    let mut config = TestServer::config();
    config.reports.interval_secs = 1;
    config.reports.folder = Some(folder.path().to_owned());
    let server = TestServer::start_with(config).await;
    let mut actions = ActionServiceClient::new(server.channel().await);
    let yesterday = (Utc::now() - Duration::days(1)).date_naive();
    let day = yesterday.format("%Y-%m-%d").to_string();
    let at =
        prost_types::Timestamp { seconds: yesterday.and_hms_opt(12, 0, 0).unwrap().and_utc().timestamp(), nanos: 0 };
    let log = |action_type: &str| proto::LogActionRequest {
        action: Some(proto::Action {
            action_id: Uuid::now_v7().to_string(),
            project: "shop".into(),
            agent_id: "agent-1".into(),
            action_type: action_type.into(),
            outcome: proto::Outcome::Success.into(),
            occurred_at: Some(at),
            ..Default::default()
        }),
    };
    actions.log_action(log("deploy")).await.unwrap();

    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let stored = loop {
        let stored: Vec<(String, String)> =
            sqlx::query_as("SELECT period, project FROM periodic_reports WHERE period = 'daily' ORDER BY project")
                .fetch_all(server.pool())
                .await
                .unwrap();
        if stored.len() == 2 || std::time::Instant::now() > deadline {
            break stored;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    };
    assert_eq!(stored, [("daily".to_owned(), String::new()), ("daily".to_owned(), "shop".to_owned())]);

    // Read as stored: a late action does not change yesterday's report.
    actions.log_action(log("commit")).await.unwrap();
    let daily = proto::PeriodicReportRequest {
        project: "shop".into(),
        period: proto::ReportPeriod::Daily.into(),
        day: String::new(),
    };
    let report = actions.periodic_report(daily.clone()).await.unwrap().into_inner();
    assert!(report.written_at.is_some(), "{report:?}");
    assert_eq!(report.title, format!("Daily report of shop: {day}"));
    assert!(report.markdown.contains("- **Actions:** 1 "), "{}", report.markdown);
    let exported = folder.path().join(format!("projects/shop/daily/{day}.md"));
    assert_eq!(std::fs::read_to_string(&exported).unwrap(), report.markdown);
    assert!(folder.path().join(format!("fleet/daily/{day}.md")).exists());

    // A day nothing stored is rendered for the request, and says so.
    let earlier = (yesterday - Duration::days(3)).format("%Y-%m-%d").to_string();
    let rendered =
        actions.periodic_report(proto::PeriodicReportRequest { day: earlier, ..daily }).await.unwrap().into_inner();
    assert!(rendered.written_at.is_none(), "{rendered:?}");

    // The history, newest first, without the text.
    let list = |project: &str, limit: u32, before: &str| proto::ListPeriodicReportsRequest {
        project: project.into(),
        period: proto::ReportPeriod::Daily.into(),
        before: before.into(),
        limit,
    };
    let listed = actions.list_periodic_reports(list("shop", 0, "")).await.unwrap().into_inner().reports;
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(listed[0].title, report.title);
    assert!(listed[0].markdown.is_empty() && listed[0].written_at.is_some());
    let fleet = actions.list_periodic_reports(list("", 0, "")).await.unwrap().into_inner().reports;
    assert_eq!(fleet.len(), 1, "{fleet:?}");
    assert!(actions.list_periodic_reports(list("shop", 0, &day)).await.unwrap().into_inner().reports.is_empty());

    let refused = |status: tonic::Status, field: &str| {
        assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
        assert!(status.message().starts_with(field), "{status:?}");
    };
    refused(actions.list_periodic_reports(list("shop", 400, "")).await.unwrap_err(), "limit");
    refused(actions.list_periodic_reports(list("shop", 0, "yesterday")).await.unwrap_err(), "before");
    refused(actions.list_periodic_reports(list("sh op", 0, "")).await.unwrap_err(), "project");
    let mut no_period = list("shop", 0, "");
    no_period.period = 0;
    refused(actions.list_periodic_reports(no_period).await.unwrap_err(), "period");
}
