//! proto <-> domain conversions of KnowledgeService, with every check on
//! client input naming the offending field.

use chrono::{DateTime, Utc};
use serde_json::Value;
use uuid::Uuid;

use lore_proto::v1 as proto;

use crate::grpc::convert::{
    self as common, FieldError, FieldResult, enum_value, optional_timestamp, optional_uuid, project, required_uuid,
    to_timestamp,
};
use crate::grpc::convert::{origin_to_proto, trust_to_proto};
use lore_domain::knowledge::search::{Hit, SearchMode, SearchQuery};
use lore_domain::knowledge::search_many::Caps;
use lore_domain::knowledge::{EntryReport, IndexStatus};
use lore_store::knowledge::search::SearchFilter;
use lore_types::knowledge::drafts::{Draft, DraftSource, DraftStatus, Proposal, Review, SubmittedEdits, Verdict};
use lore_types::knowledge::limits::{
    MAX_BODY_BYTES, MAX_CATEGORY_CHARS, MAX_CITED_FILES, MAX_DOCUMENT_PATH_CHARS, MAX_ERASE_NOTE_CHARS, MAX_HISTORY,
    MAX_ITEM_CHARS, MAX_KEY_CHARS, MAX_LIST_ITEMS, MAX_NOTE_CHARS, MAX_PATH_CHARS as MAX_CITED_PATH_CHARS,
    MAX_PROPOSAL_CHARS, MAX_RESOLUTION_MINUTES, MAX_SOLUTION_CHARS, MAX_SOLUTIONS, MAX_SUMMARY_CHARS, MAX_SUPERSEDES,
    MAX_SYMPTOM_CHARS, MAX_SYMPTOMS, MAX_SYNONYM_CHARS, MAX_SYNONYM_TERM_CHARS, MAX_TAG_CHARS, MAX_TAGS,
    MAX_TITLE_CHARS,
};
use lore_types::knowledge::rank::{Relevance, Signal};
use lore_types::knowledge::vocabulary::{CategoryRelation, Synonym};
use lore_types::knowledge::{
    Application, DocumentSource, Effectiveness, Entry, EntryFilter, EntryKind, EntryStatus, GotchaDetails, NewEntry,
    NewOccurrence, NewSolution, RetrospectiveDetails, Severity, Solution, Trend,
};
use lore_types::trust::{Origin, Trust};
use lore_types::validate::{distinct_texts, list, name, optional_name, text};

const DEFAULT_HISTORY: u32 = 20;

/// A document's path: relative, `/`-separated, without `.` or `..` parts.
pub fn document_path(field: &str, value: &str) -> FieldResult<String> {
    let path = name(field, value, MAX_DOCUMENT_PATH_CHARS, true)?;
    if path.starts_with('/') || path.contains('\\') {
        return Err(FieldError::new(field, "must be a relative path with '/' separators"));
    }
    if path.split('/').any(|part| part.is_empty() || part == "." || part == "..") {
        return Err(FieldError::new(field, "must not have empty, '.' or '..' parts"));
    }
    Ok(path)
}

pub fn document_source(project_value: &str, path: &str) -> FieldResult<DocumentSource> {
    Ok(DocumentSource { project: project("project", project_value)?, path: document_path("path", path)?, root: None })
}

pub fn tags(field: &str, values: &[String]) -> FieldResult<Vec<String>> {
    lore_types::validate::tags(field, values, MAX_TAGS, MAX_TAG_CHARS)
}

pub fn entry_kind(field: &str, value: i32) -> FieldResult<EntryKind> {
    Ok(match enum_value::<proto::EntryKind>(field, value)? {
        proto::EntryKind::Unspecified => return Err(FieldError::new(field, "required")),
        proto::EntryKind::IssuePattern => EntryKind::IssuePattern,
        proto::EntryKind::Learning => EntryKind::Learning,
        proto::EntryKind::Retrospective => EntryKind::Retrospective,
        proto::EntryKind::Gotcha => EntryKind::Gotcha,
    })
}

pub fn entry_kinds(field: &str, values: &[i32]) -> FieldResult<Vec<EntryKind>> {
    values.iter().enumerate().map(|(index, value)| entry_kind(&format!("{field}[{index}]"), *value)).collect()
}

pub fn entry_kind_to_proto(kind: EntryKind) -> proto::EntryKind {
    match kind {
        EntryKind::IssuePattern => proto::EntryKind::IssuePattern,
        EntryKind::Learning => proto::EntryKind::Learning,
        EntryKind::Retrospective => proto::EntryKind::Retrospective,
        EntryKind::Gotcha => proto::EntryKind::Gotcha,
    }
}

/// Unspecified is active.
pub fn entry_status(field: &str, value: i32) -> FieldResult<EntryStatus> {
    Ok(match enum_value::<proto::EntryStatus>(field, value)? {
        proto::EntryStatus::Unspecified | proto::EntryStatus::Active => EntryStatus::Active,
        proto::EntryStatus::Obsolete => EntryStatus::Obsolete,
        proto::EntryStatus::Quarantined => {
            return Err(FieldError::new(field, "quarantined is set by the injection screen, not by clients"));
        }
        proto::EntryStatus::Superseded => {
            return Err(FieldError::new(field, "superseded is set by the newer entry's `supersedes`, not by status"));
        }
    })
}

/// A listing may ask for any status, those only the server sets included.
fn status_filter(field: &str, value: i32) -> FieldResult<EntryStatus> {
    Ok(match enum_value::<proto::EntryStatus>(field, value)? {
        proto::EntryStatus::Quarantined => EntryStatus::Quarantined,
        proto::EntryStatus::Superseded => EntryStatus::Superseded,
        _ => entry_status(field, value)?,
    })
}

fn entry_status_to_proto(status: EntryStatus) -> proto::EntryStatus {
    match status {
        EntryStatus::Active => proto::EntryStatus::Active,
        EntryStatus::Obsolete => proto::EntryStatus::Obsolete,
        EntryStatus::Quarantined => proto::EntryStatus::Quarantined,
        EntryStatus::Superseded => proto::EntryStatus::Superseded,
    }
}

fn severity(field: &str, value: i32) -> FieldResult<Option<Severity>> {
    Ok(match enum_value::<proto::Severity>(field, value)? {
        proto::Severity::Unspecified => None,
        proto::Severity::Low => Some(Severity::Low),
        proto::Severity::Medium => Some(Severity::Medium),
        proto::Severity::High => Some(Severity::High),
        proto::Severity::Critical => Some(Severity::Critical),
    })
}

fn severity_to_proto(severity: Option<Severity>) -> proto::Severity {
    match severity {
        None => proto::Severity::Unspecified,
        Some(Severity::Low) => proto::Severity::Low,
        Some(Severity::Medium) => proto::Severity::Medium,
        Some(Severity::High) => proto::Severity::High,
        Some(Severity::Critical) => proto::Severity::Critical,
    }
}

fn trend_to_proto(trend: Option<Trend>) -> proto::Trend {
    match trend {
        None => proto::Trend::Unspecified,
        Some(Trend::Increasing) => proto::Trend::Increasing,
        Some(Trend::Stable) => proto::Trend::Stable,
        Some(Trend::Decreasing) => proto::Trend::Decreasing,
    }
}

fn score(field: &str, value: f64, max: f64) -> FieldResult<f64> {
    if !value.is_finite() || !(0.0..=max).contains(&value) {
        return Err(FieldError::new(field, format!("{value} is outside 0..={max}")));
    }
    Ok(value)
}

pub fn resolution_minutes(field: &str, value: f64) -> FieldResult<f64> {
    score(field, value, MAX_RESOLUTION_MINUTES)
}

/// An UpsertEntry request's entry.
pub fn new_entry(entry: &proto::Entry) -> FieldResult<NewEntry> {
    let kind = entry_kind("kind", entry.kind)?;
    let mut new = NewEntry {
        entry_id: optional_uuid("entry_id", &entry.entry_id)?,
        key: optional_name("key", &entry.key, MAX_KEY_CHARS)?,
        project: project("project", &entry.project)?,
        kind,
        title: name("title", &entry.title, MAX_TITLE_CHARS, true)?,
        category: name("category", &entry.category, MAX_CATEGORY_CHARS, false)?.to_lowercase(),
        summary: text("summary", &entry.summary, MAX_SUMMARY_CHARS, false)?,
        body: text("body", &entry.body, usize::MAX, false)?,
        tags: tags("tags", &entry.tags)?,
        status: entry_status("status", entry.status)?,
        severity: None,
        prevention_checklist: Vec::new(),
        solutions: Vec::new(),
        details: Value::Object(Default::default()),
        source_path: None,
        front_matter: None,
        document: None,
        symptoms: distinct_texts("symptoms", &entry.symptoms, MAX_SYMPTOMS, MAX_SYMPTOM_CHARS)?,
        root_causes: distinct_texts("root_causes", &entry.root_causes, MAX_SYMPTOMS, MAX_SYMPTOM_CHARS)?,
        usage_count: i64::try_from(entry.usage_count)
            .map_err(|_| FieldError::new("usage_count", format!("{} is too large", entry.usage_count)))?,
        last_used_at: optional_timestamp("last_used_at", entry.last_used_at.as_ref())?,
        // Who wrote it is the caller, not the message: the handler says.
        origin: Origin::default(),
        trust: Trust::Observed,
        cited_files: list("cited_files", &entry.cited_files, MAX_CITED_FILES, MAX_CITED_PATH_CHARS)?,
        supersedes: list("supersedes", &entry.supersedes, MAX_SUPERSEDES, MAX_KEY_CHARS)?,
    };
    if new.body.len() > MAX_BODY_BYTES {
        return Err(FieldError::new("body", format!("{} bytes, over the limit of {MAX_BODY_BYTES}", new.body.len())));
    }
    use proto::entry::Details;
    let details_kind = match &entry.details {
        None => kind,
        Some(Details::IssuePattern(_)) => EntryKind::IssuePattern,
        Some(Details::Learning(_)) => EntryKind::Learning,
        Some(Details::Retrospective(_)) => EntryKind::Retrospective,
        Some(Details::Gotcha(_)) => EntryKind::Gotcha,
    };
    if details_kind != kind {
        return Err(FieldError::new("details", format!("{details_kind:?} details on a {kind:?} entry")));
    }
    if let Some(details) = &entry.details {
        add_details(&mut new, details)?;
    }
    Ok(new)
}

/// What an entry's kind adds: an issue pattern's severity, checklist and
/// solutions, a learning's solutions and source, a retrospective's or a
/// gotcha's details.
fn add_details(new: &mut NewEntry, details: &proto::entry::Details) -> FieldResult<()> {
    use proto::entry::Details;
    match details {
        Details::IssuePattern(pattern) => {
            let field = "issue_pattern";
            new.severity = severity(&format!("{field}.severity"), pattern.severity)?;
            new.prevention_checklist = list(
                &format!("{field}.prevention_checklist"),
                &pattern.prevention_checklist,
                MAX_LIST_ITEMS,
                MAX_ITEM_CHARS,
            )?;
            new.solutions = solutions(&format!("{field}.solutions"), &pattern.solutions)?;
        }
        Details::Learning(learning) => {
            new.solutions = solutions("learning.solutions", &learning.solutions)?;
            if !learning.source_path.is_empty() {
                new.source_path = Some(name("learning.source_path", &learning.source_path, 4096, true)?);
            }
            if learning.front_matter.is_some() {
                new.front_matter = Some(common::json_object("learning.front_matter", learning.front_matter.as_ref())?);
            }
        }
        Details::Retrospective(retrospective) => {
            let field = "retrospective";
            let details = RetrospectiveDetails {
                learning_category: name(
                    &format!("{field}.learning_category"),
                    &retrospective.learning_category,
                    MAX_CATEGORY_CHARS,
                    false,
                )?,
                key_learnings: list(
                    &format!("{field}.key_learnings"),
                    &retrospective.key_learnings,
                    MAX_LIST_ITEMS,
                    MAX_ITEM_CHARS,
                )?,
                success_patterns: list(
                    &format!("{field}.success_patterns"),
                    &retrospective.success_patterns,
                    MAX_LIST_ITEMS,
                    MAX_ITEM_CHARS,
                )?,
                failure_patterns: list(
                    &format!("{field}.failure_patterns"),
                    &retrospective.failure_patterns,
                    MAX_LIST_ITEMS,
                    MAX_ITEM_CHARS,
                )?,
                quality_score: score(&format!("{field}.quality_score"), retrospective.quality_score, 10.0)?,
                held_at: optional_timestamp(&format!("{field}.held_at"), retrospective.held_at.as_ref())?,
            };
            new.details = serde_json::to_value(details).expect("plain data serializes");
        }
        Details::Gotcha(gotcha) => {
            let details = GotchaDetails {
                problem: text("gotcha.problem", &gotcha.problem, MAX_SUMMARY_CHARS, false)?,
                solution: text("gotcha.solution", &gotcha.solution, MAX_SOLUTION_CHARS, false)?,
                confidence: score("gotcha.confidence", gotcha.confidence, 1.0)?,
                qa_pattern_id: name("gotcha.qa_pattern_id", &gotcha.qa_pattern_id, MAX_KEY_CHARS, false)?,
                // Only Lore links a gotcha to the attempt it came from: a
                // client's link would borrow that attempt's verification.
                attempt_id: String::new(),
            };
            new.details = serde_json::to_value(details).expect("plain data serializes");
        }
    }
    Ok(())
}

/// Solutions in the order given; an id given twice is refused.
fn solutions(field: &str, given: &[proto::Solution]) -> FieldResult<Vec<NewSolution>> {
    if given.len() > MAX_SOLUTIONS {
        return Err(FieldError::new(field, format!("{} solutions, over the limit of {MAX_SOLUTIONS}", given.len())));
    }
    let mut solutions: Vec<NewSolution> = Vec::with_capacity(given.len());
    for (index, solution) in given.iter().enumerate() {
        let field = format!("{field}[{index}]");
        let solution_id = optional_uuid(&format!("{field}.solution_id"), &solution.solution_id)?;
        if solution_id.is_some() && solutions.iter().any(|known| known.solution_id == solution_id) {
            return Err(FieldError::new(format!("{field}.solution_id"), "given twice"));
        }
        solutions.push(NewSolution {
            solution_id,
            description: text(&format!("{field}.description"), &solution.description, MAX_SOLUTION_CHARS, true)?,
        });
    }
    Ok(solutions)
}

pub fn solution_to_proto(solution: &Solution) -> proto::Solution {
    proto::Solution {
        solution_id: solution.solution_id.to_string(),
        description: solution.description.clone(),
        times_applied: solution.times_applied.max(0) as u64,
        times_successful: solution.times_successful.max(0) as u64,
        success_rate: solution.success_rate(),
        avg_resolution_minutes: solution.avg_resolution_minutes(),
    }
}

pub fn entry_to_proto(entry: &Entry) -> proto::Entry {
    use proto::entry::Details;
    let details = match entry.kind {
        EntryKind::IssuePattern => Details::IssuePattern(proto::IssuePatternDetails {
            severity: severity_to_proto(entry.severity) as i32,
            trend: trend_to_proto(entry.trend) as i32,
            occurrence_count: entry.occurrence_count.max(0) as u64,
            last_seen_at: entry.last_seen_at.map(to_timestamp),
            solutions: entry.solutions.iter().map(solution_to_proto).collect(),
            prevention_checklist: entry.prevention_checklist.clone(),
        }),
        EntryKind::Learning => Details::Learning(proto::LearningDetails {
            source_path: entry.source_path.clone().unwrap_or_default(),
            front_matter: entry.front_matter.as_ref().map(common::to_struct),
            solutions: entry.solutions.iter().map(solution_to_proto).collect(),
        }),
        EntryKind::Retrospective => {
            let details: RetrospectiveDetails = serde_json::from_value(entry.details.clone()).unwrap_or_default();
            Details::Retrospective(proto::RetrospectiveDetails {
                learning_category: details.learning_category,
                key_learnings: details.key_learnings,
                success_patterns: details.success_patterns,
                failure_patterns: details.failure_patterns,
                quality_score: details.quality_score,
                held_at: details.held_at.map(to_timestamp),
            })
        }
        EntryKind::Gotcha => {
            let details: GotchaDetails = serde_json::from_value(entry.details.clone()).unwrap_or_default();
            Details::Gotcha(proto::GotchaDetails {
                problem: details.problem,
                solution: details.solution,
                confidence: details.confidence,
                qa_pattern_id: details.qa_pattern_id,
                attempt_id: details.attempt_id,
            })
        }
    };
    proto::Entry {
        entry_id: entry.entry_id.to_string(),
        key: entry.key.clone().unwrap_or_default(),
        project: entry.project.clone(),
        kind: entry_kind_to_proto(entry.kind) as i32,
        title: entry.title.clone(),
        category: entry.category.clone(),
        summary: entry.summary.clone(),
        body: entry.body.clone(),
        tags: entry.tags.clone(),
        status: entry_status_to_proto(entry.status) as i32,
        details: Some(details),
        symptoms: entry.symptoms.clone(),
        root_causes: entry.root_causes.clone(),
        usage_count: entry.usage_count.max(0) as u64,
        last_used_at: entry.last_used_at.map(to_timestamp),
        created_at: Some(to_timestamp(entry.created_at)),
        updated_at: Some(to_timestamp(entry.updated_at)),
        trust: trust_to_proto(entry.trust) as i32,
        origin: Some(origin_to_proto(&entry.origin)),
        cited_files: entry.cited_files.clone(),
        supersedes: Vec::new(),
        superseded_by: entry.superseded_by.map(|id| id.to_string()).unwrap_or_default(),
        superseded: Vec::new(),
        review: entry.review.as_ref().map(common::review_record_to_proto),
    }
}

/// Entries to review: at most this many at once.
const MAX_ENTRIES_TO_REVIEW: u32 = 500;
const DEFAULT_ENTRIES_TO_REVIEW: u32 = 50;

/// ListEntriesToReview: the project and how many.
pub fn entries_to_review_request(request: &proto::ListEntriesToReviewRequest) -> FieldResult<(String, i64)> {
    let limit = match request.limit {
        0 => DEFAULT_ENTRIES_TO_REVIEW,
        limit => limit.min(MAX_ENTRIES_TO_REVIEW),
    };
    Ok((project("project", &request.project)?, i64::from(limit)))
}

/// ReviewEntry: the entry, whether it is approved, and the note.
pub fn entry_review(request: &proto::ReviewEntryRequest) -> FieldResult<(Uuid, bool, String)> {
    let entry_id = required_uuid("entry_id", &request.entry_id)?;
    let approved = match enum_value::<proto::ReviewDecision>("decision", request.decision)? {
        proto::ReviewDecision::Approve => true,
        proto::ReviewDecision::Reject => false,
        proto::ReviewDecision::Unspecified => {
            return Err(FieldError::new("decision", "required: REVIEW_DECISION_APPROVE or REVIEW_DECISION_REJECT"));
        }
    };
    let note = text("note", &request.note, lore_types::knowledge::limits::MAX_NOTE_CHARS, false)?;
    Ok((entry_id, approved, note))
}

pub fn application_to_proto(application: &Application) -> proto::Application {
    proto::Application {
        application_id: application.application_id.to_string(),
        session_id: application.session_id.to_string(),
        solution_id: application.solution_id.map(|id| id.to_string()).unwrap_or_default(),
        success: application.success,
        resolution_minutes: application.resolution_minutes,
        found_via_search: application.found_via_search,
        note: application.note.clone(),
        applied_at: Some(to_timestamp(application.applied_at)),
    }
}

pub fn effectiveness_to_proto(effectiveness: &Effectiveness) -> proto::Effectiveness {
    proto::Effectiveness {
        applications: effectiveness.applications.max(0) as u64,
        successes: effectiveness.successes.max(0) as u64,
        success_rate: effectiveness.success_rate(),
        avg_resolution_minutes: effectiveness.avg_resolution_minutes,
        found_via_search_rate: effectiveness.found_via_search_rate(),
        occurrences: effectiveness.occurrences.max(0) as u64,
        occurrences_found_via_search_rate: effectiveness.occurrences_found_via_search_rate(),
    }
}

pub fn entry_report_to_proto(report: &EntryReport) -> proto::GetEntryResponse {
    let mut entry = entry_to_proto(&report.entry);
    entry.superseded = report.superseded.iter().map(|(entry_id, _, _)| entry_id.to_string()).collect();
    proto::GetEntryResponse {
        entry: Some(entry),
        history: report.history.iter().map(application_to_proto).collect(),
        effectiveness: Some(effectiveness_to_proto(&report.effectiveness)),
    }
}

/// An EraseEntry request: the entry, and why (required).
pub fn erase_request(request: &proto::EraseEntryRequest) -> FieldResult<(EntryRef, String)> {
    let note = text("note", &request.note, MAX_ERASE_NOTE_CHARS, true)?;
    if let Some(entry_id) = optional_uuid("entry_id", &request.entry_id)? {
        return Ok((EntryRef::Id(entry_id), note));
    }
    if request.key.trim().is_empty() {
        return Err(FieldError::new("entry_id", "required (or project and key)"));
    }
    let key = name("key", &request.key, MAX_KEY_CHARS, true)?;
    Ok((EntryRef::Key { project: project("project", &request.project)?, key }, note))
}

pub fn erased_to_proto(erased: &lore_domain::trust::erasure::Erased) -> proto::EraseEntryResponse {
    proto::EraseEntryResponse {
        entry_id: erased.entry_id.to_string(),
        key: erased.key.clone().unwrap_or_default(),
        drafts_deleted: erased.derived.drafts,
        pattern_fixes_cleared: erased.derived.pattern_fixes,
        fix_attempts_blocked: erased.derived.attempts_blocked,
        entries_revived: erased.derived.revived,
        instructions: erased.instructions.clone().unwrap_or_default(),
        file_removed: erased.file_removed.as_ref().map(|path| path.display().to_string()).unwrap_or_default(),
        audit_action_id: erased.action_id.to_string(),
        audit_session_id: erased.session_id.to_string(),
    }
}

/// How a GetEntry names its entry.
pub enum EntryRef {
    Id(Uuid),
    Key { project: String, key: String },
}

pub fn entry_ref(request: &proto::GetEntryRequest) -> FieldResult<(EntryRef, i64)> {
    let history = match request.history_limit {
        0 => DEFAULT_HISTORY,
        limit => limit.min(MAX_HISTORY),
    };
    let reference = if !request.entry_id.is_empty() {
        EntryRef::Id(required_uuid("entry_id", &request.entry_id)?)
    } else if !request.key.is_empty() {
        EntryRef::Key {
            project: project("project", &request.project)?,
            key: name("key", &request.key, MAX_KEY_CHARS, true)?,
        }
    } else {
        return Err(FieldError::new("entry_id", "required (or project and key)"));
    };
    Ok((reference, i64::from(history)))
}

pub fn entry_filter(request: &proto::ListEntriesRequest) -> FieldResult<EntryFilter> {
    Ok(EntryFilter {
        project: project("project", &request.project)?,
        kinds: entry_kinds("kinds", &request.kinds)?,
        category: optional_name("category", &request.category, MAX_CATEGORY_CHARS)?.map(|value| value.to_lowercase()),
        status: status_filter("status", request.status)?,
        tag: optional_name("tag", &request.tag, MAX_TAG_CHARS)?.map(|value| value.to_lowercase()),
    })
}

fn idempotency_id(field: &str, value: &str) -> FieldResult<Uuid> {
    Ok(optional_uuid(field, value)?.unwrap_or_else(Uuid::now_v7))
}

pub fn new_occurrence(request: &proto::RecordOccurrenceRequest, now: DateTime<Utc>) -> FieldResult<NewOccurrence> {
    Ok(NewOccurrence {
        occurrence_id: idempotency_id("occurrence_id", &request.occurrence_id)?,
        entry_id: required_uuid("entry_id", &request.entry_id)?,
        session_id: optional_uuid("session_id", &request.session_id)?,
        solution_id: optional_uuid("solution_id", &request.solution_id)?,
        success: request.success,
        resolution_minutes: resolution_minutes("resolution_minutes", request.resolution_minutes)?,
        occurred_at: optional_timestamp("occurred_at", request.occurred_at.as_ref())?.unwrap_or(now),
        note: text("note", &request.note, MAX_NOTE_CHARS, false)?,
        found_via_search: request.found_via_search,
    })
}

pub fn new_application(request: &proto::RecordApplicationRequest, now: DateTime<Utc>) -> FieldResult<Application> {
    Ok(Application {
        application_id: idempotency_id("application_id", &request.application_id)?,
        entry_id: required_uuid("entry_id", &request.entry_id)?,
        session_id: required_uuid("session_id", &request.session_id)?,
        solution_id: optional_uuid("solution_id", &request.solution_id)?,
        success: request.success,
        resolution_minutes: resolution_minutes("resolution_minutes", request.resolution_minutes)?,
        found_via_search: request.found_via_search,
        note: text("note", &request.note, MAX_NOTE_CHARS, false)?,
        applied_at: now,
    })
}

/// SearchMany's caps by default: triage shows 3 tasks with 2 hits each.
const DEFAULT_PER_QUERY: usize = 2;
const DEFAULT_QUERIES_WITH_HITS: usize = 3;

/// A SearchMany's caps, its defaults filled in.
pub fn search_many_caps(request: &proto::SearchManyRequest) -> Caps {
    let or = |value: u32, default: usize, max: usize| if value == 0 { default } else { (value as usize).min(max) };
    let per_query = or(request.per_query_limit, DEFAULT_PER_QUERY, MAX_SEARCH_LIMIT as usize);
    let queries_with_hits = or(request.max_queries_with_hits, DEFAULT_QUERIES_WITH_HITS, 50);
    Caps { per_query, queries_with_hits, total: or(request.total_limit, per_query * queries_with_hits, 500) }
}

use lore_domain::knowledge::search::MAX_SEARCH_LIMIT;

fn search_mode(field: &str, value: i32) -> FieldResult<SearchMode> {
    Ok(match enum_value::<proto::SearchMode>(field, value)? {
        proto::SearchMode::Unspecified | proto::SearchMode::Hybrid => SearchMode::Hybrid,
        proto::SearchMode::Keyword => SearchMode::Keyword,
        proto::SearchMode::Semantic => SearchMode::Semantic,
    })
}

fn severities(field: &str, values: &[i32]) -> FieldResult<Vec<Severity>> {
    values
        .iter()
        .enumerate()
        .map(|(index, value)| {
            let field = format!("{field}[{index}]");
            severity(&field, *value)?.ok_or_else(|| FieldError::new(field, "unspecified is not a severity"))
        })
        .collect()
}

/// One query of Search (`default_limit` None: the limit is required) or of
/// SearchMany (the per-query cap fills in and bounds it).
pub fn search_query(
    project_name: &str,
    query: &proto::SearchQuery,
    default_limit: Option<u32>,
) -> FieldResult<SearchQuery> {
    let limit = match (query.limit, default_limit) {
        (0, Some(cap)) => cap,
        (limit, Some(cap)) => limit.min(cap),
        (limit, None) => limit,
    };
    let mut checked = SearchQuery::new(project_name, &query.text, limit, search_mode("mode", query.mode)?)?;
    checked.min_similarity = match query.min_score {
        0.0 => None,
        value => Some(score("min_score", value, 1.0)?),
    };
    let category = optional_name("category", &query.category, MAX_CATEGORY_CHARS)?.map(|value| value.to_lowercase());
    if query.category_only && category.is_none() {
        return Err(FieldError::new("category_only", "needs a category"));
    }
    checked.filter = SearchFilter {
        project: project_name.to_owned(),
        kinds: entry_kinds("kinds", &query.kinds)?,
        category: category.clone().filter(|_| query.category_only),
        severities: severities("severities", &query.severities)?,
        tags: tags("tags", &query.tags)?,
        include_obsolete: query.include_obsolete,
    };
    checked.category = category;
    Ok(checked)
}

fn signal_to_proto(signal: Signal) -> proto::MatchSignal {
    match signal {
        Signal::Keyword => proto::MatchSignal::Keyword,
        Signal::Fuzzy => proto::MatchSignal::Fuzzy,
        Signal::Semantic => proto::MatchSignal::Semantic,
        Signal::Symptom => proto::MatchSignal::Symptom,
    }
}

pub fn relevance_to_proto(relevance: Relevance) -> proto::Relevance {
    match relevance {
        Relevance::High => proto::Relevance::High,
        Relevance::Medium => proto::Relevance::Medium,
        Relevance::Low => proto::Relevance::Low,
        Relevance::Weak => proto::Relevance::Unspecified,
    }
}

pub fn hit_to_proto(hit: &Hit) -> proto::SearchHit {
    proto::SearchHit {
        entry: Some(entry_to_proto(&hit.entry)),
        score: hit.score,
        relevance: relevance_to_proto(hit.relevance) as i32,
        reasons: hit
            .reasons
            .iter()
            .map(|reason| proto::MatchReason {
                signal: signal_to_proto(reason.signal) as i32,
                score: reason.score,
                rank: reason.rank,
                matched_terms: reason.matched_terms.clone(),
            })
            .collect(),
        parts: Some(proto::ScoreParts {
            similarity: hit.parts.similarity,
            success_rate: hit.parts.success_rate,
            recency: hit.parts.recency,
            specificity: hit.parts.specificity,
            category: hit.parts.category.unwrap_or(0.0),
        }),
        applied_before: hit.applied_before.iter().map(application_to_proto).collect(),
        snippet: hit.snippet.clone(),
        recommendation: hit.recommendation.clone(),
        line: hit.line.clone(),
        best_solution: hit.best_solution().map(solution_to_proto),
        expand: Some(expand_hint(&hit.entry)),
    }
}

/// The CLI command and the MCP tool call that show `entry` whole.
pub fn expand_hint(entry: &Entry) -> proto::ExpandHint {
    let handle = entry.key.clone().unwrap_or_else(|| entry.entry_id.to_string());
    proto::ExpandHint {
        cli: format!("lore entry show {} --project {}", shell_word(&handle), entry.project),
        tool: "get_lesson".into(),
        arguments: serde_json::json!({ "entry": handle }).to_string(),
    }
}

/// `word` as one shell word: as it is when it is plain, else single-quoted.
fn shell_word(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_.:/@+=".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// A CreateDraft request: its id, project, source and the agent's proposal.
pub fn new_draft(request: &proto::CreateDraftRequest) -> FieldResult<(Uuid, String, DraftSource, Option<Proposal>)> {
    let draft_id = idempotency_id("draft_id", &request.draft_id)?;
    let project = project("project", &request.project)?;
    let source = match (request.epic_id.is_empty(), request.session_id.is_empty()) {
        (false, true) => DraftSource::Epic(common::identifier("epic_id", &request.epic_id, true)?),
        (true, false) => DraftSource::Session(required_uuid("session_id", &request.session_id)?),
        _ => return Err(FieldError::new("epic_id", "give exactly one of epic_id and session_id")),
    };
    let proposal = match &request.proposal {
        None => None,
        Some(proposal) => Some(Proposal {
            title: name("proposal.title", &proposal.title, MAX_TITLE_CHARS, true)?,
            problem: text("proposal.problem", &proposal.problem, MAX_PROPOSAL_CHARS, false)?,
            solution: text("proposal.solution", &proposal.solution, MAX_PROPOSAL_CHARS, false)?,
            category: optional_name("proposal.category", &proposal.category, MAX_CATEGORY_CHARS)?
                .map(|category| category.to_lowercase())
                .unwrap_or_default(),
            tags: tags("proposal.tags", &proposal.tags)?,
        }),
    };
    Ok((draft_id, project, source, proposal))
}

/// Unspecified is pending.
pub fn draft_status(field: &str, value: i32) -> FieldResult<DraftStatus> {
    Ok(match enum_value::<proto::DraftStatus>(field, value)? {
        proto::DraftStatus::Unspecified | proto::DraftStatus::Pending => DraftStatus::Pending,
        proto::DraftStatus::Approved => DraftStatus::Approved,
        proto::DraftStatus::Rejected => DraftStatus::Rejected,
        proto::DraftStatus::Quarantined => DraftStatus::Quarantined,
    })
}

pub fn review(request: &proto::ReviewDraftRequest) -> FieldResult<Review> {
    let verdict = match enum_value::<proto::ReviewDecision>("decision", request.decision)? {
        proto::ReviewDecision::Unspecified => None,
        proto::ReviewDecision::Approve => Some(Verdict::Approve),
        proto::ReviewDecision::Reject => Some(Verdict::Reject),
    };
    let edits =
        SubmittedEdits { title: &request.title, category: &request.category, body: &request.body, tags: &request.tags };
    Review::submitted(&request.draft_id, verdict, &request.reviewer, &request.note, edits)
}

pub fn draft_to_proto(draft: &Draft) -> proto::Draft {
    let (epic_id, session_id) = match &draft.source {
        DraftSource::Epic(epic) => (epic.clone(), String::new()),
        DraftSource::Session(session) => (String::new(), session.to_string()),
    };
    proto::Draft {
        draft_id: draft.draft_id.to_string(),
        project: draft.project.clone(),
        epic_id,
        session_id,
        title: draft.title.clone(),
        category: draft.category.clone(),
        body: draft.body.clone(),
        tags: draft.tags.clone(),
        status: match draft.status {
            DraftStatus::Pending => proto::DraftStatus::Pending,
            DraftStatus::Approved => proto::DraftStatus::Approved,
            DraftStatus::Rejected => proto::DraftStatus::Rejected,
            DraftStatus::Quarantined => proto::DraftStatus::Quarantined,
        } as i32,
        reviewer: draft.reviewer.clone().unwrap_or_default(),
        review_note: draft.review_note.clone(),
        entry_id: draft.entry_id.map(|id| id.to_string()).unwrap_or_default(),
        created_at: Some(to_timestamp(draft.created_at)),
        reviewed_at: draft.reviewed_at.map(to_timestamp),
    }
}

pub fn index_status_to_proto(status: &IndexStatus) -> proto::GetIndexStatusResponse {
    let count = |value: i64| value.max(0) as u64;
    proto::GetIndexStatusResponse {
        entries: count(status.embeddings.entries),
        embedding_model: status.model.clone(),
        embeddings_pending: count(status.embeddings.pending),
        embeddings_failing: count(status.embeddings.failing),
        last_embedding_error: status.embeddings.last_error.clone().unwrap_or_default(),
        keyword_index_ready: status.keyword_index.is_some(),
        keyword_index_entries: status.keyword_index.unwrap_or(0),
    }
}

/// A synonym as PutSynonym and DeleteSynonym take it: the term lowercased,
/// both sides holding words, and not the same.
pub fn synonym(field: &str, synonym: Option<&proto::Synonym>) -> FieldResult<Synonym> {
    let synonym = synonym.ok_or_else(|| FieldError::new(field, "required"))?;
    let project = match synonym.project.as_str() {
        "" => None,
        name => Some(project(&format!("{field}.project"), name)?),
    };
    let term = name(&format!("{field}.term"), &synonym.term, MAX_SYNONYM_TERM_CHARS, true)?.to_lowercase();
    let expansion = name(&format!("{field}.expansion"), &synonym.expansion, MAX_SYNONYM_CHARS, true)?.to_lowercase();
    for (part, value) in [("term", &term), ("expansion", &expansion)] {
        if lore_domain::knowledge::keyword::analysis::words(value).is_empty() {
            return Err(FieldError::new(format!("{field}.{part}"), "holds no word (letters or digits)"));
        }
    }
    if term == expansion {
        return Err(FieldError::new(format!("{field}.expansion"), "is the term itself"));
    }
    Ok(Synonym { project, term, expansion })
}

pub fn synonym_to_proto(synonym: &Synonym) -> proto::Synonym {
    proto::Synonym {
        project: synonym.project.clone().unwrap_or_default(),
        term: synonym.term.clone(),
        expansion: synonym.expansion.clone(),
    }
}

/// A category relation as PutCategoryRelation and DeleteCategoryRelation
/// take it: two different categories, lowercased, in stored order.
pub fn category_relation(field: &str, relation: Option<&proto::CategoryRelation>) -> FieldResult<CategoryRelation> {
    let relation = relation.ok_or_else(|| FieldError::new(field, "required"))?;
    let project = project(&format!("{field}.project"), &relation.project)?;
    let category = name(&format!("{field}.category"), &relation.category, MAX_CATEGORY_CHARS, true)?.to_lowercase();
    let related = name(&format!("{field}.related"), &relation.related, MAX_CATEGORY_CHARS, true)?.to_lowercase();
    if category == related {
        return Err(FieldError::new(format!("{field}.related"), "is the category itself"));
    }
    Ok(CategoryRelation::between(project, category, related))
}

pub fn category_relation_to_proto(relation: &CategoryRelation) -> proto::CategoryRelation {
    proto::CategoryRelation {
        project: relation.project.clone(),
        category: relation.category.clone(),
        related: relation.related.clone(),
    }
}
