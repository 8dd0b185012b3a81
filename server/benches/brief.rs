//! AgentService.Brief benchmark (`make bench`): a briefing's latency with
//! 10,000 knowledge entries and 10,000 QA patterns in the project, next to
//! its two heaviest parts called alone in the same run on the same data:
//! a hybrid Search of the same text and a GetWarnings of the same task.
//! A briefing runs them side by side with the last session's summary, then
//! renders and records what it shows, so it should cost about its slowest
//! part plus two small inserts.
//!
//! The entries are the retrieval corpus (the Python standard library's functions, `lore_server::testing::corpus`), the patterns the
//! generated failures of the QA bench (`common::failures`), and the agent's
//! last session ended on a failed validation. Before it, 300 past sessions
//! edited files in the patterns' folders, a third of them failing QA, each
//! ended with a corpus question as its summary: what the briefing's hot
//! spots and similar sessions are found from.

mod common;

use std::time::Instant;

use common::failures::{Shape, fill_patterns, vocabulary};
use common::{histogram, latency_row, millis, record};
use lore_domain::knowledge::embed;
use lore_proto::v1 as proto;
use lore_proto::v1::agent_service_client::AgentServiceClient;
use lore_proto::v1::knowledge_service_client::KnowledgeServiceClient;
use lore_proto::v1::qa_learning_service_client::QaLearningServiceClient;
use lore_server::config::Config;
use lore_server::testing::TestServer;
use lore_server::testing::corpus::{Corpus, fill};
use uuid::Uuid;

const PROJECT: &str = "bench-brief";
const AGENT: &str = "bench-agent";
const ENTRIES: usize = 10_000;
const PATTERNS: usize = 10_000;
const CALLS: usize = 300;
const WARMUP: usize = 30;
/// How the agent's last session ended: a failed validation.
const LAST_ERROR: &str = "AssertionError: expected read the file line by line to return 3 lines";
/// Past sessions with edited files and a QA verdict.
const PAST_SESSIONS: usize = 300;

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let server = TestServer::start().await;
        let embedder =
            embed::from_config(&Config::default().knowledge.embedding, &lore_pgtest::default_cache_dir())
                .expect("the local model (`make tools`)");
        let corpus = Corpus::load();
        let vocabulary = vocabulary();
        println!("# AgentService.Brief benchmark ({} cores)", common::cores());
        let pool = server.pool();
        let cache_dir = lore_pgtest::default_cache_dir();
        fill(pool, PROJECT, &corpus, &embedder, &cache_dir, 0, ENTRIES).await;
        fill_patterns(&server, PROJECT, PATTERNS, &vocabulary).await;
        for past in 0..PAST_SESSIONS {
            let shape = Shape::of(PROJECT, past * 104_729 % PATTERNS, &vocabulary);
            let file = format!("{}/{}.{}", shape.folder, shape.words[0], shape.extension);
            let summary = &corpus.questions[(past * 31) % corpus.questions.len()];
            lore_server::testing::seed_past_session(server.channel().await, PROJECT, &[&file], past % 3 == 0, summary)
                .await;
        }
        lore_server::testing::seed_failed_session(server.channel().await, PROJECT, AGENT, LAST_ERROR).await;
        sqlx::query("ANALYZE").execute(pool).await.unwrap();

        let channel = server.channel().await;
        let mut agent = AgentServiceClient::new(channel.clone());
        let mut knowledge = KnowledgeServiceClient::new(channel.clone());
        let mut qa = QaLearningServiceClient::new(channel);
        let (mut brief, mut search, mut warnings) = (histogram(), histogram(), histogram());
        let (mut lessons, mut shown_warnings, mut chars) = (0, 0, 0);
        let (mut similar, mut hot) = (0, 0);
        for call in 0..CALLS + WARMUP {
            // A task like the corpus's questions, on files where patterns were learned.
            let shape = Shape::of(PROJECT, call * 7919 % PATTERNS, &vocabulary);
            let question = corpus.questions[call % corpus.questions.len()].clone();
            let file = format!("{}/{}_{call}.{}", shape.folder, shape.words[0], shape.extension);
            let timed = call >= WARMUP;

            let request = proto::BriefRequest {
                project: PROJECT.into(),
                agent_id: AGENT.into(),
                session_id: Uuid::now_v7().to_string(),
                task: Some(proto::BriefTask {
                    title: question.clone(),
                    files: vec![file.clone()],
                    category: shape.task_category.into(),
                    ..Default::default()
                }),
                ..Default::default()
            };
            let begin = Instant::now();
            let answer = agent.brief(request).await.unwrap().into_inner();
            if timed {
                record(&mut brief, begin);
                lessons += answer.lessons.len();
                shown_warnings += answer.warnings.len();
                similar += answer.similar_sessions.len();
                hot += answer.hot_spots.len();
                chars += answer.markdown.chars().count();
                assert!(answer.last_session.is_some() && !answer.degraded);
            }

            let request = proto::SearchRequest {
                project: PROJECT.into(),
                query: Some(proto::SearchQuery {
                    text: question.clone(),
                    limit: 10,
                    mode: proto::SearchMode::Hybrid as i32,
                    ..Default::default()
                }),
                ..Default::default()
            };
            let begin = Instant::now();
            knowledge.search(request).await.unwrap();
            if timed {
                record(&mut search, begin);
            }

            let request = proto::GetWarningsRequest {
                project: PROJECT.into(),
                task: Some(proto::Task {
                    task_id: format!("W-{call}"),
                    title: question,
                    category: shape.task_category.into(),
                    files: vec![file],
                    description: String::new(),
                }),
                ..Default::default()
            };
            let begin = Instant::now();
            qa.get_warnings(request).await.unwrap();
            if timed {
                record(&mut warnings, begin);
            }
        }
        println!(
            "\n## Brief over gRPC: {ENTRIES} entries, {PATTERNS} patterns, {PAST_SESSIONS} past sessions, {CALLS} tasks (real questions on files with patterns), one client\n"
        );
        println!("| measure | p50 | p99 |\n|---|---:|---:|");
        latency_row("Brief (last session, 5 lessons, 5 warnings, markdown, recorded)", &brief);
        latency_row("baseline: Search hybrid of the same text, alone", &search);
        latency_row("baseline: GetWarnings of the same task, alone", &warnings);
        let slowest = |quantile| millis(&search, quantile).max(millis(&warnings, quantile));
        println!(
            "\nBrief / slowest part alone: p50 {:.2}, p99 {:.2}. Per briefing: {:.1} lessons, {:.1} warnings, {:.1} similar sessions, {:.1} hot spots, {:.0} characters.",
            millis(&brief, 0.5) / slowest(0.5),
            millis(&brief, 0.99) / slowest(0.99),
            lessons as f64 / CALLS as f64,
            shown_warnings as f64 / CALLS as f64,
            similar as f64 / CALLS as f64,
            hot as f64 / CALLS as f64,
            chars as f64 / CALLS as f64
        );
        server.stop().await;
    });
}
