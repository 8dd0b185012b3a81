//! A project's own grouping masks (migration 0020).

use sqlx::{PgConnection, PgPool, Row as _};

use lore_types::Error;
use lore_types::qa::GroupingMask;

fn mask_from_row(row: &sqlx::postgres::PgRow) -> Result<GroupingMask, sqlx::Error> {
    Ok(GroupingMask {
        project: row.try_get("project")?,
        name: row.try_get("name")?,
        pattern: row.try_get("pattern")?,
        description: row.try_get("description")?,
        updated_by: row.try_get("updated_by")?,
        updated_at: row.try_get("updated_at")?,
    })
}

/// A project's masks by name: the order they apply in.
const PROJECT_MASKS: &str = "SELECT project, name, pattern, description, updated_by, updated_at
     FROM qa_grouping_masks WHERE project = $1 ORDER BY name";

/// The project's masks by name: the order they apply in.
pub async fn masks(connection: &mut PgConnection, project: &str) -> Result<Vec<GroupingMask>, Error> {
    let rows = sqlx::query(PROJECT_MASKS).bind(project).fetch_all(connection).await?;
    rows.iter().map(mask_from_row).collect::<Result<_, _>>().map_err(Error::from)
}

/// How a project's messages are read: its masks by name, and whether it is
/// read literally (migration 0035).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Reading {
    pub masks: Vec<GroupingMask>,
    pub literal: bool,
}

/// The project's reading: one row with no mask columns when it has no
/// mask, one row per mask otherwise.
const PROJECT_READING: &str = "SELECT p.read_literally_since IS NOT NULL AS literal,
         m.project, m.name, m.pattern, m.description, m.updated_by, m.updated_at
     FROM (SELECT $1::text AS name) wanted
     LEFT JOIN projects p ON p.name = wanted.name
     LEFT JOIN qa_grouping_masks m ON m.project = wanted.name
     ORDER BY m.name";

fn reading_from_rows(rows: &[sqlx::postgres::PgRow]) -> Result<Reading, Error> {
    let mut reading = Reading::default();
    for row in rows {
        reading.literal = row.try_get::<Option<bool>, _>("literal")?.unwrap_or(false);
        if row.try_get::<Option<String>, _>("name")?.is_some() {
            reading.masks.push(mask_from_row(row)?);
        }
    }
    Ok(reading)
}

/// How `project`'s messages are read now.
pub async fn reading(connection: &mut PgConnection, project: &str) -> Result<Reading, Error> {
    let rows = sqlx::query(PROJECT_READING).bind(project).fetch_all(connection).await?;
    reading_from_rows(&rows)
}

/// What a capture needs first, in one round trip: its project made sure
/// of, and how its messages are read. (A project the statement creates is
/// not in its own snapshot, and reads as every new project does.)
pub async fn ensure_project_with_reading(connection: &mut PgConnection, project: &str) -> Result<Reading, Error> {
    let statement =
        format!("WITH ensured AS (INSERT INTO projects (name) VALUES ($1) ON CONFLICT DO NOTHING) {PROJECT_READING}");
    let rows = sqlx::query(sqlx::AssertSqlSafe(statement)).bind(project).fetch_all(connection).await?;
    reading_from_rows(&rows)
}

/// Reads `project` literally from now on (since the first time it was so).
pub async fn read_literally(pool: &PgPool, project: &str) -> Result<(), Error> {
    sqlx::query("UPDATE projects SET read_literally_since = now() WHERE name = $1 AND read_literally_since IS NULL")
        .bind(project)
        .execute(pool)
        .await?;
    Ok(())
}

/// Adds or replaces a mask, the project's masks locked so two writers
/// cannot both add the last one allowed. `allowed` sees the masks the
/// project would hold; refusing leaves them as they were. True when the
/// mask is new.
pub async fn put_mask(
    pool: &PgPool,
    mask: &GroupingMask,
    allowed: impl FnOnce(&[GroupingMask]) -> Result<(), Error>,
) -> Result<(GroupingMask, bool), Error> {
    let mut transaction = pool.begin().await?;
    let put = put_mask_in(&mut transaction, mask, allowed).await?;
    transaction.commit().await?;
    Ok(put)
}

/// [`put_mask`] inside the caller's transaction, so accepting a proposal
/// adds the mask and closes the proposal together.
pub(crate) async fn put_mask_in(
    transaction: &mut PgConnection,
    mask: &GroupingMask,
    allowed: impl FnOnce(&[GroupingMask]) -> Result<(), Error>,
) -> Result<(GroupingMask, bool), Error> {
    crate::qa::ensure_project(&mut *transaction, &mask.project).await?;
    sqlx::query("SELECT pg_advisory_xact_lock(hashtextextended('qa_grouping_masks:' || $1, 0))")
        .bind(&mask.project)
        .execute(&mut *transaction)
        .await?;
    let mut after = masks(&mut *transaction, &mask.project).await?;
    let created = !after.iter().any(|existing| existing.name == mask.name);
    after.retain(|existing| existing.name != mask.name);
    after.push(mask.clone());
    after.sort_by(|left, right| left.name.cmp(&right.name));
    allowed(&after)?;
    let row = sqlx::query(
        "INSERT INTO qa_grouping_masks (project, name, pattern, description, updated_by)
         VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (project, name) DO UPDATE SET pattern = EXCLUDED.pattern,
             description = EXCLUDED.description, updated_by = EXCLUDED.updated_by, updated_at = now()
         RETURNING project, name, pattern, description, updated_by, updated_at",
    )
    .bind(&mask.project)
    .bind(&mask.name)
    .bind(&mask.pattern)
    .bind(&mask.description)
    .bind(&mask.updated_by)
    .fetch_one(&mut *transaction)
    .await?;
    Ok((mask_from_row(&row)?, created))
}

/// Removes a mask; false when there was none.
pub async fn delete_mask(pool: &PgPool, project: &str, name: &str) -> Result<bool, Error> {
    let deleted = sqlx::query("DELETE FROM qa_grouping_masks WHERE project = $1 AND name = $2")
        .bind(project)
        .bind(name)
        .execute(pool)
        .await?
        .rows_affected();
    Ok(deleted > 0)
}
