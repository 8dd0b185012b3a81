//! `lore eval grouping`: how well CaptureFailure groups messages, on a
//! LogHub-format `*_structured.csv`. Each line's `Content` is captured as
//! one failure (in file order, through the real RPC, into a fresh project);
//! the pattern of its message is the predicted group. Then the project is
//! re-mined at once (RemineProject, what the leader does on a schedule) and
//! each line is scored in the pattern it is in after that; `--no-remine`
//! scores the grouping as captures left it. Group accuracy as in
//! logpai/logparser: a line counts when its predicted group has exactly the
//! members of its true `EventId` group.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::Channel;
use anyhow::Context as _;
use indicatif::{ProgressBar, ProgressStyle};
use lore_proto::v1 as proto;
use lore_proto::v1::qa_learning_service_client::QaLearningServiceClient;
use uuid::Uuid;

#[derive(clap::Args)]
pub struct Args {
    /// LogHub `<System>_2k.log_structured.csv` files (Content and EventId
    /// columns); through the server, each in turn.
    #[arg(required = true)]
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
    /// Project to capture into; a fresh one by default, so earlier patterns
    /// do not take part.
    #[arg(long)]
    project: Option<String>,
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
    super::grouping_sources::run(&args.files)
}

/// `--corrections`: masks from merges, on each file's held-out half.
pub fn corrections(args: Args) -> anyhow::Result<()> {
    super::grouping_corrections::run(&args.files)
}

pub async fn run(channel: Channel, args: Args) -> anyhow::Result<()> {
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
    let lines = super::grouping_sources::read_structured(file)?;
    let project = project.unwrap_or_else(|| format!("grouping-eval-{}", &Uuid::now_v7().simple().to_string()[20..]));
    let mut qa = super::qa::client(channel);
    let progress = ProgressBar::new(lines.len() as u64).with_style(
        ProgressStyle::with_template("{msg} {bar:40} {pos}/{len} [{elapsed_precise}, {per_sec}]")
            .expect("valid template"),
    );
    progress.set_message("capturing");
    let mut predicted = Vec::with_capacity(lines.len());
    let mut failures = Vec::with_capacity(lines.len());
    let mut held = 0;
    for (index, (message, _)) in lines.iter().enumerate() {
        // An empty line is still a line of its group.
        let message = if message.trim().is_empty() { "(empty message)".to_owned() } else { message.clone() };
        let failure_id = Uuid::now_v7().to_string();
        failures.push(failure_id.clone());
        let request = proto::CaptureFailureRequest {
            failure_id,
            project: project.clone(),
            task: Some(proto::Task { task_id: format!("line-{}", index + 1), ..Default::default() }),
            error_messages: vec![message],
            ..Default::default()
        };
        let captured = qa.capture_failure(request).await.with_context(|| format!("line {}", index + 1))?.into_inner();
        // A message the injection screen holds joins no pattern: it is
        // scored as a group of its own, and counted.
        match captured.links.first() {
            Some(link) => predicted.push(link.pattern_id.clone()),
            None => {
                held += 1;
                predicted.push(format!("held: line {}", index + 1));
            }
        }
        progress.inc(1);
    }
    progress.finish_and_clear();
    let truth: Vec<&str> = lines.iter().map(|(_, event)| event.as_str()).collect();
    if remine {
        let captured = accuracy(&predicted, &truth).accuracy;
        let done = qa
            .remine_project(proto::RemineProjectRequest { project: project.clone(), window: lines.len() as u32 })
            .await
            .context("re-mining the project")?
            .into_inner();
        println!(
            "as captured: group_accuracy={captured:.3}; re-mined: {} merges, {} splits ({} proposed and turned down)",
            done.merges, done.splits, done.rejected
        );
        if done.merges + done.splits > 0 {
            predicted = after_remining(&mut qa, &project, &failures, &predicted).await?;
        }
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
    if held > 0 {
        println!("{held} lines held by the injection screen joined no pattern: each is scored as a group of its own");
    }
    println!("group_accuracy={:.3}", report.accuracy);
    Ok(())
}

/// Each line's pattern after re-mining: a line whose occurrence a split
/// moved is in the split's new pattern; every pattern follows its merges.
async fn after_remining(
    qa: &mut QaLearningServiceClient<Channel>,
    project: &str,
    failures: &[String],
    captured: &[String],
) -> anyhow::Result<Vec<String>> {
    let statuses = [
        proto::PatternStatus::Candidate,
        proto::PatternStatus::Active,
        proto::PatternStatus::Merged,
        proto::PatternStatus::Promoted,
    ];
    let mut merged_into: HashMap<String, String> = HashMap::new();
    let mut all = Vec::new();
    let mut cursor = String::new();
    loop {
        let page = qa
            .list_patterns(proto::ListPatternsRequest {
                project: project.to_owned(),
                statuses: statuses.iter().map(|status| *status as i32).collect(),
                page: Some(proto::PageRequest { page_size: 500, cursor }),
                ..Default::default()
            })
            .await?
            .into_inner();
        for pattern in page.patterns {
            if !pattern.merged_into.is_empty() {
                merged_into.insert(pattern.pattern_id.clone(), pattern.merged_into.clone());
            }
            all.push(pattern);
        }
        if page.next_cursor.is_empty() {
            break;
        }
        cursor = page.next_cursor;
    }
    // Patterns no capture made are the splits' new ones.
    let known: std::collections::HashSet<&String> = captured.iter().collect();
    let mut moved: HashMap<String, String> = HashMap::new();
    for pattern in all.iter().filter(|pattern| !known.contains(&pattern.pattern_id)) {
        let report = qa
            .get_pattern(proto::GetPatternRequest { pattern_id: pattern.pattern_id.clone(), occurrence_limit: 500 })
            .await?
            .into_inner();
        if pattern.occurrence_count > 500 {
            eprintln!(
                "pattern {} holds more than 500 occurrences; the rest are scored where they were",
                pattern.pattern_id
            );
        }
        for occurrence in report.occurrences {
            moved.insert(occurrence.failure_id, pattern.pattern_id.clone());
        }
    }
    let survivor = |mut pattern: String| {
        let mut hops = 0;
        while let Some(next) = merged_into.get(&pattern) {
            pattern = next.clone();
            hops += 1;
            if hops > merged_into.len() {
                break;
            }
        }
        pattern
    };
    Ok(failures
        .iter()
        .zip(captured)
        .map(|(failure, pattern)| survivor(moved.get(failure).cloned().unwrap_or_else(|| pattern.clone())))
        .collect())
}

struct Report {
    accuracy: f64,
    true_groups: usize,
    predicted_groups: usize,
    /// True groups not reproduced exactly, with how many predicted groups
    /// their lines went to.
    misgrouped: Vec<(String, usize)>,
}

fn accuracy(predicted: &[String], truth: &[&str]) -> Report {
    let mut true_groups: HashMap<&str, Vec<usize>> = HashMap::new();
    let mut predicted_groups: HashMap<&str, Vec<usize>> = HashMap::new();
    for (line, (group, event)) in predicted.iter().zip(truth).enumerate() {
        true_groups.entry(event).or_default().push(line);
        predicted_groups.entry(group).or_default().push(line);
    }
    let mut misgrouped: Vec<(String, usize)> = true_groups
        .iter()
        .filter_map(|(event, lines)| {
            let mut groups: Vec<&str> = lines.iter().map(|line| predicted[*line].as_str()).collect();
            groups.sort_unstable();
            groups.dedup();
            let exact = groups.len() == 1 && predicted_groups[groups[0]].len() == lines.len();
            (!exact).then(|| (event.to_string(), groups.len()))
        })
        .collect();
    misgrouped.sort();
    Report {
        accuracy: lore_grouping::accuracy::group_accuracy(predicted, truth),
        true_groups: true_groups.len(),
        predicted_groups: predicted_groups.len(),
        misgrouped,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_counts_only_when_its_group_is_exact() {
        let predicted: Vec<String> = ["a", "a", "b", "c", "c"].iter().map(|group| group.to_string()).collect();
        // E1 = {0, 1} exact; E2 = {2, 3} split; {4} merged with 3 under "c".
        let report = accuracy(&predicted, &["E1", "E1", "E2", "E2", "E3"]);
        assert_eq!(report.accuracy, 0.4);
        assert_eq!(report.misgrouped, [("E2".to_owned(), 2), ("E3".to_owned(), 1)]);
    }
}
