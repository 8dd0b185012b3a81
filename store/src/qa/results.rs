//! Task results: one transaction per result stores the verdict, scores the
//! task's open warning deliveries and records the missed opportunities.

use sqlx::postgres::PgRow;
use sqlx::{PgConnection, PgPool, Row as _};
use uuid::Uuid;

use crate::knowledge::parse;
use crate::qa::warnings::{OutcomeEffect, apply_outcomes};
use lore_types::Error;
use lore_types::qa::{MissedOpportunity, NewTaskResult, ScoredDelivery, TaskResultRecorded, WarningOutcome};
use lore_types::scope::ProjectScope;

/// Which patterns could have been warned about: the floors of GetWarnings.
pub struct WarnFloor {
    pub min_occurrences: i64,
    pub min_confidence: f64,
}

/// The stored result with this id, as recorded, if any (in the caller's
/// projects); `Err(AlreadyExists)` when the id is another project's.
pub async fn stored_result(
    connection: &mut PgConnection,
    scope: &ProjectScope,
    result_id: Uuid,
) -> Result<Option<(String, String, TaskResultRecorded)>, Error> {
    let Some(row) = sqlx::query(
        "SELECT project, task_id, attempt, passed, failure_ids, pattern_ids FROM qa_task_results WHERE result_id = $1",
    )
    .bind(result_id)
    .fetch_optional(&mut *connection)
    .await?
    else {
        return Ok(None);
    };
    let project: String = row.get("project");
    if !scope.allows(&project) {
        return Err(Error::AlreadyExists(format!("result_id {result_id} is used by another project")));
    }
    let scored = sqlx::query(
        "SELECT delivery_id, pattern_id, outcome, held_out FROM qa_warning_deliveries
         WHERE result_id = $1 ORDER BY delivery_id",
    )
    .bind(result_id)
    .fetch_all(&mut *connection)
    .await?;
    let missed = sqlx::query(
        "SELECT m.pattern_id, p.name, m.warned FROM qa_missed_opportunities m JOIN qa_patterns p USING (pattern_id)
         WHERE m.result_id = $1 ORDER BY m.pattern_id",
    )
    .bind(result_id)
    .fetch_all(&mut *connection)
    .await?;
    let recorded = TaskResultRecorded {
        result_id,
        duplicate: true,
        attempt: row.get("attempt"),
        passed: row.get("passed"),
        failure_ids: row.get("failure_ids"),
        pattern_ids: row.get("pattern_ids"),
        scored: scored.iter().map(scored_from_row).collect::<Result<_, _>>()?,
        missed: missed.iter().map(missed_from_row).collect(),
        verified_attempts: Vec::new(),
    };
    Ok(Some((project, row.get("task_id"), recorded)))
}

fn scored_from_row(row: &PgRow) -> Result<ScoredDelivery, sqlx::Error> {
    let outcome: String = row.try_get("outcome")?;
    Ok(ScoredDelivery {
        delivery_id: row.try_get("delivery_id")?,
        pattern_id: row.try_get("pattern_id")?,
        outcome: parse("outcome", &outcome)?,
        held_out: row.try_get("held_out")?,
    })
}

fn missed_from_row(row: &PgRow) -> MissedOpportunity {
    MissedOpportunity { pattern_id: row.get("pattern_id"), pattern_name: row.get("name"), warned: row.get("warned") }
}

/// Whether the session exists in the project.
pub async fn session_in_project(pool: &PgPool, session_id: Uuid, project: &str) -> Result<bool, Error> {
    Ok(sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM sessions WHERE session_id = $1 AND project = $2)")
        .bind(session_id)
        .bind(project)
        .fetch_one(pool)
        .await?)
}

/// A failure as a task result sees it: its task, and the result that
/// already claimed it, if one did.
pub struct ClaimedFailure {
    pub failure_id: Uuid,
    pub task_id: String,
    pub claimed_by: Option<Uuid>,
}

/// The failures with these ids in the project, in no order.
pub async fn failures(pool: &PgPool, project: &str, failure_ids: &[Uuid]) -> Result<Vec<ClaimedFailure>, Error> {
    let rows = sqlx::query(
        "SELECT f.failure_id, f.task_id,
                (SELECT r.result_id FROM qa_task_results r WHERE r.failure_ids @> ARRAY[f.failure_id] LIMIT 1)
                    AS claimed_by
         FROM qa_failures f WHERE f.failure_id = ANY($1) AND f.project = $2",
    )
    .bind(failure_ids)
    .bind(project)
    .fetch_all(pool)
    .await?;
    Ok(rows
        .iter()
        .map(|row| ClaimedFailure {
            failure_id: row.get("failure_id"),
            task_id: row.get("task_id"),
            claimed_by: row.get("claimed_by"),
        })
        .collect())
}

/// The task's failures no result claimed yet, oldest first.
pub async fn unclaimed_failures(pool: &PgPool, project: &str, task_id: &str) -> Result<Vec<Uuid>, Error> {
    Ok(sqlx::query_scalar(
        "SELECT f.failure_id FROM qa_failures f
         WHERE f.project = $1 AND f.task_id = $2
           AND NOT EXISTS (SELECT 1 FROM qa_task_results r WHERE r.project = $1 AND r.task_id = $2
                           AND r.failure_ids @> ARRAY[f.failure_id])
         ORDER BY f.occurred_at, f.failure_id",
    )
    .bind(project)
    .bind(task_id)
    .fetch_all(pool)
    .await?)
}

/// Stores the result and scores what it decides, in one transaction:
/// the attempt number, the patterns of its failures (following merges),
/// the open deliveries of the task made before it, the pattern counters of
/// the shown ones, and the missed opportunities. `None` when a concurrent
/// call stored the same id first.
pub async fn record(
    pool: &PgPool,
    result: &NewTaskResult,
    effect: &OutcomeEffect,
    floor: &WarnFloor,
) -> Result<Option<TaskResultRecorded>, Error> {
    let mut transaction = pool.begin().await?;
    // Results of one task are numbered in order.
    sqlx::query("SELECT pg_advisory_xact_lock(hashtextextended('qa-task ' || $1 || ' ' || $2, 0))")
        .bind(&result.project)
        .bind(&result.task.task_id)
        .execute(&mut *transaction)
        .await?;
    let pattern_ids = survivors(&mut transaction, &result.failure_ids).await?;
    let Some(attempt) = insert(&mut transaction, result, &pattern_ids).await? else {
        transaction.rollback().await?;
        return Ok(None);
    };
    score_deliveries(&mut transaction, result, &pattern_ids, attempt, effect).await?;
    let missed = record_missed(&mut transaction, result, &pattern_ids, floor).await?;
    let verified_attempts = if result.passed {
        crate::qa::fixes::verify_fixes(&mut transaction, &result.project, &result.task.task_id, result.result_id)
            .await?
    } else {
        Vec::new()
    };
    let all_scored = sqlx::query(
        "SELECT delivery_id, pattern_id, outcome, held_out FROM qa_warning_deliveries
         WHERE result_id = $1 ORDER BY delivery_id",
    )
    .bind(result.result_id)
    .fetch_all(&mut *transaction)
    .await?;
    transaction.commit().await?;
    Ok(Some(TaskResultRecorded {
        result_id: result.result_id,
        duplicate: false,
        attempt,
        passed: result.passed,
        failure_ids: result.failure_ids.clone(),
        pattern_ids,
        scored: all_scored.iter().map(scored_from_row).collect::<Result<_, _>>()?,
        missed: missed.iter().map(missed_from_row).collect(),
        verified_attempts,
    }))
}

/// The live patterns the failures' occurrences are in, following merges.
async fn survivors(connection: &mut PgConnection, failure_ids: &[Uuid]) -> Result<Vec<Uuid>, Error> {
    Ok(sqlx::query_scalar(
        "WITH RECURSIVE survivor(pattern_id, merged_into, depth) AS (
             SELECT p.pattern_id, p.merged_into, 0 FROM qa_patterns p
             WHERE p.pattern_id IN (SELECT pattern_id FROM qa_pattern_occurrences WHERE failure_id = ANY($1))
             UNION ALL
             SELECT p.pattern_id, p.merged_into, s.depth + 1 FROM survivor s JOIN qa_patterns p
                 ON p.pattern_id = s.merged_into WHERE s.depth < 16
         )
         SELECT DISTINCT pattern_id FROM survivor WHERE merged_into IS NULL ORDER BY pattern_id",
    )
    .bind(failure_ids)
    .fetch_all(connection)
    .await?)
}

/// Stores the result, numbered after the task's others; its attempt
/// number, or `None` when the id was stored already.
async fn insert(
    connection: &mut PgConnection,
    result: &NewTaskResult,
    pattern_ids: &[Uuid],
) -> Result<Option<i32>, Error> {
    let checks = serde_json::to_value(&result.checks).map_err(|error| Error::invalid("checks", error.to_string()))?;
    let inserted = sqlx::query(
        "INSERT INTO qa_task_results (result_id, project, task_id, session_id, attempt, passed, checks, failure_ids,
                                      pattern_ids, occurred_at)
         SELECT $1, $2, $3, $4,
                coalesce((SELECT max(attempt) FROM qa_task_results WHERE project = $2 AND task_id = $3), 0) + 1,
                $5, $6, $7, $8, $9
         ON CONFLICT (result_id) DO NOTHING
         RETURNING attempt",
    )
    .bind(result.result_id)
    .bind(&result.project)
    .bind(&result.task.task_id)
    .bind(result.session_id)
    .bind(result.passed)
    .bind(&checks)
    .bind(&result.failure_ids)
    .bind(pattern_ids)
    .bind(result.occurred_at)
    .fetch_optional(connection)
    .await?;
    Ok(inserted.map(|row| row.get("attempt")))
}

/// Scores the task's open deliveries made before the result, and moves the
/// shown ones' pattern counters.
async fn score_deliveries(
    connection: &mut PgConnection,
    result: &NewTaskResult,
    pattern_ids: &[Uuid],
    attempt: i32,
    effect: &OutcomeEffect,
) -> Result<(), Error> {
    // A capture already marked the deliveries of its own patterns; they are
    // this result's too.
    let failure_notes: Vec<String> =
        result.failure_ids.iter().map(|failure_id| format!("captured failure {failure_id}")).collect();
    sqlx::query(
        "UPDATE qa_warning_deliveries SET result_id = $1
         WHERE project = $2 AND task_id = $3 AND result_id IS NULL AND outcome = 'failed_anyway'
           AND outcome_note = ANY($4)",
    )
    .bind(result.result_id)
    .bind(&result.project)
    .bind(&result.task.task_id)
    .bind(&failure_notes)
    .execute(&mut *connection)
    .await?;
    let scored = sqlx::query(
        "UPDATE qa_warning_deliveries SET
             outcome = CASE WHEN $4 THEN 'prevented' WHEN pattern_id = ANY($5) THEN 'failed_anyway' ELSE 'unrelated' END,
             outcome_at = now(), result_id = $1, outcome_note = 'task result, attempt ' || $6::text
         WHERE project = $2 AND task_id = $3 AND outcome IS NULL AND delivered_at <= $7
         RETURNING delivery_id, pattern_id, outcome, held_out",
    )
    .bind(result.result_id)
    .bind(&result.project)
    .bind(&result.task.task_id)
    .bind(result.passed)
    .bind(pattern_ids)
    .bind(attempt)
    .bind(result.occurred_at)
    .fetch_all(&mut *connection)
    .await?;
    let scored: Vec<ScoredDelivery> = scored.iter().map(scored_from_row).collect::<Result<_, _>>()?;
    for outcome in [WarningOutcome::Prevented, WarningOutcome::FailedAnyway] {
        let shown: Vec<Uuid> = scored
            .iter()
            .filter(|delivery| delivery.outcome == outcome && !delivery.held_out)
            .map(|delivery| delivery.pattern_id)
            .collect();
        apply_outcomes(&mut *connection, &shown, outcome, effect).await?;
    }
    Ok(())
}

/// Records each pattern the task failed on that nothing delivered to it,
/// and that was over the warning floors before the task's own
/// occurrences: the missed opportunities, with their names.
async fn record_missed(
    connection: &mut PgConnection,
    result: &NewTaskResult,
    pattern_ids: &[Uuid],
    floor: &WarnFloor,
) -> Result<Vec<PgRow>, Error> {
    Ok(sqlx::query(
        "WITH asked AS (SELECT EXISTS (SELECT 1 FROM qa_warning_deliveries WHERE project = $2 AND task_id = $3) AS warned),
         missed AS (
             INSERT INTO qa_missed_opportunities (result_id, pattern_id, project, task_id, warned)
             SELECT $1, p.pattern_id, $2, $3, asked.warned FROM qa_patterns p, asked
             WHERE p.pattern_id = ANY($4) AND p.status IN ('active', 'promoted') AND p.confidence >= $7
               AND p.occurrence_count - (SELECT count(*) FROM qa_pattern_occurrences o
                                         WHERE o.pattern_id = p.pattern_id AND o.failure_id = ANY($5)) >= $6
               AND NOT EXISTS (SELECT 1 FROM qa_warning_deliveries d WHERE d.project = $2 AND d.task_id = $3
                               AND d.pattern_id = p.pattern_id)
             ON CONFLICT DO NOTHING
             RETURNING pattern_id, warned
         )
         SELECT m.pattern_id, p.name, m.warned FROM missed m JOIN qa_patterns p USING (pattern_id)
         ORDER BY m.pattern_id",
    )
    .bind(result.result_id)
    .bind(&result.project)
    .bind(&result.task.task_id)
    .bind(pattern_ids)
    .bind(&result.failure_ids)
    .bind(floor.min_occurrences)
    .bind(floor.min_confidence)
    .fetch_all(connection)
    .await?)
}
