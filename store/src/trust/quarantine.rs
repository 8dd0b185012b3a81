//! What the injection screen held, and what people decided.

use sqlx::postgres::PgRow;
use sqlx::types::Json;
use sqlx::{PgConnection, PgPool, Row as _};
use uuid::Uuid;

use lore_types::Error;
use lore_types::actions::StoredName as _;
use lore_types::actions::query::Position;
use lore_types::scope::ProjectScope;
use lore_types::trust::Held;
use lore_types::trust::Origin;
use lore_types::trust::quarantine::{ItemKind, QuarantineFilter, QuarantineStatus, Quarantined};

const COLUMNS: &str = "quarantine_id, project, item_kind, item_id, part, excerpt, reasons, score, origin, status, \
     caught_at, decided_at, decided_by, note";

fn decode<T: lore_types::actions::StoredName>(row: &PgRow, column: &str) -> Result<T, sqlx::Error> {
    let text: String = row.try_get(column)?;
    T::parse(&text).ok_or_else(|| sqlx::Error::ColumnDecode {
        index: column.into(),
        source: format!("unexpected value {text:?}").into(),
    })
}

fn from_row(row: &PgRow) -> Result<Quarantined, sqlx::Error> {
    let origin: Json<serde_json::Value> = row.try_get("origin")?;
    Ok(Quarantined {
        quarantine_id: row.try_get("quarantine_id")?,
        project: row.try_get("project")?,
        item_kind: decode(row, "item_kind")?,
        item_id: row.try_get("item_id")?,
        part: row.try_get("part")?,
        excerpt: row.try_get("excerpt")?,
        reasons: row.try_get("reasons")?,
        score: row.try_get("score")?,
        origin: Origin::from_json(&origin.0),
        status: decode(row, "status")?,
        caught_at: row.try_get("caught_at")?,
        decided_at: row.try_get("decided_at")?,
        decided_by: row.try_get("decided_by")?,
        note: row.try_get("note")?,
    })
}

/// Records what the screen held, inside the transaction that stores the
/// item, and says whether it stays held: the very text a person already
/// released is not held again (false); a new text of the same part, or
/// one that was erased, is held anew.
pub async fn hold(
    connection: &mut PgConnection,
    project: &str,
    item_kind: ItemKind,
    item_id: Uuid,
    held: &Held,
    origin: &Origin,
) -> Result<bool, Error> {
    let stays = sqlx::query(
        "INSERT INTO quarantine AS q (quarantine_id, project, item_kind, item_id, part, excerpt, reasons, score, origin)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
         ON CONFLICT (item_kind, item_id, part) DO UPDATE SET
             status = 'held', excerpt = EXCLUDED.excerpt, reasons = EXCLUDED.reasons, score = EXCLUDED.score,
             origin = EXCLUDED.origin, caught_at = now(), decided_at = NULL, decided_by = NULL, note = ''
         WHERE q.status = 'held' OR q.excerpt <> EXCLUDED.excerpt
         RETURNING 1",
    )
    .bind(Uuid::now_v7())
    .bind(project)
    .bind(item_kind.as_str())
    .bind(item_id)
    .bind(&held.part)
    .bind(&held.excerpt)
    .bind(&held.reasons)
    .bind(held.score.clamp(0.0, 1.0))
    .bind(Json(origin.to_json()))
    .fetch_optional(connection)
    .await?;
    Ok(stays.is_some())
}

/// The queue, newest first, after `after` (the last row of the previous
/// page).
pub async fn list(
    pool: &PgPool,
    scope: &ProjectScope,
    filter: &QuarantineFilter,
    limit: i64,
    after: Option<Position>,
) -> Result<Vec<Quarantined>, Error> {
    let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM quarantine
         WHERE project = $1 AND ($2::text[] IS NULL OR project = ANY($2))
           AND ($3::text IS NULL OR status = $3) AND ($4::text IS NULL OR item_kind = $4)
           AND ($5::timestamptz IS NULL OR (caught_at, quarantine_id) < ($5, $6))
         ORDER BY caught_at DESC, quarantine_id DESC
         LIMIT $7"
    )))
    .bind(&filter.project)
    .bind(scope.sql_filter())
    .bind(filter.status.map(|status| status.as_str()))
    .bind(filter.item_kind.map(|kind| kind.as_str()))
    .bind(after.map(|position| position.occurred_at))
    .bind(after.map(|position| position.action_id))
    .bind(limit)
    .fetch_all(pool)
    .await?;
    rows.iter().map(from_row).collect::<Result<_, _>>().map_err(Error::from)
}

/// How many items of a project wait for a decision.
pub async fn held_count(pool: &PgPool, scope: &ProjectScope, project: &str) -> Result<i64, Error> {
    Ok(sqlx::query_scalar(
        "SELECT count(*) FROM quarantine
         WHERE project = $1 AND ($2::text[] IS NULL OR project = ANY($2)) AND status = 'held'",
    )
    .bind(project)
    .bind(scope.sql_filter())
    .fetch_one(pool)
    .await?)
}

/// One row, locked for a decision.
pub async fn lock(
    connection: &mut PgConnection,
    scope: &ProjectScope,
    quarantine_id: Uuid,
) -> Result<Quarantined, Error> {
    let row = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM quarantine
         WHERE quarantine_id = $1 AND ($2::text[] IS NULL OR project = ANY($2))
         FOR UPDATE"
    )))
    .bind(quarantine_id)
    .bind(scope.sql_filter())
    .fetch_optional(connection)
    .await?;
    match row {
        Some(row) => Ok(from_row(&row)?),
        None => Err(Error::NotFound(format!("quarantined item {quarantine_id}"))),
    }
}

/// Records a person's decision; an erased item's excerpt goes with it.
pub async fn decide(
    connection: &mut PgConnection,
    quarantine_id: Uuid,
    status: QuarantineStatus,
    by: &str,
    note: &str,
) -> Result<Quarantined, Error> {
    let row = sqlx::query(sqlx::AssertSqlSafe(format!(
        "UPDATE quarantine SET status = $2, decided_at = now(), decided_by = $3, note = $4,
                excerpt = CASE WHEN $2 = 'erased' THEN '' ELSE excerpt END
         WHERE quarantine_id = $1
         RETURNING {COLUMNS}"
    )))
    .bind(quarantine_id)
    .bind(status.as_str())
    .bind(by)
    .bind(note)
    .fetch_one(connection)
    .await?;
    Ok(from_row(&row)?)
}

/// The parts of some items the screen held and nobody released (a
/// failure's messages, by index).
pub async fn held_parts(
    connection: &mut PgConnection,
    item_kind: ItemKind,
    item_id: Uuid,
) -> Result<Vec<String>, Error> {
    Ok(sqlx::query_scalar(
        "SELECT part FROM quarantine WHERE item_kind = $1 AND item_id = $2 AND status <> 'released' ORDER BY part",
    )
    .bind(item_kind.as_str())
    .bind(item_id)
    .fetch_all(connection)
    .await?)
}
