//! Draft learnings built from the action log of an epic or a session, and
//! their review.
//!
//! A draft says what failed, what fixed it (the next success of the same
//! kind of action, what happened in between, how long it took), what is
//! still failing, the decisions taken and the time spent, with the ids of
//! the actions it came from. It stays pending until a person approves it
//! (it then becomes a learning, written to the project's publish folder
//! when one is configured) or rejects it. Building a draft never calls a
//! model: it is the log, arranged.

use chrono::Utc;
use uuid::Uuid;

use std::path::Path;

use super::KnowledgeBase;
use super::document;
use crate::Error;
use crate::screening;
use lore_store::actions::{self as action_store, Direction};
use lore_store::knowledge::drafts as store;
use lore_types::actions::StoredName as _;
use lore_types::actions::query::{ActionFilter, Position};
use lore_types::knowledge::drafts::{Decision, Draft, DraftEdits, DraftSource, DraftStatus, Proposal, Review};
use lore_types::knowledge::{DocumentSource, Entry};
use lore_types::scope::ProjectScope;
use lore_types::trust::Origin;

/// Actions a draft is built from, at most (the oldest ones).
pub const MAX_DRAFT_ACTIONS: usize = 2000;
/// Lines per section of a draft's body.
const MAX_LINES: usize = 20;
/// Action ids listed at the end of a draft's body.
const MAX_LISTED_IDS: usize = 100;
/// A quoted error or context value is cut to this many characters.
const MAX_QUOTE_CHARS: usize = 200;
/// Context keys that describe what an action did, most telling first.
const DESCRIPTIVE_KEYS: [&str; 8] =
    ["message", "summary", "description", "fix", "decision", "title", "plan", "command"];

impl KnowledgeBase {
    /// Builds and stores a draft from the actions of an epic or session,
    /// led by the agent's own `proposal` when there is one. Returns it and
    /// whether `draft_id` was a replay of the same request.
    pub async fn create_draft(
        &self,
        scope: &ProjectScope,
        draft_id: Uuid,
        project: &str,
        source: DraftSource,
        proposal: Option<Proposal>,
        origin: Origin,
    ) -> Result<(Draft, bool), Error> {
        self.create_tagged_draft(scope, draft_id, project, source, proposal, &[], origin).await
    }

    /// [`Self::create_draft`] with `extra_tags` added to the draft's own
    /// (an automatic draft says why it was made). A draft whose title,
    /// body or tags the injection screen holds is stored quarantined: it
    /// goes to review only once a person releases it.
    #[allow(clippy::too_many_arguments)]
    pub async fn create_tagged_draft(
        &self,
        scope: &ProjectScope,
        draft_id: Uuid,
        project: &str,
        source: DraftSource,
        proposal: Option<Proposal>,
        extra_tags: &[String],
        origin: Origin,
    ) -> Result<(Draft, bool), Error> {
        if let Some(existing) = store::get(&self.pool, scope, draft_id).await? {
            if existing.project == project && existing.source == source {
                return Ok((existing, true));
            }
            return Err(Error::AlreadyExists(format!("draft_id {draft_id} is already used by another draft")));
        }
        let mut filter = ActionFilter { project: project.to_owned(), ..Default::default() };
        match &source {
            DraftSource::Epic(epic) => filter.epic_id = Some(epic.clone()),
            DraftSource::Session(session) => filter.session_id = Some(*session),
        }
        let actions =
            action_store::page(&self.pool, scope, &filter, None, Direction::Ascending, MAX_DRAFT_ACTIONS as i64)
                .await?;
        let from_log = (!actions.is_empty()).then(|| compose(&source, &actions));
        let mut composed = match (proposal, from_log) {
            (Some(proposal), from_log) => with_proposal(&proposal, from_log),
            (None, Some(from_log)) => from_log,
            (None, None) => {
                let source = match &source {
                    DraftSource::Epic(epic) => format!("epic {epic}"),
                    DraftSource::Session(session) => format!("session {session}"),
                };
                return Err(Error::NotFound(format!("actions of {source} in project {project}")));
            }
        };
        for tag in extra_tags {
            if !composed.tags.contains(tag) {
                composed.tags.push(tag.clone());
            }
        }
        let mut draft = Draft {
            draft_id,
            project: project.to_owned(),
            source,
            title: composed.title,
            category: composed.category,
            body: composed.body,
            tags: composed.tags,
            status: DraftStatus::Pending,
            reviewer: None,
            review_note: String::new(),
            entry_id: None,
            created_at: Utc::now(),
            reviewed_at: None,
            origin,
        };
        let parts = [("title".to_owned(), draft.title.as_str()), ("body".to_owned(), draft.body.as_str())];
        let held = self.screening.screen(project, parts.into_iter().chain(screening::listed("tags", &draft.tags)));
        if held.is_some() {
            draft.status = DraftStatus::Quarantined;
        }
        let mut transaction = self.pool.begin().await?;
        let stored = store::insert(&mut transaction, scope, &draft).await?;
        if let (Some(held), (_, false)) = (&held, &stored) {
            let kind = lore_types::trust::quarantine::ItemKind::Draft;
            lore_store::trust::quarantine::hold(&mut transaction, project, kind, draft_id, held, &draft.origin).await?;
        }
        transaction.commit().await?;
        Ok(stored)
    }

    pub async fn draft(&self, scope: &ProjectScope, draft_id: Uuid) -> Result<Draft, Error> {
        store::get(&self.pool, scope, draft_id).await?.ok_or_else(|| Error::NotFound(format!("draft {draft_id}")))
    }

    pub async fn list_drafts(
        &self,
        scope: &ProjectScope,
        project: &str,
        status: DraftStatus,
        limit: i64,
        after: Option<Position>,
    ) -> Result<Vec<Draft>, Error> {
        store::list(&self.pool, scope, project, status, limit, after).await
    }

    /// Approves (the draft becomes a learning, published to the project's
    /// folder when one is configured) or rejects a pending draft. The same
    /// decision by the same reviewer again is a replay and answers as the
    /// first time.
    pub async fn review_draft(&self, scope: &ProjectScope, review: &Review) -> Result<(Draft, Option<Entry>), Error> {
        let mut transaction = self.pool.begin().await?;
        let mut draft = store::lock(&mut transaction, scope, review.draft_id)
            .await?
            .ok_or_else(|| Error::NotFound(format!("draft {}", review.draft_id)))?;
        let wanted = match review.decision {
            Decision::Approve(_) => DraftStatus::Approved,
            Decision::Reject => DraftStatus::Rejected,
        };
        if draft.status == DraftStatus::Quarantined {
            return Err(Error::FailedPrecondition(format!(
                "draft {} is held by the injection screen: release it (lore quarantine release) before reviewing it",
                draft.draft_id
            )));
        }
        if draft.status != DraftStatus::Pending {
            transaction.commit().await?;
            if draft.status != wanted || draft.reviewer.as_deref() != Some(review.reviewer.as_str()) {
                return Err(Error::FailedPrecondition(format!(
                    "draft {} is already {} by {}",
                    draft.draft_id,
                    draft.status.as_str(),
                    draft.reviewer.as_deref().unwrap_or("someone")
                )));
            }
            let entry = match draft.entry_id {
                Some(entry_id) => Some(lore_store::knowledge::get(&self.pool, scope, entry_id).await?),
                None => None,
            };
            return Ok((draft, entry));
        }
        draft.status = wanted;
        draft.reviewer = Some(review.reviewer.clone());
        draft.review_note = review.note.clone();
        draft.reviewed_at = Some(Utc::now());
        let mut entry = None;
        if let Decision::Approve(edits) = &review.decision {
            apply_edits(&mut draft, edits);
            let approved = self.publish_draft(&mut transaction, scope, &draft).await?;
            draft.entry_id = Some(approved.entry_id);
            entry = Some(approved);
        }
        store::record_review(&mut transaction, &draft).await?;
        transaction.commit().await?;
        if entry.is_some() {
            self.written().await;
        }
        Ok((draft, entry))
    }
}

impl KnowledgeBase {
    /// The learning an approved draft becomes, inside the review's
    /// transaction: a document `<key>.md` in the project's publish folder
    /// (written first, so the watcher later finds it unchanged), or
    /// `drafts/<key>.md` when the project has none.
    async fn publish_draft(
        &self,
        transaction: &mut sqlx::PgConnection,
        scope: &ProjectScope,
        draft: &Draft,
    ) -> Result<Entry, Error> {
        let file_name = format!("{}.md", entry_key(draft.draft_id));
        self.publish(transaction, scope, &draft.project, &file_name, &published_markdown(draft)).await
    }

    /// Writes a markdown document into the project's publish folder (or
    /// keeps it under `drafts/` when the project has none) and indexes it,
    /// inside the caller's transaction. The file is written first, so the
    /// watcher later finds it unchanged, and under the project's documents
    /// lock, which the watcher takes too: a version it read before this
    /// write is not stored after it.
    pub(crate) async fn publish(
        &self,
        transaction: &mut sqlx::PgConnection,
        scope: &ProjectScope,
        project: &str,
        file_name: &str,
        markdown: &str,
    ) -> Result<Entry, Error> {
        let parsed = document::parse(file_name, markdown).map_err(|error| Error::invalid("body", error.to_string()))?;
        let folder = self.publish_folders.iter().find(|folder| folder.project == project);
        lore_store::knowledge::lock_documents(&mut *transaction, project).await?;
        let source = match folder {
            Some(folder) => {
                let (root, name) = super::watch::resolve_folder(&folder.path)?;
                write_atomically(&root, file_name, markdown)?;
                DocumentSource { project: project.to_owned(), path: file_name.to_owned(), root: Some(name) }
            }
            None => DocumentSource { project: project.to_owned(), path: format!("drafts/{file_name}"), root: None },
        };
        let (entry, _) = self.store_document_in(transaction, scope, &source, parsed).await?;
        Ok(entry)
    }
}

/// Writes `file_name` in `directory` through a hidden temporary file (which
/// the watcher ignores) and a rename, so no reader sees half a file.
fn write_atomically(directory: &Path, file_name: &str, text: &str) -> Result<(), Error> {
    let unavailable = |error: std::io::Error| Error::Unavailable(format!("cannot publish {file_name}: {error}"));
    let mut file = tempfile::NamedTempFile::new_in(directory).map_err(unavailable)?;
    std::io::Write::write_all(&mut file, text.as_bytes()).map_err(unavailable)?;
    file.as_file().sync_all().map_err(unavailable)?;
    file.persist(directory.join(file_name)).map_err(|error| unavailable(error.error))?;
    Ok(())
}

fn apply_edits(draft: &mut Draft, edits: &DraftEdits) {
    if let Some(title) = &edits.title {
        draft.title = title.clone();
    }
    if let Some(category) = &edits.category {
        draft.category = category.clone();
    }
    if let Some(body) = &edits.body {
        draft.body = body.clone();
    }
    if let Some(tags) = &edits.tags {
        draft.tags = tags.clone();
    }
}

/// The entry key of an approved draft: stable, and short enough to type.
pub fn entry_key(draft_id: Uuid) -> String {
    let hex = draft_id.simple().to_string();
    format!("LRN-{}", &hex[hex.len() - 12..])
}

/// The markdown document an approved draft becomes: front matter with its
/// key, so the file's identity survives a rename, then the body.
pub fn published_markdown(draft: &Draft) -> String {
    let mut front_matter = serde_json::Map::new();
    front_matter.insert("id".into(), entry_key(draft.draft_id).into());
    front_matter.insert("title".into(), draft.title.clone().into());
    if !draft.category.is_empty() {
        front_matter.insert("category".into(), draft.category.clone().into());
    }
    if !draft.tags.is_empty() {
        front_matter.insert("tags".into(), draft.tags.clone().into());
    }
    front_matter.insert("draft_id".into(), draft.draft_id.to_string().into());
    match &draft.source {
        DraftSource::Epic(epic) => front_matter.insert("epic_id".into(), epic.clone().into()),
        DraftSource::Session(session) => front_matter.insert("session_id".into(), session.to_string().into()),
    };
    if let Some(reviewer) = &draft.reviewer {
        front_matter.insert("approved_by".into(), reviewer.clone().into());
    }
    document::with_front_matter(&front_matter, &draft.body)
}

mod compose;

pub use compose::{compose, with_proposal};

#[cfg(test)]
mod tests;
