//! `lore entry show|apply|upsert|erase`: one knowledge entry, its
//! solutions, where it was applied and how well it works; recording that a
//! lesson was used and whether it worked; writing an entry; erasing it with
//! everything derived from it.

use crate::commands::Channel;
use lore_proto::v1 as proto;

use crate::commands::knowledge::display::{entry_json, entry_text};
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

#[derive(clap::Args)]
pub struct ApplyArgs {
    /// The entry's key (e.g. PAT-004) or id.
    entry: String,
    #[arg(long, env = "LORE_PROJECT")]
    project: String,
    /// The session that used it; this agent's session in the project when
    /// left out (started on first use).
    #[arg(long, env = "LORE_SESSION_ID")]
    session: Option<String>,
    #[arg(long, env = "LORE_AGENT_ID")]
    agent: Option<String>,
    /// It did not work (the default is that it did).
    #[arg(long)]
    failed: bool,
    /// The solution used, when the entry has several.
    #[arg(long)]
    solution: Option<String>,
    /// How long it took to resolve the problem with it.
    #[arg(long, default_value_t = 0.0)]
    minutes: f64,
    /// It was found through search (not known beforehand).
    #[arg(long)]
    found_via_search: bool,
    #[arg(long, default_value = "")]
    note: String,
}

#[derive(clap::Args)]
pub struct EraseArgs {
    /// The entry's key (e.g. PAT-004) or id.
    entry: String,
    /// The project of a key.
    #[arg(long, env = "LORE_PROJECT")]
    project: Option<String>,
    /// Why it is erased (kept in the audit log).
    #[arg(long)]
    note: String,
}

#[derive(clap::Args)]
pub struct UpsertArgs {
    #[arg(long, env = "LORE_PROJECT")]
    project: String,
    /// The entry's key; an entry with this key is replaced.
    #[arg(long)]
    key: String,
    #[arg(long)]
    title: String,
    #[arg(long, default_value = "learning", value_parser = ["learning", "issue_pattern", "retrospective", "gotcha"])]
    kind: String,
    #[arg(long, default_value = "")]
    category: String,
    #[arg(long, default_value = "")]
    summary: String,
    /// Tags (repeat, or comma-separated).
    #[arg(long, value_delimiter = ',')]
    tags: Vec<String>,
    /// The body as markdown.
    #[arg(long, conflicts_with = "body_file", required_unless_present = "body_file")]
    body: Option<String>,
    /// The body read from a markdown file.
    #[arg(long)]
    body_file: Option<std::path::PathBuf>,
}

/// The request that finds `entry` (an id, or a key of `project`).
fn lookup(entry: String, project: Option<String>, history: u32) -> anyhow::Result<proto::GetEntryRequest> {
    if uuid::Uuid::parse_str(&entry).is_ok() {
        return Ok(proto::GetEntryRequest { entry_id: entry, history_limit: history, ..Default::default() });
    }
    let Some(project) = project else {
        anyhow::bail!("--project (or LORE_PROJECT) is needed to find an entry by key");
    };
    Ok(proto::GetEntryRequest { project, key: entry, history_limit: history, ..Default::default() })
}

pub async fn erase(channel: Channel, args: EraseArgs) -> anyhow::Result<()> {
    let mut client = crate::commands::knowledge_client(channel);
    let found = lookup(args.entry.clone(), args.project.clone(), 0)?;
    let request =
        proto::EraseEntryRequest { entry_id: found.entry_id, project: found.project, key: found.key, note: args.note };
    let erased = client.erase_entry(request).await?.into_inner();
    let name = if erased.key.is_empty() { erased.entry_id.clone() } else { erased.key.clone() };
    println!("Erased {name}.");
    let counts = [
        (erased.drafts_deleted, "draft(s) it was approved from deleted"),
        (erased.pattern_fixes_cleared, "pattern fix(es) taken from its fix attempt cleared"),
        (erased.fix_attempts_blocked, "fix attempt(s) kept from becoming a fix again"),
        (erased.entries_revived, "entry(ies) it had superseded active again"),
    ];
    for (count, what) in counts.into_iter().filter(|(count, _)| *count > 0) {
        println!("- {count} {what}");
    }
    if !erased.instructions.is_empty() {
        println!("- standing instructions: {}", erased.instructions);
    }
    if !erased.file_removed.is_empty() {
        println!("- document file removed: {}", erased.file_removed);
    }
    println!("Recorded as action {} of session {} in the audit log.", erased.audit_action_id, erased.audit_session_id);
    Ok(())
}

pub async fn apply(channel: Channel, args: ApplyArgs) -> anyhow::Result<()> {
    let mut client = crate::commands::knowledge_client(channel.clone());
    let request = lookup(args.entry.clone(), Some(args.project.clone()), 0)?;
    let Some(entry) = client.get_entry(request).await?.into_inner().entry else {
        anyhow::bail!("the server answered without an entry")
    };
    let session_id = match args.session {
        Some(session) => session,
        None => crate::commands::actions::session::current_or_new(channel, &args.project, args.agent.as_deref(), None)
            .await?
            .0
            .to_string(),
    };
    let request = proto::RecordApplicationRequest {
        application_id: uuid::Uuid::now_v7().to_string(),
        entry_id: entry.entry_id.clone(),
        session_id,
        solution_id: args.solution.unwrap_or_default(),
        success: !args.failed,
        resolution_minutes: args.minutes,
        found_via_search: args.found_via_search,
        note: args.note,
    };
    let recorded = client.record_application(request).await?.into_inner();
    let effectiveness = recorded.effectiveness.unwrap_or_default();
    println!(
        "{} {} recorded as {}; it has worked {} of {} times ({:.0}%)",
        if entry.key.is_empty() { &entry.entry_id } else { &entry.key },
        entry.title,
        if args.failed { "not working" } else { "working" },
        effectiveness.successes,
        effectiveness.applications,
        effectiveness.success_rate * 100.0
    );
    Ok(())
}

pub async fn upsert(channel: Channel, args: UpsertArgs) -> anyhow::Result<()> {
    let body = match (args.body, &args.body_file) {
        (Some(body), _) => body,
        (None, Some(path)) => std::fs::read_to_string(path)
            .map_err(|error| anyhow::anyhow!("cannot read the body from {}: {error}", path.display()))?,
        (None, None) => anyhow::bail!("give the body with --body or --body-file"),
    };
    let kind = proto::EntryKind::from_str_name(&format!("ENTRY_KIND_{}", args.kind.to_uppercase()))
        .unwrap_or(proto::EntryKind::Learning);
    let entry = proto::Entry {
        key: args.key,
        project: args.project,
        kind: kind.into(),
        title: args.title,
        category: args.category,
        summary: args.summary,
        body,
        tags: args.tags,
        ..Default::default()
    };
    let response = crate::commands::knowledge_client(channel)
        .upsert_entry(proto::UpsertEntryRequest { entry: Some(entry) })
        .await?
        .into_inner();
    let stored = response.entry.unwrap_or_default();
    println!("{} {} ({})", stored.entry_id, if response.created { "created" } else { "replaced" }, stored.key);
    Ok(())
}

pub async fn show(channel: Channel, args: ShowArgs) -> anyhow::Result<()> {
    let mut client = crate::commands::knowledge_client(channel);
    let request = lookup(args.entry, args.project, args.history)?;
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
