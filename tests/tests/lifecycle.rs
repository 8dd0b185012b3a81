//! Start-up, shutdown and the `migrate` command of the real binary.

use std::os::unix::fs::PermissionsExt as _;
use std::time::Duration;

use lore_e2e::{ScratchDataDir, ServerOptions, ServerProcess, TestDatabase, default_cache_dir, run_server_to_exit};
use nix::sys::signal::Signal;
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;

const EXIT_CONFIG: i32 = 78;
const EXIT_FAILURE: i32 = 1;

/// A start-up failure must be one line that says what is wrong, not a panic
/// or a backtrace.
fn assert_one_clear_error(stderr: &str, expected: &str) {
    let errors: Vec<&str> = stderr.lines().filter(|line| line.starts_with("lore-server: ")).collect();
    assert_eq!(errors.len(), 1, "expected one error line in: {stderr}");
    assert!(errors[0].contains(expected), "{:?} does not say {expected:?}", errors[0]);
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[tokio::test]
async fn sigterm_with_a_call_in_flight_drains_and_exits_cleanly() {
    let database = TestDatabase::new().await.unwrap();
    let mut server =
        ServerProcess::start(ServerOptions::with_database(&database.url).env("LORE_SHUTDOWN_GRACE_SECS", "3"))
            .await
            .unwrap();
    let addr = server.addr().to_owned();

    // A long-lived call in flight: the health watch stream.
    let mut health = HealthClient::new(server.channel().await);
    let mut watch = health.watch(HealthCheckRequest { service: String::new() }).await.unwrap().into_inner();
    let first = watch.message().await.unwrap().unwrap();
    assert_eq!(first.status, ServingStatus::Serving as i32);

    server.signal(Signal::SIGTERM);

    // The in-flight stream is told first, so load balancers stop routing.
    let next = tokio::time::timeout(Duration::from_secs(5), watch.message()).await.expect("status update in time");
    assert_eq!(next.unwrap().unwrap().status, ServingStatus::NotServing as i32);

    let status = server.wait(Duration::from_secs(20)).await.unwrap();
    assert!(status.success(), "exit {status:?}: {}", server.log());
    let log = server.log();
    assert!(log.contains("shutting down: draining in-flight calls"), "{log}");
    assert!(log.contains("lore-server stopped"), "{log}");
    assert!(tokio::net::TcpStream::connect(&addr).await.is_err(), "still listening on {addr}");
}

#[tokio::test]
async fn sigint_with_no_calls_exits_at_once() {
    let database = TestDatabase::new().await.unwrap();
    let mut server =
        ServerProcess::start(ServerOptions::with_database(&database.url).env("LORE_SHUTDOWN_GRACE_SECS", "60"))
            .await
            .unwrap();
    server.signal(Signal::SIGINT);
    // Well under the 60 s grace: nothing is in flight, so nothing to wait for.
    let status = server.wait(Duration::from_secs(20)).await.unwrap();
    assert!(status.success(), "{}", server.log());
}

#[tokio::test]
async fn unreachable_database_fails_fast_with_one_clear_message() {
    let options = ServerOptions::with_database("postgres://postgres@127.0.0.1:1/lore")
        .env("LORE_DATABASE__CONNECT_TIMEOUT_SECS", "3");
    let (code, stderr) = run_server_to_exit(options, Duration::from_secs(30)).await;
    assert_eq!(code, Some(EXIT_FAILURE), "{stderr}");
    assert_one_clear_error(&stderr, "cannot connect to PostgreSQL at 127.0.0.1:1/lore");
}

#[tokio::test]
async fn port_in_use_fails_fast_with_one_clear_message() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let options = ServerOptions::with_database("postgres://postgres@127.0.0.1:1/lore").env("LORE_LISTEN_ADDR", &addr);
    let (code, stderr) = run_server_to_exit(options, Duration::from_secs(30)).await;
    assert_eq!(code, Some(EXIT_FAILURE), "{stderr}");
    assert_one_clear_error(&stderr, &format!("cannot listen on {addr}"));
    assert!(stderr.contains("in use"), "{stderr}");
}

#[tokio::test]
async fn unreadable_config_file_fails_with_the_config_exit_code() {
    let mut options = ServerOptions::with_database("postgres://postgres@127.0.0.1:1/lore");
    options.args = vec!["--config".into(), "/nonexistent/lore.toml".into()];
    let (code, stderr) = run_server_to_exit(options, Duration::from_secs(30)).await;
    assert_eq!(code, Some(EXIT_CONFIG), "{stderr}");
    assert_one_clear_error(&stderr, "cannot read config file /nonexistent/lore.toml");
}

#[tokio::test]
async fn config_file_with_an_unknown_key_names_it() {
    let directory = tempfile::tempdir().unwrap();
    let path = directory.path().join("lore.toml");
    std::fs::write(&path, "[database]\nmax_conections = 3\n").unwrap();
    let mut options = ServerOptions::with_database("postgres://postgres@127.0.0.1:1/lore");
    options.args = vec!["--config".into(), path.display().to_string()];
    let (code, stderr) = run_server_to_exit(options, Duration::from_secs(30)).await;
    assert_eq!(code, Some(EXIT_CONFIG), "{stderr}");
    assert_one_clear_error(&stderr, "max_conections");
}

#[tokio::test]
async fn migrate_command_applies_migrations_and_a_second_run_is_a_no_op() {
    // An empty database, not migrated by the harness.
    let database = TestDatabase::new().await.unwrap();
    sqlx_reset(&database).await;

    for run in 1..=2 {
        let mut options = ServerOptions::with_database(&database.url);
        options.args = vec!["migrate".into()];
        let (code, stderr) = run_server_to_exit(options, Duration::from_secs(60)).await;
        assert_eq!(code, Some(0), "run {run}: {stderr}");
    }
    let applied: i64 = sqlx_query_count(&database, "SELECT count(*) FROM _sqlx_migrations").await;
    assert_eq!(applied as usize, lore_store::MIGRATOR.iter().filter(|m| m.migration_type.is_up_migration()).count());
}

/// Drops everything the harness created, so `migrate` starts from nothing.
async fn sqlx_reset(database: &TestDatabase) {
    use lore_store::MIGRATOR;
    MIGRATOR.undo(&database.pool, 0).await.unwrap();
    sqlx_execute(database, "DROP TABLE _sqlx_migrations").await;
    let tables = sqlx_query_count(database, "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'").await;
    assert_eq!(tables, 0);
}

async fn sqlx_execute(database: &TestDatabase, statement: &'static str) {
    sqlx::query(statement).execute(&database.pool).await.unwrap();
}

async fn sqlx_query_count(database: &TestDatabase, statement: &'static str) -> i64 {
    sqlx::query_scalar(statement).fetch_one(&database.pool).await.unwrap()
}

#[tokio::test]
async fn without_a_database_url_the_server_runs_its_own_postgres_and_stops_it() {
    let parent = tempfile::tempdir_in(default_cache_dir()).unwrap();
    let data_dir = parent.path().join("pgdata");
    let kept = ScratchDataDir::new(&data_dir).unwrap();
    // As `make run` does: dev mode, auth on, relative paths from where it runs.
    let options = || ServerOptions {
        env: vec![
            ("LORE_LISTEN_ADDR".into(), "127.0.0.1:0".into()),
            ("LORE_DEV_POSTGRES__DATA_DIR".into(), data_dir.display().to_string()),
        ],
        current_dir: Some(parent.path().to_owned()),
        ..ServerOptions::default()
    };
    let mut server = ServerProcess::start(options()).await.unwrap();
    let mut health = HealthClient::new(server.channel().await);
    let status = health.check(HealthCheckRequest { service: String::new() }).await.unwrap().into_inner();
    assert_eq!(status.status, ServingStatus::Serving as i32);
    assert!(server.log().contains("dev mode"), "{}", server.log());

    // `make run` then any `lore` command: the CLI finds the dev admin token.
    let token_file = parent.path().join(lore_proto::DEV_TOKEN_FILE);
    let token = std::fs::read_to_string(&token_file).expect("dev token written");
    assert!(token.starts_with("lore_"), "{token}");
    assert_eq!(std::fs::metadata(&token_file).unwrap().permissions().mode() & 0o777, 0o600);
    assert!(server.log().contains(lore_proto::DEV_TOKEN_FILE), "the log says where: {}", server.log());
    let log_args = ["log", "--project", "dev", "--type", "plan"];
    let (ok, _, stderr) = lore_e2e::lore_cli(&server, Some(parent.path()), &log_args).await;
    assert!(ok, "{stderr}");
    // Elsewhere there is no token to find, and the server says what is missing.
    let elsewhere = tempfile::tempdir().unwrap();
    let (ok, _, stderr) = lore_e2e::lore_cli(&server, Some(elsewhere.path()), &log_args).await;
    assert!(!ok && stderr.contains("missing token"), "{stderr}");
    server.stop().await;
    assert!(kept.path.join("PG_VERSION").is_file(), "data kept between runs");
    assert!(!kept.path.join("postmaster.pid").exists(), "PostgreSQL was not stopped");

    // The next run keeps the same token.
    let mut server = ServerProcess::start(options()).await.unwrap();
    assert_eq!(std::fs::read_to_string(&token_file).unwrap(), token);
    let (ok, _, stderr) = lore_e2e::lore_cli(&server, Some(parent.path()), &log_args).await;
    assert!(ok, "{stderr}");
    server.stop().await;
}

#[tokio::test]
async fn a_session_that_stops_heartbeating_is_marked_disconnected_by_the_sweep() {
    use lore_proto::v1 as proto;
    let database = TestDatabase::new().await.unwrap();
    let server = ServerProcess::start(
        ServerOptions::with_database(&database.url)
            .env("LORE_ACTIONS__SESSION_TIMEOUT_SECS", "1")
            .env("LORE_ACTIONS__SWEEP_INTERVAL_SECS", "1"),
    )
    .await
    .unwrap();
    let mut client = lore_proto::v1::action_service_client::ActionServiceClient::new(server.channel().await);
    let session = lore_e2e::start_session(&mut client, "lore", "quiet").await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
    loop {
        let current = client
            .get_last_session(proto::GetLastSessionRequest { project: "lore".into(), ..Default::default() })
            .await
            .unwrap()
            .into_inner()
            .session
            .unwrap();
        assert_eq!(current.session_id, session.session_id);
        if current.status == proto::SessionStatus::Disconnected as i32 {
            assert_eq!(current.end_reason, proto::EndReason::Timeout as i32);
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "the sweep never marked the silent session");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}
