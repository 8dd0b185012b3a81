//! What QA-learning gives back: warnings and their outcomes, promotions,
//! and the dashboard's aggregates.

use chrono::{DateTime, Utc};
use sqlx::postgres::PgRow;
use sqlx::{PgConnection, PgPool, Row as _};
use uuid::Uuid;

use super::knowledge::parse;
use super::qa::{PATTERN_COLUMNS, pattern_from_row, title_words_sql};
use lore_model::Error;
use lore_model::actions::StoredName as _;
use lore_model::qa::PromotionThresholds;
use lore_model::qa::significance::Counts;
use lore_model::qa::{
    DashboardQuery, DayRate, Pattern, Promotion, PromotionEvent, PromotionStatus, TaskFigures, WarningOutcome,
};
use lore_model::scope::ProjectScope;

// ---- warnings ----

/// What a task's warnings are chosen by.
pub struct WarningSignals<'a> {
    pub project: &'a str,
    pub file_globs: &'a [String],
    pub task_category: &'a str,
    pub title: &'a str,
    /// An OR-ed `to_tsquery('simple', ...)` of the task's words; empty for
    /// none.
    pub words: &'a str,
    pub min_occurrences: i64,
    pub min_confidence: f64,
    pub weights: &'a RelevanceWeights,
}

/// How much each signal adds to a pattern's relevance to a task; they add
/// up to 1.
pub struct RelevanceWeights {
    pub files: f64,
    pub similar_task: f64,
    pub category: f64,
    pub words: f64,
}

/// A pattern that may be warned about, with how it matched the task.
pub struct WarningCandidate {
    pub pattern: Pattern,
    /// 0..=1: the weighted sum of the signals below.
    pub relevance: f64,
    pub matching_globs: Vec<String>,
    pub same_category: bool,
    /// Share of the task title's words seen in the titles of the pattern's
    /// tasks, and the closest of those titles.
    pub task_similarity: f64,
    pub similar_task: Option<String>,
    /// 0..=1 from the full-text rank of the task's words in the pattern.
    pub text_match: f64,
    /// The highest occurrence count among all the matching patterns.
    pub most_frequent: i64,
    /// The files the attempt behind the pattern's fix changed.
    pub fix_files: Vec<String>,
}

/// Each signal reads its own index (file globs, task categories, past task
/// title words, pattern words) with the floors applied, so the work follows
/// the matches; relevance x confidence x ln(1 + occurrences) ranks them in
/// the database and only the top `limit` are read whole.
pub async fn warning_candidates(
    pool: &PgPool,
    scope: &ProjectScope,
    signals: &WarningSignals<'_>,
    limit: i64,
) -> Result<Vec<WarningCandidate>, Error> {
    // A pattern held by the screen (a person's edit it caught) is warned
    // about by no one until released.
    const LIVE: &str = "project = $1 AND ($6::text[] IS NULL OR project = ANY($6)) AND status IN ('active', 'promoted')
                        AND occurrence_count >= $7 AND confidence >= $8 AND NOT held";
    let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
        "-- The title is stemmed once, not once per pattern compared.
         WITH task AS MATERIALIZED (SELECT {title_words} AS words),
         signals AS (
             SELECT pattern_id, occurrence_count, warn_weight,
                    cardinality(ARRAY(SELECT unnest(file_globs) INTERSECT SELECT unnest($2::text[])))::float8
                        / greatest(cardinality($2::text[]), 1) AS files,
                    {same_category} AS category, 0::float8 AS similar_task, 0::float8 AS words
             FROM qa_patterns WHERE file_globs && $2 AND {LIVE}
             UNION ALL
             SELECT pattern_id, occurrence_count, warn_weight, 0, {same_category},
                    cardinality(ARRAY(SELECT unnest(task_words) INTERSECT SELECT unnest(task.words)))::float8
                        / greatest(cardinality(task.words), 1),
                    0
             FROM qa_patterns, task WHERE cardinality(task.words) > 0 AND task_words && task.words AND {LIVE}
             UNION ALL
             SELECT pattern_id, occurrence_count, warn_weight, 0, {same_category}, 0,
                    least(1, 10 * ts_rank(search_vector, query))
             FROM qa_patterns, to_tsquery('simple', $5) AS query
             WHERE $5 <> '' AND search_vector @@ query AND {LIVE}
             UNION ALL
             -- Sharing only the category, patterns rank by their weight
             -- alone: only the first few can make the top N.
             (SELECT pattern_id, occurrence_count, warn_weight, 0, 1, 0, 0
              FROM qa_patterns WHERE $3 <> '' AND task_categories @> ARRAY[$3] AND {LIVE}
              ORDER BY warn_weight DESC, pattern_id LIMIT $9)
         ), scored AS (
             SELECT pattern_id, max(files) AS files, max(category) AS category,
                    max(similar_task) AS similar_task, max(words) AS words,
                    least(1, $10 * max(files) + $11 * max(similar_task) + $12 * max(category) + $13 * max(words))
                        AS relevance,
                    max(occurrence_count) AS occurrence_count, max(warn_weight) AS warn_weight
             FROM signals GROUP BY pattern_id
         ), ranked AS (
             SELECT *, max(occurrence_count) OVER () AS most_frequent FROM scored
             ORDER BY relevance * warn_weight DESC, pattern_id
             LIMIT $9
         )
         SELECT {PATTERN_COLUMNS}, r.relevance, r.category = 1 AS same_category, r.similar_task, r.words,
                r.most_frequent,
                ARRAY(SELECT unnest(p.file_globs) INTERSECT SELECT unnest($2::text[])) AS matching_globs,
                (SELECT title FROM unnest(p.task_titles) AS title
                 ORDER BY similarity(title, $4) DESC LIMIT 1) AS similar_title,
                COALESCE((SELECT a.files_changed FROM qa_fix_attempts a WHERE a.attempt_id = p.fix_attempt_id),
                         '{{}}') AS fix_files
         FROM ranked r JOIN qa_patterns p USING (pattern_id)",
        title_words = title_words_sql("$4"),
        same_category = "($3 <> '' AND task_categories @> ARRAY[$3])::int::float8",
    )))
    .bind(signals.project)
    .bind(signals.file_globs)
    .bind(signals.task_category)
    .bind(signals.title)
    .bind(signals.words)
    .bind(scope.sql_filter())
    .bind(signals.min_occurrences)
    .bind(signals.min_confidence)
    .bind(limit)
    .bind(signals.weights.files)
    .bind(signals.weights.similar_task)
    .bind(signals.weights.category)
    .bind(signals.weights.words)
    // Planned for each task: which signal is cheap to read first depends
    // on how common its category and words are, and a generic plan (which
    // a prepared statement switches to) guessed wrong by 2x.
    .persistent(false)
    .fetch_all(pool)
    .await?;
    rows.iter()
        .map(|row| {
            let task_similarity: f64 = row.try_get("similar_task")?;
            Ok(WarningCandidate {
                pattern: pattern_from_row(row)?,
                relevance: row.try_get("relevance")?,
                matching_globs: row.try_get("matching_globs")?,
                same_category: row.try_get("same_category")?,
                task_similarity,
                similar_task: if task_similarity > 0.0 { row.try_get("similar_title")? } else { None },
                text_match: row.try_get("words")?,
                most_frequent: row.try_get("most_frequent")?,
                fix_files: row.try_get("fix_files")?,
            })
        })
        .collect::<Result<_, sqlx::Error>>()
        .map_err(Error::from)
}

/// One warning chosen for a task, shown or held out.
pub struct NewDelivery<'a> {
    pub delivery_id: Uuid,
    pub pattern_id: Uuid,
    pub rank: i32,
    pub relevance: f64,
    pub confidence: f64,
    pub frequency: i64,
    pub score: f64,
    pub text: &'a str,
    pub reason: &'a str,
}

/// Records the deliveries of one GetWarnings call and counts the shown ones
/// on their patterns.
pub async fn record_deliveries(
    pool: &PgPool,
    project: &str,
    task_id: &str,
    session_id: Option<Uuid>,
    held_out: bool,
    deliveries: &[NewDelivery<'_>],
) -> Result<(), Error> {
    if deliveries.is_empty() {
        return Ok(());
    }
    let column = |get: fn(&NewDelivery) -> String| deliveries.iter().map(get).collect::<Vec<_>>();
    let ids: Vec<Uuid> = deliveries.iter().map(|delivery| delivery.delivery_id).collect();
    let patterns: Vec<Uuid> = deliveries.iter().map(|delivery| delivery.pattern_id).collect();
    let ranks: Vec<i32> = deliveries.iter().map(|delivery| delivery.rank).collect();
    let relevances: Vec<f64> = deliveries.iter().map(|delivery| delivery.relevance).collect();
    let confidences: Vec<f64> = deliveries.iter().map(|delivery| delivery.confidence).collect();
    let frequencies: Vec<i64> = deliveries.iter().map(|delivery| delivery.frequency).collect();
    let scores: Vec<f64> = deliveries.iter().map(|delivery| delivery.score).collect();
    sqlx::query(
        "WITH delivered AS (
             INSERT INTO qa_warning_deliveries (delivery_id, project, pattern_id, task_id, session_id, rank, relevance,
                 confidence, frequency, score, text, reason, held_out)
             SELECT d.delivery_id, $12, d.pattern_id, $3, $4, d.rank, d.relevance, d.confidence, d.frequency,
                    d.score, d.text, d.reason, $13
             FROM unnest($1::uuid[], $2::uuid[], $5::int[], $6::float8[], $7::float8[], $8::bigint[], $9::float8[],
                         $10::text[], $11::text[])
                 AS d(delivery_id, pattern_id, rank, relevance, confidence, frequency, score, text, reason)
             RETURNING pattern_id
         )
         UPDATE qa_patterns SET warnings_delivered = warnings_delivered + 1
         WHERE NOT $13 AND pattern_id IN (SELECT pattern_id FROM delivered)",
    )
    .bind(&ids)
    .bind(&patterns)
    .bind(task_id)
    .bind(session_id)
    .bind(&ranks)
    .bind(&relevances)
    .bind(&confidences)
    .bind(&frequencies)
    .bind(&scores)
    .bind(column(|delivery| delivery.text.to_owned()))
    .bind(column(|delivery| delivery.reason.to_owned()))
    .bind(project)
    .bind(held_out)
    .execute(pool)
    .await?;
    Ok(())
}

/// How outcomes move a pattern's confidence.
pub struct OutcomeEffect {
    pub prevention_boost: f64,
    pub max_confidence: f64,
    pub failure_decay: f64,
    pub min_confidence: f64,
}

/// Sets the outcome of the deliveries that have none, exactly once each
/// (the rows are locked), and updates their patterns. Returns how many
/// deliveries changed and the affected patterns.
pub async fn record_outcome(
    pool: &PgPool,
    scope: &ProjectScope,
    delivery_ids: &[Uuid],
    outcome: WarningOutcome,
    note: &str,
    effect: &OutcomeEffect,
) -> Result<(u64, Vec<Pattern>), Error> {
    let mut transaction = pool.begin().await?;
    let rows = sqlx::query(
        "SELECT delivery_id, pattern_id, outcome IS NOT NULL AS judged, held_out FROM qa_warning_deliveries
         WHERE delivery_id = ANY($1) AND ($2::text[] IS NULL OR project = ANY($2))
         ORDER BY delivery_id FOR UPDATE",
    )
    .bind(delivery_ids)
    .bind(scope.sql_filter())
    .fetch_all(&mut *transaction)
    .await?;
    if let Some((index, missing)) = delivery_ids
        .iter()
        .enumerate()
        .find(|(_, id)| !rows.iter().any(|row| row.get::<Uuid, _>("delivery_id") == **id))
    {
        return Err(Error::NotFound(format!("delivery_ids[{index}]: delivery {missing}")));
    }
    let open: Vec<Uuid> =
        rows.iter().filter(|row| !row.get::<bool, _>("judged")).map(|row| row.get("delivery_id")).collect();
    let shown: Vec<Uuid> = rows
        .iter()
        .filter(|row| !row.get::<bool, _>("judged") && !row.get::<bool, _>("held_out"))
        .map(|row| row.get("pattern_id"))
        .collect();
    sqlx::query(
        "UPDATE qa_warning_deliveries SET outcome = $2, outcome_note = $3, outcome_at = now()
         WHERE delivery_id = ANY($1)",
    )
    .bind(&open)
    .bind(outcome.as_str())
    .bind(note)
    .execute(&mut *transaction)
    .await?;
    apply_outcomes(&mut transaction, &shown, outcome, effect).await?;
    let mut affected: Vec<Uuid> = rows.iter().map(|row| row.get("pattern_id")).collect();
    affected.sort();
    affected.dedup();
    let patterns = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {PATTERN_COLUMNS} FROM qa_patterns p WHERE pattern_id = ANY($1) ORDER BY pattern_id"
    )))
    .bind(&affected)
    .fetch_all(&mut *transaction)
    .await?;
    transaction.commit().await?;
    Ok((open.len() as u64, patterns.iter().map(pattern_from_row).collect::<Result<_, _>>()?))
}

/// Counts `outcome` once per entry of `pattern_ids` (a pattern appears once
/// per shown delivery) on the patterns and moves their confidence, in
/// pattern order so that concurrent calls lock alike.
pub async fn apply_outcomes(
    connection: &mut PgConnection,
    pattern_ids: &[Uuid],
    outcome: WarningOutcome,
    effect: &OutcomeEffect,
) -> Result<(), Error> {
    let mut per_pattern: Vec<(Uuid, i64)> = Vec::new();
    for pattern_id in pattern_ids {
        match per_pattern.iter_mut().find(|(id, _)| id == pattern_id) {
            Some((_, count)) => *count += 1,
            None => per_pattern.push((*pattern_id, 1)),
        }
    }
    per_pattern.sort();
    for (pattern_id, count) in &per_pattern {
        sqlx::query(
            "UPDATE qa_patterns SET
                 prevented_count = prevented_count + CASE WHEN $2 = 'prevented' THEN $3 ELSE 0 END,
                 failed_anyway_count = failed_anyway_count + CASE WHEN $2 = 'failed_anyway' THEN $3 ELSE 0 END,
                 confidence = CASE $2
                     WHEN 'prevented' THEN greatest(confidence, least($5, confidence + $3 * $4))
                     WHEN 'failed_anyway' THEN least(confidence, greatest($7, confidence - $3 * $6))
                     ELSE confidence END,
                 updated_at = now()
             WHERE pattern_id = $1",
        )
        .bind(pattern_id)
        .bind(outcome.as_str())
        .bind(count)
        .bind(effect.prevention_boost)
        .bind(effect.max_confidence)
        .bind(effect.failure_decay)
        .bind(effect.min_confidence)
        .execute(&mut *connection)
        .await?;
    }
    Ok(())
}

// ---- promotions ----

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

// ---- dashboard ----

/// The failures a dashboard looks at, as SQL over `f` (qa_failures):
/// project and scope, window, category and agent ($1..$6).
const WINDOW: &str = "f.project = $1 AND ($2::text[] IS NULL OR f.project = ANY($2))
     AND f.occurred_at >= $3 AND f.occurred_at < $4
     AND ($5::text IS NULL OR f.category = $5)
     AND ($6::text IS NULL OR f.session_id IN (SELECT session_id FROM sessions WHERE project = $1 AND agent_id = $6))";

fn window_query<'q>(
    sql: String,
    query: &'q DashboardQuery,
    scope: &ProjectScope,
) -> sqlx::query::Query<'q, sqlx::Postgres, sqlx::postgres::PgArguments> {
    sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(&query.project)
        .bind(scope.sql_filter())
        .bind(query.from)
        .bind(query.until)
        .bind(&query.category)
        .bind(&query.agent_id)
}

pub struct DashboardFigures {
    pub days: Vec<DayRate>,
    pub top: Vec<Pattern>,
    pub categories: Vec<(String, i64)>,
    pub failures: i64,
    pub resolved: i64,
    pub mean_attempts: f64,
    pub prevented: i64,
    pub failed_anyway: i64,
    pub delivered: i64,
    /// Tasks with a scored warning, and how many of them failed on a
    /// warned pattern: shown, then held out.
    pub shown: Counts,
    pub held_out: Counts,
    pub tasks: TaskFigures,
    pub missed: i64,
}

/// The dashboard's aggregates, each one query over the window, run side by
/// side.
pub async fn dashboard(pool: &PgPool, scope: &ProjectScope, query: &DashboardQuery) -> Result<DashboardFigures, Error> {
    let days = window_query(
        format!(
            "SELECT day, sum(failures)::bigint AS failures, count(DISTINCT task_id) AS tasks FROM (
                 SELECT (f.occurred_at AT TIME ZONE 'UTC')::date AS day, f.task_id, 1 AS failures
                 FROM qa_failures f WHERE {WINDOW}
                 UNION ALL
                 SELECT (d.delivered_at AT TIME ZONE 'UTC')::date, d.task_id, 0
                 FROM qa_warning_deliveries d
                 WHERE d.project = $1 AND ($2::text[] IS NULL OR d.project = ANY($2))
                   AND d.delivered_at >= $3 AND d.delivered_at < $4 AND $5::text IS NULL
                   AND ($6::text IS NULL OR d.session_id IN (SELECT session_id FROM sessions WHERE project = $1
                                                             AND agent_id = $6))
             ) AS reached GROUP BY day ORDER BY day"
        ),
        query,
        scope,
    )
    .fetch_all(pool);
    let top = window_query(
        format!(
            "SELECT {PATTERN_COLUMNS_IN_WINDOW}
             FROM (SELECT o.pattern_id, count(*) AS in_window FROM qa_pattern_occurrences o
                   JOIN qa_failures f USING (failure_id) WHERE {WINDOW} GROUP BY o.pattern_id
                   ORDER BY count(*) DESC LIMIT $7) AS w
             JOIN qa_patterns p USING (pattern_id) ORDER BY w.in_window DESC, p.pattern_id",
            PATTERN_COLUMNS_IN_WINDOW =
                PATTERN_COLUMNS.replace("p.occurrence_count", "w.in_window AS occurrence_count"),
        ),
        query,
        scope,
    )
    .bind(query.top_patterns)
    .fetch_all(pool);
    let categories = window_query(
        format!("SELECT f.category, count(*) AS n FROM qa_failures f WHERE {WINDOW} GROUP BY 1 ORDER BY 2 DESC, 1"),
        query,
        scope,
    )
    .fetch_all(pool);
    let totals = window_query(
        format!(
            "SELECT count(*) AS failures, count(r.failure_id) AS resolved, coalesce(avg(r.attempts), 0)::float8 AS mean
             FROM qa_failures f LEFT JOIN qa_failure_resolutions r USING (failure_id) WHERE {WINDOW}"
        ),
        query,
        scope,
    )
    .fetch_one(pool);
    let outcomes = window_query(
        "SELECT count(*) FILTER (WHERE NOT d.held_out) AS delivered,
                count(*) FILTER (WHERE NOT d.held_out AND d.outcome = 'prevented') AS prevented,
                count(*) FILTER (WHERE NOT d.held_out AND d.outcome = 'failed_anyway') AS failed_anyway
         FROM qa_warning_deliveries d
         WHERE d.project = $1 AND ($2::text[] IS NULL OR d.project = ANY($2))
           AND d.delivered_at >= $3 AND d.delivered_at < $4
           AND ($5::text IS NULL OR d.pattern_id IN (SELECT pattern_id FROM qa_patterns WHERE project = $1
                                                     AND category = $5))
           AND ($6::text IS NULL OR d.session_id IN (SELECT session_id FROM sessions WHERE project = $1
                                                     AND agent_id = $6))"
            .to_owned(),
        query,
        scope,
    )
    .fetch_one(pool);
    // The agent filter reads the session of the task's results.
    let of_agent = "($6::text IS NULL OR r.session_id IN (SELECT session_id FROM sessions WHERE project = $1
                                                          AND agent_id = $6))";
    let tasks = window_query(
        format!(
            "WITH started AS (
                 SELECT r.task_id FROM qa_task_results r
                 WHERE r.project = $1 AND ($2::text[] IS NULL OR r.project = ANY($2)) AND r.attempt = 1
                   AND r.occurred_at >= $3 AND r.occurred_at < $4 AND {of_agent}
                   -- A category keeps the tasks that failed in it.
                   AND ($5::text IS NULL OR EXISTS (SELECT 1 FROM qa_failures f WHERE f.project = $1
                                                    AND f.task_id = r.task_id AND f.category = $5))
             ), per_task AS (
                 SELECT r.task_id, bool_or(NOT r.passed) AS failed, bool_or(r.passed AND r.attempt = 1) AS first_time,
                        min(r.attempt) FILTER (WHERE r.passed) AS attempts_to_pass
                 FROM qa_task_results r JOIN started USING (task_id) WHERE r.project = $1 GROUP BY r.task_id
             )
             SELECT count(*) AS tasks, count(*) FILTER (WHERE failed) AS failed,
                    count(attempts_to_pass) AS passed, count(*) FILTER (WHERE first_time) AS first_time,
                    coalesce(avg(attempts_to_pass), 0)::float8 AS mean FROM per_task"
        ),
        query,
        scope,
    )
    .fetch_one(pool);
    // A task is in the held-out group when its warnings were held out (a
    // task is held out whole); it failed when a warned pattern recurred.
    let groups = window_query(
        "SELECT d.held_out, count(DISTINCT d.task_id) AS tasks,
                count(DISTINCT d.task_id) FILTER (WHERE d.outcome = 'failed_anyway') AS failed
         FROM qa_warning_deliveries d
         WHERE d.project = $1 AND ($2::text[] IS NULL OR d.project = ANY($2))
           AND d.outcome IN ('prevented', 'failed_anyway', 'unrelated')
           AND d.outcome_at >= $3 AND d.outcome_at < $4
           AND ($5::text IS NULL OR d.pattern_id IN (SELECT pattern_id FROM qa_patterns WHERE project = $1
                                                     AND category = $5))
           AND ($6::text IS NULL OR d.session_id IN (SELECT session_id FROM sessions WHERE project = $1
                                                     AND agent_id = $6))
         GROUP BY d.held_out"
            .to_owned(),
        query,
        scope,
    )
    .fetch_all(pool);
    let missed = window_query(
        format!(
            "SELECT count(*) FROM qa_missed_opportunities m JOIN qa_task_results r USING (result_id)
             WHERE m.project = $1 AND ($2::text[] IS NULL OR m.project = ANY($2))
               AND m.recorded_at >= $3 AND m.recorded_at < $4
               AND ($5::text IS NULL OR m.pattern_id IN (SELECT pattern_id FROM qa_patterns WHERE project = $1
                                                         AND category = $5))
               AND {of_agent}"
        ),
        query,
        scope,
    )
    .fetch_one(pool);
    let (days, top, categories, totals, outcomes, tasks, groups, missed) =
        tokio::try_join!(days, top, categories, totals, outcomes, tasks, groups, missed)?;
    let group = |held_out: bool| {
        groups
            .iter()
            .find(|row| row.get::<bool, _>("held_out") == held_out)
            .map(|row| Counts {
                tasks: row.get::<i64, _>("tasks").max(0) as u64,
                failed: row.get::<i64, _>("failed").max(0) as u64,
            })
            .unwrap_or_default()
    };
    Ok(DashboardFigures {
        days: days
            .iter()
            .map(|row| DayRate { day: row.get("day"), failures: row.get("failures"), tasks: row.get("tasks") })
            .collect(),
        top: top.iter().map(pattern_from_row).collect::<Result<_, _>>()?,
        categories: categories.iter().map(|row| (row.get("category"), row.get("n"))).collect(),
        failures: totals.get("failures"),
        resolved: totals.get("resolved"),
        mean_attempts: totals.get("mean"),
        prevented: outcomes.get("prevented"),
        failed_anyway: outcomes.get("failed_anyway"),
        delivered: outcomes.get("delivered"),
        shown: group(false),
        held_out: group(true),
        tasks: TaskFigures {
            tasks: tasks.get("tasks"),
            failed: tasks.get("failed"),
            passed: tasks.get("passed"),
            passed_first_time: tasks.get("first_time"),
            mean_attempts_to_pass: tasks.get("mean"),
        },
        missed: missed.get(0),
    })
}
