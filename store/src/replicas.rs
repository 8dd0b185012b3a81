//! Reads that scale past one database: optional streaming replicas
//! (`database.read_urls`) take the reads that may lag a little, and a read
//! goes back to the primary whenever a replica could answer it wrongly.
//!
//! Every replica is watched (its replayed WAL position, each few tens of
//! milliseconds, against the primary's), and a read says what it needs:
//! - [`ReadPools::bounded`]: what was true at most `replica_max_lag_ms`
//!   ago (reports, dashboards). A replica qualifies when it has replayed
//!   what the primary had written that long ago.
//! - [`ReadPools::at_least`]: everything up to a WAL position (an export:
//!   everything committed before it began; a search: everything the
//!   replica's keyword index already holds). A replica qualifies when it
//!   has replayed that far; the read waits up to `replica_wait_ms` for one.
//! - [`ReadPools::primary`]: reads that must see the caller's own writes
//!   (Resume right after LogAction), and every write, LISTEN/NOTIFY and the
//!   leader lock.
//!
//! When no replica qualifies, or none is configured, the primary answers:
//! a lagging replica costs speed, never a wrong answer.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use sqlx::PgPool;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

use crate::DatabaseConfig;
use lore_types::Error;

/// How often the replicas' positions are read.
const WATCH_EVERY: Duration = Duration::from_millis(50);
/// How long a replica may take to say where it is.
const PROBE_TIMEOUT: Duration = Duration::from_secs(1);
/// A fenced read asks a replica again this often while it waits.
const WAIT_STEP: Duration = Duration::from_millis(2);

/// A WAL position as a number of bytes.
pub type Lsn = u64;

/// Where each read goes.
#[derive(Debug, Clone)]
pub struct ReadPools {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    primary: PgPool,
    replicas: Vec<Replica>,
    max_lag: Duration,
    wait: Duration,
    /// The primary's position over the last `max_lag` and a bit, oldest
    /// first.
    history: Mutex<VecDeque<(Instant, Lsn)>>,
    /// Round robin among the replicas that qualify.
    next: AtomicUsize,
    /// Reads sent to a replica and to the primary (for the logs and tests).
    to_replica: AtomicU64,
    to_primary: AtomicU64,
}

#[derive(Debug)]
struct Replica {
    /// host:port/database, for the logs.
    name: String,
    pool: PgPool,
    replayed: AtomicU64,
    reachable: AtomicBool,
}

/// The SQL of a position: bytes since the start of the WAL.
const CURRENT: &str = "SELECT (pg_current_wal_lsn() - '0/0'::pg_lsn)::bigint";
const REPLAYED: &str = "SELECT (pg_last_wal_replay_lsn() - '0/0'::pg_lsn)::bigint";

impl ReadPools {
    /// The primary alone: every read goes there.
    pub fn primary_only(primary: PgPool) -> Self {
        Self::with_replicas(primary, Vec::new(), &DatabaseConfig::default())
    }

    /// Connects (lazily) to `config.read_urls` (checked when the
    /// configuration was loaded) and starts watching them. Call inside the
    /// runtime.
    pub fn connect(primary: PgPool, config: &DatabaseConfig) -> Self {
        let mut replicas = Vec::with_capacity(config.read_urls.len());
        for url in &config.read_urls {
            let Ok(options) = url.parse::<PgConnectOptions>() else {
                tracing::error!("database.read_urls holds a URL that is not one; it is left out");
                continue;
            };
            let name =
                format!("{}:{}/{}", options.get_host(), options.get_port(), options.get_database().unwrap_or(""));
            let pool = PgPoolOptions::new()
                .max_connections(config.max_connections)
                .acquire_timeout(Duration::from_secs(config.connect_timeout_secs))
                .connect_lazy_with(super::named(options));
            replicas.push(Replica { name, pool, replayed: AtomicU64::new(0), reachable: AtomicBool::new(false) });
        }
        Self::with_replicas(primary, replicas, config)
    }

    fn with_replicas(primary: PgPool, replicas: Vec<Replica>, config: &DatabaseConfig) -> Self {
        let watching = !replicas.is_empty();
        let inner = Arc::new(Inner {
            primary,
            replicas,
            max_lag: Duration::from_millis(config.replica_max_lag_ms),
            wait: Duration::from_millis(config.replica_wait_ms),
            history: Mutex::default(),
            next: AtomicUsize::new(0),
            to_replica: AtomicU64::new(0),
            to_primary: AtomicU64::new(0),
        });
        if watching {
            tokio::spawn(watch(Arc::downgrade(&inner)));
        }
        Self { inner }
    }

    /// The primary: writes, and reads that must see the caller's writes.
    pub fn primary(&self) -> &PgPool {
        &self.inner.primary
    }

    /// A pool for a read that may be up to `replica_max_lag_ms` old.
    pub fn bounded(&self) -> PgPool {
        let inner = &self.inner;
        if inner.replicas.is_empty() {
            return self.to_primary();
        }
        let wanted = {
            let history = inner.history.lock().expect("history lock");
            let horizon = Instant::now().checked_sub(inner.max_lag);
            // The primary's newest position from before the horizon; with
            // no sample that old yet, its oldest known one.
            history
                .iter()
                .rev()
                .find(|(at, _)| horizon.is_some_and(|horizon| *at <= horizon))
                .or_else(|| history.front())
                .map(|(_, lsn)| *lsn)
        };
        match wanted.and_then(|wanted| self.replica_at(wanted)) {
            Some(pool) => pool,
            None => self.to_primary(),
        }
    }

    /// A pool for a read that must see everything written up to `lsn`: a
    /// replica that has replayed that far (waiting up to
    /// `replica_wait_ms` for one to get there), else the primary.
    pub async fn at_least(&self, lsn: Lsn) -> PgPool {
        let inner = &self.inner;
        if inner.replicas.is_empty() {
            return self.to_primary();
        }
        if let Some(pool) = self.replica_at(lsn) {
            return pool;
        }
        let deadline = Instant::now() + inner.wait;
        while Instant::now() < deadline {
            for replica in inner.replicas.iter().filter(|replica| replica.reachable.load(Ordering::Relaxed)) {
                if let Ok(Ok(Some(replayed))) =
                    tokio::time::timeout(deadline - Instant::now(), position(&replica.pool, REPLAYED)).await
                {
                    replica.replayed.fetch_max(replayed, Ordering::Relaxed);
                    if replayed >= lsn {
                        inner.to_replica.fetch_add(1, Ordering::Relaxed);
                        return replica.pool.clone();
                    }
                }
            }
            tokio::time::sleep(WAIT_STEP).await;
        }
        self.to_primary()
    }

    /// The primary's current WAL position: what a read that must see every
    /// write committed so far waits for.
    pub async fn primary_position(&self) -> Result<Lsn, Error> {
        Ok(position(&self.inner.primary, CURRENT).await?.unwrap_or(0))
    }

    /// Reads sent to a replica and to the primary so far.
    pub fn counts(&self) -> (u64, u64) {
        (self.inner.to_replica.load(Ordering::Relaxed), self.inner.to_primary.load(Ordering::Relaxed))
    }

    fn replica_at(&self, lsn: Lsn) -> Option<PgPool> {
        let inner = &self.inner;
        let count = inner.replicas.len();
        let start = inner.next.fetch_add(1, Ordering::Relaxed);
        let found = (0..count).map(|offset| &inner.replicas[(start + offset) % count]).find(|replica| {
            replica.reachable.load(Ordering::Relaxed) && replica.replayed.load(Ordering::Relaxed) >= lsn
        })?;
        inner.to_replica.fetch_add(1, Ordering::Relaxed);
        Some(found.pool.clone())
    }

    fn to_primary(&self) -> PgPool {
        self.inner.to_primary.fetch_add(1, Ordering::Relaxed);
        self.inner.primary.clone()
    }
}

/// A position, or `None` when the server has none of that kind (a primary
/// asked for its replay position).
async fn position(pool: &PgPool, sql: &'static str) -> Result<Option<Lsn>, sqlx::Error> {
    let position: Option<i64> = sqlx::query_scalar(sql).persistent(false).fetch_one(pool).await?;
    Ok(position.map(|position| position.max(0) as Lsn))
}

/// Reads the primary's and every replica's position until the pools go.
async fn watch(inner: Weak<Inner>) {
    let mut ticker = tokio::time::interval(WATCH_EVERY);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticker.tick().await;
        let Some(inner) = inner.upgrade() else { return };
        if let Ok(Ok(Some(current))) = tokio::time::timeout(PROBE_TIMEOUT, position(&inner.primary, CURRENT)).await {
            let now = Instant::now();
            let mut history = inner.history.lock().expect("history lock");
            history.push_back((now, current));
            let keep = inner.max_lag + Duration::from_secs(1);
            while history.front().is_some_and(|(at, _)| now.duration_since(*at) > keep) {
                history.pop_front();
            }
        }
        for replica in &inner.replicas {
            let probed = tokio::time::timeout(PROBE_TIMEOUT, position(&replica.pool, REPLAYED)).await;
            let unusable = match probed {
                Ok(Ok(Some(replayed))) => {
                    replica.replayed.fetch_max(replayed, Ordering::Relaxed);
                    None
                }
                Ok(Ok(None)) => Some("it is not a replica (not in recovery)".to_owned()),
                Ok(Err(error)) => Some(error.to_string()),
                Err(_) => Some(format!("it did not answer within {PROBE_TIMEOUT:?}")),
            };
            let reachable = unusable.is_none();
            if replica.reachable.swap(reachable, Ordering::Relaxed) != reachable {
                match unusable {
                    None => tracing::info!(replica = replica.name, "replica in use for reads"),
                    Some(reason) => tracing::warn!(replica = replica.name, reason, "replica not used for reads"),
                }
            }
        }
    }
}
