//! Soak with faults: agents work through their sidecars against one
//! lore-server while PostgreSQL crashes and restarts, the server is killed
//! and restarted, a sidecar is killed and restarted on its spool, the
//! network between the sidecars and the server is cut (a pausable proxy)
//! and the server is frozen (SIGSTOP). The faults come in rounds during the
//! first 60 % of the run; the rest is quiet, so memory can be judged after
//! a warm-up. Every minute (every tenth of a shorter run) it prints calls
//! and p99 per RPC, the errors seen and the RSS of the server and each
//! sidecar.
//!
//! [`run`] returns a [`Verdict`]: every acknowledged action stored exactly
//! once (counted in the database after the sidecars drain), only errors a
//! client should retry, and memory flat over the quiet phase. `make soak`
//! runs ten minutes of it (benches/soak.rs), `make test` a short one
//! (tests/soak.rs).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use lore_pgtest::{Durability, PgCluster, PgInstall, Shutdown};
use lore_proto::v1 as proto;
use lore_proto::v1::action_service_client::ActionServiceClient;
use lore_proto::v1::knowledge_service_client::KnowledgeServiceClient;
use lore_proto::v1::qa_learning_service_client::QaLearningServiceClient;
use lore_server::grpc::convert::to_timestamp;
use nix::sys::signal::Signal;
use tonic::transport::Channel;

use crate::proxy::Proxy;
use crate::{ServerOptions, ServerProcess, TestDatabase, default_cache_dir, free_port, rss_bytes};

/// Calls an agent makes without the sidecar get this long.
const CALL_DEADLINE: Duration = Duration::from_secs(5);
/// Codes a client should retry: the outages' and the freeze's.
const RETRYABLE: [tonic::Code; 3] = [tonic::Code::Unavailable, tonic::Code::DeadlineExceeded, tonic::Code::Cancelled];
/// The kind of error of a call whose connection broke before any answer.
const CONNECTION_LOST: &str = "connection lost";
/// The kind of error of a call the client stopped waiting for (tonic says
/// Cancelled).
const DEADLINE: &str = "client deadline";
/// Faults happen between these shares of the run; the rest is quiet.
const FAULT_PHASE: (f64, f64) = (0.1, 0.6);
/// Memory is judged from here to the end: the quiet phase after a warm-up.
const MEMORY_FROM: f64 = 0.7;
/// How much a process may grow over the quiet phase and still be flat:
/// allocator arenas and caches settle in steps of a few MiB.
const MEMORY_SLACK: (f64, u64) = (0.10, 8 << 20);
/// The longest outage of one fault.
const MAX_OUTAGE: Duration = Duration::from_secs(10);

/// How long and how many.
#[derive(Debug, Clone)]
pub struct Settings {
    pub duration: Duration,
    pub agents: usize,
}

impl Settings {
    /// `LORE_SOAK_SECS` and `LORE_SOAK_AGENTS`, with defaults.
    pub fn from_env(default_secs: u64, default_agents: usize) -> Self {
        let read = |name: &str| std::env::var(name).ok().and_then(|value| value.parse::<u64>().ok());
        Self {
            duration: Duration::from_secs(read("LORE_SOAK_SECS").unwrap_or(default_secs)),
            agents: read("LORE_SOAK_AGENTS").map_or(default_agents, |agents| agents.max(1) as usize),
        }
    }

    /// Two agents share a sidecar.
    fn sidecars(&self) -> usize {
        self.agents.div_ceil(2)
    }

    /// Two rounds of every fault in a long run, one in a short one.
    fn rounds(&self) -> usize {
        if self.duration >= Duration::from_secs(300) { 2 } else { 1 }
    }
}

#[derive(Debug, Clone, Copy)]
enum Fault {
    RestartPostgres,
    KillServer,
    KillSidecar,
    CutNetwork,
    FreezeServer,
}

const FAULTS: [Fault; 5] =
    [Fault::RestartPostgres, Fault::KillServer, Fault::KillSidecar, Fault::CutNetwork, Fault::FreezeServer];

impl Fault {
    fn describe(self) -> &'static str {
        match self {
            Fault::RestartPostgres => "PostgreSQL crashes (immediate shutdown) and restarts",
            Fault::KillServer => "the server is killed (SIGKILL) and restarted",
            Fault::KillSidecar => "a sidecar is killed (SIGKILL) and restarted on its spool",
            Fault::CutNetwork => "the network to the server is cut",
            Fault::FreezeServer => "the server is frozen (SIGSTOP)",
        }
    }
}

/// What the run found.
#[derive(Debug)]
pub struct Verdict {
    pub acknowledged: usize,
    pub stored: usize,
    pub duplicated: usize,
    /// Errors clients saw, by RPC and code.
    pub errors: BTreeMap<(&'static str, String), u64>,
    pub memory: Vec<MemoryTrend>,
    /// When each fault happened.
    pub faults: Vec<String>,
}

/// One process's resident memory over the quiet phase.
#[derive(Debug)]
pub struct MemoryTrend {
    pub process: String,
    /// At the end of the warm-up.
    pub warm: u64,
    /// The highest after that.
    pub peak: u64,
}

impl MemoryTrend {
    pub fn is_flat(&self) -> bool {
        self.peak as f64 <= self.warm as f64 * (1.0 + MEMORY_SLACK.0) + MEMORY_SLACK.1 as f64
    }
}

impl Verdict {
    /// Everything that went wrong; empty when the soak passed.
    pub fn failures(&self) -> Vec<String> {
        let mut failures = Vec::new();
        let lost = self.acknowledged - self.stored;
        if lost > 0 {
            failures.push(format!("{lost} acknowledged actions lost"));
        }
        if self.duplicated > 0 {
            failures.push(format!("{} actions stored more than once", self.duplicated));
        }
        for ((rpc, code), count) in &self.errors {
            if !is_retryable(code) {
                failures.push(format!("{rpc}: {count} x {code}, which a client should not retry"));
            }
        }
        for trend in self.memory.iter().filter(|trend| !trend.is_flat()) {
            failures.push(format!(
                "{} grew from {} to {} MiB over the quiet phase",
                trend.process,
                mib(trend.warm),
                mib(trend.peak)
            ));
        }
        failures
    }
}

#[derive(Default)]
struct Window {
    latencies: BTreeMap<&'static str, Histogram<u64>>,
    errors: BTreeMap<(&'static str, String), u64>,
}

#[derive(Default)]
struct Recorder {
    window: Mutex<Window>,
    all_errors: Mutex<BTreeMap<(&'static str, String), u64>>,
    /// The first message of each kind of error, to tell what it was.
    first_messages: Mutex<BTreeMap<(&'static str, String), String>>,
    acked: Mutex<Vec<String>>,
}

impl Recorder {
    fn record(&self, rpc: &'static str, begin: Instant, result: Result<(), tonic::Status>) {
        let mut window = self.window.lock().unwrap();
        match result {
            Ok(()) => {
                let histogram = window.latencies.entry(rpc).or_insert_with(|| Histogram::new(3).expect("histogram"));
                let _ = histogram.record(begin.elapsed().as_micros() as u64);
            }
            Err(status) => {
                let key = (rpc, error_kind(&status));
                *window.errors.entry(key.clone()).or_default() += 1;
                *self.all_errors.lock().unwrap().entry(key.clone()).or_default() += 1;
                self.first_messages.lock().unwrap().entry(key).or_insert_with(|| describe(&status));
            }
        }
    }

    fn take_window(&self) -> Window {
        std::mem::take(&mut *self.window.lock().unwrap())
    }
}

/// What an error was to its client: the code the server answered, a
/// deadline the client gave up at, or [`CONNECTION_LOST`] when the client
/// made the status up from a broken connection. tonic says Unknown
/// ("transport error") or Cancelled ("operation was canceled") there, where
/// the gRPC spec says UNAVAILABLE (grpc/grpc-rust#628); such a status
/// carries its transport error as source, an answer from a server never does.
fn error_kind(status: &tonic::Status) -> String {
    let mut chain = std::iter::successors(std::error::Error::source(status), |error| error.source());
    let from_the_client = std::error::Error::source(status).is_some();
    if status.message() == "Timeout expired" || chain.any(|error| error.is::<tonic::TimeoutExpired>()) {
        DEADLINE.into()
    } else if from_the_client && matches!(status.code(), tonic::Code::Unknown | tonic::Code::Cancelled) {
        CONNECTION_LOST.into()
    } else {
        format!("{:?}", status.code())
    }
}

/// Whether a client should retry after an error of this kind.
fn is_retryable(kind: &str) -> bool {
    kind == CONNECTION_LOST || kind == DEADLINE || RETRYABLE.iter().any(|code| format!("{code:?}") == kind)
}

/// The status's message and the chain of errors under it.
fn describe(status: &tonic::Status) -> String {
    let mut text = format!("{:?}: {}", status.code(), status.message());
    let mut source = std::error::Error::source(status);
    while let Some(error) = source {
        text.push_str(&format!(" <- {error}"));
        source = error.source();
    }
    text
}

fn deadline<T>(message: T) -> tonic::Request<T> {
    let mut request = tonic::Request::new(message);
    request.set_timeout(CALL_DEADLINE);
    request
}

fn action(session: &proto::Session, index: u64) -> proto::Action {
    let outcome = if index.is_multiple_of(11) { proto::Outcome::Failure } else { proto::Outcome::Success };
    proto::Action {
        action_id: uuid::Uuid::now_v7().to_string(),
        session_id: session.session_id.clone(),
        project: session.project.clone(),
        agent_id: session.agent_id.clone(),
        action_type: ["shell", "edit", "test", "commit"][index as usize % 4].into(),
        category: "soak".into(),
        outcome: outcome as i32,
        context: Some(lore_proto::json::to_struct(&serde_json::json!({"step": index, "cmd": "cargo test"}))),
        duration_ms: 20,
        occurred_at: Some(crate::now()),
        ..Default::default()
    }
}

/// Drains a server stream; the first error is the call's.
async fn drain<T>(response: Result<tonic::Response<tonic::Streaming<T>>, tonic::Status>) -> Result<(), tonic::Status> {
    let mut stream = response?.into_inner();
    while stream.message().await?.is_some() {}
    Ok(())
}

/// One agent: mostly actions through its sidecar (retried with the same id
/// until acknowledged), some searches, warnings, failures, resumes and
/// exports straight to the server (through the proxy).
async fn agent(number: usize, sidecar: String, server: String, recorder: Arc<Recorder>, stop: Arc<AtomicBool>) {
    let connect = |address: String| Channel::from_shared(address).expect("address").connect_lazy();
    let mut local = ActionServiceClient::new(connect(sidecar));
    let server_channel = connect(server);
    let mut actions = ActionServiceClient::new(server_channel.clone());
    let mut knowledge = KnowledgeServiceClient::new(server_channel.clone());
    let mut qa = QaLearningServiceClient::new(server_channel);
    let agent_id = format!("soak-agent-{number}");
    let session = loop {
        let start =
            proto::StartSessionRequest { project: "soak".into(), agent_id: agent_id.clone(), ..Default::default() };
        match local.start_session(deadline(start)).await {
            Ok(response) => break response.into_inner().session.expect("session"),
            Err(_) => tokio::time::sleep(Duration::from_millis(200)).await,
        }
    };
    let mut index = 0u64;
    while !stop.load(Ordering::Relaxed) {
        index += 1;
        let begin = Instant::now();
        match index % 100 {
            0..=83 => {
                let action = action(&session, index);
                let id = action.action_id.clone();
                loop {
                    let begin = Instant::now();
                    let request = deadline(proto::LogActionRequest { action: Some(action.clone()) });
                    let result = local.log_action(request).await.map(drop);
                    let ok = result.is_ok();
                    recorder.record("LogAction (sidecar)", begin, result);
                    if ok {
                        recorder.acked.lock().unwrap().push(id);
                        break;
                    }
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
            84..=91 => {
                let query = proto::SearchQuery {
                    text: "flaky login test connection refused".into(),
                    limit: 5,
                    ..Default::default()
                };
                let result = knowledge
                    .search(deadline(proto::SearchRequest {
                        project: "soak".into(),
                        query: Some(query),
                        ..Default::default()
                    }))
                    .await;
                recorder.record("Search", begin, result.map(drop));
            }
            92..=95 => {
                let task = proto::Task {
                    task_id: format!("T-{number}-{index}"),
                    title: "fix the login form".into(),
                    ..Default::default()
                };
                let request =
                    proto::GetWarningsRequest { project: "soak".into(), task: Some(task), ..Default::default() };
                recorder.record("GetWarnings", begin, qa.get_warnings(deadline(request)).await.map(drop));
            }
            96..=97 => {
                let request = proto::CaptureFailureRequest {
                    failure_id: uuid::Uuid::now_v7().to_string(),
                    project: "soak".into(),
                    task: Some(proto::Task { task_id: format!("T-{number}-{index}"), ..Default::default() }),
                    error_messages: vec![format!("test login::case_{} failed: connection refused", index % 7)],
                    ..Default::default()
                };
                recorder.record("CaptureFailure", begin, qa.capture_failure(deadline(request)).await.map(drop));
            }
            98 => {
                let request = proto::ResumeRequest {
                    session_id: session.session_id.clone(),
                    recent_limit: 20,
                    ..Default::default()
                };
                recorder.record("Resume", begin, drain(actions.resume(deadline(request)).await).await);
            }
            _ => {
                // The last minute of this session, as training data.
                let minute_ago = chrono::Utc::now() - chrono::Duration::minutes(1);
                let request = proto::ExportRequest {
                    project: "soak".into(),
                    format: proto::ExportFormat::Jsonl as i32,
                    session_id: session.session_id.clone(),
                    window: Some(proto::TimeRange { start: Some(to_timestamp(minute_ago)), end: None }),
                    ..Default::default()
                };
                recorder.record("Export", begin, drain(actions.export(deadline(request)).await).await);
            }
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn mib(bytes: u64) -> String {
    format!("{:.0}", bytes as f64 / (1024.0 * 1024.0))
}

fn report(elapsed: Duration, window: &Window, fleet: &Fleet) {
    let rpcs: Vec<String> = window
        .latencies
        .iter()
        .map(|(rpc, histogram)| {
            format!("{rpc} {} p99 {:.1} ms", histogram.len(), histogram.value_at_quantile(0.99) as f64 / 1000.0)
        })
        .collect();
    let errors: Vec<String> =
        window.errors.iter().map(|((rpc, code), count)| format!("{rpc} {code} x{count}")).collect();
    let rss: Vec<String> = fleet.rss().into_iter().map(|(_, rss)| rss.map_or("-".into(), mib)).collect();
    println!(
        "| {:>4.0} s | {} | {} | {} | {} |",
        elapsed.as_secs_f64(),
        rpcs.join("; "),
        if errors.is_empty() { "-".into() } else { errors.join("; ") },
        rss[0],
        rss[1..].join(" / ")
    );
}

/// The processes under test and what they need to come back.
/// Fields drop in order: the processes before the database under them.
struct Fleet {
    sidecars: Vec<ServerProcess>,
    server: ServerProcess,
    proxy: Proxy,
    postgres: PgCluster,
    database_url: String,
    server_addr: String,
    sidecar_addrs: Vec<String>,
    spools: tempfile::TempDir,
    sidecars_killed: usize,
}

impl Fleet {
    async fn start(sidecar_count: usize) -> anyhow::Result<(Self, TestDatabase)> {
        let cache_dir = default_cache_dir();
        let install = {
            let cache_dir = cache_dir.clone();
            tokio::task::spawn_blocking(move || PgInstall::ensure(&cache_dir)).await??
        };
        // Commits must survive the PostgreSQL crash: the soak counts them.
        let postgres = PgCluster::start_ephemeral(&install, &cache_dir, Durability::SurvivesPostgresCrash).await?;
        let database = TestDatabase::on_server(&postgres.url("postgres")).await?;
        let server_addr = format!("127.0.0.1:{}", free_port());
        let proxy = Proxy::start(&server_addr).await?;
        let mut fleet = Self {
            postgres,
            database_url: database.url.clone(),
            server: ServerProcess::start(Self::server_options(&database.url, &server_addr)).await?,
            server_addr,
            proxy,
            sidecars: Vec::new(),
            sidecar_addrs: (0..sidecar_count).map(|_| format!("127.0.0.1:{}", free_port())).collect(),
            spools: tempfile::tempdir_in(&cache_dir)?,
            sidecars_killed: 0,
        };
        for number in 0..sidecar_count {
            let sidecar = fleet.start_sidecar(number).await?;
            fleet.sidecars.push(sidecar);
        }
        Ok((fleet, database))
    }

    fn server_options(database_url: &str, addr: &str) -> ServerOptions {
        ServerOptions::with_database(database_url).env("LORE_LISTEN_ADDR", addr)
    }

    /// The server as clients reach it: through the proxy.
    fn server_endpoint(&self) -> String {
        format!("http://{}", self.proxy.addr())
    }

    async fn start_sidecar(&self, number: usize) -> anyhow::Result<ServerProcess> {
        let spool = self.spools.path().join(format!("spool-{number}"));
        ServerProcess::start_sidecar_on(&self.sidecar_addrs[number], &self.server_endpoint(), &spool, &[]).await
    }

    async fn inflict(&mut self, fault: Fault, outage: Duration) -> anyhow::Result<()> {
        match fault {
            Fault::RestartPostgres => self.postgres.restart(Shutdown::Immediate, outage).await?,
            Fault::KillServer => {
                self.server.signal(Signal::SIGKILL);
                self.server.wait(Duration::from_secs(10)).await?;
                tokio::time::sleep(outage).await;
                self.server = ServerProcess::start(Self::server_options(&self.database_url, &self.server_addr)).await?;
            }
            Fault::KillSidecar => {
                let number = self.sidecars_killed % self.sidecars.len();
                self.sidecars_killed += 1;
                self.sidecars[number].signal(Signal::SIGKILL);
                self.sidecars[number].wait(Duration::from_secs(10)).await?;
                tokio::time::sleep(outage).await;
                self.sidecars[number] = self.start_sidecar(number).await?;
            }
            Fault::CutNetwork => self.proxy.cut(outage).await,
            Fault::FreezeServer => {
                self.server.signal(Signal::SIGSTOP);
                tokio::time::sleep(outage).await;
                self.server.signal(Signal::SIGCONT);
            }
        }
        Ok(())
    }

    /// (name, RSS) of every process now: the server first, then each sidecar.
    fn rss(&self) -> Vec<(String, Option<u64>)> {
        let mut rss = vec![("server".to_owned(), self.server.pid().and_then(rss_bytes))];
        for (number, sidecar) in self.sidecars.iter().enumerate() {
            rss.push((format!("sidecar {number}"), sidecar.pid().and_then(rss_bytes)));
        }
        rss
    }
}

/// Runs the soak and prints its table as it goes.
pub async fn run(settings: &Settings) -> anyhow::Result<Verdict> {
    let duration = settings.duration;
    let sidecar_count = settings.sidecars();
    let tick = Duration::from_secs(60).min(duration / 10);
    let (mut fleet, database) = Fleet::start(sidecar_count).await?;

    // As shares of the run.
    let count = FAULTS.len() * settings.rounds();
    let spacing = (FAULT_PHASE.1 - FAULT_PHASE.0) / count as f64;
    let schedule: Vec<(f64, Fault)> =
        (0..count).map(|index| (FAULT_PHASE.0 + spacing * index as f64, FAULTS[index % FAULTS.len()])).collect();
    let outage = MAX_OUTAGE.min(duration.mul_f64(spacing) / 3);

    println!(
        "# Soak with faults: {} agents, {sidecar_count} sidecars, {} s, {} faults of up to {:.0} s each\n",
        settings.agents,
        duration.as_secs(),
        schedule.len(),
        outage.as_secs_f64()
    );
    println!("| time | calls and p99 per RPC | errors | server RSS MiB | sidecar RSS MiB |");
    println!("|---:|---|---|---:|---|");
    let recorder = Arc::new(Recorder::default());
    let stop = Arc::new(AtomicBool::new(false));
    let tasks: Vec<_> = (0..settings.agents)
        .map(|number| {
            tokio::spawn(agent(
                number,
                format!("http://{}", fleet.sidecar_addrs[number % sidecar_count]),
                fleet.server_endpoint(),
                Arc::clone(&recorder),
                Arc::clone(&stop),
            ))
        })
        .collect();

    let started = Instant::now();
    let share = || started.elapsed().as_secs_f64() / duration.as_secs_f64();
    let mut pending = schedule.into_iter().peekable();
    let mut next_report = started + tick;
    let mut next_sample = started;
    let mut faults = Vec::new();
    // Per process: RSS at the end of the warm-up, and the peak after.
    let mut memory: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    while started.elapsed() < duration {
        tokio::time::sleep(Duration::from_millis(250)).await;
        if let Some(&(at, fault)) = pending.peek()
            && share() >= at
        {
            pending.next();
            faults.push(format!("{:.0} s: {}", started.elapsed().as_secs_f64(), fault.describe()));
            fleet.inflict(fault, outage).await?;
        }
        if Instant::now() >= next_sample {
            next_sample += Duration::from_secs(1);
            if share() >= MEMORY_FROM {
                for (process, rss) in fleet.rss() {
                    let Some(rss) = rss else { continue };
                    let (_, peak) = memory.entry(process).or_insert((rss, rss));
                    *peak = (*peak).max(rss);
                }
            }
        }
        if Instant::now() >= next_report {
            report(started.elapsed(), &recorder.take_window(), &fleet);
            next_report += tick;
        }
    }
    stop.store(true, Ordering::Relaxed);
    for task in tasks {
        let _ = task.await;
    }
    report(started.elapsed(), &recorder.take_window(), &fleet);
    println!("\nFaults: {}", faults.join("; "));

    // Every acknowledged action, once, after the sidecars drained.
    let acked = recorder.acked.lock().unwrap().clone();
    let drain_deadline = Instant::now() + Duration::from_secs(120);
    let (stored, duplicated) = loop {
        let counts: Vec<(String, i64)> = sqlx::query_as(
            "SELECT action_id::text, count(*) FROM actions WHERE action_id = ANY($1::uuid[]) GROUP BY action_id",
        )
        .bind(&acked)
        .fetch_all(&database.pool)
        .await?;
        let duplicated = counts.iter().filter(|(_, count)| *count > 1).count();
        if counts.len() == acked.len() || Instant::now() > drain_deadline {
            break (counts.len(), duplicated);
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    let verdict = Verdict {
        acknowledged: acked.len(),
        stored,
        duplicated,
        errors: recorder.all_errors.lock().unwrap().clone(),
        memory: memory.into_iter().map(|(process, (warm, peak))| MemoryTrend { process, warm, peak }).collect(),
        faults,
    };
    println!(
        "acknowledged: {}, stored: {stored}, lost: {}, duplicated: {duplicated}",
        verdict.acknowledged,
        verdict.acknowledged - stored
    );
    println!("errors: {:?}", verdict.errors);
    for ((rpc, code), message) in recorder.first_messages.lock().unwrap().iter() {
        println!("first {rpc} {code}: {message}");
    }
    for trend in &verdict.memory {
        println!(
            "memory over the quiet phase: {} {} -> {} MiB ({})",
            trend.process,
            mib(trend.warm),
            mib(trend.peak),
            if trend.is_flat() { "flat" } else { "GROWING" }
        );
    }
    drop(database);
    drop(fleet);
    Ok(verdict)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outages_and_deadlines_are_retried_and_the_rest_is_not() {
        for kind in [CONNECTION_LOST, DEADLINE, "Unavailable", "DeadlineExceeded", "Cancelled"] {
            assert!(is_retryable(kind), "{kind}");
        }
        for kind in ["Internal", "Unknown", "InvalidArgument", "NotFound"] {
            assert!(!is_retryable(kind), "{kind}");
        }
        let timeout = tonic::Status::from_error(Box::new(tonic::TimeoutExpired(())));
        assert_eq!(error_kind(&timeout), DEADLINE);
        let broken = tonic::Status::from_error("connection reset".into());
        assert_eq!(error_kind(&broken), CONNECTION_LOST);
        assert_eq!(error_kind(&tonic::Status::unknown("from the server")), "Unknown");
        assert_eq!(error_kind(&tonic::Status::internal("from the server")), "Internal");
    }
}
