//! lore-store: PostgreSQL access, the one place Lore speaks SQL: the pool,
//! the migrations, the read replicas and one repository module per
//! aggregate, over lore-types's types. Every repository function takes the
//! caller's project scope so that tenancy is enforced in SQL.

use std::time::Duration;

use sqlx::PgPool;
use sqlx::migrate::{MigrateError, Migrator};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

pub mod actions;
pub mod briefing;
mod config;
pub mod console;
pub mod injections;
pub mod knowledge;
pub mod leader;
pub mod qa;
pub mod replicas;
pub mod reports;
pub mod settings;
pub mod tokens;
pub mod trust;

/// The migrations in `migrations/`, embedded in the binary. sqlx records what
/// it applied in `_sqlx_migrations` and holds an advisory lock while
/// migrating, so running it twice, or from two replicas at once, is safe.
pub static MIGRATOR: Migrator = sqlx::migrate!("../migrations");

/// Why the database could not be reached at start-up.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    #[error("invalid database_url: {0}")]
    InvalidUrl(sqlx::Error),
    #[error("cannot connect to PostgreSQL at {target}: {source}")]
    Unreachable { target: String, source: sqlx::Error },
}

/// Opens the pool and checks that the server answers within the configured
/// timeout, so a wrong URL fails the start-up instead of the first call.
pub async fn connect(config: &DatabaseConfig, url: &str) -> Result<PgPool, ConnectError> {
    let options = named(url.parse().map_err(ConnectError::InvalidUrl)?);
    let target = format!("{}:{}/{}", options.get_host(), options.get_port(), options.get_database().unwrap_or(""));
    PgPoolOptions::new()
        .max_connections(config.max_connections)
        .acquire_timeout(config.connect_timeout())
        .idle_timeout(Duration::from_secs(300))
        .connect_with(options)
        .await
        .map_err(|source| ConnectError::Unreachable { target, source })
}

/// The `application_name` the server's connections carry unless their URL
/// names one: `pg_stat_activity` tells them from other clients'.
pub const APPLICATION_NAME: &str = "lore-server";

fn named(options: PgConnectOptions) -> PgConnectOptions {
    match options.get_application_name() {
        Some(_) => options,
        None => options.application_name(APPLICATION_NAME),
    }
}

/// Applies pending migrations, then makes sure the action log has partitions
/// for the coming months.
pub async fn migrate(pool: &PgPool) -> Result<(), MigrateError> {
    MIGRATOR.run(pool).await?;
    ensure_action_partitions(pool).await.map_err(MigrateError::Execute)?;
    Ok(())
}

/// Creates the monthly action partitions from last month to three months
/// ahead (a no-op for those that exist). Run at start-up and by maintenance.
pub async fn ensure_action_partitions(pool: &PgPool) -> Result<(), sqlx::Error> {
    sqlx::query("SELECT lore_ensure_action_partitions()").execute(pool).await?;
    Ok(())
}

pub use config::DatabaseConfig;
pub use lore_types::error::sqlstate;

#[cfg(test)]
mod tests;
