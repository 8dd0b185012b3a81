//! Sessions: open, heartbeat, end, find the latest, sweep the silent ones.

use chrono::{DateTime, Utc};
use lore_types::actions::StoredName as _;
use sqlx::PgPool;
use sqlx::postgres::PgRow;
use sqlx::{Row as _, types::Json};
use uuid::Uuid;

use lore_types::Error;
use lore_types::actions::{EndReason, NewSession, Session, SessionKind, SessionStatus};
use lore_types::scope::ProjectScope;

pub(crate) const SESSION_COLUMNS: &str = "session_id, project, agent_id, supervisor_type, kind, metadata, status, \
     started_at, last_activity_at, ended_at, end_reason, summary, action_count";

pub(crate) fn session_from_row(row: &PgRow) -> Result<Session, sqlx::Error> {
    let decode_error = |column: &str, value: &str| sqlx::Error::ColumnDecode {
        index: column.to_owned(),
        source: format!("unexpected value {value:?}").into(),
    };
    let kind: String = row.try_get("kind")?;
    let status: String = row.try_get("status")?;
    let end_reason: Option<String> = row.try_get("end_reason")?;
    Ok(Session {
        session_id: row.try_get("session_id")?,
        project: row.try_get("project")?,
        agent_id: row.try_get("agent_id")?,
        supervisor_type: row.try_get("supervisor_type")?,
        kind: SessionKind::parse(&kind).ok_or_else(|| decode_error("kind", &kind))?,
        metadata: row.try_get::<Json<serde_json::Value>, _>("metadata")?.0,
        status: SessionStatus::parse(&status).ok_or_else(|| decode_error("status", &status))?,
        started_at: row.try_get("started_at")?,
        last_activity_at: row.try_get("last_activity_at")?,
        ended_at: row.try_get("ended_at")?,
        end_reason: end_reason
            .map(|reason| EndReason::parse(&reason).ok_or_else(|| decode_error("end_reason", &reason)))
            .transpose()?,
        summary: row.try_get("summary")?,
        action_count: row.try_get("action_count")?,
    })
}

/// Opens a session; returns it and whether it already existed (a retry, or
/// with `reopen` a resumed session, which becomes active again). A session
/// id already used in a project outside `scope`, or in another project, is
/// refused rather than revealed.
pub async fn start(pool: &PgPool, scope: &ProjectScope, session: &NewSession) -> Result<(Session, bool), Error> {
    scope.require(&session.project)?;
    let inserted = sqlx::query(sqlx::AssertSqlSafe(format!(
        "WITH project AS (INSERT INTO projects (name) VALUES ($2) ON CONFLICT DO NOTHING)
         INSERT INTO sessions (session_id, project, agent_id, supervisor_type, kind, metadata,
                               started_at, last_activity_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, now())
         ON CONFLICT (session_id) DO NOTHING
         RETURNING {SESSION_COLUMNS}"
    )))
    .bind(session.session_id)
    .bind(&session.project)
    .bind(&session.agent_id)
    .bind(&session.supervisor_type)
    .bind(session.kind.as_str())
    .bind(Json(&session.metadata))
    .bind(session.started_at)
    .fetch_optional(pool)
    .await?;
    if let Some(row) = inserted {
        return Ok((session_from_row(&row)?, false));
    }
    match get(pool, scope, session.session_id).await {
        Ok(existing) if existing.project == session.project && existing.agent_id == session.agent_id => {
            if session.reopen && existing.status != SessionStatus::Active {
                return Ok((reopen(pool, existing.session_id).await?, true));
            }
            Ok((existing, true))
        }
        Ok(_) | Err(Error::NotFound(_)) => {
            Err(Error::AlreadyExists(format!("session_id {} is already used by another session", session.session_id)))
        }
        Err(error) => Err(error),
    }
}

/// Makes an ended or disconnected session active again; the caller has
/// checked it is the caller's.
async fn reopen(pool: &PgPool, session_id: Uuid) -> Result<Session, Error> {
    let row = sqlx::query(sqlx::AssertSqlSafe(format!(
        "UPDATE sessions
            SET status = 'active', ended_at = NULL, end_reason = NULL,
                last_activity_at = greatest(last_activity_at, now())
          WHERE session_id = $1
          RETURNING {SESSION_COLUMNS}"
    )))
    .bind(session_id)
    .fetch_one(pool)
    .await?;
    Ok(session_from_row(&row)?)
}

/// One session, if it is in `scope`.
pub async fn get(pool: &PgPool, scope: &ProjectScope, session_id: Uuid) -> Result<Session, Error> {
    let row = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {SESSION_COLUMNS} FROM sessions
         WHERE session_id = $1 AND ($2::text[] IS NULL OR project = ANY($2))"
    )))
    .bind(session_id)
    .bind(scope.sql_filter())
    .fetch_optional(pool)
    .await?
    .ok_or_else(|| Error::NotFound(format!("session {session_id}")))?;
    Ok(session_from_row(&row)?)
}

/// Marks a session alive; a disconnected one becomes active again. An ended
/// session cannot be revived.
pub async fn heartbeat(pool: &PgPool, scope: &ProjectScope, session_id: Uuid) -> Result<Session, Error> {
    let row = sqlx::query(sqlx::AssertSqlSafe(format!(
        "UPDATE sessions
            SET last_activity_at = greatest(last_activity_at, now()),
                status = 'active', ended_at = NULL, end_reason = NULL
          WHERE session_id = $1 AND ($2::text[] IS NULL OR project = ANY($2)) AND status <> 'ended'
          RETURNING {SESSION_COLUMNS}"
    )))
    .bind(session_id)
    .bind(scope.sql_filter())
    .fetch_optional(pool)
    .await?;
    match row {
        Some(row) => Ok(session_from_row(&row)?),
        None => {
            let session = get(pool, scope, session_id).await?;
            Err(Error::FailedPrecondition(format!(
                "session {} ended at {}; start a new session",
                session.session_id,
                session.ended_at.map(|at| at.to_rfc3339()).unwrap_or_default()
            )))
        }
    }
}

/// Ends a session. Ending an ended session changes nothing and returns it as
/// stored.
pub async fn end(
    pool: &PgPool,
    scope: &ProjectScope,
    session_id: Uuid,
    reason: EndReason,
    summary: &str,
) -> Result<Session, Error> {
    let row = sqlx::query(sqlx::AssertSqlSafe(format!(
        "UPDATE sessions
            SET status = 'ended', ended_at = now(), end_reason = $3, summary = $4,
                last_activity_at = greatest(last_activity_at, now())
          WHERE session_id = $1 AND ($2::text[] IS NULL OR project = ANY($2)) AND status <> 'ended'
          RETURNING {SESSION_COLUMNS}"
    )))
    .bind(session_id)
    .bind(scope.sql_filter())
    .bind(reason.as_str())
    .bind(summary)
    .fetch_optional(pool)
    .await?;
    match row {
        Some(row) => Ok(session_from_row(&row)?),
        None => get(pool, scope, session_id).await,
    }
}

/// Filters for the latest session of a project.
#[derive(Debug, Clone, Default)]
pub struct LastSessionFilter<'a> {
    pub agent_id: Option<&'a str>,
    pub supervisor_type: Option<&'a str>,
    /// Not this session (the one a briefing is for).
    pub exclude: Option<Uuid>,
    /// Only sessions that stored an action: one started and left empty
    /// says nothing about where the agent stopped.
    pub with_actions: bool,
}

/// The most recently started session of `project` matching `filter`.
pub async fn last(
    pool: &PgPool,
    scope: &ProjectScope,
    project: &str,
    filter: &LastSessionFilter<'_>,
) -> Result<Session, Error> {
    let row = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {SESSION_COLUMNS} FROM sessions
          WHERE project = $1 AND ($2::text[] IS NULL OR project = ANY($2))
            AND ($3::text IS NULL OR agent_id = $3)
            AND ($4::text IS NULL OR supervisor_type = $4)
            AND ($5::uuid IS NULL OR session_id <> $5)
            AND (NOT $6 OR action_count > 0)
          ORDER BY started_at DESC, session_id DESC
          LIMIT 1"
    )))
    .bind(project)
    .bind(scope.sql_filter())
    .bind(filter.agent_id)
    .bind(filter.supervisor_type)
    .bind(filter.exclude)
    .bind(filter.with_actions)
    .fetch_optional(pool)
    .await?
    .ok_or_else(|| Error::NotFound(format!("a session of project {project} matching the filter")))?;
    Ok(session_from_row(&row)?)
}

/// Marks active sessions silent since before `silent_since` as disconnected
/// (reason timeout). Returns how many were marked.
pub async fn mark_silent_sessions_disconnected(pool: &PgPool, silent_since: DateTime<Utc>) -> Result<u64, Error> {
    let result = sqlx::query(
        "UPDATE sessions SET status = 'disconnected', ended_at = now(), end_reason = 'timeout'
          WHERE status = 'active' AND last_activity_at < $1",
    )
    .bind(silent_since)
    .execute(pool)
    .await?;
    Ok(result.rows_affected())
}
