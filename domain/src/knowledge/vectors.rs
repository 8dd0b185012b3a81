//! Vectors of entries and of queries.
//!
//! # Entries: a queue drained on every replica
//! A write queues its entry in `knowledge_embedding_jobs` in its own
//! transaction and returns; it never waits for the model. Every replica runs
//! a drainer, woken by its own writes and every few seconds for the rest
//! (another replica's writes, retries, a model change), that:
//! - claims a batch of due jobs with a lease (a short statement of its own,
//!   so no transaction stays open while the model runs, and a replica that
//!   dies mid-batch only delays its jobs by the lease);
//! - embeds the batch (the local model spreads it over every core);
//! - stores the vectors while the model already embeds the next batch, and
//!   removes each job only if its entry still has the text that was
//!   embedded (an entry edited meanwhile keeps its job and is embedded
//!   again).
//!
//! # Queries: a cache
//! The same question is asked again and again (briefings at each prompt,
//! agents retrying); its vector is kept, per model, in a small LRU.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use hashlink::LruCache;
use sqlx::PgPool;
use tokio::sync::Notify;

use super::embed::Embedder;
use crate::Error;
use lore_store::knowledge::embeddings;

/// How long a claimed job stays with its replica before another may take
/// it: far longer than a batch takes, short enough that a crash costs
/// little.
const LEASE: Duration = Duration::from_secs(120);
/// Other replicas' jobs and retries are looked for this often.
const POLL: Duration = Duration::from_secs(5);
/// Query vectors kept per replica (384 floats each: about 6 MB).
const QUERY_CACHE_ENTRIES: usize = 4096;
/// After a wake-up, writes are gathered while they keep coming (each within
/// this long of the last, for at most [`GATHER_AT_MOST`]): a bulk indexer's
/// next documents arrive within milliseconds, and one batch of many texts
/// of similar length keeps every core busy where a few texts cannot. On a
/// small machine the writes and the model compete for the same cores, so
/// embedding between writes gains nothing.
const GATHER: Duration = Duration::from_millis(50);
const GATHER_AT_MOST: Duration = Duration::from_secs(1);

/// The queue of entries waiting for a vector, as one replica sees it.
#[derive(Debug)]
pub struct EmbeddingQueue {
    pool: PgPool,
    embedder: Arc<dyn Embedder>,
    batch: i64,
    wake: Notify,
}

impl EmbeddingQueue {
    pub fn new(pool: PgPool, embedder: Arc<dyn Embedder>, batch: usize) -> Self {
        Self { pool, embedder, batch: batch.max(1) as i64, wake: Notify::new() }
    }

    /// Asks the drainer to look now (after a write queued an entry).
    pub fn wake(&self) {
        self.wake.notify_one();
    }

    /// Embeds every due job; returns how many entries got their vector. A
    /// provider failure puts the batch back with a growing delay and ends
    /// the drain.
    pub async fn drain(&self) -> Result<usize, Error> {
        let model = self.embedder.model().to_owned();
        let mut embedded = 0;
        let mut storing: Option<tokio::task::JoinHandle<Result<usize, Error>>> = None;
        loop {
            let jobs = embeddings::claim(&self.pool, &model, self.batch, LEASE).await?;
            if jobs.is_empty() {
                break;
            }
            let texts: Vec<String> = jobs.iter().map(|job| job.text.clone()).collect();
            let vectors = match self.embedder.embed(&texts).await {
                Ok(vectors) => vectors,
                Err(error) => {
                    embeddings::fail(&self.pool, &model, &jobs, &error.to_string()).await?;
                    if let Some(previous) = storing.take() {
                        joined(previous).await?;
                    }
                    return Err(Error::Unavailable(error.to_string()));
                }
            };
            // The previous batch's vectors were written while this one was
            // embedded; wait for them before writing the next.
            if let Some(previous) = storing.take() {
                embedded += joined(previous).await?;
            }
            let (pool, model) = (self.pool.clone(), model.clone());
            storing = Some(tokio::spawn(async move {
                let stored = embeddings::store(&pool, &model, &jobs, &vectors).await;
                if let Err(error) = &stored {
                    embeddings::fail(&pool, &model, &jobs, &error.to_string()).await?;
                }
                stored.map(|()| jobs.len())
            }));
        }
        if let Some(previous) = storing {
            embedded += joined(previous).await?;
        }
        Ok(embedded)
    }

    /// Drains whenever woken, and every few seconds, until the returned
    /// task is aborted.
    pub fn start(self: &Arc<Self>) -> tokio::task::JoinHandle<()> {
        let queue = Arc::clone(self);
        tokio::spawn(async move {
            loop {
                match queue.drain().await {
                    Ok(0) => {}
                    Ok(count) => tracing::debug!(count, "entries embedded"),
                    Err(error) => tracing::warn!(%error, "embedding queued entries failed; retrying later"),
                }
                if tokio::time::timeout(POLL, queue.wake.notified()).await.is_ok() {
                    let until = tokio::time::Instant::now() + GATHER_AT_MOST;
                    while tokio::time::Instant::now() < until
                        && tokio::time::timeout(GATHER, queue.wake.notified()).await.is_ok()
                    {}
                }
            }
        })
    }
}

async fn joined(task: tokio::task::JoinHandle<Result<usize, Error>>) -> Result<usize, Error> {
    task.await.map_err(|error| Error::Unavailable(format!("storing vectors failed: {error}")))?
}

/// A query as the cache knows it: the model, then the text.
type QueryKey = (String, String);

/// Query vectors by model and text.
#[derive(Debug)]
pub struct QueryCache(Mutex<LruCache<QueryKey, Arc<[f32]>>>);

impl Default for QueryCache {
    fn default() -> Self {
        Self(Mutex::new(LruCache::new(QUERY_CACHE_ENTRIES)))
    }
}

impl QueryCache {
    pub fn get(&self, model: &str, text: &str) -> Option<Arc<[f32]>> {
        self.0.lock().expect("query cache lock").get(&(model.to_owned(), text.to_owned())).cloned()
    }

    pub fn put(&self, model: &str, text: &str, vector: Arc<[f32]>) {
        self.0.lock().expect("query cache lock").insert((model.to_owned(), text.to_owned()), vector);
    }
}
