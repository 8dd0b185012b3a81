//! API tokens: only their hashes are stored (see [`crate::auth`]).

use std::time::Duration;

use chrono::{DateTime, Utc};
use sqlx::postgres::PgRow;
use sqlx::{PgPool, Row as _};
use uuid::Uuid;

use crate::sqlstate;
use lore_types::Error;
use lore_types::scope::ProjectScope;
use lore_types::tokens::{Caller, Role};

/// A token to create.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewToken {
    pub name: String,
    pub role: Role,
    /// `None`: every project.
    pub projects: Option<Vec<String>>,
    pub expires_at: Option<DateTime<Utc>>,
}

/// A stored token, as `lore-server token list` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenInfo {
    pub token_id: Uuid,
    pub name: String,
    pub role: Role,
    pub projects: Option<Vec<String>>,
    pub created_at: DateTime<Utc>,
    pub expires_at: Option<DateTime<Utc>>,
    pub revoked_at: Option<DateTime<Utc>>,
    pub last_used_at: Option<DateTime<Utc>>,
}

/// A live token's caller, and how long until it expires.
#[derive(Debug, Clone)]
pub struct LiveToken {
    pub caller: Caller,
    pub expires_in: Option<Duration>,
}

fn role_from_row(row: &PgRow) -> Result<Role, sqlx::Error> {
    let role: String = row.try_get("role")?;
    role.parse().map_err(|_| sqlx::Error::ColumnDecode {
        index: "role".into(),
        source: format!("unknown role {role:?}").into(),
    })
}

const TOKEN_COLUMNS: &str = "token_id, name, role, CASE WHEN all_projects THEN NULL ELSE projects END AS projects, \
     created_at, expires_at, revoked_at, last_used_at";

fn token_from_row(row: &PgRow) -> Result<TokenInfo, sqlx::Error> {
    Ok(TokenInfo {
        token_id: row.try_get("token_id")?,
        name: row.try_get("name")?,
        role: role_from_row(row)?,
        projects: row.try_get("projects")?,
        created_at: row.try_get("created_at")?,
        expires_at: row.try_get("expires_at")?,
        revoked_at: row.try_get("revoked_at")?,
        last_used_at: row.try_get("last_used_at")?,
    })
}

pub async fn insert(pool: &PgPool, token: &NewToken, secret_hash: &[u8; 32]) -> Result<Uuid, Error> {
    let token_id = Uuid::now_v7();
    sqlx::query(
        "INSERT INTO api_tokens (token_id, name, role, projects, all_projects, token_hash, expires_at)
         VALUES ($1, $2, $3, coalesce($4, '{}'), $4 IS NULL, $5, $6)",
    )
    .bind(token_id)
    .bind(&token.name)
    .bind(<&str>::from(token.role))
    .bind(&token.projects)
    .bind(secret_hash.as_slice())
    .bind(token.expires_at)
    .execute(pool)
    .await
    .map_err(|error| match &error {
        sqlx::Error::Database(db) if db.code().as_deref() == Some(sqlstate::UNIQUE_VIOLATION) => {
            Error::AlreadyExists(format!("a live token named {} already exists", token.name))
        }
        _ => Error::Database(error),
    })?;
    Ok(token_id)
}

/// The live (not revoked, not expired) token with this hash, marking it
/// used. Called once per token per cache lifetime, not per request.
pub async fn find_live(pool: &PgPool, secret_hash: &[u8; 32]) -> Result<Option<LiveToken>, Error> {
    let row = sqlx::query(
        "UPDATE api_tokens SET last_used_at = now()
         WHERE token_hash = $1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())
         RETURNING token_id, name, role, CASE WHEN all_projects THEN NULL ELSE projects END AS projects,
                   extract(epoch FROM expires_at - now())::float8 AS expires_in_secs",
    )
    .bind(secret_hash.as_slice())
    .persistent(true)
    .fetch_optional(pool)
    .await?;
    let Some(row) = row else { return Ok(None) };
    let projects: Option<Vec<String>> = row.try_get("projects")?;
    let expires_in: Option<f64> = row.try_get("expires_in_secs")?;
    Ok(Some(LiveToken {
        caller: Caller {
            token_id: row.try_get("token_id")?,
            name: row.try_get("name")?,
            role: role_from_row(&row)?,
            scope: projects.map_or(ProjectScope::All, ProjectScope::only),
        },
        expires_in: expires_in.map(|secs| Duration::from_secs_f64(secs.max(0.0))),
    }))
}

/// Every token, newest first; revoked ones only when asked.
pub async fn list(pool: &PgPool, include_revoked: bool) -> Result<Vec<TokenInfo>, Error> {
    let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {TOKEN_COLUMNS} FROM api_tokens WHERE $1 OR revoked_at IS NULL ORDER BY created_at DESC, token_id DESC"
    )))
    .bind(include_revoked)
    .fetch_all(pool)
    .await?;
    rows.iter().map(token_from_row).collect::<Result<_, sqlx::Error>>().map_err(Error::from)
}

/// Revokes the live token with this id or name; returns it, or `NotFound`.
pub async fn revoke(pool: &PgPool, id_or_name: &str) -> Result<TokenInfo, Error> {
    let token_id = id_or_name.parse::<Uuid>().ok();
    let row = sqlx::query(sqlx::AssertSqlSafe(format!(
        "UPDATE api_tokens SET revoked_at = now()
         WHERE revoked_at IS NULL AND (token_id = $1 OR ($1 IS NULL AND name = $2))
         RETURNING {TOKEN_COLUMNS}"
    )))
    .bind(token_id)
    .bind(id_or_name)
    .fetch_optional(pool)
    .await?;
    let row = row.ok_or_else(|| Error::NotFound(format!("live token {id_or_name}")))?;
    Ok(token_from_row(&row)?)
}

/// Revokes the live token of this name if there is one.
pub async fn revoke_by_name(pool: &PgPool, name: &str) -> Result<(), Error> {
    sqlx::query("UPDATE api_tokens SET revoked_at = now() WHERE revoked_at IS NULL AND name = $1")
        .bind(name)
        .execute(pool)
        .await?;
    Ok(())
}
