//! The life of a sidecar, as the server's `app.rs` holds the server's:
//! [`Sidecar::start`] binds its ports, recovers the spool and starts what
//! runs beside the calls (shipping, the inbox, the watched folders,
//! metrics); [`Sidecar::serve`] serves the local gRPC services and the MCP
//! endpoint until the shutdown signal, then ships what it can within the
//! grace period and closes the spool.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use tokio::sync::watch;
use tonic::transport::Server;

use lore_proto::v1::action_service_server::ActionServiceServer;
use lore_proto::v1::agent_service_server::AgentServiceServer;
use lore_proto::v1::knowledge_service_server::KnowledgeServiceServer;
use lore_proto::v1::qa_learning_service_server::QaLearningServiceServer;
use lore_spool::{Spool, SpoolConfig};

use crate::{
    KEEPALIVE_INTERVAL, SidecarConfig, api, folders, inbox, learning_api, metrics, personal_data, ship, status,
};

/// The local services a sidecar serves.
struct Services {
    local: api::LocalApi,
    learning: learning_api::LearningApi,
    status: status::StatusApi,
}

/// What runs beside the calls, stopped in order at the end.
struct Background {
    stop_shipping: watch::Sender<bool>,
    shipper: tokio::task::JoinHandle<()>,
    inbox: Option<inbox::InboxTail>,
    folder_watch: Option<folders::FolderWatch>,
    metrics: Option<metrics::MetricsGuard>,
}

/// A started sidecar: its ports bound, its spool open, shipping.
pub struct Sidecar {
    config: SidecarConfig,
    listener: tokio::net::TcpListener,
    mcp: Option<(lore_agent::mcp::http::HttpOptions, tokio::net::TcpListener)>,
    spool: Arc<Spool>,
    services: Services,
    background: Background,
}

impl Sidecar {
    /// Binds the gRPC (and MCP) ports, recovers the spool, and starts
    /// shipping, the inbox, the watched folders and the metrics export.
    pub async fn start(config: SidecarConfig) -> anyhow::Result<Self> {
        let listener = tokio::net::TcpListener::bind(config.listen)
            .await
            .with_context(|| format!("cannot listen on {}", config.listen))?;
        let mcp = bind_mcp(&config).await?;
        let spool = Arc::new(open_spool(&config).await?);

        let (stop_shipping, stop_rx) = watch::channel(false);
        let stats = Arc::new(ship::ShipStats::default());
        let bearer = lore_proto::auth::Bearer::new(config.token.as_deref()).context("--token")?.with_client("sidecar");
        // A partition that drops packets without a reset would hold the Ingest
        // stream open forever; HTTP/2 pings find the dead connection instead.
        let endpoint = lore_proto::tls::endpoint(&config.server, &config.tls.files())?
            .http2_keep_alive_interval(KEEPALIVE_INTERVAL)
            .keep_alive_timeout(KEEPALIVE_INTERVAL)
            .keep_alive_while_idle(true);
        let ship_config = ship::ShipConfig {
            server: config.server.clone(),
            endpoint: endpoint.clone(),
            bearer: bearer.clone(),
            batch_size: config.batch_size.clamp(1, 1000),
            linger: Duration::from_millis(config.linger_ms),
            max_in_flight: config.max_in_flight.max(1),
            initial_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(10),
            rejects_file: config.spool_dir.join("rejects.jsonl"),
        };
        let sanitizer = lore_sanitize::Sanitizer::new(lore_sanitize::SanitizeConfig {
            personal: personal_data(&config.keep_personal),
            ..lore_sanitize::SanitizeConfig::default()
        });
        let inbox_stats = Arc::new(inbox::InboxStats::default());
        let inbox = match &config.inbox {
            Some(path) => Some(
                inbox::InboxTail::start(
                    inbox::InboxConfig::new(path, &config.spool_dir),
                    Arc::clone(&spool),
                    sanitizer.clone(),
                    Arc::clone(&inbox_stats),
                )
                .with_context(|| format!("cannot tail the inbox {}", path.display()))?,
            ),
            None => None,
        };
        // Shipping starts once the inbox has recovered its position from the
        // spool's records, so no acknowledgement can retire them first.
        let shipper = tokio::spawn(ship::run(Arc::clone(&spool), ship_config, Arc::clone(&stats), stop_rx));
        let folder_stats = Arc::new(folders::FolderStats::default());
        let folder_watch = watch_folders(&config, &spool, &folder_stats).await?;
        let figures = Arc::new(status::Figures {
            spool: Arc::clone(&spool),
            ship: stats,
            inbox: inbox_stats,
            folders: folder_stats,
            server: config.server.clone(),
        });
        let metrics = match &config.otlp_endpoint {
            Some(endpoint) => Some(metrics::export(
                endpoint,
                Duration::from_secs(config.metrics_interval_secs.max(1)),
                Arc::clone(&figures),
            )?),
            None => None,
        };
        let status = status::StatusApi { figures };
        let server_channel =
            tonic::service::interceptor::InterceptedService::new(endpoint.connect_lazy(), bearer.clone());
        let learning = learning_api::LearningApi::new(Arc::clone(&spool), sanitizer.clone(), server_channel.clone());
        let local = api::LocalApi::new(Arc::clone(&spool), sanitizer, server_channel);
        Ok(Self {
            config,
            listener,
            mcp,
            spool,
            services: Services { local, learning, status },
            background: Background { stop_shipping, shipper, inbox, folder_watch, metrics },
        })
    }

    /// The address the local gRPC services listen on.
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Serves until `shutdown` resolves, then stops accepting, ships for up
    /// to the grace period, and closes the spool.
    pub async fn serve(self, shutdown: impl Future<Output = ()> + Send + 'static) -> anyhow::Result<()> {
        let Self { config, listener, mcp, spool, services, background } = self;
        let (health_reporter, health_service) = tonic_health::server::health_reporter();
        health_reporter.set_service_status("", tonic_health::ServingStatus::Serving).await;
        let local_addr = listener.local_addr()?;
        // The shutdown reaches the gRPC server and the MCP endpoint both.
        let (stopping_tx, stopping) = watch::channel(false);
        tokio::spawn(async move {
            shutdown.await;
            let _ = stopping_tx.send(true);
        });
        let until_stopping = |mut stopping: watch::Receiver<bool>| async move {
            let _ = stopping.wait_for(|stop| *stop).await;
        };
        let mcp_server = match mcp {
            Some((options, mcp_listener)) => {
                let mcp = mcp_for_this_sidecar(&config, local_addr);
                tracing::info!(addr = %mcp_listener.local_addr()?, "lore-sidecar serving MCP at /mcp");
                let stop = until_stopping(stopping.clone());
                Some(tokio::spawn(async move { lore_agent::mcp::http::serve(mcp_listener, mcp, &options, stop).await }))
            }
            None => None,
        };
        tracing::info!(addr = %local_addr, "lore-sidecar serving");
        tokio::spawn(take_in_outbox(own_address(&config, local_addr)));
        Server::builder()
            .add_service(health_service)
            .add_service(ActionServiceServer::new(services.local))
            .add_service(QaLearningServiceServer::new(services.learning.clone()))
            .add_service(KnowledgeServiceServer::new(services.learning.clone()))
            .add_service(AgentServiceServer::new(services.learning))
            .add_service(lore_proto::v1::sidecar_service_server::SidecarServiceServer::new(services.status))
            .serve_with_incoming_shutdown(
                // Without it, a short-lived client (a hook process) waits out
                // Nagle and a delayed ACK (40 ms) on its few small messages.
                tonic::transport::server::TcpIncoming::from(listener).with_nodelay(Some(true)),
                until_stopping(stopping.clone()),
            )
            .await?;
        if let Some(mcp_server) = mcp_server {
            match mcp_server.await {
                Ok(Ok(())) => {}
                Ok(Err(error)) => tracing::warn!(%error, "the MCP endpoint stopped with an error"),
                Err(error) => tracing::warn!(%error, "the MCP endpoint task failed"),
            }
        }

        let Background { stop_shipping, shipper, inbox, folder_watch, metrics } = background;
        if let Some(inbox) = inbox {
            tokio::task::spawn_blocking(move || inbox.stop()).await?;
        }
        drop(folder_watch);
        tracing::info!("lore-sidecar stopping: shipping what is spooled");
        let _ = stop_shipping.send(true);
        if tokio::time::timeout(Duration::from_secs(config.shutdown_grace_secs), shipper).await.is_err() {
            tracing::warn!("grace period over; unshipped actions are replayed at the next start");
        }
        let spool_for_close = Arc::clone(&spool);
        tokio::task::spawn_blocking(move || spool_for_close.close()).await?;
        if let Some(metrics) = metrics {
            // Exports the last figures, after the final shipping; blocks.
            tokio::task::spawn_blocking(move || drop(metrics)).await?;
        }
        tracing::info!(stats = ?spool.stats(), "lore-sidecar stopped");
        Ok(())
    }
}

/// Opens the spool in the configured folder, recovering what a crash left.
async fn open_spool(config: &SidecarConfig) -> anyhow::Result<Spool> {
    let disk_budget_bytes = config.disk_budget_mb * 1024 * 1024;
    let spool_config = SpoolConfig {
        fsync: config.fsync,
        disk_budget_bytes,
        // The active segment is never deleted, so segments stay a small
        // share of the budget: acknowledged ones free room soon.
        max_segment_bytes: lore_spool::DEFAULT_MAX_SEGMENT_BYTES.min(disk_budget_bytes / 8).max(64 * 1024),
        when_full: config.when_full,
        ..SpoolConfig::new(&config.spool_dir)
    };
    let (spool, report) = tokio::task::spawn_blocking(move || Spool::open(spool_config))
        .await?
        .with_context(|| format!("cannot open the spool in {}", config.spool_dir.display()))?;
    tracing::info!(?report, "spool recovered");
    Ok(spool)
}

/// Takes in what the hooks of this machine's user kept in their outbox
/// while no sidecar ran (see `lore_agent::outbox`), through this sidecar's
/// own API, so it is screened and spooled like every write.
async fn take_in_outbox(address: lore_agent::connection::LoreAddress) {
    let outbox = lore_agent::outbox::Outbox::local();
    if outbox.is_empty() {
        return;
    }
    let connection = match address.connect(Duration::from_secs(5), "sidecar").await {
        Ok(connection) => connection,
        Err(error) => return tracing::warn!(%error, "the outbox waits: this sidecar's own API did not answer"),
    };
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    match outbox.drain(&connection.channel(), deadline).await {
        Ok(drained) => tracing::info!(?drained, dir = %outbox.dir().display(), "took in the hooks' outbox"),
        Err(error) => tracing::warn!(%error, "the hooks' outbox could not be taken in"),
    }
}

/// This sidecar's own gRPC port, on loopback, as a client reaches it
/// (should it not answer, the server it ships to, never a default one).
fn own_address(config: &SidecarConfig, local: SocketAddr) -> lore_agent::connection::LoreAddress {
    let loopback = match local.ip() {
        ip if !ip.is_unspecified() => ip,
        std::net::IpAddr::V4(_) => std::net::Ipv4Addr::LOCALHOST.into(),
        std::net::IpAddr::V6(_) => std::net::Ipv6Addr::LOCALHOST.into(),
    };
    lore_agent::connection::LoreAddress {
        server: config.server.clone(),
        sidecar: Some(format!("http://{}", SocketAddr::new(loopback, local.port()))),
        token: None,
        tls: config.tls.files(),
    }
}

/// The MCP tools as this sidecar serves them: through its own local gRPC
/// port, so their writes are spooled and their reads proxied like every
/// agent's.
fn mcp_for_this_sidecar(config: &SidecarConfig, local: SocketAddr) -> lore_agent::mcp::LoreMcp {
    let address = own_address(config, local);
    let identity = lore_agent::identity::Identity::resolve(
        config.mcp_project.as_deref(),
        None,
        lore_agent::identity::AgentKind::Other,
        &std::env::current_dir().unwrap_or_default(),
    );
    let defaults = lore_agent::mcp::McpDefaults {
        project: config.mcp_project.clone(),
        agent_id: identity.agent_id,
        kind: lore_agent::identity::AgentKind::Other,
        session: None,
        repository: None,
    };
    lore_agent::mcp::LoreMcp::new(address, defaults, Duration::from_secs(2))
}

/// The MCP port, when `--mcp-listen` asks for one, bound with its options
/// checked.
async fn bind_mcp(
    config: &SidecarConfig,
) -> anyhow::Result<Option<(lore_agent::mcp::http::HttpOptions, tokio::net::TcpListener)>> {
    let Some(listen) = config.mcp_listen else { return Ok(None) };
    let options = lore_agent::mcp::http::HttpOptions { listen, token: config.mcp_token.clone() };
    options.check()?;
    let listener =
        tokio::net::TcpListener::bind(listen).await.with_context(|| format!("cannot listen on {listen} for MCP"))?;
    Ok(Some((options, listener)))
}

/// The folders `--index` names, watched and indexed through the spool.
async fn watch_folders(
    config: &SidecarConfig,
    spool: &Arc<Spool>,
    stats: &Arc<folders::FolderStats>,
) -> anyhow::Result<Option<folders::FolderWatch>> {
    if config.index.is_empty() {
        return Ok(None);
    }
    let watched = config
        .index
        .iter()
        .map(|dir| {
            let dir = std::path::absolute(dir).unwrap_or_else(|_| dir.clone());
            let project = config.index_project.clone().unwrap_or_else(|| lore_agent::identity::project_name(&dir));
            folders::Folder { dir, project }
        })
        .collect();
    let debounce = Duration::from_millis(config.index_debounce_ms.max(1));
    let watch =
        folders::start(watched, debounce, Arc::clone(spool), config.spool_dir.clone(), Arc::clone(stats)).await?;
    Ok(Some(watch))
}
