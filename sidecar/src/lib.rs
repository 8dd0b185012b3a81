//! lore-sidecar: the process that runs beside each agent VM.
//!
//! Built so far: the crash-safe [`spool`]. The daemon itself (local gRPC
//! endpoint, inbox tail, shipper, status) still only starts, logs and waits
//! for a shutdown signal.

pub mod spool;

/// Runs the sidecar until `shutdown` resolves.
pub async fn run(shutdown: impl std::future::Future<Output = ()>) -> anyhow::Result<()> {
    tracing::info!("lore-sidecar started (no spool yet)");
    shutdown.await;
    tracing::info!("lore-sidecar stopped");
    Ok(())
}
