//! Markdown documents into entries: IndexDocument, RemoveDocument and the
//! folder watcher all come through here.
//!
//! # Identity
//! A document is the entry with its front matter `id` (its key) when it has
//! one, so a renamed or moved file stays the same entry; without an id, the
//! entry at its path. A removed document becomes obsolete and keeps its
//! path and history: the same file coming back revives the same entry.
//!
//! # Idempotence
//! A document indexed again byte for byte is a no-op (its BLAKE3 is
//! stored); one whose text is unchanged but whose front matter changed is
//! stored without being embedded again (the embedding queue compares the
//! hash of the embedded text).

use serde_json::Value;

use super::KnowledgeBase;
use super::document::{self, Document};
use crate::Error;
use lore_store::knowledge::{self as store, StoredDocument};
use lore_types::knowledge::{DocumentOrigin, DocumentSource, Entry, EntryKind, NewEntry, NewSolution};
use lore_types::scope::ProjectScope;
use lore_types::trust::{Origin, Trust};

impl KnowledgeBase {
    /// Indexes a document given as text. Returns its entry and whether
    /// anything changed.
    pub async fn index_document(
        &self,
        scope: &ProjectScope,
        source: &DocumentSource,
        text: &str,
    ) -> Result<(Entry, bool), Error> {
        let parsed =
            document::parse(&source.path, text).map_err(|error| Error::invalid("content", error.to_string()))?;
        self.store_document(scope, source, parsed).await
    }

    /// Stores a parsed document: finds its entry, skips it when unchanged,
    /// takes the path from any other entry that held it, upserts and embeds.
    pub async fn store_document(
        &self,
        scope: &ProjectScope,
        source: &DocumentSource,
        parsed: Document,
    ) -> Result<(Entry, bool), Error> {
        let transaction = self.pool.begin().await?;
        self.commit_document(transaction, scope, source, parsed).await
    }

    /// [`Self::store_document`] for a watched file read as `read`, unless
    /// the file holds something else by the time the documents are locked
    /// (`None`): a publish writes its file under the same lock, so a
    /// version read before it cannot be stored after it and undo it.
    pub async fn store_watched_document(
        &self,
        scope: &ProjectScope,
        source: &DocumentSource,
        parsed: Document,
        path: &std::path::Path,
        read: &[u8],
    ) -> Result<Option<(Entry, bool)>, Error> {
        let mut transaction = self.pool.begin().await?;
        store::lock_documents(&mut transaction, &source.project).await?;
        let now = tokio::fs::read(path).await.ok();
        if now.as_deref() != Some(read) {
            return Ok(None);
        }
        self.commit_document(transaction, scope, source, parsed).await.map(Some)
    }

    /// Stores the document in `transaction`, commits, and, when the entry
    /// changed, tells the rest (embedding, the keyword feed).
    async fn commit_document(
        &self,
        mut transaction: sqlx::Transaction<'_, sqlx::Postgres>,
        scope: &ProjectScope,
        source: &DocumentSource,
        parsed: Document,
    ) -> Result<(Entry, bool), Error> {
        let (entry, changed) = self.store_document_in(&mut transaction, scope, source, parsed).await?;
        transaction.commit().await?;
        if changed {
            self.written().await;
        }
        Ok((entry, changed))
    }

    /// [`Self::store_document`] inside the caller's transaction; the caller
    /// embeds the entry after committing.
    pub(super) async fn store_document_in(
        &self,
        transaction: &mut sqlx::PgConnection,
        scope: &ProjectScope,
        source: &DocumentSource,
        parsed: Document,
    ) -> Result<(Entry, bool), Error> {
        scope.require(&source.project)?;
        store::lock_documents(&mut *transaction, &source.project).await?;
        let stored =
            store::find_document(&mut *transaction, scope, &source.project, parsed.key.as_deref(), &source.path)
                .await?;
        if let Some(stored) = &stored
            && unchanged(stored, source, &parsed)
        {
            return Ok((stored.entry.clone(), false));
        }
        let keep = stored.as_ref().map(|stored| stored.entry.entry_id);
        store::detach_document(&mut *transaction, &source.project, &source.path, keep).await?;
        let entry = entry_from_document(stored.map(|stored| stored.entry), source, parsed);
        let model = self.embedder.as_ref().map(|embedder| embedder.model().to_owned());
        let (entry, _) =
            store::upsert_in(&mut *transaction, scope, &entry, &super::content_hash(&entry), model.as_deref()).await?;
        Ok((entry, true))
    }

    /// Removes the document at `path` (every document under it, when it is
    /// a folder); with `root`, only documents of that watched folder.
    /// Returns how many left the index.
    pub async fn remove_documents(
        &self,
        scope: &ProjectScope,
        project: &str,
        root: Option<&str>,
        path: &str,
    ) -> Result<u64, Error> {
        let removed = store::remove_documents(&self.pool, scope, project, root, path).await?;
        if removed > 0 {
            self.written().await;
        }
        Ok(removed)
    }

    /// Paths of the documents indexed from a watched folder.
    pub async fn document_paths(&self, project: &str, root: &str) -> Result<Vec<String>, Error> {
        store::document_paths(&self.pool, project, root).await
    }
}

fn unchanged(stored: &StoredDocument, source: &DocumentSource, parsed: &Document) -> bool {
    stored.document_hash.as_deref() == Some(parsed.hash.as_slice())
        && stored.entry.source_path.as_deref() == Some(source.path.as_str())
        && stored.source_root == source.root
        && stored.entry.status == parsed.status
}

/// The entry a document becomes. What the document does not say (kind,
/// checklist, kind-specific details, and solutions when it lists none) is
/// kept from the entry it replaces; a solution it lists again by the same
/// description keeps its statistics.
fn entry_from_document(existing: Option<Entry>, source: &DocumentSource, parsed: Document) -> NewEntry {
    let known_solutions = existing.as_ref().map(|entry| entry.solutions.as_slice()).unwrap_or_default();
    let solutions = match parsed.solutions {
        Some(descriptions) => descriptions
            .into_iter()
            .map(|description| NewSolution {
                solution_id: known_solutions
                    .iter()
                    .find(|known| known.description == description)
                    .map(|known| known.solution_id),
                description,
            })
            .collect(),
        None => known_solutions
            .iter()
            .map(|known| NewSolution { solution_id: Some(known.solution_id), description: known.description.clone() })
            .collect(),
    };
    NewEntry {
        entry_id: existing.as_ref().map(|entry| entry.entry_id),
        key: parsed.key,
        project: source.project.clone(),
        kind: existing.as_ref().map_or(EntryKind::Learning, |entry| entry.kind),
        title: parsed.title,
        category: parsed.category,
        summary: parsed.summary,
        body: parsed.body,
        tags: parsed.tags,
        status: parsed.status,
        severity: parsed.severity.or(existing.as_ref().and_then(|entry| entry.severity)),
        prevention_checklist: existing.as_ref().map(|entry| entry.prevention_checklist.clone()).unwrap_or_default(),
        solutions,
        details: existing.map_or_else(|| Value::Object(Default::default()), |entry| entry.details),
        source_path: Some(source.path.clone()),
        front_matter: Some(Value::Object(parsed.front_matter)),
        document: Some(DocumentOrigin { hash: parsed.hash, root: source.root.clone() }),
        symptoms: parsed.symptoms,
        root_causes: parsed.root_causes,
        usage_count: parsed.usage_count,
        last_used_at: parsed.last_used_at,
        // A document comes from an operator's folder or an admin's
        // IndexDocument; it is screened like everything else all the same.
        origin: Origin::document(),
        trust: Trust::Reviewed,
        cited_files: parsed.cited_files,
        supersedes: parsed.supersedes,
    }
}
