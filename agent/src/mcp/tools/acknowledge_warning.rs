//! `acknowledge_warning`: the agent read a QA warning it was shown and took
//! it into account; the dashboard counts how acknowledged warnings' tasks
//! went.

use lore_proto::v1 as proto;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use lore_spool::entry::Write;

use super::{ToolContext, ToolOutput, ToolSpec, optional_text, parse, schema, uuid};
use crate::AgentError;

pub const TOOL: ToolSpec = ToolSpec {
    name: "acknowledge_warning",
    description: "Tell Lore you read a QA warning from a briefing and took it into account. Pass the id \
     printed after it (`warning <id>`), and in a note what you did about it. Lore measures whether \
     warnings help by how the tasks that were shown them went.",
    read_only: false,
    schema: schema::<AcknowledgeArgs>,
    call: |arguments, context| Box::pin(async move { run(parse(arguments)?, context).await }),
};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AcknowledgeArgs {
    /// The warning's id (a UUID), as the briefing printed it.
    pub warning_id: String,
    /// What you did about it, e.g. "ran the migration check before editing".
    #[serde(default)]
    #[schemars(length(max = 2000))]
    pub note: String,
}

async fn run(args: AcknowledgeArgs, context: &ToolContext<'_>) -> Result<ToolOutput, AgentError> {
    let warning_id = uuid("warning_id", &args.warning_id)?;
    let note = optional_text("note", &args.note, 2000)?;
    let request = proto::AcknowledgeWarningRequest { delivery_ids: vec![warning_id.to_string()], note };
    let sent = context
        .write(Write::AcknowledgeWarning(request.clone()), |lore| async move {
            lore.qa().acknowledge_warning(request).await
        })
        .await?;
    let (queued, suffix) = (sent.queued, sent.note());
    let fresh = sent.answer.acknowledged > 0;
    let text = if fresh || queued {
        format!("Acknowledged warning {warning_id}.{suffix}")
    } else {
        format!("Warning {warning_id} was acknowledged already.")
    };
    Ok(ToolOutput {
        text,
        structured: json!({ "warning_id": warning_id, "acknowledged": fresh, "queued": queued }),
        summary: json!({ "warning_id": warning_id }),
    })
}
