//! Re-mining rehearsed in memory, as the server carries it out in the
//! store: Brain's plan judged (`remine`), then the merges of one kind at
//! several lengths (`lengths`). What the CLI's evaluation and the grouping
//! tests score.

use std::collections::{BTreeSet, HashMap};

use crate::brain::BrainSettings;
use crate::remine::{Change, Occurrence, Target, judge, plan};
use crate::template::Template;

/// Re-mining rehearsed in memory on patterns numbered by `patterns` (the
/// online assignment, say): each message's pattern after Brain's whole
/// plan, and after what the criterion keeps of it followed by the merges
/// of one kind at several lengths (`crate::lengths`), as the server does.
pub fn rehearse(templates: &[Template], patterns: &[usize], settings: &BrainSettings) -> Rehearsal {
    rehearse_pinned(templates, patterns, &BTreeSet::new(), settings)
}

/// [`rehearse`], leaving the patterns in `pinned` (a person's) as they are.
pub fn rehearse_pinned(
    templates: &[Template],
    patterns: &[usize],
    pinned: &BTreeSet<usize>,
    settings: &BrainSettings,
) -> Rehearsal {
    let occurrences: Vec<Occurrence<usize, usize>> = templates
        .iter()
        .zip(patterns)
        .enumerate()
        .map(|(id, (template, pattern))| Occurrence { id, pattern: *pattern, template: template.clone() })
        .collect();
    let changes = plan(&occurrences, pinned, settings);
    let whole = carried_out(&occurrences, &changes);
    let judged = judge(&occurrences, changes);
    let after: Vec<Occurrence<usize, usize>> = carried_out(&occurrences, &judged.changes)
        .into_iter()
        .zip(&occurrences)
        .map(|(pattern, occurrence)| Occurrence { pattern, ..occurrence.clone() })
        .collect();
    let lengths = crate::lengths::merges(&after, pinned);
    Rehearsal {
        whole,
        judged: carried_out(&after, &lengths.changes),
        bits_before: judged.bits_before,
        bits_after: lengths.bits_after,
    }
}

/// What [`rehearse`] found.
#[derive(Debug, Clone, PartialEq)]
pub struct Rehearsal {
    /// Each message's pattern after Brain's whole plan.
    pub whole: Vec<usize>,
    /// After the changes the criterion kept.
    pub judged: Vec<usize>,
    pub bits_before: f64,
    pub bits_after: f64,
}

/// Carries out a plan in memory, patterns numbered: the pattern of every
/// occurrence after it.
pub(crate) fn carried_out(occurrences: &[Occurrence<usize, usize>], changes: &[Change<usize, usize>]) -> Vec<usize> {
    let mut pattern_of: Vec<usize> = occurrences.iter().map(|occurrence| occurrence.pattern).collect();
    let mut next = pattern_of.iter().max().copied().unwrap_or(0) + 1;
    let mut created: HashMap<usize, usize> = HashMap::new();
    let resolve = |target: &Target<usize>, created: &HashMap<usize, usize>| match target {
        Target::Pattern(pattern) => *pattern,
        Target::SplitOf(change) => created[change],
    };
    for (index, change) in changes.iter().enumerate() {
        match change {
            Change::Split { occurrences: moved, .. } => {
                created.insert(index, next);
                for occurrence in moved {
                    pattern_of[*occurrence] = next;
                }
                next += 1;
            }
            Change::Merge { into, sources, .. } => {
                let into = resolve(into, &created);
                let sources: Vec<usize> = sources.iter().map(|source| resolve(source, &created)).collect();
                for pattern in &mut pattern_of {
                    if sources.contains(pattern) {
                        *pattern = into;
                    }
                }
            }
        }
    }
    pattern_of
}
