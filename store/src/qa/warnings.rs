//! Warnings: the candidates for a task, their deliveries, and what each
//! delivery's outcome does to its pattern.

use sqlx::{PgConnection, PgPool, Row as _};
use uuid::Uuid;

use crate::qa::{PATTERN_COLUMNS, pattern_from_row, title_words_sql};
use lore_types::Error;
use lore_types::actions::StoredName as _;
use lore_types::qa::{Pattern, WarningOutcome};
use lore_types::scope::ProjectScope;

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
    // The query, its signals read side by side (`warnings/candidates.sql`).
    const CANDIDATES: &str = include_str!("warnings/candidates.sql");
    // A pattern held by the screen (a person's edit it caught) is warned
    // about by no one until released.
    const LIVE: &str = "project = $1 AND ($6::text[] IS NULL OR project = ANY($6)) AND status IN ('active', 'promoted')
                        AND occurrence_count >= $7 AND confidence >= $8 AND NOT held";
    let rows = sqlx::query(sqlx::AssertSqlSafe(
        CANDIDATES
            .replace("{title_words}", &title_words_sql("$4"))
            .replace("{same_category}", "($3 <> '' AND task_categories @> ARRAY[$3])::int::float8")
            .replace("{live}", LIVE)
            .replace("{columns}", PATTERN_COLUMNS),
    ))
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
    // a prepared statement switches to) guessed wrong (docs/BENCHMARKS.md).
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

/// Marks the deliveries acknowledged, once each (one acknowledged before
/// keeps its first note). Every id must be a delivery in scope.
pub async fn acknowledge(pool: &PgPool, scope: &ProjectScope, delivery_ids: &[Uuid], note: &str) -> Result<u64, Error> {
    let mut transaction = pool.begin().await?;
    let known: Vec<Uuid> = sqlx::query_scalar(
        "SELECT delivery_id FROM qa_warning_deliveries
         WHERE delivery_id = ANY($1) AND ($2::text[] IS NULL OR project = ANY($2)) FOR UPDATE",
    )
    .bind(delivery_ids)
    .bind(scope.sql_filter())
    .fetch_all(&mut *transaction)
    .await?;
    if let Some(unknown) = delivery_ids.iter().find(|id| !known.contains(id)) {
        return Err(Error::NotFound(format!("warning delivery {unknown}")));
    }
    let updated = sqlx::query(
        "UPDATE qa_warning_deliveries SET acknowledged_at = now(), acknowledgement = $2
         WHERE delivery_id = ANY($1) AND acknowledged_at IS NULL",
    )
    .bind(delivery_ids)
    .bind(note)
    .execute(&mut *transaction)
    .await?
    .rows_affected();
    transaction.commit().await?;
    Ok(updated)
}
