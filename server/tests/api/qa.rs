//! QaLearningService over real gRPC and a real PostgreSQL: the whole loop
//! (capture, grouping, fix, gotcha, warning, outcome, promotion), grouping
//! corrections, exact counters under concurrency, and bad input.

use lore_domain::knowledge::watch::WatchedFolder;
use lore_proto::v1 as proto;
use lore_proto::v1::knowledge_service_client::KnowledgeServiceClient;
use lore_proto::v1::qa_learning_service_client::QaLearningServiceClient;
use lore_server::testing::TestServer;
use tonic::Code;
use tonic::transport::Channel;
use uuid::Uuid;

type Qa = QaLearningServiceClient<Channel>;

async fn client(server: &TestServer) -> Qa {
    QaLearningServiceClient::new(server.channel().await)
        .max_decoding_message_size(16 * 1024 * 1024)
        .max_encoding_message_size(16 * 1024 * 1024)
}

fn task(task_id: &str, title: &str, files: &[&str]) -> proto::Task {
    proto::Task {
        task_id: task_id.into(),
        title: title.into(),
        category: "backend".into(),
        files: files.iter().map(|file| file.to_string()).collect(),
        description: String::new(),
    }
}

fn failure(task: proto::Task, check: &str, messages: &[&str], files: &[&str]) -> proto::CaptureFailureRequest {
    proto::CaptureFailureRequest {
        failure_id: Uuid::now_v7().to_string(),
        project: "lore".into(),
        task: Some(task),
        failed_checks: vec![proto::FailedCheck { name: check.into(), output: messages.join("\n"), exit_code: 1 }],
        error_messages: messages.iter().map(|message| message.to_string()).collect(),
        files_modified: files.iter().map(|file| file.to_string()).collect(),
        ..Default::default()
    }
}

async fn capture(qa: &mut Qa, request: proto::CaptureFailureRequest) -> proto::CaptureFailureResponse {
    qa.capture_failure(request).await.expect("capture").into_inner()
}

async fn pattern(qa: &mut Qa, pattern_id: &str) -> proto::GetPatternResponse {
    qa.get_pattern(proto::GetPatternRequest { pattern_id: pattern_id.into(), occurrence_limit: 0 })
        .await
        .expect("get pattern")
        .into_inner()
}

async fn count(server: &TestServer, table: &str) -> i64 {
    sqlx::query_scalar(sqlx::AssertSqlSafe(format!("SELECT count(*) FROM {table}")))
        .fetch_one(server.pool())
        .await
        .unwrap()
}

const SCHEMA_ERROR: &str = "TypeError: Cannot read properties of undefined (reading 'id') at schema/users.ts:42:7";

#[tokio::test]
async fn the_whole_loop_from_failure_to_published_learning() {
    let folder = tempfile::tempdir().unwrap();
    let mut config = TestServer::config();
    config.knowledge.watch.folders =
        vec![WatchedFolder { path: folder.path().to_owned(), project: "lore".into(), publish: true }];
    // No held-out share here, so no significance test: task_results.rs
    // covers promotion that waits for a significant effect.
    config.qa.promotion.significance = 1.0;
    let server = TestServer::start_with(config).await;
    let mut qa = client(&server).await;

    // A failure is captured and categorized by the rule table.
    let first = capture(
        &mut qa,
        failure(task("T-1", "Add users table", &["schema/users.ts"]), "jest", &[SCHEMA_ERROR], &["schema/users.ts"]),
    )
    .await;
    assert_eq!(first.category, "test_failure", "a jest run is a test failure before its message is a runtime error");
    assert_eq!(first.category_rule_id, "test-failure");
    let link = &first.links[0];
    assert!(link.new_pattern);
    assert_eq!(link.reason, "new candidate");
    assert_eq!(link.template, "TypeError: Cannot read properties of undefined (reading <*> at <*>");
    let pattern_id = link.pattern_id.clone();

    // A second failure with other numbers and paths joins the same pattern,
    // and says why.
    let second = capture(
        &mut qa,
        failure(
            task("T-2", "Add orders table", &["schema/orders.ts"]),
            "jest",
            &["TypeError: Cannot read properties of undefined (reading 'name') at schema/orders.ts:7:19"],
            &["schema/orders.ts"],
        ),
    )
    .await;
    assert_eq!(second.links[0].pattern_id, pattern_id);
    assert!(!second.links[0].new_pattern);
    assert_eq!(second.links[0].reason, "exact template");
    let report = pattern(&mut qa, &pattern_id).await;
    let stored = report.pattern.unwrap();
    assert_eq!((stored.occurrence_count, stored.task_count), (2, 2));
    assert_eq!(stored.status, proto::PatternStatus::Active as i32, "two occurrences make it warnable");
    assert_eq!(stored.file_globs, ["schema/*.ts"]);
    assert_eq!(report.occurrences.len(), 2);

    // A replayed capture stores nothing and answers as the first time.
    let mut replay = failure(task("T-2", "", &[]), "jest", &["other text"], &[]);
    replay.failure_id = second.ack.as_ref().unwrap().id.clone();
    let replayed = capture(&mut qa, replay).await;
    assert!(replayed.ack.unwrap().duplicate);
    assert_eq!(replayed.links[0].pattern_id, pattern_id);
    assert_eq!(count(&server, "qa_pattern_occurrences").await, 2);

    // Two attempts: the second succeeds, resolves the failure and becomes a
    // gotcha linked to the pattern.
    let failure_id = first.ack.unwrap().id;
    let attempt = |number: u32, outcome: proto::FixOutcome, approach: &str| proto::RecordFixAttemptRequest {
        attempt_id: Uuid::now_v7().to_string(),
        failure_id: failure_id.clone(),
        attempt_number: number,
        approach: approach.into(),
        summary: "guard against a missing row before reading its id".into(),
        outcome: outcome.into(),
        files_changed: vec!["schema/users.ts".into()],
        ..Default::default()
    };
    let failed = qa.record_fix_attempt(attempt(1, proto::FixOutcome::Failure, "retry")).await.unwrap().into_inner();
    assert!(!failed.resolved);
    let taken = qa.record_fix_attempt(attempt(1, proto::FixOutcome::Success, "again")).await.unwrap_err();
    assert_eq!(taken.code(), Code::AlreadyExists, "{taken:?}");
    let fixed = qa
        .record_fix_attempt(attempt(2, proto::FixOutcome::Success, "Check the row exists before reading it"))
        .await
        .unwrap()
        .into_inner();
    assert!(fixed.resolved);
    assert_eq!(fixed.attempts, 2);
    let mut knowledge = KnowledgeServiceClient::new(server.channel().await);
    let gotcha = knowledge
        .get_entry(proto::GetEntryRequest { entry_id: fixed.gotcha_entry_id.clone(), ..Default::default() })
        .await
        .unwrap()
        .into_inner()
        .entry
        .unwrap();
    assert_eq!(gotcha.kind, proto::EntryKind::Gotcha as i32);
    assert!(gotcha.body.contains("Check the row exists before reading it"), "{}", gotcha.body);
    let Some(proto::entry::Details::Gotcha(details)) = gotcha.details else {
        panic!("gotcha details: {:?}", gotcha.details)
    };
    assert_eq!(details.qa_pattern_id, pattern_id);
    assert!((details.confidence - 0.5).abs() < 1e-9, "1 of 2 attempts succeeded: {}", details.confidence);
    let stored = pattern(&mut qa, &pattern_id).await.pattern.unwrap();
    assert_eq!(stored.recommended_fix, "Check the row exists before reading it", "filled from the fix");

    // Three more tasks hit it, so it is seen in five tasks.
    for index in 3..=5 {
        let file = format!("schema/t{index}.ts");
        let message =
            format!("TypeError: Cannot read properties of undefined (reading 'x{index}') at {file}:{index}:1");
        let captured = capture(
            &mut qa,
            failure(task(&format!("T-{index}"), "Add a table", &[&file]), "jest", &[&message], &[&file]),
        )
        .await;
        assert_eq!(captured.links[0].pattern_id, pattern_id);
    }

    // A similar new task gets the warning, as actionable text.
    let mut deliveries = Vec::new();
    for index in 6..=10 {
        let warnings = qa
            .get_warnings(proto::GetWarningsRequest {
                project: "lore".into(),
                task: Some(task(&format!("T-{index}"), "Add invoices table", &["schema/invoices.ts"])),
                session_id: String::new(),
                limit: 0,
            })
            .await
            .unwrap()
            .into_inner();
        assert!(!warnings.held_out);
        let warning = warnings.warnings.first().expect("a warning for a schema task");
        assert_eq!(warning.pattern_id, pattern_id);
        assert!(warning.reason.contains("files match schema/*.ts"), "{}", warning.reason);
        assert!(warning.reason.contains("similar past task `Addˆaˆtable` (67% of the words)"), "{}", warning.reason);
        assert!(warning.text.contains("How to avoid (reviewed fix): Check the row exists"), "{}", warning.text);
        assert!(warning.text.contains("Seen 5 times in 5 tasks"), "{}", warning.text);
        deliveries.push(warning.delivery_id.clone());
    }
    let unrelated = qa
        .get_warnings(proto::GetWarningsRequest {
            project: "lore".into(),
            task: Some(proto::Task {
                task_id: "T-99".into(),
                files: vec!["ui/button.css".into()],
                ..Default::default()
            }),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert!(unrelated.warnings.is_empty(), "{:?}", unrelated.warnings);

    // Outcomes move effectiveness and confidence exactly once per delivery,
    // even when the same outcome is sent again.
    let before = pattern(&mut qa, &pattern_id).await.pattern.unwrap().confidence;
    let outcome = proto::RecordOutcomeRequest {
        delivery_ids: deliveries.clone(),
        outcome: proto::WarningOutcome::Prevented.into(),
        note: "passed QA".into(),
    };
    let recorded = qa.record_outcome(outcome.clone()).await.unwrap().into_inner();
    assert_eq!(recorded.updated, 5);
    let standing = &recorded.patterns[0];
    assert_eq!(standing.effectiveness, 1.0);
    assert!((standing.confidence - (before + 0.25)).abs() < 1e-9, "{before} + 5 x 0.05 = {}", standing.confidence);
    let retried = qa.record_outcome(outcome).await.unwrap().into_inner();
    assert_eq!(retried.updated, 0);
    assert_eq!(retried.patterns[0].confidence, standing.confidence);
    let stored = pattern(&mut qa, &pattern_id).await.pattern.unwrap();
    assert_eq!(stored.warnings_delivered, 5);

    // A task that ended before QA could tell is recorded and judges nothing.
    let unfinished = qa
        .get_warnings(proto::GetWarningsRequest {
            project: "lore".into(),
            task: Some(task("T-11", "Add refunds table", &["schema/refunds.ts"])),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let incomplete = qa
        .record_outcome(proto::RecordOutcomeRequest {
            delivery_ids: vec![unfinished.warnings[0].delivery_id.clone()],
            outcome: proto::WarningOutcome::TaskIncomplete.into(),
            note: "agent stopped".into(),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(incomplete.updated, 1);
    assert_eq!(incomplete.patterns[0].confidence, standing.confidence);
    assert_eq!(incomplete.patterns[0].effectiveness, 1.0);

    // Over the thresholds: a candidate, proposed, approved and published.
    let candidates = qa
        .list_promotion_candidates(proto::ListPromotionCandidatesRequest { project: "lore".into(), limit: 0 })
        .await
        .unwrap()
        .into_inner()
        .candidates;
    assert_eq!(
        candidates.iter().map(|candidate| candidate.pattern_id.as_str()).collect::<Vec<_>>(),
        [pattern_id.as_str()]
    );
    let promotion_id = Uuid::now_v7().to_string();
    let proposed = qa
        .propose_promotion(proto::ProposePromotionRequest {
            promotion_id: promotion_id.clone(),
            pattern_id: pattern_id.clone(),
            actor: "reviewer".into(),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(proposed.status, proto::PromotionStatus::Pending as i32);
    for section in [
        "## When it occurs",
        "## What goes wrong",
        "## How to avoid it",
        "## Frequency",
        "## Example failures",
        "Task T-1",
    ] {
        assert!(proposed.markdown.contains(section), "{section} missing from\n{}", proposed.markdown);
    }
    let review = |note: &str| proto::ReviewPromotionRequest {
        promotion_id: promotion_id.clone(),
        actor: "reviewer".into(),
        note: note.into(),
    };
    let published = qa.approve_promotion(review("")).await.unwrap().into_inner();
    assert_eq!(published.status, proto::PromotionStatus::Published as i32);
    let file = std::fs::read_to_string(folder.path().join(format!("QA-{}.md", &pattern_id.replace('-', "")[20..])))
        .expect("the learning is written to the publish folder");
    assert!(file.contains("status: \"active\""), "{file}");
    let entry = |entry_id: String| {
        let mut knowledge = knowledge.clone();
        async move {
            knowledge
                .get_entry(proto::GetEntryRequest { entry_id, ..Default::default() })
                .await
                .unwrap()
                .into_inner()
                .entry
                .unwrap()
        }
    };
    let learning = entry(published.entry_id.clone()).await;
    assert_eq!(learning.status, proto::EntryStatus::Active as i32);
    assert_eq!(pattern(&mut qa, &pattern_id).await.pattern.unwrap().status, proto::PatternStatus::Promoted as i32);
    let again = qa.approve_promotion(review("")).await.unwrap().into_inner();
    assert_eq!(again.history.len(), published.history.len(), "an approval retried changes nothing");
    // Repositories read it where they live.
    let standing = |project: &str| proto::StandingInstructionsRequest { project: project.into() };
    let key = format!("QA-{}", &pattern_id.replace('-', "")[20..]);
    let list = qa.standing_instructions(standing("lore")).await.unwrap().into_inner();
    assert_eq!(list.instructions.len(), 1, "{list:?}");
    assert_eq!(
        (list.instructions[0].key.as_str(), list.instructions[0].promotion_id.as_str()),
        (key.as_str(), promotion_id.as_str())
    );
    assert!(list.instructions[0].text.starts_with("- **") && list.instructions[0].text.contains(&key), "{list:?}");
    assert!(list.withdrawn.is_empty());
    assert!(published.instructions.contains("lore instructions sync"), "{}", published.instructions);
    assert!(qa.standing_instructions(standing("other")).await.unwrap().into_inner().instructions.is_empty());
    let refused = qa.standing_instructions(standing("no such/project")).await.unwrap_err();
    assert_eq!(refused.code(), Code::InvalidArgument);
    assert!(refused.message().starts_with("project"), "{}", refused.message());

    // Rolled back: the learning is obsolete, the history is kept.
    let missing_note = qa.rollback_promotion(review("")).await.unwrap_err();
    assert_eq!(missing_note.code(), Code::InvalidArgument);
    assert!(missing_note.message().starts_with("note:"), "{}", missing_note.message());
    let rolled_back = qa.rollback_promotion(review("wrong advice for ORM v2")).await.unwrap().into_inner();
    assert_eq!(rolled_back.status, proto::PromotionStatus::RolledBack as i32);
    let statuses: Vec<i32> = rolled_back.history.iter().map(|event| event.status).collect();
    assert_eq!(
        statuses,
        [
            proto::PromotionStatus::Pending as i32,
            proto::PromotionStatus::Approved as i32,
            proto::PromotionStatus::Published as i32,
            proto::PromotionStatus::RolledBack as i32
        ]
    );
    assert_eq!(rolled_back.history[3].note, "wrong advice for ORM v2");
    assert_eq!(entry(published.entry_id).await.status, proto::EntryStatus::Obsolete as i32);
    assert_eq!(pattern(&mut qa, &pattern_id).await.pattern.unwrap().status, proto::PatternStatus::Active as i32);
    let list = qa.standing_instructions(standing("lore")).await.unwrap().into_inner();
    assert!(list.instructions.is_empty(), "{list:?}");
    assert_eq!(list.withdrawn, [key]);

    // The dashboard sees all of it.
    let dashboard = qa
        .dashboard(proto::DashboardRequest { project: "lore".into(), ..Default::default() })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(dashboard.failures, 5);
    assert_eq!(dashboard.resolved, 1);
    assert_eq!(dashboard.mean_attempts_to_pass, 2.0);
    assert_eq!(dashboard.prevention_effectiveness, 1.0);
    assert_eq!(dashboard.warnings_delivered, 6);
    assert_eq!(dashboard.top_patterns[0].pattern_id, pattern_id);
    assert_eq!(dashboard.categories[0].category, "test_failure");
    let today = dashboard.failure_rate.last().unwrap();
    assert_eq!(today.failures, 5);
    assert_eq!(today.tasks, 11, "5 tasks failed, 6 others were warned: {today:?}");
}

#[tokio::test]
async fn a_failure_after_a_warning_counts_against_it_once() {
    let server = TestServer::start().await;
    let mut qa = client(&server).await;
    for index in 1..=2 {
        capture(
            &mut qa,
            failure(
                task(&format!("T-{index}"), "", &["api/a.rs"]),
                "cargo test",
                &["thread 'main' panicked at index out of bounds: the len is 3 but the index is 7"],
                &["api/a.rs"],
            ),
        )
        .await;
    }
    let warnings = qa
        .get_warnings(proto::GetWarningsRequest {
            project: "lore".into(),
            task: Some(task("T-3", "", &["api/b.rs"])),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .warnings;
    assert_eq!(warnings.len(), 1);
    let confidence = warnings[0].confidence;
    // The warned task fails with the pattern anyway: its delivery is judged
    // by the capture, and a later RecordOutcome does not count it again.
    capture(
        &mut qa,
        failure(
            task("T-3", "", &["api/b.rs"]),
            "cargo test",
            &["thread 'main' panicked at index out of bounds: the len is 1 but the index is 2"],
            &["api/b.rs"],
        ),
    )
    .await;
    let stored = pattern(&mut qa, &warnings[0].pattern_id).await.pattern.unwrap();
    assert_eq!(stored.effectiveness, 0.0);
    assert!((stored.confidence - (confidence + 0.02 - 0.03)).abs() < 1e-9, "{confidence} -> {}", stored.confidence);
    let late = qa
        .record_outcome(proto::RecordOutcomeRequest {
            delivery_ids: vec![warnings[0].delivery_id.clone()],
            outcome: proto::WarningOutcome::FailedAnyway.into(),
            note: String::new(),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(late.updated, 0);
    assert_eq!(late.patterns[0].confidence, stored.confidence);
}

/// Each server keeps the patterns of the routes it has grouped in memory;
/// what another replica changed in the meantime (a new pattern, a widened
/// template, a merge) must still decide the grouping.
#[tokio::test]
async fn replicas_group_alike_whatever_each_one_saw_before() {
    let first = TestServer::start().await;
    let second = first.sibling(TestServer::config()).await;
    let (mut one, mut other) = (client(&first).await, client(&second).await);
    // Seven tokens, one route: two differing words keep patterns apart,
    // one joins (6/7 >= 0.85).
    let mismatch = |words: &str| format!("error TS2322: Type mismatch in {words}");
    let link = |response: proto::CaptureFailureResponse| response.links[0].clone();
    let mut tasks = 0;
    let mut failure = |words: &str| {
        tasks += 1;
        failure(task(&format!("T-{tasks}"), "", &[]), "tsc", &[&mismatch(words)], &[])
    };

    let users = link(capture(&mut one, failure("users module")).await);
    let billing = link(capture(&mut other, failure("billing ledger")).await);
    assert!(users.new_pattern && billing.new_pattern);
    assert_ne!(users.pattern_id, billing.pattern_id);

    // The other replica's pattern, which the first has not seen.
    let again = link(capture(&mut one, failure("billing ledger")).await);
    assert_eq!((again.pattern_id.as_str(), again.new_pattern), (billing.pattern_id.as_str(), false));

    // The other replica widens it; the first compares with the widened
    // template (a perfect fit), not the one it read before (6 of 7).
    let widened = link(capture(&mut other, failure("billing ledgers")).await);
    assert_eq!(widened.pattern_id, billing.pattern_id);
    let journal = link(capture(&mut one, failure("billing journal")).await);
    assert_eq!(journal.pattern_id, billing.pattern_id);
    assert_eq!(journal.similarity, 1.0, "{}", journal.reason);

    // The other replica merges; the first sends the merged pattern's
    // messages to the survivor.
    other
        .merge_patterns(proto::MergePatternsRequest {
            into_pattern_id: billing.pattern_id.clone(),
            pattern_ids: vec![users.pattern_id.clone()],
            reason: "one type mismatch".into(),
        })
        .await
        .unwrap();
    let merged = link(capture(&mut one, failure("users module")).await);
    assert_eq!(merged.pattern_id, billing.pattern_id);
    assert!(merged.reason.starts_with("merged into"), "{}", merged.reason);
    assert_eq!(count(&first, "qa_patterns").await, 2, "no replica started a pattern another one had");
}

#[tokio::test]
async fn merges_and_splits_are_remembered_by_later_captures() {
    let server = TestServer::start().await;
    let mut qa = client(&server).await;
    let timeout = |host: &str| format!("connect ECONNREFUSED while calling {host} during the seed step");
    let a = capture(&mut qa, failure(task("T-1", "", &[]), "e2e", &[&timeout("redis")], &[])).await.links[0].clone();
    let b =
        capture(&mut qa, failure(task("T-2", "", &[]), "e2e", &["seed step failed: database is not reachable"], &[]))
            .await
            .links[0]
            .clone();
    assert_ne!(a.pattern_id, b.pattern_id);

    // Merged: b's messages now join a, and say so.
    let merged = qa
        .merge_patterns(proto::MergePatternsRequest {
            into_pattern_id: a.pattern_id.clone(),
            pattern_ids: vec![b.pattern_id.clone()],
            reason: "same outage".into(),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!((merged.occurrence_count, merged.task_count), (2, 2));
    let later =
        capture(&mut qa, failure(task("T-3", "", &[]), "e2e", &["seed step failed: database is not reachable"], &[]))
            .await
            .links[0]
            .clone();
    assert_eq!(later.pattern_id, a.pattern_id);
    assert!(later.reason.starts_with("merged into"), "{}", later.reason);
    let merged_away = pattern(&mut qa, &b.pattern_id).await.pattern.unwrap();
    assert_eq!(merged_away.status, proto::PatternStatus::Merged as i32);
    assert_eq!(merged_away.merged_into, a.pattern_id);

    // Split: the "postgres" occurrences move out, and the next "postgres"
    // message follows the split instead of rejoining a.
    let postgres =
        capture(&mut qa, failure(task("T-4", "", &[]), "e2e", &[&timeout("postgres")], &[])).await.links[0].clone();
    assert_eq!(postgres.pattern_id, a.pattern_id);
    assert!(postgres.reason.starts_with("similarity 0.8"), "{}", postgres.reason);
    let occurrences = pattern(&mut qa, &a.pattern_id).await.occurrences;
    let postgres_occurrence = occurrences.iter().find(|occurrence| occurrence.task_id == "T-4").unwrap();
    let split_id = Uuid::now_v7().to_string();
    let request = proto::SplitPatternRequest {
        pattern_id: a.pattern_id.clone(),
        occurrence_ids: vec![postgres_occurrence.occurrence_id.clone()],
        new_name: "postgres is down".into(),
        reason: "different service".into(),
        split_id: split_id.clone(),
    };
    let split = qa.split_pattern(request.clone()).await.unwrap().into_inner();
    assert_eq!(split.split.as_ref().unwrap().pattern_id, split_id);
    assert_eq!(split.split.as_ref().unwrap().occurrence_count, 1);
    assert_eq!(split.original.as_ref().unwrap().occurrence_count, 3);
    let retried = qa.split_pattern(request).await.unwrap().into_inner();
    assert_eq!(retried.original.unwrap().occurrence_count, 3, "a retried split does not split again");
    let next =
        capture(&mut qa, failure(task("T-5", "", &[]), "e2e", &[&timeout("postgres")], &[])).await.links[0].clone();
    assert_eq!(next.pattern_id, split_id);
    assert_eq!(next.reason, "split rule: different service");
    let redis =
        capture(&mut qa, failure(task("T-6", "", &[]), "e2e", &[&timeout("redis")], &[])).await.links[0].clone();
    assert_eq!(redis.pattern_id, a.pattern_id);
}

#[tokio::test]
async fn sixteen_concurrent_captures_of_one_pattern_leave_exact_counters() {
    let server = TestServer::start().await;
    let qa = client(&server).await;
    let mut tasks = Vec::new();
    for index in 0..16 {
        let mut qa = qa.clone();
        tasks.push(tokio::spawn(async move {
            let message = format!("error TS2322: Type 'number' is not assignable to type 'string' in src/m{index}.ts");
            capture(&mut qa, failure(task(&format!("T-{index}"), "", &[]), "tsc", &[&message], &[])).await
        }));
    }
    let mut patterns = Vec::new();
    for task in tasks {
        let captured = task.await.unwrap();
        assert_eq!(captured.category, "type_error");
        patterns.push(captured.links[0].pattern_id.clone());
    }
    patterns.dedup();
    assert_eq!(patterns.len(), 1, "one pattern, however the captures interleave");
    let mut qa = qa;
    let stored = pattern(&mut qa, &patterns[0]).await.pattern.unwrap();
    assert_eq!((stored.occurrence_count, stored.task_count), (16, 16));
    assert!((stored.confidence - (0.5 + 15.0 * 0.02)).abs() < 1e-9, "{}", stored.confidence);
    assert_eq!(count(&server, "qa_patterns").await, 1);
}

#[tokio::test]
async fn categories_are_data() {
    let server = TestServer::start().await;
    let mut qa = client(&server).await;
    let rule = proto::CategoryRule {
        rule_id: "flaky".into(),
        project: "lore".into(),
        priority: 50,
        category: "flaky_test".into(),
        check_name_regex: String::new(),
        message_regex: "(timed out waiting for element|flaky)".into(),
        enabled: true,
    };
    qa.upsert_category_rule(proto::UpsertCategoryRuleRequest { rule: Some(rule) }).await.unwrap();
    let captured =
        capture(&mut qa, failure(task("T-1", "", &[]), "playwright", &["Timed out waiting for element #submit"], &[]))
            .await;
    assert_eq!((captured.category.as_str(), captured.category_rule_id.as_str()), ("flaky_test", "flaky"));
    let rules = qa
        .list_category_rules(proto::ListCategoryRulesRequest { project: "lore".into() })
        .await
        .unwrap()
        .into_inner()
        .rules;
    assert_eq!(rules[0].rule_id, "flaky");
    let listed = qa
        .list_patterns(proto::ListPatternsRequest {
            project: "lore".into(),
            category: "flaky_test".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(listed.patterns.len(), 1);

    let bad_regex = qa
        .upsert_category_rule(proto::UpsertCategoryRuleRequest {
            rule: Some(proto::CategoryRule {
                rule_id: "x".into(),
                category: "x".into(),
                message_regex: "(".into(),
                ..Default::default()
            }),
        })
        .await
        .unwrap_err();
    assert_eq!(bad_regex.code(), Code::InvalidArgument);
    assert!(bad_regex.message().starts_with("rule.message_regex: invalid regex"), "{}", bad_regex.message());
}

#[tokio::test]
async fn bad_input_gets_a_clear_status_and_stores_nothing() {
    let server = TestServer::start().await;
    let mut qa = client(&server).await;
    let base = failure(task("T-1", "", &[]), "jest", &["boom"], &[]);
    let cases: Vec<(&str, proto::CaptureFailureRequest, Code, &str)> = vec![
        (
            "no messages",
            proto::CaptureFailureRequest { error_messages: vec![], failed_checks: vec![], ..base.clone() },
            Code::InvalidArgument,
            "error_messages: at least one",
        ),
        (
            "100,000 messages",
            proto::CaptureFailureRequest { error_messages: vec!["x".into(); 100_000], ..base.clone() },
            Code::InvalidArgument,
            "error_messages: 100000 messages",
        ),
        (
            "a 1 MB message",
            proto::CaptureFailureRequest { error_messages: vec!["y".repeat(1024 * 1024)], ..base.clone() },
            Code::InvalidArgument,
            "error_messages[0]: 1048576 bytes",
        ),
        (
            "a NUL byte",
            proto::CaptureFailureRequest { error_messages: vec!["ok".into(), "bad\0byte".into()], ..base.clone() },
            Code::InvalidArgument,
            "error_messages[1]: must not contain NUL",
        ),
        (
            "a NUL in a path",
            proto::CaptureFailureRequest { files_modified: vec!["a\0.ts".into()], ..base.clone() },
            Code::InvalidArgument,
            "files_modified[0]",
        ),
        (
            "no task",
            proto::CaptureFailureRequest { task: None, ..base.clone() },
            Code::InvalidArgument,
            "task: required",
        ),
        (
            "a bad failure id",
            proto::CaptureFailureRequest { failure_id: "nope".into(), ..base.clone() },
            Code::InvalidArgument,
            "failure_id",
        ),
        (
            "a bad project",
            proto::CaptureFailureRequest { project: "a b".into(), ..base.clone() },
            Code::InvalidArgument,
            "project",
        ),
    ];
    for (case, request, code, message) in cases {
        let status = qa.capture_failure(request).await.unwrap_err();
        assert_eq!(status.code(), code, "{case}: {status:?}");
        assert!(status.message().starts_with(message), "{case}: {}", status.message());
    }
    assert_eq!(count(&server, "qa_failures").await, 0);
    assert_eq!(count(&server, "qa_patterns").await, 0);

    let unknown = Uuid::now_v7().to_string();
    let missing = qa
        .get_pattern(proto::GetPatternRequest { pattern_id: unknown.clone(), occurrence_limit: 0 })
        .await
        .unwrap_err();
    assert_eq!(missing.code(), Code::NotFound);
    let missing = qa
        .record_outcome(proto::RecordOutcomeRequest {
            delivery_ids: vec![unknown.clone()],
            outcome: proto::WarningOutcome::Prevented.into(),
            note: String::new(),
        })
        .await
        .unwrap_err();
    assert_eq!(missing.code(), Code::NotFound);
    assert!(missing.message().contains("delivery_ids[0]"), "{}", missing.message());
    let wrong_enum = qa
        .record_outcome(proto::RecordOutcomeRequest {
            delivery_ids: vec![unknown.clone()],
            outcome: 42,
            note: String::new(),
        })
        .await
        .unwrap_err();
    assert_eq!(wrong_enum.code(), Code::InvalidArgument);
    assert!(wrong_enum.message().starts_with("outcome: unknown value 42"), "{}", wrong_enum.message());
    let fix = qa
        .record_fix_attempt(proto::RecordFixAttemptRequest {
            attempt_id: Uuid::now_v7().to_string(),
            failure_id: unknown.clone(),
            attempt_number: 1,
            outcome: proto::FixOutcome::Success.into(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(fix.code(), Code::NotFound);
    let category = qa
        .list_patterns(proto::ListPatternsRequest {
            project: "lore".into(),
            category: "no_such".into(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(category.code(), Code::InvalidArgument);
    assert!(category.message().starts_with("category: unknown category \"no_such\""), "{}", category.message());
    let merge = qa
        .merge_patterns(proto::MergePatternsRequest {
            into_pattern_id: unknown.clone(),
            pattern_ids: vec![Uuid::now_v7().to_string()],
            reason: String::new(),
        })
        .await
        .unwrap_err();
    assert_eq!(merge.code(), Code::NotFound);
    let propose = qa
        .propose_promotion(proto::ProposePromotionRequest {
            promotion_id: Uuid::now_v7().to_string(),
            pattern_id: unknown,
            actor: "me".into(),
        })
        .await
        .unwrap_err();
    assert_eq!(propose.code(), Code::NotFound);
}

#[tokio::test]
async fn secrets_in_failures_are_redacted_before_they_are_stored() {
    let server = TestServer::start().await;
    let mut qa = client(&server).await;
    let secret = "ghp_Q8vZk3mX9bT5nK2pL8rW1yY4cC7dE0fHjR2s";
    let captured =
        capture(&mut qa, failure(task("T-1", "", &[]), "deploy", &[&format!("auth failed for token {secret}")], &[]))
            .await;
    assert!(!captured.links[0].message.contains(secret), "{}", captured.links[0].message);
    let stored: String = sqlx::query_scalar("SELECT error_messages::text || failed_checks::text FROM qa_failures")
        .fetch_one(server.pool())
        .await
        .unwrap();
    assert!(!stored.contains(secret), "{stored}");
}
