//! `lore qa ack|switches`: an agent's acknowledgement of the warnings it was
//! shown, and the kill switches of warnings and learning.

use lore_proto::v1 as proto;

use crate::commands::Channel;

type Qa = lore_proto::v1::qa_learning_service_client::QaLearningServiceClient<Channel>;

#[derive(clap::Args)]
pub struct AckArgs {
    /// The warnings' ids, as a briefing prints them (`warning <id>`).
    #[arg(required = true)]
    warnings: Vec<String>,
    /// What was done about them.
    #[arg(long, default_value = "")]
    note: String,
}

#[derive(clap::Args)]
pub struct SwitchesArgs {
    /// Warnings in briefings and GetWarnings.
    #[arg(long, value_parser = on_off)]
    warnings: Option<bool>,
    /// Failures grouped into patterns, confidence moved by outcomes,
    /// promotions, re-mining.
    #[arg(long, value_parser = on_off)]
    learning: Option<bool>,
}

fn on_off(text: &str) -> Result<bool, String> {
    match text {
        "on" | "true" => Ok(true),
        "off" | "false" => Ok(false),
        _ => Err(format!("{text:?}: expected on or off")),
    }
}

pub async fn ack(qa: &mut Qa, args: AckArgs) -> anyhow::Result<()> {
    let count = args.warnings.len();
    let request = proto::AcknowledgeWarningRequest { delivery_ids: args.warnings, note: args.note };
    let acknowledged = qa.acknowledge_warning(request).await?.into_inner().acknowledged;
    if acknowledged as usize == count {
        println!("acknowledged {count} warning(s)");
    } else {
        println!("acknowledged {acknowledged} of {count} warning(s); the others were acknowledged before");
    }
    Ok(())
}

pub async fn switches(qa: &mut Qa, args: SwitchesArgs) -> anyhow::Result<()> {
    let switches = if args.warnings.is_none() && args.learning.is_none() {
        qa.get_switches(proto::GetSwitchesRequest {}).await?.into_inner()
    } else {
        let request = proto::SetSwitchesRequest { warnings_enabled: args.warnings, learning_enabled: args.learning };
        qa.set_switches(request).await?.into_inner()
    };
    let word = |on: bool| if on { "on" } else { "off" };
    println!("warnings: {}", word(switches.warnings_enabled));
    println!("learning: {}", word(switches.learning_enabled));
    Ok(())
}
