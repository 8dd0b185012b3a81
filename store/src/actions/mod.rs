//! The action log: batch insert with deduplication and the hash chain, and
//! the reads behind GetRecentActions and VerifyChain.
//!
//! Writing a batch is one transaction:
//! 1. create missing project rows and lock the batch's sessions (in id order,
//!    so two batches never deadlock), which serializes each session's chain;
//! 2. know which (action_id, occurred_at) pairs are already stored: those
//!    are replays, counted as duplicates and not chained again (the first
//!    attempt assumes none and falls back to asking, see `insert_batch`);
//! 3. chain the new actions in batch order and write them with one multi-row
//!    `INSERT ... SELECT FROM unnest(...)`;
//! 4. advance each session's chain head, action count and last activity;
//! 5. notify followers (a statement trigger runs `pg_notify`, delivered on
//!    commit).
//!
//! The caller acknowledges only after this returns, i.e. after COMMIT.

pub mod retention;
pub mod sessions;

use lore_types::actions::StoredName;
use std::collections::{HashMap, HashSet};

use chrono::{DateTime, Utc};
use futures_util::TryStreamExt as _;
use sqlx::postgres::PgRow;
use sqlx::types::Json;
use sqlx::{PgPool, Postgres, QueryBuilder, Row as _};
use uuid::Uuid;

use lore_types::Error;
use lore_types::actions::chain::action_hash;
use lore_types::actions::query::{ActionFilter, Position};
use lore_types::actions::{Action, ActivityCounts, BatchOutcome, Counts, NewAction, Outcome, Rejection, RejectionKind};
use lore_types::scope::ProjectScope;

/// Channel that carries "project X has new actions" to Resume followers on
/// every replica.
pub const ACTIONS_CHANNEL: &str = "lore_actions";

pub(crate) const ACTION_COLUMNS: &str = "action_id, occurred_at, project, session_id, agent_id, action_type, category, \
     context, outcome, error, duration_ms, parent_action_id, epic_id, issue_id, received_at, \
     redaction_count, truncated, chain_seq, prev_hash, chain_hash";

pub(crate) fn action_from_row(row: &PgRow) -> Result<Action, sqlx::Error> {
    let outcome: String = row.try_get("outcome")?;
    Ok(Action {
        action: NewAction {
            action_id: row.try_get("action_id")?,
            occurred_at: row.try_get("occurred_at")?,
            project: row.try_get("project")?,
            session_id: row.try_get("session_id")?,
            agent_id: row.try_get("agent_id")?,
            action_type: row.try_get("action_type")?,
            category: row.try_get("category")?,
            context: row.try_get::<Json<serde_json::Value>, _>("context")?.0,
            outcome: Outcome::parse(&outcome).ok_or_else(|| sqlx::Error::ColumnDecode {
                index: "outcome".into(),
                source: format!("unexpected outcome {outcome:?}").into(),
            })?,
            error: row.try_get("error")?,
            duration_ms: row.try_get("duration_ms")?,
            parent_action_id: row.try_get("parent_action_id")?,
            epic_id: row.try_get("epic_id")?,
            issue_id: row.try_get("issue_id")?,
            redaction_count: row.try_get("redaction_count")?,
            truncated: row.try_get("truncated")?,
        },
        received_at: row.try_get("received_at")?,
        chain_seq: row.try_get("chain_seq")?,
        prev_hash: row.try_get("prev_hash")?,
        chain_hash: row.try_get("chain_hash")?,
    })
}

/// A session's chain head while a batch is being chained.
struct ChainHead {
    project: String,
    agent_id: String,
    head: Vec<u8>,
    length: i64,
}

/// The columns of the rows to insert, one vector per column (for unnest).
#[derive(Default)]
struct Columns {
    action_id: Vec<Uuid>,
    occurred_at: Vec<DateTime<Utc>>,
    project: Vec<String>,
    session_id: Vec<Option<Uuid>>,
    agent_id: Vec<String>,
    action_type: Vec<String>,
    category: Vec<String>,
    context: Vec<String>,
    outcome: Vec<&'static str>,
    error: Vec<String>,
    duration_ms: Vec<i64>,
    parent_action_id: Vec<Option<Uuid>>,
    epic_id: Vec<String>,
    issue_id: Vec<String>,
    redaction_count: Vec<i32>,
    truncated: Vec<bool>,
    chain_seq: Vec<Option<i64>>,
    prev_hash: Vec<Option<Vec<u8>>>,
    chain_hash: Vec<Vec<u8>>,
}

impl Columns {
    fn push(&mut self, action: NewAction, chain_seq: Option<i64>, prev_hash: Option<Vec<u8>>, chain_hash: Vec<u8>) {
        self.action_id.push(action.action_id);
        self.occurred_at.push(action.occurred_at);
        self.project.push(action.project);
        self.session_id.push(action.session_id);
        self.agent_id.push(action.agent_id);
        self.action_type.push(action.action_type);
        self.category.push(action.category);
        self.context.push(action.context.to_string());
        self.outcome.push(action.outcome.as_str());
        self.error.push(action.error);
        self.duration_ms.push(action.duration_ms);
        self.parent_action_id.push(action.parent_action_id);
        self.epic_id.push(action.epic_id);
        self.issue_id.push(action.issue_id);
        self.redaction_count.push(action.redaction_count);
        self.truncated.push(action.truncated);
        self.chain_seq.push(chain_seq);
        self.prev_hash.push(prev_hash);
        self.chain_hash.push(chain_hash);
    }

    fn len(&self) -> usize {
        self.action_id.len()
    }
}

fn rejection(index: usize, action: &NewAction, kind: RejectionKind, field: &'static str, reason: String) -> Rejection {
    Rejection { index, action_id: action.action_id.to_string(), kind, field, reason }
}

/// Stores a batch (see the module doc). Actions outside `scope`, or naming a
/// session that does not exist in their project, are rejected one by one;
/// the rest of the batch is stored.
///
/// Replays are rare (a sidecar reconnecting), so the first attempt assumes
/// none and skips the duplicate check. If the insert then stores fewer rows
/// than it chained, the attempt rolls back and a second one checks first.
pub async fn insert_batch(pool: &PgPool, scope: &ProjectScope, actions: &[NewAction]) -> Result<BatchOutcome, Error> {
    if actions.is_empty() {
        return Ok(BatchOutcome::default());
    }
    if let Attempt::Stored(outcome) = attempt(pool, scope, actions, DuplicateCheck::Skip).await? {
        return Ok(outcome);
    }
    match attempt(pool, scope, actions, DuplicateCheck::Query).await? {
        Attempt::Stored(outcome) => Ok(outcome),
        // A concurrent writer stored one of these ids under another session
        // between our check and our insert; the chain we built would have a
        // hole. Nothing was committed; a retry sees the rows as duplicates.
        Attempt::Conflict => Err(Error::Aborted("a concurrent write conflicted with this batch; retry it".into())),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DuplicateCheck {
    /// Assume no action is stored yet (the fast path).
    Skip,
    /// Ask the table which actions are stored before chaining.
    Query,
}

enum Attempt {
    Stored(BatchOutcome),
    /// The insert met stored actions the attempt did not expect; rolled back.
    Conflict,
}

async fn attempt(
    pool: &PgPool,
    scope: &ProjectScope,
    actions: &[NewAction],
    check: DuplicateCheck,
) -> Result<Attempt, Error> {
    let mut outcome = BatchOutcome::default();
    let mut projects: Vec<&str> =
        actions.iter().map(|action| action.project.as_str()).filter(|project| scope.allows(project)).collect();
    projects.sort_unstable();
    projects.dedup();
    let mut session_ids: Vec<Uuid> = actions.iter().filter_map(|action| action.session_id).collect();
    session_ids.sort_unstable();
    session_ids.dedup();

    let mut transaction = pool.begin().await?;
    let (received_at, mut heads) = lock_sessions(&mut transaction, scope, &projects, &session_ids).await?;
    // What is already stored: nothing assumed on the fast path; asked after
    // the session locks are held on the slow one, so it is current.
    let stored: HashSet<(Uuid, DateTime<Utc>)> = match check {
        DuplicateCheck::Skip => HashSet::new(),
        DuplicateCheck::Query => stored_keys(&mut transaction, actions).await?,
    };
    let (columns, touched_sessions) = chain(scope, actions, received_at, &mut heads, stored, &mut outcome);
    if columns.len() > 0 {
        let chained = columns.chain_seq.iter().filter(|seq| seq.is_some()).count();
        let (inserted, inserted_chained) =
            insert_and_advance(&mut transaction, &columns, received_at, &touched_sessions, &heads).await?;
        if inserted != columns.len() {
            // Rows met stored ones we did not know of: on the fast path,
            // replays; on the slow path, a concurrent writer of the same ids.
            // Either way roll back; the caller retries with the check (or
            // reports the conflict), and the rows then count as duplicates.
            debug_assert!(inserted_chained <= chained);
            transaction.rollback().await?;
            return Ok(Attempt::Conflict);
        }
        outcome.stored = inserted as u32;
    }
    transaction.commit().await?;
    Ok(Attempt::Stored(outcome))
}

/// Takes an xid, reads the clock, creates missing projects and locks the
/// batch's sessions in id order (two batches never deadlock), in one round
/// trip: the clock, and each locked session's chain head. The xid comes
/// before the clock, so an export whose as_of is at or after received_at
/// sees this transaction committed or in progress, never not yet started
/// (see export_as_of).
async fn lock_sessions(
    transaction: &mut sqlx::Transaction<'_, Postgres>,
    scope: &ProjectScope,
    projects: &[&str],
    session_ids: &[Uuid],
) -> Result<(DateTime<Utc>, HashMap<Uuid, ChainHead>), Error> {
    let rows = sqlx::query(
        "WITH assigned AS MATERIALIZED (SELECT pg_current_xact_id()),
              ensured AS (INSERT INTO projects (name) SELECT unnest($1::text[]) ON CONFLICT DO NOTHING),
              locked AS (
                  SELECT session_id, project, agent_id, coalesce(chain_head, ''::bytea) AS chain_head, action_count
                    FROM sessions
                   WHERE session_id = ANY($2) AND ($3::text[] IS NULL OR project = ANY($3))
                   ORDER BY session_id
                     FOR UPDATE)
         SELECT NULL::uuid AS session_id, NULL::text AS project, NULL::text AS agent_id, NULL::bytea AS chain_head,
                NULL::int8 AS action_count, clock_timestamp() AS received_at
           FROM assigned
         UNION ALL
         SELECT session_id, project, agent_id, chain_head, action_count, NULL FROM locked",
    )
    .bind(projects)
    .bind(session_ids)
    .bind(scope.sql_filter())
    .fetch_all(&mut **transaction)
    .await?;
    let mut received_at: Option<DateTime<Utc>> = None;
    let mut heads: HashMap<Uuid, ChainHead> = HashMap::with_capacity(rows.len());
    for row in &rows {
        match row.try_get::<Option<Uuid>, _>("session_id")? {
            None => received_at = row.try_get("received_at")?,
            Some(session_id) => {
                heads.insert(
                    session_id,
                    ChainHead {
                        project: row.try_get("project")?,
                        agent_id: row.try_get("agent_id")?,
                        head: row.try_get("chain_head")?,
                        length: row.try_get("action_count")?,
                    },
                );
            }
        }
    }
    let received_at = received_at.ok_or_else(|| Error::Aborted("the database did not return its clock".into()))?;
    Ok((received_at, heads))
}

/// Chains the batch's actions onto their sessions' heads (advancing them):
/// the rows to insert and the sessions they touch. What is out of scope,
/// stored already or without its session goes into `outcome` instead.
fn chain(
    scope: &ProjectScope,
    actions: &[NewAction],
    received_at: DateTime<Utc>,
    heads: &mut HashMap<Uuid, ChainHead>,
    mut stored: HashSet<(Uuid, DateTime<Utc>)>,
    outcome: &mut BatchOutcome,
) -> (Columns, Vec<Uuid>) {
    let mut columns = Columns::default();
    let mut touched_sessions: Vec<Uuid> = Vec::new();
    for (index, action) in actions.iter().enumerate() {
        if let Err(outside) = scope.require(&action.project) {
            outcome.rejected.push(rejection(index, action, RejectionKind::OutOfScope, "project", outside.to_string()));
            continue;
        }
        // A replay of a stored action, or the same action twice in a batch.
        if !stored.insert((action.action_id, action.occurred_at)) {
            outcome.duplicates += 1;
            outcome.duplicate_indexes.push(index);
            continue;
        }
        let Some(session_id) = action.session_id else {
            let chain_hash = action_hash(&[], None, action, received_at.timestamp_micros()).to_vec();
            columns.push(action.clone(), None, None, chain_hash);
            continue;
        };
        let Some(head) = heads.get_mut(&session_id) else {
            stored.remove(&(action.action_id, action.occurred_at));
            let reason = format!("session {session_id}");
            outcome.rejected.push(rejection(index, action, RejectionKind::NotFound, "session_id", reason));
            continue;
        };
        if head.project != action.project {
            stored.remove(&(action.action_id, action.occurred_at));
            let reason = format!("session {session_id} belongs to another project");
            outcome.rejected.push(rejection(index, action, RejectionKind::Invalid, "project", reason));
            continue;
        }
        let mut action = action.clone();
        if action.agent_id.is_empty() {
            action.agent_id = head.agent_id.clone();
        }
        let seq = head.length + 1;
        let hash = action_hash(&head.head, Some(seq), &action, received_at.timestamp_micros()).to_vec();
        let prev = std::mem::replace(&mut head.head, hash.clone());
        head.length = seq;
        if !touched_sessions.contains(&session_id) {
            touched_sessions.push(session_id);
        }
        columns.push(action, Some(seq), Some(prev), hash);
    }
    (columns, touched_sessions)
}

/// The (action_id, occurred_at) keys of `actions` that are already stored.
async fn stored_keys(
    transaction: &mut sqlx::Transaction<'_, Postgres>,
    actions: &[NewAction],
) -> Result<HashSet<(Uuid, DateTime<Utc>)>, Error> {
    let ids: Vec<Uuid> = actions.iter().map(|action| action.action_id).collect();
    let times: Vec<DateTime<Utc>> = actions.iter().map(|action| action.occurred_at).collect();
    let earliest = times.iter().min().copied();
    let latest = times.iter().max().copied();
    // The time bounds let PostgreSQL skip the partitions the batch cannot
    // be in.
    Ok(sqlx::query(
        "SELECT a.action_id, a.occurred_at
           FROM actions a
           JOIN unnest($1::uuid[], $2::timestamptz[]) AS batch (action_id, occurred_at)
             ON a.action_id = batch.action_id AND a.occurred_at = batch.occurred_at
          WHERE a.occurred_at BETWEEN $3 AND $4",
    )
    .bind(&ids)
    .bind(&times)
    .bind(earliest)
    .bind(latest)
    .fetch(&mut **transaction)
    .map_ok(|row| (row.get::<Uuid, _>(0), row.get::<DateTime<Utc>, _>(1)))
    .try_collect()
    .await?)
}

/// Inserts the rows and advances the touched sessions' chain heads, in one
/// statement. Returns how many rows were inserted and how many of them are
/// chained.
async fn insert_and_advance(
    transaction: &mut sqlx::Transaction<'_, Postgres>,
    columns: &Columns,
    received_at: DateTime<Utc>,
    touched_sessions: &[Uuid],
    heads: &HashMap<Uuid, ChainHead>,
) -> Result<(usize, usize), Error> {
    let new_heads: Vec<&[u8]> = touched_sessions.iter().map(|id| heads[id].head.as_slice()).collect();
    let new_lengths: Vec<i64> = touched_sessions.iter().map(|id| heads[id].length).collect();
    let (inserted, chained): (i64, i64) = sqlx::query_as(
        "WITH inserted AS (
             INSERT INTO actions (action_id, occurred_at, project, session_id, agent_id, action_type, category,
                                  context, outcome, error, duration_ms, parent_action_id, epic_id, issue_id,
                                  received_at, redaction_count, truncated, chain_seq, prev_hash, chain_hash)
             SELECT action_id, occurred_at, project, session_id, agent_id, action_type, category,
                    context::jsonb, outcome, error, duration_ms, parent_action_id, epic_id, issue_id,
                    $15, redaction_count, truncated, chain_seq, prev_hash, chain_hash
               FROM unnest($1::uuid[], $2::timestamptz[], $3::text[], $4::uuid[], $5::text[], $6::text[],
                           $7::text[], $8::text[], $9::text[], $10::text[], $11::int8[], $12::uuid[],
                           $13::text[], $14::text[], $16::int4[], $17::bool[], $18::int8[], $19::bytea[],
                           $20::bytea[])
                    AS batch (action_id, occurred_at, project, session_id, agent_id, action_type, category,
                              context, outcome, error, duration_ms, parent_action_id, epic_id, issue_id,
                              redaction_count, truncated, chain_seq, prev_hash, chain_hash)
             ON CONFLICT DO NOTHING
             RETURNING chain_seq
         ),
         advanced AS (
             UPDATE sessions
                SET chain_head = heads.head, action_count = heads.length,
                    last_activity_at = greatest(last_activity_at, now())
               FROM unnest($21::uuid[], $22::bytea[], $23::int8[]) AS heads (session_id, head, length)
              WHERE sessions.session_id = heads.session_id
         )
         SELECT count(*), count(chain_seq) FROM inserted",
    )
    .bind(&columns.action_id)
    .bind(&columns.occurred_at)
    .bind(&columns.project)
    .bind(&columns.session_id)
    .bind(&columns.agent_id)
    .bind(&columns.action_type)
    .bind(&columns.category)
    .bind(&columns.context)
    .bind(&columns.outcome)
    .bind(&columns.error)
    .bind(&columns.duration_ms)
    .bind(&columns.parent_action_id)
    .bind(&columns.epic_id)
    .bind(&columns.issue_id)
    .bind(received_at)
    .bind(&columns.redaction_count)
    .bind(&columns.truncated)
    .bind(&columns.chain_seq)
    .bind(&columns.prev_hash)
    .bind(&columns.chain_hash)
    .bind(touched_sessions)
    .bind(&new_heads)
    .bind(&new_lengths)
    .fetch_one(&mut **transaction)
    .await?;
    Ok((inserted as usize, chained as usize))
}

/// The last `limit` actions of a session, oldest first.
pub async fn recent_in_session(
    pool: &PgPool,
    scope: &ProjectScope,
    session_id: Uuid,
    limit: i64,
) -> Result<Vec<Action>, Error> {
    let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT * FROM (
             SELECT {ACTION_COLUMNS} FROM actions
              WHERE session_id = $1 AND ($2::text[] IS NULL OR project = ANY($2))
              ORDER BY chain_seq DESC
              LIMIT $3
         ) AS recent ORDER BY chain_seq"
    )))
    .bind(session_id)
    .bind(scope.sql_filter())
    .bind(limit)
    .fetch_all(pool)
    .await?;
    Ok(rows.iter().map(action_from_row).collect::<Result<_, _>>()?)
}

/// Every action of a session in chain order, streamed in pages, for
/// verification.
pub async fn for_each_in_chain(
    pool: &PgPool,
    scope: &ProjectScope,
    session_id: Uuid,
    mut visit: impl FnMut(Action) -> bool,
) -> Result<(), Error> {
    const PAGE: i64 = 1000;
    let mut after_seq = 0_i64;
    loop {
        // The chain spans the live log and the archive (retention moves old
        // months there).
        let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT {ACTION_COLUMNS} FROM (
                 (SELECT {ACTION_COLUMNS} FROM actions
                   WHERE session_id = $1 AND ($2::text[] IS NULL OR project = ANY($2)) AND chain_seq > $3
                   ORDER BY chain_seq LIMIT $4)
                 UNION ALL
                 (SELECT {ACTION_COLUMNS} FROM actions_archive
                   WHERE session_id = $1 AND ($2::text[] IS NULL OR project = ANY($2)) AND chain_seq > $3
                   ORDER BY chain_seq LIMIT $4)
             ) AS chain
             ORDER BY chain_seq
             LIMIT $4"
        )))
        .bind(session_id)
        .bind(scope.sql_filter())
        .bind(after_seq)
        .bind(PAGE)
        .fetch_all(pool)
        .await?;
        let page_len = rows.len();
        for row in &rows {
            let action = action_from_row(row)?;
            after_seq = action.chain_seq.unwrap_or(after_seq);
            if !visit(action) {
                return Ok(());
            }
        }
        if (page_len as i64) < PAGE {
            return Ok(());
        }
    }
}

/// A session's chain head as recorded on the session row.
pub async fn chain_head(
    pool: &PgPool,
    scope: &ProjectScope,
    session_id: Uuid,
) -> Result<(Option<Vec<u8>>, i64), Error> {
    let row = sqlx::query(
        "SELECT chain_head, action_count FROM sessions
          WHERE session_id = $1 AND ($2::text[] IS NULL OR project = ANY($2))",
    )
    .bind(session_id)
    .bind(scope.sql_filter())
    .fetch_optional(pool)
    .await?
    .ok_or_else(|| Error::NotFound(format!("session {session_id}")))?;
    Ok((row.try_get("chain_head")?, row.try_get("action_count")?))
}

/// Appends `filter` (and `scope`) to a query that already says
/// `... FROM actions WHERE true`.
fn push_filter(query: &mut QueryBuilder<Postgres>, scope: &ProjectScope, filter: &ActionFilter) {
    query.push(" AND project = ").push_bind(&filter.project);
    if let Some(projects) = scope.sql_filter() {
        query.push(" AND project = ANY(").push_bind(projects).push(")");
    }
    if !filter.action_types.is_empty() {
        query.push(" AND action_type = ANY(").push_bind(&filter.action_types).push(")");
    }
    if let Some(agent_id) = &filter.agent_id {
        query.push(" AND agent_id = ").push_bind(agent_id);
    }
    if let Some(session_id) = filter.session_id {
        query.push(" AND session_id = ").push_bind(session_id);
    }
    if let Some(epic_id) = &filter.epic_id {
        query.push(" AND epic_id = ").push_bind(epic_id);
    }
    if let Some(issue_id) = &filter.issue_id {
        query.push(" AND issue_id = ").push_bind(issue_id);
    }
    if !filter.outcomes.is_empty() {
        let outcomes: Vec<&'static str> = filter.outcomes.iter().map(StoredName::as_str).collect();
        query.push(" AND outcome = ANY(").push_bind(outcomes).push(")");
    }
    if let Some(from) = filter.from {
        query.push(" AND occurred_at >= ").push_bind(from);
    }
    if let Some(until) = filter.until {
        query.push(" AND occurred_at < ").push_bind(until);
    }
    if let Some(contains) = &filter.context_contains {
        query.push(" AND context @> ").push_bind(Json(contains));
    }
    if let Some(text) = &filter.text {
        let escaped = text.replace('\\', "\\\\").replace('%', "\\%").replace('_', "\\_");
        query.push(" AND (action_type || ' ' || category || ' ' || error) ILIKE ").push_bind(format!("%{escaped}%"));
    }
    if let Some(received_by) = filter.received_by {
        query.push(" AND received_at <= ").push_bind(received_by);
    }
}

/// Page order through the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Newest first (searches).
    Descending,
    /// Oldest first (exports).
    Ascending,
}

/// One page of actions matching `filter`, after `after` in `direction`.
pub async fn page(
    pool: &PgPool,
    scope: &ProjectScope,
    filter: &ActionFilter,
    after: Option<Position>,
    direction: Direction,
    limit: i64,
) -> Result<Vec<Action>, Error> {
    let mut query = QueryBuilder::new(format!("SELECT {ACTION_COLUMNS} FROM actions WHERE true"));
    push_filter(&mut query, scope, filter);
    let (comparison, order) = match direction {
        Direction::Descending => ("<", "DESC"),
        Direction::Ascending => (">", "ASC"),
    };
    if let Some(after) = after {
        query
            .push(format!(" AND (occurred_at, action_id) {comparison} ("))
            .push_bind(after.occurred_at)
            .push(", ")
            .push_bind(after.action_id)
            .push(")");
    }
    query.push(format!(" ORDER BY occurred_at {order}, action_id {order} LIMIT ")).push_bind(limit);
    let rows = query.build().fetch_all(pool).await?;
    Ok(rows.iter().map(action_from_row).collect::<Result<_, _>>()?)
}

/// Totals by day (UTC), by action type and by outcome in one pass.
pub async fn activity_counts(
    pool: &PgPool,
    scope: &ProjectScope,
    filter: &ActionFilter,
) -> Result<ActivityCounts, Error> {
    let mut query = QueryBuilder::new(
        "SELECT GROUPING(day) = 0 AS by_day, GROUPING(action_type) = 0 AS by_type, GROUPING(outcome) = 0 AS by_outcome,
                coalesce(to_char(day, 'YYYY-MM-DD'), action_type, outcome, 'total') AS key,
                count(*) AS total,
                count(*) FILTER (WHERE outcome = 'success') AS succeeded,
                count(*) FILTER (WHERE outcome = 'failure') AS failed,
                count(*) FILTER (WHERE outcome = 'blocked') AS blocked
           FROM (SELECT (occurred_at AT TIME ZONE 'UTC')::date AS day, action_type, outcome
                   FROM actions WHERE true",
    );
    push_filter(&mut query, scope, filter);
    query.push(") AS scoped GROUP BY GROUPING SETS ((day), (action_type), (outcome), ()) ORDER BY key");
    let rows = query.build().fetch_all(pool).await?;
    let mut counts = ActivityCounts::default();
    for row in rows {
        let bucket = Counts {
            key: row.try_get("key")?,
            total: row.try_get("total")?,
            succeeded: row.try_get("succeeded")?,
            failed: row.try_get("failed")?,
            blocked: row.try_get("blocked")?,
        };
        if row.try_get("by_day")? {
            counts.by_day.push(bucket);
        } else if row.try_get("by_type")? {
            counts.by_action_type.push(bucket);
        } else if row.try_get("by_outcome")? {
            counts.by_outcome.push(bucket);
        } else {
            counts.totals = bucket;
        }
    }
    counts.by_action_type.sort_by(|left, right| right.total.cmp(&left.total).then_with(|| left.key.cmp(&right.key)));
    Ok(counts)
}

/// How long an export waits for writers that were in flight when it began.
const EXPORT_SETTLE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// The instant an export covers, read from the database clock, once every
/// transaction that could still store a row received at or before it has
/// finished. Together with the xid-then-clock order of `insert_batch`, this
/// makes the set of rows with `received_at <= as_of` final, so every page of
/// the export sees the same rows.
pub async fn export_as_of(pool: &PgPool) -> Result<DateTime<Utc>, Error> {
    let (snapshot, as_of): (String, DateTime<Utc>) =
        sqlx::query_as("SELECT pg_current_snapshot()::text, clock_timestamp()").fetch_one(pool).await?;
    // "xmin:xmax:xip1,xip2,...": the xids in progress at the snapshot.
    let in_progress: Vec<String> = snapshot
        .rsplit(':')
        .next()
        .unwrap_or_default()
        .split(',')
        .filter(|xid| !xid.is_empty())
        .map(str::to_owned)
        .collect();
    let deadline = tokio::time::Instant::now() + EXPORT_SETTLE_TIMEOUT;
    while !in_progress.is_empty() {
        let still_running: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM unnest($1::text[]) AS xid WHERE pg_xact_status(xid::xid8) = 'in progress'",
        )
        .bind(&in_progress)
        .fetch_one(pool)
        .await?;
        if still_running == 0 {
            break;
        }
        if tokio::time::Instant::now() > deadline {
            return Err(Error::Unavailable("writes in flight did not finish; retry the export".into()));
        }
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    Ok(as_of)
}

/// Actions of `project` (and `agent_id`) stored at or after `since`, in the
/// order they were stored, at most `limit`.
pub async fn received_since(
    pool: &PgPool,
    scope: &ProjectScope,
    project: &str,
    agent_id: Option<&str>,
    since: DateTime<Utc>,
    limit: i64,
) -> Result<Vec<Action>, Error> {
    let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {ACTION_COLUMNS} FROM actions
          WHERE project = $1 AND ($2::text[] IS NULL OR project = ANY($2))
            AND ($3::text IS NULL OR agent_id = $3) AND received_at >= $4
          ORDER BY received_at, action_id
          LIMIT $5"
    )))
    .bind(project)
    .bind(scope.sql_filter())
    .bind(agent_id)
    .bind(since)
    .bind(limit)
    .fetch_all(pool)
    .await?;
    Ok(rows.iter().map(action_from_row).collect::<Result<_, _>>()?)
}

/// The database clock (followers compare it with received_at, which comes
/// from the same clock).
pub async fn database_now(pool: &PgPool) -> Result<DateTime<Utc>, Error> {
    Ok(sqlx::query_scalar("SELECT clock_timestamp()").fetch_one(pool).await?)
}
