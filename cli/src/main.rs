//! `lore`: the command-line client of lore-server.
//!
//! One binary with a subcommand per job (and, with the sidecar issue,
//! `lore sidecar` for the per-VM daemon). Every command talks gRPC to the
//! server at `--server` (or `LORE_SERVER`).

mod commands;
mod convert;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// The Lore command-line client.
#[derive(Parser)]
#[command(version, about)]
struct Cli {
    /// lore-server address.
    #[arg(long, global = true, env = "LORE_SERVER", default_value = "http://127.0.0.1:50051")]
    server: String,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Log one action.
    Log(commands::log::Args),
    /// Query the action log.
    #[command(subcommand)]
    Actions(ActionsCommand),
    /// Show where the last session stopped and what it left unfinished.
    Resume(commands::resume::Args),
    /// Activity report of a project.
    Report(commands::report::Args),
    /// Export actions to a file (resumable).
    Export(commands::export::Args),
    /// Measure things against a running server.
    #[command(subcommand)]
    Eval(EvalCommand),
}

#[derive(Subcommand)]
enum ActionsCommand {
    /// Search actions by type, outcome, agent, epic, time, context.
    Search(commands::search::Args),
}

#[derive(Subcommand)]
enum EvalCommand {
    /// Redaction recall and false-positive rate, through the real LogAction.
    Redaction(commands::eval::Args),
}

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = async {
        let channel = commands::connect(&cli.server).await?;
        match cli.command {
            Command::Log(args) => commands::log::run(channel, args).await,
            Command::Actions(ActionsCommand::Search(args)) => commands::search::run(channel, args).await,
            Command::Resume(args) => commands::resume::run(channel, args).await,
            Command::Report(args) => commands::report::run(channel, args).await,
            Command::Export(args) => commands::export::run(channel, args).await,
            Command::Eval(EvalCommand::Redaction(args)) => commands::eval::run(channel, args).await,
        }
    }
    .await;
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("lore: {error:#}");
            ExitCode::FAILURE
        }
    }
}
