//! `log_action`: a step the automatic tool log does not show (a plan, a decision, a deploy).

use lore_proto::v1 as proto;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use uuid::Uuid;

use lore_spool::entry::Write;

use super::{ToolContext, ToolOutput, ToolSpec, optional_text, parse, schema};
use crate::AgentError;
use crate::requests;

pub const TOOL: ToolSpec = ToolSpec {
    name: "log_action",
    description: "Record a step the automatic tool log does not show: a plan, a decision and its reason, a \
     commit, a deploy, something blocked. One sentence in summary; details in context. Your shell \
     commands and edits are already recorded, do not repeat them here.",
    read_only: false,
    schema: schema::<LogActionArgs>,
    call: |arguments, context| Box::pin(async move { run(parse(arguments)?, context).await }),
};

#[derive(Debug, Deserialize, JsonSchema, Clone, Copy)]
#[serde(rename_all = "snake_case")]
pub enum ActionOutcome {
    Success,
    Failure,
    Blocked,
    InProgress,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LogActionArgs {
    /// What kind of step: plan, decision, commit, deploy, validate, spawn,
    /// note, or another lowercase word (a-z, 0-9, _ . -).
    #[schemars(length(min = 1, max = 64), regex(pattern = r"^[a-z0-9_.-]+$"))]
    pub action_type: String,
    /// How it ended.
    pub outcome: ActionOutcome,
    /// One sentence: what you did and why.
    #[serde(default)]
    #[schemars(length(max = 2000))]
    pub summary: String,
    /// The error, for a failed or blocked step.
    #[serde(default)]
    #[schemars(length(max = 4000))]
    pub error: String,
    /// A finer grouping, e.g. "git", "tests", "infra".
    #[serde(default)]
    pub category: String,
    /// How long it took, in milliseconds.
    #[serde(default)]
    pub duration_ms: Option<u64>,
    /// The epic the work belongs to.
    #[serde(default)]
    pub epic_id: String,
    /// The issue or ticket the work belongs to.
    #[serde(default)]
    pub issue_id: String,
    /// Details as a JSON object (e.g. {"sha": "3f78685"}); secrets in it are
    /// redacted before anything is stored.
    #[serde(default)]
    pub context: Option<serde_json::Map<String, Value>>,
}

async fn run(args: LogActionArgs, context: &ToolContext<'_>) -> Result<ToolOutput, AgentError> {
    let action_type = args.action_type.trim().to_ascii_lowercase();
    let valid = (1..=64).contains(&action_type.len())
        && action_type.bytes().all(|byte| byte.is_ascii_lowercase() || byte.is_ascii_digit() || b"_.-".contains(&byte));
    if !valid {
        return Err(AgentError::invalid("action_type", "must be 1 to 64 characters of a-z, 0-9, '_', '.' or '-'"));
    }
    let summary = optional_text("summary", &args.summary, 2000)?;
    let error = optional_text("error", &args.error, 4000)?;
    let mut details = args.context.unwrap_or_default();
    if !summary.is_empty() {
        details.insert("summary".into(), Value::String(summary));
    }
    details.insert("via".into(), Value::String("mcp".into()));
    let outcome = match args.outcome {
        ActionOutcome::Success => proto::Outcome::Success,
        ActionOutcome::Failure => proto::Outcome::Failure,
        ActionOutcome::Blocked => proto::Outcome::Blocked,
        ActionOutcome::InProgress => proto::Outcome::InProgress,
    };
    let action_id = Uuid::now_v7();
    let action = proto::Action {
        action_id: action_id.to_string(),
        session_id: context.session_id.to_string(),
        project: context.identity.project.clone(),
        agent_id: context.identity.agent_id.clone(),
        action_type: action_type.clone(),
        category: optional_text("category", &args.category, 128)?,
        context: Some(lore_proto::json::to_struct(&Value::Object(details))),
        outcome: outcome as i32,
        error,
        duration_ms: args.duration_ms.unwrap_or(0),
        epic_id: optional_text("epic_id", &args.epic_id, 256)?,
        issue_id: optional_text("issue_id", &args.issue_id, 256)?,
        occurred_at: Some(requests::now()),
        ..Default::default()
    };
    let sent = context
        .write(Write::Action(action.clone()), |lore| async move {
            lore.actions().log_action(proto::LogActionRequest { action: Some(action) }).await
        })
        .await?;
    let note = sent.note();
    let redactions = sent.answer.redaction_count;
    let redacted = if redactions > 0 { format!(" {redactions} secret(s) were redacted.") } else { String::new() };
    Ok(ToolOutput {
        text: format!(
            "Logged {action_type} ({}) as action {action_id}.{redacted}{note}",
            outcome.as_str_name().trim_start_matches("OUTCOME_").to_lowercase()
        ),
        structured: json!({ "action_id": action_id, "redactions": redactions, "queued": sent.queued }),
        summary: json!({ "action_id": action_id }),
    })
}
