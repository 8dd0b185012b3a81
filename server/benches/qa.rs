//! QaLearningService benchmarks (`make bench`): CaptureFailure and
//! GetWarnings latency with 10,000 patterns in the project, and the
//! dashboard with 100,000 failures. Baselines are measured in the same run
//! on the same database: a bare INSERT of the failure row for capture, a
//! bare top-5 query over the file-glob index for warnings, and a bare
//! per-day count for the dashboard.
//!
//! The failures are generated: real error-message shapes (pytest, tsc,
//! rustc, eslint, jest, Python tracebacks ...) whose constant words come
//! from the CoSQA questions, with paths, line numbers and quoted values that
//! vary from one occurrence to the next. Each pattern's words are drawn from
//! a generator seeded by its index, so a later "same pattern, other numbers"
//! capture regenerates them. The patterns are created through the real
//! CaptureFailure RPC (two occurrences each, so they can be warned about);
//! the dashboard's 100,000 failures are those captures copied in SQL with
//! their occurrences and spread over 90 days, 60 % of them resolved.

mod common;

use std::path::Path;
use std::time::Instant;

use common::{histogram, latency_row, millis, record};
use hdrhistogram::Histogram;
use lore_proto::v1 as proto;
use lore_proto::v1::qa_learning_service_client::QaLearningServiceClient;
use lore_server::testing::TestServer;
use sqlx::PgPool;
use tonic::transport::Channel;
use uuid::Uuid;

const PROJECT: &str = "bench-qa";
const PATTERNS: usize = 10_000;
const FAILURES: usize = 100_000;
/// Concurrent clients while filling.
const FILL_CLIENTS: usize = 4;
const CALLS: usize = 500;
const WARMUP: usize = 50;
const DASHBOARD_CALLS: usize = 20;

type Client = QaLearningServiceClient<Channel>;

/// (check name, the message's first words): two constant leading tokens,
/// as real tools print them.
const SHAPES: [(&str, &str, &str); 12] = [
    ("pytest", "AssertionError: expected", "py"),
    ("pytest", "ModuleNotFoundError: No", "py"),
    ("tsc", "error TS2322: Type", "ts"),
    ("tsc", "error TS2339: Property", "ts"),
    ("cargo build", "error[E0308]: mismatched types", "rs"),
    ("cargo build", "error[E0425]: cannot find", "rs"),
    ("clippy", "warning: unused", "rs"),
    ("eslint", "error no-unused-vars", "js"),
    ("jest", "expect(received).toEqual(expected) received", "tsx"),
    ("e2e", "TimeoutError: waiting for", "ts"),
    ("integration", "Traceback (most recent call last):", "py"),
    ("migrate", "ERROR: relation", "sql"),
];
const FOLDERS: [&str; 24] = [
    "src/api",
    "src/db",
    "src/auth",
    "src/billing",
    "src/ui/components",
    "src/ui/pages",
    "schema",
    "migrations",
    "tests/unit",
    "tests/e2e",
    "server/src/grpc",
    "server/src/store",
    "cli/src",
    "lib/utils",
    "lib/models",
    "app/routes",
    "app/services",
    "config",
    "scripts",
    "jobs",
    "workers",
    "infra",
    "docs",
    "pkg/cache",
];
const TASK_CATEGORIES: [&str; 5] = ["feature", "bugfix", "refactor", "migration", "test"];

/// Lowercase words of the CoSQA questions: real English and programming
/// vocabulary for the constant parts of the messages and the task titles.
fn vocabulary() -> Vec<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data/retrieval/cosqa/queries.jsonl");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    let mut words: Vec<String> = text
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter_map(|value| value["text"].as_str().map(str::to_lowercase))
        .flat_map(|text| {
            text.split(|c: char| !c.is_ascii_alphabetic()).map(str::to_owned).collect::<Vec<_>>().into_iter()
        })
        .filter(|word| word.len() >= 3)
        .collect();
    words.sort();
    words.dedup();
    words
}

/// One generated pattern: what stays the same between its occurrences.
struct Shape {
    check: &'static str,
    prefix: &'static str,
    words: Vec<String>,
    folder: &'static str,
    extension: &'static str,
    task_category: &'static str,
    title: String,
}

impl Shape {
    fn of(pattern: usize, vocabulary: &[String]) -> Self {
        let mut rng = fastrand::Rng::with_seed(pattern as u64);
        let (check, prefix, extension) = SHAPES[pattern % SHAPES.len()];
        let mut pick = || vocabulary[rng.usize(..vocabulary.len())].clone();
        let words: Vec<String> = (0..3 + pattern % 6).map(|_| pick()).collect();
        let title = format!("{} {} {} for {}", pick(), pick(), pick(), pick());
        Self {
            check,
            prefix,
            words,
            folder: FOLDERS[pattern % FOLDERS.len()],
            extension,
            task_category: TASK_CATEGORIES[pattern % TASK_CATEGORIES.len()],
            title,
        }
    }

    /// An occurrence: the constant words with a fresh path, line and value.
    fn failure(&self, task: &str, variant: usize) -> proto::CaptureFailureRequest {
        let file = format!("{}/{}_{variant}.{}", self.folder, self.words[0], self.extension);
        let message =
            format!("{} {} '{}{variant}' at {file}:{}", self.prefix, self.words.join(" "), self.words[1], 10 + variant);
        proto::CaptureFailureRequest {
            failure_id: Uuid::now_v7().to_string(),
            project: PROJECT.into(),
            task: Some(self.task(task, &file)),
            failed_checks: vec![proto::FailedCheck { name: self.check.into(), output: message.clone(), exit_code: 1 }],
            error_messages: vec![message],
            files_modified: vec![file],
            diff_summary: "2 files changed, 14 insertions(+), 3 deletions(-)".into(),
            ..Default::default()
        }
    }

    fn task(&self, task: &str, file: &str) -> proto::Task {
        proto::Task {
            task_id: task.into(),
            title: self.title.clone(),
            category: self.task_category.into(),
            files: vec![file.into()],
            description: String::new(),
        }
    }
}

async fn client(server: &TestServer) -> Client {
    QaLearningServiceClient::new(server.channel().await)
}

/// Creates the patterns through CaptureFailure: two occurrences each, in
/// two tasks, from `FILL_CLIENTS` clients at once.
async fn fill_patterns(server: &TestServer, vocabulary: &[String]) {
    let started = Instant::now();
    let vocabulary = std::sync::Arc::new(vocabulary.to_vec());
    let (latencies, elapsed) = {
        let channel = server.channel().await;
        common::latencies(FILL_CLIENTS, PATTERNS * 2, move |client, index| {
            let mut qa = QaLearningServiceClient::new(channel.clone());
            let vocabulary = std::sync::Arc::clone(&vocabulary);
            async move {
                let call = client * (PATTERNS * 2 / FILL_CLIENTS) + index;
                let (pattern, variant) = (call / 2, call % 2);
                let shape = Shape::of(pattern, &vocabulary);
                qa.capture_failure(shape.failure(&format!("T-{pattern}-{variant}"), variant)).await.unwrap();
            }
        })
        .await
    };
    let patterns: i64 = sqlx::query_scalar("SELECT count(*) FROM qa_patterns WHERE project = $1")
        .bind(PROJECT)
        .fetch_one(server.pool())
        .await
        .unwrap();
    eprintln!(
        "{} captures from {FILL_CLIENTS} clients in {:.1} s ({:.0}/s, p50 {:.2} ms): {patterns} patterns",
        PATTERNS * 2,
        elapsed.as_secs_f64(),
        (PATTERNS * 2) as f64 / elapsed.as_secs_f64(),
        millis(&latencies, 0.5),
    );
    assert!(patterns as usize >= PATTERNS * 95 / 100, "the generated shapes should stay apart: {patterns} patterns");
    // Autovacuum analyzes tables this size within a minute or two of such a
    // load; measuring before it would measure plans made without any
    // statistics (the planner then walks every pattern of the project).
    sqlx::query("ANALYZE").execute(server.pool()).await.unwrap();
    eprintln!("filled in {:.1} s", started.elapsed().as_secs_f64());
}

async fn timed_captures(qa: &mut Client, requests: Vec<proto::CaptureFailureRequest>) -> (Histogram<u64>, usize) {
    let mut latencies = histogram();
    let mut new_patterns = 0;
    for (index, request) in requests.into_iter().enumerate() {
        let begin = Instant::now();
        let response = qa.capture_failure(request).await.unwrap().into_inner();
        if index >= WARMUP {
            record(&mut latencies, begin);
        }
        new_patterns += response.links.iter().filter(|link| link.new_pattern).count();
    }
    (latencies, new_patterns)
}

/// A bare INSERT of the same failure row, one statement per call.
async fn timed_bare_inserts(pool: &PgPool, requests: &[proto::CaptureFailureRequest]) -> Histogram<u64> {
    let mut latencies = histogram();
    for (index, request) in requests.iter().enumerate() {
        let task = request.task.as_ref().unwrap();
        let begin = Instant::now();
        sqlx::query(
            "INSERT INTO qa_failures (failure_id, project, task_id, task_title, task_files, failed_checks,
                                      error_messages, files_modified, diff_summary, category, occurred_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'test_failure', now())",
        )
        .bind(Uuid::now_v7())
        .bind(PROJECT)
        .bind(format!("bare-{}", task.task_id))
        .bind(&task.title)
        .bind(&task.files)
        .bind(serde_json::json!([{"name": request.failed_checks[0].name, "output": request.failed_checks[0].output}]))
        .bind(&request.error_messages)
        .bind(&request.files_modified)
        .bind(&request.diff_summary)
        .execute(pool)
        .await
        .unwrap();
        if index >= WARMUP {
            record(&mut latencies, begin);
        }
    }
    latencies
}

async fn bench_capture(server: &TestServer, vocabulary: &[String]) {
    let mut qa = client(server).await;
    let calls = CALLS + WARMUP;
    // Known patterns, other numbers, paths and values, in new tasks.
    let joining: Vec<_> = (0..calls)
        .map(|call| {
            let pattern = call * 7919 % PATTERNS;
            Shape::of(pattern, vocabulary).failure(&format!("J-{call}"), 100 + call)
        })
        .collect();
    let bare: Vec<_> = joining.clone();
    let (joined, new_patterns) = timed_captures(&mut qa, joining).await;
    assert_eq!(new_patterns, 0, "a known pattern with other numbers joins it");
    // Shapes never seen: each starts a candidate pattern.
    let fresh: Vec<_> =
        (0..calls).map(|call| Shape::of(PATTERNS + 1000 + call, vocabulary).failure(&format!("N-{call}"), 0)).collect();
    let (started, new_patterns) = timed_captures(&mut qa, fresh).await;
    assert!(new_patterns >= calls * 9 / 10, "new shapes start patterns: {new_patterns}");
    let baseline = timed_bare_inserts(server.pool(), &bare).await;

    println!(
        "\n## CaptureFailure over gRPC with {PATTERNS} patterns in the project, {CALLS} calls per row, one client\n"
    );
    println!("| measure | p50 | p99 |\n|---|---:|---:|");
    latency_row("CaptureFailure joining a known pattern (other numbers, paths, values)", &joined);
    latency_row("CaptureFailure starting a new pattern", &started);
    latency_row("baseline: bare INSERT of the failure row (SQL)", &baseline);
}

fn warnings_request(shape: &Shape, call: usize) -> proto::GetWarningsRequest {
    let file = format!("{}/{}_new{call}.{}", shape.folder, shape.words[0], shape.extension);
    proto::GetWarningsRequest {
        project: PROJECT.into(),
        task: Some(shape.task(&format!("W-{call}"), &file)),
        session_id: String::new(),
        limit: 5,
    }
}

async fn bench_warnings(server: &TestServer, vocabulary: &[String], failures: &str) {
    let mut qa = client(server).await;
    let mut latencies = histogram();
    let mut empty = 0;
    for call in 0..CALLS + WARMUP {
        // A task like a past one: same folder and kind of file, title and
        // task category, other file names.
        let shape = Shape::of(call * 7907 % PATTERNS, vocabulary);
        let begin = Instant::now();
        let response = qa.get_warnings(warnings_request(&shape, call)).await.unwrap().into_inner();
        if call >= WARMUP {
            record(&mut latencies, begin);
        }
        empty += usize::from(response.warnings.is_empty());
    }
    assert!(empty < CALLS / 10, "tasks like past ones get warnings ({empty} got none)");
    let mut baseline = histogram();
    let mut connection = server.pool().acquire().await.unwrap();
    for call in 0..CALLS + WARMUP {
        let shape = Shape::of(call * 7907 % PATTERNS, vocabulary);
        let glob = format!("{}/*.{}", shape.folder, shape.extension);
        let begin = Instant::now();
        sqlx::query(
            "SELECT pattern_id, name, template, confidence, occurrence_count FROM qa_patterns
             WHERE project = $1 AND file_globs && $2 AND status IN ('active', 'promoted')
             ORDER BY occurrence_count * confidence DESC LIMIT 5",
        )
        .bind(PROJECT)
        .bind(vec![glob])
        .fetch_all(&mut *connection)
        .await
        .unwrap();
        if call >= WARMUP {
            record(&mut baseline, begin);
        }
    }
    println!("\n## GetWarnings over gRPC, top 5, {PATTERNS} patterns and {failures} failures, {CALLS} tasks\n");
    println!("| measure | p50 | p99 |\n|---|---:|---:|");
    latency_row("GetWarnings (files, task category, similar past tasks, words; deliveries recorded)", &latencies);
    latency_row("baseline: bare top 5 by file glob alone (SQL)", &baseline);
}

/// Copies the captured failures (and their occurrences) until the project
/// holds `FAILURES`, spread over the last 90 days, and resolves 60 %. The
/// tables are vacuumed afterwards, as autovacuum would after such a load.
async fn grow_failures(pool: &PgPool) {
    let started = Instant::now();
    let captured: i64 = sqlx::query_scalar("SELECT count(*) FROM qa_failures WHERE project = $1")
        .bind(PROJECT)
        .fetch_one(pool)
        .await
        .unwrap();
    let copies = (FAILURES as i64 - captured).max(0) / captured + 1;
    let mut transaction = pool.begin().await.unwrap();
    sqlx::query(
        "CREATE TEMP TABLE copied ON COMMIT DROP AS
         SELECT f.failure_id AS original, gen_random_uuid() AS failure_id, copy,
                now() - random() * interval '90 days' AS occurred_at
         FROM qa_failures f, generate_series(1, $2::int) AS copy
         WHERE f.project = $1 LIMIT $3",
    )
    .bind(PROJECT)
    .bind(copies as i32)
    .bind(FAILURES as i64 - captured)
    .execute(&mut *transaction)
    .await
    .unwrap();
    sqlx::query(
        "INSERT INTO qa_failures (failure_id, project, task_id, task_title, task_category, task_files,
                                  task_description, session_id, execution_id, failed_checks, error_messages,
                                  files_modified, diff_summary, category, category_rule_id, occurred_at)
         SELECT c.failure_id, f.project, f.task_id || '-c' || c.copy, f.task_title, f.task_category, f.task_files,
                f.task_description, f.session_id, f.execution_id, f.failed_checks, f.error_messages,
                f.files_modified, f.diff_summary, f.category, f.category_rule_id, c.occurred_at
         FROM copied c JOIN qa_failures f ON f.failure_id = c.original",
    )
    .execute(&mut *transaction)
    .await
    .unwrap();
    sqlx::query(
        "INSERT INTO qa_pattern_occurrences (occurrence_id, project, pattern_id, failure_id, message_index, message,
                                             template, similarity, reason, occurred_at, task_id)
         SELECT gen_random_uuid(), o.project, o.pattern_id, c.failure_id, o.message_index, o.message, o.template,
                o.similarity, o.reason, c.occurred_at, o.task_id || '-c' || c.copy
         FROM copied c JOIN qa_pattern_occurrences o ON o.failure_id = c.original",
    )
    .execute(&mut *transaction)
    .await
    .unwrap();
    sqlx::query(
        "INSERT INTO qa_failure_resolutions (failure_id, project, resolving_attempt_id, attempts, resolved_at)
         SELECT failure_id, project, gen_random_uuid(), 1 + floor(random() * 3)::int, occurred_at + interval '1 hour'
         FROM qa_failures WHERE project = $1 AND random() < 0.6
         ON CONFLICT DO NOTHING",
    )
    .bind(PROJECT)
    .execute(&mut *transaction)
    .await
    .unwrap();
    sqlx::query(
        "UPDATE qa_patterns p SET occurrence_count = n FROM (
             SELECT pattern_id, count(*) AS n FROM qa_pattern_occurrences WHERE project = $1 GROUP BY 1
         ) AS counted WHERE p.pattern_id = counted.pattern_id",
    )
    .bind(PROJECT)
    .execute(&mut *transaction)
    .await
    .unwrap();
    transaction.commit().await.unwrap();
    for table in ["qa_failures", "qa_pattern_occurrences", "qa_failure_resolutions", "qa_patterns"] {
        sqlx::query(sqlx::AssertSqlSafe(format!("VACUUM ANALYZE {table}"))).execute(pool).await.unwrap();
    }
    eprintln!("grew to {FAILURES} failures in {:.1} s", started.elapsed().as_secs_f64());
}

fn days_ago(days: i64) -> prost_types::Timestamp {
    let at = chrono::Utc::now() - chrono::Duration::days(days);
    prost_types::Timestamp { seconds: at.timestamp(), nanos: 0 }
}

async fn bench_dashboard(server: &TestServer) {
    let mut qa = client(server).await;
    let total: i64 = sqlx::query_scalar("SELECT count(*) FROM qa_failures WHERE project = $1")
        .bind(PROJECT)
        .fetch_one(server.pool())
        .await
        .unwrap();
    println!(
        "\n## Dashboard over gRPC, {total} failures over 90 days in the project, {DASHBOARD_CALLS} calls per row\n"
    );
    println!("| window | measure | p50 | p99 |\n|---|---|---:|---:|");
    for (label, days, category) in
        [("90 days", 90, ""), ("30 days (default)", 30, ""), ("90 days, category type_error", 90, "type_error")]
    {
        let request = proto::DashboardRequest {
            project: PROJECT.into(),
            window: Some(proto::TimeRange { start: Some(days_ago(days)), end: None }),
            top_patterns: 10,
            category: category.into(),
            agent_id: String::new(),
        };
        let mut latencies = histogram();
        let mut failures = 0;
        for call in 0..DASHBOARD_CALLS + 2 {
            let begin = Instant::now();
            failures = qa.dashboard(request.clone()).await.unwrap().into_inner().failures;
            if call >= 2 {
                record(&mut latencies, begin);
            }
        }
        assert!(failures > 0);
        let mut baseline = histogram();
        for call in 0..DASHBOARD_CALLS + 2 {
            let begin = Instant::now();
            sqlx::query(
                "SELECT (occurred_at AT TIME ZONE 'UTC')::date, count(*) FROM qa_failures
                 WHERE project = $1 AND occurred_at >= now() - $2 * interval '1 day'
                   AND ($3 = '' OR category = $3) GROUP BY 1",
            )
            .bind(PROJECT)
            .bind(days as f64)
            .bind(category)
            .fetch_all(server.pool())
            .await
            .unwrap();
            if call >= 2 {
                record(&mut baseline, begin);
            }
        }
        latency_row(&format!("{label} ({failures} failures) | Dashboard"), &latencies);
        latency_row(&format!("{label} | baseline: bare failures per day (SQL)"), &baseline);
    }
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let server = TestServer::start().await;
        let vocabulary = vocabulary();
        println!("# QaLearningService benchmarks ({} cores)", common::cores());
        fill_patterns(&server, &vocabulary).await;
        bench_capture(&server, &vocabulary).await;
        bench_warnings(&server, &vocabulary, &format!("{}", PATTERNS * 2 + 2 * (CALLS + WARMUP))).await;
        grow_failures(server.pool()).await;
        bench_warnings(&server, &vocabulary, &format!("{FAILURES}")).await;
        bench_dashboard(&server).await;
        server.stop().await;
    });
}
