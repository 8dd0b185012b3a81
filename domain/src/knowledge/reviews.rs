//! A person's review of entries agents wrote (issue 56). An agent's lesson
//! reaches no other agent in its own words until a person approves it;
//! approved, briefings and search say it unchanged; rejected, it leaves the
//! queue and is never said. The decision, its reviewer and its time stay on
//! the entry until its words are rewritten.

use uuid::Uuid;

use super::KnowledgeBase;
use crate::Error;
use lore_store::knowledge::reviews as store;
use lore_types::actions::StoredName as _;
use lore_types::knowledge::{Entry, EntryStatus};
use lore_types::scope::ProjectScope;
use lore_types::trust::{Author, Origin};

impl KnowledgeBase {
    /// A project's entries whose words wait for a person, most recently
    /// written first.
    pub async fn entries_to_review(
        &self,
        scope: &ProjectScope,
        project: &str,
        limit: i64,
    ) -> Result<Vec<Entry>, Error> {
        store::entries_to_review(&self.pool, scope, project, limit).await
    }

    /// Records a person's decision on an entry; returns the entry after it.
    pub async fn review_entry(
        &self,
        scope: &ProjectScope,
        entry_id: Uuid,
        approved: bool,
        reviewer: &Origin,
        note: &str,
    ) -> Result<Entry, Error> {
        if reviewer.author != Author::Person {
            return Err(Error::PermissionDenied("only a person reviews an entry".into()));
        }
        let mut transaction = self.pool.begin().await?;
        let entry = store::lock(&mut transaction, scope, entry_id).await?;
        if entry.status != EntryStatus::Active {
            return Err(Error::FailedPrecondition(format!(
                "entry_id: entry {entry_id} is {}; only an active entry is reviewed (a held one is released or \
                 erased in the quarantine queue)",
                entry.status.as_str()
            )));
        }
        if !store::review(&mut transaction, entry_id, approved, &reviewer.token, note).await? {
            return Err(Error::FailedPrecondition(format!(
                "entry_id: entry {entry_id} is decided already, or a person wrote it"
            )));
        }
        let reviewed = store::lock(&mut transaction, scope, entry_id).await?;
        transaction.commit().await?;
        self.written().await;
        Ok(reviewed)
    }
}
