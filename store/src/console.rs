//! What the web console reads that no RPC does: the fleet's figures per
//! project, live sessions, one action by id with its children, and a
//! project's sessions over a window.
//!
//! Every query names its projects explicitly (`project = ANY($1)`), the
//! scope's own list or, for an all-projects scope, the project table's, so
//! each can walk its `(project, ...)` index instead of scanning a whole
//! partition of the action log.

use chrono::{DateTime, Utc};
use sqlx::{PgPool, Row as _};
use uuid::Uuid;

use crate::actions::sessions::{SESSION_COLUMNS, session_from_row};
use crate::actions::{ACTION_COLUMNS, action_from_row};
use lore_types::Error;
use lore_types::actions::{Action, Session};
use lore_types::scope::ProjectScope;

/// The fleet page's row of one project.
#[derive(Debug, Clone, PartialEq)]
pub struct ProjectFigures {
    pub project: String,
    pub actions_last_day: i64,
    pub failures_today: i64,
    pub active_sessions: i64,
    pub drafts_waiting: i64,
    pub promotions_waiting: i64,
    pub prevented: i64,
    pub failed_anyway: i64,
    pub last_action_at: Option<DateTime<Utc>>,
}

/// The projects `scope` covers that exist, by name.
pub async fn projects(pool: &PgPool, scope: &ProjectScope) -> Result<Vec<String>, Error> {
    Ok(sqlx::query_scalar("SELECT name FROM projects WHERE ($1::text[] IS NULL OR name = ANY($1)) ORDER BY name")
        .bind(scope.sql_filter())
        .fetch_all(pool)
        .await?)
}

/// One row per project of `projects`; `today` starts at `midnight`.
pub async fn project_figures(
    pool: &PgPool,
    projects: &[String],
    now: DateTime<Utc>,
    midnight: DateTime<Utc>,
) -> Result<Vec<ProjectFigures>, Error> {
    let rows = sqlx::query(
        "SELECT p.name,
                (SELECT count(*) FROM actions a
                  WHERE a.project = p.name AND a.occurred_at >= $2 - interval '1 day' AND a.occurred_at < $2 + interval '1 hour') AS actions_last_day,
                (SELECT count(*) FROM actions a
                  WHERE a.project = p.name AND a.occurred_at >= $3 AND a.outcome IN ('failure', 'blocked')) AS failures_today,
                (SELECT max(a.occurred_at) FROM actions a WHERE a.project = p.name) AS last_action_at,
                (SELECT count(*) FROM sessions s WHERE s.project = p.name AND s.status = 'active') AS active_sessions,
                (SELECT count(*) FROM knowledge_drafts d WHERE d.project = p.name AND d.status = 'pending') AS drafts_waiting,
                (SELECT count(*) FROM qa_promotions r WHERE r.project = p.name AND r.status = 'pending') AS promotions_waiting,
                (SELECT coalesce(sum(q.prevented_count), 0)::bigint FROM qa_patterns q WHERE q.project = p.name) AS prevented,
                (SELECT coalesce(sum(q.failed_anyway_count), 0)::bigint FROM qa_patterns q WHERE q.project = p.name) AS failed_anyway
           FROM projects p WHERE p.name = ANY($1) ORDER BY p.name",
    )
    .bind(projects)
    .bind(now)
    .bind(midnight)
    .fetch_all(pool)
    .await?;
    rows.iter()
        .map(|row| {
            Ok(ProjectFigures {
                project: row.try_get("name")?,
                actions_last_day: row.try_get("actions_last_day")?,
                failures_today: row.try_get("failures_today")?,
                active_sessions: row.try_get("active_sessions")?,
                drafts_waiting: row.try_get("drafts_waiting")?,
                promotions_waiting: row.try_get("promotions_waiting")?,
                prevented: row.try_get("prevented")?,
                failed_anyway: row.try_get("failed_anyway")?,
                last_action_at: row.try_get("last_action_at")?,
            })
        })
        .collect::<Result<_, sqlx::Error>>()
        .map_err(Error::from)
}

/// Actions per hour of `projects` over the 24 hours before `now`, oldest
/// first, hours without actions left out.
pub async fn actions_per_hour(
    pool: &PgPool,
    projects: &[String],
    now: DateTime<Utc>,
) -> Result<Vec<(DateTime<Utc>, i64)>, Error> {
    Ok(sqlx::query_as(
        "SELECT date_trunc('hour', occurred_at) AS hour, count(*)
           FROM actions
          WHERE project = ANY($1) AND occurred_at >= date_trunc('hour', $2) - interval '23 hours'
            AND occurred_at < date_trunc('hour', $2) + interval '1 hour'
          GROUP BY 1 ORDER BY 1",
    )
    .bind(projects)
    .bind(now)
    .fetch_all(pool)
    .await?)
}

/// The sessions of `projects` that are active, latest activity first.
pub async fn active_sessions(pool: &PgPool, projects: &[String], limit: i64) -> Result<Vec<Session>, Error> {
    let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {SESSION_COLUMNS} FROM sessions
          WHERE status = 'active' AND project = ANY($1)
          ORDER BY last_activity_at DESC LIMIT $2"
    )))
    .bind(projects)
    .bind(limit)
    .fetch_all(pool)
    .await?;
    rows.iter().map(session_from_row).collect::<Result<_, _>>().map_err(Error::from)
}

/// A project's sessions that overlap `[from, until)`, latest start first.
pub async fn sessions_between(
    pool: &PgPool,
    scope: &ProjectScope,
    project: &str,
    from: DateTime<Utc>,
    until: DateTime<Utc>,
    limit: i64,
) -> Result<Vec<Session>, Error> {
    let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {SESSION_COLUMNS} FROM sessions
          WHERE project = $1 AND ($2::text[] IS NULL OR project = ANY($2))
            AND started_at < $4 AND coalesce(ended_at, last_activity_at) >= $3
          ORDER BY started_at DESC LIMIT $5"
    )))
    .bind(project)
    .bind(scope.sql_filter())
    .bind(from)
    .bind(until)
    .bind(limit)
    .fetch_all(pool)
    .await?;
    rows.iter().map(session_from_row).collect::<Result<_, _>>().map_err(Error::from)
}

/// One action by id, in the caller's projects.
pub async fn action(pool: &PgPool, scope: &ProjectScope, action_id: Uuid) -> Result<Action, Error> {
    let row = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {ACTION_COLUMNS} FROM actions
          WHERE action_id = $1 AND ($2::text[] IS NULL OR project = ANY($2))
          LIMIT 1"
    )))
    .bind(action_id)
    .bind(scope.sql_filter())
    .fetch_optional(pool)
    .await?
    .ok_or_else(|| Error::NotFound(format!("action {action_id}")))?;
    Ok(action_from_row(&row)?)
}

/// The actions of `session_id` whose parent is `parent`, in chain order.
/// Children are looked for in the parent's session only: that is where an
/// agent logs them, and it keeps the lookup on the session's index.
pub async fn children(
    pool: &PgPool,
    scope: &ProjectScope,
    session_id: Uuid,
    parent: Uuid,
    limit: i64,
) -> Result<Vec<Action>, Error> {
    let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {ACTION_COLUMNS} FROM actions
          WHERE session_id = $1 AND parent_action_id = $2 AND ($3::text[] IS NULL OR project = ANY($3))
          ORDER BY chain_seq LIMIT $4"
    )))
    .bind(session_id)
    .bind(parent)
    .bind(scope.sql_filter())
    .bind(limit)
    .fetch_all(pool)
    .await?;
    rows.iter().map(action_from_row).collect::<Result<_, _>>().map_err(Error::from)
}
