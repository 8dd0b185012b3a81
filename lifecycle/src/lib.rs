//! How a Lore process ends. The server and the sidecar both stop on the
//! first SIGTERM or SIGINT, draining what they hold; they wait on the same
//! future, so both handle a signal the same way, including one that comes
//! while they are still starting.

#![forbid(unsafe_code)]

use std::future::Future;

/// Installs the SIGTERM and SIGINT handlers now and returns a future that
/// resolves on the first of them. Call it first thing: a signal that
/// arrives while the process is still starting is then held, not fatal,
/// and the process shuts down as soon as it serves.
pub fn shutdown_signal() -> std::io::Result<impl Future<Output = ()> + Send + 'static> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut terminate = signal(SignalKind::terminate())?;
    let mut interrupt = signal(SignalKind::interrupt())?;
    Ok(async move {
        tokio::select! {
            _ = terminate.recv() => tracing::info!("SIGTERM received"),
            _ = interrupt.recv() => tracing::info!("SIGINT received"),
        }
    })
}
