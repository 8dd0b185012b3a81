//! QaLearningService benchmarks (`make bench`): CaptureFailure and
//! GetWarnings latency with 10,000 patterns in the project, and the
//! dashboard with 100,000 failures. Baselines are measured in the same run
//! on the same database: a bare INSERT of the failure row for capture (and
//! the injection screen of the same messages alone, as a share of it), a
//! bare top-5 query over the file-glob index for warnings, and a bare
//! per-day count for the dashboard; RemineProject over the largest window
//! of that project, against reading the same occurrences in SQL.
//!
//! The failures are generated (see `common::failures`). The patterns are
//! created through the real
//! CaptureFailure RPC (two occurrences each, so they can be warned about);
//! the dashboard's 100,000 failures are those captures copied in SQL with
//! their occurrences and spread over 90 days, 60 % of them resolved.

mod common;

use std::time::Instant;

use common::failures::{Shape, fill_patterns, vocabulary};
use common::{histogram, latency_row, project_rows, record};
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
const CALLS: usize = 500;
const WARMUP: usize = 50;
const DASHBOARD_CALLS: usize = 20;

type Client = QaLearningServiceClient<Channel>;

async fn client(server: &TestServer) -> Client {
    QaLearningServiceClient::new(server.channel().await)
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
            Shape::of(PROJECT, pattern, vocabulary).failure(&format!("J-{call}"), 100 + call)
        })
        .collect();
    let bare: Vec<_> = joining.clone();
    let (joined, new_patterns) = timed_captures(&mut qa, joining).await;
    assert_eq!(new_patterns, 0, "a known pattern with other numbers joins it");
    // Shapes never seen: each starts a candidate pattern.
    let fresh: Vec<_> = (0..calls)
        .map(|call| Shape::of(PROJECT, PATTERNS + 1000 + call, vocabulary).failure(&format!("N-{call}"), 0))
        .collect();
    let (started, new_patterns) = timed_captures(&mut qa, fresh).await;
    assert!(new_patterns >= calls * 9 / 10, "new shapes start patterns: {new_patterns}");
    let baseline = timed_bare_inserts(server.pool(), &bare).await;
    let screening = timed_screening(&bare);

    println!(
        "\n## CaptureFailure over gRPC with {PATTERNS} patterns in the project, {CALLS} calls per row, one client\n"
    );
    println!("| measure | p50 | p99 |\n|---|---:|---:|");
    latency_row("CaptureFailure joining a known pattern (other numbers, paths, values)", &joined);
    latency_row("CaptureFailure starting a new pattern", &started);
    latency_row("baseline: bare INSERT of the failure row (SQL)", &baseline);
    latency_row("the injection screen of one capture alone (its messages and templates, in process)", &screening);
    let share = |quantile: f64| {
        100.0 * screening.value_at_quantile(quantile) as f64 / joined.value_at_quantile(quantile).max(1) as f64
    };
    println!(
        "\nScreening is {:.1} % of CaptureFailure's p50 ({:.1} % at p99), joining a known pattern.",
        share(0.5),
        share(0.99)
    );
}

/// What the injection screen costs a capture: the same messages through
/// the step CaptureFailure runs (template each, screen message and
/// template), timed alone.
fn timed_screening(requests: &[proto::CaptureFailureRequest]) -> Histogram<u64> {
    let mut latencies = histogram();
    for (index, request) in requests.iter().enumerate() {
        let begin = Instant::now();
        let (_, held) = lore_domain::qa::capture::screen_messages(
            &request.error_messages,
            &Default::default(),
            &Default::default(),
            &request.project,
        );
        assert!(held.iter().all(Option::is_none), "a generated failure was held: {:?}", request.error_messages);
        if index >= WARMUP {
            record(&mut latencies, begin);
        }
    }
    latencies
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
    let (mut named, mut silent) = (0, 0);
    for call in 0..CALLS + WARMUP {
        // A task like a past one: same folder and kind of file, title and
        // task category, other file names.
        let shape = Shape::of(PROJECT, call * 7907 % PATTERNS, vocabulary);
        let begin = Instant::now();
        let response = qa.get_warnings(warnings_request(&shape, call)).await.unwrap().into_inner();
        if call >= WARMUP {
            record(&mut latencies, begin);
        }
        // A failure whose line names nothing (a compiler's warning, a test
        // runner's expectation line) is never warned of by name, so only a
        // task like a past named failure must get a warning.
        if !lore_calls::memory::is_nameless(&shape.message(0)) {
            named += 1;
            silent += usize::from(response.warnings.is_empty());
        }
    }
    assert!(named > (CALLS + WARMUP) / 2, "most generated failures name themselves ({named})");
    assert!(silent < named / 10, "tasks like past named failures get warnings ({silent} of {named} got none)");
    let mut baseline = histogram();
    let mut connection = server.pool().acquire().await.unwrap();
    for call in 0..CALLS + WARMUP {
        let shape = Shape::of(PROJECT, call * 7907 % PATTERNS, vocabulary);
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
    println!(
        "\n## GetWarnings over gRPC, top 5, {PATTERNS} patterns and {failures} failures, {} tasks \
         ({named} like a past failure that names itself, {silent} of those without a warning)\n",
        CALLS + WARMUP
    );
    println!("| measure | p50 | p99 |\n|---|---:|---:|");
    latency_row("GetWarnings (files, task category, similar past tasks, words; deliveries recorded)", &latencies);
    latency_row("baseline: bare top 5 by file glob alone (SQL)", &baseline);
}

/// Copies the captured failures (and their occurrences) until the project
/// holds `FAILURES`, spread over the last 90 days, and resolves 60 %. The
/// tables are vacuumed afterwards, as autovacuum would after such a load.
async fn grow_failures(pool: &PgPool) {
    let started = Instant::now();
    let captured = project_rows(pool, "qa_failures", PROJECT).await;
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
    let total = project_rows(server.pool(), "qa_failures", PROJECT).await;
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
        fill_patterns(&server, PROJECT, PATTERNS, &vocabulary).await;
        bench_capture(&server, &vocabulary).await;
        bench_warnings(&server, &vocabulary, &format!("{}", PATTERNS * 2 + 2 * (CALLS + WARMUP))).await;
        grow_failures(server.pool()).await;
        bench_warnings(&server, &vocabulary, &format!("{FAILURES}")).await;
        bench_dashboard(&server).await;
        bench_remining(&server).await;
        server.stop().await;
    });
}

/// Re-mining reads at most this many occurrences (`RemineProject`'s cap).
const REMINE_WINDOW: u32 = 50_000;
const REMINE_CALLS: usize = 3;

async fn bench_remining(server: &TestServer) {
    let mut qa = client(server).await;
    let occurrences = project_rows(server.pool(), "qa_pattern_occurrences", PROJECT).await;
    println!(
        "\n## RemineProject over gRPC, the newest {REMINE_WINDOW} of {occurrences} occurrences, {REMINE_CALLS} calls\n"
    );
    println!("| measure | p50 | p99 |\n|---|---:|---:|");
    let request = proto::RemineProjectRequest { project: PROJECT.into(), window: REMINE_WINDOW };
    let mut latencies = histogram();
    // The first call proposes the changes (no person corrected this
    // project, so re-mining makes none by itself); the later ones find the
    // same moves proposed already.
    let mut first = None;
    for _ in 0..REMINE_CALLS {
        let begin = Instant::now();
        let done = qa.remine_project(request.clone()).await.unwrap().into_inner();
        record(&mut latencies, begin);
        first.get_or_insert(done);
    }
    let done = first.expect("a call");
    let mut baseline = histogram();
    for _ in 0..REMINE_CALLS {
        let begin = Instant::now();
        sqlx::query(
            "SELECT o.occurrence_id, o.pattern_id, p.category, o.message, o.template
             FROM qa_pattern_occurrences o JOIN qa_patterns p USING (pattern_id)
             WHERE o.project = $1 ORDER BY o.occurred_at DESC, o.occurrence_id DESC LIMIT $2",
        )
        .bind(PROJECT)
        .bind(i64::from(REMINE_WINDOW))
        .fetch_all(server.pool())
        .await
        .unwrap();
        record(&mut baseline, begin);
    }
    latency_row(
        &format!(
            "RemineProject (first call: {} merges, {} splits, {} proposed, {} turned down)",
            done.merges, done.splits, done.proposed, done.rejected
        ),
        &latencies,
    );
    latency_row("baseline: reading the same occurrences (SQL)", &baseline);
}
