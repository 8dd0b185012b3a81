//! The `lore-sidecar` binary.

use std::process::ExitCode;

use clap::Parser;

/// lore-sidecar: spools agent actions on local disk and ships them to lore-server.
#[derive(Parser)]
#[command(version)]
struct Cli {
    #[command(flatten)]
    config: lore_sidecar::SidecarConfig,
    /// Log one JSON object per line.
    #[arg(long, env = "LORE_SIDECAR_LOG_JSON")]
    log_json: bool,
}

// Two workers whatever the machine: the sidecar is meant to stay small
// beside the agent (each worker thread adds an allocator arena).
#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    let filter = tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into());
    if cli.log_json {
        tracing_subscriber::fmt()
            .json()
            .flatten_event(true)
            .with_env_filter(filter)
            .with_writer(std::io::stderr)
            .init();
    } else {
        tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).init();
    }
    let shutdown = match lore_lifecycle::shutdown_signal() {
        Ok(shutdown) => shutdown,
        Err(error) => {
            eprintln!("lore-sidecar: cannot install signal handlers: {error}");
            return ExitCode::FAILURE;
        }
    };
    match lore_sidecar::run(cli.config, shutdown).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("lore-sidecar: {error:#}");
            ExitCode::FAILURE
        }
    }
}
