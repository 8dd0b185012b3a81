//! Supersession: a newer lesson replaces older ones, which stay stored and
//! shown to people (with their successor) but are no longer found by
//! search nor injected.
//!
//! A lesson says what it replaces (`supersedes`, in the API or front
//! matter); a verified fix of a QA pattern replaces the older verified
//! gotcha of the same pattern by itself (`qa::fixes`). An entry supersedes
//! only entries trusted no more than itself: otherwise one agent's lesson
//! naming a reviewed one would push it out of every briefing.

use super::KnowledgeBase;
use crate::Error;
use lore_store::knowledge as store;
use lore_types::actions::StoredName as _;
use lore_types::knowledge::Entry;
use lore_types::scope::ProjectScope;

impl KnowledgeBase {
    /// Marks the entries `successor` names in `handles` (ids or keys of its
    /// project) superseded by it. An unknown handle is an error naming it,
    /// except for a document (`lenient`), whose folder may hold the entry
    /// it replaces in a file not indexed yet.
    pub(crate) async fn supersede_in(
        &self,
        transaction: &mut sqlx::PgConnection,
        scope: &ProjectScope,
        successor: &Entry,
        handles: &[String],
        lenient: bool,
    ) -> Result<(), Error> {
        for (index, handle) in handles.iter().enumerate() {
            let field = format!("supersedes[{index}]");
            let Some(older) = store::find_in(transaction, scope, &successor.project, handle).await? else {
                if lenient {
                    tracing::info!(entry = %successor.entry_id, handle, "supersedes an entry Lore does not know yet");
                    continue;
                }
                return Err(Error::NotFound(format!("{field}: entry {handle} in project {}", successor.project)));
            };
            if older.entry_id == successor.entry_id {
                return Err(Error::invalid(field, "an entry cannot supersede itself"));
            }
            if older.trust < successor.trust {
                return Err(Error::PermissionDenied(format!(
                    "{field}: entry {handle} is {}, and a {} entry cannot supersede it",
                    older.trust.as_str(),
                    successor.trust.as_str()
                )));
            }
            store::supersede(transaction, older.entry_id, successor.entry_id).await?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use lore_types::trust::Trust;

    #[test]
    fn a_less_trusted_entry_compares_greater() {
        // `supersede_in` refuses when the older entry is more trusted.
        assert!(Trust::Reviewed < Trust::Verified && Trust::Verified < Trust::Observed);
    }
}
