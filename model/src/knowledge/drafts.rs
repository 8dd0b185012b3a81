//! Drafts of learnings: where one came from, its review and its status.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::trust::Origin;

/// Where a draft's actions come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DraftSource {
    Epic(String),
    Session(Uuid),
}

impl DraftSource {
    /// How a draft names where it came from: "Epic E-12", "Session 0190a3b4".
    pub fn label(&self) -> String {
        match self {
            Self::Epic(epic) => format!("Epic {epic}"),
            Self::Session(session) => format!("Session {}", short_id(session)),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::IntoStaticStr, strum::EnumString)]
#[strum(serialize_all = "snake_case")]
pub enum DraftStatus {
    Pending,
    Approved,
    Rejected,
    /// Held by the injection screen; pending once a person releases it.
    Quarantined,
}

impl crate::actions::StoredName for DraftStatus {}

#[derive(Debug, Clone, PartialEq)]
pub struct Draft {
    pub draft_id: Uuid,
    pub project: String,
    pub source: DraftSource,
    pub title: String,
    pub category: String,
    pub body: String,
    pub tags: Vec<String>,
    pub status: DraftStatus,
    pub reviewer: Option<String>,
    pub review_note: String,
    pub entry_id: Option<Uuid>,
    pub created_at: DateTime<Utc>,
    pub reviewed_at: Option<DateTime<Utc>>,
    /// Who asked for it (an agent's proposal), or Lore (drafted from the
    /// log by itself).
    pub origin: Origin,
}

/// What a draft proposes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Composed {
    pub title: String,
    pub category: String,
    pub body: String,
    pub tags: Vec<String>,
}

/// A lesson as an agent puts it in its own words (MCP `propose_lesson`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Proposal {
    pub title: String,
    pub problem: String,
    pub solution: String,
    pub category: String,
    pub tags: Vec<String>,
}

/// A reviewer's decision, with the edits an approval applies first.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    Approve(DraftEdits),
    Reject,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct DraftEdits {
    pub title: Option<String>,
    pub category: Option<String>,
    pub body: Option<String>,
    pub tags: Option<Vec<String>>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Review {
    pub draft_id: Uuid,
    pub decision: Decision,
    pub reviewer: String,
    pub note: String,
}

/// The first 8 hex digits of an id, as drafts quote them.
pub fn short_id(id: &Uuid) -> String {
    id.simple().to_string()[..8].to_owned()
}
