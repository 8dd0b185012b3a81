//! `lore log`: store one action.

use super::Channel;
use lore_proto::v1 as proto;

use crate::convert;

#[derive(clap::Args)]
pub struct Args {
    /// Project of the action.
    #[arg(long, env = "LORE_PROJECT")]
    project: String,
    /// Action type: spawn, commit, deploy, plan, validate, search, tool_call...
    #[arg(long = "type")]
    action_type: String,
    /// success, failure, blocked or in_progress.
    #[arg(long, default_value = "success")]
    outcome: String,
    /// Session the action belongs to.
    #[arg(long, env = "LORE_SESSION_ID")]
    session: Option<String>,
    /// Agent that acted.
    #[arg(long, env = "LORE_AGENT_ID")]
    agent: Option<String>,
    #[arg(long)]
    category: Option<String>,
    /// Context as a JSON object.
    #[arg(long)]
    context: Option<String>,
    #[arg(long)]
    error: Option<String>,
    #[arg(long)]
    duration_ms: Option<u64>,
    #[arg(long)]
    epic: Option<String>,
    #[arg(long)]
    issue: Option<String>,
}

pub async fn run(channel: Channel, args: Args) -> anyhow::Result<()> {
    let action = proto::Action {
        action_id: uuid::Uuid::now_v7().to_string(),
        session_id: args.session.unwrap_or_default(),
        project: args.project,
        agent_id: args.agent.unwrap_or_default(),
        action_type: args.action_type,
        category: args.category.unwrap_or_default(),
        context: args.context.as_deref().map(convert::json_object).transpose()?,
        outcome: convert::outcome(&args.outcome)? as i32,
        error: args.error.unwrap_or_default(),
        duration_ms: args.duration_ms.unwrap_or_default(),
        epic_id: args.epic.unwrap_or_default(),
        issue_id: args.issue.unwrap_or_default(),
        occurred_at: Some(convert::now()),
        ..Default::default()
    };
    let response =
        super::actions_client(channel).log_action(proto::LogActionRequest { action: Some(action) }).await?.into_inner();
    let ack = response.ack.unwrap_or_default();
    println!(
        "{} {}{}",
        ack.id,
        if ack.duplicate { "duplicate" } else { "stored" },
        if response.redaction_count > 0 {
            format!(" ({} values redacted)", response.redaction_count)
        } else {
            String::new()
        }
    );
    Ok(())
}
