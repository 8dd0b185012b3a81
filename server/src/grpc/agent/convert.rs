//! AgentService proto <-> domain conversions, with the checks on client
//! input (each failing with the field's name).

use lore_proto::v1 as proto;

use lore_domain::briefing::limits::{
    MAX_AT_CALL, MAX_AT_CALL_CHARS, MAX_BUDGET_CHARS, MAX_DESCRIPTION_CHARS, MAX_FILES, MAX_FREQUENT_FAILURES,
    MAX_ITEMS, MAX_LABELS, MAX_MISSING_FILES, MAX_NAME_CHARS, MAX_PATH_CHARS, MAX_TITLE_CHARS, MIN_BUDGET_CHARS,
};
use lore_domain::briefing::{BriefRequest, BriefTask, Briefing, DEFAULT_ITEMS, FrequentFailure, Lesson};
use lore_domain::injections::Surface;
use lore_types::trust::quarantine::MAX_NOTE_CHARS;
use uuid::Uuid;

use crate::grpc::convert::{
    FieldError, FieldResult, enum_value, identifier, optional_uuid, origin_to_proto, project, required_uuid,
    resume_summary_to_proto, to_timestamp, trust_to_proto,
};
use crate::grpc::knowledge::convert::{entry_kind_to_proto, relevance_to_proto, solution_to_proto};
use crate::grpc::qa::convert::warning_to_proto;
use lore_types::trust::quarantine::{Decision, ItemKind, QuarantineFilter, QuarantineStatus, Quarantined};
use lore_types::validate;

fn items(field: &str, value: u32) -> FieldResult<usize> {
    match value as usize {
        0 => Ok(DEFAULT_ITEMS),
        value if value <= MAX_ITEMS => Ok(value),
        value => Err(FieldError::new(field, format!("{value} is over the maximum of {MAX_ITEMS}"))),
    }
}

fn task(value: Option<&proto::BriefTask>) -> FieldResult<BriefTask> {
    let Some(task) = value else { return Ok(BriefTask::default()) };
    let task_id = identifier("task.task_id", &task.task_id, false)?;
    Ok(BriefTask {
        task_id: (!task_id.is_empty()).then_some(task_id),
        title: validate::name("task.title", &task.title, MAX_TITLE_CHARS, false)?,
        description: validate::text("task.description", &task.description, MAX_DESCRIPTION_CHARS, false)?,
        files: validate::list("task.files", &task.files, MAX_FILES, MAX_PATH_CHARS)?,
        category: validate::name("task.category", &task.category, MAX_NAME_CHARS, false)?,
        labels: validate::tags("task.labels", &task.labels, MAX_LABELS, MAX_NAME_CHARS)?,
    })
}

pub fn brief_request(request: &proto::BriefRequest) -> FieldResult<BriefRequest> {
    let session_id = optional_uuid("session_id", &request.session_id)?;
    let agent_id = identifier("agent_id", &request.agent_id, false)?;
    if agent_id.is_empty() && session_id.is_none() {
        return Err(FieldError::new("agent_id", "required unless session_id is given"));
    }
    if request.omit_given && session_id.is_none() {
        return Err(FieldError::new("omit_given", "needs session_id: what was given is remembered per session"));
    }
    let budget_chars = match request.budget_chars as usize {
        0 => None,
        budget if (MIN_BUDGET_CHARS..=MAX_BUDGET_CHARS).contains(&budget) => Some(budget),
        budget => {
            return Err(FieldError::new(
                "budget_chars",
                format!("{budget} is outside {MIN_BUDGET_CHARS} to {MAX_BUDGET_CHARS}"),
            ));
        }
    };
    Ok(BriefRequest {
        project: project("project", &request.project)?,
        agent_id: (!agent_id.is_empty()).then_some(agent_id),
        session_id,
        task: task(request.task.as_ref())?,
        budget_chars,
        max_lessons: items("max_lessons", request.max_lessons)?,
        max_warnings: items("max_warnings", request.max_warnings)?,
        omit_given: request.omit_given,
        omit_last_session: request.omit_last_session,
        surface: match enum_value::<proto::InjectionSurface>("surface", request.surface)? {
            proto::InjectionSurface::Unspecified | proto::InjectionSurface::Briefing => Surface::Briefing,
            proto::InjectionSurface::SessionStart => Surface::SessionStart,
            proto::InjectionSurface::Prompt => Surface::Prompt,
            other => {
                return Err(FieldError::new(
                    "surface",
                    format!("{} is not a briefing; use SESSION_START, PROMPT or leave it unset", other.as_str_name()),
                ));
            }
        },
        missing_files: validate::list("missing_files", &request.missing_files, MAX_MISSING_FILES, MAX_PATH_CHARS)?,
        at_call: validate::list("at_call", &request.at_call, MAX_AT_CALL, MAX_AT_CALL_CHARS)?,
        frequent_failures: frequent_failures(&request.frequent_failures)?,
    })
}

/// A hook's count of failures recent sessions hit: one line each,
/// within bounds, and counts that add up.
fn frequent_failures(failures: &[proto::FrequentFailure]) -> FieldResult<Vec<FrequentFailure>> {
    if failures.len() > MAX_FREQUENT_FAILURES {
        return Err(FieldError::new(
            "frequent_failures",
            format!("{} items, over the limit of {MAX_FREQUENT_FAILURES}", failures.len()),
        ));
    }
    failures
        .iter()
        .enumerate()
        .map(|(index, failure)| {
            let field = format!("frequent_failures[{index}]");
            let text = validate::name(&format!("{field}.failure"), &failure.failure, MAX_AT_CALL_CHARS, true)?;
            if failure.sessions == 0 || failure.sessions > failure.of_sessions {
                return Err(FieldError::new(
                    format!("{field}.sessions"),
                    format!("{} is not between 1 and of_sessions ({})", failure.sessions, failure.of_sessions),
                ));
            }
            if !(0.0..=1.0).contains(&failure.chance) {
                return Err(FieldError::new(
                    format!("{field}.chance"),
                    format!("{} is not between 0 and 1", failure.chance),
                ));
            }
            let chance = if failure.chance > 0.0 {
                failure.chance
            } else {
                f64::from(failure.sessions) / f64::from(failure.of_sessions)
            };
            Ok(FrequentFailure { failure: text, sessions: failure.sessions, of_sessions: failure.of_sessions, chance })
        })
        .collect()
}

fn lesson_to_proto(lesson: &Lesson) -> proto::BriefLesson {
    let entry = &lesson.hit.entry;
    proto::BriefLesson {
        entry_id: entry.entry_id.to_string(),
        key: entry.key.clone().unwrap_or_default(),
        kind: entry_kind_to_proto(entry.kind) as i32,
        title: entry.title.clone(),
        summary: entry.summary.clone(),
        best_solution: lesson.hit.best_solution().map(solution_to_proto),
        success_rate: lesson.success_rate,
        times_applied: lesson.times_applied.max(0) as u64,
        why: lesson.why.clone(),
        score: lesson.hit.score,
        relevance: relevance_to_proto(lesson.hit.relevance) as i32,
        expand: lesson.expand(),
        trust: trust_to_proto(entry.trust) as i32,
        origin: Some(origin_to_proto(&entry.origin)),
    }
}

pub fn briefing_to_proto(briefing: &Briefing) -> proto::BriefResponse {
    proto::BriefResponse {
        briefing_id: briefing.briefing_id.to_string(),
        last_session: briefing.last_session.as_ref().map(resume_summary_to_proto),
        lessons: briefing.lessons.iter().map(lesson_to_proto).collect(),
        warnings: briefing.warnings.iter().map(warning_to_proto).collect(),
        warnings_held_out: briefing.warnings_held_out,
        markdown: briefing.markdown.clone(),
        omitted_for_budget: briefing.omitted_for_budget as u32,
        omitted_as_given: briefing.omitted_as_given as u32,
        omitted_as_stale: briefing.omitted_as_stale as u32,
        omitted_for_session_budget: briefing.omitted_for_session_budget as u32,
        omitted_for_call: briefing.omitted_for_call as u32,
        session_chars_before: briefing.session_chars_before as u64,
        degraded: briefing.degraded.is_some(),
        degraded_reason: briefing.degraded.clone().unwrap_or_default(),
        similar_sessions: briefing
            .similar_sessions
            .iter()
            .map(|session| proto::SimilarSession {
                session_id: session.session_id.to_string(),
                agent_id: session.agent_id.clone(),
                started_at: Some(crate::grpc::convert::to_timestamp(session.started_at)),
                outcome: session.outcome.clone(),
                what_happened: session.what_happened.clone(),
                score: session.score,
            })
            .collect(),
        hot_spots: briefing.hot_spots.iter().map(crate::grpc::qa::convert::hot_spot_to_proto).collect(),
    }
}

fn quarantined_kind_to_proto(kind: ItemKind) -> proto::QuarantinedKind {
    match kind {
        ItemKind::FailureMessage => proto::QuarantinedKind::FailureMessage,
        ItemKind::FixAttempt => proto::QuarantinedKind::FixAttempt,
        ItemKind::Entry => proto::QuarantinedKind::Entry,
        ItemKind::Draft => proto::QuarantinedKind::Draft,
        ItemKind::Pattern => proto::QuarantinedKind::Pattern,
        ItemKind::Action => proto::QuarantinedKind::Action,
        ItemKind::Session => proto::QuarantinedKind::Session,
    }
}

fn quarantine_status_to_proto(status: QuarantineStatus) -> proto::QuarantineStatus {
    match status {
        QuarantineStatus::Held => proto::QuarantineStatus::Held,
        QuarantineStatus::Released => proto::QuarantineStatus::Released,
        QuarantineStatus::Erased => proto::QuarantineStatus::Erased,
    }
}

pub fn quarantined_to_proto(item: &Quarantined) -> proto::QuarantinedItem {
    proto::QuarantinedItem {
        quarantine_id: item.quarantine_id.to_string(),
        project: item.project.clone(),
        kind: quarantined_kind_to_proto(item.item_kind) as i32,
        item_id: item.item_id.to_string(),
        part: item.part.clone(),
        excerpt: item.excerpt.clone(),
        reasons: item.reasons.clone(),
        score: item.score,
        origin: Some(origin_to_proto(&item.origin)),
        status: quarantine_status_to_proto(item.status) as i32,
        caught_at: Some(to_timestamp(item.caught_at)),
        decided_at: item.decided_at.map(to_timestamp),
        decided_by: item.decided_by.clone().unwrap_or_default(),
        note: item.note.clone(),
    }
}

pub fn quarantine_filter(request: &proto::ListQuarantinedRequest) -> FieldResult<QuarantineFilter> {
    let status = if request.all {
        None
    } else {
        Some(match enum_value::<proto::QuarantineStatus>("status", request.status)? {
            proto::QuarantineStatus::Unspecified | proto::QuarantineStatus::Held => QuarantineStatus::Held,
            proto::QuarantineStatus::Released => QuarantineStatus::Released,
            proto::QuarantineStatus::Erased => QuarantineStatus::Erased,
        })
    };
    let item_kind = match enum_value::<proto::QuarantinedKind>("kind", request.kind)? {
        proto::QuarantinedKind::Unspecified => None,
        proto::QuarantinedKind::FailureMessage => Some(ItemKind::FailureMessage),
        proto::QuarantinedKind::FixAttempt => Some(ItemKind::FixAttempt),
        proto::QuarantinedKind::Entry => Some(ItemKind::Entry),
        proto::QuarantinedKind::Draft => Some(ItemKind::Draft),
        proto::QuarantinedKind::Pattern => Some(ItemKind::Pattern),
        proto::QuarantinedKind::Action => Some(ItemKind::Action),
        proto::QuarantinedKind::Session => Some(ItemKind::Session),
    };
    Ok(QuarantineFilter { project: project("project", &request.project)?, status, item_kind })
}

/// A release or an erasure: the item, and the note (an erasure says why).
pub fn decision(request: &proto::DecideQuarantinedRequest, decision: Decision) -> FieldResult<(Uuid, String)> {
    let quarantine_id = required_uuid("quarantine_id", &request.quarantine_id)?;
    let note = validate::text("note", &request.note, MAX_NOTE_CHARS, decision == Decision::Erase)?;
    Ok((quarantine_id, note))
}
