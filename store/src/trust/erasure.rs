//! What erasing an entry removes besides the entry: the drafts it was
//! approved from, the fix attempt a gotcha was made from (kept as a QA
//! record, but never made into a fix or gotcha again) and the pattern fix
//! taken from it, the supersession it caused, the text the quarantine kept
//! of it, and its label in the injection ledger.

use sqlx::{PgConnection, Row as _};
use uuid::Uuid;

use lore_types::Error;

/// What went with an entry.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Derived {
    pub drafts: u64,
    pub attempts_blocked: u64,
    pub pattern_fixes: u64,
    pub revived: u64,
    /// The document's file, when it came from a folder: (root, path).
    pub document: Option<(String, String)>,
}

/// Removes what derives from `entry_id` (a gotcha's `attempt_id` given),
/// in the caller's transaction, before the entry itself is deleted.
pub async fn erase_derived(
    connection: &mut PgConnection,
    project: &str,
    entry_id: Uuid,
    attempt_id: Option<Uuid>,
    by: &str,
    note: &str,
) -> Result<Derived, Error> {
    let mut derived = Derived {
        drafts: sqlx::query("DELETE FROM knowledge_drafts WHERE entry_id = $1")
            .bind(entry_id)
            .execute(&mut *connection)
            .await?
            .rows_affected(),
        ..Derived::default()
    };
    if let Some(attempt_id) = attempt_id {
        // An erased quarantine record of the attempt keeps every later
        // verification or release from making its words a fix again.
        derived.attempts_blocked = sqlx::query(
            "INSERT INTO quarantine AS q (quarantine_id, project, item_kind, item_id, part, excerpt, reasons, score,
                                          status, decided_at, decided_by, note)
             VALUES ($1, $2, 'fix_attempt', $3, 'erased', '', ARRAY['erased with the gotcha made from it'], 0,
                     'erased', now(), $4, $5)
             ON CONFLICT (item_kind, item_id, part) DO UPDATE SET status = 'erased', excerpt = '',
                 decided_at = now(), decided_by = EXCLUDED.decided_by, note = EXCLUDED.note",
        )
        .bind(Uuid::now_v7())
        .bind(project)
        .bind(attempt_id)
        .bind(by)
        .bind(note)
        .execute(&mut *connection)
        .await?
        .rows_affected();
        derived.pattern_fixes = sqlx::query(
            "UPDATE qa_patterns SET recommended_fix = '', fix_trust = NULL, fix_attempt_id = NULL, updated_at = now()
             WHERE fix_attempt_id = $1",
        )
        .bind(attempt_id)
        .execute(&mut *connection)
        .await?
        .rows_affected();
    }
    derived.revived = sqlx::query(
        "UPDATE knowledge_entries SET status = 'active', superseded_by = NULL, updated_at = now()
         WHERE superseded_by = $1 AND status = 'superseded'",
    )
    .bind(entry_id)
    .execute(&mut *connection)
    .await?
    .rows_affected();
    sqlx::query(
        "UPDATE quarantine SET status = 'erased', excerpt = '', decided_at = COALESCE(decided_at, now()),
                decided_by = COALESCE(decided_by, $2)
         WHERE item_kind = 'entry' AND item_id = $1",
    )
    .bind(entry_id)
    .bind(by)
    .execute(&mut *connection)
    .await?;
    sqlx::query("UPDATE injection_items SET label = '[erased]' WHERE item_id = $1")
        .bind(entry_id)
        .execute(&mut *connection)
        .await?;
    let document = sqlx::query("SELECT source_root, source_path FROM knowledge_entries WHERE entry_id = $1")
        .bind(entry_id)
        .fetch_optional(&mut *connection)
        .await?;
    if let Some(row) = document {
        let (root, path): (Option<String>, Option<String>) = (row.try_get("source_root")?, row.try_get("source_path")?);
        derived.document = root.zip(path);
    }
    Ok(derived)
}
