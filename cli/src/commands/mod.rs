//! One module per subcommand; each has `Args` (clap) and `run`.

pub mod actions_search;
pub mod display;
pub mod drafts;
pub mod embedding_progress;
pub mod entry;
pub mod eval;
pub mod export;
pub mod grouping;
pub mod grouping_sources;
pub mod index;
pub mod init;
pub mod injections;
pub mod knowledge_display;
pub mod knowledge_search;
pub mod leave_one_out;
pub mod log;
pub mod mcp;
pub mod qa;
pub mod qa_masks;
pub mod qa_results;
pub mod quarantine;
pub mod redaction_samples;
pub mod redaction_sources;
pub mod report;
pub mod resume;
pub mod retrieval;
pub mod screening;
pub mod session;
pub mod sidecar_status;
pub mod triage;
pub mod vocabulary;

use anyhow::Context as _;
use lore_proto::auth::Bearer;
use tonic::service::interceptor::InterceptedService;

use lore_proto::v1::action_service_client::ActionServiceClient;
use lore_proto::v1::knowledge_service_client::KnowledgeServiceClient;

/// Messages up to this size in either direction (exports and resumes can be
/// large).
const MAX_MESSAGE_BYTES: usize = 64 * 1024 * 1024;

/// A connection to lore-server whose every call carries the bearer token.
pub type Channel = lore_proto::auth::AuthChannel;

/// Connects with `token`, or, when none is given and the server is on this
/// machine, with the token a dev-mode server (`make run`) wrote in the
/// current directory.
pub async fn connect(server: &str, token: Option<&str>, tls: &lore_proto::tls::TlsFiles) -> anyhow::Result<Channel> {
    let dev_token = match token {
        Some(_) => None,
        None => std::env::current_dir().ok().and_then(|dir| lore_proto::auth::dev_token(server, &dir)),
    };
    let bearer = Bearer::new(token.or(dev_token.as_deref())).context("--token")?.with_client("cli");
    let channel = lore_proto::tls::endpoint(server, tls)?
        .connect()
        .await
        .with_context(|| format!("cannot reach lore-server at {server}"))?;
    Ok(InterceptedService::new(channel, bearer))
}

pub fn actions_client(channel: Channel) -> ActionServiceClient<Channel> {
    ActionServiceClient::new(channel)
        .max_decoding_message_size(MAX_MESSAGE_BYTES)
        .max_encoding_message_size(MAX_MESSAGE_BYTES)
}

pub fn knowledge_client(channel: Channel) -> KnowledgeServiceClient<Channel> {
    KnowledgeServiceClient::new(channel)
        .max_decoding_message_size(MAX_MESSAGE_BYTES)
        .max_encoding_message_size(MAX_MESSAGE_BYTES)
}
