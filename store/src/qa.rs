//! QA failures, the rule table, patterns and their occurrences, grouping
//! corrections and fix attempts.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use sqlx::postgres::PgRow;
use sqlx::types::Json;
use sqlx::{PgConnection, PgPool, Row as _};
use uuid::Uuid;

use super::knowledge::parse;
use lore_grouping::template::Template;
use lore_model::Error;
use lore_model::actions::StoredName as _;
use lore_model::qa::{
    CategoryRule, ChangedBy, FixAttempt, Merge, NewFailure, Occurrence, Pattern, PatternEdits, PatternFilter,
    PatternLink, PatternStatus,
};
use lore_model::scope::ProjectScope;
use lore_model::trust::Origin;

pub(crate) const PATTERN_COLUMNS: &str = "p.pattern_id, p.project, p.category, p.name, p.description, \
     p.common_cause, p.recommended_fix, p.template, p.file_globs, p.status, p.merged_into, p.occurrence_count, \
     p.task_count, p.confidence, p.prevented_count, p.failed_anyway_count, p.warnings_delivered, p.first_seen_at, \
     p.last_seen_at, p.fix_trust, p.held, p.last_change";

/// What a pattern learns from the failures that join it, with how many
/// distinct values it keeps (the first seen): the globs of their files, the
/// categories and titles of their tasks, and the English stems of those
/// titles, which "similar past tasks" are matched on.
const LEARNED: [(&str, usize); 4] =
    [("file_globs", 20), ("task_categories", 20), ("task_titles", 20), ("task_words", 200)];

/// `column = <its values followed by the new ones, distinct, capped>` for
/// every learned column; `new_values` gives the SQL of a column's new values.
fn learned_sql(alias: &str, new_values: impl Fn(&str) -> String) -> String {
    let assignments: Vec<String> = LEARNED
        .iter()
        .map(|(column, limit)| {
            format!(
                "{column} = (SELECT coalesce(array_agg(value ORDER BY position), '{{}}') FROM (
                     SELECT value, min(position) AS position FROM unnest({alias}{column} || ({new})::text[])
                         WITH ORDINALITY AS t(value, position)
                     WHERE value <> '' GROUP BY value ORDER BY min(position) LIMIT {limit}) AS kept)",
                new = new_values(column)
            )
        })
        .collect();
    assignments.join(",\n")
}

/// The English stems of a task title, as warnings match them.
pub(crate) fn title_words_sql(title: &str) -> String {
    format!("tsvector_to_array(to_tsvector('english', {title}))")
}

pub(crate) fn pattern_from_row(row: &PgRow) -> Result<Pattern, sqlx::Error> {
    let status: String = row.try_get("status")?;
    Ok(Pattern {
        pattern_id: row.try_get("pattern_id")?,
        project: row.try_get("project")?,
        category: row.try_get("category")?,
        name: row.try_get("name")?,
        description: row.try_get("description")?,
        common_cause: row.try_get("common_cause")?,
        recommended_fix: row.try_get("recommended_fix")?,
        template: row.try_get("template")?,
        file_globs: row.try_get("file_globs")?,
        fix_trust: row
            .try_get::<Option<String>, _>("fix_trust")?
            .map(|trust| parse("fix_trust", &trust))
            .transpose()?,
        held: row.try_get("held")?,
        status: parse("status", &status)?,
        merged_into: row.try_get("merged_into")?,
        last_change: parse("last_change", &row.try_get::<String, _>("last_change")?)?,
        occurrence_count: row.try_get("occurrence_count")?,
        task_count: row.try_get("task_count")?,
        confidence: row.try_get("confidence")?,
        prevented_count: row.try_get("prevented_count")?,
        failed_anyway_count: row.try_get("failed_anyway_count")?,
        warnings_delivered: row.try_get("warnings_delivered")?,
        first_seen_at: row.try_get("first_seen_at")?,
        last_seen_at: row.try_get("last_seen_at")?,
    })
}

fn outside(project: &str) -> Error {
    Error::PermissionDenied(format!("project {project} is outside your scope"))
}

// ---- the rule table ----

fn rule_from_row(row: &PgRow) -> Result<CategoryRule, sqlx::Error> {
    Ok(CategoryRule {
        rule_id: row.try_get("rule_id")?,
        project: row.try_get("project")?,
        priority: row.try_get("priority")?,
        category: row.try_get("category")?,
        check_name_regex: row.try_get("check_name_regex")?,
        message_regex: row.try_get("message_regex")?,
        enabled: row.try_get("enabled")?,
    })
}

const RULE_COLUMNS: &str = "rule_id, project, priority, category, check_name_regex, message_regex, enabled";

/// The global rules and the project's, unordered (see `category::in_force`).
pub async fn category_rules(connection: &mut PgConnection, project: &str) -> Result<Vec<CategoryRule>, Error> {
    let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {RULE_COLUMNS} FROM qa_category_rules WHERE project IS NULL OR project = $1"
    )))
    .bind(project)
    .fetch_all(connection)
    .await?;
    Ok(rows.iter().map(rule_from_row).collect::<Result<_, _>>()?)
}

/// Adds or replaces a rule. A global rule (no project) needs the scope of
/// every project.
pub async fn upsert_rule(pool: &PgPool, scope: &ProjectScope, rule: &CategoryRule) -> Result<CategoryRule, Error> {
    match &rule.project {
        Some(project) if !scope.allows(project) => return Err(outside(project)),
        None if *scope != ProjectScope::All => {
            return Err(Error::PermissionDenied("global rules need a token for every project".into()));
        }
        _ => {}
    }
    let mut transaction = pool.begin().await?;
    if let Some(project) = &rule.project {
        ensure_project(&mut transaction, project).await?;
    }
    let row = sqlx::query(sqlx::AssertSqlSafe(format!(
        "INSERT INTO qa_category_rules ({RULE_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7)
         ON CONFLICT (coalesce(project, ''), rule_id) DO UPDATE SET
             priority = excluded.priority, category = excluded.category,
             check_name_regex = excluded.check_name_regex, message_regex = excluded.message_regex,
             enabled = excluded.enabled, updated_at = now()
         RETURNING {RULE_COLUMNS}"
    )))
    .bind(&rule.rule_id)
    .bind(&rule.project)
    .bind(rule.priority)
    .bind(&rule.category)
    .bind(&rule.check_name_regex)
    .bind(&rule.message_regex)
    .bind(rule.enabled)
    .fetch_one(&mut *transaction)
    .await?;
    transaction.commit().await?;
    Ok(rule_from_row(&row)?)
}

pub async fn ensure_project(connection: &mut PgConnection, project: &str) -> Result<(), Error> {
    sqlx::query("INSERT INTO projects (name) VALUES ($1) ON CONFLICT DO NOTHING")
        .bind(project)
        .execute(connection)
        .await?;
    Ok(())
}

// ---- capture ----

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
    let checks: Json<Vec<lore_model::qa::FailedCheck>> = row.try_get("failed_checks")?;
    let failure = NewFailure {
        failure_id,
        project: row.try_get("project")?,
        task: lore_model::qa::Task {
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

fn link_from_row(row: &PgRow) -> Result<PatternLink, sqlx::Error> {
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

/// Serializes the captures that compare messages with the same patterns
/// (one lock per project, category and route, taken in sorted order so two
/// captures cannot deadlock), so that two concurrent first sightings of a
/// message cannot start two patterns and no counter update is lost.
pub async fn lock_routes(connection: &mut PgConnection, keys: &[String]) -> Result<(), Error> {
    sqlx::query("SELECT pg_advisory_xact_lock(hashtextextended(key, 7)) FROM unnest($1::text[]) AS key ORDER BY key")
        .bind(keys)
        .execute(connection)
        .await?;
    Ok(())
}

/// A pattern a message may join, as the grouping compares it.
#[derive(Debug, Clone)]
pub struct RouteCandidate {
    pub pattern_id: Uuid,
    pub template: Template,
    /// Set when the pattern was merged: its messages go to the survivor.
    pub merged_into: Option<Uuid>,
}

/// Every pattern with this route (the grouping's bucket).
pub async fn route_candidates(
    connection: &mut PgConnection,
    project: &str,
    category: &str,
    route: &str,
) -> Result<Vec<RouteCandidate>, Error> {
    let rows = sqlx::query(
        "SELECT pattern_id, template_tokens, merged_into FROM qa_patterns
         WHERE project = $1 AND category = $2 AND route = $3",
    )
    .bind(project)
    .bind(category)
    .bind(route)
    .fetch_all(connection)
    .await?;
    rows.iter()
        .map(|row| {
            Ok(RouteCandidate {
                pattern_id: row.try_get("pattern_id")?,
                template: Template::from_tokens(row.try_get("template_tokens")?),
                merged_into: row.try_get("merged_into")?,
            })
        })
        .collect::<Result<_, sqlx::Error>>()
        .map_err(Error::from)
}

/// The generations of routes (0 for a route that never held a pattern),
/// bumped by a trigger on every change of their patterns that grouping
/// reads (see migration 0012).
pub async fn route_generations(
    connection: &mut PgConnection,
    project: &str,
    category: &str,
    routes: &[String],
) -> Result<HashMap<String, i64>, Error> {
    let rows: Vec<(String, i64)> = sqlx::query_as(
        "SELECT route, generation FROM qa_routes WHERE project = $1 AND category = $2 AND route = ANY($3)",
    )
    .bind(project)
    .bind(category)
    .bind(routes)
    .fetch_all(connection)
    .await?;
    let mut generations: HashMap<String, i64> = routes.iter().map(|route| (route.clone(), 0)).collect();
    generations.extend(rows);
    Ok(generations)
}

/// The pattern a split sent this template to (the latest split), if any.
pub async fn split_target(
    connection: &mut PgConnection,
    project: &str,
    template: &str,
) -> Result<Option<(Uuid, String)>, Error> {
    let row = sqlx::query(
        "SELECT coalesce(p.merged_into, c.to_pattern_id) AS to_pattern_id, c.reason
         FROM qa_grouping_corrections c JOIN qa_patterns p ON p.pattern_id = c.to_pattern_id
         WHERE c.kind = 'split' AND c.project = $1 AND c.templates @> ARRAY[$2]
         ORDER BY c.created_at DESC LIMIT 1",
    )
    .bind(project)
    .bind(template)
    .fetch_optional(connection)
    .await?;
    Ok(row.map(|row| (row.get("to_pattern_id"), row.get("reason"))))
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
    .bind(lore_model::qa::files::globs_of(failure.files_modified.iter().chain(&failure.task.files)))
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
    .bind(lore_model::qa::files::globs_of(failure.files_modified.iter().chain(&failure.task.files)))
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

// ---- patterns ----

pub async fn pattern(pool: &PgPool, scope: &ProjectScope, pattern_id: Uuid) -> Result<Pattern, Error> {
    let row = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {PATTERN_COLUMNS} FROM qa_patterns p WHERE pattern_id = $1 AND ($2::text[] IS NULL OR project = ANY($2))"
    )))
    .bind(pattern_id)
    .bind(scope.sql_filter())
    .fetch_optional(pool)
    .await?;
    match row {
        Some(row) => Ok(pattern_from_row(&row)?),
        None => Err(Error::NotFound(format!("pattern {pattern_id}"))),
    }
}

/// The patterns of `pattern_ids` that exist in the scope, in no order.
pub async fn patterns(pool: &PgPool, scope: &ProjectScope, pattern_ids: &[Uuid]) -> Result<Vec<Pattern>, Error> {
    let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {PATTERN_COLUMNS} FROM qa_patterns p
         WHERE pattern_id = ANY($1) AND ($2::text[] IS NULL OR project = ANY($2))"
    )))
    .bind(pattern_ids)
    .bind(scope.sql_filter())
    .fetch_all(pool)
    .await?;
    Ok(rows.iter().map(pattern_from_row).collect::<Result<_, _>>()?)
}

/// Locks a pattern for the rest of the transaction.
pub async fn lock_pattern(
    connection: &mut PgConnection,
    scope: &ProjectScope,
    pattern_id: Uuid,
) -> Result<Pattern, Error> {
    let row = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {PATTERN_COLUMNS} FROM qa_patterns p WHERE pattern_id = $1 AND ($2::text[] IS NULL OR project = ANY($2))
         FOR UPDATE"
    )))
    .bind(pattern_id)
    .bind(scope.sql_filter())
    .fetch_optional(connection)
    .await?;
    match row {
        Some(row) => Ok(pattern_from_row(&row)?),
        None => Err(Error::NotFound(format!("pattern {pattern_id}"))),
    }
}

/// Most occurrences first, paged by (occurrence_count, pattern_id).
pub async fn list_patterns(
    pool: &PgPool,
    scope: &ProjectScope,
    filter: &PatternFilter,
    limit: i64,
    after: Option<(i64, Uuid)>,
) -> Result<Vec<Pattern>, Error> {
    let statuses: Vec<&str> = if filter.statuses.is_empty() {
        vec![PatternStatus::Candidate.as_str(), PatternStatus::Active.as_str()]
    } else {
        filter.statuses.iter().map(|status| status.as_str()).collect()
    };
    let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {PATTERN_COLUMNS} FROM qa_patterns p
         WHERE project = $1 AND ($2::text[] IS NULL OR project = ANY($2)) AND status = ANY($3)
           AND ($4::text IS NULL OR category = $4)
           AND ($5::text IS NULL OR file_globs @> ARRAY[$5])
           AND ($6::bigint IS NULL OR (occurrence_count, pattern_id) < ($6, $7))
         ORDER BY occurrence_count DESC, pattern_id DESC
         LIMIT $8"
    )))
    .bind(&filter.project)
    .bind(scope.sql_filter())
    .bind(statuses)
    .bind(&filter.category)
    .bind(filter.file.as_deref().map(lore_model::qa::files::glob_of))
    .bind(after.map(|(count, _)| count))
    .bind(after.map(|(_, id)| id))
    .bind(limit)
    .fetch_all(pool)
    .await?;
    Ok(rows.iter().map(pattern_from_row).collect::<Result<_, _>>()?)
}

pub async fn occurrences(pool: &PgPool, pattern_id: Uuid, limit: i64) -> Result<Vec<Occurrence>, Error> {
    let rows = sqlx::query(
        "SELECT o.occurrence_id, o.failure_id, o.task_id, o.occurred_at, o.pattern_id, p.name AS pattern_name,
                o.template, o.similarity, o.reason, o.message, o.reason = 'new candidate' AS new_pattern
         FROM qa_pattern_occurrences o JOIN qa_patterns p USING (pattern_id)
         WHERE o.pattern_id = $1 ORDER BY o.occurred_at DESC, o.occurrence_id DESC LIMIT $2",
    )
    .bind(pattern_id)
    .bind(limit)
    .fetch_all(pool)
    .await?;
    rows.iter()
        .map(|row| {
            Ok(Occurrence {
                occurrence_id: row.try_get("occurrence_id")?,
                failure_id: row.try_get("failure_id")?,
                task_id: row.try_get("task_id")?,
                occurred_at: row.try_get("occurred_at")?,
                link: link_from_row(row)?,
            })
        })
        .collect::<Result<_, sqlx::Error>>()
        .map_err(Error::from)
}

const ATTEMPT_COLUMNS: &str = "a.attempt_id, a.failure_id, a.attempt_number, a.approach, a.files_changed, a.summary, \
     a.outcome, a.qa_result, a.recorded_at, a.trust, a.origin, \
     EXISTS (SELECT 1 FROM quarantine q WHERE q.item_kind = 'fix_attempt' AND q.item_id = a.attempt_id \
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
    })
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

/// Applies a person's edits; `held` says the screen held them (the pattern
/// is then held out of warnings and the queue records why).
pub async fn update_pattern(
    pool: &PgPool,
    scope: &ProjectScope,
    pattern_id: Uuid,
    edits: &PatternEdits,
    held: Option<&lore_model::trust::Held>,
    origin: &lore_model::trust::Origin,
) -> Result<Pattern, Error> {
    let mut transaction = pool.begin().await?;
    let current = lock_pattern(&mut transaction, scope, pattern_id).await?;
    if let Some(status) = edits.status {
        let allowed = matches!(
            (current.status, status),
            (PatternStatus::Candidate | PatternStatus::Active | PatternStatus::Promoted, PatternStatus::Retired)
                | (PatternStatus::Retired, PatternStatus::Active)
        ) || current.status == status;
        if !allowed {
            return Err(Error::FailedPrecondition(format!(
                "pattern {pattern_id} is {}; only retiring a live pattern or re-activating a retired one is allowed",
                current.status.as_str()
            )));
        }
    }
    let row = sqlx::query(sqlx::AssertSqlSafe(format!(
        "UPDATE qa_patterns p SET name = coalesce($2, name), description = coalesce($3, description),
             common_cause = coalesce($4, common_cause), recommended_fix = coalesce($5, recommended_fix),
             -- A person's fix is reviewed, and taken from no attempt.
             fix_trust = CASE WHEN $5 IS NULL THEN fix_trust WHEN $5 = '' THEN NULL ELSE 'reviewed' END,
             fix_attempt_id = CASE WHEN $5 IS NULL THEN fix_attempt_id ELSE NULL END,
             held = held OR $7, last_change = 'person',
             status = coalesce($6, status), updated_at = now()
         WHERE pattern_id = $1 RETURNING {PATTERN_COLUMNS}"
    )))
    .bind(pattern_id)
    .bind(&edits.name)
    .bind(&edits.description)
    .bind(&edits.common_cause)
    .bind(&edits.recommended_fix)
    .bind(edits.status.map(|status| status.as_str()))
    .bind(held.is_some())
    .fetch_one(&mut *transaction)
    .await?;
    if let Some(held) = held {
        let kind = lore_model::trust::quarantine::ItemKind::Pattern;
        let project: String = row.try_get("project")?;
        crate::quarantine::hold(&mut transaction, &project, kind, pattern_id, held, origin).await?;
    }
    transaction.commit().await?;
    Ok(pattern_from_row(&row)?)
}

/// Holds a pattern out of warnings, or lets it back in.
pub async fn set_held(connection: &mut PgConnection, pattern_id: Uuid, held: bool) -> Result<(), Error> {
    sqlx::query("UPDATE qa_patterns SET held = $2, updated_at = now() WHERE pattern_id = $1")
        .bind(pattern_id)
        .bind(held)
        .execute(connection)
        .await?;
    Ok(())
}

/// A pattern whose held edit was erased: retired, and no longer held (it is
/// warned about no more either way).
pub async fn retire(connection: &mut PgConnection, pattern_id: Uuid) -> Result<(), Error> {
    sqlx::query(
        "UPDATE qa_patterns SET status = 'retired', held = false, updated_at = now()
         WHERE pattern_id = $1 AND status IN ('candidate', 'active', 'promoted')",
    )
    .bind(pattern_id)
    .execute(connection)
    .await?;
    Ok(())
}

/// Merges `sources` into `into`: occurrences move, counters add up, and the
/// sources point at the survivor (as do patterns merged into them before),
/// so later captures that match a source join the survivor. In the
/// caller's transaction; returns the survivor after, and every pattern
/// merged (the survivor among them) as it was before.
pub async fn merge_patterns(
    transaction: &mut PgConnection,
    scope: &ProjectScope,
    merge: &Merge,
) -> Result<(Pattern, Vec<Pattern>), Error> {
    let (into, sources) = (merge.into, merge.sources.as_slice());
    // Lock in id order so two merges over the same patterns cannot deadlock.
    let mut all: Vec<Uuid> = sources.iter().copied().chain([into]).collect();
    all.sort();
    let mut locked = Vec::with_capacity(all.len());
    for pattern_id in &all {
        locked.push(lock_pattern(&mut *transaction, scope, *pattern_id).await?);
    }
    let survivor = locked.iter().find(|pattern| pattern.pattern_id == into).expect("locked above");
    if survivor.status == PatternStatus::Merged {
        return Err(Error::FailedPrecondition(format!("pattern {into} is merged into another pattern")));
    }
    for pattern in &locked {
        if pattern.project != survivor.project {
            return Err(Error::invalid("pattern_ids", "patterns of different projects cannot be merged"));
        }
        if pattern.pattern_id != into && pattern.status == PatternStatus::Merged {
            return Err(Error::FailedPrecondition(format!("pattern {} is already merged", pattern.pattern_id)));
        }
    }
    let merged = sqlx::query(sqlx::AssertSqlSafe(format!(
        "WITH moved AS (
             UPDATE qa_pattern_occurrences SET pattern_id = $1 WHERE pattern_id = ANY($2) RETURNING task_id
         ), sources AS (
             UPDATE qa_patterns SET status = 'merged', merged_into = $1, last_change = $3, updated_at = now()
             WHERE pattern_id = ANY($2)
             RETURNING occurrence_count, prevented_count, failed_anyway_count, warnings_delivered, file_globs,
                       task_categories, task_titles, task_words, first_seen_at, last_seen_at
         ), redirected AS (
             UPDATE qa_patterns SET merged_into = $1, updated_at = now() WHERE merged_into = ANY($2)
         )
         UPDATE qa_patterns p SET
             occurrence_count = p.occurrence_count + (SELECT coalesce(sum(occurrence_count), 0) FROM sources),
             prevented_count = p.prevented_count + (SELECT coalesce(sum(prevented_count), 0) FROM sources),
             failed_anyway_count = p.failed_anyway_count + (SELECT coalesce(sum(failed_anyway_count), 0) FROM sources),
             warnings_delivered = p.warnings_delivered + (SELECT coalesce(sum(warnings_delivered), 0) FROM sources),
             task_count = (SELECT count(DISTINCT task_id) FROM (
                 SELECT task_id FROM qa_pattern_occurrences WHERE pattern_id = $1
                 UNION ALL SELECT task_id FROM moved) AS tasks),
             {learned},
             first_seen_at = least(p.first_seen_at, (SELECT min(first_seen_at) FROM sources)),
             last_seen_at = greatest(p.last_seen_at, (SELECT max(last_seen_at) FROM sources)),
             status = CASE WHEN p.status = 'candidate' THEN 'active' ELSE p.status END,
             last_change = $3, updated_at = now()
         WHERE p.pattern_id = $1
         RETURNING {PATTERN_COLUMNS}",
        learned = learned_sql("p.", |column| format!(
            "SELECT coalesce(array_agg(value), '{{}}') FROM sources, unnest(sources.{column}) AS value"
        )),
    )))
    .bind(into)
    .bind(sources)
    .bind(merge.by.as_str())
    .fetch_one(&mut *transaction)
    .await?;
    for source in sources {
        sqlx::query(
            "INSERT INTO qa_grouping_corrections (correction_id, project, kind, from_pattern_id, to_pattern_id, reason)
             VALUES ($1, $2, 'merge', $3, $4, $5)",
        )
        .bind(Uuid::now_v7())
        .bind(&survivor.project)
        .bind(source)
        .bind(into)
        .bind(&merge.reason)
        .execute(&mut *transaction)
        .await?;
    }
    Ok((pattern_from_row(&merged)?, locked))
}

/// The occurrences a split moves, with their templates; fails naming an
/// occurrence that is not the pattern's.
pub async fn occurrence_templates(
    connection: &mut PgConnection,
    pattern_id: Uuid,
    occurrence_ids: &[Uuid],
) -> Result<Vec<(Uuid, Vec<String>, String)>, Error> {
    let rows = sqlx::query(
        "SELECT occurrence_id, template, task_id FROM qa_pattern_occurrences
         WHERE pattern_id = $1 AND occurrence_id = ANY($2)",
    )
    .bind(pattern_id)
    .bind(occurrence_ids)
    .fetch_all(&mut *connection)
    .await?;
    if let Some((index, missing)) = occurrence_ids
        .iter()
        .enumerate()
        .find(|(_, id)| !rows.iter().any(|row| row.get::<Uuid, _>("occurrence_id") == **id))
    {
        return Err(Error::invalid(
            format!("occurrence_ids[{index}]"),
            format!("occurrence {missing} is not an occurrence of pattern {pattern_id}"),
        ));
    }
    Ok(rows
        .iter()
        .map(|row| {
            let template: String = row.get("template");
            (row.get("occurrence_id"), template.split(' ').map(str::to_owned).collect(), row.get("task_id"))
        })
        .collect())
}

/// The templates of a pattern's occurrences except `excluded`, distinct.
pub async fn remaining_templates(
    connection: &mut PgConnection,
    pattern_id: Uuid,
    excluded: &[Uuid],
) -> Result<Vec<String>, Error> {
    let rows = sqlx::query(
        "SELECT DISTINCT template FROM qa_pattern_occurrences WHERE pattern_id = $1 AND occurrence_id <> ALL($2)",
    )
    .bind(pattern_id)
    .bind(excluded)
    .fetch_all(connection)
    .await?;
    Ok(rows.iter().map(|row| row.get("template")).collect())
}

/// The split's new pattern, its moved occurrences and the correction that
/// sends later messages with these templates to it.
pub struct SplitRows<'a> {
    pub split_id: Uuid,
    pub original: &'a Pattern,
    pub name: &'a str,
    pub template: &'a Template,
    pub original_template: Option<&'a Template>,
    pub occurrence_ids: &'a [Uuid],
    pub templates: &'a [String],
    pub reason: &'a str,
    pub by: ChangedBy,
}

pub async fn split_pattern(connection: &mut PgConnection, split: &SplitRows<'_>) -> Result<(), Error> {
    let original = split.original;
    sqlx::query(
        "INSERT INTO qa_patterns (pattern_id, project, category, name, description, common_cause, recommended_fix,
             template, template_tokens, route, file_globs, task_categories, task_titles, task_words, status,
             occurrence_count, task_count, confidence, first_seen_at, last_seen_at, last_change)
         SELECT $1, project, category, $2, '', '', '', $3, $4, $5, file_globs, task_categories, task_titles,
                task_words, 'active', 0, 0, confidence, now(), now(), $7
         FROM qa_patterns WHERE pattern_id = $6",
    )
    .bind(split.split_id)
    .bind(split.name)
    .bind(split.template.text())
    .bind(&split.template.tokens)
    .bind(split.template.route())
    .bind(original.pattern_id)
    .bind(split.by.as_str())
    .execute(&mut *connection)
    .await?;
    sqlx::query(
        "WITH moved AS (
             UPDATE qa_pattern_occurrences SET pattern_id = $1 WHERE occurrence_id = ANY($2) RETURNING 1
         ), counts AS (SELECT count(*) AS n FROM moved)
         UPDATE qa_patterns SET occurrence_count = occurrence_count + CASE WHEN pattern_id = $1 THEN n ELSE -n END
         FROM counts WHERE pattern_id IN ($1, $3)",
    )
    .bind(split.split_id)
    .bind(split.occurrence_ids)
    .bind(original.pattern_id)
    .execute(&mut *connection)
    .await?;
    // Both sides' first/last seen and distinct tasks from what they now hold.
    sqlx::query(
        "UPDATE qa_patterns p SET task_count = s.tasks, first_seen_at = coalesce(s.first, p.first_seen_at),
             last_seen_at = coalesce(s.last, p.last_seen_at), updated_at = now(), last_change = $5,
             template = coalesce(CASE WHEN p.pattern_id = $2 THEN $3 END, p.template),
             template_tokens = coalesce(CASE WHEN p.pattern_id = $2 THEN $4::text[] END, p.template_tokens)
         FROM (SELECT pattern_id, count(DISTINCT task_id) AS tasks, min(occurred_at) AS first, max(occurred_at) AS last
               FROM qa_pattern_occurrences WHERE pattern_id IN ($1, $2) GROUP BY pattern_id) AS s
         WHERE p.pattern_id = s.pattern_id",
    )
    .bind(split.split_id)
    .bind(original.pattern_id)
    .bind(split.original_template.map(Template::text))
    .bind(split.original_template.map(|template| &template.tokens))
    .bind(split.by.as_str())
    .execute(&mut *connection)
    .await?;
    sqlx::query(
        "INSERT INTO qa_grouping_corrections (correction_id, project, kind, from_pattern_id, to_pattern_id, templates,
             reason)
         VALUES ($1, $2, 'split', $3, $1, $4, $5)",
    )
    .bind(split.split_id)
    .bind(&original.project)
    .bind(original.pattern_id)
    .bind(split.templates)
    .bind(split.reason)
    .execute(connection)
    .await?;
    Ok(())
}

// ---- fixes ----

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
           AND a.outcome = 'success' AND a.trust = 'observed'
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
