//! `lore qa masks`: a project's own grouping masks. Each is a regular
//! expression whose every match in a captured message is one variable,
//! applied before the generic masks; a change re-mines the project.

use lore_proto::v1 as proto;
use lore_proto::v1::qa_learning_service_client::QaLearningServiceClient;

use super::Channel;
use super::display::or_dash;

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
        rejected => format!(" ({rejected} more proposed, turned down: they would have grouped the messages worse)"),
    };
    println!(
        "re-mined {} occurrences of {project}: {} merges, {} splits{rejected}{moved}",
        done.occurrences, done.merges, done.splits
    );
}
