//! The learning loop driven by task results alone, no delivery ids: warn,
//! fail, fix, warn again, pass, with a held-out share on. Every outcome, a
//! missed opportunity, the dashboard's rates against values computed here,
//! and a pattern that becomes promotable only once its effect is
//! significant. Then the bad input of RecordTaskResult.

use lore_domain::qa::instructions::InstructionsFile;
use lore_domain::qa::warnings::held_out;
use lore_proto::v1 as proto;
use lore_proto::v1::action_service_client::ActionServiceClient;
use lore_proto::v1::qa_learning_service_client::QaLearningServiceClient;
use lore_server::testing::TestServer;
use tonic::Code;
use tonic::transport::Channel;
use uuid::Uuid;

type Qa = QaLearningServiceClient<Channel>;

const PROJECT: &str = "lore";
const HOLDOUT: f64 = 0.5;
const WARNED_ERROR: &str = "TypeError: Cannot read properties of undefined (reading 'id') at schema/users.ts:42:7";

fn task(task_id: &str) -> proto::Task {
    let file = format!("schema/{}.ts", task_id.to_lowercase());
    proto::Task {
        task_id: task_id.into(),
        title: "Add a table".into(),
        category: "backend".into(),
        files: vec![file],
        description: String::new(),
    }
}

/// `count` task ids of the group (held out or shown) the server will put
/// them in.
fn tasks_in_group(prefix: &str, held: bool, count: usize) -> Vec<String> {
    (0..)
        .map(|index| format!("{prefix}-{index}"))
        .filter(|task_id| held_out(PROJECT, task_id, HOLDOUT) == held)
        .take(count)
        .collect()
}

fn failed_check(error: &str) -> proto::CheckResult {
    proto::CheckResult {
        name: "jest".into(),
        passed: false,
        output: format!("{error}\n    at Object.<anonymous> (schema.test.ts:12:5)"),
        exit_code: 1,
    }
}

fn result(
    task_id: &str,
    verdict: proto::TaskVerdict,
    checks: Vec<proto::CheckResult>,
) -> proto::RecordTaskResultRequest {
    proto::RecordTaskResultRequest {
        result_id: Uuid::now_v7().to_string(),
        project: PROJECT.into(),
        task: Some(task(task_id)),
        verdict: verdict.into(),
        checks,
        ..Default::default()
    }
}

async fn warn(qa: &mut Qa, task_id: &str) -> proto::GetWarningsResponse {
    qa.get_warnings(proto::GetWarningsRequest {
        project: PROJECT.into(),
        task: Some(task(task_id)),
        ..Default::default()
    })
    .await
    .expect("warnings")
    .into_inner()
}

async fn record(qa: &mut Qa, request: proto::RecordTaskResultRequest) -> proto::RecordTaskResultResponse {
    qa.record_task_result(request).await.expect("task result").into_inner()
}

async fn fail_on(qa: &mut Qa, task_id: &str, error: &str) -> proto::RecordTaskResultResponse {
    record(qa, result(task_id, proto::TaskVerdict::Failed, vec![failed_check(error)])).await
}

async fn pass(qa: &mut Qa, task_id: &str) -> proto::RecordTaskResultResponse {
    let check = proto::CheckResult { name: "jest".into(), passed: true, ..Default::default() };
    record(qa, result(task_id, proto::TaskVerdict::Passed, vec![check])).await
}

fn outcomes(response: &proto::RecordTaskResultResponse) -> Vec<(proto::WarningOutcome, bool)> {
    response.scored.iter().map(|scored| (scored.outcome(), scored.held_out)).collect()
}

async fn candidates(qa: &mut Qa) -> Vec<proto::PromotionCandidate> {
    qa.list_promotion_candidates(proto::ListPromotionCandidatesRequest { project: PROJECT.into(), limit: 0 })
        .await
        .unwrap()
        .into_inner()
        .ranked
}

/// Held-out tasks are not shown their warning and fail on the pattern;
/// shown tasks pass.
async fn round(qa: &mut Qa, held: &[String], shown: &[String]) {
    for task_id in held {
        let warned = warn(qa, task_id).await;
        assert!(warned.held_out && warned.warnings.is_empty(), "held out: {warned:?}");
        let failed = fail_on(qa, task_id, WARNED_ERROR).await;
        assert_eq!(outcomes(&failed), [(proto::WarningOutcome::FailedAnyway, true)]);
        assert!(failed.missed.is_empty(), "a held-out warning was delivered, so nothing was missed");
    }
    for task_id in shown {
        assert!(!warn(qa, task_id).await.warnings.is_empty());
        assert_eq!(outcomes(&pass(qa, task_id).await), [(proto::WarningOutcome::Prevented, false)]);
    }
}

#[tokio::test]
async fn the_loop_closes_with_task_results_alone() {
    let repository = tempfile::tempdir().unwrap();
    let agents_md = repository.path().join("AGENTS.md");
    let theirs = "# Working here\n\nRun `make test` before you push.\n";
    std::fs::write(&agents_md, theirs).unwrap();
    let mut config = TestServer::config();
    config.qa.holdout_fraction = HOLDOUT;
    config.qa.promotion.min_confidence = 0.3;
    config.qa.instructions = vec![InstructionsFile { project: PROJECT.into(), file: agents_md.clone() }];
    let server = TestServer::start_with(config).await;
    let mut qa = QaLearningServiceClient::new(server.channel().await);

    // Two tasks fail the same way before anyone is warned: the pattern.
    for seed in ["SEED-1", "SEED-2"] {
        let seeded = fail_on(&mut qa, seed, WARNED_ERROR).await;
        assert!(seeded.scored.is_empty() && seeded.missed.is_empty(), "nothing was warnable yet: {seeded:?}");
    }
    let shown = tasks_in_group("SHOWN", false, 8);
    let held = tasks_in_group("HELD", true, 4);

    // Warn, fail on the warned pattern, fix, warn again, pass.
    let first = &shown[0];
    let warned = warn(&mut qa, first).await;
    assert!(!warned.held_out);
    let pattern_id = warned.warnings.first().expect("a warning about the seeded pattern").pattern_id.clone();
    let failed = fail_on(&mut qa, first, WARNED_ERROR).await;
    assert_eq!(failed.attempt, 1);
    assert_eq!(
        failed.pattern_ids,
        std::slice::from_ref(&pattern_id),
        "the failure was captured from the check's output"
    );
    assert_eq!(outcomes(&failed), [(proto::WarningOutcome::FailedAnyway, false)]);
    assert!(failed.missed.is_empty());
    let fixed = qa
        .record_fix_attempt(proto::RecordFixAttemptRequest {
            attempt_id: Uuid::now_v7().to_string(),
            failure_id: failed.failure_ids[0].clone(),
            attempt_number: 1,
            approach: "Check the row exists before reading its id".into(),
            outcome: proto::FixOutcome::Success.into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert!(fixed.resolved);
    assert_eq!(warn(&mut qa, first).await.warnings[0].pattern_id, pattern_id, "warned again");
    let passed = pass(&mut qa, first).await;
    assert_eq!(passed.attempt, 2);
    assert_eq!(outcomes(&passed), [(proto::WarningOutcome::Prevented, false)]);

    // Warned, then failing on something else: unrelated to the warning.
    let other = &shown[1];
    warn(&mut qa, other).await;
    let elsewhere = fail_on(&mut qa, other, "error[E0308]: mismatched types in src/billing.rs").await;
    assert_eq!(outcomes(&elsewhere), [(proto::WarningOutcome::Unrelated, false)]);
    assert_ne!(elsewhere.pattern_ids, std::slice::from_ref(&pattern_id));

    // Never asked, failing on the warnable pattern: a missed opportunity.
    let unasked = fail_on(&mut qa, "UNASKED-1", WARNED_ERROR).await;
    assert!(unasked.scored.is_empty());
    assert_eq!(unasked.missed.len(), 1, "{unasked:?}");
    assert_eq!(unasked.missed[0].pattern_id, pattern_id);
    assert!(!unasked.missed[0].warned);

    // Two held-out tasks fail, three shown ones pass: not significant yet.
    round(&mut qa, &held[..2], &shown[2..5]).await;
    // Shown: 1 of 5 tasks failed on it; held out: 2 of 2. Fisher one-sided
    // p = C(3,2) / C(7,2) = 3/21 = 0.143: not significant.
    assert!(candidates(&mut qa).await.is_empty());
    let refused = qa
        .propose_promotion(proto::ProposePromotionRequest {
            promotion_id: Uuid::now_v7().to_string(),
            pattern_id: pattern_id.clone(),
            actor: "reviewer".into(),
        })
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Code::FailedPrecondition);
    assert!(
        refused.message().contains("its effect is not significant: p = 0.143 > 0.05")
            && refused.message().contains("shown: 1 of 5 tasks failed on it; held out: 2 of 2"),
        "{}",
        refused.message()
    );

    // Two more of each: shown 1 of 7, held out 4 of 4.
    // p = C(5,4) C(6,0) / C(11,4) = 5/330.
    round(&mut qa, &held[2..4], &shown[5..7]).await;
    let ranked = candidates(&mut qa).await;
    assert_eq!(ranked.len(), 1);
    assert_eq!(ranked[0].pattern.as_ref().unwrap().pattern_id, pattern_id);
    let evidence = ranked[0].evidence.unwrap();
    let (shown_group, held_group) = (evidence.shown.unwrap(), evidence.held_out.unwrap());
    assert_eq!((shown_group.failed, shown_group.tasks, held_group.failed, held_group.tasks), (1, 7, 4, 4));
    assert!((evidence.p_value - 5.0 / 330.0).abs() < 1e-12, "{}", evidence.p_value);
    assert!(evidence.significant);

    // Approved: the entry is written into AGENTS.md, after what was there.
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
    assert!(
        proposed.markdown.contains("failed on it 1 of 7 times (14%); tasks it was held out from, 4 of 4 (100%)"),
        "the proposal shows its evidence:\n{}",
        proposed.markdown
    );
    let review = |note: &str| proto::ReviewPromotionRequest {
        promotion_id: promotion_id.clone(),
        actor: "reviewer".into(),
        note: note.into(),
    };
    let approved = qa.approve_promotion(review("")).await.unwrap().into_inner();
    assert!(approved.instructions.starts_with("written to "), "{}", approved.instructions);
    let written = std::fs::read_to_string(&agents_md).unwrap();
    assert!(written.starts_with(theirs), "{written}");
    let key = format!("QA-{}", &pattern_id.replace('-', "")[20..]);
    assert!(written.contains(&format!("<!-- lore:entry {key} hash=")), "{written}");
    assert!(written.contains("Check the row exists before reading its id"), "the fix is the instruction: {written}");
    // A person adds a line of their own, outside the entry.
    let with_theirs = written.replace(theirs, &format!("{theirs}Never force-push to main.\n"));
    std::fs::write(&agents_md, &with_theirs).unwrap();
    // Rolled back: exactly the entry goes, the person's lines stay.
    let rolled_back = qa.rollback_promotion(review("advice no longer holds")).await.unwrap().into_inner();
    assert!(rolled_back.instructions.contains(&format!("entry {key} removed from")), "{}", rolled_back.instructions);
    let after = std::fs::read_to_string(&agents_md).unwrap();
    assert!(after.starts_with(&format!("{theirs}Never force-push to main.\n")), "{after}");
    assert!(!after.contains(&key) && !after.contains("Check the row exists"), "{after}");
    let entry_start = with_theirs.find("<!-- lore:entry").unwrap();
    let entry_end =
        with_theirs.find(&format!("<!-- lore:end {key} -->\n")).unwrap() + format!("<!-- lore:end {key} -->\n").len();
    assert_eq!(
        after,
        format!("{}{}", &with_theirs[..entry_start], &with_theirs[entry_end..]),
        "only the entry's lines"
    );

    // Approved again, then edited by a person: a rollback leaves the edit
    // and says so in the promotion's status.
    let again = Uuid::now_v7().to_string();
    qa.propose_promotion(proto::ProposePromotionRequest {
        promotion_id: again.clone(),
        pattern_id: pattern_id.clone(),
        actor: "reviewer".into(),
    })
    .await
    .unwrap();
    let review_again = |note: &str| proto::ReviewPromotionRequest {
        promotion_id: again.clone(),
        actor: "reviewer".into(),
        note: note.into(),
    };
    qa.approve_promotion(review_again("")).await.unwrap();
    let edited =
        std::fs::read_to_string(&agents_md).unwrap().replace("before reading its id", "before reading any field");
    std::fs::write(&agents_md, &edited).unwrap();
    let kept = qa.rollback_promotion(review_again("wrong")).await.unwrap().into_inner();
    assert!(
        kept.instructions.starts_with("conflict in ") && kept.instructions.contains("edited by hand"),
        "{}",
        kept.instructions
    );
    assert_eq!(std::fs::read_to_string(&agents_md).unwrap(), edited);

    // The dashboard against what the results above say, computed by hand.
    // Tasks with a result: 2 seeds, first, other, unasked, 4 held, 5 shown
    // that passed = 14. Failed: seeds, first, other, unasked, 4 held = 9.
    // Passed: first (second attempt) and 5 shown (first attempt).
    let dashboard = qa
        .dashboard(proto::DashboardRequest { project: PROJECT.into(), ..Default::default() })
        .await
        .unwrap()
        .into_inner();
    let tasks = dashboard.tasks.unwrap();
    assert_eq!((tasks.tasks, tasks.failed, tasks.passed), (14, 9, 6));
    assert!((tasks.failure_rate - 9.0 / 14.0).abs() < 1e-12);
    assert!((tasks.first_time_pass_rate - 5.0 / 14.0).abs() < 1e-12);
    assert!(
        (tasks.mean_attempts_to_pass - 7.0 / 6.0).abs() < 1e-12,
        "(2 + 5 x 1) / 6: {}",
        tasks.mean_attempts_to_pass
    );
    // Per task, every pattern: shown = first, other and the 5 passing (7),
    // of which first failed on a warned pattern; held out = 4 of 4.
    let comparison = dashboard.comparison.unwrap();
    let (shown_group, held_group) = (comparison.shown.unwrap(), comparison.held_out.unwrap());
    assert_eq!((shown_group.failed, shown_group.tasks, held_group.failed, held_group.tasks), (1, 7, 4, 4));
    assert!((dashboard.shown_failure_rate - 1.0 / 7.0).abs() < 1e-12);
    assert_eq!(dashboard.held_out_failure_rate, 1.0);
    // Wilson 95% for 1 of 7: 0.0257 to 0.5131.
    assert!((shown_group.interval_low - 0.0257).abs() < 5e-4, "{}", shown_group.interval_low);
    assert!((shown_group.interval_high - 0.5131).abs() < 5e-4, "{}", shown_group.interval_high);
    assert!(comparison.significant && (comparison.p_value - 5.0 / 330.0).abs() < 1e-12);
    assert_eq!(dashboard.missed_opportunities, 1);
    // Shown deliveries of the pattern with an outcome: first's failed
    // anyway and 6 prevented (other's was unrelated and does not count).
    assert!((dashboard.prevention_effectiveness - 6.0 / 7.0).abs() < 1e-12, "{}", dashboard.prevention_effectiveness);
}

#[tokio::test]
async fn bad_task_results_get_a_clear_status_and_count_nothing_twice() {
    let server = TestServer::start().await;
    let mut qa = QaLearningServiceClient::new(server.channel().await);
    for seed in ["SEED-1", "SEED-2"] {
        fail_on(&mut qa, seed, WARNED_ERROR).await;
    }
    let warned = warn(&mut qa, "T-1").await;
    assert_eq!(warned.warnings.len(), 1);

    let code = |status: tonic::Status, code: Code, text: &str| {
        assert_eq!(status.code(), code, "{status:?}");
        assert!(status.message().contains(text), "{:?} lacks {text:?}", status.message());
    };
    let mut unknown_session = result("T-1", proto::TaskVerdict::Passed, Vec::new());
    unknown_session.session_id = Uuid::now_v7().to_string();
    code(qa.record_task_result(unknown_session).await.unwrap_err(), Code::NotFound, "session_id: session");
    let mut no_verdict = result("T-1", proto::TaskVerdict::Passed, Vec::new());
    no_verdict.verdict = 0;
    code(qa.record_task_result(no_verdict).await.unwrap_err(), Code::InvalidArgument, "verdict: required");
    let mut wrong_enum = result("T-1", proto::TaskVerdict::Passed, Vec::new());
    wrong_enum.verdict = 7;
    code(qa.record_task_result(wrong_enum).await.unwrap_err(), Code::InvalidArgument, "verdict");
    let contradicts = result("T-1", proto::TaskVerdict::Passed, vec![failed_check(WARNED_ERROR)]);
    code(qa.record_task_result(contradicts).await.unwrap_err(), Code::InvalidArgument, "checks[0].passed");
    let nothing_failed = result("T-1", proto::TaskVerdict::Failed, Vec::new());
    code(qa.record_task_result(nothing_failed).await.unwrap_err(), Code::FailedPrecondition, "no captured failure");
    let mut no_task = result("T-1", proto::TaskVerdict::Passed, Vec::new());
    no_task.task = Some(proto::Task { task_id: "bad\0id".into(), ..Default::default() });
    code(qa.record_task_result(no_task).await.unwrap_err(), Code::InvalidArgument, "task.task_id");
    let mut twice = result("T-1", proto::TaskVerdict::Passed, Vec::new());
    twice.checks = vec![
        proto::CheckResult { name: "jest".into(), passed: true, ..Default::default() },
        proto::CheckResult { name: "jest".into(), passed: true, ..Default::default() },
    ];
    code(qa.record_task_result(twice).await.unwrap_err(), Code::InvalidArgument, "checks[1].name");

    // A failure of another task, and one counted already.
    let seed_failure: Uuid = sqlx::query_scalar("SELECT failure_id FROM qa_failures WHERE task_id = 'SEED-1'")
        .fetch_one(server.pool())
        .await
        .unwrap();
    let mut foreign = result("T-1", proto::TaskVerdict::Failed, Vec::new());
    foreign.failure_ids = vec![seed_failure.to_string()];
    code(qa.record_task_result(foreign).await.unwrap_err(), Code::InvalidArgument, "is of task SEED-1, not T-1");
    let mut recounted = result("SEED-1", proto::TaskVerdict::Failed, Vec::new());
    recounted.failure_ids = vec![seed_failure.to_string()];
    code(qa.record_task_result(recounted).await.unwrap_err(), Code::FailedPrecondition, "a failure counts once");
    let mut missing = result("T-1", proto::TaskVerdict::Failed, Vec::new());
    missing.failure_ids = vec![Uuid::now_v7().to_string()];
    code(qa.record_task_result(missing).await.unwrap_err(), Code::NotFound, "failure_ids[0]");

    // Nothing above stored a result or scored the delivery.
    let results: i64 = sqlx::query_scalar("SELECT count(*) FROM qa_task_results WHERE task_id = 'T-1'")
        .fetch_one(server.pool())
        .await
        .unwrap();
    assert_eq!(results, 0);

    // The same result twice: one result, one prevention.
    let passed = result("T-1", proto::TaskVerdict::Passed, Vec::new());
    let first = record(&mut qa, passed.clone()).await;
    let again = record(&mut qa, passed.clone()).await;
    assert!(!first.ack.as_ref().unwrap().duplicate && again.ack.as_ref().unwrap().duplicate);
    assert_eq!((first.attempt, &first.scored), (again.attempt, &again.scored));
    let pattern = qa
        .get_pattern(proto::GetPatternRequest {
            pattern_id: warned.warnings[0].pattern_id.clone(),
            occurrence_limit: 1,
        })
        .await
        .unwrap()
        .into_inner()
        .pattern
        .unwrap();
    assert_eq!(pattern.effectiveness, 1.0);
    let prevented: i64 = sqlx::query_scalar("SELECT prevented_count FROM qa_patterns WHERE pattern_id = $1::uuid")
        .bind(&warned.warnings[0].pattern_id)
        .fetch_one(server.pool())
        .await
        .unwrap();
    assert_eq!(prevented, 1, "counted once");

    // The same id with the other verdict is a conflict, not a new result.
    let mut conflicting = passed.clone();
    conflicting.verdict = proto::TaskVerdict::Failed.into();
    conflicting.checks = vec![failed_check(WARNED_ERROR)];
    code(
        qa.record_task_result(conflicting).await.unwrap_err(),
        Code::AlreadyExists,
        "is already the passed result of task T-1",
    );

    // A session of the project is accepted.
    let session_id = Uuid::now_v7().to_string();
    ActionServiceClient::new(server.channel().await)
        .start_session(proto::StartSessionRequest {
            session_id: session_id.clone(),
            project: PROJECT.into(),
            agent_id: "agent-1".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    let mut in_session = result("T-2", proto::TaskVerdict::Passed, Vec::new());
    in_session.session_id = session_id;
    assert_eq!(record(&mut qa, in_session).await.attempt, 1);
}
