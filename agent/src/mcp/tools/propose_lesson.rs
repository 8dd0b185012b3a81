//! `propose_lesson`: what the agent learned, as a draft a person reviews.

use lore_proto::v1 as proto;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use uuid::Uuid;

use lore_spool::entry::Write;

use super::{ToolContext, ToolOutput, ToolSpec, list, optional_text, parse, required_text, schema};
use crate::AgentError;

pub const TOOL: ToolSpec = ToolSpec {
    name: "propose_lesson",
    description: "Propose a lesson for other agents: a problem you solved that others will meet again, in your \
     own words. A person reviews it before it is shared; your session's log goes with it as \
     evidence.",
    read_only: false,
    schema: schema::<ProposeLessonArgs>,
    call: |arguments, context| Box::pin(async move { run(parse(arguments)?, context).await }),
};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProposeLessonArgs {
    /// One line that names the problem, e.g. "Date tests fail at midnight
    /// UTC".
    #[schemars(length(min = 1, max = 512))]
    pub title: String,
    /// What went wrong or what was hard, and how it showed.
    #[schemars(length(min = 1, max = 8000))]
    pub problem: String,
    /// What solved it, so the next agent can do the same.
    #[schemars(length(min = 1, max = 8000))]
    pub solution: String,
    /// A category, e.g. "testing", "database".
    #[serde(default)]
    pub category: String,
    /// Tags (at most 20).
    #[serde(default)]
    #[schemars(length(max = 20))]
    pub tags: Vec<String>,
}

async fn run(args: ProposeLessonArgs, context: &ToolContext<'_>) -> Result<ToolOutput, AgentError> {
    let title = required_text("title", &args.title, 512)?;
    if title.contains('\n') {
        return Err(AgentError::invalid("title", "one line, please"));
    }
    let draft_id = Uuid::now_v7();
    let request = proto::CreateDraftRequest {
        draft_id: draft_id.to_string(),
        project: context.identity.project.clone(),
        session_id: context.session_id.to_string(),
        proposal: Some(proto::DraftProposal {
            title: title.clone(),
            problem: required_text("problem", &args.problem, 8000)?,
            solution: required_text("solution", &args.solution, 8000)?,
            category: optional_text("category", &args.category, 128)?,
            tags: list("tags", &args.tags, 20)?,
        }),
        ..Default::default()
    };
    let sent = context
        .write(Write::CreateDraft(request.clone()), |lore| async move { lore.knowledge().create_draft(request).await })
        .await?;
    let note = sent.note();
    Ok(ToolOutput {
        text: format!(
            "Proposed \"{title}\" as draft {draft_id}; a person reviews it before other agents are shown it.{note}"
        ),
        structured: json!({ "draft_id": draft_id, "status": "pending_review", "queued": sent.queued }),
        summary: json!({ "draft_id": draft_id }),
    })
}
