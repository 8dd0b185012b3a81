//! `lore log`: store one action.

use crate::commands::Channel;
use lore_proto::v1 as proto;

use crate::commands::actions::session;
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
    /// Session the action belongs to; when left out, this agent's session
    /// in the project (`lore session start`), started on first use.
    #[arg(long, env = "LORE_SESSION_ID")]
    session: Option<String>,
    /// Agent that acted; `LORE_AGENT_ID`, else `agent@<host>`.
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
    let mut action = proto::Action {
        action_id: uuid::Uuid::now_v7().to_string(),
        session_id: args.session.clone().unwrap_or_default(),
        project: args.project.clone(),
        agent_id: args.agent.clone().unwrap_or_default(),
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
    let mut client = crate::commands::actions_client(channel.clone());
    let response = if args.session.is_some() {
        client.log_action(proto::LogActionRequest { action: Some(action) }).await?.into_inner()
    } else {
        let who = (args.project.as_str(), args.agent.as_deref());
        let (session_id, agent) = session::current_or_new(channel.clone(), who.0, who.1, None).await?;
        (action.session_id, action.agent_id) = (session_id.to_string(), agent);
        match client.log_action(proto::LogActionRequest { action: Some(action.clone()) }).await {
            Ok(response) => response.into_inner(),
            // The remembered session is unknown to this server or over.
            Err(status) if session::is_gone(&status) => {
                eprintln!("session {session_id} cannot take actions ({}); starting another", status.message());
                let (session_id, agent) = session::current_or_new(channel, who.0, who.1, Some(session_id)).await?;
                (action.session_id, action.agent_id) = (session_id.to_string(), agent);
                client.log_action(proto::LogActionRequest { action: Some(action) }).await?.into_inner()
            }
            Err(status) => return Err(status.into()),
        }
    };
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
