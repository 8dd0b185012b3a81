//! What the reports read that no other aggregate answers: the agents of a
//! window, every project's figures, and the projects with actions then.

use chrono::{DateTime, Utc};
use sqlx::{PgPool, Row as _};

use lore_model::Error;

/// An agent with a session open during a window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActiveAgent {
    pub agent_id: String,
    pub sessions: i64,
    pub actions: i64,
    pub failed: i64,
    pub last_seen: DateTime<Utc>,
}

/// Agents of `project` with a session open between `from` and `until`,
/// busiest first, at most `limit`.
pub async fn active_agents(
    pool: &PgPool,
    project: &str,
    from: DateTime<Utc>,
    until: DateTime<Utc>,
    limit: i64,
) -> Result<Vec<ActiveAgent>, Error> {
    let rows = sqlx::query(
        "SELECT s.agent_id, count(DISTINCT s.session_id) AS sessions,
                (SELECT count(*) FROM actions a WHERE a.project = $1 AND a.agent_id = s.agent_id
                   AND a.occurred_at >= $2 AND a.occurred_at < $3) AS actions,
                (SELECT count(*) FROM actions a WHERE a.project = $1 AND a.agent_id = s.agent_id
                   AND a.occurred_at >= $2 AND a.occurred_at < $3 AND a.outcome = 'failure') AS failed,
                max(least(s.last_activity_at, $3)) AS last_seen
         FROM sessions s
         WHERE s.project = $1 AND s.started_at < $3 AND coalesce(s.ended_at, s.last_activity_at) >= $2
         GROUP BY s.agent_id ORDER BY actions DESC, s.agent_id LIMIT $4",
    )
    .bind(project)
    .bind(from)
    .bind(until)
    .bind(limit)
    .fetch_all(pool)
    .await?;
    rows.iter()
        .map(|row| {
            Ok(ActiveAgent {
                agent_id: row.try_get("agent_id")?,
                sessions: row.try_get("sessions")?,
                actions: row.try_get("actions")?,
                failed: row.try_get("failed")?,
                last_seen: row.try_get("last_seen")?,
            })
        })
        .collect::<Result<_, sqlx::Error>>()
        .map_err(Error::from)
}

/// One project's row of the fleet report.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProjectFigures {
    pub project: String,
    pub actions: i64,
    pub failed: i64,
    pub agents: i64,
    pub qa_failures: i64,
    /// Drafts waiting for review now, whatever the window.
    pub drafts: i64,
}

/// Every project's figures between `from` and `until`, by name.
pub async fn fleet_figures(
    pool: &PgPool,
    from: DateTime<Utc>,
    until: DateTime<Utc>,
) -> Result<Vec<ProjectFigures>, Error> {
    let rows = sqlx::query(
        "SELECT p.name,
                (SELECT count(*) FROM actions a WHERE a.project = p.name AND a.occurred_at >= $1 AND a.occurred_at < $2)
                    AS actions,
                (SELECT count(*) FROM actions a WHERE a.project = p.name AND a.occurred_at >= $1 AND a.occurred_at < $2
                    AND a.outcome = 'failure') AS failed,
                (SELECT count(DISTINCT s.agent_id) FROM sessions s WHERE s.project = p.name AND s.started_at < $2
                    AND coalesce(s.ended_at, s.last_activity_at) >= $1) AS agents,
                (SELECT count(*) FROM qa_failures f WHERE f.project = p.name AND f.occurred_at >= $1
                    AND f.occurred_at < $2) AS qa_failures,
                (SELECT count(*) FROM knowledge_drafts d WHERE d.project = p.name AND d.status = 'pending') AS drafts
         FROM projects p ORDER BY p.name",
    )
    .bind(from)
    .bind(until)
    .fetch_all(pool)
    .await?;
    rows.iter()
        .map(|row| {
            Ok(ProjectFigures {
                project: row.try_get("name")?,
                actions: row.try_get("actions")?,
                failed: row.try_get("failed")?,
                agents: row.try_get("agents")?,
                qa_failures: row.try_get("qa_failures")?,
                drafts: row.try_get("drafts")?,
            })
        })
        .collect::<Result<_, sqlx::Error>>()
        .map_err(Error::from)
}

/// Projects with an action between `from` and `until`, by name.
pub async fn active_projects(pool: &PgPool, from: DateTime<Utc>, until: DateTime<Utc>) -> Result<Vec<String>, Error> {
    Ok(sqlx::query_scalar(
        "SELECT name FROM projects p WHERE EXISTS (SELECT 1 FROM actions a WHERE a.project = p.name
             AND a.occurred_at >= $1 AND a.occurred_at < $2) ORDER BY name",
    )
    .bind(from)
    .bind(until)
    .fetch_all(pool)
    .await?)
}
