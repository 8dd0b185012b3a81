//! The real server's leader writes the daily report of a day with actions
//! into its reports folder, with every section, and the fleet's beside it.

use chrono::{Duration, Utc};
use lore_e2e::{ServerOptions, ServerProcess, TestDatabase};
use lore_proto::v1 as proto;
use lore_proto::v1::action_service_client::ActionServiceClient;
use uuid::Uuid;

#[tokio::test]
async fn the_daily_report_of_a_day_with_actions_is_written_by_itself() {
    let database = TestDatabase::new().await.unwrap();
    let folder = tempfile::tempdir().unwrap();
    let options = ServerOptions::with_database(&database.url)
        .env("LORE_REPORTS__FOLDER", folder.path().to_str().unwrap())
        .env("LORE_REPORTS__INTERVAL_SECS", "1");
    let server = ServerProcess::start(options).await.unwrap();
    let mut actions = ActionServiceClient::new(server.channel().await);
    let yesterday = (Utc::now() - Duration::days(1)).date_naive();
    let noon = yesterday.and_hms_opt(12, 0, 0).unwrap().and_utc();
    let session = lore_e2e::start_session(&mut actions, "shop", "agent-1").await;
    for (action_type, outcome) in [("deploy", proto::Outcome::Success), ("validate", proto::Outcome::Failure)] {
        let action = proto::Action {
            action_id: Uuid::now_v7().to_string(),
            session_id: session.session_id.clone(),
            project: "shop".into(),
            action_type: action_type.into(),
            outcome: outcome.into(),
            error: if outcome == proto::Outcome::Failure { "2 tests failed".into() } else { String::new() },
            occurred_at: Some(prost_types::Timestamp { seconds: noon.timestamp(), nanos: 0 }),
            ..Default::default()
        };
        actions.log_action(proto::LogActionRequest { action: Some(action) }).await.unwrap();
    }
    let day = yesterday.format("%Y-%m-%d").to_string();
    let report = written(folder.path().join("projects/shop/daily").join(format!("{day}.md"))).await;
    assert!(report.starts_with(&format!("# Daily report of shop: {day}")), "{report}");
    for section in [
        "## Deployments",
        "## Failures",
        "## Top actions",
        "## Active agents",
        "## QA summary",
        "## Drafts waiting for review",
    ] {
        assert!(report.contains(section), "{section} missing:\n{report}");
    }
    assert!(report.contains("2 tests failed"), "{report}");
    // The fleet's report is written after the projects'.
    let fleet = written(folder.path().join("fleet/daily").join(format!("{day}.md"))).await;
    assert!(fleet.contains("| shop | 2 | 1 |"), "{fleet}");
}

/// The file at `path` once the leader has written it (whole: reports are
/// written to a temporary file and renamed).
async fn written(path: std::path::PathBuf) -> String {
    let found = lore_e2e::eventually(|| {
        let path = path.clone();
        async move { std::fs::read_to_string(&path).ok() }
    })
    .await;
    found.unwrap_or_else(|| panic!("{} was not written within a minute", path.display()))
}
