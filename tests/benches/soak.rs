//! Soak with faults (`make soak`): agents work through their sidecars
//! against one lore-server for `LORE_SOAK_SECS` (default 600) while the
//! server is killed and restarted, a sidecar is killed and restarted, and
//! the server is frozen (SIGSTOP: its connections hang as in a network cut)
//! and thawed. Every minute (every tenth of the run when shorter) it prints
//! calls and p99 per RPC, the errors seen and the RSS of the server and the
//! sidecars. At the end it waits for the sidecars to drain and checks, in
//! the database, that every acknowledged action is stored exactly once, and
//! that every error a client saw was one it should retry. Exits non-zero
//! otherwise.
//!
//! Not yet: restarting PostgreSQL under the server (the harness's
//! PostgreSQL takes a new port at each start).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use lore_e2e::{ServerOptions, ServerProcess, TestDatabase, default_cache_dir, free_port, rss_bytes};
use lore_proto::v1 as proto;
use lore_proto::v1::action_service_client::ActionServiceClient;
use lore_proto::v1::knowledge_service_client::KnowledgeServiceClient;
use lore_proto::v1::qa_learning_service_client::QaLearningServiceClient;
use nix::sys::signal::Signal;
use tonic::transport::Channel;

/// Calls an agent makes without the sidecar get this long.
const CALL_DEADLINE: Duration = Duration::from_secs(5);
/// Codes a client should retry: the outages' and the freeze's.
const RETRYABLE: [tonic::Code; 3] = [tonic::Code::Unavailable, tonic::Code::DeadlineExceeded, tonic::Code::Cancelled];

#[derive(Default)]
struct Window {
    latencies: BTreeMap<&'static str, Histogram<u64>>,
    errors: BTreeMap<(&'static str, String), u64>,
}

#[derive(Default)]
struct Recorder {
    window: Mutex<Window>,
    all_errors: Mutex<BTreeMap<(&'static str, String), u64>>,
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
                let key = (rpc, format!("{:?}", status.code()));
                *window.errors.entry(key.clone()).or_default() += 1;
                *self.all_errors.lock().unwrap().entry(key).or_default() += 1;
            }
        }
    }

    fn take_window(&self) -> Window {
        std::mem::take(&mut *self.window.lock().unwrap())
    }
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
        occurred_at: Some(lore_e2e::now()),
        ..Default::default()
    }
}

/// One agent: mostly actions through its sidecar (retried with the same id
/// until acknowledged), some searches, warnings, failures and resumes
/// straight to the server.
async fn agent(number: usize, sidecar: String, server: String, recorder: Arc<Recorder>, stop: Arc<AtomicBool>) {
    let connect = |address: String| async move { Channel::from_shared(address).unwrap().connect_lazy() };
    let mut local = ActionServiceClient::new(connect(sidecar).await);
    let server_channel = connect(server).await;
    let mut actions = ActionServiceClient::new(server_channel.clone());
    let mut knowledge = KnowledgeServiceClient::new(server_channel.clone());
    let mut qa = QaLearningServiceClient::new(server_channel);
    let agent_id = format!("soak-agent-{number}");
    let session = loop {
        let start =
            proto::StartSessionRequest { project: "soak".into(), agent_id: agent_id.clone(), ..Default::default() };
        match local.start_session(deadline(start)).await {
            Ok(response) => break response.into_inner().session.unwrap(),
            Err(_) => tokio::time::sleep(Duration::from_millis(200)).await,
        }
    };
    let mut index = 0u64;
    while !stop.load(Ordering::Relaxed) {
        index += 1;
        let begin = Instant::now();
        match index % 100 {
            0..=84 => {
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
            85..=92 => {
                let query = proto::SearchQuery {
                    text: "flaky login test connection refused".into(),
                    limit: 5,
                    ..Default::default()
                };
                let result = knowledge
                    .search(deadline(proto::SearchRequest { project: "soak".into(), query: Some(query) }))
                    .await;
                recorder.record("Search", begin, result.map(drop));
            }
            93..=96 => {
                let task = proto::Task {
                    task_id: format!("T-{number}-{index}"),
                    title: "fix the login form".into(),
                    ..Default::default()
                };
                let request =
                    proto::GetWarningsRequest { project: "soak".into(), task: Some(task), ..Default::default() };
                recorder.record("GetWarnings", begin, qa.get_warnings(deadline(request)).await.map(drop));
            }
            97..=98 => {
                let request = proto::CaptureFailureRequest {
                    failure_id: uuid::Uuid::now_v7().to_string(),
                    project: "soak".into(),
                    task: Some(proto::Task { task_id: format!("T-{number}-{index}"), ..Default::default() }),
                    error_messages: vec![format!("test login::case_{} failed: connection refused", index % 7)],
                    ..Default::default()
                };
                recorder.record("CaptureFailure", begin, qa.capture_failure(deadline(request)).await.map(drop));
            }
            _ => {
                let request = proto::ResumeRequest {
                    session_id: session.session_id.clone(),
                    recent_limit: 20,
                    ..Default::default()
                };
                let result = match actions.resume(deadline(request)).await {
                    Ok(response) => {
                        let mut events = response.into_inner();
                        loop {
                            match events.message().await {
                                Ok(Some(_)) => continue,
                                Ok(None) => break Ok(()),
                                Err(status) => break Err(status),
                            }
                        }
                    }
                    Err(status) => Err(status),
                };
                recorder.record("Resume", begin, result);
            }
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn mib(bytes: Option<u64>) -> String {
    bytes.map_or("-".into(), |bytes| format!("{:.0}", bytes as f64 / (1024.0 * 1024.0)))
}

fn report(elapsed: Duration, window: &Window, server: &ServerProcess, sidecars: &[ServerProcess]) {
    let rpcs: Vec<String> = window
        .latencies
        .iter()
        .map(|(rpc, histogram)| {
            format!("{rpc} {} p99 {:.1} ms", histogram.len(), histogram.value_at_quantile(0.99) as f64 / 1000.0)
        })
        .collect();
    let errors: Vec<String> =
        window.errors.iter().map(|((rpc, code), count)| format!("{rpc} {code} x{count}")).collect();
    let sidecar_rss: Vec<String> = sidecars.iter().map(|sidecar| mib(sidecar.pid().and_then(rss_bytes))).collect();
    println!(
        "| {:>4.0} s | {} | {} | {} | {} |",
        elapsed.as_secs_f64(),
        rpcs.join("; "),
        if errors.is_empty() { "-".into() } else { errors.join("; ") },
        mib(server.pid().and_then(rss_bytes)),
        sidecar_rss.join(" / ")
    );
}

#[tokio::main]
async fn main() {
    let seconds: u64 = std::env::var("LORE_SOAK_SECS").ok().and_then(|value| value.parse().ok()).unwrap_or(600);
    let agents: usize = std::env::var("LORE_SOAK_AGENTS").ok().and_then(|value| value.parse().ok()).unwrap_or(6);
    let sidecar_count = agents.div_ceil(2);
    let duration = Duration::from_secs(seconds);
    let tick = Duration::from_secs(60).min(duration / 10);

    let database = TestDatabase::new().await.expect("database");
    let address = format!("127.0.0.1:{}", free_port());
    let server_options = || ServerOptions::with_database(&database.url).env("LORE_LISTEN_ADDR", &address);
    let mut server = ServerProcess::start(server_options()).await.expect("server");
    let work = tempfile::tempdir_in(default_cache_dir()).expect("work dir");
    let mut sidecars = Vec::new();
    let mut sidecar_addresses = Vec::new();
    for number in 0..sidecar_count {
        let listen = format!("127.0.0.1:{}", free_port());
        let spool = work.path().join(format!("spool-{number}"));
        sidecars.push(
            ServerProcess::start_sidecar_on(&listen, &format!("http://{address}"), &spool, &[]).await.expect("sidecar"),
        );
        sidecar_addresses.push(listen);
    }

    println!("# Soak with faults: {agents} agents, {sidecar_count} sidecars, {seconds} s\n");
    println!("| time | calls and p99 per RPC | errors | server RSS MiB | sidecar RSS MiB |");
    println!("|---:|---|---|---:|---|");
    let recorder = Arc::new(Recorder::default());
    let stop = Arc::new(AtomicBool::new(false));
    let tasks: Vec<_> = (0..agents)
        .map(|number| {
            tokio::spawn(agent(
                number,
                format!("http://{}", sidecar_addresses[number % sidecar_count]),
                format!("http://{address}"),
                Arc::clone(&recorder),
                Arc::clone(&stop),
            ))
        })
        .collect();

    // The faults, at fixed shares of the run.
    let started = Instant::now();
    let mut faults: Vec<(f64, &str)> =
        vec![(0.2, "kill the server"), (0.4, "kill a sidecar"), (0.6, "freeze the server (network cut)")];
    let mut next_report = started + tick;
    let end = started + duration;
    let mut fault_log = Vec::new();
    while Instant::now() < end {
        tokio::time::sleep(Duration::from_millis(250)).await;
        let share = started.elapsed().as_secs_f64() / duration.as_secs_f64();
        if let Some(&(at, fault)) = faults.first()
            && share >= at
        {
            faults.remove(0);
            fault_log.push(format!("{:.0} s: {fault}", started.elapsed().as_secs_f64()));
            match fault {
                "kill the server" => {
                    server.signal(Signal::SIGKILL);
                    let _ = server.wait(Duration::from_secs(10)).await;
                    tokio::time::sleep(Duration::from_secs(3)).await;
                    server = ServerProcess::start(server_options()).await.expect("server restarts");
                }
                "kill a sidecar" => {
                    sidecars[0].signal(Signal::SIGKILL);
                    let _ = sidecars[0].wait(Duration::from_secs(10)).await;
                    tokio::time::sleep(Duration::from_secs(2)).await;
                    let spool = work.path().join("spool-0");
                    sidecars[0] = ServerProcess::start_sidecar_on(
                        &sidecar_addresses[0],
                        &format!("http://{address}"),
                        &spool,
                        &[],
                    )
                    .await
                    .expect("sidecar restarts");
                }
                _ => {
                    server.signal(Signal::SIGSTOP);
                    tokio::time::sleep(Duration::from_secs(10)).await;
                    server.signal(Signal::SIGCONT);
                }
            }
        }
        if Instant::now() >= next_report {
            report(started.elapsed(), &recorder.take_window(), &server, &sidecars);
            next_report += tick;
        }
    }
    stop.store(true, Ordering::Relaxed);
    for task in tasks {
        let _ = task.await;
    }
    report(started.elapsed(), &recorder.take_window(), &server, &sidecars);
    println!("\nFaults: {}", fault_log.join("; "));

    // Every acknowledged action, once.
    let acked = recorder.acked.lock().unwrap().clone();
    let drain_deadline = Instant::now() + Duration::from_secs(120);
    let (stored, duplicated) = loop {
        let counts: Vec<(String, i64)> = sqlx::query_as(
            "SELECT action_id::text, count(*) FROM actions WHERE action_id = ANY($1::uuid[]) GROUP BY action_id",
        )
        .bind(&acked)
        .fetch_all(&database.pool)
        .await
        .expect("count stored actions");
        let duplicated = counts.iter().filter(|(_, count)| *count > 1).count();
        if counts.len() == acked.len() || Instant::now() > drain_deadline {
            break (counts.len(), duplicated);
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    let lost = acked.len() - stored;
    let errors = recorder.all_errors.lock().unwrap().clone();
    let not_retryable: Vec<_> = errors
        .iter()
        .filter(|((_, code), _)| !RETRYABLE.iter().any(|retryable| format!("{retryable:?}") == *code))
        .collect();
    println!("acknowledged: {}, stored: {stored}, lost: {lost}, duplicated: {duplicated}", acked.len());
    println!("errors: {errors:?}");
    if lost > 0 || duplicated > 0 || !not_retryable.is_empty() {
        eprintln!(
            "soak FAILED: lost {lost}, duplicated {duplicated}, errors a client should not retry: {not_retryable:?}"
        );
        std::process::exit(1);
    }
    println!("soak ok: nothing lost, nothing doubled, only retryable errors");
}
