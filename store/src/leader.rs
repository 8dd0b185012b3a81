//! The leader lock: a session-level advisory lock, held on a connection of
//! its own (not the pool's, which would hand it to other work), whose
//! holder runs the jobs every replica could run.

use sqlx::{Connection as _, PgConnection, PgPool};

/// A held leader lock; dropping it closes the connection, which releases
/// the lock (if PostgreSQL has not already).
pub struct LeaderLock {
    connection: PgConnection,
}

impl LeaderLock {
    /// The lock `name` when this process got it; `None` when another holds
    /// it.
    pub async fn try_take(pool: &PgPool, name: &str) -> Result<Option<Self>, sqlx::Error> {
        let mut connection = PgConnection::connect_with(&pool.connect_options()).await?;
        let locked: bool = sqlx::query_scalar("SELECT pg_try_advisory_lock(hashtextextended($1, 0))")
            .bind(name)
            .fetch_one(&mut connection)
            .await?;
        if locked {
            Ok(Some(Self { connection }))
        } else {
            let _ = connection.close().await;
            Ok(None)
        }
    }

    /// Whether the lock's connection still answers: once it does not,
    /// another replica may lead.
    pub async fn alive(&mut self) -> Result<(), sqlx::Error> {
        sqlx::query("SELECT 1").execute(&mut self.connection).await.map(drop)
    }
}
