//! Harness for end-to-end tests: runs the real `lore-server` binary (built by
//! `make test` before the tests) against a throwaway database, and the real
//! grpcurl from the cache.

use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context as _, bail};
use nix::sys::signal::{self, Signal};
use nix::unistd::Pid;
use tokio::io::{AsyncBufReadExt as _, BufReader};
use tokio::process::{Child, Command};
use tonic::transport::Channel;

pub mod image;
pub mod model_stub;
pub mod otlp;
pub mod proxy;
pub mod soak;

pub use lore_pgtest::{ScratchDataDir, TestDatabase, default_cache_dir};

/// How long a server may take to start serving (a cold dev-mode start
/// includes initdb).
const START_TIMEOUT: Duration = Duration::from_secs(120);

/// Path of a binary of this workspace, next to the test executable's
/// directory (`target/<profile>/`).
pub fn workspace_binary(name: &str) -> PathBuf {
    let test_executable = std::env::current_exe().expect("current exe");
    let profile_dir = test_executable.parent().and_then(Path::parent).expect("target/<profile>/deps");
    let path = profile_dir.join(name);
    assert!(
        path.is_file(),
        "{} is missing: run `cargo build --workspace --bins` first (make test does)",
        path.display()
    );
    path
}

/// The repository this crate is tested in.
pub fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the workspace holds tests/").to_path_buf()
}

/// Runs one of the repository's checks (`scripts/checks/NAME`) on `root`:
/// whether it passed, its stdout and its stderr.
pub fn run_check(name: &str, root: &Path) -> (bool, String, String) {
    let output = std::process::Command::new("python3")
        .arg(repository().join("scripts/checks").join(name))
        .arg(root)
        .output()
        .expect("python3 runs");
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
    (output.status.success(), text(&output.stdout), text(&output.stderr))
}

/// The real grpcurl, fetched by `scripts/setup/fetch_tools.sh`.
pub fn grpcurl_binary() -> PathBuf {
    let path =
        std::env::var_os("LORE_GRPCURL").map(PathBuf::from).unwrap_or_else(|| default_cache_dir().join("bin/grpcurl"));
    assert!(path.is_file(), "{} is missing: run scripts/setup/fetch_tools.sh (make test does)", path.display());
    path
}

/// The Python of the tools' virtualenv (grpcio, the MCP SDK), fetched by
/// `scripts/setup/fetch_tools.sh`.
pub fn venv_python() -> PathBuf {
    let python = default_cache_dir().join("venv/bin/python");
    assert!(python.is_file(), "{} is missing: run scripts/setup/fetch_tools.sh (make test does)", python.display());
    python
}

/// The real Claude Code CLI, fetched from npm by `scripts/setup/fetch_tools.sh`.
/// An npm-installed CLI in the cache (`claude`, `codex`, `gemini`).
pub fn npm_binary(name: &str) -> PathBuf {
    let path = default_cache_dir().join("npm/node_modules/.bin").join(name);
    assert!(path.exists(), "{} is missing: run scripts/setup/fetch_tools.sh (make test does)", path.display());
    path
}

/// A small Python project whose `make test` fails on a division bug.
pub fn calc_repository(dir: &Path) {
    std::fs::write(dir.join("calc.py"), "def divide(a, b):\n    return a / b\n").unwrap();
    std::fs::write(
        dir.join("test_calc.py"),
        "from calc import divide\n\ntry:\n    divide(1, 0)\nexcept ValueError:\n    print('ok')\nelse:\n    raise SystemExit('divide(1, 0) did not raise ValueError')\n",
    )
    .unwrap();
    std::fs::write(dir.join("Makefile"), "test:\n\tpython3 test_calc.py\n").unwrap();
    let status = std::process::Command::new("git").arg("init").arg("-q").arg(dir).status().unwrap();
    assert!(status.success());
}

/// The calc repository with a test runner of its own that passes
/// (`./runtests.sh`), for runs where another runner fails first.
pub fn calc_repository_with_runner(dir: &Path) {
    calc_repository(dir);
    let runner = dir.join("runtests.sh");
    std::fs::write(&runner, "#!/bin/sh\necho 'all tests ran'\n").unwrap();
    let status = std::process::Command::new("chmod").arg("+x").arg(&runner).status().unwrap();
    assert!(status.success());
}

/// What Lore's warning at the call says worked, after one earlier session
/// in which the wrong runner failed and `./runtests.sh` passed.
pub const WHAT_WORKED: &str = "what worked after: `runtests.sh` (1 of 1)";

/// What the model reads in place of a call's output when Lore held it
/// once before it ran (strong evidence; `CallWarning::refusal_text`).
pub const HELD: &str = "Lore held this call once, before it ran; make it again to run it.";

/// Text an agent is shown with its datamarks (lore_screen::fence) read
/// as spaces: a phrase that must not reach an agent is looked for here, so
/// the marks cannot hide it from the test.
pub fn unmarked(text: &str) -> String {
    text.replace('\u{02C6}', " ")
}

/// The title of the lesson [`CalcLore`] holds: what the calc repository's
/// failing test is about.
pub const CALC_LESSON: &str = "ZeroDivisionError in calc.divide when the divisor is zero";

/// What an agent CLI's end-to-end run talks to: the real server with auth
/// on, holding one lesson (`PAT-DIV`, [`CALC_LESSON`]) of the project
/// `calc`, and a sidecar that holds the only agent token.
pub struct CalcLore {
    pub database: TestDatabase,
    /// An admin token of project calc: a person's.
    pub admin: String,
    pub server: ServerProcess,
    pub sidecar: ServerProcess,
    pub spool: tempfile::TempDir,
}

impl CalcLore {
    pub async fn start() -> Self {
        use lore_proto::v1 as proto;
        let database = TestDatabase::new().await.unwrap();
        let server = ServerProcess::start(ServerOptions::with_database(&database.url).with_auth()).await.unwrap();
        let admin = project_token(&database.pool, "admin", lore_server::auth::Role::Admin, "calc").await;
        let agent = project_token(&database.pool, "vm-sidecar", lore_server::auth::Role::Agent, "calc").await;
        let channel = tonic::service::interceptor::InterceptedService::new(
            server.channel().await,
            lore_proto::auth::Bearer::new(Some(&admin)).unwrap(),
        );
        let lesson = proto::Entry {
            key: "PAT-DIV".into(),
            project: "calc".into(),
            kind: proto::EntryKind::Gotcha as i32,
            title: CALC_LESSON.into(),
            summary: "Raise ValueError when b is zero, before dividing.".into(),
            ..Default::default()
        };
        lore_proto::v1::knowledge_service_client::KnowledgeServiceClient::new(channel)
            .upsert_entry(proto::UpsertEntryRequest { entry: Some(lesson) })
            .await
            .unwrap();
        let (sidecar, spool) = ServerProcess::start_sidecar_with_token(&server.endpoint(), &agent).await.unwrap();
        Self { database, admin, server, sidecar, spool }
    }

    /// A person guards `command` in project calc with the real `lore qa
    /// guards`, and turns the project's guards on.
    pub async fn guard(&self, command: &str, reason: &str, instead: &str) {
        let token = ["--token", self.admin.as_str()];
        for args in [
            &["qa", "guards", "add", "--project", "calc", command, "--reason", reason, "--instead", instead][..],
            &["qa", "guards", "on", "--project", "calc"][..],
        ] {
            let (ok, stdout, stderr) = lore_cli(&self.server, None, &[&token[..], args].concat()).await;
            assert!(ok, "lore {args:?}: {stdout}{stderr}");
        }
    }

    /// Sets how project calc's agents are warned at the call (`deny-once`,
    /// `context` or `off`), as a person would.
    pub async fn set_call_warnings(&self, mode: &str) {
        let args = ["--token", self.admin.as_str(), "qa", "guards", "call-warnings", "--project", "calc", mode];
        let (ok, stdout, stderr) = lore_cli(&self.server, None, &args).await;
        assert!(ok, "lore {args:?}: {stdout}{stderr}");
    }

    /// Whether the injection ledger holds a guard's refusal for project
    /// calc, within a minute (the hook after the refusal reports it).
    pub async fn guard_refusal_recorded(&self) -> bool {
        let pool = &self.database.pool;
        eventually(|| async {
            let counted: i64 = sqlx::query_scalar(
                "SELECT count(*) FROM injections j JOIN injection_items i USING (injection_id)
                 WHERE j.project = 'calc' AND j.surface = 'call' AND i.kind = 'guard'",
            )
            .fetch_one(pool)
            .await
            .unwrap();
            (counted >= 1).then_some(())
        })
        .await
        .is_some()
    }

    /// Writes the server refused for good, as the sidecar kept them.
    pub fn rejects(&self) -> String {
        std::fs::read_to_string(self.spool.path().join("rejects.jsonl")).unwrap_or_default()
    }

    /// Whether `count` shell commands (actions with a command) reached the
    /// server within a minute.
    pub async fn shell_calls_recorded(&self, count: i64) -> bool {
        self.recorded("SELECT count(*) FROM actions WHERE context->'input' ? 'command' AND $1 = $1", "", count).await
    }

    /// Whether `count` calls of `command` have reached the server, within
    /// a minute.
    pub async fn command_recorded(&self, command: &str, count: i64) -> bool {
        self.recorded("SELECT count(*) FROM actions WHERE context->'input'->>'command' = $1", command, count).await
    }

    /// Whether the count `query` makes of `bind` reaches `count` within a
    /// minute.
    async fn recorded(&self, query: &'static str, bind: &str, count: i64) -> bool {
        eventually(|| async {
            let counted: i64 = sqlx::query_scalar(query).bind(bind).fetch_one(&self.database.pool).await.unwrap();
            (counted >= count).then_some(())
        })
        .await
        .is_some()
    }

    /// A session's QA task results once `count` of them have arrived
    /// (within a minute), after checking the sidecar had none refused.
    pub async fn task_results(&self, session: uuid::Uuid, count: usize) -> Option<Vec<(i32, bool, i32)>> {
        let pool = &self.database.pool;
        let results = eventually(|| async {
            let results = session_task_results(pool, session).await;
            (results.len() >= count).then_some(results)
        })
        .await;
        assert!(self.rejects().is_empty(), "the server refused spooled writes: {}", self.rejects());
        results
    }
}

/// A bearer token of `role` for `project` alone.
pub async fn project_token(pool: &sqlx::PgPool, name: &str, role: lore_server::auth::Role, project: &str) -> String {
    let token = lore_store::tokens::NewToken {
        name: name.into(),
        role,
        projects: Some(vec![project.into()]),
        expires_at: None,
    };
    lore_server::auth::create_token(pool, &token).await.unwrap().1
}

pub fn claude_binary() -> PathBuf {
    npm_binary("claude")
}

/// What grpcurl printed and how it exited.
#[derive(Debug)]
pub struct GrpcurlOutput {
    pub success: bool,
    pub stdout: String,
    pub stderr: String,
}

/// Runs grpcurl in plaintext: `grpcurl -plaintext <flags> <addr> <rest>`.
pub async fn grpcurl(flags: &[&str], addr: &str, rest: &[&str]) -> GrpcurlOutput {
    let output = Command::new(grpcurl_binary())
        .arg("-plaintext")
        .args(flags)
        .arg(addr)
        .args(rest)
        .output()
        .await
        .expect("grpcurl runs");
    GrpcurlOutput {
        success: output.status.success(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// A running `lore-server` process, killed when dropped.
pub struct ServerProcess {
    child: Child,
    addr: String,
    log: Arc<Mutex<Vec<String>>>,
    /// Reads stderr into `log`; it ends when the process closes stderr, so
    /// `wait` joins it to have the last lines a process wrote before exiting.
    log_reader: Option<tokio::task::JoinHandle<()>>,
}

/// How to start a server.
#[derive(Default)]
pub struct ServerOptions {
    pub env: Vec<(String, String)>,
    pub args: Vec<String>,
    /// Where relative paths in the config resolve (the dev token file).
    pub current_dir: Option<PathBuf>,
}

impl ServerOptions {
    /// A server on a free port over `database_url`, with JSON logs and auth
    /// switched off: the tests of the services call without tokens. Tests
    /// of auth switch it back on with [`ServerOptions::with_auth`].
    pub fn with_database(database_url: &str) -> Self {
        Self {
            env: vec![
                ("LORE_DATABASE_URL".into(), database_url.into()),
                ("LORE_LISTEN_ADDR".into(), "127.0.0.1:0".into()),
                ("LORE_AUTH__ENABLED".into(), "false".into()),
                // What a briefing shows must not depend on a task drawn for
                // the A/B by chance (qa.holdout_fraction defaults to 0.1).
                ("LORE_QA__HOLDOUT_FRACTION".into(), "0".into()),
            ],
            ..Self::default()
        }
    }

    /// Auth on, as it is by default outside the tests.
    pub fn with_auth(self) -> Self {
        self.env("LORE_AUTH__ENABLED", "true")
    }

    pub fn env(mut self, key: &str, value: &str) -> Self {
        self.env.push((key.into(), value.into()));
        self
    }
}

/// Builds the command for `lore-server` with a clean `LORE_*` environment.
pub fn server_command(options: &ServerOptions) -> Command {
    let mut command = Command::new(workspace_binary("lore-server"));
    for (key, _) in std::env::vars() {
        if key.starts_with("LORE_") && key != "LORE_CACHE_DIR" || key == "DATABASE_URL" || key == "RUST_LOG" {
            command.env_remove(key);
        }
    }
    command
        .env("LORE_LOG__FORMAT", "json")
        .env("LORE_CACHE_DIR", default_cache_dir())
        .envs(options.env.iter().map(|(key, value)| (key, value)))
        .args(&options.args)
        .current_dir(options.current_dir.clone().unwrap_or_else(|| PathBuf::from(".")))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    command
}

impl ServerProcess {
    /// Starts the server and waits until it logs that it serves.
    pub async fn start(options: ServerOptions) -> anyhow::Result<Self> {
        Self::spawn_until_ready(server_command(&options), "lore-server serving").await
    }

    /// Starts a lore-sidecar on a free local port that ships to `server`
    /// and spools in `spool_dir`.
    pub async fn start_sidecar(server: &str, spool_dir: &Path, extra_args: &[&str]) -> anyhow::Result<Self> {
        Self::start_sidecar_on("127.0.0.1:0", server, spool_dir, extra_args).await
    }

    /// The same on a given address (to come back on it after a kill).
    /// A sidecar on a port of its own, spooling into a fresh folder of the
    /// cache, holding `token` (the only token the agents' side needs).
    pub async fn start_sidecar_with_token(server: &str, token: &str) -> anyhow::Result<(Self, tempfile::TempDir)> {
        let spool = tempfile::tempdir_in(default_cache_dir())?;
        let listen = format!("127.0.0.1:{}", free_port());
        let sidecar = Self::start_sidecar_on(&listen, server, spool.path(), &["--token", token]).await?;
        Ok((sidecar, spool))
    }

    pub async fn start_sidecar_on(
        listen: &str,
        server: &str,
        spool_dir: &Path,
        extra_args: &[&str],
    ) -> anyhow::Result<Self> {
        // The replay bench measures the sidecar agent machines run (the
        // agent profile's), which `make bench` names here.
        let binary =
            std::env::var_os("LORE_E2E_SIDECAR").map(PathBuf::from).unwrap_or_else(|| workspace_binary("lore-sidecar"));
        let mut command = Command::new(binary);
        // The hooks' outbox a sidecar takes in at start is this test's,
        // never the user's.
        let agent_state = spool_dir.with_extension("agent-state");
        command
            .env("LORE_STATE_DIR", &agent_state)
            .args(["--listen", listen, "--server", server, "--log-json", "--spool-dir"])
            .arg(spool_dir)
            .args(extra_args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        Self::spawn_until_ready(command, "lore-sidecar serving").await
    }

    /// Runs any command of a Lore binary and waits until it logs
    /// `ready_message` with the address it serves on.
    pub async fn spawn_until_ready(mut command: Command, ready_message: &'static str) -> anyhow::Result<Self> {
        let mut child = command.spawn().context("spawn the process")?;
        let stderr = child.stderr.take().expect("stderr piped");
        let log = Arc::new(Mutex::new(Vec::new()));
        let (addr_tx, addr_rx) = tokio::sync::oneshot::channel();
        let log_reader = {
            let log = Arc::clone(&log);
            tokio::spawn(async move {
                let mut addr_tx = Some(addr_tx);
                let mut lines = BufReader::new(stderr).lines();
                while let Ok(Some(line)) = lines.next_line().await {
                    if let Some(addr) = serving_addr(&line, ready_message)
                        && let Some(tx) = addr_tx.take()
                    {
                        let _ = tx.send(addr);
                    }
                    log.lock().unwrap().push(line);
                }
            })
        };
        let addr = match tokio::time::timeout(START_TIMEOUT, addr_rx).await {
            Ok(Ok(addr)) => addr,
            _ => {
                let status = child.try_wait().ok().flatten();
                bail!("{ready_message:?} never came (exit {status:?}): {}", log.lock().unwrap().join("\n"));
            }
        };
        Ok(Self { child, addr, log, log_reader: Some(log_reader) })
    }

    /// The process id, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }

    /// `host:port` the server listens on.
    pub fn addr(&self) -> &str {
        &self.addr
    }

    pub fn endpoint(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub async fn channel(&self) -> Channel {
        Channel::from_shared(self.endpoint()).unwrap().connect().await.expect("connect to lore-server")
    }

    pub fn signal(&self, signal: Signal) {
        let pid = self.child.id().expect("server still running");
        signal::kill(Pid::from_raw(pid as i32), signal).expect("signal lore-server");
    }

    /// Waits for the process to exit, at most `timeout`.
    pub async fn wait(&mut self, timeout: Duration) -> anyhow::Result<ExitStatus> {
        let status = tokio::time::timeout(timeout, self.child.wait())
            .await
            .context("lore-server did not exit in time")?
            .context("wait for lore-server")?;
        if let Some(reader) = self.log_reader.take() {
            // A child of the process could hold stderr open: bounded.
            let _ = tokio::time::timeout(Duration::from_secs(5), reader).await;
        }
        Ok(status)
    }

    /// Sends SIGTERM and asserts that the server drains and exits 0.
    pub async fn stop(&mut self) {
        self.signal(nix::sys::signal::Signal::SIGTERM);
        let status = self.wait(Duration::from_secs(30)).await.unwrap();
        assert!(status.success(), "exit {status:?}: {}", self.log());
    }

    /// Every log line so far.
    pub fn log(&self) -> String {
        self.log.lock().unwrap().join("\n")
    }

    /// The address a JSON log line with `message` gave (e.g. the sidecar's
    /// MCP endpoint), once it has been logged.
    pub fn logged_addr(&self, message: &str) -> Option<String> {
        self.log.lock().unwrap().iter().find_map(|line| serving_addr(line, message))
    }
}

/// The address in the JSON log line that says the process serves.
fn serving_addr(line: &str, ready_message: &str) -> Option<String> {
    let value: serde_json::Value = serde_json::from_str(line).ok()?;
    if value.get("message")?.as_str()? != ready_message {
        return None;
    }
    Some(value.get("addr")?.as_str()?.to_owned())
}

/// Runs `lore-server` with `options` to completion and returns its exit code
/// and stderr (for start-up failures).
pub async fn run_server_to_exit(options: ServerOptions, timeout: Duration) -> (Option<i32>, String) {
    let output = tokio::time::timeout(timeout, server_command(&options).output())
        .await
        .expect("lore-server exits in time")
        .expect("lore-server runs");
    (output.status.code(), String::from_utf8_lossy(&output.stderr).into_owned())
}

/// Runs the `lore` CLI against `server` (in `dir` when given), with no
/// project or token from the environment; returns success, stdout, stderr.
pub async fn lore_cli(server: &ServerProcess, dir: Option<&Path>, args: &[&str]) -> (bool, String, String) {
    let mut command = Command::new(workspace_binary("lore"));
    if let Some(dir) = dir {
        command.current_dir(dir);
    }
    // The sessions `lore log` remembers per agent and project stay with
    // this server, not in the user's state directory.
    let state = std::env::temp_dir().join("lore-e2e-cli-state").join(server.endpoint().replace([':', '/'], "_"));
    let output = command
        .env_remove("LORE_PROJECT")
        .env_remove("LORE_TOKEN")
        .env_remove("LORE_SESSION_ID")
        .env_remove("LORE_AGENT_ID")
        .env("LORE_STATE_DIR", state)
        .arg("--server")
        .arg(server.endpoint())
        .args(args)
        .output()
        .await
        .expect("lore runs");
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// Opens a session of `agent` in `project` on a running server.
pub async fn start_session(
    client: &mut lore_proto::v1::action_service_client::ActionServiceClient<Channel>,
    project: &str,
    agent: &str,
) -> lore_proto::v1::Session {
    let request =
        lore_proto::v1::StartSessionRequest { project: project.into(), agent_id: agent.into(), ..Default::default() };
    client.start_session(request).await.expect("start session").into_inner().session.expect("session in response")
}

/// Logs one successful `tool_call` with `context` in `session` and returns
/// its id.
pub async fn log_tool_call(
    client: &mut lore_proto::v1::action_service_client::ActionServiceClient<Channel>,
    session: &lore_proto::v1::Session,
    context: serde_json::Value,
) -> String {
    let action = lore_proto::v1::Action {
        project: session.project.clone(),
        session_id: session.session_id.clone(),
        action_type: "tool_call".into(),
        outcome: lore_proto::v1::Outcome::Success as i32,
        context: Some(lore_proto::json::to_struct(&context)),
        occurred_at: Some(now()),
        ..Default::default()
    };
    let request = lore_proto::v1::LogActionRequest { action: Some(action) };
    client.log_action(request).await.expect("log the action").into_inner().ack.expect("an ack").id
}

/// A port that was free a moment ago, for a server that must come back on
/// the same address after a restart.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Resident memory (VmRSS) of process `pid` now, in bytes.
pub fn rss_bytes(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let kib = status.lines().find_map(|line| line.strip_prefix("VmRSS:"))?.trim().strip_suffix("kB")?.trim();
    Some(kib.parse::<u64>().ok()? * 1024)
}

/// The current instant as a proto timestamp.
pub fn now() -> prost_types::Timestamp {
    lore_server::grpc::convert::to_timestamp(chrono::Utc::now())
}

/// Asks `check` every 200 ms until it answers `Some`, for at most a minute
/// (what a sidecar may take to ship after an outage's backoff); `None` when
/// it never did, which the caller must look at.
#[must_use = "a wait that timed out says the check never held"]
pub async fn eventually<T, Fut>(mut check: impl FnMut() -> Fut) -> Option<T>
where
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(found) = check().await {
            return Some(found);
        }
        if tokio::time::Instant::now() > deadline {
            return None;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// A session's status and summary as stored, if it is.
pub async fn session_state(pool: &sqlx::PgPool, session: uuid::Uuid) -> Option<(String, String)> {
    sqlx::query_as("SELECT status, summary FROM sessions WHERE session_id = $1")
        .bind(session)
        .fetch_optional(pool)
        .await
        .expect("sessions are readable")
}

/// A session's tool calls as recorded, in order: (tool, action type,
/// outcome).
pub async fn session_tool_calls(pool: &sqlx::PgPool, session: uuid::Uuid) -> Vec<(String, String, String)> {
    sqlx::query_as(
        "SELECT context->>'tool', action_type, outcome FROM actions WHERE session_id = $1 AND context ? 'tool' ORDER BY chain_seq",
    )
    .bind(session)
    .fetch_all(pool)
    .await
    .expect("actions are readable")
}

/// A session's QA task results, in order: (attempt, passed, how many
/// failures it names).
pub async fn session_task_results(pool: &sqlx::PgPool, session: uuid::Uuid) -> Vec<(i32, bool, i32)> {
    sqlx::query_as(
        "SELECT attempt, passed, cardinality(failure_ids) FROM qa_task_results WHERE session_id = $1 ORDER BY attempt",
    )
    .bind(session)
    .fetch_all(pool)
    .await
    .expect("read the session's task results")
}

/// The fix attempt of a session's captured failure: its outcome and the
/// files it changed, if there is one.
pub async fn session_fix(pool: &sqlx::PgPool, session: uuid::Uuid) -> Option<(String, Vec<String>)> {
    sqlx::query_as(
        "SELECT a.outcome, a.files_changed FROM qa_fix_attempts a JOIN qa_failures f USING (failure_id) WHERE f.session_id = $1",
    )
    .bind(session)
    .fetch_optional(pool)
    .await
    .expect("fix attempts are readable")
}
