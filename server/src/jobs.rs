//! Background jobs of the server. For now they run on every replica; their
//! statements are idempotent, so that is safe. (The platform issue elects one
//! leader for them with an advisory lock.)

use std::time::Duration;

use chrono::Utc;
use sqlx::PgPool;
use tokio::task::JoinHandle;

use crate::actions::ActionLog;
use crate::knowledge::KnowledgeBase;
use crate::store;

/// Every `interval`, marks sessions silent for longer than `timeout` as
/// disconnected.
pub fn spawn_session_sweep(pool: PgPool, timeout: Duration, interval: Duration) -> JoinHandle<()> {
    tokio::spawn(async move {
        let mut ticker = tokio::time::interval(interval);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            ticker.tick().await;
            let silent_since = Utc::now() - timeout;
            match store::sessions::mark_silent_sessions_disconnected(&pool, silent_since).await {
                Ok(0) => {}
                Ok(count) => tracing::info!(count, "marked silent sessions disconnected"),
                Err(error) => tracing::warn!(%error, "session sweep failed"),
            }
        }
    })
}

/// Every `interval` (first right away), applies the retention policy.
pub fn spawn_retention(log: ActionLog, interval: Duration) -> JoinHandle<()> {
    tokio::spawn(async move {
        let mut ticker = tokio::time::interval(interval);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            ticker.tick().await;
            match log.run_retention(false).await {
                Ok(report) if report.outcome.archived.is_empty() && report.outcome.dropped.is_empty() => {}
                Ok(report) => tracing::info!(
                    archived = ?report.outcome.archived,
                    dropped = ?report.outcome.dropped,
                    "retention applied"
                ),
                Err(error) => tracing::warn!(%error, "retention failed"),
            }
        }
    })
}

/// Every `interval`, embeds the entries waiting for a vector (new text, a
/// model change, or a provider failure whose backoff has passed). Jobs are
/// claimed with SKIP LOCKED, so replicas share the work.
pub fn spawn_embedding_worker(knowledge: KnowledgeBase, interval: Duration) -> JoinHandle<()> {
    tokio::spawn(async move {
        let mut ticker = tokio::time::interval(interval);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            ticker.tick().await;
            match knowledge.index_pending().await {
                Ok(0) => {}
                Ok(count) => tracing::info!(count, "entries embedded"),
                Err(error) => tracing::warn!(%error, "embedding queued entries failed; retrying later"),
            }
        }
    })
}
