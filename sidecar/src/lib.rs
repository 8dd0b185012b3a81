//! lore-sidecar: the process that runs beside each agent VM.
//!
//! For now it is an empty daemon that starts, logs and waits for a shutdown
//! signal; the spool, the local gRPC endpoint and the shipper arrive with the
//! sidecar issue.

/// Runs the sidecar until `shutdown` resolves.
pub async fn run(shutdown: impl std::future::Future<Output = ()>) -> anyhow::Result<()> {
    tracing::info!("lore-sidecar started (no spool yet)");
    shutdown.await;
    tracing::info!("lore-sidecar stopped");
    Ok(())
}
