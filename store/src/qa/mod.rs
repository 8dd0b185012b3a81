//! QA failures and patterns: what the rest of `qa` shares (a pattern's
//! columns and row, the project a capture makes sure of, one pattern or a
//! few read or locked), and a module per part of the domain's `qa`.

pub mod capture;
pub mod category;
pub mod dashboard;
pub mod fixes;
pub mod guards;
pub mod hotspots;
pub mod mask_proposals;
pub mod masks;
pub mod patterns;
pub mod promotion;
pub mod regrouping_proposals;
pub mod remining;
pub mod results;
pub mod routes;
pub mod warnings;

use sqlx::postgres::PgRow;
use sqlx::{PgConnection, PgPool, Row as _};
use uuid::Uuid;

use crate::knowledge::parse;
use lore_types::Error;
use lore_types::actions::StoredName as _;
use lore_types::qa::Pattern;
use lore_types::qa::mask_proposals::ProposalState;
use lore_types::scope::ProjectScope;

pub(crate) const PATTERN_COLUMNS: &str = "p.pattern_id, p.project, p.category, p.name, p.description, \
     p.common_cause, p.recommended_fix, p.template, p.file_globs, p.status, p.merged_into, p.occurrence_count, \
     p.task_count, p.confidence, p.prevented_count, p.failed_anyway_count, p.warnings_delivered, p.first_seen_at, \
     p.last_seen_at, p.fix_trust, p.held, p.last_change";

/// What a pattern learns from the failures that join it, with how many
/// distinct values it keeps (the first seen): the globs of their files, the
/// categories and titles of their tasks, and the English stems of those
/// titles, which "similar past tasks" are matched on.
pub(crate) const LEARNED: [(&str, usize); 4] =
    [("file_globs", 20), ("task_categories", 20), ("task_titles", 20), ("task_words", 200)];

/// `column = <its values followed by the new ones, distinct, capped>` for
/// every learned column; `new_values` gives the SQL of a column's new values.
pub(crate) fn learned_sql(alias: &str, new_values: impl Fn(&str) -> String) -> String {
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

pub async fn ensure_project(connection: &mut PgConnection, project: &str) -> Result<(), Error> {
    sqlx::query("INSERT INTO projects (name) VALUES ($1) ON CONFLICT DO NOTHING")
        .bind(project)
        .execute(connection)
        .await?;
    Ok(())
}

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

/// A stored proposal's state (of a mask or a regrouping).
pub(crate) fn proposal_state(row: &PgRow) -> Result<ProposalState, Error> {
    let state: String = row.try_get("state")?;
    ProposalState::parse(&state)
        .ok_or_else(|| Error::FailedPrecondition(format!("a stored proposal has the unknown state {state:?}")))
}

/// Fails unless a proposal (`what`, e.g. "mask proposal") is open, naming
/// who decided it.
pub(crate) fn require_open(what: &str, proposal_id: Uuid, state: ProposalState, decided_by: &str) -> Result<(), Error> {
    if state == ProposalState::Open {
        return Ok(());
    }
    let by = if decided_by.is_empty() { String::new() } else { format!(" by {decided_by}") };
    Err(Error::FailedPrecondition(format!("{what} {proposal_id} was already {}{by}", state.as_str())))
}
