//! `lore eval grouping`: how well CaptureFailure groups messages, on a
//! LogHub-format `*_structured.csv`. Each line's `Content` is captured as
//! one failure (in file order, through the real RPC, into a fresh project);
//! the pattern of its message is the predicted group. Then the project is
//! re-mined at once (RemineProject, what the leader does on a schedule),
//! which in a project no person corrected only proposes; every proposal is
//! then accepted and each line is scored in the pattern it is in after
//! that (the figure re-mining makes by itself is printed too);
//! `--no-remine` scores the grouping as captures left it. Group accuracy as in
//! logpai/logparser: a line counts when its predicted group has exactly the
//! members of its true `EventId` group (`grouping_capture.rs`). `--runs`
//! does the same with agents' failing commands (`grouping_runs.rs`).

mod capture;
mod corrections;
mod people;
mod runs;
pub(crate) mod sources;

use std::path::{Path, PathBuf};

use lore_proto::v1 as proto;
use uuid::Uuid;

use crate::Channel;
use capture::{Named, accuracy, capture, fresh_project, remine_project};

#[derive(clap::Args)]
pub struct Args {
    /// LogHub `<System>_2k.log_structured.csv` files (Content and EventId
    /// columns); through the server, each in turn.
    #[arg(required_unless_present = "runs")]
    files: Vec<PathBuf>,
    /// Group in this process, each file's set left out of the choice of
    /// Brain's setting in turn (needs no server).
    #[arg(long)]
    pub leave_one_out: bool,
    /// In this process: masks proposed from an ideal person's merges on
    /// each file's first half, scored on its second half with and without
    /// them (needs no server).
    #[arg(long, conflicts_with = "leave_one_out")]
    pub corrections: bool,
    /// In this process: an ideal person corrects this many of each set's
    /// largest wrongly grouped true groups, and re-mining regroups by
    /// itself only where those corrections support it (needs no server;
    /// takes `--runs` too, each repository a set).
    #[arg(long, value_name = "N", conflicts_with_all = ["leave_one_out", "corrections"])]
    pub people: Option<usize>,
    /// Project to capture into; a fresh one by default, so earlier patterns
    /// do not take part.
    #[arg(long)]
    project: Option<String>,
    /// Agents' failing commands instead of log files: a runs file
    /// (`steps.jsonl`: `repo`, `command`, `output`, `exit_code_or_status`,
    /// `is_failure`, `error_sig`), each repository captured into a project
    /// of its own and scored against `error_sig`.
    #[arg(long, value_name = "STEPS.jsonl", conflicts_with_all = ["files", "project"])]
    pub runs: Option<PathBuf>,
    /// Print the true groups that were split or merged.
    #[arg(long)]
    verbose: bool,
    /// Score the grouping as captures left it, without the re-mining the
    /// leader does on a schedule (by default the project is re-mined at
    /// once, with RemineProject, and the figure is the one after it).
    #[arg(long)]
    no_remine: bool,
}

/// `--leave-one-out`: every file's set, in this process.
pub fn leave_one_out(args: Args) -> anyhow::Result<()> {
    sources::run(&args.files)
}

/// `--people N`: the evidence gate, after an ideal person's corrections.
pub fn people(args: Args, people: usize) -> anyhow::Result<()> {
    people::run(&args.files, args.runs.as_deref(), people)
}

/// `--corrections`: masks from merges, on each file's held-out half.
pub fn corrections(args: Args) -> anyhow::Result<()> {
    corrections::run(&args.files)
}

pub async fn run(channel: Channel, args: Args) -> anyhow::Result<()> {
    if let Some(runs) = &args.runs {
        return runs::run(channel, runs, !args.no_remine, args.verbose).await;
    }
    for file in &args.files {
        run_file(channel.clone(), file, args.project.clone(), args.verbose, !args.no_remine).await?;
    }
    Ok(())
}

async fn run_file(
    channel: Channel,
    file: &Path,
    project: Option<String>,
    verbose: bool,
    remine: bool,
) -> anyhow::Result<()> {
    let lines = sources::read_structured(file)?;
    let project = project.unwrap_or_else(|| fresh_project("grouping-eval"));
    let requests = lines.iter().enumerate().map(|(index, (message, _))| {
        // An empty line is still a line of its group.
        let message = if message.trim().is_empty() { "(empty message)".to_owned() } else { message.clone() };
        proto::CaptureFailureRequest {
            failure_id: Uuid::now_v7().to_string(),
            project: project.clone(),
            task: Some(proto::Task { task_id: format!("line-{}", index + 1), ..Default::default() }),
            error_messages: vec![message],
            ..Default::default()
        }
    });
    let mut qa = lore_proto::client::qa(channel);
    let captured = capture(&mut qa, requests.collect(), Named::ByFirst).await?;
    let truth: Vec<&str> = lines.iter().map(|(_, event)| event.as_str()).collect();
    let mut predicted = captured.predicted.clone();
    if remine {
        let as_captured = accuracy(&predicted, &truth).accuracy;
        let remining = remine_project(&mut qa, &project, lines.len(), &captured).await?;
        let automatic = accuracy(&remining.automatic, &truth).accuracy;
        let done = &remining.done;
        println!(
            "as captured: group_accuracy={as_captured:.3}; re-mined by itself: {automatic:.3} ({} merges, {} splits); \
             {} regroupings proposed ({} turned down by the criterion), {} accepted, {} stale after those",
            done.merges, done.splits, done.proposed, done.rejected, remining.taken, remining.stale
        );
        predicted = remining.accepted;
    }
    let report = accuracy(&predicted, &truth);
    if verbose {
        for (event, groups) in &report.misgrouped {
            println!("{event}: split over {groups} predicted groups or merged with others");
        }
    }
    println!(
        "project {project}: {} lines, {} true groups, {} patterns",
        lines.len(),
        report.true_groups,
        report.predicted_groups
    );
    if captured.held > 0 {
        println!(
            "{} lines held by the injection screen joined no pattern: each is scored as a group of its own",
            captured.held
        );
    }
    println!("group_accuracy={:.3}", report.accuracy);
    Ok(())
}
