//! What the platform layers cost, all together: LogAction and Search
//! latency through a lore-server with auth (token lookup, role check,
//! scope), limits (rate per token, calls in flight, deadline), automatic
//! tool-call logging (every Search carries a session id, so each is also
//! stored as an action) and telemetry (spans and metrics exported over OTLP
//! to a collector in this process), against a second lore-server on the
//! same database with all of them switched off. Both are the real release
//! binaries; calls alternate between them round by round so both see the
//! same machine noise.
//!
//! `cargo build --release --workspace --bins` first (make bench does).

use std::time::Instant;

use hdrhistogram::Histogram;
use lore_e2e::otlp::Collector;
use lore_e2e::{ServerOptions, ServerProcess, TestDatabase};
use lore_proto::auth::Bearer;
use lore_proto::v1 as proto;
use lore_proto::v1::action_service_client::ActionServiceClient;
use lore_proto::v1::knowledge_service_client::KnowledgeServiceClient;
use lore_server::auth::Role;
use lore_store::tokens::NewToken;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::Channel;

const ROUNDS: usize = 20;
const LOG_CALLS_PER_ROUND: usize = 100;
const SEARCH_CALLS_PER_ROUND: usize = 20;

type Authed = InterceptedService<Channel, Bearer>;

struct Side {
    actions: ActionServiceClient<Authed>,
    knowledge: KnowledgeServiceClient<Authed>,
    session: proto::Session,
    /// Searches carry the session: tool calls when the server logs them.
    tool_calls: bool,
}

async fn side(server: &ServerProcess, token: Option<&str>, tool_calls: bool) -> Side {
    let bearer = Bearer::new(token).unwrap();
    let mut actions = ActionServiceClient::with_interceptor(server.channel().await, bearer.clone());
    let knowledge = KnowledgeServiceClient::with_interceptor(server.channel().await, bearer);
    let start = proto::StartSessionRequest { project: "bench".into(), agent_id: "agent".into(), ..Default::default() };
    let session = actions.start_session(start).await.unwrap().into_inner().session.unwrap();
    Side { actions, knowledge, session, tool_calls }
}

async fn seed(side: &mut Side) {
    for index in 0..50 {
        let entry = proto::Entry {
            key: format!("lesson-{index}"),
            project: "bench".into(),
            kind: proto::EntryKind::Gotcha as i32,
            title: format!("Lesson {index}: retry the migration after the lock times out"),
            summary: format!("Case {index}: the advisory lock was held by another replica."),
            category: "database".into(),
            ..Default::default()
        };
        side.knowledge.upsert_entry(proto::UpsertEntryRequest { entry: Some(entry) }).await.unwrap();
    }
}

fn histogram() -> Histogram<u64> {
    Histogram::<u64>::new(3).expect("histogram")
}

fn millis(histogram: &Histogram<u64>, quantile: f64) -> f64 {
    histogram.value_at_quantile(quantile) as f64 / 1000.0
}

fn record(histogram: &mut Histogram<u64>, begin: Instant) {
    histogram.record(begin.elapsed().as_micros() as u64).expect("in range");
}

async fn log_round(side: &mut Side, histogram: &mut Histogram<u64>, round: usize) {
    for index in 0..LOG_CALLS_PER_ROUND {
        let action = lore_server::testing::bench_action(&side.session, round * LOG_CALLS_PER_ROUND + index);
        let begin = Instant::now();
        side.actions.log_action(proto::LogActionRequest { action: Some(action) }).await.unwrap();
        record(histogram, begin);
    }
}

async fn search_round(side: &mut Side, histogram: &mut Histogram<u64>) {
    for index in 0..SEARCH_CALLS_PER_ROUND {
        let query = proto::SearchQuery {
            text: format!("migration lock timeout replica {index}"),
            limit: 10,
            ..Default::default()
        };
        let mut request = tonic::Request::new(proto::SearchRequest {
            project: "bench".into(),
            query: Some(query),
            ..Default::default()
        });
        if side.tool_calls {
            request.metadata_mut().insert("x-lore-session-id", side.session.session_id.parse().unwrap());
        }
        let begin = Instant::now();
        side.knowledge.search(request).await.unwrap();
        record(histogram, begin);
    }
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let mut collector = Collector::start().await;
        let database = TestDatabase::new().await.unwrap();
        let off_server = ServerProcess::start(
            ServerOptions::with_database(&database.url)
                .env("LORE_GRPC__RATE_LIMIT_PER_TOKEN", "0")
                .env("LORE_TOOL_CALLS__ENABLED", "false"),
        )
        .await
        .unwrap();
        let on_server = ServerProcess::start(
            ServerOptions::with_database(&database.url)
                .with_auth()
                .env("LORE_DATABASE__MIGRATE_ON_START", "false")
                .env("LORE_TELEMETRY__OTLP_ENDPOINT", &collector.endpoint)
                .env("LORE_TELEMETRY__METRICS_INTERVAL_SECS", "5"),
        )
        .await
        .unwrap();
        let token = NewToken {
            name: "bench".into(),
            role: Role::Agent,
            projects: Some(vec!["bench".into()]),
            expires_at: None,
        };
        let (_, secret) = lore_server::auth::create_token(&database.pool, &token).await.unwrap();
        let mut off = side(&off_server, None, false).await;
        let mut on = side(&on_server, Some(&secret), true).await;
        seed(&mut off).await;

        let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
        println!("# Platform layers: auth + limits + tool-call logging + telemetry, on vs off ({cores} cores)");
        println!("\nTwo lore-server processes on one database, alternating rounds; 'on' calls with an agent");
        println!("token, its Searches carry a session id (each also stored as a tool_call action), and it");
        println!("exports spans and metrics over OTLP to a collector in the bench process.\n");
        println!("| RPC | calls | off p50 | on p50 | p50 ratio | off p99 | on p99 |");
        println!("|---|---:|---:|---:|---:|---:|---:|");
        let (mut log_off, mut log_on, mut search_off, mut search_on) =
            (histogram(), histogram(), histogram(), histogram());
        // Warm-up: connections, prepared statements, the token cache.
        log_round(&mut off, &mut histogram(), 0).await;
        log_round(&mut on, &mut histogram(), 0).await;
        search_round(&mut off, &mut histogram()).await;
        search_round(&mut on, &mut histogram()).await;
        for round in 1..=ROUNDS {
            // Alternate which side goes first, so neither always follows the other.
            if round % 2 == 0 {
                log_round(&mut off, &mut log_off, round).await;
                log_round(&mut on, &mut log_on, round).await;
                search_round(&mut off, &mut search_off).await;
                search_round(&mut on, &mut search_on).await;
            } else {
                log_round(&mut on, &mut log_on, round).await;
                log_round(&mut off, &mut log_off, round).await;
                search_round(&mut on, &mut search_on).await;
                search_round(&mut off, &mut search_off).await;
            }
        }
        for (name, off, on) in [("LogAction", &log_off, &log_on), ("Search", &search_off, &search_on)] {
            println!(
                "| {name} | {} | {:.2} ms | {:.2} ms | {:.3} | {:.2} ms | {:.2} ms |",
                off.len(),
                millis(off, 0.5),
                millis(on, 0.5),
                millis(on, 0.5) / millis(off, 0.5),
                millis(off, 0.99),
                millis(on, 0.99)
            );
        }
        let mut on_server = on_server;
        on_server.stop().await;
        let tool_calls: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM actions WHERE session_id = $1::uuid AND action_type = 'tool_call' \
             AND category = 'knowledge'",
        )
        .bind(&on.session.session_id)
        .fetch_one(&database.pool)
        .await
        .unwrap();
        let mut spans = 0;
        while let Ok(export) = collector.spans.try_recv() {
            spans += export
                .resource_spans
                .iter()
                .flat_map(|resource| &resource.scope_spans)
                .map(|scope| scope.spans.len())
                .sum::<usize>();
        }
        let mut metric_exports = 0;
        while collector.metrics.try_recv().is_ok() {
            metric_exports += 1;
        }
        println!(
            "\nOn side: {tool_calls} tool calls stored (of {} Searches), {spans} spans and {metric_exports} metric \
             exports received.",
            (ROUNDS + 1) * SEARCH_CALLS_PER_ROUND,
        );
        let mut off_server = off_server;
        off_server.stop().await;
    });
}
