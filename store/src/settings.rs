//! The `settings` table (migration 0023): switches that override the
//! config while Lore runs.

use sqlx::PgPool;

/// The channel every change is notified on.
pub const CHANGE_CHANNEL: &str = "lore_settings";

/// Every setting stored, by key.
pub async fn load(pool: &PgPool) -> Result<Vec<(String, serde_json::Value)>, sqlx::Error> {
    sqlx::query_as("SELECT key, value FROM settings ORDER BY key").fetch_all(pool).await
}

/// Stores `value` under `key`, saying who changed it.
pub async fn put(pool: &PgPool, key: &str, value: &serde_json::Value, by: &str) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO settings (key, value, updated_by) VALUES ($1, $2, $3)
         ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, updated_at = now(), updated_by = EXCLUDED.updated_by",
    )
    .bind(key)
    .bind(value)
    .bind(by)
    .execute(pool)
    .await?;
    Ok(())
}
