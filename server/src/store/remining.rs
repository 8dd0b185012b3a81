//! What re-mining reads: a project's recent occurrences with the live
//! pattern and category each is in, and the patterns people corrected.

use std::collections::BTreeSet;

use sqlx::{PgPool, Row as _};
use uuid::Uuid;

use crate::Error;

/// One recent occurrence: its id, its live pattern, the pattern's
/// category, and its normalized template.
#[derive(Debug, Clone, PartialEq)]
pub struct RecentOccurrence {
    pub occurrence_id: Uuid,
    pub pattern_id: Uuid,
    pub category: String,
    pub template: String,
}

/// The newest `limit` occurrences of `project`'s live patterns.
pub async fn recent_occurrences(pool: &PgPool, project: &str, limit: i64) -> Result<Vec<RecentOccurrence>, Error> {
    let rows = sqlx::query(
        "SELECT o.occurrence_id, o.pattern_id, p.category, o.template
         FROM qa_pattern_occurrences o JOIN qa_patterns p USING (pattern_id)
         WHERE o.project = $1 AND p.status IN ('candidate', 'active', 'promoted')
         ORDER BY o.occurred_at DESC, o.occurrence_id DESC LIMIT $2",
    )
    .bind(project)
    .bind(limit)
    .fetch_all(pool)
    .await?;
    rows.iter()
        .map(|row| {
            Ok(RecentOccurrence {
                occurrence_id: row.try_get("occurrence_id")?,
                pattern_id: row.try_get("pattern_id")?,
                category: row.try_get("category")?,
                template: row.try_get("template")?,
            })
        })
        .collect::<Result<_, sqlx::Error>>()
        .map_err(Error::from)
}

/// Patterns a person merged or split (either side): re-mining leaves them
/// as they are. Re-mining's own corrections carry `reason_prefix`.
pub async fn corrected_by_people(pool: &PgPool, project: &str, reason_prefix: &str) -> Result<BTreeSet<Uuid>, Error> {
    let rows = sqlx::query(
        "SELECT from_pattern_id, to_pattern_id FROM qa_grouping_corrections
         WHERE project = $1 AND NOT starts_with(reason, $2)",
    )
    .bind(project)
    .bind(reason_prefix)
    .fetch_all(pool)
    .await?;
    let mut pinned = BTreeSet::new();
    for row in &rows {
        pinned.insert(row.try_get::<Uuid, _>("from_pattern_id")?);
        pinned.insert(row.try_get::<Uuid, _>("to_pattern_id")?);
    }
    Ok(pinned)
}

/// Projects with an occurrence newer than `since`: those worth re-mining.
pub async fn projects_captured_since(
    pool: &PgPool,
    since: chrono::DateTime<chrono::Utc>,
) -> Result<Vec<String>, Error> {
    let projects = sqlx::query_scalar(
        "SELECT DISTINCT project FROM qa_pattern_occurrences WHERE occurred_at > $1 ORDER BY project",
    )
    .bind(since)
    .fetch_all(pool)
    .await?;
    Ok(projects)
}

/// Says why re-mining moved these occurrences: what GetPattern shows as
/// the reason each joined its pattern.
pub async fn note_regrouped(pool: &PgPool, occurrence_ids: &[Uuid], reason: &str) -> Result<(), Error> {
    sqlx::query("UPDATE qa_pattern_occurrences SET reason = $2 WHERE occurrence_id = ANY($1)")
        .bind(occurrence_ids)
        .bind(reason)
        .execute(pool)
        .await?;
    Ok(())
}
