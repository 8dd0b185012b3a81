//! Switches that take effect at once on every replica: `qa.warnings.enabled`
//! (no warnings in briefings or GetWarnings) and `qa.learning.enabled` (no
//! failure grouped into patterns, no confidence moved, no promotion
//! proposed, no re-mining).
//!
//! The config gives each switch's value; a row of the `settings` table
//! overrides it. Each replica reads the table at start, and again whenever
//! `lore_settings` is notified (a trigger on the table) and when its
//! listening connection comes back, so a switch flipped on one replica
//! holds on all of them within a round trip. The replica that flips it
//! holds it before it answers.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use sqlx::PgPool;
use sqlx::postgres::PgListener;

use crate::Error;
use crate::background::Background;
use lore_store::settings as store;

pub const WARNINGS: &str = "qa.warnings.enabled";
pub const LEARNING: &str = "qa.learning.enabled";

/// The switches as this replica holds them.
#[derive(Debug)]
pub struct Switches {
    warnings: AtomicBool,
    learning: AtomicBool,
    /// The config's values, for a setting whose row is deleted.
    defaults: (bool, bool),
}

impl Default for Switches {
    fn default() -> Self {
        Self::new(true, true)
    }
}

impl Switches {
    pub fn new(warnings: bool, learning: bool) -> Self {
        Self {
            warnings: AtomicBool::new(warnings),
            learning: AtomicBool::new(learning),
            defaults: (warnings, learning),
        }
    }

    pub fn warnings(&self) -> bool {
        self.warnings.load(Ordering::Relaxed)
    }

    pub fn learning(&self) -> bool {
        self.learning.load(Ordering::Relaxed)
    }

    /// Takes the stored rows over the config's values. A value that is not
    /// a boolean is ignored (logged): the table's CHECK cannot know the
    /// keys' types.
    fn apply(&self, rows: &[(String, serde_json::Value)]) {
        let stored =
            |key: &str, default: bool| match rows.iter().find(|(stored, _)| stored == key).map(|(_, value)| value) {
                None => default,
                Some(serde_json::Value::Bool(value)) => *value,
                Some(other) => {
                    tracing::warn!(key, value = %other, "a setting that is not true or false is ignored");
                    default
                }
            };
        self.warnings.store(stored(WARNINGS, self.defaults.0), Ordering::Relaxed);
        self.learning.store(stored(LEARNING, self.defaults.1), Ordering::Relaxed);
    }
}

/// The settings of one replica: the switches, kept in step with the table.
#[derive(Debug, Clone)]
pub struct Settings {
    pool: PgPool,
    switches: Arc<Switches>,
    _listener: Arc<Background>,
}

impl Settings {
    /// Follows the table from now on (its first read is at once, in the
    /// background: [`Settings::reload`] waits for one). Call inside the
    /// runtime.
    pub fn start(pool: PgPool, defaults: Switches) -> Self {
        let switches = Arc::new(defaults);
        let listener = Arc::new(Background::default());
        listener.spawn(follow(pool.clone(), Arc::downgrade(&switches)));
        Self { pool, switches, _listener: listener }
    }

    /// Reads the table now.
    pub async fn reload(&self) -> Result<(), Error> {
        self.switches.apply(&store::load(&self.pool).await?);
        Ok(())
    }

    pub fn switches(&self) -> Arc<Switches> {
        Arc::clone(&self.switches)
    }

    /// Sets the switches given, saying who did; answers what holds now.
    pub async fn set(&self, warnings: Option<bool>, learning: Option<bool>, by: &str) -> Result<Arc<Switches>, Error> {
        for (key, value) in [(WARNINGS, warnings), (LEARNING, learning)] {
            if let Some(value) = value {
                store::put(&self.pool, key, &serde_json::Value::Bool(value), by).await?;
            }
        }
        self.switches.apply(&store::load(&self.pool).await?);
        Ok(self.switches())
    }
}

/// Reloads the switches on every notification, and whenever the listening
/// connection was lost (a change may have been missed meanwhile).
async fn follow(pool: PgPool, switches: std::sync::Weak<Switches>) {
    loop {
        let listening = async {
            let mut listener = PgListener::connect_with(&pool).await?;
            listener.listen(store::CHANGE_CHANNEL).await?;
            loop {
                let Some(strong) = switches.upgrade() else { return Ok(()) };
                strong.apply(&store::load(&pool).await?);
                drop(strong);
                // Ok(None): the connection dropped; the next call reconnects
                // and listens again, and the loop reloads once more.
                listener.try_recv().await?;
            }
        };
        let result: Result<(), sqlx::Error> = listening.await;
        match result {
            Ok(()) => return,
            Err(error) => tracing::warn!(%error, "the settings listener failed; retrying"),
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}
