//! What re-mining offers a person where the project's people have not
//! shown that its criterion holds for them: the evidence test itself
//! (`verdict`, each occurrence's pattern before the people's corrections
//! found by undoing them), the moves proposed instead of made
//! (`propose`), and a person's decision on each. An accepted move is made
//! as that person's own correction, so it pins its patterns and counts as
//! evidence.

use std::collections::{BTreeSet, HashMap};

use lore_grouping::brain::BrainSettings;
use lore_grouping::convention::{LiteralEvidence, keeping_names};
use lore_grouping::evidence::{Correction, Verdict};
use lore_grouping::remine::{Change, Occurrence, Target, judge, moves, plan};
use lore_grouping::template::Template;
use uuid::Uuid;

use super::QaLearning;
use super::regrouping::Voice;
use crate::Error;
use lore_store::qa::regrouping_proposals as store;
use lore_store::qa::remining::PersonCorrection;
use lore_types::qa::remining::Remined;
use lore_types::qa::remining::{ProposalState, RegroupingDecision, RegroupingProposal, RegroupingStep, StepTarget};
use lore_types::scope::ProjectScope;

/// What the people's corrections (oldest first) make of re-mining in one
/// category (`lore_grouping::evidence::verdict`): each occurrence's
/// pattern before them is found by undoing them, newest first.
pub(super) fn verdict(
    occurrences: &[Occurrence<Uuid, Uuid>],
    corrections: &[PersonCorrection],
    settings: &BrainSettings,
) -> Verdict {
    let (before, corrections) = undone(occurrences, corrections);
    lore_grouping::evidence::verdict(occurrences, &before, &corrections, settings)
}

/// What the people's corrections make of reading one category literally
/// (`lore_grouping::convention`), `literal` holding each occurrence's
/// literal template.
pub(super) fn literal_evidence(
    occurrences: &[Occurrence<Uuid, Uuid>],
    literal: &[Template],
    corrections: &[PersonCorrection],
) -> LiteralEvidence {
    let (before, corrections) = undone(occurrences, corrections);
    lore_grouping::convention::literal_evidence(occurrences, literal, &before, &corrections)
}

/// Each occurrence's pattern before the people's corrections (found by
/// undoing them, newest first), and the corrections as the evidence test
/// reads them.
fn undone(
    occurrences: &[Occurrence<Uuid, Uuid>],
    corrections: &[PersonCorrection],
) -> (Vec<Uuid>, Vec<Correction<Uuid>>) {
    let index: HashMap<Uuid, usize> =
        occurrences.iter().enumerate().map(|(index, occurrence)| (occurrence.id, index)).collect();
    let mut before: Vec<Uuid> = occurrences.iter().map(|occurrence| occurrence.pattern).collect();
    for correction in corrections.iter().rev() {
        for moved in correction.occurrences.iter().filter_map(|occurrence| index.get(occurrence)) {
            before[*moved] = correction.from;
        }
    }
    let corrections: Vec<Correction<Uuid>> = corrections
        .iter()
        .map(|correction| {
            if correction.merge {
                Correction::Merge { from: correction.from, into: correction.to }
            } else {
                Correction::Split { from: correction.from, new: correction.to }
            }
        })
        .collect();
    (before, corrections)
}

/// What re-mining does in a category its project's people have not shown
/// it groups as they would.
pub(super) struct Proposed {
    /// Merges of patterns whose recent occurrences all have one template
    /// (as a mask added since leaves them): capture's own rule, an exact
    /// template joins its pattern, so they are made at once.
    pub exact: Vec<Change<Uuid, Uuid>>,
    /// Every other move, for a person.
    pub proposals: Vec<RegroupingProposal>,
}

/// The moves re-mining would make in one category: what the criterion
/// keeps of Brain's plan, and the merges of one kind at several lengths,
/// each judged on the groups as they are (in a project read literally,
/// none that joins two quoted names).
pub(super) fn propose(
    project: &str,
    occurrences: &[Occurrence<Uuid, Uuid>],
    (pinned, literally): (&BTreeSet<Uuid>, bool),
    settings: &BrainSettings,
    done: &mut Remined,
) -> Proposed {
    let mut judged = judge(occurrences, plan(occurrences, pinned, settings));
    if literally {
        judged.changes = keeping_names(&judged.changes, occurrences);
    }
    done.rejected += judged.rejected;
    done.bits_before += judged.bits_before;
    // What is proposed is not made, so the groups code as they did.
    done.bits_after += judged.bits_before;
    let mut lengths = lore_grouping::lengths::merges(occurrences, pinned);
    if literally {
        lengths.changes = keeping_names(&lengths.changes, occurrences);
    }
    let mut templates: HashMap<Uuid, BTreeSet<String>> = HashMap::new();
    let mut sizes: HashMap<Uuid, usize> = HashMap::new();
    for occurrence in occurrences {
        templates.entry(occurrence.pattern).or_default().insert(occurrence.template.text());
        *sizes.entry(occurrence.pattern).or_default() += 1;
    }
    let mut proposed = Proposed { exact: Vec::new(), proposals: Vec::new() };
    for steps in moves(&judged.changes).into_iter().chain(moves(&lengths.changes)) {
        if one_template(&steps, &templates) {
            proposed.exact.extend(steps);
        } else {
            proposed.proposals.push(proposal(project, &steps, &sizes));
        }
    }
    proposed
}

/// Whether a move only merges patterns whose occurrences share one
/// template.
fn one_template(steps: &[Change<Uuid, Uuid>], templates: &HashMap<Uuid, BTreeSet<String>>) -> bool {
    let mut shared: BTreeSet<&String> = BTreeSet::new();
    for step in steps {
        let Change::Merge { into, sources, .. } = step else { return false };
        for target in std::iter::once(into).chain(sources) {
            let Target::Pattern(pattern) = target else { return false };
            shared.extend(templates.get(pattern).into_iter().flatten());
        }
    }
    shared.len() == 1
}

/// One move as a proposal: its steps as stored, the patterns it touches
/// (its key) and the occurrences it would move.
fn proposal(project: &str, steps: &[Change<Uuid, Uuid>], sizes: &HashMap<Uuid, usize>) -> RegroupingProposal {
    let target = |target: &Target<Uuid>| match target {
        Target::Pattern(pattern) => StepTarget::Pattern(*pattern),
        Target::SplitOf(step) => StepTarget::SplitOf(*step),
    };
    let mut touched = BTreeSet::new();
    let mut moved = 0;
    let mut template = String::new();
    let steps: Vec<RegroupingStep> = steps
        .iter()
        .map(|step| match step {
            Change::Split { from, occurrences, template: mined } => {
                touched.insert(*from);
                moved += occurrences.len();
                template = mined.text();
                RegroupingStep::Split { from: *from, occurrences: occurrences.clone(), template: mined.text() }
            }
            Change::Merge { into, sources, template: mined } => {
                for source in sources {
                    if let Target::Pattern(pattern) = source {
                        touched.insert(*pattern);
                        moved += sizes.get(pattern).copied().unwrap_or(0);
                    }
                }
                if let Target::Pattern(pattern) = into {
                    touched.insert(*pattern);
                }
                template = mined.text();
                RegroupingStep::Merge {
                    into: target(into),
                    sources: sources.iter().map(target).collect(),
                    template: mined.text(),
                }
            }
        })
        .collect();
    let kinds: Vec<&str> =
        steps.iter().map(|step| if matches!(step, RegroupingStep::Split { .. }) { "split" } else { "merge" }).collect();
    let pattern_ids: Vec<Uuid> = touched.into_iter().collect();
    let ids: Vec<String> = pattern_ids.iter().map(Uuid::to_string).collect();
    RegroupingProposal {
        proposal_id: Uuid::now_v7(),
        project: project.to_owned(),
        move_key: format!("{}:{}", kinds.join("+"), ids.join(",")),
        steps,
        template,
        pattern_ids,
        occurrences: moved,
        proposed_at: chrono::Utc::now(),
        state: ProposalState::Open,
        decided_by: String::new(),
        decided_at: None,
    }
}

/// The stored steps as the changes re-mining carries out.
fn changes(steps: &[RegroupingStep]) -> Vec<Change<Uuid, Uuid>> {
    let template = |text: &str| Template::from_tokens(text.split_whitespace().map(str::to_owned).collect());
    let target = |target: &StepTarget| match target {
        StepTarget::Pattern(pattern) => Target::Pattern(*pattern),
        StepTarget::SplitOf(step) => Target::SplitOf(*step),
    };
    steps
        .iter()
        .map(|step| match step {
            RegroupingStep::Split { from, occurrences, template: text } => {
                Change::Split { from: *from, occurrences: occurrences.clone(), template: template(text) }
            }
            RegroupingStep::Merge { into, sources, template: text } => Change::Merge {
                into: target(into),
                sources: sources.iter().map(target).collect(),
                template: template(text),
            },
        })
        .collect()
}

/// What deciding a regrouping proposal did.
#[derive(Debug, Clone)]
pub struct RegroupingDecided {
    pub proposal: RegroupingProposal,
    /// The merges and splits made (none when rejected).
    pub remined: Remined,
}

impl QaLearning {
    /// A project's regrouping proposals, newest first: the open ones, or
    /// all.
    pub async fn regrouping_proposals(
        &self,
        scope: &ProjectScope,
        project: &str,
        decided_too: bool,
    ) -> Result<Vec<RegroupingProposal>, Error> {
        scope.require(project)?;
        store::proposals(&self.pool, project, decided_too).await
    }

    /// A person's decision on an open proposal. Accepting makes the move
    /// in their name; when the patterns changed since it was proposed so
    /// that none of it can be made, the proposal stays open and the error
    /// says so (the next re-mining proposes anew).
    pub async fn decide_regrouping_proposal(
        &self,
        scope: &ProjectScope,
        project: &str,
        proposal_id: Uuid,
        decision: RegroupingDecision,
        by: &str,
    ) -> Result<RegroupingDecided, Error> {
        scope.require(project)?;
        let proposal = store::open_proposal(&self.pool, project, proposal_id).await?;
        let mut remined = Remined::default();
        if decision == RegroupingDecision::Reject {
            let proposal = store::close(&self.pool, project, proposal_id, ProposalState::Rejected, by).await?;
            return Ok(RegroupingDecided { proposal, remined });
        }
        self.carry_out(scope, &[], &changes(&proposal.steps), &Voice::accepted_by(by), &mut remined).await?;
        if remined.merges + remined.splits == 0 {
            return Err(Error::FailedPrecondition(format!(
                "regrouping proposal {proposal_id}: its patterns changed since it was proposed, so nothing was \
                 made; re-mine the project for a current proposal"
            )));
        }
        let proposal = store::close(&self.pool, project, proposal_id, ProposalState::Accepted, by).await?;
        Ok(RegroupingDecided { proposal, remined })
    }
}
