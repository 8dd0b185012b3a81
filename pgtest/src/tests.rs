use super::*;

async fn install() -> PgInstall {
    let cache_dir = default_cache_dir();
    tokio::task::spawn_blocking(move || PgInstall::ensure(&cache_dir)).await.unwrap().unwrap()
}

async fn port_accepts_connections(port: u16) -> bool {
    tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_ok()
}

#[tokio::test]
async fn test_database_has_pgvector_and_pg_trgm() {
    let database = TestDatabase::new().await.unwrap();
    let vector_version: String = sqlx::query_scalar("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
        .fetch_one(&database.pool)
        .await
        .unwrap();
    assert!(vector_version.starts_with("0.8"), "pgvector {vector_version}");
    let distance: f64 =
        sqlx::query_scalar("SELECT '[1,0,0]'::vector <=> '[0,1,0]'::vector").fetch_one(&database.pool).await.unwrap();
    assert!((distance - 1.0).abs() < 1e-9, "cosine distance of orthogonal vectors: {distance}");
    let similarity: f32 = sqlx::query_scalar("SELECT similarity('row level security', 'row-level securty')")
        .fetch_one(&database.pool)
        .await
        .unwrap();
    assert!(similarity > 0.4, "trigram similarity {similarity}");
}

#[tokio::test]
async fn concurrent_test_databases_are_separate() {
    let databases = futures_join_all(4).await;
    let mut names: Vec<&str> = databases.iter().map(TestDatabase::name).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), 4);
    sqlx::query("INSERT INTO projects (name) VALUES ('only-in-first')").execute(&databases[0].pool).await.unwrap();
    let count: i64 = sqlx::query_scalar("SELECT count(*) FROM projects").fetch_one(&databases[1].pool).await.unwrap();
    assert_eq!(count, 0);
}

async fn futures_join_all(count: usize) -> Vec<TestDatabase> {
    let tasks: Vec<_> = (0..count).map(|_| tokio::spawn(TestDatabase::new())).collect();
    let mut databases = Vec::new();
    for task in tasks {
        databases.push(task.await.unwrap().unwrap());
    }
    databases
}

#[tokio::test]
async fn dropping_a_test_database_drops_it_on_the_server() {
    let database = TestDatabase::new().await.unwrap();
    let name = database.name().to_owned();
    let admin_url = database.admin_url.clone();
    drop(database);
    let mut admin = PgConnection::connect(&admin_url).await.unwrap();
    let exists: bool = sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)")
        .bind(&name)
        .fetch_one(&mut admin)
        .await
        .unwrap();
    assert!(!exists, "{name} still exists");
}

#[tokio::test]
async fn dropping_an_ephemeral_cluster_stops_it_and_deletes_its_data() {
    let cluster =
        PgCluster::start_ephemeral(&install().await, &default_cache_dir(), Durability::Throwaway).await.unwrap();
    let port = cluster.port();
    let run_dir = cluster.run_dir.clone().unwrap();
    assert!(port_accepts_connections(port).await);
    assert!(run_dir.join("data/PG_VERSION").is_file());
    drop(cluster);
    assert!(!port_accepts_connections(port).await, "server still listens on {port}");
    assert!(!run_dir.exists(), "{} still exists", run_dir.display());
}

#[tokio::test]
async fn a_panicking_test_still_stops_its_cluster() {
    let install = install().await;
    let (port_tx, port_rx) = tokio::sync::oneshot::channel();
    let task = tokio::spawn(async move {
        let cluster = PgCluster::start_ephemeral(&install, &default_cache_dir(), Durability::Throwaway).await.unwrap();
        port_tx.send((cluster.port(), cluster.run_dir.clone().unwrap())).unwrap();
        panic!("test failure while the cluster runs");
    });
    let join_error = task.await.unwrap_err();
    assert!(join_error.is_panic());
    let (port, run_dir) = port_rx.await.unwrap();
    assert!(!port_accepts_connections(port).await, "server still listens on {port}");
    assert!(!run_dir.exists());
}

/// Starts a persistent cluster configured at `configured`, writes, stops it,
/// starts it again and reads what was written; returns where its data is.
async fn keeps_its_data_across_a_restart(install: &PgInstall, configured: &Path) -> PathBuf {
    let cluster = PgCluster::start_persistent(install, configured).await.unwrap();
    cluster.ensure_database("lore").await.unwrap();
    let mut connection = PgConnection::connect(&cluster.url("lore")).await.unwrap();
    sqlx::raw_sql("CREATE TABLE kept (value text); INSERT INTO kept VALUES ('still here')")
        .execute(&mut connection)
        .await
        .unwrap();
    connection.close().await.unwrap();
    drop(cluster);

    let cluster = PgCluster::start_persistent(install, configured).await.unwrap();
    cluster.ensure_database("lore").await.unwrap();
    let mut connection = PgConnection::connect(&cluster.url("lore")).await.unwrap();
    let value: String = sqlx::query_scalar("SELECT value FROM kept").fetch_one(&mut connection).await.unwrap();
    assert_eq!(value, "still here");
    connection.close().await.unwrap();
    cluster.data_dir().to_owned()
}

#[tokio::test]
async fn persistent_cluster_keeps_its_data_across_restarts() {
    let install = install().await;
    let parent = tempfile::tempdir_in(default_cache_dir()).unwrap();
    let data_dir = parent.path().join("pgdata");
    let scratch = ScratchDataDir::new(&data_dir).unwrap();
    assert_eq!(keeps_its_data_across_a_restart(&install, &data_dir).await, scratch.path);
}

// A clone inside a private folder (a fresh `mktemp -d`, or /root) holds
// `make run`'s data directory where PostgreSQL, run as nobody, cannot go.
#[tokio::test]
async fn a_data_directory_in_a_folder_the_server_user_cannot_enter_is_kept_in_the_shared_one() {
    use std::os::unix::fs::PermissionsExt as _;
    let install = install().await;
    let private = tempfile::tempdir_in(default_cache_dir()).unwrap();
    fs::set_permissions(private.path(), fs::Permissions::from_mode(0o700)).unwrap();
    let configured = private.path().join("pgdata");
    let in_place = fs::canonicalize(private.path()).unwrap().join("pgdata");
    let scratch = ScratchDataDir::new(&configured).unwrap();
    if !Uid::effective().is_root() {
        // Then PostgreSQL runs as us, who can enter it.
        assert_eq!(scratch.path, in_place);
        return;
    }
    assert!(!scratch.path.starts_with(private.path()) && scratch.path != in_place, "{}", scratch.path.display());
    check_traversable(&scratch.path).unwrap();
    assert_eq!(persistent_data_dir(&configured).unwrap(), scratch.path, "the same configuration, the same data");
    assert_ne!(persistent_data_dir(&private.path().join("other")).unwrap(), scratch.path);

    assert_eq!(keeps_its_data_across_a_restart(&install, &configured).await, scratch.path);
    assert!(!in_place.exists(), "nothing was written where nobody cannot go");
}

#[tokio::test]
async fn a_crashed_cluster_comes_back_on_its_port_with_every_commit() {
    let mut cluster =
        PgCluster::start_ephemeral(&install().await, &default_cache_dir(), Durability::SurvivesPostgresCrash)
            .await
            .unwrap();
    let port = cluster.port();
    let database = TestDatabase::on_server(&cluster.url("postgres")).await.unwrap();
    sqlx::raw_sql("CREATE TABLE kept (value int); INSERT INTO kept SELECT generate_series(1, 1000)")
        .execute(&database.pool)
        .await
        .unwrap();

    cluster.restart(Shutdown::Immediate, Duration::from_millis(100)).await.unwrap();
    assert_eq!(cluster.port(), port);
    // The pool's old connections died with the server; it opens new ones.
    let count: i64 = sqlx::query_scalar("SELECT count(*) FROM kept").fetch_one(&database.pool).await.unwrap();
    assert_eq!(count, 1000);
    // The whole log: on a loaded machine the recovery's "not yet accepting
    // connections" lines, one per attempt to connect, push this one out of
    // the tail.
    let log = std::fs::read_to_string(&cluster.log_path).unwrap();
    assert!(log.contains("not properly shut down"), "{}", cluster.log_tail());
}

#[test]
fn stale_run_directories_of_dead_processes_are_removed() {
    let runs = tempfile::tempdir().unwrap();
    // PIDs are at most 2^22 on Linux, so this one cannot be alive.
    let dead = runs.path().join("99999999-abc");
    let alive = runs.path().join(format!("{}-abc", std::process::id()));
    fs::create_dir_all(&dead).unwrap();
    fs::create_dir_all(&alive).unwrap();
    remove_stale_runs(runs.path());
    assert!(!dead.exists());
    assert!(alive.exists());
}
