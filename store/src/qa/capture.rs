//! What a capture stores: the failure, its messages' patterns (started or
//! joined) and their occurrences.

use chrono::Utc;
use sqlx::postgres::PgRow;
use sqlx::types::Json;
use sqlx::{PgConnection, PgPool, Row as _};
use uuid::Uuid;

use super::{learned_sql, title_words_sql};
use lore_grouping::template::Template;
use lore_types::Error;
use lore_types::qa::{NewFailure, PatternLink};
use lore_types::scope::ProjectScope;
use lore_types::trust::Origin;

/// Stores the failure's facts; false when its id is already stored.
pub async fn insert_failure(
    connection: &mut PgConnection,
    failure: &NewFailure,
    category: &str,
    category_rule_id: Option<&str>,
) -> Result<bool, Error> {
    let checks = serde_json::to_value(&failure.failed_checks)
        .map_err(|error| Error::invalid("failed_checks", error.to_string()))?;
    let inserted = sqlx::query(
        "INSERT INTO qa_failures (failure_id, project, task_id, task_title, task_category, task_files,
             task_description, session_id, execution_id, failed_checks, error_messages, files_modified,
             diff_summary, category, category_rule_id, occurred_at, origin)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)
         ON CONFLICT (failure_id) DO NOTHING",
    )
    .bind(failure.failure_id)
    .bind(&failure.project)
    .bind(&failure.task.task_id)
    .bind(&failure.task.title)
    .bind(&failure.task.category)
    .bind(&failure.task.files)
    .bind(&failure.task.description)
    .bind(failure.session_id)
    .bind(&failure.execution_id)
    .bind(checks)
    .bind(&failure.error_messages)
    .bind(&failure.files_modified)
    .bind(&failure.diff_summary)
    .bind(category)
    .bind(category_rule_id)
    .bind(failure.occurred_at)
    .bind(Json(failure.origin.to_json()))
    .execute(connection)
    .await?;
    Ok(inserted.rows_affected() == 1)
}

/// A stored failure as it was captured, with its category.
pub async fn stored_failure(
    connection: &mut PgConnection,
    scope: &ProjectScope,
    failure_id: Uuid,
) -> Result<(NewFailure, String), Error> {
    let row = sqlx::query(
        "SELECT failure_id, project, task_id, task_title, task_category, task_files, task_description, session_id,
                execution_id, failed_checks, error_messages, files_modified, diff_summary, category, occurred_at,
                origin
         FROM qa_failures WHERE failure_id = $1 AND ($2::text[] IS NULL OR project = ANY($2))",
    )
    .bind(failure_id)
    .bind(scope.sql_filter())
    .fetch_optional(connection)
    .await?
    .ok_or_else(|| Error::NotFound(format!("failure {failure_id}")))?;
    let checks: Json<Vec<lore_types::qa::FailedCheck>> = row.try_get("failed_checks")?;
    let failure = NewFailure {
        failure_id,
        project: row.try_get("project")?,
        task: lore_types::qa::Task {
            task_id: row.try_get("task_id")?,
            title: row.try_get("task_title")?,
            category: row.try_get("task_category")?,
            files: row.try_get("task_files")?,
            description: row.try_get("task_description")?,
        },
        session_id: row.try_get("session_id")?,
        execution_id: row.try_get("execution_id")?,
        failed_checks: checks.0,
        error_messages: row.try_get("error_messages")?,
        files_modified: row.try_get("files_modified")?,
        diff_summary: row.try_get("diff_summary")?,
        occurred_at: row.try_get("occurred_at")?,
        origin: Origin::from_json(&row.try_get::<Json<serde_json::Value>, _>("origin")?.0),
    };
    Ok((failure, row.try_get("category")?))
}

/// Whether a failure's message already joined a pattern.
pub async fn message_grouped(connection: &mut PgConnection, failure_id: Uuid, index: usize) -> Result<bool, Error> {
    Ok(sqlx::query_scalar(
        "SELECT EXISTS (SELECT 1 FROM qa_pattern_occurrences WHERE failure_id = $1 AND message_index = $2)",
    )
    .bind(failure_id)
    .bind(index as i32)
    .fetch_one(connection)
    .await?)
}

/// A stored failure's category and links, for a replayed capture.
pub async fn stored_capture(
    pool: &PgPool,
    scope: &ProjectScope,
    failure_id: Uuid,
) -> Result<Option<(String, Option<String>, Vec<PatternLink>)>, Error> {
    let failure = sqlx::query(
        "SELECT category, category_rule_id FROM qa_failures
         WHERE failure_id = $1 AND ($2::text[] IS NULL OR project = ANY($2))",
    )
    .bind(failure_id)
    .bind(scope.sql_filter())
    .fetch_optional(pool)
    .await?;
    let Some(failure) = failure else { return Ok(None) };
    let rows = sqlx::query(
        "SELECT o.pattern_id, p.name AS pattern_name, o.template, o.similarity, o.reason, o.message,
                o.reason = 'new candidate' AS new_pattern
         FROM qa_pattern_occurrences o JOIN qa_patterns p USING (pattern_id)
         WHERE o.failure_id = $1 ORDER BY o.message_index",
    )
    .bind(failure_id)
    .fetch_all(pool)
    .await?;
    let links = rows.iter().map(link_from_row).collect::<Result<_, _>>()?;
    Ok(Some((failure.try_get("category")?, failure.try_get("category_rule_id")?, links)))
}

pub(crate) fn link_from_row(row: &PgRow) -> Result<PatternLink, sqlx::Error> {
    Ok(PatternLink {
        pattern_id: row.try_get("pattern_id")?,
        pattern_name: row.try_get("pattern_name")?,
        template: row.try_get("template")?,
        similarity: row.try_get("similarity")?,
        new_pattern: row.try_get("new_pattern")?,
        reason: row.try_get("reason")?,
        message: row.try_get("message")?,
    })
}

/// The facts of a failure a pattern learns from.
pub struct Sighting<'a> {
    pub failure: &'a NewFailure,
    pub message_index: usize,
    pub message: &'a str,
    pub template: &'a Template,
    pub similarity: f64,
    pub reason: &'a str,
}

/// What counting a sighting needs from the configuration.
pub struct Counting {
    pub recurrence_boost: f64,
    pub max_confidence: f64,
    pub activate_at: i64,
}

/// Starts a candidate pattern from a sighting and records the occurrence.
pub async fn insert_pattern(
    connection: &mut PgConnection,
    sighting: &Sighting<'_>,
    category: &str,
    name: &str,
    confidence: f64,
    activate_at: i64,
) -> Result<Uuid, Error> {
    let pattern_id = Uuid::now_v7();
    let failure = sighting.failure;
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "INSERT INTO qa_patterns (pattern_id, project, category, name, template, template_tokens, route,
             file_globs, task_categories, task_titles, task_words, status, occurrence_count, task_count,
             confidence, first_seen_at, last_seen_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, array_remove(ARRAY[$13::text], ''), {words},
                 CASE WHEN $10 <= 1 THEN 'active' ELSE 'candidate' END, 1, 1, $11, $12, $12)",
        words = title_words_sql("$13"),
    )))
    .bind(pattern_id)
    .bind(&failure.project)
    .bind(category)
    .bind(name)
    .bind(sighting.template.text())
    .bind(&sighting.template.tokens)
    .bind(sighting.template.route())
    .bind(lore_types::qa::files::globs_of(failure.files_modified.iter().chain(&failure.task.files)))
    .bind(task_categories(failure))
    .bind(activate_at)
    .bind(confidence)
    .bind(failure.occurred_at)
    .bind(&failure.task.title)
    .execute(&mut *connection)
    .await?;
    insert_occurrence(connection, pattern_id, sighting).await?;
    Ok(pattern_id)
}

fn task_categories(failure: &NewFailure) -> Vec<String> {
    if failure.task.category.is_empty() { Vec::new() } else { vec![failure.task.category.to_lowercase()] }
}

/// Counts a sighting on a pattern (with its widened template, when it
/// joined by similarity) and records the occurrence, atomically with the
/// capture. Returns the pattern's name.
pub async fn join_pattern(
    connection: &mut PgConnection,
    pattern_id: Uuid,
    widened: Option<&Template>,
    sighting: &Sighting<'_>,
    counting: &Counting,
) -> Result<String, Error> {
    let failure = sighting.failure;
    let learned = learned_sql("", |column| match column {
        "file_globs" => "$6".to_owned(),
        "task_categories" => "$7".to_owned(),
        "task_titles" => "ARRAY[$11::text]".to_owned(),
        _ => title_words_sql("$11"),
    });
    let row = sqlx::query(sqlx::AssertSqlSafe(format!(
        "WITH seen AS (
             SELECT EXISTS (SELECT 1 FROM qa_pattern_occurrences WHERE pattern_id = $1 AND task_id = $2) AS seen
         )
         UPDATE qa_patterns SET
             template = coalesce($3, template),
             template_tokens = coalesce($4, template_tokens),
             last_change = CASE WHEN $3 IS NULL THEN last_change ELSE 'capture' END,
             occurrence_count = occurrence_count + 1,
             task_count = task_count + CASE WHEN seen.seen THEN 0 ELSE 1 END,
             confidence = CASE WHEN seen.seen THEN confidence ELSE least($8, greatest(confidence, confidence + $5)) END,
             status = CASE WHEN status = 'candidate' AND occurrence_count + 1 >= $9 THEN 'active' ELSE status END,
             {learned},
             first_seen_at = least(first_seen_at, $10),
             last_seen_at = greatest(last_seen_at, $10),
             updated_at = now()
         FROM seen
         WHERE pattern_id = $1
         RETURNING name"
    )))
    .bind(pattern_id)
    .bind(&failure.task.task_id)
    .bind(widened.map(Template::text))
    .bind(widened.map(|template| &template.tokens))
    .bind(counting.recurrence_boost)
    .bind(lore_types::qa::files::globs_of(failure.files_modified.iter().chain(&failure.task.files)))
    .bind(task_categories(failure))
    .bind(counting.max_confidence)
    .bind(counting.activate_at)
    .bind(failure.occurred_at)
    .bind(&failure.task.title)
    .fetch_one(&mut *connection)
    .await?;
    insert_occurrence(connection, pattern_id, sighting).await?;
    Ok(row.get("name"))
}

async fn insert_occurrence(
    connection: &mut PgConnection,
    pattern_id: Uuid,
    sighting: &Sighting<'_>,
) -> Result<(), Error> {
    sqlx::query(
        "INSERT INTO qa_pattern_occurrences (occurrence_id, project, pattern_id, failure_id, message_index, message,
             template, similarity, reason, occurred_at, task_id)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
    )
    .bind(Uuid::now_v7())
    .bind(&sighting.failure.project)
    .bind(pattern_id)
    .bind(sighting.failure.failure_id)
    .bind(sighting.message_index as i32)
    .bind(sighting.message)
    .bind(sighting.template.text())
    .bind(sighting.similarity.clamp(0.0, 1.0))
    .bind(sighting.reason)
    .bind(sighting.failure.occurred_at)
    .bind(&sighting.failure.task.task_id)
    .execute(connection)
    .await?;
    Ok(())
}

/// Deliveries of this pattern for this task with no outcome yet: the task
/// failed with the pattern anyway. Marks them and applies the decay for the
/// ones that were shown; returns how many were shown.
pub async fn failed_despite_warning(
    connection: &mut PgConnection,
    failure: &NewFailure,
    pattern_id: Uuid,
    decay: f64,
    min_confidence: f64,
) -> Result<i64, Error> {
    let row = sqlx::query(
        "WITH marked AS (
             UPDATE qa_warning_deliveries SET outcome = 'failed_anyway', outcome_at = now(),
                 outcome_note = 'captured failure ' || $4::text
             WHERE project = $1 AND task_id = $2 AND pattern_id = $3 AND outcome IS NULL AND delivered_at <= $5
             RETURNING held_out
         ), shown AS (SELECT count(*) FILTER (WHERE NOT held_out) AS n FROM marked)
         UPDATE qa_patterns SET failed_anyway_count = failed_anyway_count + shown.n,
             confidence = greatest($7, least(confidence, confidence - shown.n * $6)), updated_at = now()
         FROM shown WHERE pattern_id = $3 AND shown.n > 0
         RETURNING shown.n",
    )
    .bind(&failure.project)
    .bind(&failure.task.task_id)
    .bind(pattern_id)
    .bind(failure.failure_id.to_string())
    .bind(failure.occurred_at.max(Utc::now()))
    .bind(decay)
    .bind(min_confidence)
    .fetch_optional(connection)
    .await?;
    Ok(row.map(|row| row.get::<i64, _>(0)).unwrap_or(0))
}
