//! KnowledgeService's domain: entries (issue patterns, learnings,
//! retrospectives, gotchas), their solutions and how well they work.
//!
//! # Layout
//! - The domain types are `lore_types::knowledge`.
//! - [`embed`]: the embedding providers (lore-embed).
//! - [`document`]: markdown documents parsed; `indexing`: stored as
//!   entries (IndexDocument, RemoveDocument, the folder watcher).
//! - [`drafts`]: learnings drafted from the action log, and their review.
//! - [`search`]: hybrid search; [`rank`]: its fusion and scoring.
//! - [`watch`]: watched folders of markdown, kept indexed.
//! - The SQL is in [`lore_store::knowledge`], [`lore_store::knowledge::search`]
//!   and [`lore_store::knowledge::embeddings`].
//!
//! Indexing is parse, store, embed: an upsert queues the entry for
//! embedding in its own transaction when the text changed and returns; the
//! replica's drainer ([`vectors`]) embeds what is queued in batches of
//! similar length on every core, and retries failures with backoff. Writing
//! never waits for a model, and never calls an LLM.

pub mod auto_drafts;
pub mod document;
pub mod drafts;
pub use lore_embed as embed;
mod indexing;
pub mod keyword;
mod reviews;
pub mod search;
pub mod search_cache;
pub mod search_many;
mod supersession;
pub mod symptoms;
pub mod vectors;
pub mod vocabulary;
pub mod watch;

use crate::screening::Screening;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use sqlx::PgPool;
use uuid::Uuid;

use crate::Error;
use embed::{Embedder, EmbeddingConfig};
use lore_store::knowledge as store;
use lore_store::knowledge::embeddings;
use lore_store::replicas::ReadPools;
use lore_types::actions::query::Position;
use lore_types::knowledge::rank::RankingConfig;
use lore_types::knowledge::{self as types, Application, Effectiveness, Entry, EntryFilter, NewEntry, NewOccurrence};
use lore_types::scope::ProjectScope;

/// `[knowledge]` configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
pub struct KnowledgeConfig {
    pub embedding: EmbeddingConfig,
    pub search: RankingConfig,
    pub keyword_index: KeywordIndexConfig,
    pub watch: watch::WatchConfig,
    pub auto_drafts: auto_drafts::AutoDraftsConfig,
}

/// `[knowledge.keyword_index]`: the keyword index each replica keeps in
/// memory, fed by the change feed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct KeywordIndexConfig {
    /// Off: keyword search reads PostgreSQL's full text (slower at scale,
    /// no memory on the replica, no symptom signal).
    pub enabled: bool,
    /// Changes older than this leave the feed (the leader prunes); a replica
    /// that fell further behind rebuilds its index.
    pub feed_retention_secs: u64,
}

impl Default for KeywordIndexConfig {
    fn default() -> Self {
        Self { enabled: true, feed_retention_secs: 86_400 }
    }
}

/// How long a query waits for its embedding before searching without it.
const QUERY_EMBEDDING_TIMEOUT: Duration = Duration::from_secs(2);
/// How long SearchMany keeps an answer when nothing is written meanwhile.
const SEARCH_MANY_CACHE: Duration = Duration::from_secs(300);

/// An entry with what GetEntry adds to it.
#[derive(Debug, Clone, PartialEq)]
pub struct EntryReport {
    pub entry: Entry,
    /// Newest first.
    pub history: Vec<Application>,
    pub effectiveness: Effectiveness,
    /// The entries it superseded: id, key, title.
    pub superseded: Vec<(Uuid, Option<String>, String)>,
}

/// What GetIndexStatus answers.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexStatus {
    /// The embedding model; empty without one.
    pub model: String,
    pub embeddings: embeddings::ProjectStatus,
    /// The project's entries in this replica's keyword index; `None` while
    /// it is not built (or switched off).
    pub keyword_index: Option<u64>,
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
    /// Entries waiting for a vector; `None` without an embedder.
    embedding_queue: Option<Arc<vectors::EmbeddingQueue>>,
    /// This replica's keyword index and its feed; `None` when switched off.
    keyword: Option<(Arc<keyword::KeywordIndex>, Arc<keyword::feed::Feed>)>,
    /// SearchMany's answers, dropped by the feed on any write to a project.
    answers: Arc<search_cache::SearchCache<search::SearchOutcome>>,
    query_vectors: Arc<vectors::QueryCache>,
    /// The drainer, stopped when the last clone of this knowledge base goes.
    background: Arc<crate::background::Background>,
    /// Where searches read (a replica that holds what the keyword index
    /// holds, when there is one).
    reads: ReadPools,
    /// The injection screen with each project's own hosts; the QA and
    /// briefing services screen with the same one.
    screening: Screening,
}

impl KnowledgeBase {
    /// Without an embedder search is keyword-only (and says so).
    pub fn new(pool: PgPool, embedder: Option<Arc<dyn Embedder>>, ranking: RankingConfig) -> Self {
        let batch = EmbeddingConfig::default().batch_size;
        let answers = Arc::new(search_cache::SearchCache::new(SEARCH_MANY_CACHE));
        let keyword = match keyword::KeywordIndex::new() {
            Ok(index) => {
                let index = Arc::new(index);
                let feed = Arc::new(keyword::feed::Feed::new(pool.clone(), Arc::clone(&index), answers.clone()));
                Some((index, feed))
            }
            Err(error) => {
                tracing::error!(%error, "no keyword index: keyword search reads PostgreSQL");
                None
            }
        };
        Self {
            reads: ReadPools::primary_only(pool.clone()),
            embedding_queue: embedder
                .as_ref()
                .map(|embedder| Arc::new(vectors::EmbeddingQueue::new(pool.clone(), Arc::clone(embedder), batch))),
            keyword,
            answers,
            pool,
            embedder,
            ranking,
            query_embedding_timeout: QUERY_EMBEDDING_TIMEOUT,
            publish_folders: Arc::default(),
            own_writes: Arc::default(),
            query_vectors: Arc::default(),
            background: Arc::default(),
            screening: Screening::default(),
        }
    }

    /// Screens with each project's own hosts (`[trust]`).
    pub fn with_screening(mut self, screening: Screening) -> Self {
        self.screening = screening;
        self
    }

    /// The injection screen every service of this knowledge base screens
    /// with.
    pub fn screening(&self) -> &Screening {
        &self.screening
    }

    /// Searches read through `reads` (`database.read_urls`).
    pub fn with_reads(mut self, reads: ReadPools) -> Self {
        self.reads = reads;
        self
    }

    /// Where a search reads: a replica that has replayed at least what this
    /// replica's keyword index holds, so that both agree on which entries
    /// exist (else the primary); without the index, a replica within the
    /// allowed lag.
    pub(crate) async fn read_pool(&self) -> PgPool {
        match &self.keyword {
            Some((index, feed)) if index.is_ready() => self.reads.at_least(feed.position()).await,
            _ => self.reads.bounded(),
        }
    }

    /// Without the in-memory keyword index (`knowledge.keyword_index.enabled
    /// = false`): keyword search reads PostgreSQL's full text.
    pub fn without_keyword_index(mut self) -> Self {
        self.keyword = None;
        self
    }

    /// Waits until the keyword index is built (a test server answers as a
    /// long-running one does); at once without one.
    pub async fn keyword_index_built(&self) {
        let Some((index, _)) = &self.keyword else { return };
        let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
        while !index.is_ready() && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// The memory this replica's keyword index holds (while it is built
    /// too); `None` when it is switched off.
    pub fn keyword_index_bytes(&self) -> Option<u64> {
        self.keyword.as_ref().map(|(index, _)| index.bytes())
    }

    /// The keyword index, once it is built.
    pub(crate) fn keyword_index(&self) -> Option<&Arc<keyword::KeywordIndex>> {
        self.keyword.as_ref().map(|(index, _)| index).filter(|index| index.is_ready())
    }

    /// Texts claimed from the embedding queue at once
    /// (`knowledge.embedding.batch_size`).
    pub fn with_embedding_batch(mut self, batch: usize) -> Self {
        if let Some(embedder) = &self.embedder {
            self.embedding_queue =
                Some(Arc::new(vectors::EmbeddingQueue::new(self.pool.clone(), Arc::clone(embedder), batch)));
        }
        self
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

    /// Registers the embedding model, queues the entries it has no current
    /// vector for (all of them after a model change), and starts this
    /// replica's drainer of the queue and its keyword index (built in the
    /// background; search reads PostgreSQL until it is).
    pub async fn prepare(&self) -> Result<u64, Error> {
        if let Some((_, feed)) = &self.keyword {
            self.background.hold(feed.start());
        }
        let (Some(embedder), Some(queue)) = (&self.embedder, &self.embedding_queue) else { return Ok(0) };
        let provider = format!("{:?}", embedder.provider()).to_lowercase();
        let queued = embeddings::register_model(&self.pool, embedder.model(), &provider, embedder.dimensions()).await?;
        if queued > 0 {
            tracing::info!(queued, model = embedder.model(), "entries queued for embedding");
        }
        self.background.hold(queue.start());
        Ok(queued)
    }

    /// Creates or replaces an entry; returns it and whether it was created.
    /// Its vector follows shortly, from the replica's drainer. An entry the
    /// screen holds is stored quarantined (see [`Self::upsert_in`]).
    pub async fn upsert(&self, scope: &ProjectScope, entry: &NewEntry) -> Result<(Entry, bool), Error> {
        let mut transaction = self.pool.begin().await?;
        let stored = self.upsert_in(&mut transaction, scope, entry).await?;
        transaction.commit().await?;
        self.written().await;
        Ok(stored)
    }

    /// [`Self::upsert`] inside the caller's transaction (another service's
    /// write that must commit or fail with the entry). Call
    /// [`Self::written`] after the commit.
    ///
    /// Every text of the entry passes the injection screen first: a held
    /// entry is stored with status `quarantined` (found by no search) and
    /// recorded in the review queue, whatever its trust.
    pub(crate) async fn upsert_in(
        &self,
        transaction: &mut sqlx::PgConnection,
        scope: &ProjectScope,
        entry: &NewEntry,
    ) -> Result<(Entry, bool), Error> {
        let model = self.embedder.as_ref().map(|embedder| embedder.model().to_owned());
        let held = self.screening.screen(&entry.project, screened_parts(entry));
        let Some(held) = held else {
            let stored = store::upsert_in(transaction, scope, entry, &content_hash(entry), model.as_deref()).await?;
            self.supersede_in(transaction, scope, &stored.0, &entry.supersedes, entry.document.is_some()).await?;
            return Ok(stored);
        };
        let quarantined = NewEntry { status: types::EntryStatus::Quarantined, ..entry.clone() };
        let stored = store::upsert_in(transaction, scope, &quarantined, &content_hash(entry), model.as_deref()).await?;
        let entry_id = stored.0.entry_id;
        let kind = lore_types::trust::quarantine::ItemKind::Entry;
        if lore_store::trust::quarantine::hold(transaction, &entry.project, kind, entry_id, &held, &entry.origin)
            .await?
        {
            return Ok(stored);
        }
        // A person released this very text before: it is stored as asked.
        let stored = store::upsert_in(transaction, scope, entry, &content_hash(entry), model.as_deref()).await?;
        self.supersede_in(transaction, scope, &stored.0, &entry.supersedes, entry.document.is_some()).await?;
        Ok(stored)
    }

    /// After a write committed: this replica's keyword index takes it before
    /// the write returns (another replica's within a notification), and its
    /// entries, queued for a vector, are embedded now rather than at the
    /// drainer's next round.
    pub(crate) async fn written(&self) {
        if let Some(queue) = &self.embedding_queue {
            queue.wake();
        }
        if let Some((_, feed)) = &self.keyword
            && let Err(error) = feed.catch_up().await
        {
            tracing::warn!(%error, "the keyword index could not take a write at once; its feed retries");
            feed.wake();
        }
    }

    /// Embeds every due queued entry now; returns how many were embedded.
    pub async fn index_pending(&self) -> Result<usize, Error> {
        match &self.embedding_queue {
            Some(queue) => queue.drain().await,
            None => Ok(0),
        }
    }

    /// How far `project` is indexed: its entries and those still waiting
    /// for a vector of the current model.
    pub async fn index_status(&self, scope: &ProjectScope, project: &str) -> Result<IndexStatus, Error> {
        scope.require(project)?;
        let model = self.embedder.as_ref().map(|embedder| embedder.model().to_owned()).unwrap_or_default();
        let embeddings = embeddings::project_status(&self.pool, scope, project, &model).await?;
        let keyword_index = self.keyword_index().map(|index| index.project_len(project)).transpose()?;
        Ok(IndexStatus { model, embeddings, keyword_index })
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
        let superseded = store::superseded_by(&self.pool, entry.entry_id).await?;
        Ok(EntryReport { entry, history, effectiveness, superseded })
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
        let deleted = store::delete(&self.pool, scope, entry_id, purge).await?;
        self.written().await;
        Ok(deleted)
    }

    /// Returns the entry after the update and whether it was a replay.
    pub async fn record_occurrence(
        &self,
        scope: &ProjectScope,
        occurrence: &NewOccurrence,
    ) -> Result<(Entry, bool), Error> {
        let recorded = store::record_occurrence(&self.pool, scope, occurrence).await?;
        self.written().await;
        Ok(recorded)
    }

    /// Returns the entry's effectiveness after and whether it was a replay.
    pub async fn record_application(
        &self,
        scope: &ProjectScope,
        application: &Application,
    ) -> Result<(Effectiveness, bool), Error> {
        let duplicate = store::record_application(&self.pool, scope, application).await?;
        self.written().await;
        Ok((store::effectiveness(&self.pool, application.entry_id).await?, duplicate))
    }
}

/// Every text of an entry that a briefing, an MCP result or a search hit can
/// show, named by field.
fn screened_parts(entry: &NewEntry) -> Vec<(String, &str)> {
    use crate::screening::listed;
    let mut parts: Vec<(String, &str)> = vec![
        ("title".into(), entry.title.as_str()),
        ("category".into(), entry.category.as_str()),
        ("summary".into(), entry.summary.as_str()),
        ("body".into(), entry.body.as_str()),
    ];
    parts.extend(listed("tags", &entry.tags));
    parts.extend(listed("prevention_checklist", &entry.prevention_checklist));
    parts.extend(listed("symptoms", &entry.symptoms));
    parts.extend(listed("root_causes", &entry.root_causes));
    parts.extend(
        entry
            .solutions
            .iter()
            .enumerate()
            .map(|(index, solution)| (format!("solutions[{index}]"), solution.description.as_str())),
    );
    parts.extend(detail_texts(&entry.details));
    parts
}

/// The string values of an entry's details (a gotcha's problem and
/// solution, a retrospective's lists), named by their path.
fn detail_texts(details: &serde_json::Value) -> Vec<(String, &str)> {
    let mut texts = Vec::new();
    let mut stack = vec![("details".to_owned(), details)];
    while let Some((path, value)) = stack.pop() {
        match value {
            serde_json::Value::String(text) => texts.push((path, text.as_str())),
            serde_json::Value::Array(items) => {
                stack.extend(items.iter().enumerate().map(|(index, item)| (format!("{path}[{index}]"), item)));
            }
            serde_json::Value::Object(fields) => {
                stack.extend(fields.iter().map(|(key, item)| (format!("{path}.{key}"), item)));
            }
            _ => {}
        }
    }
    texts
}

/// BLAKE3 of what search indexes of an entry: unchanged text is not
/// re-embedded.
pub fn content_hash(entry: &NewEntry) -> Vec<u8> {
    let mut hasher = blake3::Hasher::new();
    for part in [&entry.title, &entry.category, &entry.summary, &entry.body] {
        hasher.update(&(part.len() as u64).to_le_bytes());
        hasher.update(part.as_bytes());
    }
    for item in entry.tags.iter().chain(&entry.symptoms).chain(&entry.root_causes) {
        hasher.update(&(item.len() as u64).to_le_bytes());
        hasher.update(item.as_bytes());
    }
    hasher.finalize().as_bytes().to_vec()
}
