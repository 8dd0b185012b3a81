//! The requests hooks and MCP tools both send, built in one place so the
//! two ways an agent reaches Lore cannot drift apart: a briefing, the
//! capture of a failed check, and a task's result.

use lore_proto::v1 as proto;
use uuid::Uuid;

use crate::identity::Identity;

/// Now, as the wire carries time.
pub fn now() -> prost_types::Timestamp {
    let now = chrono::Utc::now();
    prost_types::Timestamp { seconds: now.timestamp(), nanos: now.timestamp_subsec_nanos() as i32 }
}

/// The task a session's failures belong to when it names none: the session
/// (as briefings deliver their warnings).
pub fn session_task(session_id: Uuid) -> String {
    format!("session:{session_id}")
}

/// A briefing of `task` for the agent of `identity` in `session_id`; the
/// caller sets what differs by surface (budget, what to leave out).
pub fn brief(identity: &Identity, session_id: Uuid, task: proto::BriefTask) -> proto::BriefRequest {
    proto::BriefRequest {
        project: identity.project.clone(),
        agent_id: identity.agent_id.clone(),
        session_id: session_id.to_string(),
        task: Some(task),
        ..Default::default()
    }
}

/// A check that failed, as an agent saw it.
pub struct FailedCheck<'a> {
    pub name: &'a str,
    /// Its whole output: the tail is kept, and the lines that say what
    /// failed become the messages Lore groups.
    pub output: &'a str,
    pub exit_code: i32,
}

/// The capture of a failed check of `task` in `session_id`; `files` are the
/// files the agent changed.
pub fn capture_failure(
    identity: &Identity,
    session_id: Uuid,
    failure_id: Uuid,
    task: proto::Task,
    check: &FailedCheck<'_>,
    files: Vec<String>,
) -> proto::CaptureFailureRequest {
    proto::CaptureFailureRequest {
        failure_id: failure_id.to_string(),
        project: identity.project.clone(),
        task: Some(task),
        session_id: session_id.to_string(),
        failed_checks: vec![proto::FailedCheck {
            name: check.name.to_owned(),
            output: crate::checks::tail(check.output),
            exit_code: check.exit_code,
        }],
        error_messages: crate::failure_lines::error_lines(check.output),
        files_modified: files,
        occurred_at: Some(now()),
        ..Default::default()
    }
}

/// A task's QA verdict after `check` ran: failed when it left `failure_id`,
/// passed otherwise.
pub fn task_result(
    project: &str,
    task_id: String,
    session_id: Uuid,
    check: &str,
    failure_id: Option<Uuid>,
) -> proto::RecordTaskResultRequest {
    let verdict = if failure_id.is_some() { proto::TaskVerdict::Failed } else { proto::TaskVerdict::Passed };
    proto::RecordTaskResultRequest {
        result_id: Uuid::now_v7().to_string(),
        project: project.to_owned(),
        task: Some(proto::Task { task_id, ..Default::default() }),
        session_id: session_id.to_string(),
        verdict: verdict.into(),
        checks: vec![proto::CheckResult { name: check.to_owned(), passed: failure_id.is_none(), ..Default::default() }],
        failure_ids: failure_id.iter().map(ToString::to_string).collect(),
        occurred_at: None,
    }
}
