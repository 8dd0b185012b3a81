//! ActionService benchmarks (`make bench`). Each figure is printed next to a
//! baseline measured in the same run on the same database, because the
//! machines are small and shared: only the ratios travel between runs.
//!
//! The server runs in this process on a throwaway PostgreSQL (fsync off), as
//! do the baselines; client, server and database share the machine's cores.

mod common;

use std::time::{Duration, Instant};

use chrono::Utc;
use common::{histogram, latencies, latency_row, millis, record};
use futures_util::StreamExt as _;
use lore_proto::v1 as proto;
use lore_proto::v1::action_service_client::ActionServiceClient;
use lore_server::testing::TestServer;
use sqlx::PgPool;
use tonic::transport::Channel;
use uuid::Uuid;

const LOG_CALLS: usize = 4000;
const LOG_WARMUP: usize = 200;
const INGEST_ACTIONS: usize = 100_000;
const RESUME_TABLE_ROWS: usize = 1_000_000;
const RESUME_RUNS: usize = 50;
const EXPORT_ROWS: usize = 200_000;

fn action(session: &proto::Session, index: usize) -> proto::Action {
    lore_server::testing::bench_action(session, index)
}

async fn client(server: &TestServer) -> ActionServiceClient<Channel> {
    ActionServiceClient::new(server.channel().await)
        .max_decoding_message_size(64 << 20)
        .max_encoding_message_size(64 << 20)
}

async fn session(client: &mut ActionServiceClient<Channel>, project: &str, agent: &str) -> proto::Session {
    let request = proto::StartSessionRequest { project: project.into(), agent_id: agent.into(), ..Default::default() };
    client.start_session(request).await.unwrap().into_inner().session.unwrap()
}

async fn bench_log_action(server: &TestServer) {
    println!("\n## LogAction latency vs a bare single-row INSERT ... RETURNING (same table)\n");
    println!(
        "| clients | LogAction p50 | LogAction p99 | LogAction calls/s | INSERT p50 | INSERT p99 | INSERT rows/s |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|");
    for clients in [1, 16] {
        let mut sessions = Vec::new();
        let mut grpc_clients = Vec::new();
        for index in 0..clients {
            let mut client = client(server).await;
            sessions.push(session(&mut client, "bench-log", &format!("agent-{index}")).await);
            grpc_clients.push(client);
        }
        // Warm-up: connections, prepared statements, caches.
        for (client, session) in grpc_clients.iter_mut().zip(&sessions) {
            for index in 0..LOG_WARMUP / clients {
                client.log_action(proto::LogActionRequest { action: Some(action(session, index)) }).await.unwrap();
            }
        }
        let (log, log_elapsed) = {
            let grpc_clients = grpc_clients.clone();
            let sessions = sessions.clone();
            latencies(clients, LOG_CALLS, move |client_index, index| {
                let mut client = grpc_clients[client_index].clone();
                let action = action(&sessions[client_index], index);
                async move {
                    client.log_action(proto::LogActionRequest { action: Some(action) }).await.unwrap();
                }
            })
            .await
        };
        let pool = server.pool().clone();
        let (insert, insert_elapsed) = latencies(clients, LOG_CALLS, move |_, index| {
            let pool = pool.clone();
            async move { bare_insert(&pool, index).await }
        })
        .await;
        println!(
            "| {clients} | {:.2} ms | {:.2} ms | {:.0} | {:.2} ms | {:.2} ms | {:.0} |",
            millis(&log, 0.5),
            millis(&log, 0.99),
            LOG_CALLS as f64 / log_elapsed.as_secs_f64(),
            millis(&insert, 0.5),
            millis(&insert, 0.99),
            LOG_CALLS as f64 / insert_elapsed.as_secs_f64(),
        );
    }
}

async fn bare_insert(pool: &PgPool, index: usize) {
    let _: Uuid = sqlx::query_scalar(
        "INSERT INTO actions (action_id, occurred_at, project, action_type, category, context, outcome, duration_ms, chain_hash)
         VALUES ($1, now(), 'bench-insert', 'tool_call', 'bench', $2, 'success', 42, '\\x00')
         RETURNING action_id",
    )
    .bind(Uuid::now_v7())
    .bind(sqlx::types::Json(serde_json::json!({
        "command": format!("cargo test -p lore-server store::actions::tests::case_{index}"),
        "file": "server/src/store/actions.rs",
        "exit_code": index % 3,
    })))
    .fetch_one(pool)
    .await
    .unwrap();
}

/// COPY text-format rows of `count` sessionless actions of `project`, spread
/// over the last `spread_days`.
fn copy_rows(project: &str, count: usize, spread_days: i64) -> Vec<u8> {
    let now = Utc::now();
    let mut data = Vec::with_capacity(count * 256);
    for index in 0..count {
        let occurred_at = now - chrono::Duration::seconds((index as i64 * 7) % (spread_days * 86_400));
        let line = format!(
            "{}\t{}\t{project}\ttool_call\tbench\t{{\"command\": \"cargo test case_{index}\", \"exit_code\": {}, \"file\": \"server/src/store/actions.rs\"}}\tsuccess\t42\t\\\\x00\n",
            Uuid::now_v7(),
            occurred_at.to_rfc3339(),
            index % 3,
        );
        data.extend_from_slice(line.as_bytes());
    }
    data
}

async fn copy_in(pool: &PgPool, data: &[u8]) -> Duration {
    let mut connection = pool.acquire().await.unwrap();
    let started = Instant::now();
    let mut copy = connection
        .copy_in_raw(
            "COPY actions (action_id, occurred_at, project, action_type, category, context, outcome, duration_ms, chain_hash)
             FROM STDIN",
        )
        .await
        .unwrap();
    copy.send(data).await.unwrap();
    copy.finish().await.unwrap();
    started.elapsed()
}

async fn bench_ingest(server: &TestServer) {
    println!("\n## Ingest throughput vs a bare COPY of the same number of rows\n");
    println!("| batch size | Ingest actions/s | COPY rows/s | Ingest / COPY |");
    println!("|---:|---:|---:|---:|");
    let mut client = client(server).await;
    let sessions: Vec<proto::Session> = {
        let mut sessions = Vec::new();
        for index in 0..10 {
            sessions.push(session(&mut client, "bench-ingest", &format!("agent-{index}")).await);
        }
        sessions
    };
    for batch_size in [100, 1000] {
        // Batches mix ten sessions, as a sidecar beside a busy VM would.
        let batches: Vec<proto::IngestRequest> = (0..INGEST_ACTIONS / batch_size)
            .map(|sequence| proto::IngestRequest {
                sequence: sequence as u64,
                actions: (0..batch_size).map(|index| action(&sessions[index % sessions.len()], index)).collect(),
            })
            .collect();
        let started = Instant::now();
        let mut acks = client.ingest(tokio_stream::iter(batches)).await.unwrap().into_inner();
        let mut stored = 0;
        while let Some(ack) = acks.message().await.unwrap() {
            stored += ack.stored as usize;
        }
        let ingest_elapsed = started.elapsed();
        assert_eq!(stored, INGEST_ACTIONS);
        let copy_elapsed = copy_in(server.pool(), &copy_rows("bench-copy", INGEST_ACTIONS, 1)).await;
        let ingest_rate = INGEST_ACTIONS as f64 / ingest_elapsed.as_secs_f64();
        let copy_rate = INGEST_ACTIONS as f64 / copy_elapsed.as_secs_f64();
        println!("| {batch_size} | {ingest_rate:.0} | {copy_rate:.0} | {:.0}% |", 100.0 * ingest_rate / copy_rate);
    }
}

async fn bench_resume(server: &TestServer) {
    let existing: i64 = sqlx::query_scalar("SELECT count(*) FROM actions").fetch_one(server.pool()).await.unwrap();
    let filler = RESUME_TABLE_ROWS.saturating_sub(existing as usize);
    let started = Instant::now();
    for chunk in 0..10 {
        copy_in(server.pool(), &copy_rows(if chunk % 2 == 0 { "bench-resume" } else { "other" }, filler / 10, 60))
            .await;
    }
    sqlx::query("ANALYZE actions").execute(server.pool()).await.unwrap();
    let total: i64 = sqlx::query_scalar("SELECT count(*) FROM actions").fetch_one(server.pool()).await.unwrap();
    eprintln!("filled the log to {total} rows in {:.1} s", started.elapsed().as_secs_f64());

    let mut client = client(server).await;
    let target = session(&mut client, "bench-resume", "agent-resume").await;
    let actions: Vec<proto::Action> = (0..1000).map(|index| action(&target, index)).collect();
    let mut acks =
        client.ingest(tokio_stream::iter([proto::IngestRequest { sequence: 1, actions }])).await.unwrap().into_inner();
    acks.message().await.unwrap();

    let mut first_event = histogram();
    let mut caught_up = histogram();
    for _ in 0..RESUME_RUNS {
        let request = proto::ResumeRequest {
            project: "bench-resume".into(),
            agent_id: "agent-resume".into(),
            ..Default::default()
        };
        let begin = Instant::now();
        let mut events = client.resume(request).await.unwrap().into_inner();
        let first = events.message().await.unwrap().unwrap();
        assert!(matches!(first.event, Some(proto::resume_event::Event::Summary(_))));
        record(&mut first_event, begin);
        while let Some(event) = events.message().await.unwrap() {
            if matches!(event.event, Some(proto::resume_event::Event::CaughtUp(_))) {
                record(&mut caught_up, begin);
            }
        }
    }
    let (baseline, _) = {
        let pool = server.pool().clone();
        latencies(1, RESUME_RUNS, move |_, _| {
            let pool = pool.clone();
            async move {
                sqlx::query("SELECT * FROM actions WHERE session_id = (SELECT session_id FROM sessions WHERE project = 'bench-resume' ORDER BY started_at DESC LIMIT 1) ORDER BY chain_seq DESC LIMIT 20")
                    .fetch_all(&pool)
                    .await
                    .unwrap();
            }
        })
        .await
    };
    println!("\n## Resume with {total} actions in the table ({RESUME_RUNS} runs; the summary is the first event)\n");
    println!("| measure | p50 | p99 |\n|---|---:|---:|");
    latency_row("time to first event (the summary)", &first_event);
    latency_row("time to caught-up (summary + 20 actions)", &caught_up);
    latency_row("baseline: last session's 20 actions in one SQL query", &baseline);
}

async fn bench_export(server: &TestServer) {
    let mut client = client(server).await;
    let request = proto::ExportRequest {
        project: "bench-resume".into(),
        format: proto::ExportFormat::Jsonl as i32,
        chunk_rows: 5000,
        ..Default::default()
    };
    let started = Instant::now();
    let mut chunks = client.export(request).await.unwrap().into_inner();
    let (mut rows, mut bytes) = (0_usize, 0_usize);
    while let Some(chunk) = chunks.message().await.unwrap() {
        rows += chunk.rows as usize;
        bytes += chunk.data.len();
        if rows >= EXPORT_ROWS || chunk.last {
            break;
        }
    }
    let export_elapsed = started.elapsed();
    drop(chunks);

    let mut connection = server.pool().acquire().await.unwrap();
    let started = Instant::now();
    let mut copy = connection
        .copy_out_raw(&format!(
            "COPY (SELECT * FROM actions WHERE project = 'bench-resume' ORDER BY occurred_at, action_id LIMIT {rows}) TO STDOUT"
        ))
        .await
        .unwrap();
    let mut copied = 0;
    while let Some(data) = copy.next().await {
        copied += data.unwrap().len();
    }
    let copy_elapsed = started.elapsed();
    println!("\n## Export (JSONL over gRPC) vs COPY TO STDOUT of the same rows\n");
    println!("| measure | rows/s | MB/s |\n|---|---:|---:|");
    println!(
        "| Export, {rows} rows | {:.0} | {:.1} |",
        rows as f64 / export_elapsed.as_secs_f64(),
        bytes as f64 / 1e6 / export_elapsed.as_secs_f64()
    );
    println!(
        "| COPY TO STDOUT, {rows} rows | {:.0} | {:.1} |",
        rows as f64 / copy_elapsed.as_secs_f64(),
        copied as f64 / 1e6 / copy_elapsed.as_secs_f64()
    );
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        // Sixteen clients log faster than the per-client rate limit allows
        // (1,000 calls/s): the limit is measured in `--bench platform`, not
        // here.
        let mut config = TestServer::config();
        config.grpc.rate_limit_per_token = 0;
        let server = TestServer::start_with(config).await;
        println!("# ActionService benchmarks ({} cores)", common::cores());
        // `cargo bench --bench actions -- log ingest` runs only those sections.
        let run = common::wanted_sections();
        if run("log") {
            bench_log_action(&server).await;
        }
        if run("ingest") {
            bench_ingest(&server).await;
        }
        if run("resume") {
            bench_resume(&server).await;
        }
        if run("export") {
            bench_export(&server).await;
        }
        server.stop().await;
    });
}
