//! What trust holds: quarantined text, erasures, and a person's reviews of
//! agents' words.

pub mod erasure;
pub mod quarantine;

use chrono::{DateTime, Utc};
use sqlx::postgres::PgRow;
use sqlx::{PgConnection, Row as _};
use uuid::Uuid;

use lore_types::Error;
use lore_types::trust::ReviewRecord;

/// The decision in a row's `review`, `reviewed_by`, `reviewed_at` and
/// `review_note` (the columns a reviewed table shares), if one was made.
pub(crate) fn review_from_row(row: &PgRow) -> Result<Option<ReviewRecord>, sqlx::Error> {
    let Some(review) = row.try_get::<Option<String>, _>("review")? else {
        return Ok(None);
    };
    Ok(Some(ReviewRecord {
        approved: review == "approved",
        by: row.try_get::<Option<String>, _>("reviewed_by")?.unwrap_or_default(),
        at: row.try_get::<Option<DateTime<Utc>>, _>("reviewed_at")?.unwrap_or_default(),
        note: row.try_get("review_note")?,
    }))
}

/// The tables whose rows carry agents' words a person reviews.
#[derive(Clone, Copy)]
pub(crate) enum Reviewed {
    FixAttempts,
    Entries,
}

/// Records a person's decision on a row not decided yet and not a
/// person's own: approved, its trust becomes reviewed. False when there
/// is no such row.
pub(crate) async fn record_review(
    connection: &mut PgConnection,
    table: Reviewed,
    id: Uuid,
    approved: bool,
    by: &str,
    note: &str,
) -> Result<bool, Error> {
    let (table, id_column) = match table {
        Reviewed::FixAttempts => ("qa_fix_attempts", "attempt_id"),
        Reviewed::Entries => ("knowledge_entries", "entry_id"),
    };
    let decided = sqlx::query(sqlx::AssertSqlSafe(format!(
        "UPDATE {table} SET review = $2, reviewed_by = $3, reviewed_at = now(), review_note = $4,
                trust = CASE WHEN $2 = 'approved' THEN 'reviewed' ELSE trust END
         WHERE {id_column} = $1 AND review IS NULL AND trust <> 'reviewed'"
    )))
    .bind(id)
    .bind(if approved { "approved" } else { "rejected" })
    .bind(by)
    .bind(note)
    .execute(connection)
    .await?;
    Ok(decided.rows_affected() == 1)
}
