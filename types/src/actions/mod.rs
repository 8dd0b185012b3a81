//! Domain types of the action log. No tonic, no sqlx: the gRPC layer
//! converts protos into these, the store persists them.

pub mod chain;
pub mod query;

/// Bounds on what a request of the action log may carry or ask for.
pub mod limits {
    /// Nesting deeper than this is refused: no real context needs it, and
    /// deep recursion is how a hostile message exhausts a stack.
    pub const MAX_JSON_DEPTH: usize = 32;
    /// A context whose encoding is larger than this is refused outright;
    /// smaller ones over the soft limit are kept as a preview.
    pub const MAX_RAW_CONTEXT_BYTES: usize = 1024 * 1024;
    /// Actions one GetRecentActions returns.
    pub const MAX_RECENT_LIMIT: u32 = 500;
    /// Rows one page of a listing holds.
    pub const MAX_PAGE_SIZE: u32 = 500;
    /// Rows one export chunk holds.
    pub const MAX_CHUNK_ROWS: u32 = 5000;
}

use chrono::{DateTime, Utc};
use serde_json::Value;
use uuid::Uuid;

/// A closed set stored as text: its snake_case variant names (via strum).
pub trait StoredName: Sized + Copy + Into<&'static str> + std::str::FromStr {
    /// The name stored in PostgreSQL.
    fn as_str(&self) -> &'static str {
        (*self).into()
    }

    fn parse(text: &str) -> Option<Self> {
        text.parse().ok()
    }
}

/// The outcome of an action (closed set; stored as text).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, strum::IntoStaticStr, strum::EnumString)]
#[strum(serialize_all = "snake_case")]
pub enum Outcome {
    Success,
    Failure,
    Blocked,
    InProgress,
}

impl StoredName for Outcome {}

/// What kind of work a session is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::IntoStaticStr, strum::EnumString)]
#[strum(serialize_all = "snake_case")]
pub enum SessionKind {
    Work,
    Planning,
    Qa,
    Supervisor,
    Interactive,
}

impl StoredName for SessionKind {}

/// Where a session is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::IntoStaticStr, strum::EnumString)]
#[strum(serialize_all = "snake_case")]
pub enum SessionStatus {
    Active,
    Ended,
    Disconnected,
}

impl StoredName for SessionStatus {}

/// Why a session ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::IntoStaticStr, strum::EnumString)]
#[strum(serialize_all = "snake_case")]
pub enum EndReason {
    Normal,
    NetworkDisconnect,
    Timeout,
    Error,
    Cancelled,
}

impl StoredName for EndReason {}

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
    /// An ended or disconnected session of this id becomes active again
    /// (an agent session resumed after it ended).
    pub reopen: bool,
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

/// Counts of one bucket of an activity report.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Counts {
    pub key: String,
    pub total: i64,
    pub succeeded: i64,
    pub failed: i64,
    pub blocked: i64,
}

impl Counts {
    /// succeeded / (succeeded + failed + blocked); in-progress actions have
    /// not finished and do not count either way.
    pub fn success_rate(&self) -> f64 {
        let finished = self.succeeded + self.failed + self.blocked;
        if finished == 0 { 0.0 } else { self.succeeded as f64 / finished as f64 }
    }
}

/// The aggregates of an activity report.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ActivityCounts {
    pub totals: Counts,
    pub by_day: Vec<Counts>,
    pub by_action_type: Vec<Counts>,
    pub by_outcome: Vec<Counts>,
}
