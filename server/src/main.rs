//! The `lore-server` binary: loads the config, sets up telemetry and runs.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use lore_server::Config;

/// Exit code for a configuration that cannot be used (sysexits EX_CONFIG).
const EXIT_CONFIG: u8 = 78;
/// Exit code for a failure while starting or serving.
const EXIT_FAILURE: u8 = 1;

/// The Lore memory server for fleets of AI coding agents.
#[derive(Parser)]
#[command(version)]
struct Cli {
    /// TOML config file; `LORE_*` environment variables override it.
    #[arg(long, short, env = "LORE_CONFIG", global = true)]
    config: Option<PathBuf>,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Serve gRPC (the default).
    Serve,
    /// Apply database migrations, then exit.
    Migrate,
    /// Create, list and revoke API tokens.
    #[command(subcommand)]
    Token(lore_server::tokens_command::TokenCommand),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let config = match Config::load(cli.config.as_deref()) {
        Ok(config) => config,
        Err(error) => {
            eprintln!("lore-server: {error}");
            return ExitCode::from(EXIT_CONFIG);
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("lore-server: cannot start the async runtime: {error}");
            return ExitCode::from(EXIT_FAILURE);
        }
    };
    let result = runtime.block_on(async {
        let shutdown = lore_lifecycle::shutdown_signal()?;
        let _telemetry = lore_server::telemetry::init(&config.log, &config.telemetry)?;
        match cli.command.unwrap_or(Command::Serve) {
            Command::Serve => {
                let listeners = lore_server::Listeners::bind(&config).await?;
                lore_server::run(config, listeners, shutdown).await
            }
            Command::Migrate => lore_server::migrate(&config).await,
            Command::Token(command) => lore_server::tokens_command::run(&config, command).await,
        }
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("lore-server: {error:#}");
            ExitCode::from(EXIT_FAILURE)
        }
    }
}
