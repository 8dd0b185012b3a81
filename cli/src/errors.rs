//! What the command line says when something fails: one sentence that names
//! what is wrong. A gRPC status in the error's chain is read for its
//! message and its code (tonic's own rendering lists the code's enum name,
//! the details and the metadata, which no person needs to read).

use tonic::Code;

/// The error as one line: each context, then the cause, joined by ": ".
pub fn sentence(error: &anyhow::Error) -> String {
    let mut parts: Vec<String> = Vec::new();
    for cause in error.chain() {
        let status = cause.downcast_ref::<tonic::Status>();
        let part = status.map_or_else(|| cause.to_string(), status_sentence);
        // A context may already quote its cause in full.
        if !parts.last().is_some_and(|last| last.ends_with(&part)) {
            parts.push(part);
        }
        // What a status wraps is transport detail, not for the terminal.
        if status.is_some() {
            break;
        }
    }
    parts.join(": ")
}

/// A status as a sentence: the server's message, with what its code means
/// for the person at the terminal when the message alone does not say it.
fn status_sentence(status: &tonic::Status) -> String {
    let message = status.message().trim();
    let message = if message.is_empty() { "no reason given".to_owned() } else { message.to_owned() };
    match status.code() {
        Code::NotFound | Code::InvalidArgument | Code::AlreadyExists | Code::FailedPrecondition | Code::OutOfRange => {
            message
        }
        Code::Unauthenticated => format!("{message} (give a token with --token or LORE_TOKEN)"),
        Code::PermissionDenied => format!("{message} (this token's role or projects do not allow it)"),
        Code::Unavailable => format!("Lore is unavailable: {message}"),
        Code::DeadlineExceeded => format!("no answer in time: {message}"),
        Code::ResourceExhausted => format!("over a limit: {message}"),
        Code::Cancelled => format!("cancelled: {message}"),
        Code::Aborted => format!("aborted, try again: {message}"),
        Code::Unimplemented => format!("this server does not offer that: {message}"),
        Code::Ok | Code::Unknown | Code::Internal | Code::DataLoss => format!("the server failed: {message}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use anyhow::Context as _;

    #[test]
    fn a_status_reads_as_its_message_after_the_contexts() {
        let error = Err::<(), _>(tonic::Status::not_found("session 0190 not found"))
            .context("cannot log the action")
            .unwrap_err();
        assert_eq!(sentence(&error), "cannot log the action: session 0190 not found");
        let error = anyhow::Error::new(tonic::Status::permission_denied("project x is not in this token's projects"));
        assert_eq!(
            sentence(&error),
            "project x is not in this token's projects (this token's role or projects do not allow it)"
        );
        let error = anyhow::anyhow!("plain failure").context("while indexing");
        assert_eq!(sentence(&error), "while indexing: plain failure");
    }
}
