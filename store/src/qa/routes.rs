//! The routes captures compare messages on: their locks, the patterns
//! each route holds, and the corrections that send a template elsewhere.

use std::collections::HashMap;

use sqlx::{PgConnection, Row as _};
use uuid::Uuid;

use lore_grouping::template::Template;
use lore_types::Error;

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
