//! `lore qa regroupings`: the merges and splits re-mining proposes instead
//! of making, where the project's people have not shown that its
//! criterion holds for them. Accepting one makes it as the caller's own
//! correction; rejecting keeps it from being proposed again.

use lore_proto::v1 as proto;
use lore_proto::v1::qa_learning_service_client::QaLearningServiceClient;

use crate::commands::Channel;

#[derive(clap::Subcommand)]
pub enum RegroupingsCommand {
    /// The proposals, newest first: the open ones, or with --all the
    /// decided ones too.
    List {
        #[arg(long, env = "LORE_PROJECT")]
        project: String,
        #[arg(long)]
        all: bool,
    },
    /// Make a proposed move, in your name (admin).
    Accept {
        #[arg(long, env = "LORE_PROJECT")]
        project: String,
        /// The proposal's id, as `lore qa regroupings list` prints it.
        proposal_id: String,
    },
    /// Leave the groups as they are; the move is not proposed again (admin).
    Reject {
        #[arg(long, env = "LORE_PROJECT")]
        project: String,
        proposal_id: String,
    },
}

pub async fn regroupings(qa: &mut QaLearningServiceClient<Channel>, command: RegroupingsCommand) -> anyhow::Result<()> {
    let (project, proposal_id, decision) = match command {
        RegroupingsCommand::List { project, all } => {
            let request = proto::ListRegroupingProposalsRequest { project, include_decided: all };
            let proposals = qa.list_regrouping_proposals(request).await?.into_inner().proposals;
            if proposals.is_empty() {
                println!("no {}regrouping proposal", if all { "" } else { "open " });
            }
            for proposal in proposals {
                println!(
                    "{}  {:<9} {:<6} {:>4} occurrences of {} patterns into {}",
                    proposal.proposal_id,
                    proposal.state,
                    proposal.kind,
                    proposal.occurrences,
                    proposal.pattern_ids.len(),
                    proposal.template
                );
            }
            return Ok(());
        }
        RegroupingsCommand::Accept { project, proposal_id } => {
            (project, proposal_id, proto::RegroupingDecision::Accept)
        }
        RegroupingsCommand::Reject { project, proposal_id } => {
            (project, proposal_id, proto::RegroupingDecision::Reject)
        }
    };
    let request = proto::DecideRegroupingProposalRequest { project, proposal_id, decision: decision.into() };
    let decided = qa.decide_regrouping_proposal(request).await?.into_inner();
    let proposal = decided.proposal.unwrap_or_default();
    let made = decided.made.unwrap_or_default();
    match decision {
        proto::RegroupingDecision::Reject => {
            println!("rejected the {} into {}: it will not be proposed again", proposal.kind, proposal.template);
        }
        _ => println!(
            "accepted the {} into {}: {} merges, {} splits made in your name",
            proposal.kind, proposal.template, made.merges, made.splits
        ),
    }
    Ok(())
}
