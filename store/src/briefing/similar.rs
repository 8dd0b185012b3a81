//! The candidates a briefing compares the task with: a project's recent
//! ended sessions, each with its summary, the files it edited and how its
//! QA went.

use chrono::{DateTime, Utc};
use sqlx::PgPool;
use uuid::Uuid;

use lore_types::Error;
use lore_types::scope::ProjectScope;

/// Sessions compared at most: the most recent ones.
pub const MAX_CANDIDATES: i64 = 300;
/// How far back a briefing looks for a similar session.
pub const LOOK_BACK_DAYS: i64 = 90;

/// One past session as a briefing weighs it.
#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct PastSession {
    pub session_id: Uuid,
    pub agent_id: String,
    pub started_at: DateTime<Utc>,
    pub status: String,
    pub end_reason: Option<String>,
    pub summary: String,
    pub action_count: i64,
    /// Files its `file_edit` actions and captured failures name.
    pub files: Vec<String>,
    /// The trigram similarity of its summary and failed tasks' titles to
    /// the task's text (0 to 1).
    pub text_similarity: f32,
    /// Task results: failed at some point, passed at some point.
    pub failed_qa: bool,
    pub passed_qa: bool,
}

/// The project's sessions of the last [`LOOK_BACK_DAYS`] that are over,
/// newest first, but `except` (the asking session).
pub async fn candidates(
    pool: &PgPool,
    scope: &ProjectScope,
    project: &str,
    except: Option<Uuid>,
    text: &str,
) -> Result<Vec<PastSession>, Error> {
    let rows = sqlx::query_as::<_, PastSession>(
        "WITH recent AS (
             SELECT session_id, agent_id, started_at, status, end_reason, summary, action_count
             FROM sessions
             WHERE project = $1 AND ($2::text[] IS NULL OR project = ANY($2)) AND status <> 'active'
               AND ($3::uuid IS NULL OR session_id <> $3)
               AND started_at >= now() - make_interval(days => $5)
             ORDER BY started_at DESC
             LIMIT $6
         ),
         edited AS (
             SELECT a.session_id, f.path
             FROM actions a JOIN recent r USING (session_id),
                  LATERAL edited_files(a.context) AS f(path)
             WHERE a.project = $1 AND a.action_type = 'file_edit'
               AND a.occurred_at >= now() - make_interval(days => $5)
         ),
         captured AS (
             SELECT q.session_id, string_agg(DISTINCT q.task_title, ' ') AS titles,
                    array_agg(DISTINCT f.path) FILTER (WHERE f.path IS NOT NULL) AS files
             FROM qa_failures q JOIN recent r USING (session_id)
                  LEFT JOIN LATERAL unnest(q.files_modified) AS f(path) ON true
             WHERE q.project = $1
             GROUP BY q.session_id
         ),
         files AS (
             SELECT session_id, array_agg(DISTINCT path) AS files
             FROM (SELECT session_id, path FROM edited
                   UNION ALL SELECT session_id, unnest(files) FROM captured) AS both_sources
             GROUP BY session_id
         ),
         verdicts AS (
             SELECT t.session_id, bool_or(NOT t.passed) AS failed, bool_or(t.passed) AS passed
             FROM qa_task_results t JOIN recent r USING (session_id) WHERE t.project = $1 GROUP BY t.session_id
         )
         SELECT r.session_id, r.agent_id, r.started_at, r.status, r.end_reason, r.summary, r.action_count,
                coalesce(f.files, '{}') AS files,
                CASE WHEN $4 = '' THEN 0::real
                     ELSE similarity(r.summary || ' ' || coalesce(c.titles, ''), $4) END AS text_similarity,
                coalesce(v.failed, false) OR c.session_id IS NOT NULL AS failed_qa,
                coalesce(v.passed, false) AS passed_qa
         FROM recent r
              LEFT JOIN files f USING (session_id)
              LEFT JOIN captured c USING (session_id)
              LEFT JOIN verdicts v USING (session_id)
         ORDER BY r.started_at DESC",
    )
    .bind(project)
    .bind(scope.sql_filter())
    .bind(except)
    .bind(text)
    .bind(LOOK_BACK_DAYS as i32)
    .bind(MAX_CANDIDATES)
    .fetch_all(pool)
    .await?;
    Ok(rows)
}
