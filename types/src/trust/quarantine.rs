//! What the review queue holds, and what people decide of it.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::Origin;
use crate::actions::StoredName;

/// The longest note a person may give with a decision (kept with it).
pub const MAX_NOTE_CHARS: usize = 2_000;

/// What kind of item was held.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, strum::IntoStaticStr, strum::EnumString)]
#[strum(serialize_all = "snake_case")]
pub enum ItemKind {
    /// One error message of a captured failure (part: its index).
    FailureMessage,
    /// A fix attempt's approach or summary.
    FixAttempt,
    /// A knowledge entry (lesson, gotcha, document).
    Entry,
    /// A draft lesson.
    Draft,
    /// A person's edit of a QA pattern.
    Pattern,
    /// An action whose text feeds resume summaries.
    Action,
    /// A session's summary (the agent's last answer).
    Session,
}

impl StoredName for ItemKind {}

#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::IntoStaticStr, strum::EnumString)]
#[strum(serialize_all = "snake_case")]
pub enum QuarantineStatus {
    Held,
    Released,
    Erased,
}

impl StoredName for QuarantineStatus {}

/// One held item.
#[derive(Debug, Clone, PartialEq)]
pub struct Quarantined {
    pub quarantine_id: Uuid,
    pub project: String,
    pub item_kind: ItemKind,
    pub item_id: Uuid,
    pub part: String,
    /// The text as it was; empty once erased.
    pub excerpt: String,
    pub reasons: Vec<String>,
    pub score: f64,
    pub origin: Origin,
    pub status: QuarantineStatus,
    pub caught_at: DateTime<Utc>,
    pub decided_at: Option<DateTime<Utc>>,
    pub decided_by: Option<String>,
    pub note: String,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct QuarantineFilter {
    pub project: String,
    /// `None`: every status.
    pub status: Option<QuarantineStatus>,
    pub item_kind: Option<ItemKind>,
}

/// A person's decision on a held item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// It is data after all: let it be injected.
    Release,
    /// Drop it for good.
    Erase,
}
