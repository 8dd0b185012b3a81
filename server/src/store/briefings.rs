//! What briefings gave each session.

use std::collections::HashSet;

use sqlx::{PgPool, Row as _};
use uuid::Uuid;

use crate::Error;

/// One briefing as given.
pub struct GivenBriefing<'a> {
    pub briefing_id: Uuid,
    pub project: &'a str,
    pub session_id: Option<Uuid>,
    pub agent_id: &'a str,
    pub task_id: &'a str,
    pub entry_ids: &'a [Uuid],
    pub pattern_ids: &'a [Uuid],
    pub markdown_chars: usize,
}

/// Remembers what a briefing gave (the project is created on first use, as
/// every write does).
pub async fn insert(pool: &PgPool, briefing: &GivenBriefing<'_>) -> Result<(), Error> {
    sqlx::query(
        "WITH project AS (INSERT INTO projects (name) VALUES ($2) ON CONFLICT DO NOTHING)
         INSERT INTO briefings (briefing_id, project, session_id, agent_id, task_id, entry_ids, pattern_ids,
                                markdown_chars)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
    )
    .bind(briefing.briefing_id)
    .bind(briefing.project)
    .bind(briefing.session_id)
    .bind(briefing.agent_id)
    .bind(briefing.task_id)
    .bind(briefing.entry_ids)
    .bind(briefing.pattern_ids)
    .bind(i32::try_from(briefing.markdown_chars).unwrap_or(i32::MAX))
    .execute(pool)
    .await?;
    Ok(())
}

/// The entries and patterns a session was already given: by briefings, and
/// (patterns) by warnings it was shown through GetWarnings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Given {
    pub entries: HashSet<Uuid>,
    pub patterns: HashSet<Uuid>,
}

pub async fn given(pool: &PgPool, project: &str, session_id: Uuid) -> Result<Given, Error> {
    let row = sqlx::query(
        "SELECT ARRAY(SELECT DISTINCT unnest(entry_ids) FROM briefings
                       WHERE session_id = $1 AND project = $2) AS entries,
                ARRAY(SELECT DISTINCT unnest(pattern_ids) FROM briefings
                       WHERE session_id = $1 AND project = $2
                      UNION
                      SELECT pattern_id FROM qa_warning_deliveries
                       WHERE session_id = $1 AND project = $2 AND NOT held_out) AS patterns",
    )
    .bind(session_id)
    .bind(project)
    .fetch_one(pool)
    .await?;
    let entries: Vec<Uuid> = row.try_get("entries")?;
    let patterns: Vec<Uuid> = row.try_get("patterns")?;
    Ok(Given { entries: entries.into_iter().collect(), patterns: patterns.into_iter().collect() })
}
