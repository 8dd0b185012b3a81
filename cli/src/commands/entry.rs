//! `lore entry show`: one knowledge entry, its solutions, where it was
//! applied and how well it works.

use super::Channel;
use lore_proto::v1 as proto;

use super::knowledge_display::{entry_json, entry_text};
use crate::convert;

#[derive(clap::Args)]
pub struct ShowArgs {
    /// The entry's key (e.g. PAT-004) or id.
    entry: String,
    /// The project of a key.
    #[arg(long, env = "LORE_PROJECT")]
    project: Option<String>,
    /// Applications to show, newest first.
    #[arg(long, default_value_t = 10)]
    history: u32,
    /// As one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

pub async fn show(channel: Channel, args: ShowArgs) -> anyhow::Result<()> {
    let mut client = super::knowledge_client(channel);
    let request = if uuid::Uuid::parse_str(&args.entry).is_ok() {
        proto::GetEntryRequest { entry_id: args.entry, history_limit: args.history, ..Default::default() }
    } else {
        let Some(project) = args.project else {
            anyhow::bail!("--project (or LORE_PROJECT) is needed to find an entry by key");
        };
        proto::GetEntryRequest { project, key: args.entry, history_limit: args.history, ..Default::default() }
    };
    let response = client.get_entry(request).await?.into_inner();
    let Some(entry) = &response.entry else { anyhow::bail!("the server answered without an entry") };
    let effectiveness = response.effectiveness.unwrap_or_default();
    if args.json {
        let history: Vec<serde_json::Value> = response
            .history
            .iter()
            .map(|application| {
                serde_json::json!({
                    "application_id": application.application_id,
                    "session_id": application.session_id,
                    "solution_id": application.solution_id,
                    "success": application.success,
                    "resolution_minutes": application.resolution_minutes,
                    "found_via_search": application.found_via_search,
                    "note": application.note,
                    "applied_at": convert::time(application.applied_at.as_ref()),
                })
            })
            .collect();
        let mut json = entry_json(entry);
        json["body"] = entry.body.clone().into();
        json["history"] = history.into();
        json["effectiveness"] = serde_json::json!({
            "applications": effectiveness.applications,
            "successes": effectiveness.successes,
            "success_rate": effectiveness.success_rate,
            "avg_resolution_minutes": effectiveness.avg_resolution_minutes,
            "found_via_search_rate": effectiveness.found_via_search_rate,
        });
        println!("{json}");
        return Ok(());
    }
    print!("{}", entry_text(entry));
    if effectiveness.applications > 0 {
        println!(
            "\nApplied {} times, {} succeeded ({:.0}%), ~{:.0} min to resolve, {:.0}% found through search",
            effectiveness.applications,
            effectiveness.successes,
            effectiveness.success_rate * 100.0,
            effectiveness.avg_resolution_minutes,
            effectiveness.found_via_search_rate * 100.0
        );
        for application in &response.history {
            println!(
                "- {} session {} {}{}",
                convert::time(application.applied_at.as_ref()),
                application.session_id.chars().take(8).collect::<String>(),
                if application.success { "worked" } else { "did not work" },
                if application.note.is_empty() { String::new() } else { format!(": {}", application.note) }
            );
        }
    }
    Ok(())
}
