//! `briefing`: what an agent should know before it plans a task, in one call.

use lore_proto::v1 as proto;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::lessons::trust_name;
use super::{ToolContext, ToolOutput, ToolSpec, list, optional_text, parse, schema};
use crate::AgentError;
use crate::requests;

pub const TOOL: ToolSpec = ToolSpec {
    name: "briefing",
    description: "Call this first, before you plan or change anything, with what you are about to do. In one \
     call it tells you where your last session stopped (unfinished work, next steps), the lessons \
     other agents proved for this kind of task (the fix that worked and how often), and the QA \
     failures seen before in similar work. Follow the proven fixes and avoid the warned failures. \
     Call it again when the task changes; only_new leaves out what you were already given.",
    read_only: true,
    schema: schema::<BriefingArgs>,
    call: |arguments, context| Box::pin(async move { run(parse(arguments)?, context).await }),
};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BriefingArgs {
    /// What you are about to do, in a sentence or two (the user's request
    /// will do). Leave it out at the very start to hear where your last
    /// session stopped.
    #[serde(default)]
    #[schemars(length(max = 8000))]
    pub task: String,
    /// Files you expect to touch, relative to the repository root; they
    /// select the failures seen in the same folders and kinds of file.
    #[serde(default)]
    #[schemars(length(max = 200))]
    pub files: Vec<String>,
    /// The ticket or issue id of the task, when there is one.
    #[serde(default)]
    pub task_id: Option<String>,
    /// Leave out the lessons and warnings this session was already given.
    #[serde(default)]
    pub only_new: bool,
    /// Size of the briefing in characters (100 to 50000; default 4000).
    #[serde(default)]
    #[schemars(range(min = 500, max = 50000))]
    pub budget_chars: Option<u32>,
}

async fn run(args: BriefingArgs, context: &ToolContext<'_>) -> Result<ToolOutput, AgentError> {
    let task = optional_text("task", &args.task, 8000)?;
    let files = list("files", &args.files, 200)?;
    let (title, description) = title_and_description(&task);
    let task =
        proto::BriefTask { task_id: args.task_id.unwrap_or_default(), title, description, files, ..Default::default() };
    let request = proto::BriefRequest {
        budget_chars: args.budget_chars.unwrap_or_default(),
        omit_given: args.only_new,
        ..requests::brief(context.identity, context.session_id, task)
    };
    let briefing = context.lore()?.agent().brief(request).await?.into_inner();
    Ok(briefing_output(&briefing))
}

/// A task's text as a title (its first line) and the rest.
fn title_and_description(task: &str) -> (String, String) {
    let task = task.trim();
    let mut lines = task.lines();
    let first = lines.next().unwrap_or_default().trim();
    let title: String = first.chars().take(200).collect();
    let description = if title.chars().count() < first.chars().count() || lines.clone().next().is_some() {
        task.to_owned()
    } else {
        String::new()
    };
    (title, description)
}

/// A briefing as a tool's answer (also the answer of `resume`).
pub fn briefing_output(briefing: &proto::BriefResponse) -> ToolOutput {
    let text = if briefing.markdown.is_empty() {
        "Nothing to brief: you have no earlier session here, and no lesson or QA warning matches this task yet."
            .to_owned()
    } else {
        briefing.markdown.clone()
    };
    let lessons: Vec<Value> = briefing
        .lessons
        .iter()
        .map(|lesson| {
            json!({
                "entry_id": lesson.entry_id,
                "key": lesson.key,
                "title": lesson.title,
                "trust": trust_name(lesson.trust),
                "origin": lesson.origin.as_ref().map(|origin| origin.description.clone()),
                "best_fix": lesson
                    .best_solution
                    .as_ref()
                    .filter(|_| proto::Trust::try_from(lesson.trust) == Ok(proto::Trust::Reviewed))
                    .map(|solution| solution.description.clone()),
                "success_rate": lesson.success_rate,
                "times_applied": lesson.times_applied,
                "why": lesson.why,
                "expand": lesson.expand,
            })
        })
        .collect();
    let warnings: Vec<Value> = briefing
        .warnings
        .iter()
        .map(|warning| {
            json!({
                "delivery_id": warning.delivery_id,
                "pattern_id": warning.pattern_id,
                "pattern": warning.pattern_name,
                "error": warning.template,
                "text": warning.text,
                "fix_trust": trust_name(warning.fix_trust),
                "why": warning.reason,
            })
        })
        .collect();
    let last_session = briefing.last_session.as_ref().map(|summary| {
        let session = summary.session.clone().unwrap_or_default();
        json!({
            "session_id": session.session_id,
            "status": proto::SessionStatus::try_from(session.status).map(|status| status.as_str_name()).unwrap_or("UNKNOWN"),
            "unfinished": summary.work_in_progress.iter().map(|item| item.description.clone()).collect::<Vec<_>>(),
            "next_steps": summary.suggested_next_steps,
        })
    });
    ToolOutput {
        text,
        structured: json!({
            "briefing_id": briefing.briefing_id,
            "last_session": last_session,
            "lessons": lessons,
            "warnings": warnings,
            "omitted_for_budget": briefing.omitted_for_budget,
            "omitted_as_given": briefing.omitted_as_given,
            "degraded": briefing.degraded,
        }),
        summary: json!({
            "briefing_id": briefing.briefing_id,
            "lessons": briefing.lessons.iter().map(|lesson| lesson.entry_id.clone()).collect::<Vec<_>>(),
            "warnings": briefing.warnings.iter().map(|warning| warning.pattern_id.clone()).collect::<Vec<_>>(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_task_splits_into_a_title_and_its_whole_text() {
        assert_eq!(title_and_description("Fix the divide bug"), ("Fix the divide bug".into(), String::new()));
        let (title, description) = title_and_description("Fix it\nThe tests fail on zero.");
        assert_eq!((title.as_str(), description.as_str()), ("Fix it", "Fix it\nThe tests fail on zero."));
        let long = "x".repeat(300);
        assert_eq!(title_and_description(&long).0.len(), 200);
        assert_eq!(title_and_description(&long).1.len(), 300);
    }
}
