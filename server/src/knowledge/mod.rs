//! KnowledgeService's domain: entries (issue patterns, learnings,
//! retrospectives, gotchas), their solutions and how well they work.
//!
//! # Layout
//! - [`model`]: the domain types.
//! - The SQL is in [`crate::store::knowledge`].

pub mod embed;
pub mod model;

use sqlx::PgPool;
use uuid::Uuid;

use crate::Error;
use crate::actions::query::Position;
use crate::scope::ProjectScope;
use crate::store::knowledge as store;
use model::{Application, Effectiveness, Entry, EntryFilter, NewEntry, NewOccurrence};

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
}

impl KnowledgeBase {
    pub fn new(pool: PgPool) -> Self {
        Self { pool }
    }

    /// Creates or replaces an entry; returns it and whether it was created.
    pub async fn upsert(&self, scope: &ProjectScope, entry: &NewEntry) -> Result<(Entry, bool), Error> {
        store::upsert(&self.pool, scope, entry, &content_hash(entry)).await
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
