//! A person's review of entries agents wrote (issue 56): the queue of
//! active entries whose words no person has decided on, and the decision.
//! Lore's own gotchas are not queued here: their words are a fix's, which
//! the fix review decides.

use sqlx::{PgConnection, PgPool};
use uuid::Uuid;

use super::{ENTRY_COLUMNS, entries_with_solutions, fetch_entry};
use lore_types::Error;
use lore_types::knowledge::Entry;
use lore_types::scope::ProjectScope;

/// A project's entries waiting for a person, most recently written first.
pub async fn entries_to_review(
    pool: &PgPool,
    scope: &ProjectScope,
    project: &str,
    limit: i64,
) -> Result<Vec<Entry>, Error> {
    scope.require(project)?;
    let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {ENTRY_COLUMNS} FROM knowledge_entries e
         WHERE e.project = $1 AND e.status = 'active' AND e.review IS NULL AND e.trust <> 'reviewed'
           AND e.origin->>'author' IS DISTINCT FROM 'lore'
         ORDER BY e.updated_at DESC, e.entry_id DESC
         LIMIT $2"
    )))
    .bind(project)
    .bind(limit)
    .fetch_all(pool)
    .await?;
    entries_with_solutions(pool, &rows).await
}

/// Locks an entry for its review and reads it.
pub async fn lock(connection: &mut PgConnection, scope: &ProjectScope, entry_id: Uuid) -> Result<Entry, Error> {
    sqlx::query("SELECT 1 FROM knowledge_entries WHERE entry_id = $1 FOR UPDATE")
        .bind(entry_id)
        .execute(&mut *connection)
        .await?;
    fetch_entry(connection, scope, entry_id).await
}

/// Records a person's decision on `entry_id`: approved, its trust becomes
/// reviewed. False when it was decided already or a person wrote it.
pub async fn review(
    connection: &mut PgConnection,
    entry_id: Uuid,
    approved: bool,
    by: &str,
    note: &str,
) -> Result<bool, Error> {
    crate::trust::record_review(connection, crate::trust::Reviewed::Entries, entry_id, approved, by, note).await
}
