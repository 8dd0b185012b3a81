//! AgentService proto <-> domain conversions, with the checks on client
//! input (each failing with the field's name).

use lore_proto::v1 as proto;

use crate::briefing::{
    BriefRequest, BriefTask, Briefing, DEFAULT_ITEMS, Lesson, MAX_BUDGET_CHARS, MAX_ITEMS, MIN_BUDGET_CHARS,
};
use crate::grpc::convert::{FieldError, FieldResult, identifier, optional_uuid, project, resume_summary_to_proto};
use crate::grpc::knowledge::convert::{entry_kind_to_proto, relevance_to_proto, solution_to_proto};
use crate::grpc::qa::convert::warning_to_proto;
use crate::validate;

const MAX_TITLE_CHARS: usize = 512;
const MAX_DESCRIPTION_CHARS: usize = 8_000;
const MAX_FILES: usize = 200;
const MAX_PATH_CHARS: usize = 1_024;
const MAX_LABELS: usize = 20;
const MAX_NAME_CHARS: usize = 128;

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
    })
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
        degraded: briefing.degraded.is_some(),
        degraded_reason: briefing.degraded.clone().unwrap_or_default(),
    }
}
