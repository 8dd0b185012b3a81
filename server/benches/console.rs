//! Web console benchmark (`make bench`): how long each page takes to render
//! on the server with 1,000,000 actions (10 projects, 2,000 sessions, 30
//! days) and 10,000 QA patterns, fetched over HTTP with a keep-alive client,
//! next to the bare SQL query at the heart of that page run in the same run
//! on the same data: the ratio is what rendering, scoping and the page's
//! other reads cost on top of reading its rows.
//!
//! The target is p99 ≤ 100 ms per page. Lists page by cursor; the second
//! page of the action list is measured too, to show it costs what the first
//! does.

mod common;

use std::time::Instant;

use common::{histogram, millis, record};
use hdrhistogram::Histogram;
use lore_server::grpc::Services;
use lore_server::testing::TestServer;
use lore_server::web::{Console, WebConfig};
use sqlx::PgPool;
use uuid::Uuid;

const ACTIONS: i64 = 1_000_000;
const PROJECTS: i64 = 10;
const SESSIONS: i64 = 2_000;
const PATTERNS: i64 = 10_000;
const CALLS: usize = 200;
const WARMUP: usize = 20;
const PROJECT: &str = "bench-3";

/// Projects, sessions, actions and patterns, written by PostgreSQL itself.
async fn seed(pool: &PgPool) {
    sqlx::query("INSERT INTO projects (name) SELECT 'bench-' || p FROM generate_series(0, $1 - 1) p")
        .bind(PROJECTS)
        .execute(pool)
        .await
        .unwrap();
    sqlx::query(
        "INSERT INTO sessions (session_id, project, agent_id, started_at, last_activity_at, status, ended_at, end_reason, action_count)
         SELECT md5('s' || s)::uuid, 'bench-' || (s % $2), 'agent-' || (s % 50),
                now() - interval '30 days' + (s * interval '21 minutes'), now() - ((s % 7) * interval '1 hour'),
                CASE WHEN s % 40 = 0 THEN 'active' ELSE 'ended' END,
                CASE WHEN s % 40 = 0 THEN NULL ELSE now() - ((s % 7) * interval '1 hour') END,
                CASE WHEN s % 40 = 0 THEN NULL ELSE 'normal' END, $3 / $1
           FROM generate_series(0, $1 - 1) s",
    )
    .bind(SESSIONS)
    .bind(PROJECTS)
    .bind(ACTIONS)
    .execute(pool)
    .await
    .unwrap();
    let started = Instant::now();
    // One session's actions are one project's; the chain position is the
    // row's rank within its session.
    sqlx::query(
        "INSERT INTO actions (action_id, occurred_at, project, session_id, agent_id, action_type, category, context,
                              outcome, error, duration_ms, chain_seq, chain_hash)
         SELECT md5('a' || g)::uuid, now() - (g * interval '2592 milliseconds'), 'bench-' || ((g % $2) % $3),
                md5('s' || (g % $2))::uuid, 'agent-' || ((g % $2) % 50),
                (ARRAY['tool_call', 'commit', 'validate', 'deploy', 'plan'])[1 + g % 5], 'bench',
                jsonb_build_object('step', g, 'file', 'src/module_' || (g % 97) || '.rs'),
                CASE WHEN g % 11 = 0 THEN 'failure' WHEN g % 29 = 0 THEN 'blocked' ELSE 'success' END,
                CASE WHEN g % 11 = 0 THEN 'assertion failed in case ' || g ELSE '' END,
                g % 5000, g / $2 + 1, '\\x00'
           FROM generate_series(1, $1) g",
    )
    .bind(ACTIONS)
    .bind(SESSIONS)
    .bind(PROJECTS)
    .execute(pool)
    .await
    .unwrap();
    println!("seeded {ACTIONS} actions in {:.0} s", started.elapsed().as_secs_f64());
    sqlx::query(
        "INSERT INTO qa_patterns (pattern_id, project, category, name, template, template_tokens, status,
                                  occurrence_count, task_count, prevented_count, failed_anyway_count,
                                  first_seen_at, last_seen_at)
         SELECT md5('p' || p)::uuid, 'bench-' || (p % $2), 'test', 'pattern ' || p,
                'AssertionError: expected <*> got <*> in case ' || p, ARRAY['AssertionError:', 'expected', '<*>'],
                'active', 1 + p % 40, 1 + p % 12, p % 5, p % 3,
                now() - interval '20 days', now() - ((p % 20) * interval '1 day')
           FROM generate_series(0, $1 - 1) p",
    )
    .bind(PATTERNS)
    .bind(PROJECTS)
    .execute(pool)
    .await
    .unwrap();
    // As autovacuum leaves a table that has grown: its pages marked
    // all-visible, which index-only scans rely on.
    sqlx::query("VACUUM ANALYZE").execute(pool).await.unwrap();
}

async fn time_page(client: &reqwest::Client, url: &str) -> Histogram<u64> {
    let mut latencies = histogram();
    for call in 0..CALLS + WARMUP {
        let begin = Instant::now();
        let response = client.get(url).send().await.unwrap();
        assert!(response.status().is_success(), "{url}: {}", response.status());
        let body = response.bytes().await.unwrap();
        assert!(!body.is_empty());
        if call >= WARMUP {
            record(&mut latencies, begin);
        }
    }
    latencies
}

async fn time_query(pool: &PgPool, sql: &str, bind: &str) -> Histogram<u64> {
    let mut latencies = histogram();
    for call in 0..CALLS + WARMUP {
        let begin = Instant::now();
        let rows = sqlx::query(sqlx::AssertSqlSafe(sql.to_owned())).bind(bind).fetch_all(pool).await.unwrap();
        std::hint::black_box(rows);
        if call >= WARMUP {
            record(&mut latencies, begin);
        }
    }
    latencies
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let server = TestServer::start().await;
        let pool = server.pool().clone();
        println!("# Web console benchmark ({} cores)", common::cores());
        seed(&pool).await;
        let mut config = TestServer::config();
        config.cache_dir = lore_pgtest::default_cache_dir();
        let services = Services::new(&config, pool.clone()).expect("the local model (`make tools`)");
        let console = Console::new(&services, WebConfig::default(), None).unwrap();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        tokio::spawn(lore_server::web::serve(console, listener, std::future::pending()));
        let client = reqwest::Client::new();
        let base = format!("http://{address}");

        let session: Uuid = sqlx::query_scalar("SELECT session_id FROM sessions WHERE project = $1 LIMIT 1")
            .bind(PROJECT)
            .fetch_one(&pool)
            .await
            .unwrap();
        let action: Uuid = sqlx::query_scalar(
            "SELECT action_id FROM actions WHERE session_id = $1 ORDER BY chain_seq DESC LIMIT 1",
        )
        .bind(session)
        .fetch_one(&pool)
        .await
        .unwrap();
        let pattern: Uuid = sqlx::query_scalar(
            "SELECT pattern_id FROM qa_patterns WHERE project = $1 ORDER BY occurrence_count DESC LIMIT 1",
        )
        .bind(PROJECT)
        .fetch_one(&pool)
        .await
        .unwrap();
        let second_page = {
            let page = reqwest::get(format!("{base}/projects/{PROJECT}")).await.unwrap().text().await.unwrap();
            let start = page.find("&amp;after=").expect("a next page link") + "&amp;after=".len();
            let cursor: String = page[start..].chars().take_while(|c| *c != '"').collect();
            format!("/projects/{PROJECT}?after={cursor}")
        };
        let list = "SELECT * FROM actions WHERE project = $1 ORDER BY occurred_at DESC, action_id DESC LIMIT 51";
        let pages: Vec<(&str, String, &str, String)> = vec![
            ("fleet", "/".into(),
             "SELECT count(*) FROM actions WHERE project = $1 AND occurred_at >= now() - interval '1 day'", PROJECT.into()),
            ("project activity", format!("/projects/{PROJECT}"), list, PROJECT.into()),
            ("project activity, page 2", second_page, list, PROJECT.into()),
            ("project activity, failures", format!("/projects/{PROJECT}?outcome=failure"),
             "SELECT * FROM actions WHERE project = $1 AND outcome = 'failure' ORDER BY occurred_at DESC, action_id DESC LIMIT 51",
             PROJECT.into()),
            ("action detail", format!("/actions/{action}"),
             "SELECT * FROM actions WHERE action_id = $1::uuid", action.to_string()),
            ("session", format!("/sessions/{session}"),
             "SELECT * FROM actions WHERE session_id = $1::uuid ORDER BY chain_seq DESC LIMIT 200", session.to_string()),
            ("QA dashboard", format!("/projects/{PROJECT}/qa"),
             "SELECT * FROM qa_patterns WHERE project = $1 ORDER BY occurrence_count DESC, pattern_id LIMIT 50", PROJECT.into()),
            ("pattern", format!("/patterns/{pattern}"),
             "SELECT * FROM qa_patterns WHERE pattern_id = $1::uuid", pattern.to_string()),
            ("drafts", format!("/projects/{PROJECT}/drafts"),
             "SELECT * FROM knowledge_drafts WHERE project = $1 AND status = 'pending' LIMIT 50", PROJECT.into()),
            ("daily report", format!("/projects/{PROJECT}/reports"),
             "SELECT count(*) FROM actions WHERE project = $1 AND occurred_at >= now() - interval '2 days'", PROJECT.into()),
        ];
        println!("\n## Pages with {ACTIONS} actions and {PATTERNS} patterns, against the bare query of each\n");
        println!("| page | p50 ms | p99 ms | bare query p50 ms | bare query p99 ms | p99 / bare p99 | p99 ≤ 100 ms |");
        println!("|---|---:|---:|---:|---:|---:|---|");
        for (name, path, sql, bind) in pages {
            let page = time_page(&client, &format!("{base}{path}")).await;
            let bare = time_query(&pool, sql, &bind).await;
            let (p99, bare_p99) = (millis(&page, 0.99), millis(&bare, 0.99));
            println!(
                "| {name} | {:.1} | {p99:.1} | {:.2} | {bare_p99:.2} | {:.1}× | {} |",
                millis(&page, 0.50),
                millis(&bare, 0.50),
                p99 / bare_p99.max(0.01),
                if p99 <= 100.0 { "yes" } else { "no" }
            );
        }
        server.stop().await;
    });
}
