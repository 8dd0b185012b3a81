//! lore-sidecar: the process that runs beside each agent VM.
//!
//! # Layout
//! - `lore_spool` (a crate of its own, which hooks use too when no sidecar
//!   runs): the crash-safe on-disk queue and what one record holds.
//! - [`api`]: the local ActionService: writes to the spool, reads proxied.
//! - [`learning_api`]: the QA and knowledge writes an agent makes, spooled
//!   the same way.
//! - [`inbox`]: the tail of a JSON-lines file, the other way in.
//! - [`folders`]: markdown folders on this machine, kept indexed (`--index`).
//! - [`ship`]: the Ingest stream to the server, acks, reconnects.
//! - [`status`]: `lore.v1.SidecarService`, the sidecar's figures.
//! - [`metrics`]: the same figures over OTLP.

pub mod api;
pub mod folders;
pub mod inbox;
pub mod learning_api;
pub mod metrics;
pub mod ship;
pub mod status;

use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use tokio::sync::watch;
use tonic::transport::Server;

use lore_proto::v1::action_service_server::ActionServiceServer;
use lore_proto::v1::agent_service_server::AgentServiceServer;
use lore_proto::v1::knowledge_service_server::KnowledgeServiceServer;
use lore_proto::v1::qa_learning_service_server::QaLearningServiceServer;
use lore_spool::{FsyncPolicy, FullPolicy, Spool, SpoolConfig};

/// How often the sidecar pings the server on an open connection, and how
/// long it waits for the answer before it calls the connection dead.
const KEEPALIVE_INTERVAL: Duration = Duration::from_secs(10);

/// TLS to lore-server, shared by the sidecar and the `lore` CLI.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct TlsArgs {
    /// PEM CA bundle that signed the server's certificate: connect with TLS.
    #[arg(long, global = true, env = "LORE_CA")]
    pub ca: Option<PathBuf>,
    /// PEM certificate to present when the server verifies clients.
    #[arg(long, global = true, env = "LORE_CLIENT_CERT", requires = "client_key")]
    pub client_cert: Option<PathBuf>,
    /// PEM private key of --client-cert.
    #[arg(long, global = true, env = "LORE_CLIENT_KEY", requires = "client_cert")]
    pub client_key: Option<PathBuf>,
}

impl TlsArgs {
    pub fn files(&self) -> lore_proto::tls::TlsFiles {
        lore_proto::tls::TlsFiles {
            ca: self.ca.clone(),
            client_cert: self.client_cert.clone(),
            client_key: self.client_key.clone(),
        }
    }
}

/// A class of personal data (`--keep-personal`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum PersonalClass {
    Cards,
    Ibans,
    NationalIds,
    Emails,
    Phones,
}

/// What the sidecar redacts: every class but those kept.
fn personal_data(keep: &[PersonalClass]) -> lore_sanitize::PersonalData {
    let mut personal = lore_sanitize::PersonalData::default();
    for class in keep {
        match class {
            PersonalClass::Cards => personal.cards = false,
            PersonalClass::Ibans => personal.ibans = false,
            PersonalClass::NationalIds => personal.national_ids = false,
            PersonalClass::Emails => personal.emails = false,
            PersonalClass::Phones => personal.phones = false,
        }
    }
    personal
}

/// Configuration of the sidecar (command-line flags, or `LORE_SIDECAR_*`).
#[derive(Debug, Clone, clap::Args)]
pub struct SidecarConfig {
    /// Local address agents send their actions to.
    #[arg(long, env = "LORE_SIDECAR_LISTEN", default_value = "127.0.0.1:50052")]
    pub listen: SocketAddr,
    /// lore-server to ship to.
    #[arg(long, env = "LORE_SERVER", default_value = "http://127.0.0.1:50051")]
    pub server: String,
    /// Bearer token for the server (a sidecar token ships; an agent token
    /// also answers reads for agents that send no token of their own).
    #[arg(long, env = "LORE_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    #[command(flatten)]
    pub tls: TlsArgs,
    /// Directory of the spool.
    #[arg(long, env = "LORE_SIDECAR_SPOOL_DIR", default_value = ".lore/spool")]
    pub spool_dir: PathBuf,
    /// A JSON-lines file to tail for actions (one action per line), for
    /// agents and hooks that can only append a line. Off when not given.
    #[arg(long, env = "LORE_SIDECAR_INBOX")]
    pub inbox: Option<PathBuf>,
    /// When an accepted action counts as durable: always (fsync before every
    /// answer, shared by concurrent appends), batch:<ms> (also wait up to
    /// <ms> for more appends per fsync), or never (no fsync before answering).
    #[arg(long, env = "LORE_SIDECAR_FSYNC", default_value = "always", value_parser = parse_fsync)]
    pub fsync: FsyncPolicy,
    /// Disk budget of the spool, in MiB.
    #[arg(long, env = "LORE_SIDECAR_DISK_BUDGET_MB", default_value_t = 1024)]
    pub disk_budget_mb: u64,
    /// What to do when the budget is full: refuse (RESOURCE_EXHAUSTED) or
    /// drop_oldest (counted).
    #[arg(long, env = "LORE_SIDECAR_WHEN_FULL", default_value = "refuse", value_parser = parse_full_policy)]
    pub when_full: FullPolicy,
    /// Actions per shipped batch (at most 1000, the server's limit).
    #[arg(long, env = "LORE_SIDECAR_BATCH_SIZE", default_value_t = 1000)]
    pub batch_size: usize,
    /// How long a batch may wait to fill, in ms.
    #[arg(long, env = "LORE_SIDECAR_LINGER_MS", default_value_t = 5)]
    pub linger_ms: u64,
    /// Classes of personal data to keep instead of redacting before the
    /// spool (comma-separated: cards, ibans, national-ids, emails, phones).
    /// Secrets are always redacted. Match the server's `redaction` settings.
    #[arg(long, env = "LORE_SIDECAR_KEEP_PERSONAL", value_delimiter = ',')]
    pub keep_personal: Vec<PersonalClass>,
    /// Batches on the wire without an ack. Two full batches keep the server
    /// busy while the sidecar stays small (docs/BENCHMARKS.md, "Replay after
    /// an outage").
    #[arg(long, env = "LORE_SIDECAR_MAX_IN_FLIGHT", default_value_t = 2)]
    pub max_in_flight: usize,
    /// OTLP/gRPC endpoint to export the sidecar's figures to as metrics
    /// (e.g. http://collector:4317). Nothing is exported when not given.
    #[arg(long, env = "LORE_SIDECAR_OTLP_ENDPOINT")]
    pub otlp_endpoint: Option<String>,
    /// Seconds between two metric exports.
    #[arg(long, env = "LORE_SIDECAR_METRICS_INTERVAL_SECS", default_value_t = 60)]
    pub metrics_interval_secs: u64,
    /// After SIGTERM, how long to keep shipping before exiting.
    #[arg(long, env = "LORE_SIDECAR_SHUTDOWN_GRACE_SECS", default_value_t = 5)]
    pub shutdown_grace_secs: u64,
    /// Serve Lore's MCP tools over streamable HTTP at http://ADDR/mcp, for
    /// agents that connect to a URL (given alone: 127.0.0.1:50053). Any
    /// address other than loopback needs --mcp-token.
    #[arg(long, env = "LORE_SIDECAR_MCP_LISTEN", num_args = 0..=1, default_missing_value = "127.0.0.1:50053")]
    pub mcp_listen: Option<SocketAddr>,
    /// The bearer token MCP clients must send (required off loopback).
    #[arg(long, env = "LORE_SIDECAR_MCP_TOKEN", hide_env_values = true)]
    pub mcp_token: Option<String>,
    /// The project of MCP calls that do not name one (?project=NAME in
    /// the URL, or the x-lore-project header).
    #[arg(long, env = "LORE_PROJECT")]
    pub mcp_project: Option<String>,
    /// A markdown folder on this machine to keep indexed in Lore
    /// (repeatable, or comma-separated): each `.md` file under it becomes
    /// the document of its path there, spooled like actions whenever it
    /// changes. The token needs the agent role.
    #[arg(long = "index", env = "LORE_SIDECAR_INDEX", value_delimiter = ',')]
    pub index: Vec<PathBuf>,
    /// The project of the indexed folders (default: the repository each
    /// folder is in).
    #[arg(long, env = "LORE_PROJECT")]
    pub index_project: Option<String>,
    /// How long a folder must be quiet before its changes are looked at, in
    /// ms (an editor's save is several events).
    #[arg(long, env = "LORE_SIDECAR_INDEX_DEBOUNCE_MS", default_value_t = 200)]
    pub index_debounce_ms: u64,
}

fn parse_fsync(text: &str) -> Result<FsyncPolicy, String> {
    match text {
        "always" => Ok(FsyncPolicy::Always),
        "never" => Ok(FsyncPolicy::Never),
        other => other
            .strip_prefix("batch:")
            .and_then(|millis| millis.parse::<u64>().ok())
            .map(|millis| FsyncPolicy::Batch(Duration::from_millis(millis)))
            .ok_or_else(|| format!("{other:?}: expected always, never or batch:<ms>")),
    }
}

fn parse_full_policy(text: &str) -> Result<FullPolicy, String> {
    match text {
        "refuse" => Ok(FullPolicy::Refuse),
        "drop_oldest" => Ok(FullPolicy::DropOldest),
        other => Err(format!("{other:?}: expected refuse or drop_oldest")),
    }
}

/// Runs the sidecar until `shutdown` resolves, then stops accepting, ships
/// for up to the grace period, and closes the spool.
pub async fn run(config: SidecarConfig, shutdown: impl Future<Output = ()> + Send + 'static) -> anyhow::Result<()> {
    let listener = tokio::net::TcpListener::bind(config.listen)
        .await
        .with_context(|| format!("cannot listen on {}", config.listen))?;
    let mcp_options = match config.mcp_listen {
        Some(listen) => {
            let options = lore_agent::mcp::http::HttpOptions { listen, token: config.mcp_token.clone() };
            options.check()?;
            let mcp_listener = tokio::net::TcpListener::bind(listen)
                .await
                .with_context(|| format!("cannot listen on {listen} for MCP"))?;
            Some((options, mcp_listener))
        }
        None => None,
    };
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
    let spool = Arc::new(spool);

    let (stop_tx, stop_rx) = watch::channel(false);
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
    let folder_watch = if config.index.is_empty() {
        None
    } else {
        let watched = config
            .index
            .iter()
            .map(|dir| {
                let dir = std::path::absolute(dir).unwrap_or_else(|_| dir.clone());
                let project = config.index_project.clone().unwrap_or_else(|| lore_agent::identity::project_name(&dir));
                folders::Folder { dir, project }
            })
            .collect();
        Some(
            folders::start(
                watched,
                Duration::from_millis(config.index_debounce_ms.max(1)),
                Arc::clone(&spool),
                config.spool_dir.clone(),
                Arc::clone(&folder_stats),
            )
            .await?,
        )
    };
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
    let server_channel = tonic::service::interceptor::InterceptedService::new(endpoint.connect_lazy(), bearer.clone());
    let learning = learning_api::LearningApi::new(Arc::clone(&spool), sanitizer.clone(), server_channel.clone());
    let local = api::LocalApi::new(Arc::clone(&spool), sanitizer, server_channel);
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
    let mcp_server = match mcp_options {
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
        .add_service(ActionServiceServer::new(local))
        .add_service(QaLearningServiceServer::new(learning.clone()))
        .add_service(KnowledgeServiceServer::new(learning.clone()))
        .add_service(AgentServiceServer::new(learning))
        .add_service(lore_proto::v1::sidecar_service_server::SidecarServiceServer::new(status))
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

    if let Some(inbox) = inbox {
        tokio::task::spawn_blocking(move || inbox.stop()).await?;
    }
    drop(folder_watch);
    tracing::info!("lore-sidecar stopping: shipping what is spooled");
    let _ = stop_tx.send(true);
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
