//! `lore quarantine`: what the injection screen held, and people's
//! decisions on it.

use lore_proto::v1 as proto;

use crate::commands::Channel;

#[derive(clap::Subcommand)]
pub enum Command {
    /// The items held for review, newest first, with why.
    List(ListArgs),
    /// Release an item: it is data after all, and may reach agents.
    Release(DecideArgs),
    /// Erase an item: its text is dropped and it stays out for good.
    Erase(DecideArgs),
}

#[derive(clap::Args)]
pub struct ListArgs {
    #[arg(long, env = "LORE_PROJECT")]
    project: String,
    /// Which items: those still held, released, erased, or all of them.
    #[arg(long, default_value = "held", value_parser = ["held", "released", "erased", "all"])]
    status: String,
    #[arg(long, default_value_t = 50)]
    limit: u32,
    /// Print the items as JSON lines.
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args)]
pub struct DecideArgs {
    /// The quarantine id `lore quarantine list` shows.
    quarantine_id: String,
    /// Why (required to erase).
    #[arg(long, default_value = "")]
    note: String,
}

fn kind_name(kind: i32) -> String {
    proto::QuarantinedKind::try_from(kind)
        .map(|kind| kind.as_str_name().trim_start_matches("QUARANTINED_KIND_").to_lowercase().replace('_', " "))
        .unwrap_or_else(|_| "item".into())
}

fn status_name(status: i32) -> String {
    proto::QuarantineStatus::try_from(status)
        .map(|status| status.as_str_name().trim_start_matches("QUARANTINE_STATUS_").to_lowercase())
        .unwrap_or_default()
}

/// The held text on one line, escaped: it is shown to a person, and a
/// terminal must not act on what an attacker wrote either.
fn excerpt(text: &str) -> String {
    let line: String = text.chars().take(160).collect();
    format!("{line:?}")
}

fn item_json(item: &proto::QuarantinedItem) -> serde_json::Value {
    serde_json::json!({
        "quarantine_id": item.quarantine_id,
        "kind": kind_name(item.kind),
        "item_id": item.item_id,
        "part": item.part,
        "status": status_name(item.status),
        "reasons": item.reasons,
        "score": item.score,
        "origin": item.origin.as_ref().map(|origin| origin.description.clone()),
        "excerpt": item.excerpt,
        "decided_by": item.decided_by,
        "note": item.note,
    })
}

pub async fn run(channel: Channel, command: Command) -> anyhow::Result<()> {
    let mut client = lore_proto::client::agent(channel);
    match command {
        Command::List(args) => {
            let (status, all) = match args.status.as_str() {
                "released" => (proto::QuarantineStatus::Released, false),
                "erased" => (proto::QuarantineStatus::Erased, false),
                "all" => (proto::QuarantineStatus::Unspecified, true),
                _ => (proto::QuarantineStatus::Held, false),
            };
            let request = proto::ListQuarantinedRequest {
                project: args.project.clone(),
                status: status as i32,
                all,
                page: Some(proto::PageRequest { page_size: args.limit, cursor: String::new() }),
                ..Default::default()
            };
            let listed = client.list_quarantined(request).await?.into_inner();
            if args.json {
                for item in &listed.items {
                    println!("{}", item_json(item));
                }
                return Ok(());
            }
            println!("{} item(s) of {} held for review", listed.held, args.project);
            for item in &listed.items {
                let part = if item.part.is_empty() { String::new() } else { format!(" ({})", item.part) };
                let origin = item.origin.as_ref().map(|origin| origin.description.as_str()).unwrap_or("unknown");
                println!(
                    "{} {} {}{part} [{}] score {:.2}, from {origin}",
                    item.quarantine_id,
                    kind_name(item.kind),
                    item.item_id,
                    status_name(item.status),
                    item.score
                );
                println!("  why: {}", item.reasons.join("; "));
                if !item.excerpt.is_empty() {
                    println!("  text: {}", excerpt(&item.excerpt));
                }
                if !item.decided_by.is_empty() {
                    println!("  decided by {}: {}", item.decided_by, item.note);
                }
            }
        }
        Command::Release(args) | Command::Erase(args) if args.quarantine_id.trim().is_empty() => {
            anyhow::bail!("a quarantine id is required (lore quarantine list shows them)")
        }
        Command::Release(args) => {
            let request = proto::DecideQuarantinedRequest { quarantine_id: args.quarantine_id, note: args.note };
            let item = client.release_quarantined(request).await?.into_inner();
            println!("released {} {} {}", kind_name(item.kind), item.item_id, item.part);
        }
        Command::Erase(args) => {
            let request = proto::DecideQuarantinedRequest { quarantine_id: args.quarantine_id, note: args.note };
            let item = client.erase_quarantined(request).await?.into_inner();
            println!("erased {} {} {}", kind_name(item.kind), item.item_id, item.part);
        }
    }
    Ok(())
}
