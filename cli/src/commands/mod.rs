//! The subcommands by area (actions, knowledge, QA, trust, agents), one
//! module each with its `Args` (clap) and `run`; `lore eval` is the
//! lore-eval crate's.

pub mod actions;
pub mod agents;
pub mod display;
pub mod knowledge;
pub mod qa;
pub mod trust;

use std::time::Duration;

use lore_agent::connection::LoreAddress;

use lore_proto::v1::action_service_client::ActionServiceClient;
use lore_proto::v1::knowledge_service_client::KnowledgeServiceClient;

/// How long the CLI waits for the server to accept a connection.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// A connection to lore-server whose every call carries the bearer token.
pub type Channel = lore_proto::auth::AuthChannel;

/// Connects with `token`, or, when none is given and the server is on this
/// machine, with the token a dev-mode server (`make run`) wrote in the
/// current directory: the way every Lore client connects, with no sidecar.
/// How long a command gives the outbox before its own work.
const OUTBOX_BUDGET: std::time::Duration = std::time::Duration::from_secs(10);

pub async fn connect(server: &str, token: Option<&str>, tls: &lore_proto::tls::TlsFiles) -> anyhow::Result<Channel> {
    let address =
        LoreAddress { server: server.to_owned(), sidecar: None, token: token.map(str::to_owned), tls: tls.clone() };
    // The error says what was tried ("no server at ...: connection refused").
    let channel = address.connect(CONNECT_TIMEOUT, "cli").await?.channel();
    send_outbox(&channel).await;
    Ok(channel)
}

/// Sends what this machine's hooks kept while Lore was away, before the
/// command runs: a command that reads the log then finds it there.
async fn send_outbox(channel: &Channel) {
    let outbox = lore_agent::outbox::Outbox::local();
    if outbox.is_empty() {
        return;
    }
    let deadline = tokio::time::Instant::now() + OUTBOX_BUDGET;
    match outbox.drain(channel, deadline).await {
        Ok(drained) if drained.delivered + drained.rejected > 0 || drained.waiting => eprintln!(
            "lore: sent {} writes kept on this machine (by the hooks and the MCP server) while Lore was away{}{}.",
            drained.delivered,
            if drained.rejected > 0 {
                format!("; {} were refused (see outbox-rejects.jsonl in the state directory)", drained.rejected)
            } else {
                String::new()
            },
            if drained.waiting { "; the rest waits for the next command" } else { "" }
        ),
        Ok(_) => {}
        Err(error) => eprintln!("lore: {error}"),
    }
}

pub fn actions_client(channel: Channel) -> ActionServiceClient<Channel> {
    lore_proto::client::actions(channel)
}

pub fn knowledge_client(channel: Channel) -> KnowledgeServiceClient<Channel> {
    lore_proto::client::knowledge(channel)
}
