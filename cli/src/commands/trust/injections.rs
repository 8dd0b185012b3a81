//! `lore injections`: what Lore put into agents' contexts (the injection
//! ledger), item by item, with why each was chosen or withheld.

use lore_proto::v1 as proto;

use crate::commands::Channel;
use crate::convert;

#[derive(clap::Args)]
pub struct Args {
    #[arg(long, env = "LORE_PROJECT")]
    project: String,
    /// Only this Lore session's injections (its UUID).
    #[arg(long, env = "LORE_SESSION_ID")]
    session: Option<String>,
    /// Only this agent's.
    #[arg(long)]
    agent: Option<String>,
    /// From this long ago (1h, 2d) or this RFC 3339 instant.
    #[arg(long)]
    since: Option<String>,
    /// At most this many injections, newest first.
    #[arg(long, default_value_t = 50)]
    limit: u32,
    /// One JSON object per injection, with its items.
    #[arg(long)]
    json: bool,
}

fn surface_name(surface: i32) -> String {
    proto::InjectionSurface::try_from(surface)
        .map(|surface| surface.as_str_name().trim_start_matches("INJECTION_SURFACE_").to_lowercase().replace('_', " "))
        .unwrap_or_else(|_| "briefing".into())
}

fn kind_name(kind: i32) -> String {
    proto::InjectedKind::try_from(kind)
        .map(|kind| kind.as_str_name().trim_start_matches("INJECTED_KIND_").to_lowercase().replace('_', " "))
        .unwrap_or_else(|_| "item".into())
}

fn trust_name(trust: i32) -> &'static str {
    match proto::Trust::try_from(trust) {
        Ok(proto::Trust::Reviewed) => "reviewed",
        Ok(proto::Trust::Verified) => "verified",
        Ok(proto::Trust::Observed) => "observed",
        _ => "-",
    }
}

/// A label is what an agent or a tool wrote: shown with control characters
/// escaped, so a terminal does not act on it.
fn label(text: &str) -> String {
    text.chars().take(80).flat_map(char::escape_debug).collect()
}

fn item_json(item: &proto::InjectedItem) -> serde_json::Value {
    serde_json::json!({
        "kind": kind_name(item.kind).replace(' ', "_"),
        "item_id": item.item_id,
        "label": item.label,
        "trust": trust_name(item.trust),
        "chars": item.chars,
        "tokens": item.tokens,
        "score": item.score,
        "score_parts": item.score_parts,
        "why": item.why,
        "shown": item.withheld == proto::Withheld::Unspecified as i32,
        "withheld": item.withheld_reason,
    })
}

fn injection_json(injection: &proto::Injection) -> serde_json::Value {
    serde_json::json!({
        "injection_id": injection.injection_id,
        "session_id": injection.session_id,
        "agent_id": injection.agent_id,
        "task_id": injection.task_id,
        "surface": surface_name(injection.surface).replace(' ', "_"),
        "chars": injection.chars,
        "tokens": injection.tokens,
        "created_at": convert::time(injection.created_at.as_ref()),
        "items": injection.items.iter().map(item_json).collect::<Vec<_>>(),
    })
}

pub async fn run(channel: Channel, args: Args) -> anyhow::Result<()> {
    let mut client = lore_proto::client::agent(channel);
    let request = proto::ListInjectionsRequest {
        project: args.project.clone(),
        session_id: args.session.clone().unwrap_or_default(),
        agent_id: args.agent.clone().unwrap_or_default(),
        since: args.since.as_deref().map(convert::instant).transpose()?,
        until: None,
        page: Some(proto::PageRequest { page_size: args.limit, cursor: String::new() }),
    };
    let listed = client.list_injections(request).await?.into_inner();
    if args.json {
        for injection in &listed.injections {
            println!("{}", injection_json(injection));
        }
        return Ok(());
    }
    let totals = listed.totals.unwrap_or_default();
    let whose = match &args.session {
        Some(session) => format!("session {session}"),
        None => format!("project {}", args.project),
    };
    println!(
        "{} injection(s) into {whose}: {} characters (~{} tokens) given, {} item(s) shown, {} withheld",
        totals.injections, totals.chars, totals.tokens, totals.items_shown, totals.items_withheld
    );
    for injection in &listed.injections {
        let at = convert::time(injection.created_at.as_ref());
        let session: String = injection.session_id.chars().take(8).collect();
        println!(
            "\n{at}  {}  session {session} of {}  {} chars (~{} tokens)",
            surface_name(injection.surface),
            label(&injection.agent_id),
            injection.chars,
            injection.tokens
        );
        for item in &injection.items {
            let state = if item.withheld == proto::Withheld::Unspecified as i32 { "shown" } else { "withheld" };
            println!(
                "  {state:<8} {:<12} {:<40} [{}] {} chars, score {:.2}",
                kind_name(item.kind),
                label(&item.label),
                trust_name(item.trust),
                item.chars,
                item.score
            );
            if item.withheld_reason.is_empty() {
                println!("           why: {}", label(&item.why));
            } else {
                println!("           withheld: {}", item.withheld_reason);
            }
        }
    }
    Ok(())
}
