//! A project's guards and their switch (migration 0025).

use sqlx::postgres::PgRow;
use sqlx::{PgPool, Row as _};
use uuid::Uuid;

use lore_types::Error;
use lore_types::qa::guards::{CallWarningMode, Guard, Guards};

fn guard_from_row(row: &PgRow) -> Result<Guard, sqlx::Error> {
    Ok(Guard {
        guard_id: row.try_get("guard_id")?,
        project: row.try_get("project")?,
        shape: row.try_get("shape")?,
        reason: row.try_get("reason")?,
        alternative: row.try_get("alternative")?,
        created_by: row.try_get("created_by")?,
        created_at: row.try_get("created_at")?,
    })
}

const COLUMNS: &str = "guard_id, project, shape, reason, alternative, created_by, created_at";

/// The project's guards by shape, its switch (off when never set) and
/// its call warning mode (deny once when never set).
pub async fn guards(pool: &PgPool, project: &str) -> Result<Guards, Error> {
    let statement = format!("SELECT {COLUMNS} FROM qa_guards WHERE project = $1 ORDER BY shape");
    let (rows, enabled, mode) = tokio::try_join!(
        sqlx::query(sqlx::AssertSqlSafe(statement)).bind(project).fetch_all(pool),
        sqlx::query_scalar::<_, bool>("SELECT enabled FROM qa_guard_switches WHERE project = $1")
            .bind(project)
            .fetch_optional(pool),
        sqlx::query_scalar::<_, String>("SELECT mode FROM qa_call_warning_modes WHERE project = $1")
            .bind(project)
            .fetch_optional(pool),
    )?;
    let guards = rows.iter().map(guard_from_row).collect::<Result<_, _>>()?;
    // The table's CHECK admits only the names `parse` reads.
    let call_warnings = mode.as_deref().and_then(CallWarningMode::parse).unwrap_or_default();
    Ok(Guards { enabled: enabled.unwrap_or(false), guards, call_warnings })
}

/// Sets how the project's agents are warned at the call.
pub async fn set_call_warning_mode(pool: &PgPool, project: &str, mode: CallWarningMode, by: &str) -> Result<(), Error> {
    sqlx::query(
        "WITH project AS (INSERT INTO projects (name) VALUES ($1) ON CONFLICT DO NOTHING)
         INSERT INTO qa_call_warning_modes (project, mode, updated_by) VALUES ($1, $2, $3)
         ON CONFLICT (project) DO UPDATE SET mode = EXCLUDED.mode, updated_by = EXCLUDED.updated_by,
             updated_at = now()",
    )
    .bind(project)
    .bind(mode.as_str())
    .bind(by)
    .execute(pool)
    .await?;
    Ok(())
}

/// Adds the guard, or replaces the project's guard of the same shape
/// (keeping its id).
pub async fn put(pool: &PgPool, guard: &Guard) -> Result<Guard, Error> {
    let statement = format!(
        "WITH project AS (INSERT INTO projects (name) VALUES ($2) ON CONFLICT DO NOTHING)
         INSERT INTO qa_guards ({COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7)
         ON CONFLICT (project, shape) DO UPDATE SET reason = EXCLUDED.reason, alternative = EXCLUDED.alternative,
             created_by = EXCLUDED.created_by, created_at = EXCLUDED.created_at
         RETURNING {COLUMNS}"
    );
    let row = sqlx::query(sqlx::AssertSqlSafe(statement))
        .bind(guard.guard_id)
        .bind(&guard.project)
        .bind(&guard.shape)
        .bind(&guard.reason)
        .bind(&guard.alternative)
        .bind(&guard.created_by)
        .bind(guard.created_at)
        .fetch_one(pool)
        .await?;
    Ok(guard_from_row(&row)?)
}

/// Removes a guard; false when the project had none by that id.
pub async fn remove(pool: &PgPool, project: &str, guard_id: Uuid) -> Result<bool, Error> {
    let removed = sqlx::query("DELETE FROM qa_guards WHERE project = $1 AND guard_id = $2")
        .bind(project)
        .bind(guard_id)
        .execute(pool)
        .await?
        .rows_affected();
    Ok(removed > 0)
}

/// Sets the project's switch.
pub async fn set_enabled(pool: &PgPool, project: &str, enabled: bool, by: &str) -> Result<(), Error> {
    sqlx::query(
        "WITH project AS (INSERT INTO projects (name) VALUES ($1) ON CONFLICT DO NOTHING)
         INSERT INTO qa_guard_switches (project, enabled, updated_by) VALUES ($1, $2, $3)
         ON CONFLICT (project) DO UPDATE SET enabled = EXCLUDED.enabled, updated_by = EXCLUDED.updated_by,
             updated_at = now()",
    )
    .bind(project)
    .bind(enabled)
    .bind(by)
    .execute(pool)
    .await?;
    Ok(())
}
