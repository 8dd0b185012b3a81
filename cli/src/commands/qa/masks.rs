//! `lore qa masks`: a project's own grouping masks. Each is a regular
//! expression whose every match in a captured message is one variable,
//! applied before the generic masks; a change re-mines the project. Masks
//! proposed from people's merges are listed, accepted or rejected here too.

use lore_proto::v1 as proto;
use lore_proto::v1::qa_learning_service_client::QaLearningServiceClient;

use crate::commands::Channel;
use crate::commands::display::or_dash;

#[derive(clap::Subcommand)]
pub enum MasksCommand {
    /// The project's masks, in the order they apply.
    List {
        #[arg(long, env = "LORE_PROJECT")]
        project: String,
    },
    /// Add or replace a mask, then re-mine the project (admin).
    Put {
        #[arg(long, env = "LORE_PROJECT")]
        project: String,
        /// Letters, digits, '-', '_' and '.'.
        name: String,
        /// The regular expression (Rust syntax), e.g. 'svc-[a-z]+'.
        pattern: String,
        /// What it masks.
        #[arg(long, default_value = "")]
        description: String,
    },
    /// Remove a mask, then re-mine the project (admin).
    Delete {
        #[arg(long, env = "LORE_PROJECT")]
        project: String,
        name: String,
    },
    /// Masks proposed from people's merges, newest first: the open ones,
    /// or with --all the decided ones too.
    Proposals {
        #[arg(long, env = "LORE_PROJECT")]
        project: String,
        #[arg(long)]
        all: bool,
    },
    /// Make a proposal a mask, then re-mine the project (admin).
    Accept {
        #[arg(long, env = "LORE_PROJECT")]
        project: String,
        /// The proposal's id, as `lore qa masks proposals` prints it.
        proposal_id: String,
        /// The mask's name; by default the proposal's own.
        #[arg(long, default_value = "")]
        name: String,
    },
    /// Turn a proposal down; its expression is not proposed again (admin).
    Reject {
        #[arg(long, env = "LORE_PROJECT")]
        project: String,
        proposal_id: String,
    },
}

pub async fn masks(qa: &mut QaLearningServiceClient<Channel>, command: MasksCommand) -> anyhow::Result<()> {
    match command {
        MasksCommand::List { project } => {
            let masks = qa.list_grouping_masks(proto::ListGroupingMasksRequest { project }).await?.into_inner().masks;
            if masks.is_empty() {
                println!("no grouping mask: the generic masks alone apply");
            }
            for mask in masks {
                println!("{:<24} {:<40} {}", mask.name, mask.pattern, or_dash(&mask.description));
            }
        }
        MasksCommand::Put { project, name, pattern, description } => {
            let mask = proto::GroupingMask { project, name, pattern, description, ..Default::default() };
            let put = qa.put_grouping_mask(proto::PutGroupingMaskRequest { mask: Some(mask) }).await?.into_inner();
            let mask = put.mask.unwrap_or_default();
            let said = if put.created { "added" } else { "replaced" };
            println!("{said} mask {} = {}", mask.name, mask.pattern);
            print_remined(&mask.project, put.remined.unwrap_or_default());
        }
        MasksCommand::Delete { project, name } => {
            let request = proto::DeleteGroupingMaskRequest { project: project.clone(), name: name.clone() };
            let deleted = qa.delete_grouping_mask(request).await?.into_inner();
            if !deleted.deleted {
                println!("no mask {name} in {project}: nothing changed");
                return Ok(());
            }
            println!("deleted mask {name}");
            print_remined(&project, deleted.remined.unwrap_or_default());
        }
        MasksCommand::Proposals { project, all } => {
            let request = proto::ListMaskProposalsRequest { project, include_decided: all };
            let proposals = qa.list_mask_proposals(request).await?.into_inner().proposals;
            if proposals.is_empty() {
                println!("no {}mask proposal", if all { "" } else { "open " });
            }
            for proposal in proposals {
                println!(
                    "{}  {:<9} {:<24} {:<32} differs in {}",
                    proposal.proposal_id,
                    proposal.state,
                    proposal.name,
                    proposal.pattern,
                    proposal.examples.join(", ")
                );
            }
        }
        MasksCommand::Accept { project, proposal_id, name } => {
            let decision = proto::MaskDecision::Accept;
            let decided = qa
                .decide_mask_proposal(proto::DecideMaskProposalRequest {
                    project,
                    proposal_id,
                    decision: decision.into(),
                    name,
                })
                .await?
                .into_inner();
            let mask = decided.mask.unwrap_or_default();
            println!("accepted: added mask {} = {}", mask.name, mask.pattern);
            print_remined(&mask.project, decided.remined.unwrap_or_default());
        }
        MasksCommand::Reject { project, proposal_id } => {
            let decision = proto::MaskDecision::Reject;
            let request = proto::DecideMaskProposalRequest {
                project,
                proposal_id,
                decision: decision.into(),
                name: String::new(),
            };
            let decided = qa.decide_mask_proposal(request).await?.into_inner();
            let proposal = decided.proposal.unwrap_or_default();
            println!("rejected {}: it will not be proposed again", proposal.pattern);
        }
    }
    Ok(())
}

pub fn print_remined(project: &str, done: proto::RemineProjectResponse) {
    let moved = match done.moves {
        0 => String::new(),
        moves => format!(", {moves} patterns moved to the template their messages share now"),
    };
    let rejected = match done.rejected {
        0 => String::new(),
        rejected => format!(" ({rejected} more turned down: they would have grouped the messages worse)"),
    };
    let regrouped = if done.automatic || done.splits > 0 {
        format!("{} merges, {} splits", done.merges, done.splits)
    } else {
        format!("{} regroupings proposed (lore qa regroupings list --project {project})", done.proposed)
    };
    println!("re-mined {} occurrences of {project}: {regrouped}{rejected}{moved}", done.occurrences);
    if done.corrected_pairs > 0.0 {
        println!(
            "evidence: people's merges and splits speak about {:.0} pairs; capture kept {:.0}, re-mining replayed from there keeps {:.0} and undoes {} corrections",
            done.corrected_pairs, done.kept_before, done.kept_replay, done.regressions
        );
    } else {
        println!("evidence: no merge or split by a person among these occurrences, so re-mining only proposes");
    }
    let (agreeing, against) = (done.literal_agreeing, done.literal_against);
    if done.read_literally {
        println!(
            "read literally: quoted names stay in this project's templates, and a message joins only a pattern it \
             fits in every position ({agreeing} of people's corrections made so, {against} undone)"
        );
    } else if agreeing + against > 0 {
        println!(
            "read as captured: reading the project literally would make {agreeing} of people's corrections and \
             undo {against}; it asks for four made and none undone"
        );
    }
}
