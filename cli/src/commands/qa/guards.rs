//! `lore qa guards`: a project's guards. A guard refuses an agent's shell
//! call of one shape, with the reason and what to run instead, while the
//! project's guards are on. Setting them takes an admin token: a person's
//! decision, never an agent's.

use lore_proto::v1 as proto;
use lore_proto::v1::qa_learning_service_client::QaLearningServiceClient;

use crate::commands::Channel;
use crate::commands::display::or_dash;

#[derive(clap::Subcommand)]
pub enum GuardsCommand {
    /// Whether the project's guards are on, and each guard.
    List {
        #[arg(long, env = "LORE_PROJECT")]
        project: String,
    },
    /// Add a guard, or replace the one of the same shape (admin).
    Add {
        #[arg(long, env = "LORE_PROJECT")]
        project: String,
        /// A command as an agent runs it, or a shape Lore showed
        /// (`pytest <arg>`); calls of its shape are refused.
        command: String,
        /// Why, in one line: what the agent reads.
        #[arg(long)]
        reason: String,
        /// What to run instead.
        #[arg(long = "instead", default_value = "")]
        alternative: String,
    },
    /// Remove a guard by its id (admin).
    Remove {
        #[arg(long, env = "LORE_PROJECT")]
        project: String,
        guard_id: String,
    },
    /// Turn the project's guards on: calls of a guarded shape are refused (admin).
    On {
        #[arg(long, env = "LORE_PROJECT")]
        project: String,
    },
    /// Turn the project's guards off: agents are warned, never refused (admin).
    Off {
        #[arg(long, env = "LORE_PROJECT")]
        project: String,
    },
    /// Set how the project's agents are warned of a call that failed in
    /// earlier sessions (admin): deny-once holds the first such call of a
    /// session when the evidence is strong, context only speaks beside the
    /// result, off says nothing.
    CallWarnings {
        #[arg(long, env = "LORE_PROJECT")]
        project: String,
        mode: CallWarningMode,
    },
}

#[derive(Clone, Copy, clap::ValueEnum)]
pub enum CallWarningMode {
    DenyOnce,
    Context,
    Off,
}

pub async fn guards(qa: &mut QaLearningServiceClient<Channel>, command: GuardsCommand) -> anyhow::Result<()> {
    match command {
        GuardsCommand::List { project } => {
            print_guards(
                &project,
                qa.list_guards(proto::ListGuardsRequest { project: project.clone() }).await?.into_inner(),
            );
        }
        GuardsCommand::Add { project, command, reason, alternative } => {
            let guard = proto::Guard { project, command, reason, alternative, ..Default::default() };
            let guard = qa.put_guard(proto::PutGuardRequest { guard: Some(guard) }).await?.into_inner();
            println!("guard {} refuses {} (while the project's guards are on)", guard.guard_id, guard.shape);
        }
        GuardsCommand::Remove { project, guard_id } => {
            let request = proto::RemoveGuardRequest { project: project.clone(), guard_id: guard_id.clone() };
            if qa.remove_guard(request).await?.into_inner().removed {
                println!("removed guard {guard_id}");
            } else {
                println!("no guard {guard_id} in {project}: nothing changed");
            }
        }
        GuardsCommand::On { project } => switch(qa, project, true).await?,
        GuardsCommand::Off { project } => switch(qa, project, false).await?,
        GuardsCommand::CallWarnings { project, mode } => {
            let mode = match mode {
                CallWarningMode::DenyOnce => proto::CallWarningMode::DenyOnce,
                CallWarningMode::Context => proto::CallWarningMode::Context,
                CallWarningMode::Off => proto::CallWarningMode::Off,
            };
            let request = proto::SetCallWarningModeRequest { project: project.clone(), mode: mode as i32 };
            let listed = qa.set_call_warning_mode(request).await?.into_inner();
            if mode != proto::CallWarningMode::Off && listed.call_warnings == proto::CallWarningMode::Off as i32 {
                println!("set, but the qa.warnings kill switch keeps warnings at the call off");
            }
            print_guards(&project, listed);
        }
    }
    Ok(())
}

async fn switch(qa: &mut QaLearningServiceClient<Channel>, project: String, enabled: bool) -> anyhow::Result<()> {
    let request = proto::SetGuardsEnabledRequest { project: project.clone(), enabled };
    let guards = qa.set_guards_enabled(request).await?.into_inner();
    if enabled && !guards.enabled {
        println!("guards of {project} are on, but the qa.warnings kill switch keeps them off");
    }
    print_guards(&project, guards);
    Ok(())
}

fn print_guards(project: &str, listed: proto::ListGuardsResponse) {
    let state =
        if listed.enabled { "on: calls of these shapes are refused" } else { "off: agents are warned, never refused" };
    println!("guards of {project}: {state}");
    let warnings = match proto::CallWarningMode::try_from(listed.call_warnings) {
        Ok(proto::CallWarningMode::Context) => "beside the result, never refused",
        Ok(proto::CallWarningMode::Off) => "off",
        _ => "the first call held once when the evidence is strong, else beside the result",
    };
    println!("warnings at the call: {warnings}");
    if listed.guards.is_empty() {
        println!("no guard");
    }
    for guard in listed.guards {
        println!("{}  {:<32} {}  instead: {}", guard.guard_id, guard.shape, guard.reason, or_dash(&guard.alternative));
    }
}
