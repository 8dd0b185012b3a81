//! Background jobs of the server. For now they run on every replica; their
//! statements are idempotent, so that is safe. (The platform issue elects one
//! leader for them with an advisory lock.)

use std::time::Duration;

use chrono::Utc;
use sqlx::PgPool;
use tokio::task::JoinHandle;

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
