//! The QA dashboard's aggregates over a window of failures.

use sqlx::{PgPool, Row as _};

use crate::qa::{PATTERN_COLUMNS, pattern_from_row};
use lore_model::Error;
use lore_model::qa::significance::Counts;
use lore_model::qa::{DashboardQuery, DayRate, Pattern, TaskFigures};
use lore_model::scope::ProjectScope;

/// The failures a dashboard looks at, as SQL over `f` (qa_failures):
/// project and scope, window, category and agent ($1..$6).
const WINDOW: &str = "f.project = $1 AND ($2::text[] IS NULL OR f.project = ANY($2))
     AND f.occurred_at >= $3 AND f.occurred_at < $4
     AND ($5::text IS NULL OR f.category = $5)
     AND ($6::text IS NULL OR f.session_id IN (SELECT session_id FROM sessions WHERE project = $1 AND agent_id = $6))";

fn window_query<'q>(
    sql: String,
    query: &'q DashboardQuery,
    scope: &ProjectScope,
) -> sqlx::query::Query<'q, sqlx::Postgres, sqlx::postgres::PgArguments> {
    sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(&query.project)
        .bind(scope.sql_filter())
        .bind(query.from)
        .bind(query.until)
        .bind(&query.category)
        .bind(&query.agent_id)
}

pub struct DashboardFigures {
    pub days: Vec<DayRate>,
    pub top: Vec<Pattern>,
    pub categories: Vec<(String, i64)>,
    pub failures: i64,
    pub resolved: i64,
    pub mean_attempts: f64,
    pub prevented: i64,
    pub failed_anyway: i64,
    pub delivered: i64,
    /// Shown warnings an agent acknowledged, and their outcomes.
    pub acknowledged: i64,
    pub acknowledged_prevented: i64,
    pub acknowledged_failed_anyway: i64,
    /// Tasks with a scored warning, and how many of them failed on a
    /// warned pattern: shown, then held out.
    pub shown: Counts,
    pub held_out: Counts,
    pub tasks: TaskFigures,
    pub missed: i64,
}

/// The dashboard's aggregates, each one query over the window, run side by
/// side.
pub async fn dashboard(pool: &PgPool, scope: &ProjectScope, query: &DashboardQuery) -> Result<DashboardFigures, Error> {
    let days = window_query(
        format!(
            "SELECT day, sum(failures)::bigint AS failures, count(DISTINCT task_id) AS tasks FROM (
                 SELECT (f.occurred_at AT TIME ZONE 'UTC')::date AS day, f.task_id, 1 AS failures
                 FROM qa_failures f WHERE {WINDOW}
                 UNION ALL
                 SELECT (d.delivered_at AT TIME ZONE 'UTC')::date, d.task_id, 0
                 FROM qa_warning_deliveries d
                 WHERE d.project = $1 AND ($2::text[] IS NULL OR d.project = ANY($2))
                   AND d.delivered_at >= $3 AND d.delivered_at < $4 AND $5::text IS NULL
                   AND ($6::text IS NULL OR d.session_id IN (SELECT session_id FROM sessions WHERE project = $1
                                                             AND agent_id = $6))
             ) AS reached GROUP BY day ORDER BY day"
        ),
        query,
        scope,
    )
    .fetch_all(pool);
    let top = window_query(
        format!(
            "SELECT {PATTERN_COLUMNS_IN_WINDOW}
             FROM (SELECT o.pattern_id, count(*) AS in_window FROM qa_pattern_occurrences o
                   JOIN qa_failures f USING (failure_id) WHERE {WINDOW} GROUP BY o.pattern_id
                   ORDER BY count(*) DESC LIMIT $7) AS w
             JOIN qa_patterns p USING (pattern_id) ORDER BY w.in_window DESC, p.pattern_id",
            PATTERN_COLUMNS_IN_WINDOW =
                PATTERN_COLUMNS.replace("p.occurrence_count", "w.in_window AS occurrence_count"),
        ),
        query,
        scope,
    )
    .bind(query.top_patterns)
    .fetch_all(pool);
    let categories = window_query(
        format!("SELECT f.category, count(*) AS n FROM qa_failures f WHERE {WINDOW} GROUP BY 1 ORDER BY 2 DESC, 1"),
        query,
        scope,
    )
    .fetch_all(pool);
    let totals = window_query(
        format!(
            "SELECT count(*) AS failures, count(r.failure_id) AS resolved, coalesce(avg(r.attempts), 0)::float8 AS mean
             FROM qa_failures f LEFT JOIN qa_failure_resolutions r USING (failure_id) WHERE {WINDOW}"
        ),
        query,
        scope,
    )
    .fetch_one(pool);
    let outcomes = window_query(
        "SELECT count(*) FILTER (WHERE NOT d.held_out) AS delivered,
                count(*) FILTER (WHERE NOT d.held_out AND d.outcome = 'prevented') AS prevented,
                count(*) FILTER (WHERE NOT d.held_out AND d.outcome = 'failed_anyway') AS failed_anyway,
                count(*) FILTER (WHERE NOT d.held_out AND d.acknowledged_at IS NOT NULL) AS acknowledged,
                count(*) FILTER (WHERE NOT d.held_out AND d.acknowledged_at IS NOT NULL
                                 AND d.outcome = 'prevented') AS acknowledged_prevented,
                count(*) FILTER (WHERE NOT d.held_out AND d.acknowledged_at IS NOT NULL
                                 AND d.outcome = 'failed_anyway') AS acknowledged_failed_anyway
         FROM qa_warning_deliveries d
         WHERE d.project = $1 AND ($2::text[] IS NULL OR d.project = ANY($2))
           AND d.delivered_at >= $3 AND d.delivered_at < $4
           AND ($5::text IS NULL OR d.pattern_id IN (SELECT pattern_id FROM qa_patterns WHERE project = $1
                                                     AND category = $5))
           AND ($6::text IS NULL OR d.session_id IN (SELECT session_id FROM sessions WHERE project = $1
                                                     AND agent_id = $6))"
            .to_owned(),
        query,
        scope,
    )
    .fetch_one(pool);
    // The agent filter reads the session of the task's results.
    let of_agent = "($6::text IS NULL OR r.session_id IN (SELECT session_id FROM sessions WHERE project = $1
                                                          AND agent_id = $6))";
    let tasks = window_query(
        format!(
            "WITH started AS (
                 SELECT r.task_id FROM qa_task_results r
                 WHERE r.project = $1 AND ($2::text[] IS NULL OR r.project = ANY($2)) AND r.attempt = 1
                   AND r.occurred_at >= $3 AND r.occurred_at < $4 AND {of_agent}
                   -- A category keeps the tasks that failed in it.
                   AND ($5::text IS NULL OR EXISTS (SELECT 1 FROM qa_failures f WHERE f.project = $1
                                                    AND f.task_id = r.task_id AND f.category = $5))
             ), per_task AS (
                 SELECT r.task_id, bool_or(NOT r.passed) AS failed, bool_or(r.passed AND r.attempt = 1) AS first_time,
                        min(r.attempt) FILTER (WHERE r.passed) AS attempts_to_pass
                 FROM qa_task_results r JOIN started USING (task_id) WHERE r.project = $1 GROUP BY r.task_id
             )
             SELECT count(*) AS tasks, count(*) FILTER (WHERE failed) AS failed,
                    count(attempts_to_pass) AS passed, count(*) FILTER (WHERE first_time) AS first_time,
                    coalesce(avg(attempts_to_pass), 0)::float8 AS mean FROM per_task"
        ),
        query,
        scope,
    )
    .fetch_one(pool);
    // A task is in the held-out group when its warnings were held out (a
    // task is held out whole); it failed when a warned pattern recurred.
    let groups = window_query(
        "SELECT d.held_out, count(DISTINCT d.task_id) AS tasks,
                count(DISTINCT d.task_id) FILTER (WHERE d.outcome = 'failed_anyway') AS failed
         FROM qa_warning_deliveries d
         WHERE d.project = $1 AND ($2::text[] IS NULL OR d.project = ANY($2))
           AND d.outcome IN ('prevented', 'failed_anyway', 'unrelated')
           AND d.outcome_at >= $3 AND d.outcome_at < $4
           AND ($5::text IS NULL OR d.pattern_id IN (SELECT pattern_id FROM qa_patterns WHERE project = $1
                                                     AND category = $5))
           AND ($6::text IS NULL OR d.session_id IN (SELECT session_id FROM sessions WHERE project = $1
                                                     AND agent_id = $6))
         GROUP BY d.held_out"
            .to_owned(),
        query,
        scope,
    )
    .fetch_all(pool);
    let missed = window_query(
        format!(
            "SELECT count(*) FROM qa_missed_opportunities m JOIN qa_task_results r USING (result_id)
             WHERE m.project = $1 AND ($2::text[] IS NULL OR m.project = ANY($2))
               AND m.recorded_at >= $3 AND m.recorded_at < $4
               AND ($5::text IS NULL OR m.pattern_id IN (SELECT pattern_id FROM qa_patterns WHERE project = $1
                                                         AND category = $5))
               AND {of_agent}"
        ),
        query,
        scope,
    )
    .fetch_one(pool);
    let (days, top, categories, totals, outcomes, tasks, groups, missed) =
        tokio::try_join!(days, top, categories, totals, outcomes, tasks, groups, missed)?;
    let group = |held_out: bool| {
        groups
            .iter()
            .find(|row| row.get::<bool, _>("held_out") == held_out)
            .map(|row| Counts {
                tasks: row.get::<i64, _>("tasks").max(0) as u64,
                failed: row.get::<i64, _>("failed").max(0) as u64,
            })
            .unwrap_or_default()
    };
    Ok(DashboardFigures {
        days: days
            .iter()
            .map(|row| DayRate { day: row.get("day"), failures: row.get("failures"), tasks: row.get("tasks") })
            .collect(),
        top: top.iter().map(pattern_from_row).collect::<Result<_, _>>()?,
        categories: categories.iter().map(|row| (row.get("category"), row.get("n"))).collect(),
        failures: totals.get("failures"),
        resolved: totals.get("resolved"),
        mean_attempts: totals.get("mean"),
        prevented: outcomes.get("prevented"),
        failed_anyway: outcomes.get("failed_anyway"),
        delivered: outcomes.get("delivered"),
        acknowledged: outcomes.get("acknowledged"),
        acknowledged_prevented: outcomes.get("acknowledged_prevented"),
        acknowledged_failed_anyway: outcomes.get("acknowledged_failed_anyway"),
        shown: group(false),
        held_out: group(true),
        tasks: TaskFigures {
            tasks: tasks.get("tasks"),
            failed: tasks.get("failed"),
            passed: tasks.get("passed"),
            passed_first_time: tasks.get("first_time"),
            mean_attempts_to_pass: tasks.get("mean"),
        },
        missed: missed.get(0),
    })
}
