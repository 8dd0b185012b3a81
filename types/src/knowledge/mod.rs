//! Knowledge entries as the domain sees them.

pub mod drafts;
pub mod rank;
pub mod vocabulary;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use uuid::Uuid;

use crate::actions::StoredName;
use crate::trust::{Origin, ReviewRecord, Trust};

/// Bounds on an entry's fields, the same for UpsertEntry and for indexed
/// documents.
pub mod limits {
    pub const MAX_TITLE_CHARS: usize = 512;
    pub const MAX_CATEGORY_CHARS: usize = 128;
    pub const MAX_KEY_CHARS: usize = 128;
    pub const MAX_SUMMARY_CHARS: usize = 4096;
    /// Bodies are markdown documents; larger ones are refused, not truncated.
    pub const MAX_BODY_BYTES: usize = 1024 * 1024;
    pub const MAX_TAGS: usize = 64;
    pub const MAX_TAG_CHARS: usize = 64;
    pub const MAX_LIST_ITEMS: usize = 100;
    pub const MAX_ITEM_CHARS: usize = 2000;
    pub const MAX_SOLUTIONS: usize = 50;
    pub const MAX_SOLUTION_CHARS: usize = 10_000;
    /// Symptoms (error messages) and root causes of an entry.
    pub const MAX_SYMPTOMS: usize = 100;
    pub const MAX_SYMPTOM_CHARS: usize = 4096;
    /// Repository files an entry cites, each a relative path.
    pub const MAX_CITED_FILES: usize = 100;
    pub const MAX_PATH_CHARS: usize = 1024;
    /// Entries one write supersedes.
    pub const MAX_SUPERSEDES: usize = 20;
    /// As the synonym table allows.
    pub const MAX_SYNONYM_TERM_CHARS: usize = 64;
    pub const MAX_SYNONYM_CHARS: usize = 256;
    /// As the `source_path` column allows.
    pub const MAX_DOCUMENT_PATH_CHARS: usize = 4096;
    pub const MAX_NOTE_CHARS: usize = 4096;
    pub const MAX_ERASE_NOTE_CHARS: usize = 2000;
    /// A proposed lesson's problem or solution.
    pub const MAX_PROPOSAL_CHARS: usize = 8000;
    /// A resolution longer than a year is a unit mistake.
    pub const MAX_RESOLUTION_MINUTES: f64 = 525_600.0;
    /// Changes one entry's history lists.
    pub const MAX_HISTORY: u32 = 500;
    /// Queries per SearchMany.
    pub const MAX_SEARCH_QUERIES: usize = 50;
}

/// What kind of knowledge an entry holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, strum::IntoStaticStr, strum::EnumString)]
#[strum(serialize_all = "snake_case")]
pub enum EntryKind {
    IssuePattern,
    Learning,
    Retrospective,
    Gotcha,
}

impl StoredName for EntryKind {}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, strum::IntoStaticStr, strum::EnumString)]
#[strum(serialize_all = "snake_case")]
pub enum Severity {
    Low,
    Medium,
    High,
    Critical,
}

impl StoredName for Severity {}

#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::IntoStaticStr, strum::EnumString)]
#[strum(serialize_all = "snake_case")]
pub enum EntryStatus {
    Active,
    Obsolete,
    /// Held by the injection screen: stored, found by no search, until a
    /// person releases it.
    Quarantined,
    /// A newer entry replaces it (`superseded_by`): kept, shown to people,
    /// no longer found by search nor injected.
    Superseded,
}

impl StoredName for EntryStatus {}

#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::IntoStaticStr, strum::EnumString)]
#[strum(serialize_all = "snake_case")]
pub enum Trend {
    Increasing,
    Stable,
    Decreasing,
}

impl StoredName for Trend {}

/// The kind-specific fields that are never filtered on, stored as one JSON
/// object in `knowledge_entries.details`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct RetrospectiveDetails {
    pub learning_category: String,
    pub key_learnings: Vec<String>,
    pub success_patterns: Vec<String>,
    pub failure_patterns: Vec<String>,
    pub quality_score: f64,
    pub held_at: Option<DateTime<Utc>>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct GotchaDetails {
    pub problem: String,
    pub solution: String,
    pub confidence: f64,
    pub qa_pattern_id: String,
    /// The fix attempt the solution was taken from: its verification
    /// verifies the gotcha.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub attempt_id: String,
}

/// An entry to create or replace. Output-only fields (counts, trend, stats)
/// are never taken from the client.
#[derive(Debug, Clone, PartialEq)]
pub struct NewEntry {
    /// Replace this entry (or create it with this id); `None` matches by
    /// `key` or creates.
    pub entry_id: Option<Uuid>,
    pub key: Option<String>,
    pub project: String,
    pub kind: EntryKind,
    pub title: String,
    pub category: String,
    pub summary: String,
    pub body: String,
    pub tags: Vec<String>,
    pub status: EntryStatus,
    pub severity: Option<Severity>,
    pub prevention_checklist: Vec<String>,
    /// In the order given; a known `solution_id` keeps its statistics.
    pub solutions: Vec<NewSolution>,
    /// Retrospective or gotcha fields, as a JSON object.
    pub details: Value,
    pub source_path: Option<String>,
    pub front_matter: Option<Value>,
    /// Set when the entry is a markdown document being indexed.
    pub document: Option<DocumentOrigin>,
    /// Error messages the entry is known by.
    pub symptoms: Vec<String>,
    pub root_causes: Vec<String>,
    /// Uses before Lore knew the entry (a document's `usage_count`).
    pub usage_count: i64,
    /// The last of those uses (a document's `last_used`).
    pub last_used_at: Option<DateTime<Utc>>,
    /// Who wrote it, and how far that makes it trusted.
    pub origin: Origin,
    pub trust: Trust,
    /// Repository files it cites (relative paths): when all are gone from an
    /// agent's checkout, it is stale there.
    pub cited_files: Vec<String>,
    /// Entries (ids or keys of the same project) this one replaces.
    pub supersedes: Vec<String>,
}

/// What an indexed document's entry records of where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct DocumentOrigin {
    /// BLAKE3 of the document as given.
    pub hash: Vec<u8>,
    /// The watched folder it was read from; `None` through IndexDocument.
    pub root: Option<String>,
}

/// A document's place: its project and its path (relative, `/`-separated),
/// and the watched folder when it came from one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocumentSource {
    pub project: String,
    pub path: String,
    pub root: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct NewSolution {
    pub solution_id: Option<Uuid>,
    pub description: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Solution {
    pub solution_id: Uuid,
    pub description: String,
    pub times_applied: i64,
    pub times_successful: i64,
    pub total_resolution_minutes: f64,
}

impl Solution {
    pub fn success_rate(&self) -> f64 {
        if self.times_applied == 0 { 0.0 } else { self.times_successful as f64 / self.times_applied as f64 }
    }

    pub fn avg_resolution_minutes(&self) -> f64 {
        if self.times_successful == 0 { 0.0 } else { self.total_resolution_minutes / self.times_successful as f64 }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub entry_id: Uuid,
    pub key: Option<String>,
    pub project: String,
    pub kind: EntryKind,
    pub title: String,
    pub category: String,
    pub summary: String,
    pub body: String,
    pub tags: Vec<String>,
    pub status: EntryStatus,
    pub severity: Option<Severity>,
    pub trend: Option<Trend>,
    pub occurrence_count: i64,
    pub last_seen_at: Option<DateTime<Utc>>,
    pub prevention_checklist: Vec<String>,
    pub details: Value,
    pub source_path: Option<String>,
    pub front_matter: Option<Value>,
    pub symptoms: Vec<String>,
    pub root_causes: Vec<String>,
    pub usage_count: i64,
    pub last_used_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// Best success rate first.
    pub solutions: Vec<Solution>,
    pub origin: Origin,
    pub trust: Trust,
    /// Repository files it cites.
    pub cited_files: Vec<String>,
    /// The entry that replaces it, when superseded.
    pub superseded_by: Option<Uuid>,
    /// A person's decision on an agent's words, once made (a rewrite
    /// clears it).
    pub review: Option<ReviewRecord>,
}

impl Entry {
    /// A quarantined entry as anyone but an admin reads it: the facts, none
    /// of its text (the injection screen held it; people read it in the
    /// quarantine queue).
    pub fn withheld(mut self) -> Entry {
        if self.status == EntryStatus::Quarantined {
            self.title = "Held for review by the injection screen".to_owned();
            for text in [&mut self.summary, &mut self.body, &mut self.category] {
                text.clear();
            }
            for list in [&mut self.tags, &mut self.symptoms, &mut self.root_causes, &mut self.prevention_checklist] {
                list.clear();
            }
            self.solutions.clear();
            self.details = serde_json::json!({});
            self.front_matter = None;
        }
        self
    }

    /// The solution with the best success rate (the most applied on a tie).
    pub fn best_solution(&self) -> Option<&Solution> {
        self.solutions.first()
    }

    /// Successes over applications of all the entry's solutions together
    /// (how a pattern's success rate is pooled); `None` when none was
    /// applied.
    pub fn pooled_success_rate(&self) -> Option<f64> {
        let applied: i64 = self.solutions.iter().map(|solution| solution.times_applied).sum();
        let succeeded: i64 = self.solutions.iter().map(|solution| solution.times_successful).sum();
        (applied > 0).then(|| succeeded as f64 / applied as f64)
    }

    /// When the entry was last seen, used or changed.
    pub fn last_touched(&self) -> DateTime<Utc> {
        [self.last_seen_at, self.last_used_at].into_iter().flatten().fold(self.updated_at, DateTime::max)
    }
}

/// A pattern seen again (RecordOccurrence).
#[derive(Debug, Clone, PartialEq)]
pub struct NewOccurrence {
    pub occurrence_id: Uuid,
    pub entry_id: Uuid,
    pub session_id: Option<Uuid>,
    pub solution_id: Option<Uuid>,
    pub success: bool,
    pub resolution_minutes: f64,
    pub occurred_at: DateTime<Utc>,
    pub note: String,
    /// The agent found the entry by searching.
    pub found_via_search: bool,
}

/// An entry applied in a session (RecordApplication).
#[derive(Debug, Clone, PartialEq)]
pub struct Application {
    pub application_id: Uuid,
    pub entry_id: Uuid,
    pub session_id: Uuid,
    pub solution_id: Option<Uuid>,
    pub success: bool,
    pub resolution_minutes: f64,
    pub found_via_search: bool,
    pub note: String,
    pub applied_at: DateTime<Utc>,
}

/// How well an entry works when applied.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Effectiveness {
    pub applications: i64,
    pub successes: i64,
    pub avg_resolution_minutes: f64,
    pub found_via_search: i64,
    pub occurrences: i64,
    pub occurrences_found_via_search: i64,
}

impl Effectiveness {
    pub fn success_rate(&self) -> f64 {
        if self.applications == 0 { 0.0 } else { self.successes as f64 / self.applications as f64 }
    }

    pub fn found_via_search_rate(&self) -> f64 {
        if self.applications == 0 { 0.0 } else { self.found_via_search as f64 / self.applications as f64 }
    }

    pub fn occurrences_found_via_search_rate(&self) -> f64 {
        if self.occurrences == 0 { 0.0 } else { self.occurrences_found_via_search as f64 / self.occurrences as f64 }
    }
}

/// Filters of ListEntries.
#[derive(Debug, Clone, PartialEq)]
pub struct EntryFilter {
    pub project: String,
    pub kinds: Vec<EntryKind>,
    pub category: Option<String>,
    pub status: EntryStatus,
    pub tag: Option<String>,
}
