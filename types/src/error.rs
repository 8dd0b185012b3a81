//! What a request can fail with, for every layer under the handlers, and
//! its one mapping to `tonic::Status` (feature `grpc`, which only the
//! server turns on: the model knows no wire types otherwise).

#[cfg(feature = "grpc")]
use tonic::Status;

/// What a request can fail with. Messages are lowercase and name the field
/// or the thing, because clients show them to agents and people as they are.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The request is malformed; `field` is the proto field path.
    #[error("{field}: {reason}")]
    InvalidArgument { field: String, reason: String },
    /// The thing asked for does not exist in the caller's projects.
    #[error("{0} not found")]
    NotFound(String),
    /// The request conflicts with stored state (e.g. reusing a number).
    #[error("{0}")]
    AlreadyExists(String),
    /// The request is valid but the state does not allow it now.
    #[error("{0}")]
    FailedPrecondition(String),
    /// No token, or one that is unknown, expired or revoked.
    #[error("{0}")]
    Unauthenticated(String),
    /// The caller's token does not cover the project or the method.
    #[error("{0}")]
    PermissionDenied(String),
    /// A concurrent write conflicted; retrying the same request is safe.
    #[error("{0}")]
    Aborted(String),
    /// Temporarily unable to answer; the client should retry.
    #[error("{0}")]
    Unavailable(String),
    /// A limit was hit; the client may retry later.
    #[error("{0}")]
    ResourceExhausted(String),
    /// PostgreSQL failed or is unreachable.
    #[error("database error: {0}")]
    Database(#[from] sqlx::Error),
}

impl Error {
    pub fn invalid(field: impl Into<String>, reason: impl Into<String>) -> Self {
        Self::InvalidArgument { field: field.into(), reason: reason.into() }
    }
}

#[cfg(feature = "grpc")]
impl From<Error> for Status {
    fn from(error: Error) -> Self {
        match error {
            Error::InvalidArgument { .. } => Status::invalid_argument(error.to_string()),
            Error::NotFound(_) => Status::not_found(error.to_string()),
            Error::AlreadyExists(_) => Status::already_exists(error.to_string()),
            Error::FailedPrecondition(_) => Status::failed_precondition(error.to_string()),
            Error::Unauthenticated(_) => Status::unauthenticated(error.to_string()),
            Error::PermissionDenied(_) => Status::permission_denied(error.to_string()),
            Error::Aborted(_) => Status::aborted(error.to_string()),
            Error::Unavailable(_) => Status::unavailable(error.to_string()),
            Error::ResourceExhausted(_) => Status::resource_exhausted(error.to_string()),
            Error::Database(database_error) => database_status(database_error),
        }
    }
}

/// Database failures the repositories did not translate. Connection trouble
/// is UNAVAILABLE (clients retry); constraint violations that slipped past
/// validation are the client's input; the rest is INTERNAL and logged, with
/// no SQL detail leaked to the client.
#[cfg(feature = "grpc")]
fn database_status(error: sqlx::Error) -> Status {
    match &error {
        sqlx::Error::PoolTimedOut | sqlx::Error::PoolClosed | sqlx::Error::Io(_) | sqlx::Error::Tls(_) => {
            tracing::warn!(%error, "database unavailable");
            Status::unavailable("database unavailable, retry later")
        }
        // The connection was cut under the statement (server restart,
        // pg_terminate_backend, failover): nothing committed, retry.
        sqlx::Error::Database(db)
            if db
                .code()
                .is_some_and(|code| code.starts_with("08") || matches!(code.as_ref(), "57P01" | "57P02" | "57P03")) =>
        {
            tracing::warn!(%error, "database connection lost");
            Status::unavailable("database connection lost, retry later")
        }
        sqlx::Error::Database(db) => match db.code().as_deref() {
            Some(
                sqlstate::CHECK_VIOLATION | sqlstate::CHARACTER_NOT_IN_REPERTOIRE | sqlstate::UNTRANSLATABLE_CHARACTER,
            ) => Status::invalid_argument(format!("rejected by the database: {}", db.message())),
            Some(sqlstate::UNIQUE_VIOLATION) => Status::already_exists("already exists"),
            _ => {
                tracing::error!(%error, "database error");
                Status::internal("internal database error")
            }
        },
        _ => {
            tracing::error!(%error, "database error");
            Status::internal("internal database error")
        }
    }
}

/// SQLSTATE codes the repositories translate into domain errors.
pub mod sqlstate {
    pub const UNIQUE_VIOLATION: &str = "23505";
    pub const CHECK_VIOLATION: &str = "23514";
    pub const RESTRICT_VIOLATION: &str = "23001";
    pub const CHARACTER_NOT_IN_REPERTOIRE: &str = "22021";
    pub const UNTRANSLATABLE_CHARACTER: &str = "22P05";
}
