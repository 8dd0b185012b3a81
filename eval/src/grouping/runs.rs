//! `lore eval grouping --runs STEPS.jsonl`: how CaptureFailure groups what
//! agents actually hit. Every failing step of real agent runs is captured
//! as the post-tool-use hook captures a failed check
//! (`lore_agent::requests::capture_failure`: the output's tail, and the
//! lines that explain it as the messages to group), through the real RPC,
//! each repository into a project of its own, in the order the steps ran.
//! A step's group is the pattern of its last message, the line its failure
//! is named by; the truth is the runs file's `error_sig`, the failure's
//! explaining line masked: the grouping a person would want. Scored per
//! repository as the captures left it and after RemineProject.
//!
//! No setting is chosen here: capture and re-mining run as shipped, so each
//! repository's figure is one no choice saw.

use std::collections::BTreeMap;
use std::io::BufRead as _;
use std::path::Path;

use anyhow::Context as _;
use lore_agent::checks::Checks;
use lore_agent::identity::{AgentKind, Identity};
use lore_agent::requests::{self, FailedCheck};
use lore_proto::v1 as proto;
use serde::Deserialize;
use uuid::Uuid;

use super::capture::{self as grouping_capture, Captured, Named};
use crate::Channel;

/// One failing step of the runs file.
#[derive(Debug, Deserialize)]
struct Step {
    repo: String,
    #[serde(default)]
    ts: f64,
    #[serde(default)]
    order: u64,
    #[serde(default)]
    step: u64,
    /// Null when the agent's step ran no command (a malformed action).
    command: Option<String>,
    output: Option<String>,
    /// The exit code, or what ended the step instead (`timeout`).
    exit_code_or_status: serde_json::Value,
    is_failure: bool,
    error_sig: Option<String>,
}

impl Step {
    fn exit_code(&self) -> i32 {
        self.exit_code_or_status.as_i64().and_then(|code| i32::try_from(code).ok()).unwrap_or(1)
    }
}

/// The failing steps with a label, by repository, each in the order run.
fn read(path: &Path) -> anyhow::Result<BTreeMap<String, Vec<Step>>> {
    let file = std::fs::File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut repositories: BTreeMap<String, Vec<Step>> = BTreeMap::new();
    for (index, line) in std::io::BufReader::new(file).lines().enumerate() {
        let line = line.with_context(|| path.display().to_string())?;
        if line.trim().is_empty() {
            continue;
        }
        let step: Step =
            serde_json::from_str(&line).with_context(|| format!("{} line {}", path.display(), index + 1))?;
        if step.is_failure && step.error_sig.as_deref().is_some_and(|sig| !sig.is_empty()) {
            repositories.entry(step.repo.clone()).or_default().push(step);
        }
    }
    anyhow::ensure!(!repositories.is_empty(), "{} holds no failing step with an error_sig", path.display());
    for steps in repositories.values_mut() {
        steps.sort_by(|a, b| a.ts.total_cmp(&b.ts).then(a.order.cmp(&b.order)).then(a.step.cmp(&b.step)));
    }
    Ok(repositories)
}

/// One set of (message, true group) lines, by its name.
pub(super) type LabelledSet = (String, Vec<(String, String)>);

/// Each repository's failing steps as (message, `error_sig`): the
/// message the failure is named by, as the hook would send it.
pub(super) fn messages(path: &Path) -> anyhow::Result<Vec<LabelledSet>> {
    let checks = Checks::default();
    Ok(read(path)?
        .into_iter()
        .map(|(repository, steps)| {
            let lines = steps
                .iter()
                .map(|step| {
                    let message = request(&checks, "grouping-people", step).error_messages.pop().unwrap_or_default();
                    (message, step.error_sig.clone().unwrap_or_default())
                })
                .collect();
            (repository, lines)
        })
        .collect())
}

/// The capture a hook sends for `step`: the check the command runs, or
/// one name for every other command (the hooks capture only checks; here
/// every failing command is grouped, and a name per program would keep
/// `python` and `python3` apart).
fn request(checks: &Checks, project: &str, step: &Step) -> proto::CaptureFailureRequest {
    let command = step.command.as_deref().unwrap_or_default();
    let name = checks.check_of(command).unwrap_or_else(|| "command".to_owned());
    let identity =
        Identity { project: project.to_owned(), agent_id: "grouping-eval".to_owned(), kind: AgentKind::Other };
    let task = proto::Task { task_id: Uuid::now_v7().to_string(), ..Default::default() };
    let check =
        FailedCheck { name: &name, output: step.output.as_deref().unwrap_or_default(), exit_code: step.exit_code() };
    requests::capture_failure(&identity, Uuid::now_v7(), Uuid::now_v7(), task, &check, Vec::new())
}

/// One repository's figures.
struct Row {
    repository: String,
    steps: usize,
    signatures: usize,
    patterns: usize,
    captured: f64,
    /// Re-mined by itself, and after every proposal was accepted.
    remined: Option<Remined>,
    held: usize,
}

pub async fn run(channel: Channel, path: &Path, remine: bool, verbose: bool) -> anyhow::Result<()> {
    let repositories = read(path)?;
    let checks = Checks::default();
    let mut qa = lore_proto::client::qa(channel);
    let mut rows = Vec::new();
    for (repository, steps) in &repositories {
        let project = grouping_capture::fresh_project("grouping-runs");
        eprintln!("{repository}: {} failing steps into project {project}", steps.len());
        let requests = steps.iter().map(|step| request(&checks, &project, step)).collect();
        let captured = grouping_capture::capture(&mut qa, requests, Named::ByLast).await?;
        let truth: Vec<&str> = steps.iter().map(|step| step.error_sig.as_deref().unwrap_or_default()).collect();
        let as_captured = grouping_capture::accuracy(&captured.predicted, &truth);
        if verbose {
            print_mixed(repository, &captured, &truth);
        }
        let remined = if remine {
            let remining = grouping_capture::remine_project(&mut qa, &project, steps.len(), &captured).await?;
            Some(Remined {
                automatic: grouping_capture::accuracy(&remining.automatic, &truth).accuracy,
                accepted: grouping_capture::accuracy(&remining.accepted, &truth).accuracy,
                made: (remining.done.merges, remining.done.splits),
                proposed: remining.done.proposed,
                taken: remining.taken,
            })
        } else {
            None
        };
        rows.push(Row {
            repository: repository.clone(),
            steps: steps.len(),
            signatures: as_captured.true_groups,
            patterns: as_captured.predicted_groups,
            captured: as_captured.accuracy,
            remined,
            held: captured.held,
        });
    }
    print_table(&rows);
    Ok(())
}

/// What re-mining gave one repository.
struct Remined {
    automatic: f64,
    accepted: f64,
    /// Merges and splits RemineProject made by itself.
    made: (u32, u32),
    proposed: u32,
    taken: usize,
}

fn print_table(rows: &[Row]) {
    println!(
        "| repository | failing steps | error signatures | patterns | as captured | re-mined by itself | \
         every proposal accepted | made / proposed / accepted |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    for row in rows {
        let (automatic, accepted, moves) = match &row.remined {
            Some(remined) => (
                format!("{:.3}", remined.automatic),
                format!("{:.3}", remined.accepted),
                format!("{} / {} / {}", remined.made.0 + remined.made.1, remined.proposed, remined.taken),
            ),
            None => ("-".to_owned(), "-".to_owned(), "-".to_owned()),
        };
        println!(
            "| {} | {} | {} | {} | {:.3} | {automatic} | {accepted} | {moves} |",
            row.repository, row.steps, row.signatures, row.patterns, row.captured
        );
    }
    let mean = |value: &dyn Fn(&Row) -> Option<f64>| {
        let values: Vec<f64> = rows.iter().filter_map(value).collect();
        values.iter().sum::<f64>() / values.len().max(1) as f64
    };
    let steps: usize = rows.iter().map(|row| row.steps).sum();
    let pooled = |value: &dyn Fn(&Row) -> Option<f64>| {
        rows.iter().filter_map(|row| value(row).map(|accuracy| accuracy * row.steps as f64)).sum::<f64>()
            / steps.max(1) as f64
    };
    let captured = |row: &Row| Some(row.captured);
    let remined = rows.iter().any(|row| row.remined.is_some());
    let figure = |value: &dyn Fn(&Row) -> Option<f64>| {
        if remined { format!("{:.3}", mean(value)) } else { "-".to_owned() }
    };
    let automatic = figure(&|row: &Row| row.remined.as_ref().map(|remined| remined.automatic));
    let accepted = figure(&|row: &Row| row.remined.as_ref().map(|remined| remined.accepted));
    println!(
        "| **mean over repositories** | {steps} | | | **{:.3}** | **{automatic}** | **{accepted}** | |",
        mean(&captured)
    );
    let held: usize = rows.iter().map(|row| row.held).sum();
    if held > 0 {
        println!(
            "\n{held} failures held by the injection screen joined no pattern: each is scored as a group of its own"
        );
    }
    println!(
        "\ngrouping runs={} repositories={} captured={:.3} automatic={automatic} accepted={accepted} weighted_by_steps={:.3}",
        steps,
        rows.len(),
        mean(&captured),
        pooled(&captured)
    );
}

/// The captured patterns that hold failures of several signatures, largest
/// first, and the signatures split over several patterns.
fn print_mixed(repository: &str, captured: &Captured, truth: &[&str]) {
    let mut by_pattern: BTreeMap<&str, (&str, BTreeMap<&str, usize>)> = BTreeMap::new();
    let mut by_signature: BTreeMap<&str, BTreeMap<&str, usize>> = BTreeMap::new();
    for ((pattern, template), signature) in captured.predicted.iter().zip(&captured.templates).zip(truth) {
        *by_pattern.entry(pattern).or_insert((template, BTreeMap::new())).1.entry(signature).or_default() += 1;
        *by_signature.entry(signature).or_default().entry(pattern).or_default() += 1;
    }
    let mut mixed: Vec<_> = by_pattern.values().filter(|(_, signatures)| signatures.len() > 1).collect();
    mixed.sort_by_key(|(_, signatures)| std::cmp::Reverse(signatures.values().sum::<usize>()));
    println!("\n{repository}: patterns holding several signatures");
    for (template, signatures) in mixed {
        println!("  {template:?}");
        for (signature, count) in signatures {
            println!("    {count:4}  {signature:?}");
        }
    }
    println!("{repository}: signatures split over several patterns");
    for (signature, patterns) in by_signature.iter().filter(|(_, patterns)| patterns.len() > 1) {
        let templates: Vec<String> =
            patterns.iter().map(|(pattern, count)| format!("{count} x {:?}", by_pattern[pattern].0)).collect();
        println!("  {signature:?}: {}", templates.join(" | "));
    }
}
