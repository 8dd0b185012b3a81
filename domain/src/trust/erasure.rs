//! Erasure: one call removes a memory item and everything derived from it,
//! so a poisoned or wrong lesson stops reaching agents everywhere at once.
//!
//! Erasing an entry removes, in one transaction, the entry with its
//! solutions, history and vector; the drafts it was approved from; for a
//! gotcha, the pattern fix taken from the same attempt (so warnings stop
//! repeating it) and that attempt's right to become a fix again; the
//! supersession it caused (the entries it replaced are active again); the
//! quarantine's copy of its text; and its label in the injection ledger.
//! A published promotion is rolled back first, which takes its line out of
//! the standing instructions file; a document's file is deleted, so the
//! folder watcher does not bring it back. Every replica's keyword index and
//! search cache follow through the knowledge change feed.
//!
//! The audit log is not edited: its hash chain is the proof of what agents
//! did. The erasure itself is appended to it as an action of the project's
//! erasures session, naming the entry and what went with it, not its text.

use std::path::{Component, Path, PathBuf};

use chrono::{SubsecRound as _, Utc};
use serde_json::json;
use sqlx::PgPool;
use uuid::Uuid;

use crate::Error;
use crate::actions::ActionLog;
use crate::knowledge::KnowledgeBase;
use crate::qa::QaLearning;
use lore_store::trust::erasure::{self as store, Derived};
use lore_types::actions::{NewAction, NewSession, Outcome, SessionKind, StoredName as _};
use lore_types::qa::PromotionDecision;
use lore_types::scope::ProjectScope;

/// The agent the erasures session is of.
pub const ERASURES_AGENT: &str = "lore-erasures";
/// Names each project's erasures session (UUIDv5 of the project).
const ERASURES_NAMESPACE: Uuid = Uuid::from_u128(0x6c6f_7265_2d65_7261_7375_7265_7376_3031);

/// What one erasure removed.
#[derive(Debug, Clone, PartialEq)]
pub struct Erased {
    pub entry_id: Uuid,
    pub project: String,
    pub key: Option<String>,
    pub derived: Derived,
    /// What became of the standing instructions, when a promotion was
    /// rolled back.
    pub instructions: Option<String>,
    /// The document file deleted, when there was one.
    pub file_removed: Option<PathBuf>,
    /// The audit action recording the erasure, and its session.
    pub action_id: Uuid,
    pub session_id: Uuid,
}

#[derive(Debug, Clone)]
pub struct Erasure {
    pool: PgPool,
    actions: ActionLog,
    knowledge: KnowledgeBase,
    qa: QaLearning,
}

impl Erasure {
    pub fn new(pool: PgPool, actions: ActionLog, knowledge: KnowledgeBase, qa: QaLearning) -> Self {
        Self { pool, actions, knowledge, qa }
    }

    /// The session a project's erasures are logged in.
    pub fn session_of(project: &str) -> Uuid {
        Uuid::new_v5(&ERASURES_NAMESPACE, project.as_bytes())
    }

    /// Erases an entry; `by` is who asked (a token's name), `note` why.
    pub async fn erase_entry(
        &self,
        scope: &ProjectScope,
        entry_id: Uuid,
        by: &str,
        note: &str,
    ) -> Result<Erased, Error> {
        let entry = self.knowledge.get(scope, entry_id, 0).await?.entry;
        let instructions = match self.qa.published_promotion_of(scope, entry_id).await? {
            Some(promotion_id) => {
                let rolled_back = self
                    .qa
                    .review_promotion(scope, promotion_id, PromotionDecision::Rollback, by, &format!("erased: {note}"))
                    .await?;
                Some(rolled_back.instructions)
            }
            None => None,
        };
        let attempt_id =
            entry.details.get("attempt_id").and_then(|id| id.as_str()).and_then(|id| Uuid::parse_str(id).ok());
        let mut transaction = self.pool.begin().await?;
        let derived = store::erase_derived(&mut transaction, &entry.project, entry_id, attempt_id, by, note).await?;
        lore_store::knowledge::delete_in(&mut transaction, scope, entry_id).await?;
        transaction.commit().await?;
        self.knowledge.written().await;
        let file_removed = derived.document.as_ref().and_then(|(root, path)| remove_document(root, path));
        let session_id = Self::session_of(&entry.project);
        let action_id =
            self.record(scope, &entry, &derived, instructions.as_deref(), file_removed.as_deref(), by, note).await?;
        Ok(Erased {
            entry_id,
            project: entry.project,
            key: entry.key,
            derived,
            instructions,
            file_removed,
            action_id,
            session_id,
        })
    }

    /// Appends the erasure to the audit log: what was erased and what went
    /// with it, never its text.
    #[allow(clippy::too_many_arguments)]
    async fn record(
        &self,
        scope: &ProjectScope,
        entry: &lore_types::knowledge::Entry,
        derived: &Derived,
        instructions: Option<&str>,
        file_removed: Option<&Path>,
        by: &str,
        note: &str,
    ) -> Result<Uuid, Error> {
        let now = Utc::now().trunc_subsecs(6);
        let session_id = Self::session_of(&entry.project);
        let session = NewSession {
            session_id,
            project: entry.project.clone(),
            agent_id: ERASURES_AGENT.to_owned(),
            supervisor_type: "lore".to_owned(),
            kind: SessionKind::Supervisor,
            metadata: json!({ "purpose": "erasures of memory items" }),
            started_at: now,
            reopen: true,
        };
        self.actions.start_session(scope, session).await?;
        let action = NewAction {
            action_id: Uuid::now_v7(),
            occurred_at: now,
            project: entry.project.clone(),
            session_id: Some(session_id),
            agent_id: ERASURES_AGENT.to_owned(),
            action_type: "erasure".to_owned(),
            category: "knowledge".to_owned(),
            context: json!({
                "entry_id": entry.entry_id,
                "key": entry.key,
                "kind": entry.kind.as_str(),
                "trust": entry.trust.as_str(),
                "by": by,
                "note": note,
                "drafts_deleted": derived.drafts,
                "pattern_fixes_cleared": derived.pattern_fixes,
                "fix_attempts_blocked": derived.attempts_blocked,
                "entries_revived": derived.revived,
                "instructions": instructions,
                "file_removed": file_removed.map(|path| path.display().to_string()),
            }),
            outcome: Outcome::Success,
            error: String::new(),
            duration_ms: 0,
            parent_action_id: None,
            epic_id: String::new(),
            issue_id: String::new(),
            redaction_count: 0,
            truncated: false,
        };
        Ok(self.actions.log(scope, action).await?.action_id)
    }
}

/// Deletes a document's file from its folder, so the watcher does not index
/// it again. Only a plain relative path under the folder is touched.
fn remove_document(root: &str, path: &str) -> Option<PathBuf> {
    let relative = Path::new(path);
    if !relative.components().all(|part| matches!(part, Component::Normal(_))) {
        return None;
    }
    let file = Path::new(root).join(relative);
    match std::fs::remove_file(&file) {
        Ok(()) => Some(file),
        Err(error) => {
            tracing::warn!(file = %file.display(), %error, "the erased entry's document could not be removed");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_document_file_is_removed_only_under_its_folder() {
        let folder = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(folder.path().join("notes")).unwrap();
        std::fs::write(folder.path().join("notes/cache.md"), "# Cache").unwrap();
        std::fs::write(folder.path().join("kept.md"), "# Kept").unwrap();
        let root = folder.path().to_str().unwrap();
        assert_eq!(remove_document(root, "notes/cache.md"), Some(folder.path().join("notes/cache.md")));
        assert!(!folder.path().join("notes/cache.md").exists());
        assert_eq!(remove_document(root, "../kept.md"), None);
        assert_eq!(remove_document(root, "/etc/hostname"), None);
        assert_eq!(remove_document(root, "notes/gone.md"), None);
        assert!(folder.path().join("kept.md").exists());
    }

    #[test]
    fn each_project_has_its_own_erasures_session() {
        assert_eq!(Erasure::session_of("a"), Erasure::session_of("a"));
        assert_ne!(Erasure::session_of("a"), Erasure::session_of("b"));
    }
}
