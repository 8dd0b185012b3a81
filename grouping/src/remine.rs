//! Re-mining: what Brain, run over a route's recent occurrences, says the
//! online assignment got wrong, as merges and splits of patterns.
//!
//! Captures assign each message at once (`matching`), comparing it with the
//! patterns of its route only; Brain, with every recent message in view,
//! decides constants by frequency (`brain`). Where the two disagree the
//! patterns change, and keep their ids: a mined group that holds all the
//! recent occurrences of several patterns merges them into the one with
//! the most; a pattern whose occurrences fall into several mined groups
//! splits the smaller parts out. A part shared with other patterns moves
//! out and joins them in the same plan, so that after the plan every mined
//! group is one pattern. What a person merged or split stays as they left
//! it: a pattern marked `pinned` is never merged or split by re-mining.

use std::collections::{BTreeMap, BTreeSet};

use crate::brain::{BrainSettings, mine};
use crate::template::Template;

/// One recent occurrence, as the store holds it.
#[derive(Debug, Clone)]
pub struct Occurrence<P, O> {
    pub id: O,
    /// The live pattern it belongs to now (after merges).
    pub pattern: P,
    pub template: Template,
}

/// One change the re-mining asks for, in the order to make them.
#[derive(Debug, Clone, PartialEq)]
pub enum Change<P, O> {
    /// Moves these occurrences out of `from` into a new pattern, known to
    /// later changes of the plan as `new` (the index of this change).
    Split { from: P, occurrences: Vec<O>, template: Template },
    /// Merges `sources` (patterns, or the new pattern of an earlier split)
    /// into `into`; the merged template is the mined group's.
    Merge { into: Target<P>, sources: Vec<Target<P>>, template: Template },
}

/// A pattern, or the one an earlier split of the same plan creates.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Target<P> {
    Pattern(P),
    /// The new pattern of the plan's change at this index.
    SplitOf(usize),
}

/// The changes that make the patterns of `occurrences` agree with Brain's
/// groups of them. Patterns in `pinned` (a person merged or split them)
/// are left as they are, with every occurrence they hold.
pub fn plan<P, O>(occurrences: &[Occurrence<P, O>], pinned: &BTreeSet<P>, settings: &BrainSettings) -> Vec<Change<P, O>>
where
    P: Clone + Ord,
    O: Clone,
{
    let templates: Vec<Template> = occurrences.iter().map(|occurrence| occurrence.template.clone()).collect();
    let groups = mine(&templates, settings);
    // For each pattern: its occurrences per mined group.
    let mut parts: BTreeMap<&P, BTreeMap<usize, Vec<usize>>> = BTreeMap::new();
    for (group, mined) in groups.iter().enumerate() {
        for &member in &mined.members {
            parts.entry(&occurrences[member].pattern).or_default().entry(group).or_default().push(member);
        }
    }
    let mut changes = Vec::new();
    // Per mined group, what holds its occurrences after the splits.
    let mut holders: BTreeMap<usize, Vec<(Target<P>, usize)>> = BTreeMap::new();
    for (pattern, by_group) in &parts {
        if pinned.contains(*pattern) {
            continue;
        }
        // The pattern keeps its largest part (the earliest group on a tie);
        // every other part moves out.
        let kept = by_group
            .iter()
            .max_by_key(|(group, members)| (members.len(), std::cmp::Reverse(**group)))
            .map(|(group, _)| *group)
            .expect("a pattern in `parts` has occurrences");
        for (group, members) in by_group {
            if *group == kept {
                holders.entry(*group).or_default().push((Target::Pattern((*pattern).clone()), members.len()));
                continue;
            }
            let template = widest(members.iter().map(|member| &occurrences[*member].template));
            changes.push(Change::Split {
                from: (*pattern).clone(),
                occurrences: members.iter().map(|member| occurrences[*member].id.clone()).collect(),
                template,
            });
            holders.entry(*group).or_default().push((Target::SplitOf(changes.len() - 1), members.len()));
        }
    }
    for (group, mut holding) in holders {
        if holding.len() < 2 {
            continue;
        }
        // A pattern that keeps its place is the survivor, the largest first;
        // only parts split out this round: the largest of those.
        holding.sort_by(|(left, left_size), (right, right_size)| {
            let existing = |target: &Target<P>| matches!(target, Target::Pattern(_));
            existing(right).cmp(&existing(left)).then(right_size.cmp(left_size)).then(left.cmp(right))
        });
        let mut targets = holding.into_iter().map(|(target, _)| target);
        let into = targets.next().expect("two holders or more");
        changes.push(Change::Merge { into, sources: targets.collect(), template: groups[group].template.clone() });
    }
    changes
}

/// The template of a part: positions where its members differ are
/// wildcards (members of one mined group have one length).
fn widest<'a>(mut templates: impl Iterator<Item = &'a Template>) -> Template {
    let first = templates.next().expect("a part has members").clone();
    templates.fold(first, |widest, next| widest.generalize(next))
}

#[cfg(test)]
mod tests;
