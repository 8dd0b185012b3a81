//! Background jobs of the server, run by one replica at a time: the one
//! that holds a PostgreSQL advisory lock (see [`lead`]). When that replica
//! dies, its connection closes, PostgreSQL releases the lock, and another
//! replica takes over within one check interval.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use chrono::Utc;
use sqlx::PgPool;

use lore_domain::actions::ActionLog;
use lore_domain::knowledge::KnowledgeBase;
use lore_domain::knowledge::auto_drafts::AutoDraftsConfig;
use lore_domain::knowledge::watch::{self, WatchConfig, WatchStats};
use lore_domain::qa::QaLearning;
use lore_domain::reports::Reports;
use lore_store::leader::LeaderLock;

use crate::config::Config;
use crate::services::Services;

/// The lock every replica tries to take; its holder runs the jobs.
pub const JOBS_LOCK: &str = "lore.jobs";
/// How often a replica tries to become leader, and the leader checks that
/// its lock connection is alive.
pub const LEADER_CHECK: Duration = Duration::from_secs(5);

/// Runs `job` whenever this process holds the session-level advisory lock
/// `lock`, taken on a connection of its own (not the pool's, which would
/// hand it to other work). Never returns: the job is restarted after a
/// lost lock and retaken lock; it is cancelled (dropped) as soon as the lock
/// connection fails, since another replica may lead from then on.
pub async fn lead<F, Fut>(pool: PgPool, lock: &str, check_every: Duration, mut job: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = ()>,
{
    loop {
        match LeaderLock::try_take(&pool, lock).await {
            Ok(Some(mut held)) => {
                tracing::info!(lock, "leading: this replica runs the background jobs");
                let running = job();
                tokio::pin!(running);
                let mut check = tokio::time::interval(check_every);
                loop {
                    tokio::select! {
                        () = &mut running => {
                            tracing::warn!(lock, "background jobs ended; restarting them");
                            break;
                        }
                        _ = check.tick() => {
                            if let Err(error) = held.alive().await {
                                tracing::warn!(%error, lock, "lost the leader lock connection; stopping the jobs");
                                break;
                            }
                        }
                    }
                }
                drop(held);
            }
            Ok(None) => {}
            Err(error) => tracing::warn!(%error, lock, "cannot try the leader lock; retrying"),
        }
        tokio::time::sleep(check_every).await;
    }
}

/// Everything the background jobs need.
#[derive(Debug, Clone)]
pub struct Jobs {
    pub pool: PgPool,
    pub actions: ActionLog,
    pub knowledge: KnowledgeBase,
    pub session_timeout: Duration,
    pub sweep_interval: Duration,
    pub retention_interval: Duration,
    pub watch: WatchConfig,
    pub watch_stats: Arc<WatchStats>,
    pub auto_drafts: AutoDraftsConfig,
    pub reports: Reports,
    pub reports_interval: Duration,
    /// Changes older than this leave the knowledge change feed.
    pub knowledge_feed_retention: Duration,
    /// Re-mines the patterns of projects with new occurrences.
    pub qa: QaLearning,
}

impl Jobs {
    /// The jobs of `config` over the server's services.
    pub fn new(config: &Config, pool: PgPool, services: &Services) -> Self {
        let seconds = Duration::from_secs;
        Self {
            pool,
            actions: services.actions.clone(),
            knowledge: services.knowledge.clone(),
            session_timeout: seconds(config.actions.session_timeout_secs),
            sweep_interval: seconds(config.actions.sweep_interval_secs),
            retention_interval: seconds(config.retention.interval_secs),
            watch: config.knowledge.watch.clone(),
            watch_stats: Default::default(),
            auto_drafts: config.knowledge.auto_drafts.clone(),
            reports: services.reports.clone(),
            reports_interval: seconds(config.reports.interval_secs.max(1)),
            knowledge_feed_retention: seconds(config.knowledge.keyword_index.feed_retention_secs),
            qa: services.qa.clone(),
        }
    }

    /// Runs every job until the future is dropped.
    pub async fn run(&self) {
        tokio::join!(
            session_sweep(&self.actions, self.session_timeout, self.sweep_interval),
            retention(&self.actions, self.retention_interval),
            watch_folders(&self.knowledge, &self.watch, &self.watch_stats),
            auto_drafts(&self.knowledge, &self.auto_drafts),
            scheduled_reports(&self.reports, self.reports_interval),
            prune_knowledge_feed(&self.knowledge, self.knowledge_feed_retention),
            remine(&self.qa),
        );
    }
}

/// Every `qa.remine_interval_secs`, re-mines the patterns of every project
/// with an occurrence since the last round (the first round: since one
/// interval ago). A failing project is logged and tried again next round.
async fn remine(qa: &QaLearning) {
    let seconds = qa.config().remine_interval_secs;
    if seconds == 0 {
        return;
    }
    let interval = Duration::from_secs(seconds);
    let mut ticker = tokio::time::interval(interval);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    ticker.tick().await;
    let mut since = Utc::now() - interval;
    loop {
        ticker.tick().await;
        let round = Utc::now();
        let projects = match qa.projects_to_remine(since).await {
            Ok(projects) => projects,
            Err(error) => {
                tracing::warn!(%error, "cannot list the projects to re-mine; trying next round");
                continue;
            }
        };
        if !qa.switches().learning() {
            since = round;
            continue;
        }
        for project in projects {
            let scope = lore_types::scope::ProjectScope::All;
            if let Err(error) = qa.remine(&scope, &project, qa.config().remine_window).await {
                tracing::warn!(%error, project, "re-mining failed; trying next round");
            }
        }
        since = round;
    }
}

/// Every `interval`, marks sessions silent for longer than `timeout` as
/// disconnected.
async fn session_sweep(log: &ActionLog, timeout: Duration, interval: Duration) {
    let mut ticker = tokio::time::interval(interval);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticker.tick().await;
        let silent_since = Utc::now() - timeout;
        match log.disconnect_silent_sessions(silent_since).await {
            Ok(0) => {}
            Ok(count) => tracing::info!(count, "marked silent sessions disconnected"),
            Err(error) => tracing::warn!(%error, "session sweep failed"),
        }
    }
}

/// Every `interval` (first right away), applies the retention policy; a
/// zero interval leaves it to RunRetention.
async fn retention(log: &ActionLog, interval: Duration) {
    if interval.is_zero() {
        return std::future::pending().await;
    }
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
}

/// Every `interval_secs`, drafts the lessons of what happened (epics
/// completed, validations failing, failures fixed).
async fn auto_drafts(knowledge: &KnowledgeBase, config: &AutoDraftsConfig) {
    if !config.enabled {
        return std::future::pending().await;
    }
    let mut ticker = tokio::time::interval(Duration::from_secs(config.interval_secs.max(1)));
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticker.tick().await;
        match knowledge.draft_what_happened(config, Utc::now()).await {
            Ok(drafted) if drafted.is_empty() => {}
            Ok(drafted) => tracing::info!(count = drafted.len(), "lessons drafted; they wait for review"),
            Err(error) => tracing::warn!(%error, "drafting lessons failed; retrying later"),
        }
    }
}

/// Every `interval`, stores the daily and weekly reports that are due. The
/// first look waits one interval too: a leader that just took over (or a
/// server just started) stores nothing while the last writes of the day
/// may still be arriving from spools.
async fn scheduled_reports(reports: &Reports, interval: Duration) {
    let mut ticker = tokio::time::interval_at(tokio::time::Instant::now() + interval, interval);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticker.tick().await;
        match reports.write_due(Utc::now()).await {
            Ok(written) => {
                for title in written.stored {
                    tracing::info!(title, "report stored");
                }
                for path in written.exported {
                    tracing::info!(path = %path.display(), "report exported");
                }
            }
            Err(error) => tracing::warn!(%error, "writing the reports failed; retrying later"),
        }
    }
}

/// Every hour, removes the knowledge changes every replica has long read.
async fn prune_knowledge_feed(knowledge: &KnowledgeBase, retention: Duration) {
    let mut ticker = tokio::time::interval(Duration::from_secs(3600));
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticker.tick().await;
        match knowledge.prune_changes(retention).await {
            Ok(0) => {}
            Ok(count) => tracing::info!(count, "knowledge feed pruned"),
            Err(error) => tracing::warn!(%error, "pruning the knowledge feed failed; retrying later"),
        }
    }
}

/// Keeps the watched folders indexed; a failure to start watching (a
/// folder that cannot be created) is retried every minute.
async fn watch_folders(knowledge: &KnowledgeBase, config: &WatchConfig, stats: &Arc<WatchStats>) {
    if config.folders.is_empty() {
        return std::future::pending().await;
    }
    loop {
        if let Err(error) = watch::watch(knowledge.clone(), config.clone(), Arc::clone(stats)).await {
            tracing::error!(%error, "watching folders failed; retrying in a minute");
        }
        tokio::time::sleep(Duration::from_secs(60)).await;
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;
    use lore_pgtest::TestDatabase;

    const CHECK: Duration = Duration::from_millis(100);

    /// A replica: a `lead` loop whose job marks the replica as running
    /// while it runs.
    fn replica(
        pool: &PgPool,
        name: &'static str,
        running: &Arc<Mutex<Vec<&'static str>>>,
    ) -> tokio::task::JoinHandle<()> {
        let (pool, running) = (pool.clone(), Arc::clone(running));
        tokio::spawn(async move {
            lead(pool, "lore.test.jobs", CHECK, || {
                let running = Arc::clone(&running);
                async move {
                    struct Running(Arc<Mutex<Vec<&'static str>>>, &'static str);
                    impl Drop for Running {
                        fn drop(&mut self) {
                            self.0.lock().unwrap().retain(|name| *name != self.1);
                        }
                    }
                    running.lock().unwrap().push(name);
                    let _running = Running(running, name);
                    std::future::pending::<()>().await
                }
            })
            .await
        })
    }

    async fn wait_until_running(running: &Arc<Mutex<Vec<&'static str>>>, expected: &[&str]) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
        while running.lock().unwrap().as_slice() != expected {
            assert!(tokio::time::Instant::now() < deadline, "running {:?}, expected {expected:?}", running.lock());
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    #[tokio::test]
    async fn one_replica_leads_and_another_takes_over_when_its_lock_connection_dies() {
        let database = TestDatabase::new().await.unwrap();
        let running = Arc::new(Mutex::new(Vec::new()));
        let first = replica(&database.pool, "first", &running);
        wait_until_running(&running, &["first"]).await;
        let second = replica(&database.pool, "second", &running);
        tokio::time::sleep(CHECK * 10).await;
        assert_eq!(running.lock().unwrap().as_slice(), ["first"], "the second replica waits");

        // The leader's lock connection is cut (the replica lives on): it
        // stops its jobs, and the other replica leads.
        sqlx::query(
            "SELECT pg_terminate_backend(pid) FROM pg_locks
             WHERE locktype = 'advisory' AND objid = (hashtextextended('lore.test.jobs', 0) & 4294967295)::oid",
        )
        .execute(&database.pool)
        .await
        .unwrap();
        wait_until_running(&running, &["second"]).await;

        // The new leader dies: the first replica takes over again.
        second.abort();
        let _ = second.await;
        wait_until_running(&running, &["first"]).await;
        first.abort();
    }
}
