//! lore-server: one gRPC server over PostgreSQL + pgvector that owns the
//! knowledge, actions and QA-learning services.
//!
//! # Layout
//! - [`config`]: the one `Config`, from a TOML file and `LORE_*` variables.
//! - [`grpc`]: the tonic server; thin handlers per service that translate
//!   proto <-> domain types and call domain modules.
//! - [`store`]: the pool, the embedded migrations and the repositories.
//! - [`error`]: the crate's `Error` and its one mapping to `tonic::Status`.
//! - [`actions`], [`knowledge`], [`qa`]: the domain of each service.
//! - [`briefing`]: AgentService's one-call briefing, over the three.
//! - [`ledger`]: the injection ledger, what Lore put into each agent's
//!   context and what it withheld.
//! - [`trust`]: where injected text came from, how far it is trusted, and
//!   the quarantine of what the injection screen holds.
//! - [`auth`]: bearer tokens, roles and the layer that checks them.
//! - [`limits`]: calls in flight, deadlines and rates per token.
//! - [`tool_calls`]: Knowledge and QA calls logged as actions of the
//!   caller's session.
//! - [`tls`]: the listener's certificates.
//! - [`validate`]: checks on input that name the offending field.
//! - [`telemetry`]: logs, and OTLP traces and metrics.
//! - [`web`]: the web console, on its own port (`web.listen`).
//!
//! [`run`] is the whole server life cycle; it takes a bound listener and a
//! shutdown future so tests can run it on port 0.

pub mod auth;
pub mod config;
pub mod grpc;
pub mod jobs;
pub mod limits;
pub mod middleware;
pub mod telemetry;
pub mod testing;
pub mod tls;
pub mod tokens_command;
pub mod tool_calls;
pub mod web;

use std::future::Future;

use anyhow::Context as _;
use sqlx::PgPool;
use tokio::net::TcpListener;

pub use config::Config;
pub use lore_model::Error;

use lore_pgtest::{PgCluster, PgInstall};

/// Name of the database the dev-mode PostgreSQL serves.
const DEV_DATABASE: &str = "lore";

/// The database the server works on, and the dev-mode PostgreSQL behind it
/// when the configuration names none.
pub struct Database {
    pub pool: PgPool,
    pub(crate) dev_cluster: Option<PgCluster>,
}

impl Database {
    /// Connects to `database_url`, or starts the dev-mode PostgreSQL (data in
    /// `dev_postgres.data_dir`, kept between runs) when it is unset.
    pub async fn open(config: &Config) -> anyhow::Result<Self> {
        let (url, dev_cluster) = match &config.database_url {
            Some(url) => (url.clone(), None),
            None => {
                let cache_dir = config.cache_dir.clone();
                let install = tokio::task::spawn_blocking(move || PgInstall::ensure(&cache_dir))
                    .await
                    .context("PostgreSQL install task failed")??;
                let cluster = PgCluster::start_persistent(&install, &config.dev_postgres.data_dir)
                    .await
                    .context("cannot start the dev-mode PostgreSQL")?;
                cluster.ensure_database(DEV_DATABASE).await?;
                let url = cluster.url(DEV_DATABASE);
                tracing::info!(
                    %url,
                    data_dir = %cluster.data_dir().display(),
                    "dev mode: no database_url given, running a local PostgreSQL"
                );
                (url, Some(cluster))
            }
        };
        let pool = lore_store::connect(&config.database, &url).await?;
        Ok(Self { pool, dev_cluster })
    }

    /// Closes the pool, then stops the dev-mode PostgreSQL if there is one.
    pub async fn close(self) {
        self.pool.close().await;
        drop(self.dev_cluster);
    }
}

/// Binds the listener, opens the database, applies migrations and serves
/// until `shutdown` resolves. Every start-up step fails fast with a message
/// that says what was wrong.
pub async fn run(config: Config, shutdown: impl Future<Output = ()> + Send + 'static) -> anyhow::Result<()> {
    let listener = TcpListener::bind(config.listen_addr)
        .await
        .with_context(|| format!("cannot listen on {}", config.listen_addr))?;
    let web_listener = match config.web.listen {
        Some(address) => {
            Some(TcpListener::bind(address).await.with_context(|| format!("cannot listen on {address} (web.listen)"))?)
        }
        None => None,
    };
    let database = Database::open(&config).await?;
    if config.database.migrate_on_start {
        lore_store::migrate(&database.pool).await.context("cannot apply migrations")?;
    }
    let mut services =
        grpc::Services::new(&config, database.pool.clone()).context("cannot start the embedding provider")?;
    services.tls = tls::server_config(&config.tls)?;
    let _pool_gauge = telemetry::observe_pool(database.pool.clone());
    let _keyword_index_gauge = telemetry::observe_keyword_index(services.knowledge.clone());
    services.knowledge.prepare().await.context("cannot register the embedding model")?;
    if let Some(secret) = &config.auth.bootstrap_admin_token {
        auth::ensure_admin_token(&database.pool, "bootstrap-admin", secret)
            .await
            .context("cannot register auth.bootstrap_admin_token")?;
    }
    if config.auth.enabled && database.dev_cluster.is_some() {
        let path = auth::ensure_dev_token(&database.pool, &config.auth.dev_token_file).await?;
        tracing::info!(
            path = %path.display(),
            "dev mode: an admin token for this database is in {}; the lore CLI finds it by itself",
            path.display()
        );
    } else if !config.auth.enabled {
        tracing::warn!("auth is switched off: every caller may read and write every project");
    }
    let jobs = jobs::Jobs {
        pool: database.pool.clone(),
        actions: services.actions.clone(),
        knowledge: services.knowledge.clone(),
        session_timeout: std::time::Duration::from_secs(config.actions.session_timeout_secs),
        sweep_interval: std::time::Duration::from_secs(config.actions.sweep_interval_secs),
        retention_interval: std::time::Duration::from_secs(config.retention.interval_secs),
        watch: config.knowledge.watch.clone(),
        watch_stats: Default::default(),
        auto_drafts: config.knowledge.auto_drafts.clone(),
        reports: services.reports.clone(),
        reports_interval: std::time::Duration::from_secs(config.reports.interval_secs.max(1)),
        knowledge_feed_retention: std::time::Duration::from_secs(config.knowledge.keyword_index.feed_retention_secs),
        qa: services.qa.clone(),
    };
    let background =
        tokio::spawn(
            async move { jobs::lead(jobs.pool.clone(), jobs::JOBS_LOCK, jobs::LEADER_CHECK, || jobs.run()).await },
        );
    // One shutdown signal for both listeners: gRPC drains, the console
    // closes its connections (its live pages reconnect to a successor).
    let (stopping, stop) = tokio::sync::watch::channel(false);
    let shutdown = async move {
        shutdown.await;
        let _ = stopping.send(true);
    };
    let mut console = None;
    if let Some(listener) = web_listener {
        let dev_token_file = database.dev_cluster.is_some().then(|| config.auth.dev_token_file.clone());
        let web =
            web::Console::new(&services, config.web.clone(), dev_token_file).context("cannot start the web console")?;
        let mut stop = stop.clone();
        console = Some(tokio::spawn(async move {
            let stopped = async move {
                let _ = stop.wait_for(|stopping| *stopping).await;
            };
            if let Err(error) = web::serve(web, listener, stopped).await {
                tracing::error!(%error, "the web console stopped");
            }
        }));
    }
    tracing::info!(addr = %listener.local_addr()?, "lore-server serving");
    let served = grpc::serve(services, listener, config.shutdown_grace(), shutdown).await;
    if let Some(console) = console {
        console.abort();
        let _ = console.await;
    }
    // The lock connection closes with the task, before the database does.
    background.abort();
    let _ = background.await;
    database.close().await;
    tracing::info!("lore-server stopped");
    Ok(served?)
}

/// Applies migrations and exits (`lore-server migrate`).
pub async fn migrate(config: &Config) -> anyhow::Result<()> {
    let database = Database::open(config).await?;
    let result = lore_store::migrate(&database.pool).await.context("cannot apply migrations");
    database.close().await;
    result?;
    tracing::info!("migrations applied");
    Ok(())
}

/// Installs the SIGTERM and SIGINT handlers now and returns a future that
/// resolves on the first of them. Call it first thing: a signal that arrives
/// while the server is still starting is then held, not fatal, and the
/// server shuts down as soon as it serves.
pub fn shutdown_signal() -> std::io::Result<impl Future<Output = ()> + Send + 'static> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut terminate = signal(SignalKind::terminate())?;
    let mut interrupt = signal(SignalKind::interrupt())?;
    Ok(async move {
        tokio::select! {
            _ = terminate.recv() => tracing::info!("SIGTERM received"),
            _ = interrupt.recv() => tracing::info!("SIGINT received"),
        }
    })
}
