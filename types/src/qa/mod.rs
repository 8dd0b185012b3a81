//! QA-learning as the domain sees it.

pub mod files;
pub mod guards;
pub mod hotspots;
pub mod mask_proposals;
pub mod remining;
pub mod significance;

use base64::Engine as _;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::validate::{self, FieldError, FieldResult};

use crate::actions::StoredName;
use crate::trust::{Origin, ReviewRecord, Trust};

/// Bounds on what a capture may carry.
pub mod limits {
    pub const MAX_MESSAGES: usize = 100;
    pub const MAX_MESSAGE_BYTES: usize = 64 * 1024;
    pub const MAX_CHECKS: usize = 100;
    /// A check's output is cut to this (the proto says so).
    pub const MAX_CHECK_OUTPUT_BYTES: usize = 64 * 1024;
    pub const MAX_FILES: usize = 1000;
    pub const MAX_PATH_CHARS: usize = 1024;
    pub const MAX_TEXT_CHARS: usize = 10_000;
    pub const MAX_NAME_CHARS: usize = 256;
    pub const MAX_FILE_GLOBS: usize = 20;
    /// Patterns one merge may fold, deliveries one outcome may cover.
    pub const MAX_IDS: usize = 1000;
    /// The most occurrences one RemineProject reads.
    pub const MAX_REMINE_WINDOW: i64 = 50_000;
    /// Deliveries one AcknowledgeWarning takes.
    pub const MAX_ACKNOWLEDGED: usize = 100;
    /// Warnings one GetWarnings returns.
    pub const MAX_WARNINGS: u32 = 20;
    /// A note acknowledging warnings.
    pub const MAX_NOTE_CHARS: usize = 2000;
    /// A grouping mask's name (lore-grouping's rule, here beside the rest).
    pub const MAX_MASK_NAME_CHARS: usize = lore_grouping::masks::MAX_NAME_CHARS;
}

/// The task a failure or a warning is about.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Task {
    pub task_id: String,
    pub title: String,
    pub category: String,
    pub files: Vec<String>,
    pub description: String,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FailedCheck {
    pub name: String,
    pub output: String,
    pub exit_code: i32,
}

/// A failure to capture, validated and sanitized.
#[derive(Debug, Clone, PartialEq)]
pub struct NewFailure {
    pub failure_id: Uuid,
    pub project: String,
    pub task: Task,
    pub session_id: Option<Uuid>,
    pub execution_id: String,
    pub failed_checks: Vec<FailedCheck>,
    pub error_messages: Vec<String>,
    pub files_modified: Vec<String>,
    pub diff_summary: String,
    pub occurred_at: DateTime<Utc>,
    /// Who captured it; what it says is a tool's output.
    pub origin: Origin,
}

impl NewFailure {
    /// The messages that are grouped: the error messages, or when there are
    /// none, the first non-empty line of each failed check's output (or its
    /// name).
    pub fn grouped_messages(&self) -> Vec<String> {
        if !self.error_messages.is_empty() {
            return self.error_messages.clone();
        }
        self.failed_checks
            .iter()
            .map(|check| match check.output.lines().map(str::trim).find(|line| !line.is_empty()) {
                Some(line) => line.to_owned(),
                None => format!("{} failed", check.name),
            })
            .collect()
    }
}

/// How one message was linked to a pattern, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct PatternLink {
    pub pattern_id: Uuid,
    pub pattern_name: String,
    pub template: String,
    pub similarity: f64,
    pub new_pattern: bool,
    pub reason: String,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct CaptureOutcome {
    pub failure_id: Uuid,
    pub duplicate: bool,
    pub category: String,
    pub category_rule_id: Option<String>,
    pub links: Vec<PatternLink>,
    /// The messages the injection screen held (index, why): stored with
    /// the failure, grouped into no pattern until released.
    pub held: Vec<(usize, String)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, strum::IntoStaticStr, strum::EnumString)]
#[strum(serialize_all = "snake_case")]
pub enum PatternStatus {
    Candidate,
    Active,
    Merged,
    Promoted,
    Retired,
}

impl StoredName for PatternStatus {}

/// Who made a pattern's last change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, strum::IntoStaticStr, strum::EnumString)]
#[strum(serialize_all = "snake_case")]
pub enum ChangedBy {
    /// A capture started the pattern or widened its template.
    Capture,
    /// Re-mining merged, split or moved it.
    ReMining,
    /// A person merged, split or edited it.
    Person,
}

impl StoredName for ChangedBy {}

#[derive(Debug, Clone, PartialEq)]
pub struct Pattern {
    pub pattern_id: Uuid,
    pub project: String,
    pub category: String,
    pub name: String,
    pub description: String,
    pub common_cause: String,
    pub recommended_fix: String,
    pub template: String,
    pub file_globs: Vec<String>,
    /// How far `recommended_fix` is trusted; `None` without one.
    pub fix_trust: Option<Trust>,
    /// A person's edit the screen held: not warned about until released.
    pub held: bool,
    pub status: PatternStatus,
    pub merged_into: Option<Uuid>,
    /// Who made its last change.
    pub last_change: ChangedBy,
    pub occurrence_count: i64,
    pub task_count: i64,
    pub confidence: f64,
    pub prevented_count: i64,
    pub failed_anyway_count: i64,
    pub warnings_delivered: i64,
    pub first_seen_at: DateTime<Utc>,
    pub last_seen_at: DateTime<Utc>,
}

impl Pattern {
    /// prevented / (prevented + failed anyway); 0 with no outcomes.
    pub fn effectiveness(&self) -> f64 {
        let judged = self.prevented_count + self.failed_anyway_count;
        if judged == 0 { 0.0 } else { self.prevented_count as f64 / judged as f64 }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Occurrence {
    pub occurrence_id: Uuid,
    pub failure_id: Uuid,
    pub task_id: String,
    pub link: PatternLink,
    pub occurred_at: DateTime<Utc>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::IntoStaticStr, strum::EnumString)]
#[strum(serialize_all = "snake_case")]
pub enum FixOutcome {
    Success,
    Failure,
    Partial,
}

impl StoredName for FixOutcome {}

#[derive(Debug, Clone, PartialEq)]
pub struct FixAttempt {
    pub attempt_id: Uuid,
    pub failure_id: Uuid,
    pub attempt_number: i32,
    pub approach: String,
    pub files_changed: Vec<String>,
    pub summary: String,
    pub outcome: FixOutcome,
    pub qa_result: String,
    pub recorded_at: DateTime<Utc>,
    /// Observed, until a passing result of the failure's task verifies it.
    pub trust: Trust,
    pub origin: Origin,
    /// The screen held its approach or summary and nobody released it.
    pub held: bool,
    /// A person's decision on its words, once made.
    /// Approved, its words are its patterns' reviewed fix.
    pub review: Option<ReviewRecord>,
}

/// A successful fix waiting for a person, with what it fixed.
#[derive(Debug, Clone, PartialEq)]
pub struct FixToReview {
    pub attempt: FixAttempt,
    pub task_id: String,
    /// The templates of the patterns its failure is in.
    pub templates: Vec<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct FixRecorded {
    pub attempt_id: Uuid,
    pub duplicate: bool,
    pub resolved: bool,
    pub attempts: u32,
    pub gotcha_entry_ids: Vec<Uuid>,
    /// Why the screen held the approach or summary, when it did.
    pub held: Option<String>,
}

/// A pattern with the details GetPattern shows.
#[derive(Debug, Clone, PartialEq)]
pub struct PatternReport {
    pub pattern: Pattern,
    pub occurrences: Vec<Occurrence>,
    pub fixes: Vec<FixAttempt>,
}

/// Filters of ListPatterns.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PatternFilter {
    pub project: String,
    pub category: Option<String>,
    /// Empty means candidate and active.
    pub statuses: Vec<PatternStatus>,
    pub file: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct PatternEdits {
    pub name: Option<String>,
    pub description: Option<String>,
    pub common_cause: Option<String>,
    pub recommended_fix: Option<String>,
    pub status: Option<PatternStatus>,
}

/// Patterns merged into one, and who asks.
#[derive(Debug, Clone, PartialEq)]
pub struct Merge {
    pub into: Uuid,
    pub sources: Vec<Uuid>,
    pub reason: String,
    pub by: ChangedBy,
    /// The person's token name (empty for re-mining): a merge by a person
    /// may propose a mask in their name.
    pub actor: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Split {
    pub split_id: Uuid,
    pub pattern_id: Uuid,
    pub occurrence_ids: Vec<Uuid>,
    pub new_name: Option<String>,
    pub reason: String,
    pub by: ChangedBy,
}

#[derive(Debug, Clone, PartialEq)]
pub struct WarningRequest {
    pub project: String,
    pub task: Task,
    pub session_id: Option<Uuid>,
    pub limit: usize,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Warning {
    pub delivery_id: Uuid,
    pub pattern_id: Uuid,
    pub pattern_name: String,
    pub text: String,
    pub recommended_fix: String,
    /// How far `recommended_fix` is trusted; `None` without one.
    pub fix_trust: Option<Trust>,
    /// The error as QA saw it (variables as `<*>`).
    pub template: String,
    pub category: String,
    pub task_count: i64,
    pub last_seen_at: DateTime<Utc>,
    pub reason: String,
    pub relevance: f64,
    pub confidence: f64,
    pub frequency: i64,
    pub score: f64,
    /// The files the fix it recommends changed.
    pub cited_files: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::IntoStaticStr, strum::EnumString)]
#[strum(serialize_all = "snake_case")]
pub enum WarningOutcome {
    Prevented,
    FailedAnyway,
    NotApplicable,
    TaskIncomplete,
    Unrelated,
}

impl StoredName for WarningOutcome {}

/// One check of a task result.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct CheckResult {
    pub name: String,
    pub passed: bool,
    /// Kept only to capture a failure from; not stored with the result.
    #[serde(skip)]
    pub output: String,
    pub exit_code: i32,
}

/// A task's QA verdict to record, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct NewTaskResult {
    pub result_id: Uuid,
    pub project: String,
    pub task: Task,
    pub session_id: Option<Uuid>,
    pub passed: bool,
    pub checks: Vec<CheckResult>,
    /// For a failed verdict; empty means "the task's unattached failures".
    pub failure_ids: Vec<Uuid>,
    pub occurred_at: DateTime<Utc>,
    /// Who sent it (the checks' output it carries is a tool's).
    pub origin: Origin,
}

/// A delivery a task result scored.
#[derive(Debug, Clone, PartialEq)]
pub struct ScoredDelivery {
    pub delivery_id: Uuid,
    pub pattern_id: Uuid,
    pub outcome: WarningOutcome,
    pub held_out: bool,
}

/// A pattern a task failed on that it could have been warned about.
#[derive(Debug, Clone, PartialEq)]
pub struct MissedOpportunity {
    pub pattern_id: Uuid,
    pub pattern_name: String,
    /// Whether the task asked for warnings at all.
    pub warned: bool,
}

/// What recording a task result did (or, replayed, did the first time).
#[derive(Debug, Clone, PartialEq)]
pub struct TaskResultRecorded {
    pub result_id: Uuid,
    pub duplicate: bool,
    pub attempt: i32,
    pub passed: bool,
    pub failure_ids: Vec<Uuid>,
    pub pattern_ids: Vec<Uuid>,
    pub scored: Vec<ScoredDelivery>,
    pub missed: Vec<MissedOpportunity>,
    /// The fix attempts this (passing) result verified; empty on a replay.
    pub verified_attempts: Vec<Uuid>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct PatternStanding {
    pub pattern_id: Uuid,
    pub effectiveness: f64,
    pub confidence: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::IntoStaticStr, strum::EnumString)]
#[strum(serialize_all = "snake_case")]
pub enum PromotionStatus {
    Pending,
    Approved,
    Published,
    Rejected,
    RolledBack,
}

impl StoredName for PromotionStatus {}

#[derive(Debug, Clone, PartialEq)]
pub struct PromotionEvent {
    pub status: PromotionStatus,
    pub actor: String,
    pub note: String,
    pub at: DateTime<Utc>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Promotion {
    pub promotion_id: Uuid,
    pub project: String,
    pub pattern_id: Uuid,
    pub status: PromotionStatus,
    pub markdown: String,
    pub entry_id: Option<Uuid>,
    pub history: Vec<PromotionEvent>,
    /// Where it stands in the project's instructions file; empty before
    /// approval.
    pub instructions: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PromotionDecision {
    Approve,
    Reject,
    Rollback,
}

#[derive(Debug, Clone, PartialEq)]
pub struct CategoryRule {
    pub rule_id: String,
    /// `None`: a global rule.
    pub project: Option<String>,
    pub priority: i32,
    pub category: String,
    pub check_name_regex: String,
    pub message_regex: String,
    pub enabled: bool,
}

/// Filters of the dashboard.
#[derive(Debug, Clone, PartialEq)]
pub struct DashboardQuery {
    pub project: String,
    pub from: DateTime<Utc>,
    pub until: DateTime<Utc>,
    pub category: Option<String>,
    pub agent_id: Option<String>,
    pub top_patterns: i64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct DayRate {
    pub day: chrono::NaiveDate,
    pub failures: i64,
    pub tasks: i64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Dashboard {
    pub failure_rate: Vec<DayRate>,
    /// With the occurrences in the window as `occurrence_count`.
    pub top_patterns: Vec<Pattern>,
    pub categories: Vec<(String, i64)>,
    pub failures: i64,
    pub resolved: i64,
    pub mean_attempts_to_pass: f64,
    pub prevented: i64,
    pub failed_anyway: i64,
    pub warnings_delivered: i64,
    /// Shown warnings an agent acknowledged, and their outcomes.
    pub acknowledged: i64,
    pub acknowledged_prevented: i64,
    pub acknowledged_failed_anyway: i64,
    /// Tasks shown their warnings against tasks they were held out from:
    /// the share that failed on a warned pattern, on the same denominator.
    pub comparison: significance::Comparison,
    pub tasks: TaskFigures,
    pub missed_opportunities: i64,
}

/// From task results: the tasks whose first result is in the window.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct TaskFigures {
    pub tasks: i64,
    pub failed: i64,
    pub passed: i64,
    pub passed_first_time: i64,
    /// Over the tasks that passed: results up to and including the first
    /// pass.
    pub mean_attempts_to_pass: f64,
}

/// Where a page of patterns ends: (occurrence_count, pattern_id) of its
/// last pattern, which is the list's order.
pub type PatternCursor = (i64, Uuid);

/// A project's own grouping mask (`lore_grouping::masks`): every match in
/// a captured message is one variable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupingMask {
    pub project: String,
    pub name: String,
    pub pattern: String,
    pub description: String,
    /// Who last changed it; set by the domain from the caller.
    pub updated_by: String,
    pub updated_at: DateTime<Utc>,
}

impl GroupingMask {
    /// A mask as a person submits it, checked: each failure names its field
    /// under `parent` (`mask.pattern`). The server sets when and by whom.
    pub fn submitted(
        parent: &str,
        project: &str,
        name: &str,
        pattern: &str,
        description: &str,
        by: &str,
    ) -> crate::validate::FieldResult<Self> {
        use crate::validate::{self, FieldError};
        let field = |name: &str| format!("{parent}.{name}");
        let project = validate::project(&field("project"), project)?;
        let spec = lore_grouping::masks::MaskSpec { name: name.trim().to_owned(), pattern: pattern.to_owned() };
        spec.compile().map_err(|error| FieldError::new(field(error.field), error.message))?;
        let description = validate::text(&field("description"), description, 2000, false)?;
        Ok(Self {
            project,
            name: spec.name,
            pattern: spec.pattern,
            description,
            updated_by: by.to_owned(),
            updated_at: Utc::now(),
        })
    }
}

/// `[qa.promotion]`: when a pattern qualifies for promotion.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PromotionThresholds {
    pub min_effectiveness: f64,
    pub min_tasks: i64,
    pub min_confidence: f64,
    /// The level the effect of a pattern's warnings must reach: the one-sided
    /// Fisher p-value of "shown tasks fail on it less than held-out ones"
    /// must be at most this. 1 turns the test off. Needs a held-out share
    /// (`holdout_fraction` above 0), or nothing qualifies.
    pub significance: f64,
}

impl Default for PromotionThresholds {
    fn default() -> Self {
        Self { min_effectiveness: 0.8, min_tasks: 5, min_confidence: 0.8, significance: 0.05 }
    }
}

/// A refused mask, named under `mask.` as requests carry it.
impl From<lore_grouping::masks::MaskError> for crate::Error {
    fn from(error: lore_grouping::masks::MaskError) -> Self {
        crate::Error::invalid(format!("mask.{}", error.field), error.message)
    }
}

/// Where a page of patterns ends, as the next page's `after` carries it.
/// The cursor of a patterns page: (occurrence_count, pattern_id) of the
/// last pattern, which is the list's order.
pub fn pattern_cursor(pattern: &Pattern) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .encode(format!("{}/{}", pattern.occurrence_count, pattern.pattern_id))
}

/// A cursor [`pattern_cursor`] made, read back; anything else is refused
/// naming `field`.
pub fn decode_pattern_cursor(field: &str, cursor: &str) -> FieldResult<(i64, Uuid)> {
    let invalid = || FieldError::new(field, "not a cursor this server issued");
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(cursor).map_err(|_| invalid())?;
    let text = String::from_utf8(bytes).map_err(|_| invalid())?;
    let (count, id) = text.split_once('/').ok_or_else(invalid)?;
    Ok((count.parse().map_err(|_| invalid())?, id.parse().map_err(|_| invalid())?))
}

impl Split {
    /// A person's split, checked: each failure names its field.
    pub fn submitted(
        split_id: &str,
        pattern_id: &str,
        occurrence_ids: &[String],
        new_name: &str,
        reason: &str,
    ) -> FieldResult<Self> {
        Ok(Split {
            split_id: validate::required_uuid("split_id", split_id)?,
            pattern_id: validate::required_uuid("pattern_id", pattern_id)?,
            occurrence_ids: validate::uuids("occurrence_ids", occurrence_ids, 10_000)?,
            new_name: validate::optional_name("new_name", new_name, limits::MAX_NAME_CHARS)?,
            reason: validate::text("reason", reason, limits::MAX_TEXT_CHARS, false)?,
            by: ChangedBy::Person,
        })
    }
}

/// A person's decision on a promotion: who, and why (a note is required
/// to reject or roll back).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromotionReview {
    pub promotion_id: Uuid,
    pub actor: String,
    pub note: String,
}

impl PromotionReview {
    pub fn submitted(promotion_id: &str, actor: &str, note: &str, note_required: bool) -> FieldResult<Self> {
        let actor = validate::name("actor", actor, limits::MAX_NAME_CHARS, true)?;
        let note = validate::text("note", note, limits::MAX_TEXT_CHARS, note_required)?;
        Ok(Self { promotion_id: validate::required_uuid("promotion_id", promotion_id)?, actor, note })
    }
}
