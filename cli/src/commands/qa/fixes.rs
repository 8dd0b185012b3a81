//! `lore qa fixes`: agents' successful fixes whose words wait for a person
//! (issue 56). What an agent wrote of a fix reaches no other agent until a
//! person approves it here, in the console's review queue or with
//! ReviewFix; a rejected fix is never said.

use lore_proto::v1 as proto;
use lore_proto::v1::qa_learning_service_client::QaLearningServiceClient;

use crate::commands::Channel;
use crate::commands::trust::review_args::DecideArgs;

#[derive(clap::Subcommand)]
pub enum FixesCommand {
    /// The fixes waiting for review, newest first, with their words and what
    /// they fixed (admin).
    Pending {
        #[arg(long, env = "LORE_PROJECT")]
        project: String,
        #[arg(long, default_value_t = 50)]
        limit: u32,
    },
    /// Approve fixes: their words become their patterns' reviewed fix and
    /// gotcha, which briefings then say (admin).
    Approve(DecideArgs),
    /// Reject fixes: they leave the queue, and no pattern keeps their words
    /// (admin).
    Reject(DecideArgs),
}

pub async fn fixes(qa: &mut QaLearningServiceClient<Channel>, command: FixesCommand) -> anyhow::Result<()> {
    match command {
        FixesCommand::Pending { project, limit } => pending(qa, project, limit).await,
        FixesCommand::Approve(args) => decide(qa, args, proto::FixDecision::Approve).await,
        FixesCommand::Reject(args) => decide(qa, args, proto::FixDecision::Reject).await,
    }
}

/// The queue, each fix with what it fixed and its words (as data: a
/// person reads them here).
async fn pending(qa: &mut QaLearningServiceClient<Channel>, project: String, limit: u32) -> anyhow::Result<()> {
    let fixes = qa.list_fixes_to_review(proto::ListFixesToReviewRequest { project, limit }).await?.into_inner().fixes;
    if fixes.is_empty() {
        println!("No fix waits for review.");
    }
    for fix in &fixes {
        let Some(attempt) = &fix.attempt else { continue };
        let by = attempt.origin.as_ref().map(|origin| origin.description.as_str()).unwrap_or("an agent");
        println!("{}  task {}  by {by}", attempt.attempt_id, fix.task_id);
        for template in &fix.templates {
            println!("  fixed: {template}");
        }
        println!("  approach: {:?}", attempt.approach);
        if !attempt.summary.is_empty() {
            println!("  summary: {:?}", attempt.summary);
        }
        if !attempt.files_changed.is_empty() {
            println!("  files: {}", attempt.files_changed.join(", "));
        }
    }
    Ok(())
}

async fn decide(
    qa: &mut QaLearningServiceClient<Channel>,
    args: DecideArgs,
    decision: proto::FixDecision,
) -> anyhow::Result<()> {
    let verb = if decision == proto::FixDecision::Approve { "approved" } else { "rejected" };
    for attempt_id in args.ids {
        let request = proto::ReviewFixRequest { attempt_id, decision: decision as i32, note: args.note.clone() };
        let attempt = qa.review_fix(request).await?.into_inner();
        println!("{} {verb}", attempt.attempt_id);
    }
    Ok(())
}
