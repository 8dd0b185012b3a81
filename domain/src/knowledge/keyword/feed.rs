//! Keeps a replica's keyword index in step with PostgreSQL: a rebuild from
//! `knowledge_entries` at start, then the change feed (migration 0016),
//! read whenever `lore_knowledge` is notified, after every write this
//! replica makes, and every few seconds in case a notification was lost.
//!
//! Applying a change means reading the entry as it is now, so changes may
//! be applied more than once and in any order. The cursor only moves past
//! transactions that are over (below the snapshot's xmin): a change of a
//! transaction that commits later with a smaller id is never skipped, and
//! those read ahead of the cursor are remembered so they are not applied
//! again on every read.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use sqlx::PgPool;
use sqlx::postgres::PgListener;
use uuid::Uuid;

use super::KeywordIndex;
use crate::Error;
use lore_store::knowledge::changes::{self as store, Change, Cursor};

/// Changes read per round trip.
const PAGE: i64 = 5000;
/// Entries read per round trip of a rebuild.
const REBUILD_PAGE: i64 = 2000;
/// The feed is read this often even when no notification came.
const POLL: Duration = Duration::from_secs(2);
const RECONNECT_DELAY: Duration = Duration::from_secs(1);

/// Something that wants to know which projects' knowledge changed (the
/// SearchMany cache). `None`: every project.
pub trait ChangeObserver: Send + Sync + std::fmt::Debug {
    fn changed(&self, project: Option<&str>);
}

#[derive(Debug, Default)]
struct Position {
    /// Every change at or before this is applied.
    cursor: Cursor,
    /// Changes after the cursor already applied (their transactions were
    /// still running elsewhere when they were read).
    applied_ahead: BTreeSet<Cursor>,
}

/// One replica's feed into its keyword index.
#[derive(Debug)]
pub struct Feed {
    pool: PgPool,
    index: Arc<KeywordIndex>,
    observer: Arc<dyn ChangeObserver>,
    position: tokio::sync::Mutex<Position>,
    /// The primary's WAL position of the last read applied: the index holds
    /// every change committed before it.
    applied: std::sync::atomic::AtomicU64,
    wake: tokio::sync::Notify,
}

impl Feed {
    pub fn new(pool: PgPool, index: Arc<KeywordIndex>, observer: Arc<dyn ChangeObserver>) -> Self {
        Self {
            pool,
            index,
            observer,
            position: Default::default(),
            applied: Default::default(),
            wake: Default::default(),
        }
    }

    /// The primary's WAL position up to which the index holds every change.
    pub fn position(&self) -> u64 {
        self.applied.load(std::sync::atomic::Ordering::Acquire)
    }

    /// Reads every entry as of now into an empty index and marks it ready;
    /// the feed then follows from that snapshot.
    pub async fn rebuild(&self) -> Result<u64, Error> {
        let mut position = self.position.lock().await;
        let index = Arc::clone(&self.index);
        tokio::task::spawn_blocking(move || index.clear()).await.map_err(joined)??;
        let mut transaction = store::begin_snapshot(&self.pool).await?;
        let (horizon, wal_position) = store::snapshot_horizon(&mut transaction).await?;
        let mut after = None;
        let mut loaded = 0u64;
        loop {
            let page = store::every_entry_page(&mut transaction, after, REBUILD_PAGE).await?;
            let Some(last) = page.last() else { break };
            after = Some(last.entry_id);
            loaded += page.len() as u64;
            let index = Arc::clone(&self.index);
            tokio::task::spawn_blocking(move || index.apply(&[], &page)).await.map_err(joined)??;
        }
        transaction.commit().await?;
        *position = Position { cursor: horizon, applied_ahead: BTreeSet::new() };
        self.applied.store(wal_position, std::sync::atomic::Ordering::Release);
        self.index.ready();
        self.observer.changed(None);
        Ok(loaded)
    }

    /// Applies every change committed so far; returns how many entries were
    /// indexed again. After this returns, the index holds every write that
    /// committed before it was called.
    pub async fn catch_up(&self) -> Result<usize, Error> {
        if !self.index.is_ready() {
            return Ok(0);
        }
        let mut position = self.position.lock().await;
        if let Some(pruned) = store::pruned_through(&self.pool).await?
            && pruned > position.cursor
        {
            drop(position);
            tracing::warn!("the knowledge feed was pruned past this replica's position; rebuilding the keyword index");
            return self.rebuild().await.map(|loaded| loaded as usize);
        }
        let mut read_from = position.cursor;
        let mut indexed = 0;
        loop {
            let read = store::since(&self.pool, read_from, PAGE).await?;
            let (changes, horizon) = (read.changes, read.horizon);
            let Some(last) = changes.last() else {
                self.applied.fetch_max(read.position, std::sync::atomic::Ordering::AcqRel);
                break;
            };
            let fresh: Vec<&Change> =
                changes.iter().filter(|change| !position.applied_ahead.contains(&change.at)).collect();
            indexed += self.apply(&fresh).await?;
            // Read from the cursor, the changes of transactions that are over
            // come first and are all there: the cursor moves over them. From
            // the first change of a transaction still running (which others
            // may still precede once it commits), the rest is remembered as
            // applied, and read again from the cursor next time.
            let mut advancing = read_from == position.cursor;
            for change in &changes {
                if advancing && change.at.txid < horizon {
                    position.cursor = change.at;
                    position.applied_ahead.remove(&change.at);
                } else {
                    advancing = false;
                    position.applied_ahead.insert(change.at);
                }
            }
            read_from = last.at;
            if (changes.len() as i64) < PAGE {
                self.applied.fetch_max(read.position, std::sync::atomic::Ordering::AcqRel);
                break;
            }
        }
        Ok(indexed)
    }

    async fn apply(&self, changes: &[&Change]) -> Result<usize, Error> {
        let mut ids: Vec<Uuid> = changes.iter().filter_map(|change| change.entry_id).collect();
        ids.sort_unstable();
        ids.dedup();
        for change in changes {
            self.observer.changed(change.project.as_deref());
        }
        if ids.is_empty() {
            return Ok(0);
        }
        let entries = store::entries(&self.pool, &ids).await?;
        let count = ids.len();
        let index = Arc::clone(&self.index);
        tokio::task::spawn_blocking(move || index.apply(&ids, &entries)).await.map_err(joined)??;
        Ok(count)
    }

    /// Asks the follower to read the feed now.
    pub fn wake(&self) {
        self.wake.notify_one();
    }

    /// Rebuilds, then follows the feed until the returned task is aborted.
    pub fn start(self: &Arc<Self>) -> tokio::task::JoinHandle<()> {
        let feed = Arc::clone(self);
        tokio::spawn(async move {
            loop {
                match feed.rebuild().await {
                    Ok(loaded) => {
                        tracing::info!(entries = loaded, "keyword index built");
                        break;
                    }
                    Err(error) => tracing::warn!(%error, "building the keyword index failed; retrying"),
                }
                tokio::time::sleep(RECONNECT_DELAY).await;
            }
            tokio::join!(feed.listen(), feed.follow());
        })
    }

    /// Reads the feed whenever woken, and every few seconds.
    async fn follow(&self) {
        loop {
            if let Err(error) = self.catch_up().await {
                tracing::warn!(%error, "reading the knowledge feed failed; retrying");
            }
            let _ = tokio::time::timeout(POLL, self.wake.notified()).await;
        }
    }

    /// Wakes the follower on every notification of the channel.
    async fn listen(&self) {
        loop {
            let listening = async {
                let mut listener = PgListener::connect_with(&self.pool).await?;
                listener.listen(store::CHANNEL).await?;
                loop {
                    // A lost connection may have lost notifications too.
                    self.wake();
                    listener.try_recv().await?;
                }
            };
            let result: Result<(), sqlx::Error> = listening.await;
            if let Err(error) = result {
                tracing::warn!(%error, "the knowledge feed listener lost its connection; reconnecting");
            }
            tokio::time::sleep(RECONNECT_DELAY).await;
        }
    }
}

fn joined(error: tokio::task::JoinError) -> Error {
    Error::Unavailable(format!("the keyword index task failed: {error}"))
}

impl crate::knowledge::KnowledgeBase {
    /// Removes the changes older than `older_than`, which every replica has
    /// long read (the leader does this hourly); how many.
    pub async fn prune_changes(&self, older_than: Duration) -> Result<u64, Error> {
        store::prune(&self.pool, older_than).await
    }
}

#[cfg(test)]
mod tests {
    use crate::knowledge::keyword::analysis;
    use std::sync::Mutex;

    use sqlx::Connection as _;

    use super::*;
    use lore_pgtest::TestDatabase;
    use lore_store::knowledge::search::SearchFilter;

    #[derive(Debug, Default)]
    struct Seen(Mutex<Vec<Option<String>>>);

    impl ChangeObserver for Seen {
        fn changed(&self, project: Option<&str>) {
            self.0.lock().unwrap().push(project.map(str::to_owned));
        }
    }

    /// Each entry goes to a project named after its word, so the observer
    /// tells how often each entry's change was applied.
    async fn insert(connection: &mut sqlx::PgConnection, word: &str) {
        sqlx::query("INSERT INTO projects (name) VALUES ($1) ON CONFLICT DO NOTHING")
            .bind(word)
            .execute(&mut *connection)
            .await
            .unwrap();
        sqlx::query("INSERT INTO knowledge_entries (entry_id, project, kind, title) VALUES ($1, $2, 'learning', $3)")
            .bind(Uuid::now_v7())
            .bind(word)
            .bind(format!("{word} was here"))
            .execute(connection)
            .await
            .unwrap();
    }

    fn found(index: &KeywordIndex, word: &str) -> usize {
        let filter = SearchFilter { project: word.into(), ..SearchFilter::default() };
        index.keyword(&filter, &analysis::expand(word, &[]), 10).unwrap().candidates.len()
    }

    impl Seen {
        fn applied(&self, project: &str) -> usize {
            self.0.lock().unwrap().iter().filter(|seen| seen.as_deref() == Some(project)).count()
        }
    }

    // Other tests share the cluster, so a transaction of theirs may be
    // running at any read: the horizon may lag, and a change the rebuild
    // already read may be applied once more. That is harmless (an entry is
    // read as it is now); what must hold is that no change is skipped and
    // none read ahead of the cursor is applied twice.
    #[tokio::test]
    async fn a_transaction_that_commits_after_a_younger_one_is_not_skipped() {
        let database = TestDatabase::new().await.unwrap();
        let mut before = database.pool.acquire().await.unwrap();
        insert(&mut before, "zebra").await;
        let index = Arc::new(KeywordIndex::new().unwrap());
        let seen = Arc::new(Seen::default());
        let feed = Feed::new(database.pool.clone(), Arc::clone(&index), seen.clone());
        assert_eq!(feed.rebuild().await.unwrap(), 1);
        assert_eq!(found(&index, "zebra"), 1);

        // The older transaction takes its id first and commits last.
        let mut older = sqlx::PgConnection::connect(&database.url).await.unwrap();
        let mut older = older.begin().await.unwrap();
        insert(&mut older, "okapi").await;
        let mut younger = database.pool.acquire().await.unwrap();
        insert(&mut younger, "ibex").await;
        feed.catch_up().await.unwrap();
        assert_eq!((found(&index, "ibex"), found(&index, "okapi")), (1, 0));
        assert_eq!((seen.applied("ibex"), seen.applied("okapi")), (1, 0));
        older.commit().await.unwrap();
        feed.catch_up().await.unwrap();
        assert_eq!((found(&index, "ibex"), found(&index, "okapi")), (1, 1));
        assert_eq!((seen.applied("ibex"), seen.applied("okapi")), (1, 1), "the younger one is not applied twice");
        assert_eq!(feed.catch_up().await.unwrap(), 0, "everything read is behind the cursor or remembered");
        assert!(seen.applied("zebra") <= 1, "a change the rebuild read is applied at most once more");

        // Removed, and a change of the project as a whole.
        let zebra_before = seen.applied("zebra");
        sqlx::query("DELETE FROM knowledge_entries WHERE project = 'zebra'").execute(&database.pool).await.unwrap();
        sqlx::query("INSERT INTO knowledge_synonyms (project, term, expansion) VALUES ('ibex', 'ibx', 'ibex')")
            .execute(&database.pool)
            .await
            .unwrap();
        feed.catch_up().await.unwrap();
        assert_eq!(found(&index, "zebra"), 0);
        assert_eq!(seen.applied("zebra"), zebra_before + 1, "the removal, once");
        assert_eq!(seen.applied("ibex"), 2, "the entry and the synonym, each once");
        assert_eq!(seen.applied("okapi"), 1);

        // A replica that fell behind what was pruned builds again.
        sqlx::query("UPDATE knowledge_changes SET changed_at = now() - interval '2 days'")
            .execute(&database.pool)
            .await
            .unwrap();
        insert(&mut younger, "quagga").await;
        sqlx::query("UPDATE knowledge_changes SET changed_at = now() - interval '2 days'")
            .execute(&database.pool)
            .await
            .unwrap();
        // Only changes of transactions over everywhere in the cluster go, and
        // another test's transaction may hold the horizon back for a while.
        let mut pruned = 0;
        for _ in 0..300 {
            pruned += store::prune(&database.pool, Duration::from_secs(3600)).await.unwrap();
            if pruned > 0 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert!(pruned >= 1, "nothing was pruned");
        feed.catch_up().await.unwrap();
        assert_eq!((found(&index, "quagga"), found(&index, "okapi")), (1, 1));
        assert_eq!(index.len(), 3);
    }
}
