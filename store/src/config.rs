//! `[database]`: the pool, the migrations at start-up and the read
//! replicas. The server composes it into its one config.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// Enough for the three services under load on a small machine; PostgreSQL's
/// own default limit is 100 connections shared by every replica.
const DEFAULT_MAX_CONNECTIONS: u32 = 16;
/// Reports and dashboards may be this old.
const DEFAULT_REPLICA_MAX_LAG_MS: u64 = 1000;
/// A replica on the same network replays within milliseconds; waiting a
/// little longer is cheaper than loading the primary.
const DEFAULT_REPLICA_WAIT_MS: u64 = 50;
/// Long enough for a PostgreSQL that is still starting, short enough that a
/// wrong URL fails the start-up quickly.
const DEFAULT_CONNECT_TIMEOUT_SECS: u64 = 10;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DatabaseConfig {
    /// Size of the connection pool.
    pub max_connections: u32,
    /// How long to wait for a connection before failing.
    pub connect_timeout_secs: u64,
    /// Apply pending migrations at start-up (turn off when a separate job runs
    /// `lore-server migrate`).
    pub migrate_on_start: bool,
    /// Streaming replicas of the database for reads that may lag a little
    /// (search, reports, dashboards, export); none by default. Writes,
    /// LISTEN/NOTIFY, the leader lock and reads that must see their own
    /// writes stay on the primary. Also `LORE_DATABASE__READ_URLS='["postgres://..."]'`.
    pub read_urls: Vec<String>,
    /// How far behind the primary a replica may be for reports and
    /// dashboards; a replica further behind is not used until it catches
    /// up.
    pub replica_max_lag_ms: u64,
    /// How long a read that must see everything up to a point (an export,
    /// a search) waits for a replica to replay that far before it goes to
    /// the primary.
    pub replica_wait_ms: u64,
}

impl Default for DatabaseConfig {
    fn default() -> Self {
        Self {
            max_connections: DEFAULT_MAX_CONNECTIONS,
            connect_timeout_secs: DEFAULT_CONNECT_TIMEOUT_SECS,
            migrate_on_start: true,
            read_urls: Vec::new(),
            replica_max_lag_ms: DEFAULT_REPLICA_MAX_LAG_MS,
            replica_wait_ms: DEFAULT_REPLICA_WAIT_MS,
        }
    }
}

impl DatabaseConfig {
    /// How long to wait for a connection before failing.
    pub fn connect_timeout(&self) -> Duration {
        Duration::from_secs(self.connect_timeout_secs)
    }

    /// Refuses a pool of no connection and a replica URL that is not one.
    pub fn validate(&self) -> Result<(), String> {
        if self.max_connections == 0 {
            return Err("database.max_connections must be at least 1".into());
        }
        for (index, url) in self.read_urls.iter().enumerate() {
            if let Err(error) = url.parse::<sqlx::postgres::PgConnectOptions>() {
                return Err(format!("database.read_urls[{index}] is not a PostgreSQL URL: {error}"));
            }
        }
        Ok(())
    }
}
