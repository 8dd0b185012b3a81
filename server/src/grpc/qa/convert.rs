//! QaLearningService proto <-> domain conversions, with the checks on
//! client input (each failing with the field's name).

pub use lore_types::qa::{decode_pattern_cursor, pattern_cursor};
pub use lore_types::validate::uuids;

use crate::grpc::convert::{origin_to_proto, trust_to_proto};
use chrono::{DateTime, Duration, Utc};
use lore_types::trust::{Origin, Trust};
use uuid::Uuid;

use lore_proto::v1 as proto;

use crate::grpc::convert::{
    FieldError, FieldResult, enum_value, optional_timestamp, optional_uuid, project, required_uuid, time_range,
    to_timestamp,
};
use lore_domain::qa::hotspots::HotSpotQuery;
use lore_domain::qa::remining::Remined;
use lore_types::qa::guards::{CallWarningMode, Guard, Guards};
use lore_types::qa::hotspots::{HotSpot, HotSpots};
use lore_types::qa::limits::{
    MAX_CHECK_OUTPUT_BYTES, MAX_CHECKS, MAX_FILES, MAX_MESSAGE_BYTES, MAX_MESSAGES, MAX_NAME_CHARS, MAX_NOTE_CHARS,
    MAX_PATH_CHARS, MAX_TEXT_CHARS, MAX_WARNINGS,
};
use lore_types::qa::significance::{Comparison, GroupRate};
use lore_types::qa::{
    CategoryRule, CheckResult, Dashboard, DashboardQuery, FailedCheck, FixAttempt, FixOutcome, FixToReview,
    GroupingMask, NewFailure, NewTaskResult, Occurrence, Pattern, PatternCursor, PatternEdits, PatternFilter,
    PatternLink, PatternStatus, Promotion, PromotionReview, PromotionStatus, Split, Task, TaskFigures,
    TaskResultRecorded, Warning, WarningOutcome, WarningRequest,
};
use lore_types::validate;

/// Days the dashboard covers when the request gives no window.
const DEFAULT_DASHBOARD_DAYS: i64 = 30;
const DEFAULT_WARNINGS: u32 = 5;

fn text(field: &str, value: &str) -> FieldResult<String> {
    validate::text(field, value, MAX_TEXT_CHARS, false)
}

fn optional_name(field: &str, value: &str) -> FieldResult<Option<String>> {
    validate::optional_name(field, value, MAX_NAME_CHARS)
}

fn paths(field: &str, values: &[String]) -> FieldResult<Vec<String>> {
    validate::list(field, values, MAX_FILES, MAX_PATH_CHARS)
}

/// A message within the byte limit: huge messages are refused, not cut, so
/// that nothing is stored half-way without the client knowing.
fn message(field: &str, value: &str) -> FieldResult<String> {
    if value.len() > MAX_MESSAGE_BYTES {
        return Err(FieldError::new(
            field,
            format!("{} bytes, over the limit of {MAX_MESSAGE_BYTES}; send the first lines of the error", value.len()),
        ));
    }
    validate::text(field, value, usize::MAX, true)
}

pub fn task(field: &str, value: Option<&proto::Task>) -> FieldResult<Task> {
    let task = value.ok_or_else(|| FieldError::new(field, "required"))?;
    let within = |name: &str| format!("{field}.{name}");
    Ok(Task {
        task_id: crate::grpc::convert::identifier(&within("task_id"), &task.task_id, true)?,
        title: validate::name(&within("title"), &task.title, 512, false)?,
        category: validate::name(&within("category"), &task.category, 128, false)?,
        files: paths(&within("files"), &task.files)?,
        description: text(&within("description"), &task.description)?,
    })
}

pub fn new_failure(request: &proto::CaptureFailureRequest, now: DateTime<Utc>) -> FieldResult<NewFailure> {
    let failure_id = match optional_uuid("failure_id", &request.failure_id)? {
        Some(id) => id,
        None => Uuid::now_v7(),
    };
    if request.error_messages.is_empty() && request.failed_checks.is_empty() {
        return Err(FieldError::new("error_messages", "at least one error message or failed check is required"));
    }
    if request.error_messages.len() > MAX_MESSAGES {
        return Err(FieldError::new(
            "error_messages",
            format!("{} messages, over the limit of {MAX_MESSAGES}", request.error_messages.len()),
        ));
    }
    if request.failed_checks.len() > MAX_CHECKS {
        return Err(FieldError::new(
            "failed_checks",
            format!("{} checks, over the limit of {MAX_CHECKS}", request.failed_checks.len()),
        ));
    }
    let error_messages = request
        .error_messages
        .iter()
        .enumerate()
        .map(|(index, value)| message(&format!("error_messages[{index}]"), value))
        .collect::<FieldResult<_>>()?;
    let failed_checks = request
        .failed_checks
        .iter()
        .enumerate()
        .map(|(index, check)| {
            let field = format!("failed_checks[{index}]");
            let name = validate::name(&format!("{field}.name"), &check.name, MAX_NAME_CHARS, true)?;
            let output = validate::text(&format!("{field}.output"), &check.output, usize::MAX, false)?;
            Ok(FailedCheck {
                name,
                output: truncate_bytes(&output, MAX_CHECK_OUTPUT_BYTES),
                exit_code: check.exit_code,
            })
        })
        .collect::<FieldResult<_>>()?;
    let occurred_at = optional_timestamp("occurred_at", request.occurred_at.as_ref())?.unwrap_or(now);
    if occurred_at > now + Duration::hours(1) {
        return Err(FieldError::new("occurred_at", "is in the future"));
    }
    Ok(NewFailure {
        failure_id,
        project: project("project", &request.project)?,
        task: task("task", request.task.as_ref())?,
        session_id: optional_uuid("session_id", &request.session_id)?,
        execution_id: crate::grpc::convert::identifier("execution_id", &request.execution_id, false)?,
        failed_checks,
        error_messages,
        files_modified: paths("files_modified", &request.files_modified)?,
        diff_summary: text("diff_summary", &request.diff_summary)?,
        occurred_at,
        // The caller, not the message, says who captured it: the handler.
        origin: Origin::default().tool_output(),
    })
}

/// The longest prefix of `value` within `max` bytes, on a character
/// boundary.
fn truncate_bytes(value: &str, max: usize) -> String {
    if value.len() <= max {
        return value.to_owned();
    }
    let mut end = max;
    while !value.is_char_boundary(end) {
        end -= 1;
    }
    value[..end].to_owned()
}

pub fn link_to_proto(link: &PatternLink) -> proto::PatternLink {
    proto::PatternLink {
        pattern_id: link.pattern_id.to_string(),
        pattern_name: link.pattern_name.clone(),
        template: link.template.clone(),
        similarity: link.similarity,
        new_pattern: link.new_pattern,
        reason: link.reason.clone(),
        message: link.message.clone(),
    }
}

pub fn fix_outcome(field: &str, value: i32) -> FieldResult<FixOutcome> {
    Ok(match enum_value::<proto::FixOutcome>(field, value)? {
        proto::FixOutcome::Unspecified => return Err(FieldError::new(field, "required")),
        proto::FixOutcome::Success => FixOutcome::Success,
        proto::FixOutcome::Failure => FixOutcome::Failure,
        proto::FixOutcome::Partial => FixOutcome::Partial,
    })
}

fn fix_outcome_to_proto(value: FixOutcome) -> proto::FixOutcome {
    match value {
        FixOutcome::Success => proto::FixOutcome::Success,
        FixOutcome::Failure => proto::FixOutcome::Failure,
        FixOutcome::Partial => proto::FixOutcome::Partial,
    }
}

pub fn fix_attempt(request: &proto::RecordFixAttemptRequest, now: DateTime<Utc>) -> FieldResult<FixAttempt> {
    if request.attempt_number == 0 || request.attempt_number > 10_000 {
        return Err(FieldError::new("attempt_number", "must be 1 to 10000"));
    }
    Ok(FixAttempt {
        attempt_id: required_uuid("attempt_id", &request.attempt_id)?,
        failure_id: required_uuid("failure_id", &request.failure_id)?,
        attempt_number: request.attempt_number as i32,
        approach: text("approach", &request.approach)?,
        files_changed: paths("files_changed", &request.files_changed)?,
        summary: text("summary", &request.summary)?,
        outcome: fix_outcome("outcome", request.outcome)?,
        qa_result: text("qa_result", &request.qa_result)?,
        recorded_at: now,
        // Set by the handler from the caller.
        trust: Trust::Observed,
        origin: Origin::default(),
        held: false,
        review: None,
    })
}

pub fn fix_to_proto(attempt: &FixAttempt) -> proto::FixAttempt {
    proto::FixAttempt {
        attempt_id: attempt.attempt_id.to_string(),
        failure_id: attempt.failure_id.to_string(),
        attempt_number: attempt.attempt_number as u32,
        approach: attempt.approach.clone(),
        files_changed: attempt.files_changed.clone(),
        summary: attempt.summary.clone(),
        outcome: fix_outcome_to_proto(attempt.outcome).into(),
        qa_result: attempt.qa_result.clone(),
        recorded_at: Some(to_timestamp(attempt.recorded_at)),
        trust: trust_to_proto(attempt.trust) as i32,
        origin: Some(origin_to_proto(&attempt.origin)),
        quarantined: attempt.held,
        review: attempt.review.as_ref().map(|review| {
            let decision = crate::grpc::convert::review_record_to_proto(review);
            proto::FixReview {
                approved: decision.approved,
                reviewed_by: decision.reviewed_by,
                reviewed_at: decision.reviewed_at,
                note: decision.note,
            }
        }),
    }
}

/// Fixes to review: at most this many at once.
const MAX_FIXES_TO_REVIEW: u32 = 500;
const DEFAULT_FIXES_TO_REVIEW: u32 = 50;

/// ListFixesToReview: the project and how many.
pub fn fixes_to_review_request(request: &proto::ListFixesToReviewRequest) -> FieldResult<(String, i64)> {
    let limit = match request.limit {
        0 => DEFAULT_FIXES_TO_REVIEW,
        limit => limit.min(MAX_FIXES_TO_REVIEW),
    };
    Ok((project("project", &request.project)?, i64::from(limit)))
}

pub fn fix_to_review_to_proto(fix: &FixToReview) -> proto::FixToReview {
    proto::FixToReview {
        attempt: Some(fix_to_proto(&fix.attempt)),
        task_id: fix.task_id.clone(),
        templates: fix.templates.clone(),
    }
}

/// ReviewFix: the attempt, whether it is approved, and the note.
pub fn fix_review(request: &proto::ReviewFixRequest) -> FieldResult<(Uuid, bool, String)> {
    let attempt_id = required_uuid("attempt_id", &request.attempt_id)?;
    let approved = match enum_value::<proto::FixDecision>("decision", request.decision)? {
        proto::FixDecision::Approve => true,
        proto::FixDecision::Reject => false,
        proto::FixDecision::Unspecified => {
            return Err(FieldError::new("decision", "required: FIX_DECISION_APPROVE or FIX_DECISION_REJECT"));
        }
    };
    let note = validate::text("note", &request.note, MAX_NOTE_CHARS, false)?;
    Ok((attempt_id, approved, note))
}

pub fn warning_request(request: &proto::GetWarningsRequest) -> FieldResult<WarningRequest> {
    let limit = match request.limit {
        0 => DEFAULT_WARNINGS,
        limit => limit.min(MAX_WARNINGS),
    };
    Ok(WarningRequest {
        project: project("project", &request.project)?,
        task: task("task", request.task.as_ref())?,
        session_id: optional_uuid("session_id", &request.session_id)?,
        limit: limit as usize,
    })
}

pub fn warning_to_proto(warning: &Warning) -> proto::Warning {
    proto::Warning {
        delivery_id: warning.delivery_id.to_string(),
        pattern_id: warning.pattern_id.to_string(),
        pattern_name: warning.pattern_name.clone(),
        text: warning.text.clone(),
        recommended_fix: warning.recommended_fix.clone(),
        reason: warning.reason.clone(),
        relevance: warning.relevance,
        confidence: warning.confidence,
        frequency: warning.frequency.max(0) as u64,
        score: warning.score,
        fix_trust: warning.fix_trust.map_or(proto::Trust::Unspecified, trust_to_proto) as i32,
        template: warning.template.clone(),
        category: warning.category.clone(),
        cited_files: warning.cited_files.clone(),
    }
}

pub fn warning_outcome(field: &str, value: i32) -> FieldResult<WarningOutcome> {
    Ok(match enum_value::<proto::WarningOutcome>(field, value)? {
        proto::WarningOutcome::Unspecified => return Err(FieldError::new(field, "required")),
        proto::WarningOutcome::Prevented => WarningOutcome::Prevented,
        proto::WarningOutcome::FailedAnyway => WarningOutcome::FailedAnyway,
        proto::WarningOutcome::NotApplicable => WarningOutcome::NotApplicable,
        proto::WarningOutcome::TaskIncomplete => WarningOutcome::TaskIncomplete,
        proto::WarningOutcome::Unrelated => WarningOutcome::Unrelated,
    })
}

fn warning_outcome_to_proto(outcome: WarningOutcome) -> proto::WarningOutcome {
    match outcome {
        WarningOutcome::Prevented => proto::WarningOutcome::Prevented,
        WarningOutcome::FailedAnyway => proto::WarningOutcome::FailedAnyway,
        WarningOutcome::NotApplicable => proto::WarningOutcome::NotApplicable,
        WarningOutcome::TaskIncomplete => proto::WarningOutcome::TaskIncomplete,
        WarningOutcome::Unrelated => proto::WarningOutcome::Unrelated,
    }
}

pub fn task_result(request: &proto::RecordTaskResultRequest, now: DateTime<Utc>) -> FieldResult<NewTaskResult> {
    let passed = match enum_value::<proto::TaskVerdict>("verdict", request.verdict)? {
        proto::TaskVerdict::Unspecified => return Err(FieldError::new("verdict", "required: passed or failed")),
        proto::TaskVerdict::Passed => true,
        proto::TaskVerdict::Failed => false,
    };
    if request.checks.len() > MAX_CHECKS {
        return Err(FieldError::new(
            "checks",
            format!("{} checks, over the limit of {MAX_CHECKS}", request.checks.len()),
        ));
    }
    let mut checks: Vec<CheckResult> = Vec::with_capacity(request.checks.len());
    for (index, check) in request.checks.iter().enumerate() {
        let field = format!("checks[{index}]");
        let name = validate::name(&format!("{field}.name"), &check.name, MAX_NAME_CHARS, true)?;
        if checks.iter().any(|seen| seen.name == name) {
            return Err(FieldError::new(format!("{field}.name"), format!("check {name:?} is listed twice")));
        }
        if passed && !check.passed {
            return Err(FieldError::new(
                format!("{field}.passed"),
                format!("check {name:?} failed, which contradicts the passed verdict"),
            ));
        }
        let output = validate::text(&format!("{field}.output"), &check.output, usize::MAX, false)?;
        checks.push(CheckResult {
            name,
            passed: check.passed,
            output: truncate_bytes(&output, MAX_CHECK_OUTPUT_BYTES),
            exit_code: check.exit_code,
        });
    }
    if !passed && !checks.is_empty() && checks.iter().all(|check| check.passed) {
        return Err(FieldError::new("checks", "every check passed, which contradicts the failed verdict"));
    }
    let failure_ids = if request.failure_ids.is_empty() {
        Vec::new()
    } else if passed {
        return Err(FieldError::new("failure_ids", "a passed verdict has no failures"));
    } else {
        uuids("failure_ids", &request.failure_ids, MAX_CHECKS)?
    };
    let occurred_at = optional_timestamp("occurred_at", request.occurred_at.as_ref())?.unwrap_or(now);
    if occurred_at > now + Duration::hours(1) {
        return Err(FieldError::new("occurred_at", "is in the future"));
    }
    Ok(NewTaskResult {
        result_id: optional_uuid("result_id", &request.result_id)?.unwrap_or_else(Uuid::now_v7),
        project: project("project", &request.project)?,
        task: task("task", request.task.as_ref())?,
        session_id: optional_uuid("session_id", &request.session_id)?,
        passed,
        checks,
        failure_ids,
        occurred_at,
        // Set by the handler from the caller.
        origin: Origin::default(),
    })
}

pub fn task_result_to_proto(recorded: &TaskResultRecorded) -> proto::RecordTaskResultResponse {
    let ids = |ids: &[Uuid]| ids.iter().map(ToString::to_string).collect();
    proto::RecordTaskResultResponse {
        ack: Some(proto::WriteAck { id: recorded.result_id.to_string(), duplicate: recorded.duplicate }),
        attempt: recorded.attempt.max(0) as u32,
        failure_ids: ids(&recorded.failure_ids),
        pattern_ids: ids(&recorded.pattern_ids),
        scored: recorded
            .scored
            .iter()
            .map(|delivery| proto::ScoredDelivery {
                delivery_id: delivery.delivery_id.to_string(),
                pattern_id: delivery.pattern_id.to_string(),
                outcome: warning_outcome_to_proto(delivery.outcome).into(),
                held_out: delivery.held_out,
            })
            .collect(),
        missed: recorded
            .missed
            .iter()
            .map(|missed| proto::MissedOpportunity {
                pattern_id: missed.pattern_id.to_string(),
                pattern_name: missed.pattern_name.clone(),
                warned: missed.warned,
            })
            .collect(),
    }
}

fn group_rate_to_proto(group: &GroupRate) -> proto::GroupRate {
    proto::GroupRate {
        tasks: group.counts.tasks,
        failed: group.counts.failed,
        rate: group.rate,
        interval_low: group.low,
        interval_high: group.high,
    }
}

pub fn comparison_to_proto(comparison: &Comparison) -> proto::Comparison {
    proto::Comparison {
        shown: Some(group_rate_to_proto(&comparison.shown)),
        held_out: Some(group_rate_to_proto(&comparison.held_out)),
        p_value: comparison.p_value,
        significant: comparison.significant,
        significance: comparison.significance,
        tasks_needed: comparison.tasks_needed,
    }
}

pub fn pattern_status(field: &str, value: i32) -> FieldResult<Option<PatternStatus>> {
    Ok(match enum_value::<proto::PatternStatus>(field, value)? {
        proto::PatternStatus::Unspecified => None,
        proto::PatternStatus::Candidate => Some(PatternStatus::Candidate),
        proto::PatternStatus::Active => Some(PatternStatus::Active),
        proto::PatternStatus::Merged => Some(PatternStatus::Merged),
        proto::PatternStatus::Promoted => Some(PatternStatus::Promoted),
        proto::PatternStatus::Retired => Some(PatternStatus::Retired),
    })
}

fn pattern_status_to_proto(value: PatternStatus) -> proto::PatternStatus {
    match value {
        PatternStatus::Candidate => proto::PatternStatus::Candidate,
        PatternStatus::Active => proto::PatternStatus::Active,
        PatternStatus::Merged => proto::PatternStatus::Merged,
        PatternStatus::Promoted => proto::PatternStatus::Promoted,
        PatternStatus::Retired => proto::PatternStatus::Retired,
    }
}

pub fn pattern_to_proto(pattern: &Pattern) -> proto::Pattern {
    proto::Pattern {
        pattern_id: pattern.pattern_id.to_string(),
        project: pattern.project.clone(),
        category: pattern.category.clone(),
        name: pattern.name.clone(),
        description: pattern.description.clone(),
        common_cause: pattern.common_cause.clone(),
        recommended_fix: pattern.recommended_fix.clone(),
        template: pattern.template.clone(),
        file_globs: pattern.file_globs.clone(),
        status: pattern_status_to_proto(pattern.status).into(),
        merged_into: pattern.merged_into.map(|id| id.to_string()).unwrap_or_default(),
        occurrence_count: pattern.occurrence_count.max(0) as u64,
        task_count: pattern.task_count.max(0) as u64,
        confidence: pattern.confidence,
        effectiveness: pattern.effectiveness(),
        warnings_delivered: pattern.warnings_delivered.max(0) as u64,
        first_seen_at: Some(to_timestamp(pattern.first_seen_at)),
        last_seen_at: Some(to_timestamp(pattern.last_seen_at)),
        fix_trust: pattern.fix_trust.map_or(proto::Trust::Unspecified, trust_to_proto) as i32,
        held: pattern.held,
        last_change: <&str>::from(pattern.last_change).to_owned(),
    }
}

/// Page size and where to continue, for the lists of this service.
pub fn page_size(value: Option<&proto::PageRequest>) -> i64 {
    match value.map(|page| page.page_size).unwrap_or(0) {
        0 => 50,
        size => i64::from(size.min(500)),
    }
}

pub fn pattern_filter(
    request: &proto::ListPatternsRequest,
) -> FieldResult<(PatternFilter, i64, Option<PatternCursor>)> {
    let statuses = request
        .statuses
        .iter()
        .enumerate()
        .filter_map(|(index, value)| pattern_status(&format!("statuses[{index}]"), *value).transpose())
        .collect::<FieldResult<_>>()?;
    let after = match request.page.as_ref().map(|page| page.cursor.as_str()) {
        Some(cursor) if !cursor.is_empty() => Some(decode_pattern_cursor("page.cursor", cursor)?),
        _ => None,
    };
    let filter = PatternFilter {
        project: project("project", &request.project)?,
        category: optional_name("category", &request.category)?.map(|category| category.to_lowercase()),
        statuses,
        file: optional_name("file", &request.file)?,
    };
    Ok((filter, page_size(request.page.as_ref()), after))
}

pub fn occurrence_to_proto(occurrence: &Occurrence) -> proto::PatternOccurrence {
    proto::PatternOccurrence {
        occurrence_id: occurrence.occurrence_id.to_string(),
        failure_id: occurrence.failure_id.to_string(),
        task_id: occurrence.task_id.clone(),
        link: Some(link_to_proto(&occurrence.link)),
        occurred_at: Some(to_timestamp(occurrence.occurred_at)),
    }
}

pub fn pattern_edits(request: &proto::UpdatePatternRequest) -> FieldResult<(Uuid, PatternEdits)> {
    let optional_text = |field: &str, value: &str| -> FieldResult<Option<String>> {
        Ok(if value.is_empty() { None } else { Some(text(field, value)?) })
    };
    Ok((
        required_uuid("pattern_id", &request.pattern_id)?,
        PatternEdits {
            name: optional_name("name", &request.name)?,
            description: optional_text("description", &request.description)?,
            common_cause: optional_text("common_cause", &request.common_cause)?,
            recommended_fix: optional_text("recommended_fix", &request.recommended_fix)?,
            status: pattern_status("status", request.status)?,
        },
    ))
}

pub fn dashboard_query(request: &proto::DashboardRequest, now: DateTime<Utc>) -> FieldResult<DashboardQuery> {
    let (from, until) = time_range("window", request.window.as_ref())?;
    let until = until.unwrap_or(now);
    let from = from.unwrap_or(until - Duration::days(DEFAULT_DASHBOARD_DAYS));
    if from >= until {
        return Err(FieldError::new("window", "start must be before end"));
    }
    Ok(DashboardQuery {
        project: project("project", &request.project)?,
        from,
        until,
        category: optional_name("category", &request.category)?.map(|category| category.to_lowercase()),
        agent_id: optional_name("agent_id", &request.agent_id)?,
        top_patterns: match request.top_patterns {
            0 => 10,
            top => i64::from(top.min(100)),
        },
    })
}

pub fn dashboard_to_proto(dashboard: &Dashboard) -> proto::DashboardResponse {
    let failures = dashboard.failures.max(0) as u64;
    let judged = dashboard.prevented + dashboard.failed_anyway;
    proto::DashboardResponse {
        failure_rate: dashboard
            .failure_rate
            .iter()
            .map(|day| proto::FailureRatePoint {
                day: day.day.format("%Y-%m-%d").to_string(),
                failures: day.failures.max(0) as u64,
                tasks: day.tasks.max(0) as u64,
                rate: if day.tasks == 0 { 0.0 } else { day.failures as f64 / day.tasks as f64 },
            })
            .collect(),
        top_patterns: dashboard.top_patterns.iter().map(pattern_to_proto).collect(),
        categories: dashboard
            .categories
            .iter()
            .map(|(category, count)| proto::CategoryCount {
                category: category.clone(),
                failures: (*count).max(0) as u64,
                share: if failures == 0 { 0.0 } else { *count as f64 / failures as f64 },
            })
            .collect(),
        mean_attempts_to_pass: dashboard.mean_attempts_to_pass,
        prevention_effectiveness: if judged == 0 { 0.0 } else { dashboard.prevented as f64 / judged as f64 },
        warnings_delivered: dashboard.warnings_delivered.max(0) as u64,
        failures,
        resolved: dashboard.resolved.max(0) as u64,
        resolution_rate: if failures == 0 { 0.0 } else { dashboard.resolved as f64 / failures as f64 },
        shown_failure_rate: dashboard.comparison.shown.rate,
        held_out_failure_rate: dashboard.comparison.held_out.rate,
        tasks: Some(task_figures_to_proto(&dashboard.tasks)),
        comparison: Some(comparison_to_proto(&dashboard.comparison)),
        missed_opportunities: dashboard.missed_opportunities.max(0) as u64,
        warnings_acknowledged: dashboard.acknowledged.max(0) as u64,
        acknowledged_effectiveness: {
            let judged = dashboard.acknowledged_prevented + dashboard.acknowledged_failed_anyway;
            if judged <= 0 { 0.0 } else { dashboard.acknowledged_prevented as f64 / judged as f64 }
        },
    }
}

fn task_figures_to_proto(figures: &TaskFigures) -> proto::TaskFigures {
    let share = |part: i64| if figures.tasks <= 0 { 0.0 } else { part as f64 / figures.tasks as f64 };
    proto::TaskFigures {
        tasks: figures.tasks.max(0) as u64,
        failed: figures.failed.max(0) as u64,
        failure_rate: share(figures.failed),
        first_time_pass_rate: share(figures.passed_first_time),
        mean_attempts_to_pass: figures.mean_attempts_to_pass,
        passed: figures.passed.max(0) as u64,
    }
}

pub fn promotion_status(field: &str, value: i32) -> FieldResult<PromotionStatus> {
    Ok(match enum_value::<proto::PromotionStatus>(field, value)? {
        proto::PromotionStatus::Unspecified => return Err(FieldError::new(field, "required")),
        proto::PromotionStatus::Pending => PromotionStatus::Pending,
        proto::PromotionStatus::Approved => PromotionStatus::Approved,
        proto::PromotionStatus::Published => PromotionStatus::Published,
        proto::PromotionStatus::Rejected => PromotionStatus::Rejected,
        proto::PromotionStatus::RolledBack => PromotionStatus::RolledBack,
    })
}

fn promotion_status_to_proto(value: PromotionStatus) -> proto::PromotionStatus {
    match value {
        PromotionStatus::Pending => proto::PromotionStatus::Pending,
        PromotionStatus::Approved => proto::PromotionStatus::Approved,
        PromotionStatus::Published => proto::PromotionStatus::Published,
        PromotionStatus::Rejected => proto::PromotionStatus::Rejected,
        PromotionStatus::RolledBack => proto::PromotionStatus::RolledBack,
    }
}

pub fn promotion_to_proto(promotion: &Promotion) -> proto::Promotion {
    proto::Promotion {
        promotion_id: promotion.promotion_id.to_string(),
        project: promotion.project.clone(),
        pattern_id: promotion.pattern_id.to_string(),
        status: promotion_status_to_proto(promotion.status).into(),
        markdown: promotion.markdown.clone(),
        entry_id: promotion.entry_id.map(|id| id.to_string()).unwrap_or_default(),
        instructions: promotion.instructions.clone(),
        history: promotion
            .history
            .iter()
            .map(|event| proto::PromotionEvent {
                status: promotion_status_to_proto(event.status).into(),
                actor: event.actor.clone(),
                note: event.note.clone(),
                at: Some(to_timestamp(event.at)),
            })
            .collect(),
    }
}

pub fn category_rule(value: Option<&proto::CategoryRule>) -> FieldResult<CategoryRule> {
    let rule = value.ok_or_else(|| FieldError::new("rule", "required"))?;
    let identifier = |field: &str, value: &str, max: usize, extra: &[u8]| -> FieldResult<String> {
        let value = value.trim().to_ascii_lowercase();
        let valid = (1..=max).contains(&value.len())
            && value.bytes().all(|byte| {
                byte.is_ascii_lowercase() || byte.is_ascii_digit() || byte == b'_' || extra.contains(&byte)
            });
        if valid {
            Ok(value)
        } else {
            Err(FieldError::new(
                field,
                format!(
                    "must be 1 to {max} characters of a-z, 0-9, '_'{}",
                    if extra.is_empty() { "" } else { ", '.' or '-'" }
                ),
            ))
        }
    };
    let regex = |field: &str, value: &str| -> FieldResult<String> {
        let value = validate::text(field, value, 2000, false)?;
        if !value.is_empty() {
            lore_domain::qa::category::compile(&value)
                .map_err(|error| FieldError::new(field, format!("invalid regex: {error}")))?;
        }
        Ok(value)
    };
    let project = if rule.project.is_empty() { None } else { Some(project("rule.project", &rule.project)?) };
    Ok(CategoryRule {
        rule_id: identifier("rule.rule_id", &rule.rule_id, 64, b".-")?,
        project,
        priority: rule.priority,
        category: identifier("rule.category", &rule.category, 64, b"")?,
        check_name_regex: regex("rule.check_name_regex", &rule.check_name_regex)?,
        message_regex: regex("rule.message_regex", &rule.message_regex)?,
        enabled: rule.enabled,
    })
}

pub fn category_rule_to_proto(rule: &CategoryRule) -> proto::CategoryRule {
    proto::CategoryRule {
        rule_id: rule.rule_id.clone(),
        project: rule.project.clone().unwrap_or_default(),
        priority: rule.priority,
        category: rule.category.clone(),
        check_name_regex: rule.check_name_regex.clone(),
        message_regex: rule.message_regex.clone(),
        enabled: rule.enabled,
    }
}

pub fn grouping_mask(value: Option<&proto::GroupingMask>, by: &str) -> FieldResult<GroupingMask> {
    let mask = value.ok_or_else(|| FieldError::new("mask", "required"))?;
    GroupingMask::submitted("mask", &mask.project, &mask.name, &mask.pattern, &mask.description, by)
}

pub fn grouping_mask_to_proto(mask: &GroupingMask) -> proto::GroupingMask {
    proto::GroupingMask {
        project: mask.project.clone(),
        name: mask.name.clone(),
        pattern: mask.pattern.clone(),
        description: mask.description.clone(),
        updated_by: mask.updated_by.clone(),
        updated_at: Some(to_timestamp(mask.updated_at)),
    }
}

pub fn remined_to_proto(done: &Remined) -> proto::RemineProjectResponse {
    proto::RemineProjectResponse {
        occurrences: done.occurrences as u32,
        merges: done.merges as u32,
        splits: done.splits as u32,
        moves: done.moves as u32,
        rejected: done.rejected as u32,
        automatic: done.automatic,
        proposed: done.proposed as u32,
        corrected_pairs: done.evidence.before.pairs,
        kept_before: done.evidence.before.kept,
        kept_replay: done.evidence.replay.kept,
        regressions: done.evidence.regressions as u32,
        literal_agreeing: done.literal.agreeing as u32,
        literal_against: done.literal.against as u32,
        read_literally: done.read_literally,
    }
}

pub fn split(request: &proto::SplitPatternRequest) -> FieldResult<Split> {
    Split::submitted(
        &request.split_id,
        &request.pattern_id,
        &request.occurrence_ids,
        &request.new_name,
        &request.reason,
    )
}

pub fn review(request: &proto::ReviewPromotionRequest, note_required: bool) -> FieldResult<PromotionReview> {
    PromotionReview::submitted(&request.promotion_id, &request.actor, &request.note, note_required)
}

pub fn hot_spot_query(request: &proto::HotSpotsRequest, now: DateTime<Utc>) -> FieldResult<HotSpotQuery> {
    let (from, until) = time_range("window", request.window.as_ref())?;
    let until = until.unwrap_or(now);
    let from = from.unwrap_or(until - Duration::days(DEFAULT_DASHBOARD_DAYS));
    if from >= until {
        return Err(FieldError::new("window", "start must be before end"));
    }
    if request.limit > 200 {
        return Err(FieldError::new("limit", format!("{} is over the limit of 200", request.limit)));
    }
    Ok(HotSpotQuery {
        project: project("project", &request.project)?,
        from,
        until,
        min_count: if request.min_count == 0 { 3 } else { u64::from(request.min_count) },
        limit: if request.limit == 0 { 20 } else { request.limit as usize },
    })
}

pub fn hot_spot_to_proto(spot: &HotSpot) -> proto::HotSpot {
    proto::HotSpot { name: spot.name.clone(), rate: Some(group_rate_to_proto(&spot.rate)), hot: spot.hot }
}

pub fn hot_spots_to_proto(spots: &HotSpots) -> proto::HotSpotsResponse {
    proto::HotSpotsResponse {
        sessions: Some(group_rate_to_proto(&spots.sessions)),
        areas: spots.areas.iter().map(hot_spot_to_proto).collect(),
        actions: Some(group_rate_to_proto(&spots.actions)),
        action_kinds: spots.action_kinds.iter().map(hot_spot_to_proto).collect(),
        significance: spots.significance,
    }
}

pub fn guard(guard: Option<&proto::Guard>, by: &str) -> FieldResult<Guard> {
    let guard = guard.ok_or_else(|| FieldError::new("guard", "required"))?;
    Guard::submitted("guard", &guard.project, &guard.command, &guard.reason, &guard.alternative, by)
}

pub fn guard_to_proto(guard: &Guard) -> proto::Guard {
    proto::Guard {
        guard_id: guard.guard_id.to_string(),
        project: guard.project.clone(),
        command: guard.shape.clone(),
        shape: guard.shape.clone(),
        reason: guard.reason.clone(),
        alternative: guard.alternative.clone(),
        created_by: guard.created_by.clone(),
        created_at: Some(to_timestamp(guard.created_at)),
    }
}

pub fn guards_to_proto(guards: &Guards) -> proto::ListGuardsResponse {
    proto::ListGuardsResponse {
        enabled: guards.enabled,
        guards: guards.guards.iter().map(guard_to_proto).collect(),
        call_warnings: call_warning_mode_to_proto(guards.call_warnings) as i32,
    }
}

pub fn call_warning_mode(field: &str, value: i32) -> FieldResult<CallWarningMode> {
    Ok(match enum_value::<proto::CallWarningMode>(field, value)? {
        proto::CallWarningMode::Unspecified => {
            return Err(FieldError::new(field, "required: deny_once, context or off"));
        }
        proto::CallWarningMode::DenyOnce => CallWarningMode::DenyOnce,
        proto::CallWarningMode::Context => CallWarningMode::Context,
        proto::CallWarningMode::Off => CallWarningMode::Off,
    })
}

fn call_warning_mode_to_proto(mode: CallWarningMode) -> proto::CallWarningMode {
    match mode {
        CallWarningMode::DenyOnce => proto::CallWarningMode::DenyOnce,
        CallWarningMode::Context => proto::CallWarningMode::Context,
        CallWarningMode::Off => proto::CallWarningMode::Off,
    }
}
