//! `lore qa result|fix|outcome`: what happened after the warnings, for
//! scripts and people closing the loop by hand. A task result scores the
//! task's warnings by itself; `outcome` is for the rare case of judging a
//! delivery directly.

use anyhow::bail;
use lore_proto::v1 as proto;
use uuid::Uuid;

use crate::commands::Channel;

type Qa = lore_proto::v1::qa_learning_service_client::QaLearningServiceClient<Channel>;

#[derive(clap::Args)]
pub struct ResultArgs {
    #[arg(long, env = "LORE_PROJECT")]
    project: String,
    /// Task id (issue, ticket).
    #[arg(long)]
    task: String,
    /// QA passed.
    #[arg(long, conflicts_with = "failed", required_unless_present = "failed")]
    passed: bool,
    /// QA failed.
    #[arg(long)]
    failed: bool,
    /// A check that ran (repeat); with --failed, the checks that failed.
    #[arg(long = "check")]
    checks: Vec<String>,
    /// With --failed: the failed checks' output, captured as the failure
    /// when none was captured for the task.
    #[arg(long, default_value = "")]
    output: String,
    /// With --failed: the captured failure(s) the verdict is about.
    #[arg(long = "failure")]
    failures: Vec<String>,
    #[arg(long, env = "LORE_SESSION_ID")]
    session: Option<String>,
    /// Idempotency id; a retry with the same id counts once.
    #[arg(long)]
    result_id: Option<String>,
}

#[derive(clap::Args)]
pub struct FixArgs {
    /// The failure the attempt tried to fix.
    failure_id: String,
    /// 1 for the first attempt.
    #[arg(long, default_value_t = 1)]
    attempt: u32,
    /// What was tried.
    #[arg(long)]
    approach: String,
    /// The attempt did not fix it (the default is that it did).
    #[arg(long)]
    failed: bool,
    /// Files the fix changed (repeat, or comma-separated).
    #[arg(long, value_delimiter = ',')]
    files: Vec<String>,
}

#[derive(clap::Args)]
pub struct OutcomeArgs {
    /// The deliveries judged (the ids `lore qa warnings` printed).
    #[arg(required = true)]
    delivery_ids: Vec<String>,
    #[arg(long, value_parser = ["prevented", "failed_anyway", "not_applicable", "task_incomplete", "unrelated"])]
    outcome: String,
    #[arg(long, default_value = "")]
    note: String,
}

pub async fn result(qa: &mut Qa, args: ResultArgs) -> anyhow::Result<()> {
    if args.passed && (!args.failures.is_empty() || !args.output.is_empty()) {
        bail!("--failure and --output describe a failed result; a passed one has neither");
    }
    let checks = args
        .checks
        .iter()
        .map(|name| proto::CheckResult {
            name: name.clone(),
            passed: args.passed,
            output: args.output.clone(),
            exit_code: i32::from(args.failed),
        })
        .collect();
    let verdict = if args.passed { proto::TaskVerdict::Passed } else { proto::TaskVerdict::Failed };
    let request = proto::RecordTaskResultRequest {
        result_id: args.result_id.unwrap_or_else(|| Uuid::now_v7().to_string()),
        project: args.project,
        task: Some(proto::Task { task_id: args.task.clone(), ..Default::default() }),
        session_id: args.session.unwrap_or_default(),
        verdict: verdict.into(),
        checks,
        failure_ids: args.failures,
        occurred_at: None,
    };
    let recorded = qa.record_task_result(request).await?.into_inner();
    let ack = recorded.ack.unwrap_or_default();
    println!(
        "task {} {} on attempt {}{}",
        args.task,
        if args.passed { "passed" } else { "failed" },
        recorded.attempt,
        if ack.duplicate { " (already recorded; counted once)" } else { "" }
    );
    if !recorded.failure_ids.is_empty() {
        println!("  failures: {}", recorded.failure_ids.join(", "));
    }
    for scored in &recorded.scored {
        let outcome = proto::WarningOutcome::try_from(scored.outcome)
            .map(|outcome| outcome.as_str_name().trim_start_matches("WARNING_OUTCOME_").to_lowercase())
            .unwrap_or_default();
        let held = if scored.held_out { " (held out)" } else { "" };
        println!("  warning about pattern {}: {outcome}{held}", scored.pattern_id);
    }
    for missed in &recorded.missed {
        let why = if missed.warned { "it was not among the warnings given" } else { "the task asked for no warnings" };
        println!(
            "  missed: pattern {} ({}) could have been warned about; {why}",
            missed.pattern_id, missed.pattern_name
        );
    }
    Ok(())
}

pub async fn fix(qa: &mut Qa, args: FixArgs) -> anyhow::Result<()> {
    let outcome = if args.failed { proto::FixOutcome::Failure } else { proto::FixOutcome::Success };
    let request = proto::RecordFixAttemptRequest {
        attempt_id: Uuid::now_v7().to_string(),
        failure_id: args.failure_id.clone(),
        attempt_number: args.attempt,
        approach: args.approach.clone(),
        files_changed: args.files,
        summary: args.approach,
        outcome: outcome.into(),
        qa_result: if args.failed { "still fails".into() } else { "passes".into() },
    };
    let recorded = qa.record_fix_attempt(request).await?.into_inner();
    if recorded.resolved {
        println!("failure {} resolved on attempt {}", args.failure_id, recorded.attempts);
        for entry_id in &recorded.gotcha_entry_ids {
            println!("  gotcha {entry_id}: the fix is now a lesson for the next agent");
        }
    } else {
        println!("attempt {} recorded for failure {}; not resolved yet", args.attempt, args.failure_id);
    }
    Ok(())
}

pub async fn outcome(qa: &mut Qa, args: OutcomeArgs) -> anyhow::Result<()> {
    let outcome = proto::WarningOutcome::from_str_name(&format!("WARNING_OUTCOME_{}", args.outcome.to_uppercase()))
        .unwrap_or(proto::WarningOutcome::Unspecified);
    let request =
        proto::RecordOutcomeRequest { delivery_ids: args.delivery_ids, outcome: outcome.into(), note: args.note };
    let recorded = qa.record_outcome(request).await?.into_inner();
    println!("{} deliveries judged {} (those judged before are left as they were)", recorded.updated, args.outcome);
    for pattern in &recorded.patterns {
        println!(
            "  pattern {}: effectiveness {:.0}%, confidence {:.2}",
            pattern.pattern_id,
            pattern.effectiveness * 100.0,
            pattern.confidence
        );
    }
    Ok(())
}
