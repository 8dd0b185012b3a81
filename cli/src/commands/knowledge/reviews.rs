//! `lore entry review`: entries agents wrote whose words wait for a person
//! (issue 56). An agent's lesson reaches no other agent until a person
//! approves it here, in the console's Lessons to review or with
//! ReviewEntry; a rejected one is never said.

use lore_proto::v1 as proto;

use crate::commands::Channel;
use crate::commands::trust::review_args::DecideArgs;

#[derive(clap::Subcommand)]
pub enum Command {
    /// The entries waiting for review, most recently written first, with
    /// their words (admin).
    Pending {
        #[arg(long, env = "LORE_PROJECT")]
        project: String,
        #[arg(long, default_value_t = 50)]
        limit: u32,
    },
    /// Approve entries: briefings and search then say their words as
    /// written (admin).
    Approve(DecideArgs),
    /// Reject entries: they leave the queue and are never said (admin).
    Reject(DecideArgs),
}

pub async fn run(channel: Channel, command: Command) -> anyhow::Result<()> {
    let mut client = crate::commands::knowledge_client(channel);
    match command {
        Command::Pending { project, limit } => {
            let request = proto::ListEntriesToReviewRequest { project, limit };
            let entries = client.list_entries_to_review(request).await?.into_inner().entries;
            if entries.is_empty() {
                println!("No entry waits for review.");
            }
            // The words are data a person reads: quoted, never rendered.
            for entry in &entries {
                let by = entry.origin.as_ref().map(|origin| origin.description.as_str()).unwrap_or("an agent");
                println!("{}  {}  by {by}", entry.entry_id, entry.key);
                println!("  title: {:?}", entry.title);
                for (label, text) in [("summary", &entry.summary), ("body", &entry.body)] {
                    if !text.is_empty() {
                        println!("  {label}: {text:?}");
                    }
                }
                for (label, text) in written_details(entry) {
                    println!("  {label}: {text:?}");
                }
            }
            Ok(())
        }
        Command::Approve(args) => decide(&mut client, args, proto::ReviewDecision::Approve).await,
        Command::Reject(args) => decide(&mut client, args, proto::ReviewDecision::Reject).await,
    }
}

/// The words an entry's details carry besides its title and body.
fn written_details(entry: &proto::Entry) -> Vec<(&'static str, &str)> {
    use proto::entry::Details;
    let solutions = crate::commands::knowledge::display::solutions(entry);
    let mut words: Vec<(&'static str, &str)> =
        solutions.iter().map(|solution| ("solution", solution.description.as_str())).collect();
    match &entry.details {
        Some(Details::IssuePattern(details)) => {
            words.extend(details.prevention_checklist.iter().map(|item| ("check", item.as_str())));
        }
        Some(Details::Gotcha(details)) => {
            words.extend([("problem", details.problem.as_str()), ("solution", details.solution.as_str())]);
        }
        Some(Details::Retrospective(details)) => {
            words.extend(details.key_learnings.iter().map(|item| ("learning", item.as_str())));
        }
        Some(Details::Learning(_)) | None => {}
    }
    words
}

async fn decide(
    client: &mut lore_proto::v1::knowledge_service_client::KnowledgeServiceClient<Channel>,
    args: DecideArgs,
    decision: proto::ReviewDecision,
) -> anyhow::Result<()> {
    let verb = if decision == proto::ReviewDecision::Approve { "approved" } else { "rejected" };
    for entry_id in args.ids {
        let request = proto::ReviewEntryRequest { entry_id, decision: decision as i32, note: args.note.clone() };
        let entry = client.review_entry(request).await?.into_inner();
        println!("{} {verb}", entry.entry_id);
    }
    Ok(())
}
