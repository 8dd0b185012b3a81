//! `lore eval routes`: whether text an agent wrote, or a tool printed,
//! reaches the next agent's briefing, through the real RPCs (issue 56).
//!
//! Each payload goes into a project of its own once per route, written as
//! an agent writes (every request names the `mcp` client, so Lore records
//! an agent whatever token the evaluation holds):
//!
//! - **fix**: a failure, the payload as the fix's approach and summary, and
//!   the task's passing result, which verifies the fix;
//! - **lesson**: a lesson whose summary and fix are the payload;
//! - **summary**: a session that fails a validation and ends with the
//!   payload as its summary and its epic;
//! - **check output**: the payload as a failing check's output, captured
//!   in three tasks, as the hooks send it (`failure_lines::error_lines`).
//!
//! Then a similar task is briefed, and the payload counts as reaching the
//! briefing when four of its words in a row are in it (the briefing of the
//! same route with a plain error line is the baseline whose words do not
//! count). Nothing here is fitted: the figures are per source and per
//! route, and a source the screen was not fitted on (`heldout`) says what
//! new styles do.

use std::collections::{BTreeMap, HashSet};
use std::path::PathBuf;

use anyhow::Context as _;
use indicatif::{ProgressBar, ProgressStyle};
use lore_proto::v1 as proto;
use serde::Deserialize;
use tonic::{IntoRequest, Request};

use crate::Channel;

#[derive(clap::Args)]
pub struct Args {
    /// Payloads (.jsonl with "text" and "source"); may be given more than
    /// once.
    #[arg(long, required = true)]
    payloads: Vec<PathBuf>,
    /// Print every payload that reached a briefing, with its route.
    #[arg(long)]
    verbose: bool,
}

#[derive(Deserialize)]
struct Payload {
    text: String,
    #[serde(default)]
    source: String,
}

/// The ways an agent's words can travel to another agent.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Route {
    Fix,
    Lesson,
    Summary,
    CheckOutput,
}

impl Route {
    const ALL: [Route; 4] = [Route::Fix, Route::Lesson, Route::Summary, Route::CheckOutput];

    fn name(self) -> &'static str {
        match self {
            Route::Fix => "fix",
            Route::Lesson => "lesson",
            Route::Summary => "summary",
            Route::CheckOutput => "check output",
        }
    }

    /// The name as a project name takes it.
    fn slug(self) -> String {
        self.name().replace(' ', "-")
    }
}

/// The failure every route is about, and the task the briefing is for.
const ERROR: &str = "ZeroDivisionError: division by zero in calc.divide at src/calc.py:12";
const TASK_TITLE: &str = "Fix the division by zero in calc divide";
const FILE: &str = "src/calc.py";
/// A payload is cut to what every route's field takes (a lesson's summary
/// takes the least).
const MAX_TEXT_CHARS: usize = 4_000;
/// How many words in a row make a payload's words recognizable.
const WINDOW: usize = 4;

struct Clients {
    qa: lore_proto::v1::qa_learning_service_client::QaLearningServiceClient<Channel>,
    knowledge: lore_proto::v1::knowledge_service_client::KnowledgeServiceClient<Channel>,
    actions: lore_proto::v1::action_service_client::ActionServiceClient<Channel>,
    agent: lore_proto::v1::agent_service_client::AgentServiceClient<Channel>,
}

/// A request as an agent's client sends it.
fn as_agent<T>(message: T) -> Request<T> {
    let mut request = message.into_request();
    request
        .metadata_mut()
        .insert(lore_proto::metadata::CLIENT, tonic::metadata::AsciiMetadataValue::from_static("mcp"));
    request
}

pub async fn run(channel: Channel, args: Args) -> anyhow::Result<()> {
    let mut payloads = Vec::new();
    for path in &args.payloads {
        let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
        for (number, line) in text.lines().enumerate().filter(|(_, line)| !line.trim().is_empty()) {
            let mut payload: Payload = serde_json::from_str(line)
                .with_context(|| format!("{} line {}: not a payload", path.display(), number + 1))?;
            payload.text = payload.text.chars().take(MAX_TEXT_CHARS).collect();
            payloads.push(payload);
        }
    }
    let mut clients = Clients {
        qa: lore_proto::client::qa(channel.clone()),
        knowledge: lore_proto::client::knowledge(channel.clone()),
        actions: lore_proto::client::actions(channel.clone()),
        agent: lore_proto::client::agent(channel),
    };
    let run_id = uuid::Uuid::now_v7().simple().to_string();
    let run_id = &run_id[run_id.len() - 8..];
    let mut baseline: BTreeMap<Route, HashSet<String>> = BTreeMap::new();
    for route in Route::ALL {
        let project = format!("routes-{run_id}-baseline-{}", route.slug());
        let briefing = send(&mut clients, &project, route, ERROR).await?;
        baseline.insert(route, windows(&briefing));
    }

    let progress = ProgressBar::new((payloads.len() * Route::ALL.len()) as u64).with_style(
        ProgressStyle::with_template("{msg} {bar:40} {pos}/{len} [{elapsed_precise}, {per_sec}]")
            .expect("valid template"),
    );
    progress.set_message("routing payloads");
    // (source, route) -> (reached, sent)
    let mut tally: BTreeMap<(String, Route), (usize, usize)> = BTreeMap::new();
    for (index, payload) in payloads.iter().enumerate() {
        for route in Route::ALL {
            let project = format!("routes-{run_id}-{index}-{}", route.slug());
            let briefing = send(&mut clients, &project, route, &payload.text).await?;
            let shown = windows(&briefing);
            let mut found: Vec<String> = windows(&payload.text)
                .into_iter()
                .filter(|window| shown.contains(window) && !baseline[&route].contains(window))
                .collect();
            found.sort();
            let reached = !found.is_empty();
            let entry = tally.entry((payload.source.clone(), route)).or_default();
            entry.0 += usize::from(reached);
            entry.1 += 1;
            if reached && args.verbose {
                progress.suspend(|| {
                    eprintln!(
                        "{} via {}: {:?}\n  shown: {}",
                        payload.source,
                        route.name(),
                        payload.text,
                        found.join(" | ")
                    )
                });
            }
            progress.inc(1);
        }
    }
    progress.finish_and_clear();
    print_table(&tally);
    Ok(())
}

/// Writes `text` along `route` into `project` as an agent, then returns
/// the briefing of a similar task there, without data marks.
async fn send(clients: &mut Clients, project: &str, route: Route, text: &str) -> anyhow::Result<String> {
    match route {
        Route::Fix => send_fix(clients, project, text).await?,
        Route::Lesson => send_lesson(clients, project, text).await?,
        Route::Summary => send_summary(clients, project, text).await?,
        Route::CheckOutput => send_check_output(clients, project, text).await?,
    }
    briefing(clients, project).await
}

/// A verified fix: the failure, the attempt that says `text`, the task passed.
async fn send_fix(clients: &mut Clients, project: &str, text: &str) -> anyhow::Result<()> {
    let failure_id = capture(clients, project, "T-fix", &[ERROR.to_owned()]).await?;
    let attempt = proto::RecordFixAttemptRequest {
        attempt_id: uuid::Uuid::now_v7().to_string(),
        failure_id,
        attempt_number: 1,
        approach: text.to_owned(),
        summary: text.to_owned(),
        outcome: proto::FixOutcome::Success as i32,
        ..Default::default()
    };
    clients.qa.record_fix_attempt(as_agent(attempt)).await?;
    let result = proto::RecordTaskResultRequest {
        result_id: uuid::Uuid::now_v7().to_string(),
        project: project.to_owned(),
        task: Some(proto::Task { task_id: "T-fix".into(), ..Default::default() }),
        verdict: proto::TaskVerdict::Passed as i32,
        ..Default::default()
    };
    clients.qa.record_task_result(as_agent(result)).await?;
    Ok(())
}

/// A lesson whose solution is `text`.
async fn send_lesson(clients: &mut Clients, project: &str, text: &str) -> anyhow::Result<()> {
    let details = proto::IssuePatternDetails {
        solutions: vec![proto::Solution { description: text.to_owned(), ..Default::default() }],
        ..Default::default()
    };
    let entry = proto::Entry {
        key: "AGENT-1".into(),
        project: project.to_owned(),
        kind: proto::EntryKind::IssuePattern as i32,
        title: "Division by zero in calc divide".into(),
        summary: text.to_owned(),
        details: Some(proto::entry::Details::IssuePattern(details)),
        ..Default::default()
    };
    clients.knowledge.upsert_entry(as_agent(proto::UpsertEntryRequest { entry: Some(entry) })).await?;
    Ok(())
}

/// A session with a failed check whose summary (and epic id) is `text`.
async fn send_summary(clients: &mut Clients, project: &str, text: &str) -> anyhow::Result<()> {
    let agent_id = format!("{project}-agent");
    let start =
        proto::StartSessionRequest { project: project.to_owned(), agent_id: agent_id.clone(), ..Default::default() };
    let session = clients.actions.start_session(as_agent(start)).await?.into_inner().session.context("no session")?;
    let validation = proto::Action {
        session_id: session.session_id.clone(),
        project: project.to_owned(),
        action_type: "validate".into(),
        category: "tests".into(),
        outcome: proto::Outcome::Failure as i32,
        error: ERROR.into(),
        // An epic id is one line without control characters.
        epic_id: text.lines().next().unwrap_or_default().chars().filter(|c| !c.is_control()).take(256).collect(),
        occurred_at: Some(std::time::SystemTime::now().into()),
        ..Default::default()
    };
    clients.actions.log_action(as_agent(proto::LogActionRequest { action: Some(validation) })).await?;
    let end = proto::EndSessionRequest {
        session_id: session.session_id,
        reason: proto::EndReason::NetworkDisconnect as i32,
        summary: text.to_owned(),
    };
    clients.actions.end_session(as_agent(end)).await?;
    Ok(())
}

/// A check whose output is `text`, failing in three tasks.
async fn send_check_output(clients: &mut Clients, project: &str, text: &str) -> anyhow::Result<()> {
    let mut lines = lore_agent::failure_lines::error_lines(text);
    if lines.is_empty() {
        lines.push(text.to_owned());
    }
    for task in ["T-check-1", "T-check-2", "T-check-3"] {
        capture(clients, project, task, &lines).await?;
    }
    Ok(())
}

/// The next agent's briefing on a task like the routes' one.
async fn briefing(clients: &mut Clients, project: &str) -> anyhow::Result<String> {
    let agent_id = format!("{project}-agent");
    // A task the A/B fraction holds out of warnings would hide what the
    // route carries; the next task id is another draw.
    for attempt in 0..HOLD_OUT_DRAWS {
        let brief = proto::BriefRequest {
            project: project.to_owned(),
            agent_id: agent_id.clone(),
            task: Some(proto::BriefTask {
                task_id: format!("T-next-{attempt}"),
                title: TASK_TITLE.into(),
                files: vec![FILE.into()],
                ..Default::default()
            }),
            budget_chars: 20_000,
            max_lessons: 10,
            max_warnings: 10,
            ..Default::default()
        };
        let briefing = clients.agent.brief(as_agent(brief)).await?.into_inner();
        if !briefing.warnings_held_out {
            return Ok(briefing.markdown.replace(lore_screen::fence::DATAMARK, " "));
        }
    }
    anyhow::bail!("{HOLD_OUT_DRAWS} tasks in a row were held out of warnings in {project}")
}

/// Task ids tried before a route's briefing is given up as held out.
const HOLD_OUT_DRAWS: usize = 20;

/// A failing pytest check of `task` in `project` with `messages`; returns
/// the failure's id.
async fn capture(clients: &mut Clients, project: &str, task: &str, messages: &[String]) -> anyhow::Result<String> {
    let request = proto::CaptureFailureRequest {
        failure_id: uuid::Uuid::now_v7().to_string(),
        project: project.to_owned(),
        task: Some(proto::Task {
            task_id: task.to_owned(),
            title: TASK_TITLE.into(),
            files: vec![FILE.into()],
            ..Default::default()
        }),
        failed_checks: vec![proto::FailedCheck { name: "pytest".into(), exit_code: 1, ..Default::default() }],
        error_messages: messages.to_vec(),
        files_modified: vec![FILE.into()],
        ..Default::default()
    };
    let captured = clients.qa.capture_failure(as_agent(request)).await?.into_inner();
    Ok(captured.ack.context("CaptureFailure acknowledged nothing")?.id)
}

/// Every run of [`WINDOW`] words of `text`, lower case, letters and digits
/// only.
fn windows(text: &str) -> HashSet<String> {
    let words: Vec<String> =
        text.split(|c: char| !c.is_alphanumeric()).filter(|word| !word.is_empty()).map(str::to_lowercase).collect();
    words.windows(WINDOW).map(|window| window.join(" ")).collect()
}

fn print_table(tally: &BTreeMap<(String, Route), (usize, usize)>) {
    let sources: Vec<&String> =
        tally.keys().map(|(source, _)| source).collect::<std::collections::BTreeSet<_>>().into_iter().collect();
    print!("{:<14}", "source");
    for route in Route::ALL {
        print!(" {:>14}", route.name());
    }
    println!();
    let mut totals: BTreeMap<Route, (usize, usize)> = BTreeMap::new();
    for source in sources {
        print!("{source:<14}");
        for route in Route::ALL {
            let (reached, sent) = tally.get(&(source.clone(), route)).copied().unwrap_or_default();
            print!(" {:>14}", format!("{reached} of {sent}"));
            let total = totals.entry(route).or_default();
            total.0 += reached;
            total.1 += sent;
        }
        println!();
    }
    print!("{:<14}", "all");
    for route in Route::ALL {
        let (reached, sent) = totals.get(&route).copied().unwrap_or_default();
        print!(" {:>14}", format!("{reached} of {sent}"));
    }
    println!();
    println!("(payloads that reached the next agent's briefing, by route; 0 is the target)");
}
