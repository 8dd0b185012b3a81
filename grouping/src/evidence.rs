//! A project's people as the judge of re-mining. Their corrections say
//! which occurrences belong together (a merge) and which apart (a split,
//! which also keeps each of its sides together: the person looked at the
//! whole pattern).
//! Re-mining is trusted in a project only where, replayed from the groups
//! as they were before those corrections and free to change anything, it
//! makes some of them and undoes none of what capture had right: its
//! criterion then predicts this project's people where they looked.
//! Anywhere else Brain's changes are proposed to a person, because a
//! criterion that holds on the sets we develop on does not hold on every
//! project's messages (on log systems kept apart it lowered 6 of 12).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::hash::Hash;

use crate::brain::BrainSettings;
use crate::remine::Occurrence;
use crate::template::Template;

/// One of a person's corrections, by the patterns it names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Correction<P> {
    /// `from` was merged into `into`.
    Merge { from: P, into: P },
    /// `new` was split out of `from`.
    Split { from: P, new: P },
}

/// What a person said about some occurrences, by their index in the
/// re-mined window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Constraint {
    /// One group: a person merged them, or a mask they accepted gives
    /// them one template.
    Together(Vec<usize>),
    /// Two groups: a person split the second out of the first.
    Apart(Vec<usize>, Vec<usize>),
}

/// How many pairs of occurrences the constraints speak about, and how
/// many of those a grouping keeps as the people said.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Agreement {
    pub pairs: f64,
    pub kept: f64,
}

impl Agreement {
    /// The share of pairs kept; 1 when the constraints name no pair.
    pub fn share(&self) -> f64 {
        if self.pairs > 0.0 { self.kept / self.pairs } else { 1.0 }
    }
}

/// How well `group_of` (each occurrence's group) keeps `constraints`,
/// counted over pairs: a together pair is kept in one group, an apart
/// pair in two. Counted per group, so a large constraint costs its size,
/// not its pairs.
pub fn agreement(constraints: &[Constraint], group_of: &[usize]) -> Agreement {
    let mut total = Agreement::default();
    for constraint in constraints {
        match constraint {
            Constraint::Together(members) => {
                let n = members.len() as f64;
                total.pairs += n * (n - 1.0) / 2.0;
                total.kept += counts(members, group_of).values().map(|&c| c * (c - 1.0) / 2.0).sum::<f64>();
            }
            Constraint::Apart(left, right) => {
                let pairs = left.len() as f64 * right.len() as f64;
                let (left, right) = (counts(left, group_of), counts(right, group_of));
                let together: f64 = left.iter().map(|(group, c)| c * right.get(group).copied().unwrap_or(0.0)).sum();
                total.pairs += pairs;
                total.kept += pairs - together;
            }
        }
    }
    total
}

fn counts(members: &[usize], group_of: &[usize]) -> std::collections::HashMap<usize, f64> {
    let mut counts = std::collections::HashMap::new();
    for member in members {
        *counts.entry(group_of[*member]).or_insert(0.0) += 1.0;
    }
    counts
}

/// Whether this project's people support re-mining. Their corrections are
/// labels: re-mining is replayed from the groups as they were before the
/// corrections, with nothing pinned, and is trusted when it makes some of
/// what the people made and undoes none of what capture had right.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Verdict {
    /// Kept by the groups before the corrections (what capture left).
    pub before: Agreement,
    /// Kept by re-mining replayed from there.
    pub replay: Agreement,
    /// Corrections of which the replay keeps fewer pairs than capture did.
    pub regressions: usize,
}

impl Verdict {
    /// The replay made some of the people's corrections and undid none.
    pub fn supports(&self) -> bool {
        self.regressions == 0 && self.replay.kept > self.before.kept
    }

    /// Adds another category's verdict.
    pub fn add(&mut self, other: Verdict) {
        for (mine, theirs) in [(&mut self.before, other.before), (&mut self.replay, other.replay)] {
            mine.pairs += theirs.pairs;
            mine.kept += theirs.kept;
        }
        self.regressions += other.regressions;
    }
}

/// What `corrections` make of re-mining `occurrences` (one category's, in
/// their patterns now), given each occurrence's pattern `before` the
/// corrections. Each side of a correction counts one occurrence per
/// distinct template, so evidence is the shapes a person judged, not how
/// often they recur.
pub fn verdict<P, O>(
    occurrences: &[Occurrence<P, O>],
    before: &[P],
    corrections: &[Correction<P>],
    settings: &BrainSettings,
) -> Verdict
where
    P: Clone + Ord + Hash,
{
    verdict_of(occurrences, before, corrections, |templates, before| {
        crate::rehearsal::rehearse(templates, before, settings).judged
    })
}

/// What `corrections` make of any regrouping: `regroup` is given the
/// occurrences' templates and their patterns before the corrections
/// (numbered), and returns each occurrence's group after it. Re-mining is
/// one regrouping ([`verdict`]); reading a project's messages by another
/// convention is another (`crate::convention`).
pub fn verdict_of<P, O>(
    occurrences: &[Occurrence<P, O>],
    before: &[P],
    corrections: &[Correction<P>],
    regroup: impl FnOnce(&[Template], &[usize]) -> Vec<usize>,
) -> Verdict
where
    P: Clone + Ord + Hash,
{
    let constraints = constraints(occurrences, corrections);
    if constraints.is_empty() {
        return Verdict::default();
    }
    let mut numbers: BTreeMap<&P, usize> = BTreeMap::new();
    let before: Vec<usize> = before
        .iter()
        .map(|pattern| {
            let next = numbers.len();
            *numbers.entry(pattern).or_insert(next)
        })
        .collect();
    let templates: Vec<Template> = occurrences.iter().map(|occurrence| occurrence.template.clone()).collect();
    let replay = regroup(&templates, &before);
    let mut verdict = Verdict::default();
    for constraint in &constraints {
        let one = std::slice::from_ref(constraint);
        let (kept_before, kept_replay) = (agreement(one, &before), agreement(one, &replay));
        verdict.regressions += usize::from(kept_replay.kept < kept_before.kept);
        verdict.add(Verdict { before: kept_before, replay: kept_replay, regressions: 0 });
    }
    verdict
}

/// The constraints `corrections` put on `occurrences` as they are grouped
/// now, one occurrence per distinct template of each side.
fn constraints<P: Ord + Hash, O>(occurrences: &[Occurrence<P, O>], corrections: &[Correction<P>]) -> Vec<Constraint> {
    let mut members: HashMap<&P, Vec<usize>> = HashMap::new();
    let mut seen: BTreeSet<(&P, String)> = BTreeSet::new();
    for (index, occurrence) in occurrences.iter().enumerate() {
        if seen.insert((&occurrence.pattern, occurrence.template.text())) {
            members.entry(&occurrence.pattern).or_default().push(index);
        }
    }
    let of = |pattern: &P| members.get(pattern).cloned().unwrap_or_default();
    let mut said = Vec::new();
    for correction in corrections {
        match correction {
            Correction::Merge { into, .. } => {
                let merged = of(into);
                if merged.len() > 1 {
                    said.push(Constraint::Together(merged));
                }
            }
            Correction::Split { from, new } => {
                let (from, new) = (of(from), of(new));
                if from.is_empty() || new.is_empty() {
                    continue;
                }
                // A split is a judgment of the whole pattern: what went
                // out, and what stayed, each stays one group.
                for side in [&from, &new] {
                    if side.len() > 1 {
                        said.push(Constraint::Together(side.clone()));
                    }
                }
                said.push(Constraint::Apart(from, new));
            }
        }
    }
    said
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_merge_kept_whole_keeps_every_pair_and_a_split_undone_keeps_none_of_its_own() {
        let merged = [Constraint::Together(vec![0, 1, 2])];
        assert_eq!(agreement(&merged, &[7, 7, 7]).share(), 1.0);
        // Split into {0, 1} and {2}: one pair of three kept.
        assert!((agreement(&merged, &[7, 7, 8]).share() - 1.0 / 3.0).abs() < 1e-9);
        let split = [Constraint::Apart(vec![0, 1], vec![2])];
        assert_eq!(agreement(&split, &[7, 7, 8]).share(), 1.0);
        assert_eq!(agreement(&split, &[7, 7, 7]).share(), 0.0);
    }

    #[test]
    fn a_split_keeps_each_side_together_as_well_as_the_two_apart() {
        let occurrence = |id, pattern, message| Occurrence { id, pattern, template: Template::of(message) };
        let occurrences = [
            occurrence(0, 1, "Invalid user alice from 10.0.0.1"),
            occurrence(1, 1, "Invalid user bob from 10.0.0.2"),
            occurrence(2, 2, "Invalid user carol now"),
        ];
        let said = constraints(&occurrences, &[Correction::Split { from: 1, new: 2 }]);
        assert_eq!(said, vec![Constraint::Together(vec![0, 1]), Constraint::Apart(vec![0, 1], vec![2])]);
        // A regrouping that parts what the person left in the pattern
        // undoes half of what they said.
        assert_eq!(agreement(&said, &[1, 3, 2]), Agreement { pairs: 3.0, kept: 2.0 });
    }

    #[test]
    fn support_needs_a_correction_made_and_none_undone() {
        assert!(!Verdict::default().supports(), "without corrections there is no support");
        let pairs = |kept| Agreement { pairs: 3.0, kept };
        let mut verdict = Verdict { before: pairs(1.0), replay: pairs(3.0), regressions: 0 };
        assert!(verdict.supports());
        verdict.add(Verdict { before: pairs(2.0), replay: pairs(1.0), regressions: 1 });
        assert!(!verdict.supports(), "undoing what capture had right anywhere withdraws the support");
        let kept = Verdict { before: pairs(3.0), replay: pairs(3.0), regressions: 0 };
        assert!(!kept.supports(), "keeping what was already right shows nothing");
    }
}
