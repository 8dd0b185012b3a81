//! The injection ledger: what each briefing and read gave each session.

use std::collections::BTreeMap;

use chrono::{DateTime, NaiveDate, Utc};
use sqlx::postgres::PgRow;
use sqlx::{PgConnection, PgPool, Row as _};
use uuid::Uuid;

use lore_types::Error;
use lore_types::actions::StoredName as _;
use lore_types::actions::query::Position;
use lore_types::injections::{
    CALL_WARNING_WHY, CallWarningGiven, Day, Given, InjectedItem, Injection, InjectionFilter, Totals, Withheld,
};
use lore_types::scope::ProjectScope;
use lore_types::trust::Trust;

fn count(value: usize) -> i32 {
    i32::try_from(value).unwrap_or(i32::MAX)
}

/// Records an injection and its items (the project is created on first
/// use, as every write does; the agent is the session's when not given).
/// False when its id was recorded already: a client that reports an
/// injection again, after an answer was lost, records it once.
pub async fn insert(connection: &mut PgConnection, injection: &Injection) -> Result<bool, Error> {
    let inserted = sqlx::query(
        "WITH project AS (INSERT INTO projects (name) VALUES ($2) ON CONFLICT DO NOTHING)
         INSERT INTO injections (injection_id, project, session_id, agent_id, task_id, surface, chars, tokens,
                                 created_at)
         VALUES ($1, $2, $3,
                 CASE WHEN $4 = '' THEN COALESCE((SELECT agent_id FROM sessions WHERE session_id = $3), '')
                      ELSE $4 END,
                 $5, $6, $7, $8, COALESCE($9, now()))
         ON CONFLICT (injection_id) DO NOTHING",
    )
    .bind(injection.injection_id)
    .bind(&injection.project)
    .bind(injection.session_id)
    .bind(&injection.agent_id)
    .bind(&injection.task_id)
    .bind(injection.surface.as_str())
    .bind(count(injection.chars))
    .bind(count(injection.tokens()))
    .bind(injection.created_at)
    .execute(&mut *connection)
    .await?
    .rows_affected()
        > 0;
    if !inserted || injection.items.is_empty() {
        return Ok(inserted);
    }
    let items = &injection.items;
    let positions: Vec<i16> = (0..items.len()).map(|index| i16::try_from(index).unwrap_or(i16::MAX)).collect();
    let parts: Vec<String> =
        items.iter().map(|item| serde_json::to_string(&item.score_parts).unwrap_or_else(|_| "{}".into())).collect();
    sqlx::query(
        "INSERT INTO injection_items (injection_id, position, kind, item_id, label, trust, chars, tokens, score,
                                      score_parts, why, withheld)
         SELECT $1, position, kind, item_id, label, trust, chars, tokens, score, parts::jsonb, why, withheld
         FROM unnest($2::smallint[], $3::text[], $4::uuid[], $5::text[], $6::text[], $7::int[], $8::int[],
                     $9::float8[], $10::text[], $11::text[], $12::text[])
              AS item(position, kind, item_id, label, trust, chars, tokens, score, parts, why, withheld)
         ON CONFLICT DO NOTHING",
    )
    .bind(injection.injection_id)
    .bind(&positions)
    .bind(items.iter().map(|item| item.kind.as_str()).collect::<Vec<_>>())
    .bind(items.iter().map(|item| item.item_id).collect::<Vec<_>>())
    .bind(items.iter().map(|item| item.label.as_str()).collect::<Vec<_>>())
    .bind(items.iter().map(|item| item.trust.map(|trust| trust.as_str())).collect::<Vec<_>>())
    .bind(items.iter().map(|item| count(item.chars)).collect::<Vec<_>>())
    .bind(items.iter().map(|item| count(item.tokens())).collect::<Vec<_>>())
    .bind(items.iter().map(|item| if item.score.is_finite() { item.score } else { 0.0 }).collect::<Vec<_>>())
    .bind(&parts)
    .bind(items.iter().map(|item| item.why.as_str()).collect::<Vec<_>>())
    .bind(items.iter().map(|item| item.withheld.map(|why| why.as_str())).collect::<Vec<_>>())
    .execute(connection)
    .await?;
    Ok(true)
}

/// What the session was shown so far (warnings it got through GetWarnings
/// count too) and how many characters.
pub async fn given(pool: &PgPool, project: &str, session_id: Uuid) -> Result<Given, Error> {
    let row = sqlx::query(
        "WITH shown AS (
             SELECT i.kind, i.item_id, i.label FROM injection_items i JOIN injections j USING (injection_id)
             WHERE j.session_id = $1 AND j.project = $2 AND i.withheld IS NULL)
         SELECT ARRAY(SELECT DISTINCT item_id FROM shown WHERE kind = 'lesson') AS entries,
                ARRAY(SELECT item_id FROM shown WHERE kind = 'warning'
                      UNION
                      SELECT pattern_id FROM qa_warning_deliveries
                       WHERE session_id = $1 AND project = $2 AND NOT held_out
                      UNION
                      SELECT pattern_id FROM qa_patterns
                       WHERE project = $2
                         AND template IN (SELECT label FROM shown WHERE kind = 'call_warning')) AS patterns,
                (SELECT COALESCE(sum(chars), 0) FROM injections WHERE session_id = $1 AND project = $2) AS chars",
    )
    .bind(session_id)
    .bind(project)
    .fetch_one(pool)
    .await?;
    let entries: Vec<Uuid> = row.try_get("entries")?;
    let patterns: Vec<Uuid> = row.try_get("patterns")?;
    let chars: i64 = row.try_get("chars")?;
    Ok(Given {
        entries: entries.into_iter().collect(),
        patterns: patterns.into_iter().collect(),
        chars: usize::try_from(chars).unwrap_or(0),
    })
}

/// The warnings at the call given in `project` since `since`, the most
/// given first.
pub async fn call_warnings_given(
    pool: &PgPool,
    project: &str,
    since: DateTime<Utc>,
    limit: i64,
) -> Result<Vec<CallWarningGiven>, Error> {
    let rows = sqlx::query(
        "SELECT i.label AS shape, (array_agg(i.why ORDER BY j.created_at DESC))[1] AS why, count(*) AS times,
                count(DISTINCT j.session_id) AS sessions, max(j.created_at) AS last_given
         FROM injection_items i JOIN injections j USING (injection_id)
         WHERE j.project = $1 AND j.surface = 'call' AND i.kind = 'call_warning' AND j.created_at >= $2
         GROUP BY i.label ORDER BY times DESC, last_given DESC LIMIT $3",
    )
    .bind(project)
    .bind(since)
    .bind(limit)
    .fetch_all(pool)
    .await?;
    rows.iter()
        .map(|row| {
            let why: String = row.try_get("why")?;
            Ok(CallWarningGiven {
                shape: row.try_get("shape")?,
                failure: why.strip_prefix(CALL_WARNING_WHY).unwrap_or(&why).to_owned(),
                times: row.try_get("times")?,
                sessions: row.try_get("sessions")?,
                last_given: row.try_get("last_given")?,
            })
        })
        .collect::<Result<_, sqlx::Error>>()
        .map_err(Error::from)
}

/// The filter's conditions on `injections` (alias `j`), binding $1 to $6.
const FILTER: &str = "j.project = $1 AND ($2::text[] IS NULL OR j.project = ANY($2))
     AND ($3::uuid IS NULL OR j.session_id = $3) AND ($4::text IS NULL OR j.agent_id = $4)
     AND ($5::timestamptz IS NULL OR j.created_at >= $5) AND ($6::timestamptz IS NULL OR j.created_at < $6)";

fn bind_filter<'q>(
    query: sqlx::query::Query<'q, sqlx::Postgres, sqlx::postgres::PgArguments>,
    scope: &ProjectScope,
    filter: &'q InjectionFilter,
) -> sqlx::query::Query<'q, sqlx::Postgres, sqlx::postgres::PgArguments> {
    query
        .bind(&filter.project)
        .bind(scope.sql_filter())
        .bind(filter.session_id)
        .bind(filter.agent_id.as_deref())
        .bind(filter.since)
        .bind(filter.until)
}

fn decode<T: lore_types::actions::StoredName>(row: &PgRow, column: &str) -> Result<T, sqlx::Error> {
    let text: String = row.try_get(column)?;
    T::parse(&text).ok_or_else(|| sqlx::Error::ColumnDecode {
        index: column.into(),
        source: format!("unexpected value {text:?}").into(),
    })
}

fn item_from_row(row: &PgRow) -> Result<InjectedItem, sqlx::Error> {
    let trust: Option<String> = row.try_get("trust")?;
    let withheld: Option<String> = row.try_get("withheld")?;
    let parts: sqlx::types::Json<BTreeMap<String, f64>> = row.try_get("score_parts")?;
    Ok(InjectedItem {
        kind: decode(row, "kind")?,
        item_id: row.try_get("item_id")?,
        label: row.try_get("label")?,
        trust: trust.as_deref().and_then(Trust::parse),
        chars: usize::try_from(row.try_get::<i32, _>("chars")?).unwrap_or(0),
        score: row.try_get("score")?,
        score_parts: parts.0,
        why: row.try_get("why")?,
        withheld: withheld.as_deref().and_then(Withheld::parse),
    })
}

/// A page of injections with their items, newest first.
pub async fn list(
    pool: &PgPool,
    scope: &ProjectScope,
    filter: &InjectionFilter,
    limit: i64,
    after: Option<Position>,
) -> Result<Vec<Injection>, Error> {
    let sql = format!(
        "SELECT injection_id, project, session_id, agent_id, task_id, surface, chars, created_at
         FROM injections j
         WHERE {FILTER} AND ($7::timestamptz IS NULL OR (j.created_at, j.injection_id) < ($7, $8))
         ORDER BY j.created_at DESC, j.injection_id DESC
         LIMIT $9"
    );
    let rows = bind_filter(sqlx::query(sqlx::AssertSqlSafe(sql)), scope, filter)
        .bind(after.map(|position| position.occurred_at))
        .bind(after.map(|position| position.action_id))
        .bind(limit)
        .fetch_all(pool)
        .await?;
    let mut injections = Vec::with_capacity(rows.len());
    for row in &rows {
        injections.push(Injection {
            injection_id: row.try_get("injection_id")?,
            project: row.try_get("project")?,
            session_id: row.try_get("session_id")?,
            agent_id: row.try_get("agent_id")?,
            task_id: row.try_get("task_id")?,
            surface: decode(row, "surface")?,
            chars: usize::try_from(row.try_get::<i32, _>("chars")?).unwrap_or(0),
            items: Vec::new(),
            created_at: Some(row.try_get("created_at")?),
        });
    }
    let ids: Vec<Uuid> = injections.iter().map(|injection| injection.injection_id).collect();
    let items = sqlx::query(
        "SELECT injection_id, kind, item_id, label, trust, chars, score, score_parts, why, withheld
         FROM injection_items WHERE injection_id = ANY($1) ORDER BY injection_id, position",
    )
    .bind(&ids)
    .fetch_all(pool)
    .await?;
    for row in &items {
        let injection_id: Uuid = row.try_get("injection_id")?;
        if let Some(injection) = injections.iter_mut().find(|injection| injection.injection_id == injection_id) {
            injection.items.push(item_from_row(row)?);
        }
    }
    Ok(injections)
}

pub async fn totals(pool: &PgPool, scope: &ProjectScope, filter: &InjectionFilter) -> Result<Totals, Error> {
    let sql = format!(
        "WITH chosen AS (SELECT injection_id, chars, tokens FROM injections j WHERE {FILTER})
         SELECT (SELECT count(*) FROM chosen) AS injections,
                (SELECT COALESCE(sum(chars), 0) FROM chosen)::bigint AS chars,
                (SELECT COALESCE(sum(tokens), 0) FROM chosen)::bigint AS tokens,
                count(*) FILTER (WHERE i.withheld IS NULL) AS shown,
                count(*) FILTER (WHERE i.withheld IS NOT NULL) AS withheld
         FROM injection_items i WHERE i.injection_id IN (SELECT injection_id FROM chosen)"
    );
    let row = bind_filter(sqlx::query(sqlx::AssertSqlSafe(sql)), scope, filter).fetch_one(pool).await?;
    Ok(Totals {
        injections: row.try_get("injections")?,
        items_shown: row.try_get("shown")?,
        items_withheld: row.try_get("withheld")?,
        chars: row.try_get("chars")?,
        tokens: row.try_get("tokens")?,
    })
}

/// Tokens and injections per UTC day since `first`, days with any.
pub async fn per_day(pool: &PgPool, scope: &ProjectScope, project: &str, first: NaiveDate) -> Result<Vec<Day>, Error> {
    let rows = sqlx::query(
        "SELECT (created_at AT TIME ZONE 'UTC')::date AS day, COALESCE(sum(tokens), 0)::bigint AS tokens,
                count(*) AS injections
         FROM injections
         WHERE project = $1 AND ($2::text[] IS NULL OR project = ANY($2))
           AND created_at >= ($3::date)::timestamp AT TIME ZONE 'UTC'
         GROUP BY 1 ORDER BY 1",
    )
    .bind(project)
    .bind(scope.sql_filter())
    .bind(first)
    .fetch_all(pool)
    .await?;
    rows.iter()
        .map(|row| {
            Ok(Day { day: row.try_get("day")?, tokens: row.try_get("tokens")?, injections: row.try_get("injections")? })
        })
        .collect()
}
