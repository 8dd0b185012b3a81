//! Retention of the action log: monthly partitions move from `actions` to
//! `actions_archive` once they are older than the archive age, and archived
//! partitions are dropped once older than the drop age. Whole partitions
//! move by DETACH/ATTACH; only stray rows in the default partitions are moved
//! or deleted row by row. Each partition moves in its own short transaction.

use chrono::{DateTime, Months, NaiveDate, TimeZone as _, Utc};
use sqlx::{PgPool, Row as _};

use lore_types::Error;

/// One monthly partition of the live log or the archive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Partition {
    pub name: String,
    pub from: DateTime<Utc>,
    pub to: DateTime<Utc>,
    pub archived: bool,
    pub approx_rows: i64,
}

/// What a retention pass did (or, on a dry run, would do).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RetentionOutcome {
    pub archived: Vec<String>,
    pub dropped: Vec<String>,
    /// Rows of the live default partition moved to the archive.
    pub default_rows_archived: u64,
    /// Rows of the archive's default partition deleted.
    pub default_rows_dropped: u64,
}

/// The month a partition covers, from its name `actions_pYYYYMM`.
fn month_of(name: &str) -> Option<(DateTime<Utc>, DateTime<Utc>)> {
    let digits = name.strip_prefix("actions_p")?;
    if digits.len() != 6 {
        return None;
    }
    let year: i32 = digits[..4].parse().ok()?;
    let month: u32 = digits[4..].parse().ok()?;
    let start = NaiveDate::from_ymd_opt(year, month, 1)?;
    let end = start.checked_add_months(Months::new(1))?;
    Some((Utc.from_utc_datetime(&start.and_hms_opt(0, 0, 0)?), Utc.from_utc_datetime(&end.and_hms_opt(0, 0, 0)?)))
}

/// The monthly partitions of the live log and the archive, oldest first.
pub async fn partitions(pool: &PgPool) -> Result<Vec<Partition>, Error> {
    let rows = sqlx::query(
        "SELECT child.relname::text AS name, parent.relname = 'actions_archive' AS archived,
                greatest(child.reltuples, 0)::int8 AS approx_rows
           FROM pg_inherits
           JOIN pg_class child ON child.oid = pg_inherits.inhrelid
           JOIN pg_class parent ON parent.oid = pg_inherits.inhparent
          WHERE parent.relname IN ('actions', 'actions_archive') AND child.relkind = 'r'",
    )
    .fetch_all(pool)
    .await?;
    let mut partitions = Vec::new();
    for row in rows {
        let name: String = row.try_get("name")?;
        if let Some((from, to)) = month_of(&name) {
            partitions.push(Partition {
                name,
                from,
                to,
                archived: row.try_get("archived")?,
                approx_rows: row.try_get("approx_rows")?,
            });
        }
    }
    partitions.sort_by(|left, right| left.from.cmp(&right.from).then(left.archived.cmp(&right.archived)));
    Ok(partitions)
}

/// Archives what ended before `archive_before` and drops archived data that
/// ended before `drop_before`. With `dry_run`, only reports.
pub async fn apply(
    pool: &PgPool,
    archive_before: DateTime<Utc>,
    drop_before: DateTime<Utc>,
    dry_run: bool,
) -> Result<RetentionOutcome, Error> {
    let mut outcome = RetentionOutcome::default();
    for partition in partitions(pool).await? {
        if !partition.archived && partition.to <= archive_before {
            if !dry_run {
                archive_partition(pool, &partition).await?;
            }
            outcome.archived.push(partition.name.clone());
        }
        if partition.to <= drop_before {
            if !dry_run {
                drop_partition(pool, &partition).await?;
            }
            outcome.dropped.push(partition.name);
        }
    }
    if dry_run {
        outcome.default_rows_archived =
            count(pool, "SELECT count(*) FROM actions_default WHERE occurred_at < $1", archive_before).await?;
        outcome.default_rows_dropped =
            count(pool, "SELECT count(*) FROM actions_archive_default WHERE occurred_at < $1", drop_before).await?;
    } else {
        outcome.default_rows_archived = sqlx::query(
            "WITH moved AS (DELETE FROM actions_default WHERE occurred_at < $1 RETURNING *)
             INSERT INTO actions_archive SELECT * FROM moved",
        )
        .bind(archive_before)
        .execute(pool)
        .await?
        .rows_affected();
        outcome.default_rows_dropped = sqlx::query("DELETE FROM actions_archive_default WHERE occurred_at < $1")
            .bind(drop_before)
            .execute(pool)
            .await?
            .rows_affected();
    }
    Ok(outcome)
}

async fn count(pool: &PgPool, statement: &'static str, before: DateTime<Utc>) -> Result<u64, Error> {
    let count: i64 = sqlx::query_scalar(statement).bind(before).fetch_one(pool).await?;
    Ok(count.max(0) as u64)
}

/// Partition names come from pg_class and match `actions_pYYYYMM`; quoting
/// keeps them inert all the same.
fn quoted(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

async fn archive_partition(pool: &PgPool, partition: &Partition) -> Result<(), Error> {
    let name = quoted(&partition.name);
    let mut transaction = pool.begin().await?;
    sqlx::query(sqlx::AssertSqlSafe(format!("ALTER TABLE actions DETACH PARTITION {name}")))
        .execute(&mut *transaction)
        .await?;
    // Rows of this month that sat in the archive's default partition would
    // make the attach fail; they belong in the partition.
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "WITH moved AS (DELETE FROM actions_archive_default WHERE occurred_at >= $1 AND occurred_at < $2 RETURNING *)
         INSERT INTO {name} SELECT * FROM moved"
    )))
    .bind(partition.from)
    .bind(partition.to)
    .execute(&mut *transaction)
    .await?;
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "ALTER TABLE actions_archive ATTACH PARTITION {name} FOR VALUES FROM ('{}') TO ('{}')",
        partition.from.to_rfc3339(),
        partition.to.to_rfc3339()
    )))
    .execute(&mut *transaction)
    .await?;
    transaction.commit().await?;
    Ok(())
}

async fn drop_partition(pool: &PgPool, partition: &Partition) -> Result<(), Error> {
    let name = quoted(&partition.name);
    let mut transaction = pool.begin().await?;
    let parent: String = sqlx::query_scalar(
        "SELECT parent.relname::text FROM pg_inherits
           JOIN pg_class child ON child.oid = pg_inherits.inhrelid
           JOIN pg_class parent ON parent.oid = pg_inherits.inhparent
          WHERE child.relname = $1",
    )
    .bind(&partition.name)
    .fetch_one(&mut *transaction)
    .await?;
    sqlx::query(sqlx::AssertSqlSafe(format!("ALTER TABLE {} DETACH PARTITION {name}", quoted(&parent))))
        .execute(&mut *transaction)
        .await?;
    sqlx::query(sqlx::AssertSqlSafe(format!("DROP TABLE {name}"))).execute(&mut *transaction).await?;
    transaction.commit().await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partition_names_give_their_month() {
        let (from, to) = month_of("actions_p202612").unwrap();
        assert_eq!(from.to_rfc3339(), "2026-12-01T00:00:00+00:00");
        assert_eq!(to.to_rfc3339(), "2027-01-01T00:00:00+00:00");
        assert_eq!(month_of("actions_default"), None);
        assert_eq!(month_of("actions_p2026"), None);
    }
}
