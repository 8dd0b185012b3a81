//! Sidecar replay after an outage and the sidecar's memory (`make bench`),
//! with the real binaries: lore-server and lore-sidecar processes, the
//! throwaway PostgreSQL of the test harness (fsync off), all on this machine.
//!
//! 1. The sidecar starts with no server: its RSS idle.
//! 2. An agent streams N actions (default 1,000,000; `LORE_BENCH_REPLAY_ACTIONS`)
//!    into it while the server is down: spool rate and RSS while spooling.
//! 3. The server starts: time to drain, replay rate from the first shipped
//!    action to the last, RSS while replaying.
//! 4. Baseline in the same run: the same agent streaming actions straight to
//!    the server's Ingest, which bounds what any replay can reach here.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};
use lore_e2e::{ServerOptions, ServerProcess, TestDatabase, default_cache_dir, free_port};
use lore_proto::v1 as proto;
use lore_proto::v1::action_service_client::ActionServiceClient;
use lore_proto::v1::sidecar_service_client::SidecarServiceClient;
use tonic::transport::Channel;

const BATCH: usize = 1000;
const SESSIONS: usize = 10;
const BASELINE_ACTIONS: usize = 200_000;

fn action(session: &proto::Session, index: usize) -> proto::Action {
    lore_server::testing::bench_action(session, index)
}

async fn start_sessions(client: &mut ActionServiceClient<Channel>, project: &str) -> Vec<proto::Session> {
    let mut sessions = Vec::new();
    for agent in 0..SESSIONS {
        sessions.push(lore_e2e::start_session(client, project, &format!("agent-{agent}")).await);
    }
    sessions
}

/// Streams `count` actions on one Ingest stream in batches of [`BATCH`],
/// each batch mixing the sessions; returns once every batch is acked.
async fn ingest(channel: Channel, sessions: &[proto::Session], count: usize, progress: &ProgressBar) -> Duration {
    let started = Instant::now();
    let batches = count.div_ceil(BATCH);
    let requests = {
        let sessions = sessions.to_vec();
        tokio_stream::iter((0..batches).map(move |batch| {
            proto::IngestRequest {
                sequence: batch as u64,
                actions: (batch * BATCH..((batch + 1) * BATCH).min(count))
                    .map(|index| action(&sessions[index % sessions.len()], index))
                    .collect(),
            }
        }))
    };
    let mut acks = ActionServiceClient::new(channel)
        .max_decoding_message_size(64 * 1024 * 1024)
        .ingest(requests)
        .await
        .expect("ingest stream")
        .into_inner();
    let mut stored = 0;
    while let Some(ack) = acks.message().await.expect("ingest ack") {
        stored += ack.stored as usize + ack.duplicates as usize;
        progress.set_position(stored as u64);
    }
    assert_eq!(stored, count, "every action acked");
    started.elapsed()
}

/// Samples a process's RSS every 50 ms; `take_max` returns the largest
/// sample since the last call.
struct RssSampler {
    max: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
}

impl RssSampler {
    fn start(pid: u32) -> Self {
        let (max, stop) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicBool::new(false)));
        let (max_in, stop_in) = (Arc::clone(&max), Arc::clone(&stop));
        std::thread::spawn(move || {
            while !stop_in.load(Ordering::Relaxed) {
                if let Some(rss) = lore_e2e::rss_bytes(pid) {
                    max_in.fetch_max(rss, Ordering::Relaxed);
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        });
        Self { max, stop }
    }

    fn take_max(&self) -> u64 {
        self.max.swap(0, Ordering::Relaxed)
    }
}

impl Drop for RssSampler {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
}

fn progress_bar(length: usize, message: &'static str) -> ProgressBar {
    let bar = ProgressBar::new(length as u64);
    bar.set_style(
        ProgressStyle::with_template("{msg:>10} [{bar:40}] {pos}/{len} {per_sec} eta {eta}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    bar.set_message(message);
    bar
}

#[tokio::main]
async fn main() {
    let actions: usize =
        std::env::var("LORE_BENCH_REPLAY_ACTIONS").ok().and_then(|value| value.parse().ok()).unwrap_or(1_000_000);
    let database = TestDatabase::new().await.expect("database");
    let server_port = free_port();
    let server_endpoint = format!("http://127.0.0.1:{server_port}");
    let spool = tempfile::tempdir_in(default_cache_dir()).expect("spool dir");
    let sidecar = ServerProcess::start_sidecar(&server_endpoint, spool.path(), &["--disk-budget-mb", "4096"])
        .await
        .expect("sidecar");
    let rss = RssSampler::start(sidecar.pid().expect("sidecar runs"));

    println!("sidecar replay after an outage: {actions} actions, batches of {BATCH}, {SESSIONS} sessions");
    tokio::time::sleep(Duration::from_secs(2)).await;
    let idle = rss.take_max();

    // The outage: everything goes to the spool.
    let mut agent = ActionServiceClient::new(sidecar.channel().await);
    let sessions = start_sessions(&mut agent, "replay").await;
    let bar = progress_bar(actions, "spooling");
    let spooling = ingest(sidecar.channel().await, &sessions, actions, &bar).await;
    bar.finish_and_clear();
    let spooling_rss = rss.take_max();
    let mut status = SidecarServiceClient::new(sidecar.channel().await);
    let spooled = status.status(proto::SidecarStatusRequest {}).await.expect("status").into_inner();

    // The server comes back.
    let server = ServerProcess::start(
        ServerOptions::with_database(&database.url).env("LORE_LISTEN_ADDR", &format!("127.0.0.1:{server_port}")),
    )
    .await
    .expect("server");
    let back = Instant::now();
    let bar = progress_bar(actions, "replaying");
    let mut first_shipped = None;
    loop {
        let now = status.status(proto::SidecarStatusRequest {}).await.expect("status").into_inner();
        if now.shipped > 0 && first_shipped.is_none() {
            first_shipped = Some(Instant::now());
        }
        bar.set_position(now.shipped + now.duplicates);
        if now.spooled_records == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    bar.finish_and_clear();
    let drained = back.elapsed();
    let replaying = first_shipped.expect("something shipped").elapsed();
    let replay_rss = rss.take_max();
    let stored: i64 = sqlx::query_scalar("SELECT count(*) FROM actions WHERE project = 'replay'")
        .fetch_one(&database.pool)
        .await
        .expect("count");
    assert_eq!(stored as usize, actions, "every spooled action is in the database once");

    // Baseline: the same agent straight to the server.
    let mut direct = ActionServiceClient::new(server.channel().await);
    let sessions = start_sessions(&mut direct, "baseline").await;
    let bar = progress_bar(BASELINE_ACTIONS, "baseline");
    let baseline = ingest(server.channel().await, &sessions, BASELINE_ACTIONS, &bar).await;
    bar.finish_and_clear();

    let rate = |count: usize, took: Duration| count as f64 / took.as_secs_f64();
    println!(
        "  spooling (server down): {:>9.0} actions/s  ({:.1} s; spool {} on disk)",
        rate(actions, spooling),
        spooling.as_secs_f64(),
        mib(spooled.spooled_bytes)
    );
    println!(
        "  replay:                 {:>9.0} actions/s  (first to last shipped {:.1} s; drained {:.1} s after the server was up)",
        rate(actions, replaying),
        replaying.as_secs_f64(),
        drained.as_secs_f64()
    );
    println!(
        "  baseline, agent -> server Ingest directly: {:>9.0} actions/s ({BASELINE_ACTIONS} actions); replay / baseline = {:.0}%",
        rate(BASELINE_ACTIONS, baseline),
        100.0 * rate(actions, replaying) / rate(BASELINE_ACTIONS, baseline)
    );
    println!("  sidecar RSS (max): idle {}, spooling {}, replaying {}", mib(idle), mib(spooling_rss), mib(replay_rss));
    drop((sidecar, server));
}
