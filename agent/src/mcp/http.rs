//! MCP over streamable HTTP at `/mcp`, as lore-sidecar serves it
//! (`--mcp-listen`), for clients that connect to a URL rather than launch a
//! command.
//!
//! On loopback it is open to the processes of the machine, like the
//! sidecar's gRPC port, and checks the `Host` header against DNS
//! rebinding. Bound anywhere else it requires `Authorization: Bearer
//! <token>` on every request; the token then protects it, and the `Host`
//! check (which would need every name the machine is reached by) is off.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;

use super::LoreMcp;
use crate::AgentError;

/// The path of the MCP endpoint.
pub const PATH: &str = "/mcp";

/// Where and how the endpoint is served.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    pub listen: SocketAddr,
    /// Required when `listen` is not a loopback address.
    pub token: Option<String>,
}

impl HttpOptions {
    /// Refuses an address anyone can reach without a token.
    pub fn check(&self) -> Result<(), AgentError> {
        if !self.listen.ip().is_loopback() && self.token.as_deref().is_none_or(|token| token.trim().len() < 16) {
            return Err(AgentError::Setup(format!(
                "--mcp-listen {} is reachable from other machines: give --mcp-token (at least 16 characters) \
                 so only clients with it are served",
                self.listen
            )));
        }
        Ok(())
    }
}

/// The `/mcp` route with its token check.
pub fn router(mcp: LoreMcp, options: &HttpOptions) -> axum::Router {
    let mut config = StreamableHttpServerConfig::default();
    if !options.listen.ip().is_loopback() {
        config = config.disable_allowed_hosts();
    }
    let service = StreamableHttpService::new(move || Ok(mcp.clone()), Arc::new(LocalSessionManager::default()), config);
    let router = axum::Router::new().route_service(PATH, service);
    match options.token.as_deref().map(str::trim).filter(|token| !token.is_empty()) {
        Some(token) => router.layer(middleware::from_fn_with_state(Arc::new(blake3::hash(token.as_bytes())), bearer)),
        None => router,
    }
}

/// Lets a request through only with the token (compared as BLAKE3 hashes,
/// whose equality is constant-time).
async fn bearer(State(expected): State<Arc<blake3::Hash>>, request: Request, next: Next) -> Response {
    let given = request
        .headers()
        .get(::http::header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "))
        .map(|token| blake3::hash(token.trim().as_bytes()));
    if given.as_ref() == Some(expected.as_ref()) {
        return next.run(request).await;
    }
    (
        ::http::StatusCode::UNAUTHORIZED,
        [(::http::header::WWW_AUTHENTICATE, "Bearer")],
        "this MCP endpoint needs Authorization: Bearer <the sidecar's --mcp-token>\n",
    )
        .into_response()
}

/// Serves until `shutdown` resolves.
pub async fn serve(
    listener: TcpListener,
    mcp: LoreMcp,
    options: &HttpOptions,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    axum::serve(listener, router(mcp, options)).with_graceful_shutdown(shutdown).await
}
