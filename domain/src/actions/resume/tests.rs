use chrono::{Duration, Utc};
use serde_json::json;
use uuid::Uuid;

use super::*;
use lore_types::actions::{NewAction, SessionKind};

fn session(status: SessionStatus, end_reason: Option<EndReason>) -> Session {
    Session {
        session_id: Uuid::now_v7(),
        project: "lore".into(),
        agent_id: "agent-1".into(),
        supervisor_type: String::new(),
        kind: SessionKind::Work,
        metadata: json!({}),
        status,
        started_at: Utc::now(),
        last_activity_at: Utc::now(),
        ended_at: None,
        end_reason,
        summary: String::new(),
        action_count: 0,
    }
}

/// Actions in order, one second apart.
fn log(steps: &[(&str, &str, Outcome)]) -> Vec<Action> {
    let start = Utc::now() - Duration::hours(1);
    steps
        .iter()
        .enumerate()
        .map(|(index, (action_type, category, outcome))| Action {
            action: NewAction {
                action_id: Uuid::now_v7(),
                occurred_at: start + Duration::seconds(index as i64),
                project: "lore".into(),
                session_id: None,
                agent_id: "agent-1".into(),
                action_type: (*action_type).into(),
                category: (*category).into(),
                context: json!({}),
                outcome: *outcome,
                error: if *outcome == Outcome::Failure { "3 tests failed\nmore".into() } else { String::new() },
                duration_ms: 10,
                parent_action_id: None,
                epic_id: String::new(),
                issue_id: String::new(),
                redaction_count: 0,
                truncated: false,
            },
            received_at: start,
            chain_seq: Some(index as i64 + 1),
            prev_hash: None,
            chain_hash: Vec::new(),
        })
        .collect()
}

fn kinds(summary: &ResumeSummary) -> Vec<WorkKind> {
    summary.work_in_progress.iter().map(|item| item.kind).collect()
}

#[test]
fn a_spawn_still_in_progress_is_unfinished_work() {
    let actions = log(&[("plan", "", Outcome::Success), ("spawn", "worker", Outcome::InProgress)]);
    let summary = summarize(session(SessionStatus::Disconnected, Some(EndReason::NetworkDisconnect)), &actions);
    assert_eq!(kinds(&summary), vec![WorkKind::SpawnRunning]);
    assert_eq!(summary.work_in_progress[0].description, "spawn of `worker` is still in progress");
    assert!(summary.suggested_next_steps[0].contains("lost its network"));
    assert!(summary.suggested_next_steps[1].contains("still running before spawning it again"));
    assert_eq!(summary.last_action.unwrap().action.action_type, "spawn");
}

#[test]
fn a_finished_spawn_is_not_unfinished_work() {
    let actions = log(&[("spawn", "worker", Outcome::InProgress), ("spawn", "worker", Outcome::Success)]);
    let summary = summarize(session(SessionStatus::Active, None), &actions);
    assert!(summary.work_in_progress.is_empty());
    assert_eq!(summary.suggested_next_steps, vec!["Nothing was left unfinished: pick up the next task."]);
}

#[test]
fn a_failed_validation_with_its_failures_is_unfinished_until_one_passes() {
    let failed = log(&[("commit", "", Outcome::Success), ("validate", "tests", Outcome::Failure)]);
    let summary = summarize(session(SessionStatus::Active, None), &failed);
    assert_eq!(kinds(&summary), vec![WorkKind::ValidationFailed, WorkKind::CommitNotDeployed]);
    assert_eq!(summary.work_in_progress[0].description, "validation of `tests` failed: `3ˆtestsˆfailed`");

    let fixed = log(&[("validate", "tests", Outcome::Failure), ("validate", "tests", Outcome::Success)]);
    assert!(summarize(session(SessionStatus::Active, None), &fixed).work_in_progress.is_empty());
}

#[test]
fn a_commit_not_yet_deployed_is_unfinished_until_a_deploy_succeeds() {
    let pending = log(&[("commit", "", Outcome::Success), ("deploy", "", Outcome::Failure)]);
    let mut actions = pending.clone();
    actions[0].action.context = json!({"sha": "3f78685"});
    let summary = summarize(session(SessionStatus::Active, None), &actions);
    assert_eq!(kinds(&summary), vec![WorkKind::CommitNotDeployed]);
    assert_eq!(summary.work_in_progress[0].description, "commit `3f78685` is not deployed");

    let deployed = log(&[("commit", "", Outcome::Success), ("deploy", "", Outcome::Success)]);
    assert!(summarize(session(SessionStatus::Active, None), &deployed).work_in_progress.is_empty());
}

#[test]
fn blocked_work_and_the_active_epic_are_reported() {
    let mut actions = log(&[("deploy", "prod", Outcome::Blocked), ("plan", "", Outcome::Success)]);
    actions[0].action.epic_id = "EPIC-7".into();
    actions[0].action.error = "waiting for approval".into();
    let summary = summarize(session(SessionStatus::Ended, Some(EndReason::Normal)), &actions);
    assert_eq!(kinds(&summary), vec![WorkKind::Blocked]);
    assert_eq!(summary.work_in_progress[0].description, "deploy of `prod` is blocked: `waitingˆforˆapproval`");
    assert_eq!(summary.active_epic_id.as_deref(), Some("EPIC-7"));
    assert_eq!(summary.suggested_next_steps.last().unwrap(), "Continue epic `EPIC-7`.");
}

#[test]
fn unfinished_work_is_listed_most_recent_first() {
    let actions = log(&[
        ("spawn", "worker", Outcome::InProgress),
        ("validate", "lint", Outcome::Failure),
        ("migrate", "db", Outcome::InProgress),
    ]);
    let summary = summarize(session(SessionStatus::Active, None), &actions);
    assert_eq!(kinds(&summary), vec![WorkKind::InProgress, WorkKind::ValidationFailed, WorkKind::SpawnRunning]);
}
