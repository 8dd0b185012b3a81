//! The server's life, the same for `lore-server serve` and for the tests'
//! in-process server: open the database (a dev-mode PostgreSQL when no URL
//! is given) and migrate it, build the services, start the leader's jobs,
//! serve gRPC and the console on listeners bound beforehand, and drain on
//! shutdown. Every start-up step fails fast with a message that says what
//! was wrong.

use std::future::Future;

use anyhow::Context as _;
use lore_pgtest::{PgCluster, PgInstall};
use sqlx::PgPool;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

use crate::config::Config;
use crate::services::Services;
use crate::{auth, grpc, jobs, telemetry, tls, web};

/// Name of the database the dev-mode PostgreSQL serves.
const DEV_DATABASE: &str = "lore";

/// The database the server works on, and the dev-mode PostgreSQL behind it
/// when the configuration names none.
pub struct Database {
    pub pool: PgPool,
    dev_cluster: Option<PgCluster>,
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

    /// Whether this is the dev-mode PostgreSQL of `make run`.
    pub fn is_dev(&self) -> bool {
        self.dev_cluster.is_some()
    }

    /// Closes the pool, then stops the dev-mode PostgreSQL if there is one.
    pub async fn close(self) {
        self.pool.close().await;
        drop(self.dev_cluster);
    }
}

/// The sockets the server serves on, bound before anything else starts so
/// that a port in use is the first error, not the last.
pub struct Listeners {
    pub grpc: TcpListener,
    /// `None`: no console (`web.listen` unset).
    pub web: Option<TcpListener>,
}

impl Listeners {
    pub async fn bind(config: &Config) -> anyhow::Result<Self> {
        let grpc = TcpListener::bind(config.listen_addr)
            .await
            .with_context(|| format!("cannot listen on {}", config.listen_addr))?;
        let web = match config.web.listen {
            Some(address) => Some(
                TcpListener::bind(address).await.with_context(|| format!("cannot listen on {address} (web.listen)"))?,
            ),
            None => None,
        };
        Ok(Self { grpc, web })
    }
}

/// A started server: its database and services ready, the leader's jobs
/// running, not serving yet.
pub struct App {
    config: Config,
    database: Database,
    services: Services,
    jobs: JoinHandle<()>,
}

impl App {
    /// Opens and migrates the database, builds the services and starts the
    /// jobs of whichever replica leads.
    pub async fn start(config: Config) -> anyhow::Result<Self> {
        let database = Database::open(&config).await?;
        if config.database.migrate_on_start {
            lore_store::migrate(&database.pool).await.context("cannot apply migrations")?;
        }
        let mut services =
            Services::new(&config, database.pool.clone()).context("cannot start the embedding provider")?;
        services.tls = tls::server_config(&config.tls)?;
        // The gauges' callbacks stay registered with the meter provider.
        let _pool = telemetry::observe_pool(database.pool.clone());
        let _keyword_index = telemetry::observe_keyword_index(services.knowledge.clone());
        services.knowledge.prepare().await.context("cannot register the embedding model")?;
        services.settings.reload().await.context("cannot read the settings")?;
        ensure_tokens(&config, &database).await?;
        let jobs = jobs::Jobs::new(&config, database.pool.clone(), &services);
        let jobs = tokio::spawn(async move {
            jobs::lead(jobs.pool.clone(), jobs::JOBS_LOCK, jobs::LEADER_CHECK, || jobs.run()).await
        });
        Ok(Self { config, database, services, jobs })
    }

    /// The services the server runs on (the tests look into them).
    pub fn services(&self) -> &Services {
        &self.services
    }

    /// Serves gRPC, and the console when it has a listener, until
    /// `shutdown` resolves; then drains the calls in flight, stops the
    /// jobs and closes the database.
    pub async fn serve(
        self,
        listeners: Listeners,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> anyhow::Result<()> {
        let Self { config, database, services, jobs } = self;
        // One shutdown signal for both listeners: gRPC drains, the console
        // closes its connections (its live pages reconnect to a successor).
        let (stopping, stop) = tokio::sync::watch::channel(false);
        let shutdown = async move {
            shutdown.await;
            let _ = stopping.send(true);
        };
        let console = match listeners.web {
            Some(listener) => {
                let dev_token_file = database.is_dev().then(|| config.auth.dev_token_file.clone());
                let console = web::Console::new(&services, config.web.clone(), dev_token_file)
                    .context("cannot start the web console")?;
                let mut stop = stop.clone();
                Some(tokio::spawn(async move {
                    let stopped = async move {
                        let _ = stop.wait_for(|stopping| *stopping).await;
                    };
                    if let Err(error) = web::serve(console, listener, stopped).await {
                        tracing::error!(%error, "the web console stopped");
                    }
                }))
            }
            None => None,
        };
        tracing::info!(addr = %listeners.grpc.local_addr()?, "lore-server serving");
        let served = grpc::serve(services, listeners.grpc, config.shutdown_grace(), shutdown).await;
        if let Some(console) = console {
            console.abort();
            let _ = console.await;
        }
        // The lock connection closes with the task, before the database does.
        jobs.abort();
        let _ = jobs.await;
        database.close().await;
        tracing::info!("lore-server stopped");
        Ok(served?)
    }
}

/// `lore-server serve`: starts the server and serves on `listeners` until
/// `shutdown` resolves.
pub async fn run(
    config: Config,
    listeners: Listeners,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    App::start(config).await?.serve(listeners, shutdown).await
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

/// The bootstrap admin token, and in dev mode the local admin token the
/// CLI finds by itself.
async fn ensure_tokens(config: &Config, database: &Database) -> anyhow::Result<()> {
    if let Some(secret) = &config.auth.bootstrap_admin_token {
        auth::ensure_admin_token(&database.pool, "bootstrap-admin", secret)
            .await
            .context("cannot register auth.bootstrap_admin_token")?;
    }
    if config.auth.enabled && database.is_dev() {
        let path = auth::ensure_dev_token(&database.pool, &config.auth.dev_token_file).await?;
        tracing::info!(
            path = %path.display(),
            "dev mode: an admin token for this database is in {}; the lore CLI finds it by itself",
            path.display()
        );
    } else if !config.auth.enabled {
        tracing::warn!("auth is switched off: every caller may read and write every project");
    }
    Ok(())
}
