//! `record_lesson_use`: whether a lesson's fix worked here, so proven fixes rise.

use lore_proto::v1 as proto;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use uuid::Uuid;

use lore_spool::entry::Write;

use super::{ToolContext, ToolOutput, ToolSpec, optional_text, parse, schema, uuid};
use crate::AgentError;

pub const TOOL: ToolSpec = ToolSpec {
    name: "record_lesson_use",
    description: "Tell Lore you applied a lesson and whether it worked, after you tried a fix from briefing, \
     search_lessons or get_lesson. This is how proven fixes rise and bad ones sink for the next \
     agent, so report failures as well as successes.",
    read_only: false,
    schema: schema::<LessonUseArgs>,
    call: |arguments, context| Box::pin(async move { run(parse(arguments)?, context).await }),
};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LessonUseArgs {
    /// The lesson's entry id (a UUID), as briefing, search_lessons or
    /// get_lesson showed it.
    pub entry_id: String,
    /// The solution you applied (a UUID from get_lesson), when the lesson
    /// has several.
    #[serde(default)]
    pub solution_id: Option<String>,
    /// Whether it solved the problem.
    pub worked: bool,
    /// Minutes from meeting the problem to solving it.
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 525600.0))]
    pub minutes: Option<f64>,
    /// Anything the next agent should know about applying it here.
    #[serde(default)]
    #[schemars(length(max = 4000))]
    pub note: String,
    /// Whether you found it through briefing or search_lessons (the
    /// default) rather than knowing it already.
    #[serde(default = "yes")]
    pub found_via_search: bool,
}

async fn run(args: LessonUseArgs, context: &ToolContext<'_>) -> Result<ToolOutput, AgentError> {
    let entry_id = uuid("entry_id", &args.entry_id)?;
    let solution_id = args.solution_id.as_deref().map(|id| uuid("solution_id", id)).transpose()?;
    let minutes = args.minutes.unwrap_or(0.0);
    if !(0.0..=525_600.0).contains(&minutes) || !minutes.is_finite() {
        return Err(AgentError::invalid("minutes", format!("{minutes} is outside 0 to 525600")));
    }
    let note = optional_text("note", &args.note, 4000)?;
    let application_id = Uuid::now_v7();
    let request = proto::RecordApplicationRequest {
        application_id: application_id.to_string(),
        entry_id: entry_id.to_string(),
        session_id: context.session_id.to_string(),
        solution_id: solution_id.map(|id| id.to_string()).unwrap_or_default(),
        success: args.worked,
        resolution_minutes: minutes,
        found_via_search: args.found_via_search,
        note,
    };
    let sent = context
        .write(Write::RecordApplication(request.clone()), |lore| async move {
            lore.knowledge().record_application(request).await
        })
        .await?;
    let note = sent.note();
    let verdict = if args.worked { "worked" } else { "did not work" };
    Ok(ToolOutput {
        text: format!("Recorded that lesson {entry_id} {verdict} here.{note}"),
        structured: json!({
            "application_id": application_id,
            "entry_id": entry_id,
            "worked": args.worked,
            "queued": sent.queued,
        }),
        summary: json!({ "application_id": application_id }),
    })
}

fn yes() -> bool {
    true
}
