//! The crate's error. Every message is a sentence a model or a person can
//! act on: it says what went wrong and, for bad input, names the field.

use tonic::Code;

#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    /// Neither the sidecar nor the server could be reached (or the server
    /// behind the sidecar, for a read).
    #[error(
        "Lore is unreachable ({0}). Carry on without it; what you record is kept and sent when it is back if a sidecar runs."
    )]
    Unreachable(String),
    /// The input names a field that is missing or wrong.
    #[error("{field}: {reason}")]
    InvalidArgument { field: String, reason: String },
    /// Lore understood the request and refused it.
    #[error("Lore refused the request: {0}")]
    Refused(String),
    /// A configuration or file the command needs is wrong.
    #[error("{0}")]
    Setup(String),
}

impl AgentError {
    pub fn invalid(field: impl Into<String>, reason: impl Into<String>) -> Self {
        Self::InvalidArgument { field: field.into(), reason: reason.into() }
    }

    /// True when the error says nothing about the request itself: trying
    /// another way to Lore may work.
    pub fn is_unreachable(&self) -> bool {
        matches!(self, Self::Unreachable(_))
    }
}

impl From<tonic::Status> for AgentError {
    fn from(status: tonic::Status) -> Self {
        match status.code() {
            // The server's messages start with the field ("task.title: ...").
            Code::InvalidArgument => match status.message().split_once(": ") {
                Some((field, reason)) if !field.contains(' ') => Self::invalid(field, reason),
                _ => Self::Refused(status.message().to_owned()),
            },
            Code::Unavailable | Code::DeadlineExceeded | Code::Cancelled | Code::Unknown => {
                Self::Unreachable(status.message().to_owned())
            }
            Code::NotFound => Self::Refused(format!("{} (not found)", status.message())),
            Code::Unauthenticated | Code::PermissionDenied => Self::Refused(format!(
                "{} (set LORE_TOKEN, or give the sidecar a token with the agent role)",
                status.message()
            )),
            _ => Self::Refused(status.message().to_owned()),
        }
    }
}
