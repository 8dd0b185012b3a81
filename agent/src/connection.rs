//! How an agent reaches Lore.
//!
//! Through the local sidecar when one runs: it spools writes on disk and
//! answers once they are durable, so what an agent records survives a VM
//! that has lost the server, and it proxies reads with its own token, so
//! the agent's machine holds the token in one place. When no sidecar
//! answers, straight to the server, with `LORE_TOKEN` (or the token a local
//! dev server wrote). Which of the two is decided by trying the sidecar
//! first: on loopback a sidecar that is not running refuses at once.

use std::time::Duration;

use lore_proto::auth::{AuthChannel, Bearer};
use lore_proto::tls::TlsFiles;
use lore_proto::v1::action_service_client::ActionServiceClient;
use lore_proto::v1::agent_service_client::AgentServiceClient;
use lore_proto::v1::knowledge_service_client::KnowledgeServiceClient;
use lore_proto::v1::qa_learning_service_client::QaLearningServiceClient;
use tonic::service::interceptor::InterceptedService;

use crate::AgentError;

/// The sidecar's default local address.
pub const DEFAULT_SIDECAR: &str = "http://127.0.0.1:50052";
pub const DEFAULT_SERVER: &str = "http://127.0.0.1:50051";

/// Where Lore is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoreAddress {
    pub server: String,
    /// `None`: never try a sidecar.
    pub sidecar: Option<String>,
    /// The agent's own token, if it has one.
    pub token: Option<String>,
    /// TLS to the server (the sidecar is on loopback, plaintext).
    pub tls: TlsFiles,
}

impl Default for LoreAddress {
    fn default() -> Self {
        Self {
            server: DEFAULT_SERVER.into(),
            sidecar: Some(DEFAULT_SIDECAR.into()),
            token: None,
            tls: TlsFiles::default(),
        }
    }
}

/// Which way a connection goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    Sidecar(String),
    Server(String),
}

impl Route {
    /// True when writes are spooled on this machine before they reach the
    /// server.
    pub fn spools(&self) -> bool {
        matches!(self, Self::Sidecar(_))
    }
}

impl std::fmt::Display for Route {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Sidecar(address) => write!(formatter, "the sidecar at {address}"),
            Self::Server(address) => write!(formatter, "the server at {address}"),
        }
    }
}

/// A connection to Lore, one way or the other.
#[derive(Debug, Clone)]
pub struct Connection {
    channel: AuthChannel,
    pub route: Route,
}

impl LoreAddress {
    /// Connects to the sidecar, or to the server when no sidecar answers
    /// within `timeout`. `client` is what Lore records the writes as coming
    /// through (`hook`, `mcp`).
    pub async fn connect(&self, timeout: Duration, client: &'static str) -> Result<Connection, AgentError> {
        let bearer = |token: Option<&str>| {
            Bearer::new(token)
                .map(|bearer| bearer.with_client(client))
                .map_err(|error| AgentError::Setup(format!("LORE_TOKEN is not usable: {error}")))
        };
        let mut tried = Vec::new();
        if let Some(sidecar) = &self.sidecar {
            match connect(sidecar, &TlsFiles::default(), timeout).await {
                Ok(channel) => {
                    let channel = InterceptedService::new(channel, bearer(self.token.as_deref())?);
                    return Ok(Connection { channel, route: Route::Sidecar(sidecar.clone()) });
                }
                Err(error) => tried.push(format!("no sidecar at {sidecar}: {error}")),
            }
        }
        let token = lore_proto::auth::token_for(&self.server, self.token.as_deref());
        match connect(&self.server, &self.tls, timeout).await {
            Ok(channel) => {
                let channel = InterceptedService::new(channel, bearer(token.as_deref())?);
                Ok(Connection { channel, route: Route::Server(self.server.clone()) })
            }
            Err(error) => {
                tried.push(format!("no server at {}: {error}", self.server));
                Err(AgentError::Unreachable(tried.join("; ")))
            }
        }
    }
}

async fn connect(address: &str, tls: &TlsFiles, timeout: Duration) -> Result<tonic::transport::Channel, String> {
    let endpoint = lore_proto::tls::endpoint(address, tls).map_err(|error| error.to_string())?;
    let endpoint = endpoint.connect_timeout(timeout).timeout(Duration::from_secs(30));
    match tokio::time::timeout(timeout, endpoint.connect()).await {
        Ok(Ok(channel)) => Ok(channel),
        Ok(Err(error)) => Err(match std::error::Error::source(&error) {
            Some(cause) => cause.to_string(),
            None => error.to_string(),
        }),
        Err(_) => Err(format!("no answer within {} ms", timeout.as_millis())),
    }
}

impl Connection {
    /// The channel itself, for clients of services this type has no
    /// method for.
    pub fn channel(&self) -> AuthChannel {
        self.channel.clone()
    }

    pub fn actions(&self) -> ActionServiceClient<AuthChannel> {
        lore_proto::client::actions(self.channel.clone())
    }

    pub fn knowledge(&self) -> KnowledgeServiceClient<AuthChannel> {
        lore_proto::client::knowledge(self.channel.clone())
    }

    pub fn qa(&self) -> QaLearningServiceClient<AuthChannel> {
        lore_proto::client::qa(self.channel.clone())
    }

    pub fn agent(&self) -> AgentServiceClient<AuthChannel> {
        lore_proto::client::agent(self.channel.clone())
    }
}
