//! What the reports read that no other aggregate answers: the agents of a
//! window, every project's figures, and the projects with actions then;
//! and the reports the leader stored, with their history.

use chrono::{DateTime, NaiveDate, Utc};
use sqlx::{PgPool, Row as _};

use lore_types::Error;

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

/// A report as the leader stored it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredReport {
    /// `daily` or `weekly`.
    pub period: String,
    /// Empty for the fleet's.
    pub project: String,
    pub period_start: NaiveDate,
    pub period_end: NaiveDate,
    pub title: String,
    pub markdown: String,
    pub written_at: DateTime<Utc>,
}

fn stored_report(row: &sqlx::postgres::PgRow) -> Result<StoredReport, sqlx::Error> {
    Ok(StoredReport {
        period: row.try_get("period")?,
        project: row.try_get("project")?,
        period_start: row.try_get("period_start")?,
        period_end: row.try_get("period_end")?,
        title: row.try_get("title")?,
        markdown: row.try_get("markdown")?,
        written_at: row.try_get("written_at")?,
    })
}

/// The stored report of one period, if the leader wrote it.
pub async fn report(
    pool: &PgPool,
    period: &str,
    project: &str,
    period_start: NaiveDate,
) -> Result<Option<StoredReport>, Error> {
    let row = sqlx::query(
        "SELECT period, project, period_start, period_end, title, markdown, written_at
         FROM periodic_reports WHERE period = $1 AND project = $2 AND period_start = $3",
    )
    .bind(period)
    .bind(project)
    .bind(period_start)
    .fetch_optional(pool)
    .await?;
    Ok(row.as_ref().map(stored_report).transpose()?)
}

/// Stores a report unless one of its period is stored already (a report
/// is written once, as it read then). True when this one was stored.
pub async fn store_report(pool: &PgPool, report: &StoredReport) -> Result<bool, Error> {
    let stored = sqlx::query(
        "INSERT INTO periodic_reports (period, project, period_start, period_end, title, markdown)
         VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING",
    )
    .bind(&report.period)
    .bind(&report.project)
    .bind(report.period_start)
    .bind(report.period_end)
    .bind(&report.title)
    .bind(&report.markdown)
    .execute(pool)
    .await?;
    Ok(stored.rows_affected() == 1)
}

/// One project's stored reports of a period (the fleet's for an empty
/// project), newest first, starting before `before` when given; without
/// their text.
pub async fn report_history(
    pool: &PgPool,
    period: &str,
    project: &str,
    before: Option<NaiveDate>,
    limit: i64,
) -> Result<Vec<StoredReport>, Error> {
    let rows = sqlx::query(
        "SELECT period, project, period_start, period_end, title, '' AS markdown, written_at
         FROM periodic_reports WHERE project = $1 AND period = $2 AND ($3::date IS NULL OR period_start < $3)
         ORDER BY period_start DESC LIMIT $4",
    )
    .bind(project)
    .bind(period)
    .bind(before)
    .bind(limit)
    .fetch_all(pool)
    .await?;
    Ok(rows.iter().map(stored_report).collect::<Result<_, _>>()?)
}

/// Keeps the newest `keep` reports of each project and period; returns how
/// many went.
pub async fn prune_reports(pool: &PgPool, keep: i64) -> Result<u64, Error> {
    let pruned = sqlx::query(
        "DELETE FROM periodic_reports r USING (
             SELECT period, project, period_start,
                    row_number() OVER (PARTITION BY period, project ORDER BY period_start DESC) AS rank
             FROM periodic_reports) ranked
         WHERE ranked.rank > $1 AND r.period = ranked.period AND r.project = ranked.project
           AND r.period_start = ranked.period_start",
    )
    .bind(keep)
    .execute(pool)
    .await?;
    Ok(pruned.rows_affected())
}
