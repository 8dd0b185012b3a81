//! The knowledge change feed (migration 0016): what changed since a cursor,
//! the entries as a keyword index needs them, and pruning.

use sqlx::{PgConnection, PgPool, Row as _};
use uuid::Uuid;

use lore_types::Error;

/// The channel every change notifies, on commit.
pub const CHANNEL: &str = "lore_knowledge";

/// A position in the feed: after every change up to `(txid, position)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Cursor {
    pub txid: u64,
    pub position: i64,
}

/// One change: an entry, a project as a whole (`entry_id` None), or every
/// project (both None).
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    pub at: Cursor,
    pub project: Option<String>,
    pub entry_id: Option<Uuid>,
}

/// What [`since`] read.
#[derive(Debug, Clone, PartialEq)]
pub struct Changes {
    /// Oldest first.
    pub changes: Vec<Change>,
    /// The oldest transaction still running when they were read: every
    /// change of a transaction below it is here or was in an earlier read;
    /// changes at or above it may still be joined by others that commit
    /// later.
    pub horizon: u64,
    /// The primary's WAL position when they were read: a replica that has
    /// replayed it holds every change read.
    pub position: u64,
}

/// Changes after `after`.
pub async fn since(pool: &PgPool, after: Cursor, limit: i64) -> Result<Changes, Error> {
    let rows = sqlx::query(
        "SELECT h.horizon::text AS horizon, h.position, c.txid::text AS txid, c.position AS at, c.project, c.entry_id
         FROM (SELECT pg_snapshot_xmin(pg_current_snapshot()) AS horizon,
                      (pg_current_wal_lsn() - '0/0'::pg_lsn)::bigint AS position) AS h
         LEFT JOIN LATERAL (
             SELECT txid, position, project, entry_id FROM knowledge_changes
             WHERE (txid, position) > ($1::text::xid8, $2)
             ORDER BY txid, position
             LIMIT $3) AS c ON true",
    )
    .bind(after.txid.to_string())
    .bind(after.position)
    .bind(limit)
    .fetch_all(pool)
    .await?;
    let (horizon, position) = match rows.first() {
        Some(row) => (parse_xid(row.try_get("horizon")?)?, row.try_get::<i64, _>("position")?.max(0) as u64),
        None => (0, 0),
    };
    let mut changes = Vec::with_capacity(rows.len());
    for row in &rows {
        let Some(txid) = row.try_get::<Option<String>, _>("txid")? else { continue };
        changes.push(Change {
            at: Cursor { txid: parse_xid(txid)?, position: row.try_get("at")? },
            project: row.try_get("project")?,
            entry_id: row.try_get("entry_id")?,
        });
    }
    Ok(Changes { changes, horizon, position })
}

fn parse_xid(text: String) -> Result<u64, Error> {
    text.parse().map_err(|_| Error::Database(sqlx::Error::Decode(format!("not a transaction id: {text:?}").into())))
}

/// The feed was pruned up to here: a reader behind it missed changes.
pub async fn pruned_through(pool: &PgPool) -> Result<Option<Cursor>, Error> {
    let row =
        sqlx::query("SELECT txid::text AS txid, position FROM knowledge_changes_pruned").fetch_optional(pool).await?;
    row.map(|row| Ok(Cursor { txid: parse_xid(row.try_get("txid")?)?, position: row.try_get("position")? })).transpose()
}

/// Removes the changes of transactions over before `older_than` ago, and
/// remembers how far. Returns how many went.
pub async fn prune(pool: &PgPool, older_than: std::time::Duration) -> Result<u64, Error> {
    let mut transaction = pool.begin().await?;
    let last = sqlx::query(
        "WITH gone AS (
             DELETE FROM knowledge_changes
             WHERE changed_at < now() - make_interval(secs => $1)
               AND txid < pg_snapshot_xmin(pg_current_snapshot())
             RETURNING txid, position)
         SELECT count(*) AS count, (SELECT txid::text FROM gone ORDER BY txid DESC, position DESC LIMIT 1) AS txid,
                (SELECT position FROM gone ORDER BY txid DESC, position DESC LIMIT 1) AS position
         FROM gone",
    )
    .bind(older_than.as_secs_f64())
    .fetch_one(&mut *transaction)
    .await?;
    let count: i64 = last.try_get("count")?;
    if let Some(txid) = last.try_get::<Option<String>, _>("txid")? {
        sqlx::query(
            "INSERT INTO knowledge_changes_pruned (txid, position) VALUES ($1::text::xid8, $2)
             ON CONFLICT (singleton) DO UPDATE SET txid = EXCLUDED.txid, position = EXCLUDED.position
             WHERE (knowledge_changes_pruned.txid, knowledge_changes_pruned.position)
                 < (EXCLUDED.txid, EXCLUDED.position)",
        )
        .bind(txid)
        .bind(last.try_get::<i64, _>("position")?)
        .execute(&mut *transaction)
        .await?;
    }
    transaction.commit().await?;
    Ok(count.max(0) as u64)
}

/// An entry as the keyword index holds it.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexedEntry {
    pub entry_id: Uuid,
    pub project: String,
    pub kind: String,
    pub status: String,
    pub category: String,
    pub severity: Option<String>,
    pub tags: Vec<String>,
    pub title: String,
    pub summary: String,
    pub body: String,
    pub symptoms: Vec<String>,
    pub root_causes: Vec<String>,
}

const INDEXED_COLUMNS: &str =
    "entry_id, project, kind, status, category, severity, tags, title, summary, body, symptoms, root_causes";

fn indexed_entry(row: &sqlx::postgres::PgRow) -> Result<IndexedEntry, sqlx::Error> {
    Ok(IndexedEntry {
        entry_id: row.try_get("entry_id")?,
        project: row.try_get("project")?,
        kind: row.try_get("kind")?,
        status: row.try_get("status")?,
        category: row.try_get("category")?,
        severity: row.try_get("severity")?,
        tags: row.try_get("tags")?,
        title: row.try_get("title")?,
        summary: row.try_get("summary")?,
        body: row.try_get("body")?,
        symptoms: row.try_get("symptoms")?,
        root_causes: row.try_get("root_causes")?,
    })
}

/// The entries of `ids` that exist (the others were purged).
pub async fn entries(pool: &PgPool, ids: &[Uuid]) -> Result<Vec<IndexedEntry>, Error> {
    let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {INDEXED_COLUMNS} FROM knowledge_entries WHERE entry_id = ANY($1)"
    )))
    .bind(ids)
    .fetch_all(pool)
    .await?;
    rows.iter().map(indexed_entry).collect::<Result<_, _>>().map_err(Error::from)
}

/// A read-only transaction that sees one snapshot throughout, for a
/// rebuild that pages through every entry.
pub async fn begin_snapshot(pool: &sqlx::PgPool) -> Result<sqlx::Transaction<'static, sqlx::Postgres>, Error> {
    let mut transaction = pool.begin().await?;
    sqlx::query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY").execute(&mut *transaction).await?;
    Ok(transaction)
}

/// Starts reading every entry as of now, for a rebuild: returns the
/// horizon (the cursor to follow the feed from afterwards) and the
/// primary's WAL position. Call in a transaction [`begin_snapshot`] began,
/// then [`every_entry_page`].
pub async fn snapshot_horizon(connection: &mut PgConnection) -> Result<(Cursor, u64), Error> {
    let (horizon, position): (String, i64) = sqlx::query_as(
        "SELECT pg_snapshot_xmin(pg_current_snapshot())::text, (pg_current_wal_lsn() - '0/0'::pg_lsn)::bigint",
    )
    .fetch_one(&mut *connection)
    .await?;
    // Position 0 is before every row of that transaction.
    Ok((Cursor { txid: parse_xid(horizon)?, position: 0 }, position.max(0) as u64))
}

/// A page of every entry, by id, after `after`.
pub async fn every_entry_page(
    connection: &mut PgConnection,
    after: Option<Uuid>,
    limit: i64,
) -> Result<Vec<IndexedEntry>, Error> {
    let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {INDEXED_COLUMNS} FROM knowledge_entries
         WHERE ($1::uuid IS NULL OR entry_id > $1) ORDER BY entry_id LIMIT $2"
    )))
    .bind(after)
    .bind(limit)
    .fetch_all(&mut *connection)
    .await?;
    rows.iter().map(indexed_entry).collect::<Result<_, _>>().map_err(Error::from)
}
