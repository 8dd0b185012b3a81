//! Domain types of the action log. No tonic, no sqlx: the gRPC layer
//! converts protos into these, the store persists them.

use chrono::{DateTime, Utc};
use serde_json::Value;
use uuid::Uuid;

/// The outcome of an action (closed set; stored as text).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Outcome {
    Success,
    Failure,
    Blocked,
    InProgress,
}

impl Outcome {
    pub const ALL: [Outcome; 4] = [Outcome::Success, Outcome::Failure, Outcome::Blocked, Outcome::InProgress];

    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Success => "success",
            Outcome::Failure => "failure",
            Outcome::Blocked => "blocked",
            Outcome::InProgress => "in_progress",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|outcome| outcome.as_str() == text)
    }
}

/// What kind of work a session is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionKind {
    Work,
    Planning,
    Qa,
    Supervisor,
    Interactive,
}

impl SessionKind {
    pub const ALL: [SessionKind; 5] =
        [SessionKind::Work, SessionKind::Planning, SessionKind::Qa, SessionKind::Supervisor, SessionKind::Interactive];

    pub fn as_str(self) -> &'static str {
        match self {
            SessionKind::Work => "work",
            SessionKind::Planning => "planning",
            SessionKind::Qa => "qa",
            SessionKind::Supervisor => "supervisor",
            SessionKind::Interactive => "interactive",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|kind| kind.as_str() == text)
    }
}

/// Where a session is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionStatus {
    Active,
    Ended,
    Disconnected,
}

impl SessionStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            SessionStatus::Active => "active",
            SessionStatus::Ended => "ended",
            SessionStatus::Disconnected => "disconnected",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        [SessionStatus::Active, SessionStatus::Ended, SessionStatus::Disconnected]
            .into_iter()
            .find(|status| status.as_str() == text)
    }
}

/// Why a session ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndReason {
    Normal,
    NetworkDisconnect,
    Timeout,
    Error,
    Cancelled,
}

impl EndReason {
    pub const ALL: [EndReason; 5] =
        [EndReason::Normal, EndReason::NetworkDisconnect, EndReason::Timeout, EndReason::Error, EndReason::Cancelled];

    pub fn as_str(self) -> &'static str {
        match self {
            EndReason::Normal => "normal",
            EndReason::NetworkDisconnect => "network_disconnect",
            EndReason::Timeout => "timeout",
            EndReason::Error => "error",
            EndReason::Cancelled => "cancelled",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|reason| reason.as_str() == text)
    }
}

/// A session to open.
#[derive(Debug, Clone, PartialEq)]
pub struct NewSession {
    pub session_id: Uuid,
    pub project: String,
    pub agent_id: String,
    pub supervisor_type: String,
    pub kind: SessionKind,
    /// Sanitized metadata object.
    pub metadata: Value,
    pub started_at: DateTime<Utc>,
}

/// A session as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct Session {
    pub session_id: Uuid,
    pub project: String,
    pub agent_id: String,
    pub supervisor_type: String,
    pub kind: SessionKind,
    pub metadata: Value,
    pub status: SessionStatus,
    pub started_at: DateTime<Utc>,
    pub last_activity_at: DateTime<Utc>,
    pub ended_at: Option<DateTime<Utc>>,
    pub end_reason: Option<EndReason>,
    pub summary: String,
    pub action_count: i64,
}

/// An action to store: validated and sanitized.
#[derive(Debug, Clone, PartialEq)]
pub struct NewAction {
    pub action_id: Uuid,
    /// Client clock, truncated to microseconds (PostgreSQL's precision), so
    /// the hash computed before the insert matches the row read back.
    pub occurred_at: DateTime<Utc>,
    pub project: String,
    pub session_id: Option<Uuid>,
    pub agent_id: String,
    pub action_type: String,
    pub category: String,
    /// Sanitized JSON object.
    pub context: Value,
    pub outcome: Outcome,
    pub error: String,
    pub duration_ms: i64,
    pub parent_action_id: Option<Uuid>,
    pub epic_id: String,
    pub issue_id: String,
    pub redaction_count: i32,
    pub truncated: bool,
}

/// An action as stored, with its place in the hash chain.
#[derive(Debug, Clone, PartialEq)]
pub struct Action {
    pub action: NewAction,
    pub received_at: DateTime<Utc>,
    pub chain_seq: Option<i64>,
    pub prev_hash: Option<Vec<u8>>,
    pub chain_hash: Vec<u8>,
}

/// Why an action was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RejectionKind {
    /// The action itself is malformed.
    Invalid,
    /// It names a session that does not exist (in its project).
    NotFound,
    /// Its project is outside the caller's scope.
    OutOfScope,
}

/// Why one action of a batch was refused. Permanent: resending the same
/// action gets the same answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejection {
    /// Position in the batch as sent.
    pub index: usize,
    pub action_id: String,
    pub kind: RejectionKind,
    /// The offending field of the action, e.g. `session_id`.
    pub field: &'static str,
    pub reason: String,
}

impl Rejection {
    /// "field: reason", as clients see it.
    pub fn message(&self) -> String {
        format!("{}: {}", self.field, self.reason)
    }
}

/// The result of storing a batch.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BatchOutcome {
    pub stored: u32,
    pub duplicates: u32,
    pub rejected: Vec<Rejection>,
    /// Positions (in the batch as given) of the actions that were
    /// duplicates.
    pub duplicate_indexes: Vec<usize>,
}
