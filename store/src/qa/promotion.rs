//! Promotions of proven patterns: the candidates, their evidence, and each
//! promotion with its history.

use chrono::{DateTime, Utc};
use sqlx::postgres::PgRow;
use sqlx::{PgConnection, PgPool, Row as _};
use uuid::Uuid;

use crate::knowledge::parse;
use crate::qa::{PATTERN_COLUMNS, pattern_from_row};
use lore_types::Error;
use lore_types::actions::StoredName as _;
use lore_types::qa::PromotionThresholds;
use lore_types::qa::significance::Counts;
use lore_types::qa::{Pattern, Promotion, PromotionEvent, PromotionStatus};
use lore_types::scope::ProjectScope;

/// Patterns over the promotion thresholds with no open promotion.
pub async fn promotion_candidates(
    pool: &PgPool,
    scope: &ProjectScope,
    project: &str,
    thresholds: &PromotionThresholds,
    limit: i64,
) -> Result<Vec<Pattern>, Error> {
    let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {PATTERN_COLUMNS} FROM qa_patterns p
         WHERE project = $1 AND ($2::text[] IS NULL OR project = ANY($2)) AND status = 'active'
           AND prevented_count + failed_anyway_count > 0
           AND prevented_count::float8 / (prevented_count + failed_anyway_count) >= $3
           AND task_count >= $4 AND confidence >= $5
           AND NOT EXISTS (SELECT 1 FROM qa_promotions r WHERE r.pattern_id = p.pattern_id
                           AND r.status IN ('pending', 'approved', 'published'))
         ORDER BY prevented_count::float8 / (prevented_count + failed_anyway_count) * confidence DESC, pattern_id
         LIMIT $6"
    )))
    .bind(project)
    .bind(scope.sql_filter())
    .bind(thresholds.min_effectiveness)
    .bind(thresholds.min_tasks)
    .bind(thresholds.min_confidence)
    .bind(limit)
    .fetch_all(pool)
    .await?;
    Ok(rows.iter().map(pattern_from_row).collect::<Result<_, _>>()?)
}

/// Per pattern, the tasks whose warning about it was scored, shown and held
/// out, and how many of them failed on it anyway. Tasks, not deliveries: a
/// task briefed several times before its result counts once.
pub async fn pattern_evidence(
    pool: &PgPool,
    pattern_ids: &[Uuid],
) -> Result<std::collections::HashMap<Uuid, (Counts, Counts)>, Error> {
    let rows = sqlx::query(
        "SELECT pattern_id, held_out, count(DISTINCT task_id) AS tasks,
                count(DISTINCT task_id) FILTER (WHERE outcome = 'failed_anyway') AS failed
         FROM qa_warning_deliveries
         WHERE pattern_id = ANY($1) AND outcome IN ('prevented', 'failed_anyway', 'unrelated')
         GROUP BY pattern_id, held_out",
    )
    .bind(pattern_ids)
    .fetch_all(pool)
    .await?;
    let mut evidence: std::collections::HashMap<Uuid, (Counts, Counts)> =
        pattern_ids.iter().map(|id| (*id, Default::default())).collect();
    for row in &rows {
        let counts = Counts {
            tasks: row.get::<i64, _>("tasks").max(0) as u64,
            failed: row.get::<i64, _>("failed").max(0) as u64,
        };
        let entry = evidence.entry(row.get("pattern_id")).or_default();
        if row.get::<bool, _>("held_out") {
            entry.1 = counts;
        } else {
            entry.0 = counts;
        }
    }
    Ok(evidence)
}

/// Example failures of a pattern for its proposal: task and message.
pub async fn example_failures(
    pool: &PgPool,
    pattern_id: Uuid,
    limit: i64,
) -> Result<Vec<(String, String, String)>, Error> {
    let rows = sqlx::query(
        "SELECT DISTINCT ON (f.task_id) f.task_id, f.task_title, o.message
         FROM qa_pattern_occurrences o JOIN qa_failures f USING (failure_id)
         WHERE o.pattern_id = $1 ORDER BY f.task_id, o.occurred_at DESC LIMIT $2",
    )
    .bind(pattern_id)
    .bind(limit)
    .fetch_all(pool)
    .await?;
    Ok(rows.iter().map(|row| (row.get("task_id"), row.get("task_title"), row.get("message"))).collect())
}

const PROMOTION_COLUMNS: &str = "promotion_id, project, pattern_id, status, markdown, entry_id, instructions";

fn promotion_from_row(row: &PgRow) -> Result<Promotion, sqlx::Error> {
    let status: String = row.try_get("status")?;
    Ok(Promotion {
        promotion_id: row.try_get("promotion_id")?,
        project: row.try_get("project")?,
        pattern_id: row.try_get("pattern_id")?,
        status: parse("status", &status)?,
        markdown: row.try_get("markdown")?,
        entry_id: row.try_get("entry_id")?,
        history: Vec::new(),
        instructions: row.try_get("instructions")?,
    })
}

async fn attach_history(connection: &mut PgConnection, promotions: &mut [Promotion]) -> Result<(), Error> {
    let ids: Vec<Uuid> = promotions.iter().map(|promotion| promotion.promotion_id).collect();
    let rows = sqlx::query(
        "SELECT promotion_id, status, actor, note, at FROM qa_promotion_events
         WHERE promotion_id = ANY($1) ORDER BY event_id",
    )
    .bind(&ids)
    .fetch_all(connection)
    .await?;
    for row in &rows {
        let promotion_id: Uuid = row.get("promotion_id");
        let status: String = row.get("status");
        let event = PromotionEvent {
            status: parse("status", &status)?,
            actor: row.get("actor"),
            note: row.get("note"),
            at: row.get::<DateTime<Utc>, _>("at"),
        };
        if let Some(promotion) = promotions.iter_mut().find(|promotion| promotion.promotion_id == promotion_id) {
            promotion.history.push(event);
        }
    }
    Ok(())
}

/// A promotion with its history; locked when `lock` (for a review).
pub async fn promotion(
    connection: &mut PgConnection,
    scope: &ProjectScope,
    promotion_id: Uuid,
    lock: bool,
) -> Result<Option<Promotion>, Error> {
    let row = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {PROMOTION_COLUMNS} FROM qa_promotions
         WHERE promotion_id = $1 AND ($2::text[] IS NULL OR project = ANY($2)) {}",
        if lock { "FOR UPDATE" } else { "" }
    )))
    .bind(promotion_id)
    .bind(scope.sql_filter())
    .fetch_optional(&mut *connection)
    .await?;
    let Some(row) = row else { return Ok(None) };
    let mut promotions = [promotion_from_row(&row)?];
    attach_history(connection, &mut promotions).await?;
    let [promotion] = promotions;
    Ok(Some(promotion))
}

/// Stores a pending promotion; false when the pattern already has an open
/// one.
pub async fn insert_promotion(
    connection: &mut PgConnection,
    promotion: &Promotion,
    actor: &str,
) -> Result<bool, Error> {
    let inserted = sqlx::query(
        "INSERT INTO qa_promotions (promotion_id, project, pattern_id, status, markdown)
         VALUES ($1, $2, $3, 'pending', $4) ON CONFLICT DO NOTHING",
    )
    .bind(promotion.promotion_id)
    .bind(&promotion.project)
    .bind(promotion.pattern_id)
    .bind(&promotion.markdown)
    .execute(&mut *connection)
    .await?;
    if inserted.rows_affected() == 0 {
        return Ok(false);
    }
    add_event(connection, promotion, PromotionStatus::Pending, actor, "").await?;
    Ok(true)
}

/// Moves a promotion to `status`, with the event in its history.
pub async fn set_promotion_status(
    connection: &mut PgConnection,
    promotion: &Promotion,
    status: PromotionStatus,
    entry_id: Option<Uuid>,
    actor: &str,
    note: &str,
) -> Result<(), Error> {
    sqlx::query(
        "UPDATE qa_promotions SET status = $2, entry_id = coalesce($3, entry_id), updated_at = now()
         WHERE promotion_id = $1",
    )
    .bind(promotion.promotion_id)
    .bind(status.as_str())
    .bind(entry_id)
    .execute(&mut *connection)
    .await?;
    add_event(connection, promotion, status, actor, note).await
}

async fn add_event(
    connection: &mut PgConnection,
    promotion: &Promotion,
    status: PromotionStatus,
    actor: &str,
    note: &str,
) -> Result<(), Error> {
    sqlx::query(
        "INSERT INTO qa_promotion_events (promotion_id, project, status, actor, note) VALUES ($1, $2, $3, $4, $5)",
    )
    .bind(promotion.promotion_id)
    .bind(&promotion.project)
    .bind(status.as_str())
    .bind(actor)
    .bind(note)
    .execute(connection)
    .await?;
    Ok(())
}

/// Records where a promotion stands in its instructions file.
pub async fn set_promotion_instructions(
    connection: &mut PgConnection,
    promotion_id: Uuid,
    instructions: &str,
) -> Result<(), Error> {
    sqlx::query("UPDATE qa_promotions SET instructions = $2, updated_at = now() WHERE promotion_id = $1")
        .bind(promotion_id)
        .bind(instructions)
        .execute(connection)
        .await?;
    Ok(())
}

pub async fn set_pattern_status(connection: &mut PgConnection, pattern_id: Uuid, status: &str) -> Result<(), Error> {
    sqlx::query("UPDATE qa_patterns SET status = $2, updated_at = now() WHERE pattern_id = $1 AND status <> 'merged'")
        .bind(pattern_id)
        .bind(status)
        .execute(connection)
        .await?;
    Ok(())
}

/// Newest first, paged by (created_at, promotion_id).
pub async fn list_promotions(
    pool: &PgPool,
    scope: &ProjectScope,
    project: &str,
    statuses: &[PromotionStatus],
    limit: i64,
    after: Option<(DateTime<Utc>, Uuid)>,
) -> Result<Vec<(Promotion, DateTime<Utc>)>, Error> {
    let statuses: Vec<&str> = statuses.iter().map(|status| status.as_str()).collect();
    let mut connection = pool.acquire().await?;
    let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {PROMOTION_COLUMNS}, created_at FROM qa_promotions
         WHERE project = $1 AND ($2::text[] IS NULL OR project = ANY($2))
           AND (cardinality($3::text[]) = 0 OR status = ANY($3))
           AND ($4::timestamptz IS NULL OR (created_at, promotion_id) < ($4, $5))
         ORDER BY created_at DESC, promotion_id DESC LIMIT $6"
    )))
    .bind(project)
    .bind(scope.sql_filter())
    .bind(&statuses)
    .bind(after.map(|(at, _)| at))
    .bind(after.map(|(_, id)| id))
    .bind(limit)
    .fetch_all(&mut *connection)
    .await?;
    let mut promotions: Vec<Promotion> = rows.iter().map(promotion_from_row).collect::<Result<_, _>>()?;
    attach_history(&mut connection, &mut promotions).await?;
    Ok(promotions.into_iter().zip(rows.iter().map(|row| row.get("created_at"))).collect())
}

/// A transaction holding the lock of one instructions file, so two
/// replicas never write it at once; it is released with the transaction.
pub async fn lock_instructions_file(
    pool: &PgPool,
    path: &str,
) -> Result<sqlx::Transaction<'static, sqlx::Postgres>, Error> {
    let mut transaction = pool.begin().await?;
    sqlx::query("SELECT pg_advisory_xact_lock(hashtextextended('lore instructions ' || $1, 0))")
        .bind(path)
        .execute(&mut *transaction)
        .await?;
    Ok(transaction)
}
