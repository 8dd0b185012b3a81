//! The review queue of what the screen held.
//!
//! A held item stays where it belongs, in a state no briefing reads: an
//! entry or a draft in status `quarantined`, a pattern marked held, a
//! failure's message left out of grouping, a fix attempt whose text fills
//! no pattern and makes no gotcha, an action's text replaced in resume
//! summaries. People see the queue in the console and with `lore quarantine
//! list`; releasing an item does what holding it put off (the message is
//! grouped, the fix fills its pattern); erasing it drops the excerpt and
//! keeps the item out for good.

use sqlx::PgPool;
use uuid::Uuid;

use crate::Error;
use crate::knowledge::KnowledgeBase;
use crate::qa::QaLearning;
use lore_store::trust::quarantine as store;
use lore_types::actions::StoredName;
use lore_types::actions::query::Position;
use lore_types::scope::ProjectScope;
use lore_types::trust::quarantine::{Decision, ItemKind, QuarantineFilter, QuarantineStatus, Quarantined};

/// The queue over the services whose items it holds.
#[derive(Debug, Clone)]
pub struct Quarantine {
    pool: PgPool,
    knowledge: KnowledgeBase,
    qa: QaLearning,
}

impl Quarantine {
    pub fn new(pool: PgPool, knowledge: KnowledgeBase, qa: QaLearning) -> Self {
        Self { pool, knowledge, qa }
    }

    pub async fn list(
        &self,
        scope: &ProjectScope,
        filter: &QuarantineFilter,
        limit: i64,
        after: Option<Position>,
    ) -> Result<Vec<Quarantined>, Error> {
        scope.require(&filter.project)?;
        store::list(&self.pool, scope, filter, limit, after).await
    }

    pub async fn held_count(&self, scope: &ProjectScope, project: &str) -> Result<i64, Error> {
        store::held_count(&self.pool, scope, project).await
    }

    /// Releases or erases a held item, and does what that means for it.
    /// Deciding twice is FAILED_PRECONDITION: the first decision stands.
    pub async fn decide(
        &self,
        scope: &ProjectScope,
        quarantine_id: Uuid,
        decision: Decision,
        by: &str,
        note: &str,
    ) -> Result<Quarantined, Error> {
        let mut transaction = self.pool.begin().await?;
        let item = store::lock(&mut transaction, scope, quarantine_id).await?;
        if item.status != QuarantineStatus::Held {
            return Err(Error::FailedPrecondition(format!(
                "quarantined item {quarantine_id} was already {} by {}",
                item.status.as_str(),
                item.decided_by.as_deref().unwrap_or("someone")
            )));
        }
        let status = match decision {
            Decision::Release => QuarantineStatus::Released,
            Decision::Erase => QuarantineStatus::Erased,
        };
        let decided = store::decide(&mut transaction, quarantine_id, status, by, note).await?;
        // Other parts of the same item may still be held: it stays out
        // until none is.
        let still_held = store::held_parts(&mut transaction, item.item_kind, item.item_id)
            .await?
            .into_iter()
            .any(|part| part != item.part);
        let mut knowledge_written = false;
        match (item.item_kind, decision) {
            (ItemKind::Entry, Decision::Release) if !still_held => {
                lore_store::knowledge::release(&mut transaction, item.item_id).await?;
                knowledge_written = true;
            }
            (ItemKind::Entry, Decision::Erase) => {
                lore_store::knowledge::delete_in(&mut transaction, scope, item.item_id).await?;
                knowledge_written = true;
            }
            (ItemKind::Draft, Decision::Release) if !still_held => {
                lore_store::knowledge::drafts::release(&mut transaction, item.item_id).await?;
            }
            (ItemKind::Draft, Decision::Erase) => {
                lore_store::knowledge::drafts::erase(&mut transaction, item.item_id, by).await?;
            }
            (ItemKind::Pattern, Decision::Release) if !still_held => {
                lore_store::qa::patterns::set_held(&mut transaction, item.item_id, false).await?;
            }
            (ItemKind::Pattern, Decision::Erase) => {
                lore_store::qa::patterns::retire(&mut transaction, item.item_id).await?;
            }
            (ItemKind::FailureMessage, Decision::Release) => {
                let index: usize = item.part.parse().map_err(|_| {
                    Error::FailedPrecondition(format!("quarantined message {:?} has no index", item.part))
                })?;
                self.qa.group_released_message(&mut transaction, scope, item.item_id, index).await?;
            }
            (ItemKind::FixAttempt, Decision::Release) if !still_held => {
                knowledge_written = self.qa.apply_released_fix(&mut transaction, scope, item.item_id).await?;
            }
            // Held parts of the same item, and actions or sessions (shown
            // again once released, never once erased), need nothing more.
            _ => {}
        }
        transaction.commit().await?;
        if knowledge_written {
            self.knowledge.written().await;
        }
        Ok(decided)
    }
}
