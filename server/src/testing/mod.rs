//! An in-process server for integration tests and benchmarks: the real gRPC
//! stack on a port of its own, over a fresh migrated database; and the data
//! the benchmarks load ([`corpus`]).

pub mod corpus;

use std::net::SocketAddr;
use std::sync::Arc;

use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tonic::transport::Channel;
use uuid::Uuid;

use crate::app::{App, Listeners};
use crate::config::Config;
use lore_pgtest::{Durability, PgCluster, PgInstall, TestDatabase, default_cache_dir};

pub struct TestServer {
    /// Shared with the server's siblings.
    pub database: Arc<TestDatabase>,
    pub addr: SocketAddr,
    /// Where the server's reads go (to see the replicas at work).
    pub reads: lore_store::replicas::ReadPools,
    /// The server's knowledge base (to see what it holds in memory).
    pub knowledge: lore_domain::knowledge::KnowledgeBase,
    shutdown: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
}

/// A database on a PostgreSQL of its own that commits like production
/// (each commit's WAL written at once, so a standby receives it at once),
/// and a streaming standby of that server made with `pg_basebackup -R`.
/// Both servers stop when dropped.
pub struct Replicated {
    pub primary: PgCluster,
    pub standby: PgCluster,
    pub database: TestDatabase,
}

impl Replicated {
    pub async fn start() -> Self {
        let cache_dir = default_cache_dir();
        let install = tokio::task::spawn_blocking({
            let cache_dir = cache_dir.clone();
            move || PgInstall::ensure(&cache_dir)
        })
        .await
        .expect("install task")
        .expect("PostgreSQL installs");
        let primary = PgCluster::start_ephemeral(&install, &cache_dir, Durability::SurvivesPostgresCrash)
            .await
            .expect("the primary starts");
        let database = TestDatabase::on_server(&primary.url("postgres")).await.expect("test database");
        let standby = primary.start_standby(&install, &cache_dir).await.expect("the standby starts");
        Self { primary, standby, database }
    }

    /// The standby's URL of the database.
    pub fn standby_url(&self) -> String {
        self.standby.url(self.database.name())
    }
}

/// Waits until `standby` has replayed all the WAL `primary` has written
/// so far; panics after `within`.
pub async fn caught_up(primary: &sqlx::PgPool, standby: &mut sqlx::PgConnection, within: std::time::Duration) {
    let position = "SELECT (pg_current_wal_lsn() - '0/0'::pg_lsn)::bigint";
    let wanted: i64 = sqlx::query_scalar(position).fetch_one(primary).await.expect("primary's WAL position");
    let deadline = std::time::Instant::now() + within;
    loop {
        let replayed: i64 = sqlx::query_scalar("SELECT (pg_last_wal_replay_lsn() - '0/0'::pg_lsn)::bigint")
            .fetch_one(&mut *standby)
            .await
            .expect("standby's replayed position");
        if replayed >= wanted {
            return;
        }
        assert!(std::time::Instant::now() < deadline, "the standby never caught up");
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
}

impl TestServer {
    /// Starts a server with [`TestServer::config`].
    pub async fn start() -> Self {
        Self::start_with(Self::config()).await
    }

    /// The default configuration with auth switched off: the tests of the
    /// services call without tokens (server/tests/api/auth.rs tests auth,
    /// with [`TestServer::start_with`] and auth on). No task is held out of
    /// its warnings: a test that checks what a briefing shows must not draw
    /// a held-out task by chance; the tests of the A/B set the fraction.
    pub fn config() -> Config {
        let mut config = Config::default();
        config.auth.enabled = false;
        config.qa.holdout_fraction = 0.0;
        config
    }

    /// A relative default cache directory is the harness's (the model and
    /// PostgreSQL live there), whatever directory the test runs in.
    pub async fn start_with(config: Config) -> Self {
        let database = TestDatabase::new().await.expect("test database");
        Self::serve(config, Arc::new(database)).await
    }

    /// A second server over this one's database, as another replica of a
    /// deployment would be: what one server keeps in memory, the other
    /// does not see.
    pub async fn sibling(&self, config: Config) -> Self {
        Self::serve(config, Arc::clone(&self.database)).await
    }

    /// A server over `database` (one on a server of the test's own, say a
    /// primary with replicas).
    pub async fn start_on(config: Config, database: TestDatabase) -> Self {
        Self::serve(config, Arc::new(database)).await
    }

    /// Starts the server as `lore-server serve` does ([`app::App`]), over
    /// `database`, on a port of its own.
    async fn serve(mut config: Config, database: Arc<TestDatabase>) -> Self {
        if config.cache_dir == Config::default().cache_dir {
            config.cache_dir = lore_pgtest::default_cache_dir();
        }
        config.database_url = Some(database.url.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("local addr");
        let app = App::start(config).await.expect("the server starts (is the model fetched? `make tools`)");
        let services = app.services();
        services.knowledge.keyword_index_built().await;
        let reads = services.reads.clone();
        let knowledge = services.knowledge.clone();
        let (shutdown_tx, shutdown_rx) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            let shutdown = async {
                let _ = shutdown_rx.await;
            };
            let listeners = Listeners { grpc: listener, web: None };
            app.serve(listeners, shutdown).await.expect("serve");
        });
        Self { database, addr, reads, knowledge, shutdown: Some(shutdown_tx), task: Some(task) }
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

/// Waits until every queued entry of the database has its vector: writes
/// return before their entry is embedded, so a test that searches by
/// meaning right after writing waits here first. Panics after a minute,
/// with what is still queued.
pub async fn embedded(pool: &sqlx::PgPool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let waiting: i64 = sqlx::query_scalar("SELECT count(*) FROM knowledge_embedding_jobs")
            .fetch_one(pool)
            .await
            .expect("count the embedding queue");
        if waiting == 0 {
            return;
        }
        assert!(std::time::Instant::now() < deadline, "{waiting} entries still wait for a vector after a minute");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

/// The action the benchmarks write: a realistic small context (a command, a
/// file, an exit code), one of four types, stamped now.
pub fn bench_action(session: &lore_proto::v1::Session, index: usize) -> lore_proto::v1::Action {
    use prost_types::value::Kind;
    let text = |value: String| prost_types::Value { kind: Some(Kind::StringValue(value)) };
    let context = prost_types::Struct {
        fields: [
            ("command".to_owned(), text(format!("cargo test -p lore-server store::actions::tests::case_{index}"))),
            ("file".to_owned(), text("server/src/store/actions.rs".to_owned())),
            ("exit_code".to_owned(), prost_types::Value { kind: Some(Kind::NumberValue((index % 3) as f64)) }),
        ]
        .into_iter()
        .collect(),
    };
    let now = chrono::Utc::now();
    lore_proto::v1::Action {
        action_id: uuid::Uuid::now_v7().to_string(),
        session_id: session.session_id.clone(),
        project: session.project.clone(),
        action_type: ["tool_call", "commit", "validate", "plan"][index % 4].into(),
        category: "bench".into(),
        context: Some(context),
        outcome: lore_proto::v1::Outcome::Success as i32,
        duration_ms: 42,
        occurred_at: Some(prost_types::Timestamp {
            seconds: now.timestamp(),
            nanos: now.timestamp_subsec_nanos() as i32,
        }),
        ..Default::default()
    }
}

/// An agent's session that ended (its network lost) after a few actions
/// and a validation that failed with `error`: what a briefing of the
/// agent's next session starts from.
pub async fn seed_failed_session(channel: Channel, project: &str, agent: &str, error: &str) {
    let mut actions = lore_proto::v1::action_service_client::ActionServiceClient::new(channel);
    let start =
        lore_proto::v1::StartSessionRequest { project: project.into(), agent_id: agent.into(), ..Default::default() };
    let session = actions.start_session(start).await.expect("start").into_inner().session.expect("session");
    let mut steps: Vec<lore_proto::v1::Action> = (0..10).map(|index| bench_action(&session, index)).collect();
    steps.push(lore_proto::v1::Action {
        session_id: session.session_id.clone(),
        project: project.into(),
        action_type: "validate".into(),
        category: "tests".into(),
        outcome: lore_proto::v1::Outcome::Failure as i32,
        error: error.into(),
        occurred_at: Some(crate::grpc::convert::to_timestamp(chrono::Utc::now())),
        ..Default::default()
    });
    for action in steps {
        actions.log_action(lore_proto::v1::LogActionRequest { action: Some(action) }).await.expect("log");
    }
    let end = lore_proto::v1::EndSessionRequest {
        session_id: session.session_id,
        reason: lore_proto::v1::EndReason::NetworkDisconnect as i32,
        summary: String::new(),
    };
    actions.end_session(end).await.expect("end");
}

/// A past session of `project`: it edits `files` (a `file_edit` action),
/// its QA fails or passes (a task result), and it ends with `summary`.
/// What hot spots and similar sessions are found from; returns its id.
pub async fn seed_past_session(channel: Channel, project: &str, files: &[&str], failed: bool, summary: &str) -> Uuid {
    use lore_proto::v1 as proto;
    let mut actions = proto::action_service_client::ActionServiceClient::new(channel.clone());
    let mut qa = proto::qa_learning_service_client::QaLearningServiceClient::new(channel);
    let session_id = Uuid::now_v7();
    let agent_id = "claude@vm1".to_owned();
    let start = proto::StartSessionRequest {
        session_id: session_id.to_string(),
        project: project.into(),
        agent_id: agent_id.clone(),
        ..Default::default()
    };
    actions.start_session(start).await.expect("start");
    let edit = serde_json::json!({"tool": "Edit", "details": {"files": files, "lines_added": 3, "lines_removed": 1}});
    let action = proto::Action {
        action_id: Uuid::now_v7().to_string(),
        session_id: session_id.to_string(),
        project: project.into(),
        agent_id,
        action_type: "file_edit".into(),
        context: Some(lore_proto::json::to_struct(&edit)),
        outcome: proto::Outcome::Success.into(),
        occurred_at: Some(crate::grpc::convert::to_timestamp(chrono::Utc::now())),
        ..Default::default()
    };
    actions.log_action(proto::LogActionRequest { action: Some(action) }).await.expect("log");
    let check = proto::CheckResult {
        name: "cargo test".into(),
        passed: !failed,
        output: if failed {
            "test db::migrate ... FAILED: relation \"invoices\" does not exist".into()
        } else {
            String::new()
        },
        ..Default::default()
    };
    let result = proto::RecordTaskResultRequest {
        result_id: Uuid::now_v7().to_string(),
        project: project.into(),
        task: Some(proto::Task { task_id: format!("session:{session_id}"), ..Default::default() }),
        session_id: session_id.to_string(),
        verdict: if failed { proto::TaskVerdict::Failed } else { proto::TaskVerdict::Passed }.into(),
        checks: vec![check],
        ..Default::default()
    };
    qa.record_task_result(result).await.expect("task result");
    let end = proto::EndSessionRequest {
        session_id: session_id.to_string(),
        reason: proto::EndReason::Normal.into(),
        summary: summary.into(),
    };
    actions.end_session(end).await.expect("end");
    session_id
}
