//! Draft learnings and their review.

use sqlx::postgres::PgRow;
use sqlx::types::Json;
use sqlx::{PgConnection, PgPool, Row as _};
use uuid::Uuid;

use lore_types::Error;
use lore_types::actions::StoredName as _;
use lore_types::actions::query::Position;
use lore_types::knowledge::drafts::{Draft, DraftSource, DraftStatus};
use lore_types::scope::ProjectScope;
use lore_types::trust::Origin;

const DRAFT_COLUMNS: &str = "draft_id, project, epic_id, session_id, title, category, body, tags, status, reviewer, \
     review_note, entry_id, created_at, reviewed_at, origin";

fn draft_from_row(row: &PgRow) -> Result<Draft, sqlx::Error> {
    let epic_id: Option<String> = row.try_get("epic_id")?;
    let session_id: Option<Uuid> = row.try_get("session_id")?;
    let source = match (epic_id, session_id) {
        (Some(epic), _) => DraftSource::Epic(epic),
        (None, Some(session)) => DraftSource::Session(session),
        (None, None) => {
            return Err(sqlx::Error::ColumnDecode {
                index: "epic_id".into(),
                source: "a draft without a source".into(),
            });
        }
    };
    let status: String = row.try_get("status")?;
    Ok(Draft {
        draft_id: row.try_get("draft_id")?,
        project: row.try_get("project")?,
        source,
        title: row.try_get("title")?,
        category: row.try_get("category")?,
        body: row.try_get("body")?,
        tags: row.try_get("tags")?,
        status: DraftStatus::parse(&status).ok_or_else(|| sqlx::Error::ColumnDecode {
            index: "status".into(),
            source: format!("unexpected value {status:?}").into(),
        })?,
        reviewer: row.try_get("reviewer")?,
        review_note: row.try_get("review_note")?,
        entry_id: row.try_get("entry_id")?,
        created_at: row.try_get("created_at")?,
        reviewed_at: row.try_get("reviewed_at")?,
        origin: Origin::from_json(&row.try_get::<Json<serde_json::Value>, _>("origin")?.0),
    })
}

fn source_columns(source: &DraftSource) -> (Option<&str>, Option<Uuid>) {
    match source {
        DraftSource::Epic(epic) => (Some(epic), None),
        DraftSource::Session(session) => (None, Some(*session)),
    }
}

/// Stores a new draft (pending or quarantined); a draft already stored
/// under its id (a concurrent replay) is returned instead, with `true`.
pub async fn insert(
    connection: &mut PgConnection,
    scope: &ProjectScope,
    draft: &Draft,
) -> Result<(Draft, bool), Error> {
    scope.require(&draft.project)?;
    let (epic_id, session_id) = source_columns(&draft.source);
    let inserted = sqlx::query(sqlx::AssertSqlSafe(format!(
        "INSERT INTO knowledge_drafts (draft_id, project, epic_id, session_id, title, category, body, tags, status,
             origin)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
         ON CONFLICT (draft_id) DO NOTHING
         RETURNING {DRAFT_COLUMNS}"
    )))
    .bind(draft.draft_id)
    .bind(&draft.project)
    .bind(epic_id)
    .bind(session_id)
    .bind(&draft.title)
    .bind(&draft.category)
    .bind(&draft.body)
    .bind(&draft.tags)
    .bind(draft.status.as_str())
    .bind(Json(draft.origin.to_json()))
    .fetch_optional(&mut *connection)
    .await?;
    match inserted {
        Some(row) => Ok((draft_from_row(&row)?, false)),
        None => {
            let existing = lock(connection, scope, draft.draft_id).await?;
            match existing {
                Some(existing) if existing.project == draft.project && existing.source == draft.source => {
                    Ok((existing, true))
                }
                _ => Err(Error::AlreadyExists(format!("draft_id {} is already used by another draft", draft.draft_id))),
            }
        }
    }
}

pub async fn get(pool: &PgPool, scope: &ProjectScope, draft_id: Uuid) -> Result<Option<Draft>, Error> {
    let row = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {DRAFT_COLUMNS} FROM knowledge_drafts
         WHERE draft_id = $1 AND ($2::text[] IS NULL OR project = ANY($2))"
    )))
    .bind(draft_id)
    .bind(scope.sql_filter())
    .fetch_optional(pool)
    .await?;
    Ok(row.as_ref().map(draft_from_row).transpose()?)
}

/// Locks the draft for the rest of the transaction.
pub async fn lock(connection: &mut PgConnection, scope: &ProjectScope, draft_id: Uuid) -> Result<Option<Draft>, Error> {
    let row = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {DRAFT_COLUMNS} FROM knowledge_drafts
         WHERE draft_id = $1 AND ($2::text[] IS NULL OR project = ANY($2)) FOR UPDATE"
    )))
    .bind(draft_id)
    .bind(scope.sql_filter())
    .fetch_optional(connection)
    .await?;
    Ok(row.as_ref().map(draft_from_row).transpose()?)
}

/// A page of a project's drafts in one status, newest first.
pub async fn list(
    pool: &PgPool,
    scope: &ProjectScope,
    project: &str,
    status: DraftStatus,
    limit: i64,
    after: Option<Position>,
) -> Result<Vec<Draft>, Error> {
    let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {DRAFT_COLUMNS} FROM knowledge_drafts
         WHERE project = $1 AND ($2::text[] IS NULL OR project = ANY($2)) AND status = $3
           AND ($4::timestamptz IS NULL OR (created_at, draft_id) < ($4, $5))
         ORDER BY created_at DESC, draft_id DESC
         LIMIT $6"
    )))
    .bind(project)
    .bind(scope.sql_filter())
    .bind(status.as_str())
    .bind(after.map(|position| position.occurred_at))
    .bind(after.map(|position| position.action_id))
    .bind(limit)
    .fetch_all(pool)
    .await?;
    Ok(rows.iter().map(draft_from_row).collect::<Result<_, _>>()?)
}

/// A quarantined draft released by a person: it goes to review.
pub async fn release(connection: &mut PgConnection, draft_id: Uuid) -> Result<(), Error> {
    sqlx::query("UPDATE knowledge_drafts SET status = 'pending' WHERE draft_id = $1 AND status = 'quarantined'")
        .bind(draft_id)
        .execute(connection)
        .await?;
    Ok(())
}

/// A quarantined draft erased by a person: rejected, its text kept in the
/// queue no more.
pub async fn erase(connection: &mut PgConnection, draft_id: Uuid, by: &str) -> Result<(), Error> {
    sqlx::query(
        "UPDATE knowledge_drafts SET status = 'rejected', reviewer = $2, reviewed_at = now(),
                review_note = 'erased from the quarantine', body = '', title = 'erased draft'
         WHERE draft_id = $1 AND status = 'quarantined'",
    )
    .bind(draft_id)
    .bind(by)
    .execute(connection)
    .await?;
    Ok(())
}

/// Stores a review: the decision, the reviewer, the edits and the entry.
pub async fn record_review(connection: &mut PgConnection, draft: &Draft) -> Result<(), Error> {
    sqlx::query(
        "UPDATE knowledge_drafts
         SET status = $2, reviewer = $3, review_note = $4, reviewed_at = $5, entry_id = $6,
             title = $7, category = $8, body = $9, tags = $10
         WHERE draft_id = $1",
    )
    .bind(draft.draft_id)
    .bind(draft.status.as_str())
    .bind(&draft.reviewer)
    .bind(&draft.review_note)
    .bind(draft.reviewed_at)
    .bind(draft.entry_id)
    .bind(&draft.title)
    .bind(&draft.category)
    .bind(&draft.body)
    .bind(&draft.tags)
    .execute(connection)
    .await?;
    Ok(())
}
