//! What a resuming agent needs to know about the session it lost: where it
//! stopped, what it left unfinished, what to do next.

use serde_json::Value;

use lore_screen::fence::quoted;
use lore_types::actions::{Action, EndReason, Outcome, Session, SessionStatus};

/// Kinds of unfinished work a session can leave behind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkKind {
    /// A spawn still in progress: something may still be running.
    SpawnRunning,
    /// The last validation failed and none passed since.
    ValidationFailed,
    /// A commit with no successful deploy after it.
    CommitNotDeployed,
    /// Something blocked and not done since.
    Blocked,
    /// Any other action still in progress.
    InProgress,
}

/// One piece of unfinished work.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkItem {
    pub kind: WorkKind,
    pub action: Action,
    pub description: String,
}

/// The opening message of a resume.
#[derive(Debug, Clone, PartialEq)]
pub struct ResumeSummary {
    pub session: Session,
    pub last_action: Option<Action>,
    /// Most recent first.
    pub work_in_progress: Vec<WorkItem>,
    pub suggested_next_steps: Vec<String>,
    pub active_epic_id: Option<String>,
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or_default().trim()
}

/// What an action is about, for sentences: its category, or a task or file
/// named in its context, or its type. It is what the agent wrote, so it is
/// quoted as data (see `trust::quoted`): a summary is read by the next
/// agent.
fn subject(action: &Action) -> String {
    let action = &action.action;
    let from_context = ["task", "target", "name", "file", "service"]
        .iter()
        .find_map(|key| action.context.get(*key).and_then(Value::as_str));
    quoted(match (from_context, action.category.is_empty()) {
        (Some(named), _) => named,
        (None, false) => &action.category,
        (None, true) => &action.action_type,
    })
}

/// True when `later` closes the in-progress `open` action: it names `open`
/// as its parent, or is the same kind of action (type and category) and
/// finished.
fn closes(later: &Action, open: &Action) -> bool {
    let (later, open) = (&later.action, &open.action);
    later.parent_action_id == Some(open.action_id)
        || (later.action_type == open.action_type
            && later.category == open.category
            && later.outcome != Outcome::InProgress)
}

/// Reads the session's actions (oldest first) and says what is unfinished.
pub fn summarize(session: Session, actions: &[Action]) -> ResumeSummary {
    let mut work = Vec::new();
    for (index, action) in actions.iter().enumerate() {
        let later = &actions[index + 1..];
        let item = &action.action;
        match (item.action_type.as_str(), item.outcome) {
            (_, Outcome::InProgress) if !later.iter().any(|next| closes(next, action)) => {
                let (kind, description) = if item.action_type == "spawn" {
                    (WorkKind::SpawnRunning, format!("spawn of {} is still in progress", subject(action)))
                } else {
                    (WorkKind::InProgress, format!("{} of {} is still in progress", item.action_type, subject(action)))
                };
                work.push(WorkItem { kind, action: action.clone(), description });
            }
            ("validate", Outcome::Failure)
                if !later
                    .iter()
                    .any(|next| next.action.action_type == "validate" && next.action.outcome == Outcome::Success) =>
            {
                let failures = if item.error.is_empty() {
                    "no error recorded".to_owned()
                } else {
                    quoted(first_line(&item.error))
                };
                work.push(WorkItem {
                    kind: WorkKind::ValidationFailed,
                    action: action.clone(),
                    description: format!("validation of {} failed: {failures}", subject(action)),
                });
            }
            ("commit", Outcome::Success)
                if !later
                    .iter()
                    .any(|next| next.action.action_type == "deploy" && next.action.outcome == Outcome::Success)
                    && !later
                        .iter()
                        .any(|next| next.action.action_type == "commit" && next.action.outcome == Outcome::Success) =>
            {
                let commit = item.context.get("sha").or_else(|| item.context.get("commit")).and_then(Value::as_str);
                work.push(WorkItem {
                    kind: WorkKind::CommitNotDeployed,
                    action: action.clone(),
                    description: format!(
                        "commit {} is not deployed",
                        quoted(commit.unwrap_or(&item.action_id.to_string()))
                    ),
                });
            }
            (_, Outcome::Blocked)
                if !later.iter().any(|next| {
                    next.action.action_type == item.action_type && next.action.outcome == Outcome::Success
                }) =>
            {
                let reason = if item.error.is_empty() {
                    String::new()
                } else {
                    format!(": {}", quoted(first_line(&item.error)))
                };
                work.push(WorkItem {
                    kind: WorkKind::Blocked,
                    action: action.clone(),
                    description: format!("{} of {} is blocked{reason}", item.action_type, subject(action)),
                });
            }
            _ => {}
        }
    }
    work.reverse();

    let active_epic_id =
        actions.iter().rev().map(|action| &action.action.epic_id).find(|epic| !epic.is_empty()).cloned();
    let suggested_next_steps = next_steps(&session, &work, active_epic_id.as_deref());
    ResumeSummary {
        session,
        last_action: actions.last().cloned(),
        work_in_progress: work,
        suggested_next_steps,
        active_epic_id,
    }
}

/// The first next step of a session that is no longer active. A briefing
/// leaves it out: the agent it briefs has started its new session.
pub const START_A_NEW_SESSION: &str = "Start a new session";
/// The next step when the last session left nothing to pick up.
pub const NOTHING_UNFINISHED: &str = "Nothing was left unfinished: pick up the next task.";

fn next_steps(session: &Session, work: &[WorkItem], epic: Option<&str>) -> Vec<String> {
    let mut steps = Vec::new();
    if session.status != SessionStatus::Active || session.end_reason.is_some() {
        let why = match session.end_reason {
            Some(EndReason::NetworkDisconnect) => "lost its network",
            Some(EndReason::Timeout) => "stopped heartbeating",
            Some(EndReason::Error) => "ended on an error",
            Some(EndReason::Cancelled) => "was cancelled",
            Some(EndReason::Normal) => "ended normally",
            None => "is no longer active",
        };
        steps.push(format!("{START_A_NEW_SESSION}: the previous one {why}."));
    }
    for item in work {
        let subject = subject(&item.action);
        steps.push(match item.kind {
            WorkKind::SpawnRunning => {
                format!("Check whether the spawned {subject} is still running before spawning it again.")
            }
            WorkKind::ValidationFailed => format!("Fix the failing validation of {subject}, then run it again."),
            WorkKind::CommitNotDeployed => "Deploy the last commit, or confirm it should not be deployed.".to_owned(),
            WorkKind::Blocked => format!("Resolve what blocks {} of {subject}.", item.action.action.action_type),
            WorkKind::InProgress => {
                format!("Finish or re-run {} of {subject}.", item.action.action.action_type)
            }
        });
    }
    if let Some(epic) = epic {
        steps.push(format!("Continue epic {}.", quoted(epic)));
    }
    if work.is_empty() && epic.is_none() {
        steps.push(NOTHING_UNFINISHED.to_owned());
    }
    steps
}

#[cfg(test)]
mod tests;
