//! An in-process server for integration tests and benchmarks: the real gRPC
//! stack on a port of its own, over a fresh migrated database.

use std::net::SocketAddr;

use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tonic::transport::Channel;

use crate::config::Config;
use crate::embedded_postgres::TestDatabase;
use crate::grpc::{self, Services};

pub struct TestServer {
    pub database: TestDatabase,
    pub addr: SocketAddr,
    shutdown: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
}

impl TestServer {
    /// Starts a server with the default configuration.
    pub async fn start() -> Self {
        Self::start_with(Config::default()).await
    }

    pub async fn start_with(config: Config) -> Self {
        let database = TestDatabase::new().await.expect("test database");
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("local addr");
        // Sized like the real server's pool, not the harness's small one.
        let pool = sqlx::postgres::PgPoolOptions::new()
            .max_connections(config.database.max_connections)
            .connect(&database.url)
            .await
            .expect("server pool");
        let services = Services::new(&config, pool);
        let (shutdown_tx, shutdown_rx) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            let shutdown = async {
                let _ = shutdown_rx.await;
            };
            grpc::serve(services, listener, config.shutdown_grace(), shutdown).await.expect("serve");
        });
        Self { database, addr, shutdown: Some(shutdown_tx), task: Some(task) }
    }

    pub fn pool(&self) -> &sqlx::PgPool {
        &self.database.pool
    }

    /// A connected channel; clients built on it accept large messages.
    pub async fn channel(&self) -> Channel {
        Channel::from_shared(format!("http://{}", self.addr)).expect("uri").connect().await.expect("connect")
    }

    pub async fn stop(mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}
