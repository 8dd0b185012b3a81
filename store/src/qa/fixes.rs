//! Fix attempts: recorded in order, the first success resolving its
//! failure and teaching its patterns, verified by later task results.

use chrono::{DateTime, Utc};
use sqlx::postgres::PgRow;
use sqlx::types::Json;
use sqlx::{PgConnection, PgPool, Row as _};
use uuid::Uuid;

use super::{PATTERN_COLUMNS, pattern_from_row};
use crate::knowledge::parse;
use lore_types::Error;
use lore_types::actions::StoredName as _;
use lore_types::qa::{FixAttempt, FixToReview, Pattern};
use lore_types::scope::ProjectScope;
use lore_types::trust::Origin;

const ATTEMPT_COLUMNS: &str = "a.attempt_id, a.failure_id, a.attempt_number, a.approach, a.files_changed, a.summary, \
     a.outcome, a.qa_result, a.recorded_at, a.trust, a.origin, a.review, a.reviewed_by, a.reviewed_at, \
     a.review_note, EXISTS (SELECT 1 FROM quarantine q WHERE q.item_kind = 'fix_attempt' AND q.item_id = a.attempt_id \
             AND q.status <> 'released') AS held";

fn attempt_from_row(row: &PgRow) -> Result<FixAttempt, sqlx::Error> {
    let outcome: String = row.try_get("outcome")?;
    Ok(FixAttempt {
        attempt_id: row.try_get("attempt_id")?,
        failure_id: row.try_get("failure_id")?,
        attempt_number: row.try_get("attempt_number")?,
        approach: row.try_get("approach")?,
        files_changed: row.try_get("files_changed")?,
        summary: row.try_get("summary")?,
        outcome: parse("outcome", &outcome)?,
        qa_result: row.try_get("qa_result")?,
        recorded_at: row.try_get("recorded_at")?,
        trust: parse("trust", &row.try_get::<String, _>("trust")?)?,
        origin: Origin::from_json(&row.try_get::<Json<serde_json::Value>, _>("origin")?.0),
        held: row.try_get("held")?,
        review: crate::trust::review_from_row(row)?,
    })
}

/// A project's successful fixes whose words no person has decided on yet,
/// newest first: neither reviewed nor rejected, with words to read, and
/// not held by the screen (the quarantine queue has those).
pub async fn fixes_to_review(
    pool: &PgPool,
    scope: &ProjectScope,
    project: &str,
    limit: i64,
) -> Result<Vec<FixToReview>, Error> {
    scope.require(project)?;
    let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {ATTEMPT_COLUMNS}, f.task_id,
                ARRAY(SELECT DISTINCT p.template FROM qa_pattern_occurrences o JOIN qa_patterns p USING (pattern_id)
                      WHERE o.failure_id = a.failure_id ORDER BY p.template) AS templates
         FROM qa_fix_attempts a JOIN qa_failures f USING (failure_id)
         WHERE a.project = $1 AND a.outcome = 'success' AND a.review IS NULL AND a.trust <> 'reviewed'
           AND (a.approach <> '' OR a.summary <> '')
           AND NOT EXISTS (SELECT 1 FROM quarantine q WHERE q.item_kind = 'fix_attempt'
                           AND q.item_id = a.attempt_id AND q.status <> 'released')
         ORDER BY a.recorded_at DESC, a.attempt_id DESC
         LIMIT $2"
    )))
    .bind(project)
    .bind(limit)
    .fetch_all(pool)
    .await?;
    rows.iter()
        .map(|row| {
            Ok(FixToReview {
                attempt: attempt_from_row(row)?,
                task_id: row.try_get("task_id")?,
                templates: row.try_get("templates")?,
            })
        })
        .collect::<Result<_, sqlx::Error>>()
        .map_err(Error::from)
}

/// Records a person's decision on `attempt_id` (an approved fix becomes
/// reviewed); false when it was decided already.
pub async fn review_attempt(
    connection: &mut PgConnection,
    attempt_id: Uuid,
    approved: bool,
    by: &str,
    note: &str,
) -> Result<bool, Error> {
    crate::trust::record_review(connection, crate::trust::Reviewed::FixAttempts, attempt_id, approved, by, note).await
}

/// An approved fix becomes the fix of its failure's patterns, unless a
/// person wrote a pattern's fix in their own words.
pub async fn adopt_reviewed_fix(connection: &mut PgConnection, attempt: &FixAttempt) -> Result<(), Error> {
    sqlx::query(
        "UPDATE qa_patterns SET recommended_fix = $3, fix_trust = 'reviewed', fix_attempt_id = $2,
                common_cause = CASE WHEN common_cause = '' THEN $4 ELSE common_cause END, updated_at = now()
         WHERE pattern_id IN (SELECT pattern_id FROM qa_pattern_occurrences WHERE failure_id = $1)
           AND $3 <> '' AND NOT (fix_trust = 'reviewed' AND fix_attempt_id IS NULL)",
    )
    .bind(attempt.failure_id)
    .bind(attempt.attempt_id)
    .bind(&attempt.approach)
    .bind(&attempt.summary)
    .execute(connection)
    .await?;
    Ok(())
}

/// A rejected fix is no pattern's fix any more.
pub async fn drop_rejected_fix(connection: &mut PgConnection, attempt_id: Uuid) -> Result<(), Error> {
    sqlx::query(
        "UPDATE qa_patterns SET recommended_fix = '', fix_trust = NULL, fix_attempt_id = NULL, updated_at = now()
         WHERE fix_attempt_id = $1 AND fix_trust <> 'reviewed'",
    )
    .bind(attempt_id)
    .execute(connection)
    .await?;
    Ok(())
}

/// Fix attempts of the failures linked to a pattern, newest first.
pub async fn pattern_fixes(pool: &PgPool, pattern_id: Uuid, limit: i64) -> Result<Vec<FixAttempt>, Error> {
    let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {ATTEMPT_COLUMNS} FROM qa_fix_attempts a
         WHERE a.failure_id IN (SELECT failure_id FROM qa_pattern_occurrences WHERE pattern_id = $1)
         ORDER BY a.recorded_at DESC, a.attempt_number DESC LIMIT $2"
    )))
    .bind(pattern_id)
    .bind(limit)
    .fetch_all(pool)
    .await?;
    Ok(rows.iter().map(attempt_from_row).collect::<Result<_, _>>()?)
}

/// The failure's project and whether it is resolved, locked for the rest
/// of the transaction (attempts of one failure are numbered in order).
pub async fn lock_failure(
    connection: &mut PgConnection,
    scope: &ProjectScope,
    failure_id: Uuid,
) -> Result<(String, bool), Error> {
    let project: Option<String> = sqlx::query_scalar(
        "SELECT project FROM qa_failures WHERE failure_id = $1 AND ($2::text[] IS NULL OR project = ANY($2))",
    )
    .bind(failure_id)
    .bind(scope.sql_filter())
    .fetch_optional(&mut *connection)
    .await?;
    let project = project.ok_or_else(|| Error::NotFound(format!("failure {failure_id}")))?;
    // Attempts of one failure queue behind each other.
    sqlx::query("SELECT pg_advisory_xact_lock(hashtextextended($1::text, 11))")
        .bind(failure_id)
        .execute(&mut *connection)
        .await?;
    let resolved: bool =
        sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM qa_failure_resolutions WHERE failure_id = $1)")
            .bind(failure_id)
            .fetch_one(connection)
            .await?;
    Ok((project, resolved))
}

pub async fn attempt(connection: &mut PgConnection, attempt_id: Uuid) -> Result<Option<FixAttempt>, Error> {
    let row = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {ATTEMPT_COLUMNS} FROM qa_fix_attempts a WHERE attempt_id = $1"
    )))
    .bind(attempt_id)
    .fetch_optional(connection)
    .await?;
    Ok(row.as_ref().map(attempt_from_row).transpose()?)
}

pub async fn insert_attempt(connection: &mut PgConnection, project: &str, attempt: &FixAttempt) -> Result<(), Error> {
    let inserted = sqlx::query(
        "INSERT INTO qa_fix_attempts (attempt_id, project, failure_id, attempt_number, approach, files_changed,
             summary, outcome, qa_result, recorded_at, trust, origin)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
         ON CONFLICT (failure_id, attempt_number) DO NOTHING",
    )
    .bind(attempt.attempt_id)
    .bind(project)
    .bind(attempt.failure_id)
    .bind(attempt.attempt_number)
    .bind(&attempt.approach)
    .bind(&attempt.files_changed)
    .bind(&attempt.summary)
    .bind(attempt.outcome.as_str())
    .bind(&attempt.qa_result)
    .bind(attempt.recorded_at)
    .bind(attempt.trust.as_str())
    .bind(Json(attempt.origin.to_json()))
    .execute(connection)
    .await?;
    if inserted.rows_affected() == 0 {
        return Err(Error::AlreadyExists(format!(
            "attempt_number: attempt {} of failure {} is already recorded",
            attempt.attempt_number, attempt.failure_id
        )));
    }
    Ok(())
}

/// The attempt that resolved a failure, if one did.
pub async fn resolving_attempt(connection: &mut PgConnection, failure_id: Uuid) -> Result<Option<Uuid>, Error> {
    Ok(sqlx::query_scalar("SELECT resolving_attempt_id FROM qa_failure_resolutions WHERE failure_id = $1")
        .bind(failure_id)
        .fetch_optional(connection)
        .await?)
}

pub async fn attempt_count(connection: &mut PgConnection, failure_id: Uuid) -> Result<i64, Error> {
    Ok(sqlx::query_scalar("SELECT count(*) FROM qa_fix_attempts WHERE failure_id = $1")
        .bind(failure_id)
        .fetch_one(connection)
        .await?)
}

pub async fn resolve(
    connection: &mut PgConnection,
    project: &str,
    failure_id: Uuid,
    attempt_id: Uuid,
    attempts: i64,
) -> Result<(), Error> {
    sqlx::query(
        "INSERT INTO qa_failure_resolutions (failure_id, project, resolving_attempt_id, attempts)
         VALUES ($1, $2, $3, $4) ON CONFLICT (failure_id) DO NOTHING",
    )
    .bind(failure_id)
    .bind(project)
    .bind(attempt_id)
    .bind(attempts as i32)
    .execute(connection)
    .await?;
    Ok(())
}

/// The live patterns a failure's messages are linked to (following merges),
/// with the share of their failures' attempts that succeeded.
pub async fn failure_patterns(connection: &mut PgConnection, failure_id: Uuid) -> Result<Vec<(Pattern, f64)>, Error> {
    let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {PATTERN_COLUMNS},
                (SELECT coalesce(avg((a.outcome = 'success')::int), 0)::float8 FROM qa_fix_attempts a
                 WHERE a.failure_id IN (SELECT failure_id FROM qa_pattern_occurrences WHERE pattern_id = p.pattern_id))
                    AS fix_success_rate
         FROM qa_patterns p
         WHERE p.pattern_id IN (SELECT DISTINCT pattern_id FROM qa_pattern_occurrences WHERE failure_id = $1)
         ORDER BY p.pattern_id"
    )))
    .bind(failure_id)
    .fetch_all(connection)
    .await?;
    rows.iter()
        .map(|row| Ok((pattern_from_row(row)?, row.try_get("fix_success_rate")?)))
        .collect::<Result<_, sqlx::Error>>()
        .map_err(Error::from)
}

/// A successful fix fills a pattern's cause and fix when people left them
/// empty; the fix keeps the attempt's trust, so a briefing shows it only
/// once the attempt is verified.
pub async fn fill_from_fix(connection: &mut PgConnection, pattern_id: Uuid, attempt: &FixAttempt) -> Result<(), Error> {
    sqlx::query(
        "UPDATE qa_patterns SET
             common_cause = CASE WHEN common_cause = '' THEN $2 ELSE common_cause END,
             fix_trust = CASE WHEN recommended_fix = '' AND $3 <> '' THEN $4 ELSE fix_trust END,
             fix_attempt_id = CASE WHEN recommended_fix = '' AND $3 <> '' THEN $5 ELSE fix_attempt_id END,
             recommended_fix = CASE WHEN recommended_fix = '' THEN $3 ELSE recommended_fix END,
             updated_at = now()
         WHERE pattern_id = $1",
    )
    .bind(pattern_id)
    .bind(&attempt.summary)
    .bind(&attempt.approach)
    .bind(attempt.trust.as_str())
    .bind(attempt.attempt_id)
    .execute(connection)
    .await?;
    Ok(())
}

/// A passing result of a task verifies the successful fix attempts of its
/// failures recorded before it (their own "it worked" did not): each
/// becomes verified, and so do the gotchas built from it; a pattern of
/// their failures whose fix is an unverified agent's (or none) takes the
/// verified one. Attempts the screen holds stay as they are.
pub async fn verify_fixes(
    connection: &mut PgConnection,
    project: &str,
    task_id: &str,
    result_id: Uuid,
) -> Result<Vec<Uuid>, Error> {
    let verified = sqlx::query(
        "UPDATE qa_fix_attempts a SET trust = 'verified', verified_by = $3
         FROM qa_failures f
         WHERE f.failure_id = a.failure_id AND f.project = $1 AND f.task_id = $2
           AND a.outcome = 'success' AND a.trust = 'observed' AND a.review IS NULL
           AND NOT EXISTS (SELECT 1 FROM quarantine q WHERE q.item_kind = 'fix_attempt'
                           AND q.item_id = a.attempt_id AND q.status <> 'released')
         RETURNING a.attempt_id, a.failure_id, a.approach, a.summary",
    )
    .bind(project)
    .bind(task_id)
    .bind(result_id)
    .fetch_all(&mut *connection)
    .await?;
    let mut attempt_ids = Vec::with_capacity(verified.len());
    for row in &verified {
        let attempt_id: Uuid = row.try_get("attempt_id")?;
        let approach: String = row.try_get("approach")?;
        sqlx::query(
            "UPDATE qa_patterns SET recommended_fix = $3, fix_trust = 'verified', fix_attempt_id = $2,
                    common_cause = CASE WHEN common_cause = '' THEN $4 ELSE common_cause END, updated_at = now()
             WHERE pattern_id IN (SELECT pattern_id FROM qa_pattern_occurrences WHERE failure_id = $1)
               AND $3 <> ''
               AND (fix_trust IS NULL OR fix_trust = 'observed' OR fix_attempt_id = $2
                    -- A newer verified fix replaces an older verified one.
                    OR (fix_trust = 'verified'
                        AND (SELECT recorded_at FROM qa_fix_attempts WHERE attempt_id = fix_attempt_id)
                            < (SELECT recorded_at FROM qa_fix_attempts WHERE attempt_id = $2)))",
        )
        .bind(row.try_get::<Uuid, _>("failure_id")?)
        .bind(attempt_id)
        .bind(&approach)
        .bind(row.try_get::<String, _>("summary")?)
        .execute(&mut *connection)
        .await?;
        attempt_ids.push(attempt_id);
    }
    crate::knowledge::verify_gotchas(connection, &attempt_ids).await?;
    Ok(attempt_ids)
}

/// A failure's task title, its error messages the screen did not hold (or
/// a person released), and when it happened.
pub async fn failure_task_messages(
    connection: &mut PgConnection,
    failure_id: Uuid,
) -> Result<(String, Vec<String>, DateTime<Utc>), Error> {
    let row = sqlx::query(
        "SELECT task_title, occurred_at,
                ARRAY(SELECT message FROM unnest(error_messages) WITH ORDINALITY AS m(message, position)
                      WHERE NOT EXISTS (SELECT 1 FROM quarantine q WHERE q.item_kind = 'failure_message'
                                        AND q.item_id = $1 AND q.part = (m.position - 1)::text
                                        AND q.status <> 'released')
                      ORDER BY position) AS messages
         FROM qa_failures WHERE failure_id = $1",
    )
    .bind(failure_id)
    .fetch_one(connection)
    .await?;
    Ok((row.get("task_title"), row.get("messages"), row.get("occurred_at")))
}

/// The published promotion whose learning `entry_id` is, if any.
pub async fn published_promotion_of(
    pool: &PgPool,
    scope: &ProjectScope,
    entry_id: Uuid,
) -> Result<Option<Uuid>, Error> {
    Ok(sqlx::query_scalar(
        "SELECT promotion_id FROM qa_promotions
         WHERE entry_id = $1 AND status = 'published' AND ($2::text[] IS NULL OR project = ANY($2))",
    )
    .bind(entry_id)
    .bind(scope.sql_filter())
    .fetch_optional(pool)
    .await?)
}
