//! KnowledgeService's domain: entries (issue patterns, learnings,
//! retrospectives, gotchas), their solutions and how well they work.
//!
//! # Layout
//! - [`model`]: the domain types.
//! - [`embed`]: the embedding providers.
//! - [`document`]: markdown documents parsed; `indexing`: stored as
//!   entries (IndexDocument, RemoveDocument, the folder watcher).
//! - [`drafts`]: learnings drafted from the action log, and their review.
//! - [`search`]: hybrid search; [`rank`]: its fusion and scoring.
//! - [`watch`]: watched folders of markdown, kept indexed.
//! - The SQL is in [`crate::store::knowledge`], [`crate::store::knowledge_search`]
//!   and [`crate::store::embeddings`].
//!
//! Indexing is parse, embed, store: an upsert queues the entry for
//! embedding in its own transaction when the text changed, then embeds that
//! entry right away; what fails stays queued and the background worker
//! retries it with backoff. Writing never calls an LLM.

pub mod auto_drafts;
pub mod document;
pub mod drafts;
pub mod embed;
mod indexing;
pub mod model;
pub mod rank;
pub mod search;
pub mod watch;

use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use sqlx::PgPool;
use uuid::Uuid;

use crate::Error;
use crate::actions::query::Position;
use crate::scope::ProjectScope;
use crate::store::embeddings;
use crate::store::knowledge as store;
use embed::{Embedder, EmbeddingConfig};
use model::{Application, Effectiveness, Entry, EntryFilter, NewEntry, NewOccurrence};
use rank::RankingConfig;

/// `[knowledge]` configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
pub struct KnowledgeConfig {
    pub embedding: EmbeddingConfig,
    pub search: RankingConfig,
    pub watch: watch::WatchConfig,
    pub auto_drafts: auto_drafts::AutoDraftsConfig,
}

/// How long a query waits for its embedding before searching without it.
const QUERY_EMBEDDING_TIMEOUT: Duration = Duration::from_secs(2);
/// Entries embedded per provider call when indexing.
const INDEX_BATCH: i64 = 32;

/// An entry with what GetEntry adds to it.
#[derive(Debug, Clone, PartialEq)]
pub struct EntryReport {
    pub entry: Entry,
    /// Newest first.
    pub history: Vec<Application>,
    pub effectiveness: Effectiveness,
}

/// The knowledge base of every project, over PostgreSQL.
#[derive(Debug, Clone)]
pub struct KnowledgeBase {
    pool: PgPool,
    embedder: Option<Arc<dyn Embedder>>,
    ranking: RankingConfig,
    query_embedding_timeout: Duration,
    /// Watched folders that receive approved drafts.
    publish_folders: Arc<Vec<watch::WatchedFolder>>,
    /// Files Lore itself wrote, which the watcher leaves alone.
    own_writes: Arc<watch::OwnWrites>,
}

impl KnowledgeBase {
    /// Without an embedder search is keyword-only (and says so).
    pub fn new(pool: PgPool, embedder: Option<Arc<dyn Embedder>>, ranking: RankingConfig) -> Self {
        Self {
            pool,
            embedder,
            ranking,
            query_embedding_timeout: QUERY_EMBEDDING_TIMEOUT,
            publish_folders: Arc::default(),
            own_writes: Arc::default(),
        }
    }

    /// Where Lore records the files it writes itself (standing
    /// instructions), so that the watcher does not act on them.
    pub fn own_writes(&self) -> &watch::OwnWrites {
        &self.own_writes
    }

    /// Approved drafts of a folder's project are written into the folders
    /// marked `publish`.
    pub fn with_watch_config(mut self, watch: &watch::WatchConfig) -> Self {
        self.publish_folders = Arc::new(watch.folders.iter().filter(|folder| folder.publish).cloned().collect());
        self
    }

    pub fn embedder(&self) -> Option<&Arc<dyn Embedder>> {
        self.embedder.as_ref()
    }

    /// Registers the embedding model and queues the entries it has no
    /// current vector for (all of them after a model change).
    pub async fn prepare(&self) -> Result<u64, Error> {
        let Some(embedder) = &self.embedder else { return Ok(0) };
        let provider = format!("{:?}", embedder.provider()).to_lowercase();
        let queued = embeddings::register_model(&self.pool, embedder.model(), &provider, embedder.dimensions()).await?;
        if queued > 0 {
            tracing::info!(queued, model = embedder.model(), "entries queued for embedding");
        }
        Ok(queued)
    }

    /// Creates or replaces an entry; returns it and whether it was created.
    /// Its vector is computed right after; if that fails, the background
    /// worker retries.
    pub async fn upsert(&self, scope: &ProjectScope, entry: &NewEntry) -> Result<(Entry, bool), Error> {
        let model = self.embedder.as_ref().map(|embedder| embedder.model().to_owned());
        let stored = store::upsert(&self.pool, scope, entry, &content_hash(entry), model.as_deref()).await?;
        self.embed_now(stored.0.entry_id).await;
        Ok(stored)
    }

    /// [`Self::upsert`] inside the caller's transaction (another service's
    /// write that must commit or fail with the entry). Call
    /// [`Self::embed_now`] after the commit.
    pub(crate) async fn upsert_in(
        &self,
        transaction: &mut sqlx::PgConnection,
        scope: &ProjectScope,
        entry: &NewEntry,
    ) -> Result<(Entry, bool), Error> {
        let model = self.embedder.as_ref().map(|embedder| embedder.model().to_owned());
        store::upsert_in(transaction, scope, entry, &content_hash(entry), model.as_deref()).await
    }

    /// Embeds a just-written entry. Only this entry: a backlog (a model
    /// change) is the worker's, not this call's latency. A failure is left
    /// queued for the worker to retry.
    pub(crate) async fn embed_now(&self, entry_id: Uuid) {
        if let Err(error) = self.index_batch(Some(entry_id)).await {
            tracing::warn!(%error, %entry_id, "embedding after a write failed; the background worker retries");
        }
    }

    /// Embeds every due queued entry; returns how many were embedded.
    pub async fn index_pending(&self) -> Result<usize, Error> {
        let mut embedded = 0;
        loop {
            match self.index_batch(None).await? {
                0 => return Ok(embedded),
                count => embedded += count,
            }
        }
    }

    /// Embeds one batch of due jobs (only `entry_id`'s when given); returns
    /// how many were embedded. A provider failure puts the batch back with
    /// a delay.
    async fn index_batch(&self, entry_id: Option<Uuid>) -> Result<usize, Error> {
        let Some(embedder) = &self.embedder else { return Ok(0) };
        let mut transaction = self.pool.begin().await?;
        let jobs = embeddings::claim(&mut transaction, embedder.model(), entry_id, INDEX_BATCH).await?;
        if jobs.is_empty() {
            transaction.commit().await?;
            return Ok(0);
        }
        let texts: Vec<String> = jobs.iter().map(|job| job.text.clone()).collect();
        match embedder.embed(&texts).await {
            Ok(vectors) => {
                embeddings::store(&mut transaction, embedder.model(), &jobs, &vectors).await?;
                transaction.commit().await?;
                Ok(jobs.len())
            }
            Err(error) => {
                embeddings::fail(&mut transaction, embedder.model(), &jobs, &error.to_string()).await?;
                transaction.commit().await?;
                Err(Error::Unavailable(error.to_string()))
            }
        }
    }

    /// Entries waiting for a vector of the current model.
    pub async fn pending_embeddings(&self) -> Result<i64, Error> {
        match &self.embedder {
            Some(embedder) => embeddings::pending(&self.pool, embedder.model()).await,
            None => Ok(0),
        }
    }

    pub async fn get(&self, scope: &ProjectScope, entry_id: Uuid, history_limit: i64) -> Result<EntryReport, Error> {
        let entry = store::get(&self.pool, scope, entry_id).await?;
        self.report(entry, history_limit).await
    }

    pub async fn get_by_key(
        &self,
        scope: &ProjectScope,
        project: &str,
        key: &str,
        history_limit: i64,
    ) -> Result<EntryReport, Error> {
        let entry = store::get_by_key(&self.pool, scope, project, key).await?;
        self.report(entry, history_limit).await
    }

    async fn report(&self, entry: Entry, history_limit: i64) -> Result<EntryReport, Error> {
        let history = store::history(&self.pool, entry.entry_id, history_limit).await?;
        let effectiveness = store::effectiveness(&self.pool, entry.entry_id).await?;
        Ok(EntryReport { entry, history, effectiveness })
    }

    pub async fn list(
        &self,
        scope: &ProjectScope,
        filter: &EntryFilter,
        limit: i64,
        after: Option<Position>,
    ) -> Result<Vec<Entry>, Error> {
        store::list(&self.pool, scope, filter, limit, after).await
    }

    pub async fn delete(&self, scope: &ProjectScope, entry_id: Uuid, purge: bool) -> Result<Option<Entry>, Error> {
        store::delete(&self.pool, scope, entry_id, purge).await
    }

    /// Returns the entry after the update and whether it was a replay.
    pub async fn record_occurrence(
        &self,
        scope: &ProjectScope,
        occurrence: &NewOccurrence,
    ) -> Result<(Entry, bool), Error> {
        store::record_occurrence(&self.pool, scope, occurrence).await
    }

    /// Returns the entry's effectiveness after and whether it was a replay.
    pub async fn record_application(
        &self,
        scope: &ProjectScope,
        application: &Application,
    ) -> Result<(Effectiveness, bool), Error> {
        let duplicate = store::record_application(&self.pool, scope, application).await?;
        Ok((store::effectiveness(&self.pool, application.entry_id).await?, duplicate))
    }
}

/// BLAKE3 of what search indexes of an entry: unchanged text is not
/// re-embedded.
pub fn content_hash(entry: &NewEntry) -> Vec<u8> {
    let mut hasher = blake3::Hasher::new();
    for part in [&entry.title, &entry.category, &entry.summary, &entry.body] {
        hasher.update(&(part.len() as u64).to_le_bytes());
        hasher.update(part.as_bytes());
    }
    for tag in &entry.tags {
        hasher.update(&(tag.len() as u64).to_le_bytes());
        hasher.update(tag.as_bytes());
    }
    hasher.finalize().as_bytes().to_vec()
}
