//! Patterns as people correct them: listed, edited, held, retired,
//! merged and split, with their occurrences.

use sqlx::{PgConnection, PgPool, Row as _};
use uuid::Uuid;

use super::capture::link_from_row;
use super::{PATTERN_COLUMNS, learned_sql, lock_pattern, pattern_from_row};
use lore_grouping::template::Template;
use lore_types::Error;
use lore_types::actions::StoredName as _;
use lore_types::qa::limits::MAX_REMINE_WINDOW;
use lore_types::qa::{ChangedBy, Merge, Occurrence, Pattern, PatternEdits, PatternFilter, PatternStatus};
use lore_types::scope::ProjectScope;

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
    .bind(filter.file.as_deref().map(lore_types::qa::files::glob_of))
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

/// Applies a person's edits; `held` says the screen held them (the pattern
/// is then held out of warnings and the queue records why).
pub async fn update_pattern(
    pool: &PgPool,
    scope: &ProjectScope,
    pattern_id: Uuid,
    edits: &PatternEdits,
    held: Option<&lore_types::trust::Held>,
    origin: &lore_types::trust::Origin,
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
        let kind = lore_types::trust::quarantine::ItemKind::Pattern;
        let project: String = row.try_get("project")?;
        crate::trust::quarantine::hold(&mut transaction, &project, kind, pattern_id, held, origin).await?;
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
    let mut moved_from = Vec::with_capacity(sources.len());
    for source in sources {
        moved_from.push(newest_occurrences(&mut *transaction, *source).await?);
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
    remember_merges(&mut *transaction, &survivor.project, merge, &moved_from).await?;
    Ok((pattern_from_row(&merged)?, locked))
}

/// Remembers each source's merge into the survivor, so later captures
/// follow it. Each correction keeps the occurrences it moved (read before
/// the update, `moved_from` in the order of the sources), so re-mining can
/// replay the groups as they were before it (`lore_grouping::evidence`).
async fn remember_merges(
    connection: &mut PgConnection,
    project: &str,
    merge: &Merge,
    moved_from: &[Vec<Uuid>],
) -> Result<(), Error> {
    for (source, moved) in merge.sources.iter().zip(moved_from) {
        sqlx::query(
            "INSERT INTO qa_grouping_corrections
                 (correction_id, project, kind, from_pattern_id, to_pattern_id, reason, occurrence_ids)
             VALUES ($1, $2, 'merge', $3, $4, $5, $6)",
        )
        .bind(Uuid::now_v7())
        .bind(project)
        .bind(source)
        .bind(merge.into)
        .bind(&merge.reason)
        .bind(moved)
        .execute(&mut *connection)
        .await?;
    }
    Ok(())
}

/// A pattern's newest occurrences, as many as re-mining reads: what a
/// correction of it remembers having moved.
async fn newest_occurrences(connection: &mut PgConnection, pattern_id: Uuid) -> Result<Vec<Uuid>, Error> {
    let moved = sqlx::query_scalar(
        "SELECT occurrence_id FROM qa_pattern_occurrences WHERE pattern_id = $1
         ORDER BY occurred_at DESC, occurrence_id DESC LIMIT $2",
    )
    .bind(pattern_id)
    .bind(MAX_REMINE_WINDOW)
    .fetch_all(connection)
    .await?;
    Ok(moved)
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
             reason, occurrence_ids)
         VALUES ($1, $2, 'split', $3, $1, $4, $5, $6)",
    )
    .bind(split.split_id)
    .bind(&original.project)
    .bind(original.pattern_id)
    .bind(split.templates)
    .bind(split.reason)
    .bind(split.occurrence_ids)
    .execute(connection)
    .await?;
    Ok(())
}
