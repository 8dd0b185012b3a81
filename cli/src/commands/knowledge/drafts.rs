//! `lore drafts`: learnings drafted from the action log, and their review.

use crate::commands::Channel;
use anyhow::{Context as _, bail};
use lore_proto::v1 as proto;

use crate::convert;

#[derive(clap::Subcommand)]
pub enum Command {
    /// Draft a learning from the actions of an epic or a session.
    Create(CreateArgs),
    /// Drafts of a project in one status, newest first.
    List(ListArgs),
    /// One draft, with its body.
    Show(ShowArgs),
    /// Approve a draft (optionally edited first): it becomes a learning.
    Approve(ApproveArgs),
    /// Reject a draft.
    Reject(RejectArgs),
}

#[derive(clap::Args)]
pub struct CreateArgs {
    #[arg(long, env = "LORE_PROJECT")]
    project: String,
    /// Draft from this epic's actions.
    #[arg(long, conflicts_with = "session", required_unless_present = "session")]
    epic: Option<String>,
    /// Draft from this session's actions.
    #[arg(long)]
    session: Option<String>,
}

#[derive(clap::Args)]
pub struct ListArgs {
    #[arg(long, env = "LORE_PROJECT")]
    project: String,
    #[arg(long, default_value = "pending", value_parser = ["pending", "approved", "rejected"])]
    status: String,
    #[arg(long, default_value_t = 50)]
    limit: u32,
}

#[derive(clap::Args)]
pub struct ShowArgs {
    draft_id: String,
}

#[derive(clap::Args)]
pub struct Reviewer {
    /// Who reviews (the USER by default).
    #[arg(long, env = "USER")]
    reviewer: String,
    /// Why.
    #[arg(long, default_value = "")]
    note: String,
}

#[derive(clap::Args)]
pub struct ApproveArgs {
    draft_id: String,
    #[command(flatten)]
    reviewer: Reviewer,
    /// Replace the title.
    #[arg(long)]
    title: Option<String>,
    /// Replace the category.
    #[arg(long)]
    category: Option<String>,
    /// Replace the tags (repeat or comma-separate).
    #[arg(long = "tag", value_delimiter = ',')]
    tags: Vec<String>,
    /// Replace the body with this markdown file's content.
    #[arg(long)]
    body_file: Option<std::path::PathBuf>,
}

#[derive(clap::Args)]
pub struct RejectArgs {
    draft_id: String,
    #[command(flatten)]
    reviewer: Reviewer,
}

pub async fn run(channel: Channel, command: Command) -> anyhow::Result<()> {
    let mut client = crate::commands::knowledge_client(channel);
    match command {
        Command::Create(args) => {
            let request = proto::CreateDraftRequest {
                draft_id: uuid::Uuid::now_v7().to_string(),
                project: args.project,
                epic_id: args.epic.unwrap_or_default(),
                session_id: args.session.unwrap_or_default(),
                proposal: None,
            };
            let draft = client.create_draft(request).await?.into_inner();
            print!("{}", draft_text(&draft));
        }
        Command::List(args) => {
            let status = match args.status.as_str() {
                "approved" => proto::DraftStatus::Approved,
                "rejected" => proto::DraftStatus::Rejected,
                _ => proto::DraftStatus::Pending,
            };
            let page = proto::PageRequest { page_size: args.limit, cursor: String::new() };
            let request = proto::ListDraftsRequest { project: args.project, status: status as i32, page: Some(page) };
            let drafts = client.list_drafts(request).await?.into_inner().drafts;
            for draft in &drafts {
                // An automatic draft says what made it.
                let why = draft
                    .tags
                    .iter()
                    .any(|tag| tag == "auto-draft")
                    .then(|| {
                        draft.tags.iter().find(|tag| {
                            ["epic-complete", "validations-failing", "failures-fixed"].contains(&tag.as_str())
                        })
                    })
                    .flatten()
                    .map(|cause| format!("  (drafted by Lore: {})", cause.replace('-', " ")))
                    .unwrap_or_default();
                println!("{}  {}  {}{why}", draft.draft_id, convert::time(draft.created_at.as_ref()), draft.title);
            }
            eprintln!("{} {} drafts", drafts.len(), args.status);
        }
        Command::Show(args) => {
            let draft = client.get_draft(proto::GetDraftRequest { draft_id: args.draft_id }).await?.into_inner();
            print!("{}", draft_text(&draft));
        }
        Command::Approve(args) => {
            let body = match &args.body_file {
                Some(path) => {
                    std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?
                }
                None => String::new(),
            };
            let request = proto::ReviewDraftRequest {
                draft_id: args.draft_id,
                decision: proto::ReviewDecision::Approve as i32,
                reviewer: args.reviewer.reviewer,
                note: args.reviewer.note,
                title: args.title.unwrap_or_default(),
                category: args.category.unwrap_or_default(),
                body,
                tags: args.tags,
            };
            let response = client.review_draft(request).await?.into_inner();
            let Some(entry) = response.entry else { bail!("the server approved without an entry") };
            println!("approved: learning {} ({})", entry.key, entry.entry_id);
        }
        Command::Reject(args) => {
            let request = proto::ReviewDraftRequest {
                draft_id: args.draft_id,
                decision: proto::ReviewDecision::Reject as i32,
                reviewer: args.reviewer.reviewer,
                note: args.reviewer.note,
                ..Default::default()
            };
            let draft = client.review_draft(request).await?.into_inner().draft.unwrap_or_default();
            println!("rejected: {}", draft.draft_id);
        }
    }
    Ok(())
}

fn status_name(value: i32) -> &'static str {
    match proto::DraftStatus::try_from(value) {
        Ok(proto::DraftStatus::Approved) => "approved",
        Ok(proto::DraftStatus::Rejected) => "rejected",
        _ => "pending",
    }
}

fn draft_text(draft: &proto::Draft) -> String {
    let source = if draft.epic_id.is_empty() {
        format!("session {}", draft.session_id)
    } else {
        format!("epic {}", draft.epic_id)
    };
    let mut text = format!(
        "draft {} ({}, from {source}, {})\n",
        draft.draft_id,
        status_name(draft.status),
        convert::time(draft.created_at.as_ref())
    );
    if !draft.reviewer.is_empty() {
        text.push_str(&format!("reviewed by {} {}", draft.reviewer, convert::time(draft.reviewed_at.as_ref())));
        if !draft.review_note.is_empty() {
            text.push_str(&format!(": {}", draft.review_note));
        }
        text.push('\n');
    }
    if !draft.category.is_empty() || !draft.tags.is_empty() {
        text.push_str(&format!("category {}  tags {}\n", draft.category, draft.tags.join(", ")));
    }
    text.push('\n');
    text.push_str(&draft.body);
    if !draft.body.ends_with('\n') {
        text.push('\n');
    }
    text
}
