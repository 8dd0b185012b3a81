//! What the platform layers cost: LogAction and Search latency through a
//! server with auth (token lookup, role check, scope) and limits (rate per
//! token, calls in flight, deadline) against a sibling server on the same
//! database with them switched off, measured in alternating rounds so both
//! see the same machine noise.

mod common;

use std::time::Instant;

use common::{histogram, millis, record};
use lore_proto::auth::Bearer;
use lore_proto::v1 as proto;
use lore_proto::v1::action_service_client::ActionServiceClient;
use lore_proto::v1::knowledge_service_client::KnowledgeServiceClient;
use lore_server::auth::Role;
use lore_server::store::tokens::NewToken;
use lore_server::testing::{TestServer, bench_action};
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
}

async fn side(server: &TestServer, token: Option<&str>) -> Side {
    let bearer = Bearer::new(token).unwrap();
    let mut actions = ActionServiceClient::with_interceptor(server.channel().await, bearer.clone());
    let knowledge = KnowledgeServiceClient::with_interceptor(server.channel().await, bearer);
    let start = proto::StartSessionRequest { project: "bench".into(), agent_id: "agent".into(), ..Default::default() };
    let session = actions.start_session(start).await.unwrap().into_inner().session.unwrap();
    Side { actions, knowledge, session }
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

async fn log_round(side: &mut Side, histogram: &mut hdrhistogram::Histogram<u64>, round: usize) {
    for index in 0..LOG_CALLS_PER_ROUND {
        let action = bench_action(&side.session, round * LOG_CALLS_PER_ROUND + index);
        let begin = Instant::now();
        side.actions.log_action(proto::LogActionRequest { action: Some(action) }).await.unwrap();
        record(histogram, begin);
    }
}

async fn search_round(side: &mut Side, histogram: &mut hdrhistogram::Histogram<u64>) {
    for index in 0..SEARCH_CALLS_PER_ROUND {
        let query = proto::SearchQuery {
            text: format!("migration lock timeout replica {index}"),
            limit: 10,
            ..Default::default()
        };
        let begin = Instant::now();
        side.knowledge.search(proto::SearchRequest { project: "bench".into(), query: Some(query) }).await.unwrap();
        record(histogram, begin);
    }
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let mut bare = TestServer::config();
        bare.grpc.rate_limit_per_token = 0;
        let off_server = TestServer::start_with(bare).await;
        let mut guarded = TestServer::config();
        guarded.auth.enabled = true;
        let on_server = off_server.sibling(guarded).await;
        let token = NewToken {
            name: "bench".into(),
            role: Role::Agent,
            projects: Some(vec!["bench".into()]),
            expires_at: None,
        };
        let (_, secret) = lore_server::auth::create_token(on_server.pool(), &token).await.unwrap();
        let mut off = side(&off_server, None).await;
        let mut on = side(&on_server, Some(&secret)).await;
        seed(&mut off).await;

        println!("# Platform layers: auth + limits on vs off ({} cores)", common::cores());
        println!("\nAlternating rounds on one database; 'on' calls with an agent token.\n");
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
        on_server.stop().await;
        off_server.stop().await;
    });
}
