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

fn main() -> ExitCode {
    one_allocator_arena();
    // Two workers whatever the machine: the sidecar is meant to stay small
    // beside the agent.
    match tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build() {
        Ok(runtime) => runtime.block_on(serve()),
        Err(error) => {
            eprintln!("lore-sidecar: cannot start the async runtime: {error}");
            ExitCode::FAILURE
        }
    }
}

async fn serve() -> ExitCode {
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

/// glibc gives each thread that allocates an arena of its own, and each
/// arena keeps what its thread freed: a spooling sidecar's threads held
/// about 2.5 MiB more between them than one shared arena does
/// (docs/BENCHMARKS.md, "Sidecar"). Its threads allocate little, so one
/// arena costs no measurable speed. glibc reads the setting only when a
/// process starts, so the sidecar starts itself again, once, with it set;
/// a value the user set is left alone, and a failed restart (no
/// `/proc/self/exe`, say) carries on as it is.
fn one_allocator_arena() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        use std::os::unix::process::CommandExt as _;
        const ARENAS: &str = "MALLOC_ARENA_MAX";
        if std::env::var_os(ARENAS).is_some() {
            return;
        }
        let Ok(executable) = std::env::current_exe() else { return };
        let error = std::process::Command::new(executable).args(std::env::args_os().skip(1)).env(ARENAS, "1").exec();
        eprintln!("lore-sidecar: could not restart with one allocator arena ({error}); carrying on");
    }
}
