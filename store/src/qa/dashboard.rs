//! The QA dashboard's aggregates over a window of failures.

use sqlx::{PgPool, Row as _};

use crate::qa::{PATTERN_COLUMNS, pattern_from_row};
use lore_types::Error;
use lore_types::qa::significance::Counts;
use lore_types::qa::{DashboardQuery, DayRate, Pattern, TaskFigures};
use lore_types::scope::ProjectScope;

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

/// The dashboard's queries (`dashboard/*.sql`): `{window}` stands for
/// [`WINDOW`], `{of_agent}` for the agent filter over task results `r`,
/// `{columns}` for a pattern's columns with its count in the window.
mod sql {
    pub const DAYS: &str = include_str!("dashboard/days.sql");
    pub const TOP: &str = include_str!("dashboard/top.sql");
    pub const CATEGORIES: &str = include_str!("dashboard/categories.sql");
    pub const TOTALS: &str = include_str!("dashboard/totals.sql");
    pub const OUTCOMES: &str = include_str!("dashboard/outcomes.sql");
    pub const TASKS: &str = include_str!("dashboard/tasks.sql");
    pub const GROUPS: &str = include_str!("dashboard/groups.sql");
    pub const MISSED: &str = include_str!("dashboard/missed.sql");
}

/// The agent filter of the task-result queries: the session of the task's
/// results is the agent's.
const OF_AGENT: &str =
    "($6::text IS NULL OR r.session_id IN (SELECT session_id FROM sessions WHERE project = $1 AND agent_id = $6))";

/// A dashboard query with its placeholders filled in.
fn filled(text: &str) -> String {
    text.replace("{window}", WINDOW)
        .replace("{of_agent}", OF_AGENT)
        .replace("{columns}", &PATTERN_COLUMNS.replace("p.occurrence_count", "w.in_window AS occurrence_count"))
}

/// The dashboard's aggregates, each one query over the window, run side by
/// side.
pub async fn dashboard(pool: &PgPool, scope: &ProjectScope, query: &DashboardQuery) -> Result<DashboardFigures, Error> {
    let over_window = |text: &str| window_query(filled(text), query, scope);
    let (days, top, categories, totals, outcomes, tasks, groups, missed) = tokio::try_join!(
        over_window(sql::DAYS).fetch_all(pool),
        over_window(sql::TOP).bind(query.top_patterns).fetch_all(pool),
        over_window(sql::CATEGORIES).fetch_all(pool),
        over_window(sql::TOTALS).fetch_one(pool),
        over_window(sql::OUTCOMES).fetch_one(pool),
        over_window(sql::TASKS).fetch_one(pool),
        over_window(sql::GROUPS).fetch_all(pool),
        over_window(sql::MISSED).fetch_one(pool),
    )?;
    // A task is in the held-out group when its warnings were held out (a
    // task is held out whole); it failed when a warned pattern recurred.
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
