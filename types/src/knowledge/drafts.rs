//! Drafts of learnings: where one came from, its review and its status.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::limits::{MAX_BODY_BYTES, MAX_CATEGORY_CHARS, MAX_KEY_CHARS, MAX_TAG_CHARS, MAX_TAGS, MAX_TITLE_CHARS};
use crate::trust::Origin;
use crate::validate::{self, FieldError, FieldResult};

/// A review's note is at most this long.
pub const MAX_REVIEW_NOTE_CHARS: usize = 4096;

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

/// What a reviewer chose, before the edits are checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Approve,
    Reject,
}

/// The edits a reviewer typed, as given.
#[derive(Debug, Clone, Copy, Default)]
pub struct SubmittedEdits<'a> {
    pub title: &'a str,
    pub category: &'a str,
    pub body: &'a str,
    pub tags: &'a [String],
}

impl Review {
    /// A reviewer's decision, checked: each failure names its field, and
    /// edits go only with an approval. `verdict` None: none was chosen.
    pub fn submitted(
        draft_id: &str,
        verdict: Option<Verdict>,
        reviewer: &str,
        note: &str,
        edits: SubmittedEdits<'_>,
    ) -> FieldResult<Self> {
        let draft_id = validate::required_uuid("draft_id", draft_id)?;
        let reviewer = validate::name("reviewer", reviewer, MAX_KEY_CHARS, true)?;
        let note = validate::text("note", note, MAX_REVIEW_NOTE_CHARS, false)?;
        let checked = DraftEdits {
            title: validate::optional_name("title", edits.title, MAX_TITLE_CHARS)?,
            category: validate::optional_name("category", edits.category, MAX_CATEGORY_CHARS)?
                .map(|value| value.to_lowercase()),
            body: Some(validate::text("body", edits.body, usize::MAX, false)?).filter(|body| !body.trim().is_empty()),
            tags: Some(validate::tags("tags", edits.tags, MAX_TAGS, MAX_TAG_CHARS)?).filter(|tags| !tags.is_empty()),
        };
        if let Some(body) = &checked.body
            && body.len() > MAX_BODY_BYTES
        {
            return Err(FieldError::new("body", format!("{} bytes, over the limit of {MAX_BODY_BYTES}", body.len())));
        }
        let decision = match verdict {
            None => return Err(FieldError::new("decision", "required")),
            Some(Verdict::Approve) => Decision::Approve(checked),
            Some(Verdict::Reject) if checked != DraftEdits::default() => {
                return Err(FieldError::new("decision", "edits (title, category, body, tags) only go with APPROVE"));
            }
            Some(Verdict::Reject) => Decision::Reject,
        };
        Ok(Review { draft_id, decision, reviewer, note })
    }
}

/// The first 8 hex digits of an id, as drafts quote them.
pub fn short_id(id: &Uuid) -> String {
    id.simple().to_string()[..8].to_owned()
}
