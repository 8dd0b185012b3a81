//! `lore`: the command-line client of lore-server.
//!
//! One binary with a subcommand per job (and, with the sidecar issue,
//! `lore sidecar` for the per-VM daemon). Every command talks gRPC to the
//! server at `--server` (or `LORE_SERVER`).

mod commands;
mod convert;
mod errors;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// The Lore command-line client.
#[derive(Parser)]
#[command(version, about)]
struct Cli {
    /// lore-server address.
    #[arg(long, global = true, env = "LORE_SERVER", default_value = "http://127.0.0.1:50051")]
    server: String,
    /// Bearer token (`lore-server token create`). Against a local dev
    /// server (`make run`) the CLI finds the dev token by itself.
    #[arg(long, global = true, env = "LORE_TOKEN", hide_env_values = true)]
    token: Option<String>,
    #[command(flatten)]
    tls: lore_sidecar::TlsArgs,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Log one action (in this agent's session of the project, started on
    /// first use, unless --session is given).
    Log(commands::actions::log::Args),
    /// Start or end a session.
    #[command(subcommand)]
    Session(commands::actions::session::Command),
    /// Query the action log.
    #[command(subcommand)]
    Actions(ActionsCommand),
    /// Show where the last session stopped and what it left unfinished.
    Resume(commands::actions::resume::Args),
    /// Activity report of a project.
    Report(commands::actions::report::Args),
    /// Export actions to a file (resumable).
    Export(commands::actions::export::Args),
    /// Search the knowledge base for the lesson a problem needs.
    Search(commands::knowledge::search::Args),
    /// Several errors at once: the lessons of each, capped, with how to
    /// read one in full.
    Triage(commands::knowledge::triage::Args),
    /// Synonyms search expands queries with.
    #[command(subcommand)]
    Synonyms(commands::knowledge::vocabulary::SynonymsCommand),
    /// Related categories: a query's category ranks them next after its own.
    #[command(subcommand)]
    Categories(commands::knowledge::vocabulary::CategoriesCommand),
    /// Knowledge entries.
    #[command(subcommand)]
    Entry(EntryCommand),
    /// Index markdown files (one, or every one under a folder); `push`
    /// keeps a part of the project equal to a folder, from CI.
    #[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
    Index(commands::knowledge::index::Command),
    /// The project's standing instructions in the repository's CLAUDE.md or
    /// AGENTS.md: write them, or show the patch.
    #[command(subcommand)]
    Instructions(commands::knowledge::instructions::Command),
    /// Learnings drafted from the action log, and their review.
    #[command(subcommand)]
    Drafts(commands::knowledge::drafts::Command),
    /// QA failures, their patterns, warnings before a task, the dashboard
    /// and promotion.
    #[command(subcommand)]
    Qa(commands::qa::Command),
    /// What the injection screen held for review: list, release, erase.
    #[command(subcommand)]
    Quarantine(commands::trust::quarantine::Command),
    /// What Lore put into agents' contexts (the injection ledger): each
    /// briefing and read, item by item, with why it was shown or withheld.
    Injections(commands::trust::injections::Args),
    /// Measure things: against a running server, or (screening) offline.
    #[command(subcommand)]
    Eval(lore_eval::Command),
    /// Run the sidecar daemon beside an agent (same as `lore-sidecar`), or
    /// ask a running one how it is doing.
    Sidecar(Box<SidecarArgs>),
    /// Serve Lore's tools to an agent over MCP on stdio (what the agent
    /// launches; `lore init` configures it).
    Mcp(commands::agents::mcp::Args),
    /// Answer an agent's hook: the JSON event on stdin, the agent's answer
    /// on stdout; always exits 0 within its time budget.
    Hook(lore_agent::hooks::HookArgs),
    /// Plug Lore into a repository for Claude Code, Codex or Gemini CLI:
    /// the MCP server and the hooks, merged into their configuration.
    Init(lore_agent::init::InitArgs),
}

#[derive(clap::Args)]
#[command(args_conflicts_with_subcommands = true)]
struct SidecarArgs {
    #[command(subcommand)]
    action: Option<SidecarAction>,
    #[command(flatten)]
    config: lore_sidecar::SidecarConfig,
}

#[derive(Subcommand)]
enum SidecarAction {
    /// Connected or not, what is spooled, what was shipped.
    Status(commands::agents::sidecar_status::Args),
}

#[derive(Subcommand)]
enum ActionsCommand {
    /// Search actions by type, outcome, agent, epic, time, context.
    Search(commands::actions::search::Args),
}

#[derive(Subcommand)]
enum EntryCommand {
    /// One entry: solutions, checklist, body, where it was applied.
    Show(commands::knowledge::entry::ShowArgs),
    /// Record that a lesson was used, and whether it worked.
    Apply(commands::knowledge::entry::ApplyArgs),
    /// Create or replace an entry by its key.
    Upsert(commands::knowledge::entry::UpsertArgs),
    /// Erase an entry and everything derived from it (drafts, pattern
    /// fixes, standing instructions, caches on every replica); admin only.
    Erase(commands::knowledge::entry::EraseArgs),
    /// Entries agents wrote whose words wait for a person: list, approve,
    /// reject (admin).
    #[command(subcommand)]
    Review(commands::knowledge::reviews::Command),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let address = lore_agent::connection::LoreAddress {
        server: cli.server.clone(),
        sidecar: None,
        token: cli.token.clone(),
        tls: cli.tls.files(),
    };
    match cli.command {
        // A hook lives for milliseconds: its own small runtime, and no
        // error ever reaches the agent.
        Command::Hook(args) => lore_agent::hooks::run(args, address),
        Command::Init(args) => report(commands::agents::init::run(args)),
        Command::Eval(evaluation) => match evaluation.run_offline() {
            lore_eval::Run::Done(result) => report(result),
            lore_eval::Run::Connect(evaluation) => serve(Cli { command: Command::Eval(evaluation), ..cli }, address),
        },
        command => serve(Cli { command, ..cli }, address),
    }
}

/// Runs a command that talks to the server, on a runtime of its own.
fn serve(cli: Cli, address: lore_agent::connection::LoreAddress) -> ExitCode {
    match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime.block_on(run(cli, address)),
        Err(error) => {
            eprintln!("lore: cannot start: {error}");
            ExitCode::FAILURE
        }
    }
}

fn report(result: anyhow::Result<()>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("lore: {}", errors::sentence(&error));
            ExitCode::FAILURE
        }
    }
}

async fn run(cli: Cli, address: lore_agent::connection::LoreAddress) -> ExitCode {
    if let Command::Mcp(args) = cli.command {
        return report(commands::agents::mcp::run(args, address).await);
    }
    if let Command::Sidecar(sidecar) = cli.command {
        return match sidecar.action {
            None => run_sidecar(sidecar.config).await,
            Some(SidecarAction::Status(args)) => report(commands::agents::sidecar_status::run(args).await),
        };
    }
    let result = async {
        let channel = commands::connect(&cli.server, cli.token.as_deref(), &cli.tls.files()).await?;
        match cli.command {
            Command::Log(args) => commands::actions::log::run(channel, args).await,
            Command::Session(command) => commands::actions::session::run(channel, command).await,
            Command::Actions(ActionsCommand::Search(args)) => commands::actions::search::run(channel, args).await,
            Command::Resume(args) => commands::actions::resume::run(channel, args).await,
            Command::Report(args) => commands::actions::report::run(channel, args).await,
            Command::Export(args) => commands::actions::export::run(channel, args).await,
            Command::Search(args) => commands::knowledge::search::run(channel, args).await,
            Command::Triage(args) => commands::knowledge::triage::run(channel, args).await,
            Command::Synonyms(command) => commands::knowledge::vocabulary::synonyms(channel, command).await,
            Command::Categories(command) => commands::knowledge::vocabulary::categories(channel, command).await,
            Command::Entry(EntryCommand::Show(args)) => commands::knowledge::entry::show(channel, args).await,
            Command::Entry(EntryCommand::Apply(args)) => commands::knowledge::entry::apply(channel, args).await,
            Command::Entry(EntryCommand::Upsert(args)) => commands::knowledge::entry::upsert(channel, args).await,
            Command::Entry(EntryCommand::Erase(args)) => commands::knowledge::entry::erase(channel, args).await,
            Command::Entry(EntryCommand::Review(command)) => commands::knowledge::reviews::run(channel, command).await,
            Command::Index(args) => commands::knowledge::index::run(channel, args).await,
            Command::Instructions(command) => commands::knowledge::instructions::run(channel, command).await,
            Command::Drafts(command) => commands::knowledge::drafts::run(channel, command).await,
            Command::Eval(evaluation) => evaluation.run(channel, &cli.server, cli.token.as_deref()).await,
            Command::Qa(command) => commands::qa::run(channel, command).await,
            Command::Quarantine(command) => commands::trust::quarantine::run(channel, command).await,
            Command::Injections(args) => commands::trust::injections::run(channel, args).await,
            Command::Sidecar(_) | Command::Mcp(_) | Command::Hook(_) | Command::Init(_) => {
                unreachable!("handled above: these need no server connection to start")
            }
        }
    }
    .await;
    report(result)
}

/// `lore sidecar`: the daemon, until SIGTERM or SIGINT.
async fn run_sidecar(config: lore_sidecar::SidecarConfig) -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()))
        .with_writer(std::io::stderr)
        .init();
    let shutdown = match lore_lifecycle::shutdown_signal() {
        Ok(shutdown) => shutdown,
        Err(error) => {
            eprintln!("lore sidecar: cannot install signal handlers: {error}");
            return ExitCode::FAILURE;
        }
    };
    match lore_sidecar::run(config, shutdown).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("lore sidecar: {error:#}");
            ExitCode::FAILURE
        }
    }
}
