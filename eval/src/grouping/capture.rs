//! Grouping through the server, shared by `lore eval grouping FILE` and
//! `--runs`: each failure captured through the real CaptureFailure, the
//! project re-mined at once (RemineProject) and every regrouping it
//! proposed accepted, each failure's pattern read again after each, and
//! group accuracy as in logpai/logparser (a failure
//! counts when its predicted group has exactly the members of its true
//! group).

use std::collections::HashMap;

use anyhow::Context as _;
use indicatif::{ProgressBar, ProgressStyle};
use lore_proto::v1 as proto;
use lore_proto::v1::qa_learning_service_client::QaLearningServiceClient;
use uuid::Uuid;

use crate::Channel;

/// A project of its own, so that earlier patterns take no part.
pub(crate) fn fresh_project(prefix: &str) -> String {
    format!("{prefix}-{}", &Uuid::now_v7().simple().to_string()[20..])
}

/// Which of a failure's messages its group is scored by.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Named {
    /// One message a failure: a log line.
    ByFirst,
    /// A failed command's explaining lines: its failure is named by the
    /// last (`lore_calls::failure_lines`).
    ByLast,
}

/// What the captures decided: each failure's pattern, and which failure
/// and message each was read from (re-mining moves messages, not failures).
pub(crate) struct Captured {
    pub predicted: Vec<String>,
    /// The template of each failure's pattern as captured.
    pub templates: Vec<String>,
    scored: Vec<(String, String)>,
    /// Failures whose every message the injection screen held: each is
    /// scored as a group of its own.
    pub held: usize,
}

/// Captures each request in turn through the real CaptureFailure.
pub(crate) async fn capture(
    qa: &mut QaLearningServiceClient<Channel>,
    requests: Vec<proto::CaptureFailureRequest>,
    named: Named,
) -> anyhow::Result<Captured> {
    let progress = ProgressBar::new(requests.len() as u64).with_style(
        ProgressStyle::with_template("{msg} {bar:40} {pos}/{len} [{elapsed_precise}, {per_sec}]")
            .expect("valid template"),
    );
    progress.set_message("capturing");
    let mut captured = Captured { predicted: Vec::new(), templates: Vec::new(), scored: Vec::new(), held: 0 };
    for (index, request) in requests.into_iter().enumerate() {
        let failure_id = request.failure_id.clone();
        let outcome = qa.capture_failure(request).await.with_context(|| format!("failure {}", index + 1))?.into_inner();
        let link = match named {
            Named::ByFirst => outcome.links.first(),
            Named::ByLast => outcome.links.last(),
        };
        match link {
            Some(link) => {
                captured.predicted.push(link.pattern_id.clone());
                captured.templates.push(link.template.clone());
                captured.scored.push((failure_id, link.message.clone()));
            }
            None => {
                captured.held += 1;
                captured.predicted.push(format!("held: failure {}", index + 1));
                captured.templates.push(String::new());
                captured.scored.push((failure_id, String::new()));
            }
        }
        progress.inc(1);
    }
    progress.finish_and_clear();
    Ok(captured)
}

/// What re-mining a project gave, scored twice: what RemineProject made by
/// itself (nothing, in a project no person corrected: its moves are
/// proposed), then the groups after a person accepted every proposal.
pub(crate) struct Remining {
    pub automatic: Vec<String>,
    pub done: proto::RemineProjectResponse,
    pub accepted: Vec<String>,
    /// Proposals accepted and made, and those a move accepted before them
    /// had made stale.
    pub taken: usize,
    pub stale: usize,
}

/// RemineProject over the project's last `window` failures, at once; then
/// every open proposal accepted, largest first, as one person would.
pub(crate) async fn remine_project(
    qa: &mut QaLearningServiceClient<Channel>,
    project: &str,
    window: usize,
    captured: &Captured,
) -> anyhow::Result<Remining> {
    let request = proto::RemineProjectRequest { project: project.to_owned(), window: window as u32 };
    let done = qa.remine_project(request).await.context("re-mining the project")?.into_inner();
    let automatic = if done.merges + done.splits > 0 {
        after_remining(qa, project, captured).await?
    } else {
        captured.predicted.clone()
    };
    let mut proposals = qa
        .list_regrouping_proposals(proto::ListRegroupingProposalsRequest {
            project: project.to_owned(),
            include_decided: false,
        })
        .await
        .context("listing the regrouping proposals")?
        .into_inner()
        .proposals;
    proposals.sort_by_key(|proposal| std::cmp::Reverse(proposal.occurrences));
    let (mut taken, mut stale) = (0, 0);
    for proposal in proposals {
        let decided = qa
            .decide_regrouping_proposal(proto::DecideRegroupingProposalRequest {
                project: project.to_owned(),
                proposal_id: proposal.proposal_id,
                decision: proto::RegroupingDecision::Accept as i32,
            })
            .await;
        match decided {
            Ok(_) => taken += 1,
            Err(status) if status.code() == tonic::Code::FailedPrecondition => stale += 1,
            Err(status) => return Err(status).context("accepting a regrouping proposal"),
        }
    }
    let accepted = if taken > 0 { after_remining(qa, project, captured).await? } else { automatic.clone() };
    Ok(Remining { automatic, done, accepted, taken, stale })
}

/// Each line's pattern after re-mining: a line whose occurrence a split
/// moved is in the split's new pattern; every pattern follows its merges.
pub(crate) async fn after_remining(
    qa: &mut QaLearningServiceClient<Channel>,
    project: &str,
    captured: &Captured,
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
    let known: std::collections::HashSet<&String> = captured.predicted.iter().collect();
    let mut moved: HashMap<(String, String), String> = HashMap::new();
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
            let message = occurrence.link.map(|link| link.message).unwrap_or_default();
            moved.insert((occurrence.failure_id, message), pattern.pattern_id.clone());
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
    Ok(captured
        .scored
        .iter()
        .zip(&captured.predicted)
        .map(|(scored, pattern)| survivor(moved.get(scored).cloned().unwrap_or_else(|| pattern.clone())))
        .collect())
}

pub(crate) struct Report {
    pub accuracy: f64,
    pub true_groups: usize,
    pub predicted_groups: usize,
    /// True groups not reproduced exactly, with how many predicted groups
    /// their lines went to.
    pub misgrouped: Vec<(String, usize)>,
}

pub(crate) fn accuracy(predicted: &[String], truth: &[&str]) -> Report {
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
