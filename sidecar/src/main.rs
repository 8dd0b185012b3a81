use clap::Parser;

/// lore-sidecar: spools agent actions on local disk and ships them to lore-server.
#[derive(Parser)]
#[command(version)]
struct Cli {}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let _cli = Cli::parse();
    tracing_subscriber::fmt().with_writer(std::io::stderr).init();
    lore_sidecar::run(async {
        let _ = tokio::signal::ctrl_c().await;
    })
    .await
}
