//! `lore actions search`: filter the action log.

use crate::commands::Channel;
use lore_proto::v1 as proto;

use crate::convert;

#[derive(clap::Args)]
pub struct Args {
    #[arg(long, env = "LORE_PROJECT")]
    project: String,
    /// Action types (repeat or comma-separate).
    #[arg(long = "type", value_delimiter = ',')]
    types: Vec<String>,
    /// Outcomes (repeat or comma-separate).
    #[arg(long = "outcome", value_delimiter = ',')]
    outcomes: Vec<String>,
    #[arg(long)]
    agent: Option<String>,
    #[arg(long)]
    session: Option<String>,
    #[arg(long)]
    epic: Option<String>,
    #[arg(long)]
    issue: Option<String>,
    /// From this long ago (1h, 2d) or this RFC 3339 instant.
    #[arg(long)]
    since: Option<String>,
    /// Until this long ago or instant.
    #[arg(long)]
    until: Option<String>,
    /// Context contains this JSON object, e.g. '{"agent_id":"xyz789"}'.
    #[arg(long)]
    contains: Option<String>,
    /// Substring of type, category or error.
    #[arg(long)]
    text: Option<String>,
    /// At most this many actions (newest first).
    #[arg(long, default_value_t = 50)]
    limit: usize,
    /// One JSON object per action instead of text.
    #[arg(long)]
    json: bool,
}

pub async fn run(channel: Channel, args: Args) -> anyhow::Result<()> {
    let mut client = crate::commands::actions_client(channel);
    let window = match (&args.since, &args.until) {
        (None, None) => None,
        (since, until) => Some(proto::TimeRange {
            start: since.as_deref().map(convert::instant).transpose()?,
            end: until.as_deref().map(convert::instant).transpose()?,
        }),
    };
    let mut request = proto::SearchActionsRequest {
        project: args.project,
        action_types: args.types,
        agent_id: args.agent.unwrap_or_default(),
        session_id: args.session.unwrap_or_default(),
        epic_id: args.epic.unwrap_or_default(),
        issue_id: args.issue.unwrap_or_default(),
        outcomes: args
            .outcomes
            .iter()
            .map(|outcome| convert::outcome(outcome).map(|outcome| outcome as i32))
            .collect::<Result<_, _>>()?,
        window,
        context_contains: args.contains.as_deref().map(convert::json_object).transpose()?,
        text: args.text.unwrap_or_default(),
        page: None,
    };
    let mut shown = 0;
    loop {
        let page_size = (args.limit - shown).min(500) as u32;
        let cursor = request.page.take().map(|page| page.cursor).unwrap_or_default();
        request.page = Some(proto::PageRequest { page_size, cursor });
        let page = client.search_actions(request.clone()).await?.into_inner();
        for action in &page.actions {
            if args.json {
                println!("{}", action_json(action));
            } else {
                println!("{}", convert::action_line(action));
            }
        }
        shown += page.actions.len();
        if page.next_cursor.is_empty() || shown >= args.limit {
            break;
        }
        request.page = Some(proto::PageRequest { page_size: 0, cursor: page.next_cursor });
    }
    if !args.json {
        eprintln!("{shown} actions");
    }
    Ok(())
}

fn action_json(action: &proto::Action) -> serde_json::Value {
    serde_json::json!({
        "action_id": action.action_id,
        "session_id": action.session_id,
        "occurred_at": convert::time(action.occurred_at.as_ref()),
        "agent_id": action.agent_id,
        "action_type": action.action_type,
        "category": action.category,
        "outcome": convert::outcome_name(action.outcome),
        "error": action.error,
        "epic_id": action.epic_id,
        "issue_id": action.issue_id,
        "context": convert::struct_json(action.context.as_ref()),
    })
}
