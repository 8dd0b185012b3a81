//! What hot spots are computed from: the files each session edited in a
//! window (its `file_edit` actions, and the files of the failures it
//! captured) with whether it failed QA, and the actions of each type with
//! how many failed.

use chrono::{DateTime, Utc};
use sqlx::PgPool;
use uuid::Uuid;

use lore_types::Error;
use lore_types::qa::hotspots::Touch;
use lore_types::qa::significance::Counts;
use lore_types::scope::ProjectScope;

/// A window read for hot spots.
#[derive(Debug, Clone, Copy)]
pub struct Window<'a> {
    pub project: &'a str,
    pub from: DateTime<Utc>,
    pub until: DateTime<Utc>,
}

/// Distinct (session, file) pairs read at most: past this the busiest
/// window is a sample of its first sessions, not a query that runs away.
pub const MAX_TOUCHES: i64 = 200_000;

pub async fn project_exists(pool: &PgPool, scope: &ProjectScope, project: &str) -> Result<bool, Error> {
    if !scope.allows(project) {
        return Ok(false);
    }
    Ok(sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM projects WHERE name = $1)")
        .bind(project)
        .fetch_one(pool)
        .await?)
}

/// Each session's edited files in the window, and whether the session
/// failed QA: a failed task result of the session, or a failure it
/// captured.
pub async fn touches(pool: &PgPool, scope: &ProjectScope, window: Window<'_>) -> Result<Vec<Touch>, Error> {
    let rows: Vec<(Uuid, String, bool)> = sqlx::query_as(
        "WITH edited AS (
             SELECT a.session_id, f.path
             FROM actions a,
                  LATERAL edited_files(a.context) AS f(path)
             WHERE a.project = $1 AND ($2::text[] IS NULL OR a.project = ANY($2))
               AND a.action_type = 'file_edit' AND a.session_id IS NOT NULL
               AND a.occurred_at >= $3 AND a.occurred_at < $4
             UNION
             SELECT q.session_id, unnest(q.files_modified)
             FROM qa_failures q
             WHERE q.project = $1 AND ($2::text[] IS NULL OR q.project = ANY($2)) AND q.session_id IS NOT NULL
               AND q.occurred_at >= $3 AND q.occurred_at < $4
         ),
         failed AS (
             SELECT session_id FROM qa_task_results
             WHERE project = $1 AND NOT passed AND session_id IS NOT NULL
               AND occurred_at >= $3 AND occurred_at < $4
             UNION
             SELECT session_id FROM qa_failures
             WHERE project = $1 AND session_id IS NOT NULL AND occurred_at >= $3 AND occurred_at < $4
         )
         SELECT e.session_id, e.path, f.session_id IS NOT NULL
         FROM edited e LEFT JOIN failed f USING (session_id)
         WHERE e.path <> ''
         ORDER BY e.session_id, e.path
         LIMIT $5",
    )
    .bind(window.project)
    .bind(scope.sql_filter())
    .bind(window.from)
    .bind(window.until)
    .bind(MAX_TOUCHES)
    .fetch_all(pool)
    .await?;
    Ok(rows.into_iter().map(|(session_id, file, failed)| Touch { session_id, file, failed }).collect())
}

/// Each action type's actions in the window that finished (in progress
/// ones are not yet a success or a failure), and how many failed.
pub async fn action_kinds(
    pool: &PgPool,
    scope: &ProjectScope,
    window: Window<'_>,
) -> Result<Vec<(String, Counts)>, Error> {
    let rows: Vec<(String, i64, i64)> = sqlx::query_as(
        "SELECT action_type, count(*), count(*) FILTER (WHERE outcome = 'failure')
         FROM actions
         WHERE project = $1 AND ($2::text[] IS NULL OR project = ANY($2))
           AND occurred_at >= $3 AND occurred_at < $4 AND outcome <> 'in_progress'
         GROUP BY action_type",
    )
    .bind(window.project)
    .bind(scope.sql_filter())
    .bind(window.from)
    .bind(window.until)
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(kind, total, failed)| (kind, Counts { tasks: total.max(0) as u64, failed: failed.max(0) as u64 }))
        .collect())
}
