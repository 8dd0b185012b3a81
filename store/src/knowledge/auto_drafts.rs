//! What the automatic drafts look for in the log (epics completed,
//! validations failing, sessions whose failures were all fixed), and the
//! causes already drafted.

use chrono::{DateTime, Utc};
use sqlx::PgPool;
use uuid::Uuid;

use lore_types::Error;

/// Every project, by name.
pub async fn projects(pool: &PgPool) -> Result<Vec<String>, Error> {
    Ok(sqlx::query_scalar("SELECT name FROM projects ORDER BY name").fetch_all(pool).await?)
}

/// Epics of `project` an action of one of `complete_types` finished with
/// success since `since` (the (project, action_type, occurred_at) index).
pub async fn completed_epics(
    pool: &PgPool,
    project: &str,
    complete_types: &[String],
    since: DateTime<Utc>,
) -> Result<Vec<String>, Error> {
    Ok(sqlx::query_scalar(
        "SELECT DISTINCT epic_id FROM actions
         WHERE project = $1 AND action_type = ANY($2) AND occurred_at >= $3 AND epic_id IS NOT NULL
           AND outcome = 'success'",
    )
    .bind(project)
    .bind(complete_types)
    .bind(since)
    .fetch_all(pool)
    .await?)
}

/// Epics of `project` with more than `failures` failed validations since
/// `since`.
pub async fn failing_epics(
    pool: &PgPool,
    project: &str,
    since: DateTime<Utc>,
    failures: i64,
) -> Result<Vec<String>, Error> {
    Ok(sqlx::query_scalar(
        "SELECT epic_id FROM actions
         WHERE project = $1 AND action_type = 'validate' AND outcome = 'failure' AND occurred_at >= $2
           AND epic_id IS NOT NULL
         GROUP BY epic_id HAVING count(*) > $3",
    )
    .bind(project)
    .bind(since)
    .bind(failures)
    .fetch_all(pool)
    .await?)
}

/// Ended sessions of `project` whose every failure since `since` was
/// resolved.
pub async fn fixed_sessions(pool: &PgPool, project: &str, since: DateTime<Utc>) -> Result<Vec<Uuid>, Error> {
    Ok(sqlx::query_scalar(
        "SELECT f.session_id FROM qa_failures f JOIN sessions s USING (session_id)
         WHERE f.project = $1 AND f.occurred_at >= $2 AND s.status <> 'active'
         GROUP BY f.session_id
         HAVING bool_and(EXISTS (SELECT 1 FROM qa_failure_resolutions r WHERE r.failure_id = f.failure_id))",
    )
    .bind(project)
    .bind(since)
    .fetch_all(pool)
    .await?)
}

/// Those of `causes` already drafted (or tried).
pub async fn known_causes(pool: &PgPool, causes: &[String]) -> Result<Vec<String>, Error> {
    Ok(sqlx::query_scalar("SELECT cause FROM knowledge_auto_drafts WHERE cause = ANY($1)")
        .bind(causes)
        .fetch_all(pool)
        .await?)
}

/// Remembers that `cause` was drafted (as `draft_id`, or not, with why).
pub async fn record(
    pool: &PgPool,
    cause: &str,
    project: &str,
    draft_id: Option<Uuid>,
    note: &str,
) -> Result<(), Error> {
    sqlx::query(
        "INSERT INTO knowledge_auto_drafts (cause, project, draft_id, note) VALUES ($1, $2, $3, $4)
         ON CONFLICT (cause) DO NOTHING",
    )
    .bind(cause)
    .bind(project)
    .bind(draft_id)
    .bind(note)
    .execute(pool)
    .await?;
    Ok(())
}
