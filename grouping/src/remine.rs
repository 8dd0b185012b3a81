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
//!
//! Brain only proposes: [`judge`] keeps a change only when it shortens the
//! description of the project's groups ([`crate::criterion`]), so
//! re-mining never trades a grouping for one its own messages code worse.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::hash::Hash;

use crate::brain::{BrainSettings, mine};
use crate::criterion::Code;
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

/// What the criterion made of a plan: the changes it keeps, in order (an
/// `SplitOf` names its index in these), how many it turned down, and the
/// description length of the groups before and after, in bits.
#[derive(Debug, Clone, PartialEq)]
pub struct Judged<P, O> {
    pub changes: Vec<Change<P, O>>,
    pub rejected: usize,
    pub bits_before: f64,
    pub bits_after: f64,
}

/// Keeps the changes of `changes` (a [`plan`] of `occurrences`) that
/// shorten the description of the groups ([`crate::criterion`]). A split
/// whose part the plan merges into another pattern is judged with that
/// merge, as one move of the part (alone, a part of a few messages would
/// rarely pay for its own group); a merge turned down is tried again
/// without the parts split for it. Each move is judged on the groups the
/// moves kept before it made. Brain proposes, the project's own messages
/// decide.
pub fn judge<P, O>(occurrences: &[Occurrence<P, O>], changes: Vec<Change<P, O>>) -> Judged<P, O>
where
    P: Clone + Ord,
    O: Clone + Eq + Hash,
{
    let index_of: HashMap<&O, usize> =
        occurrences.iter().enumerate().map(|(index, occurrence)| (&occurrence.id, index)).collect();
    let indices = |ids: &[O]| -> Vec<usize> { ids.iter().filter_map(|id| index_of.get(id).copied()).collect() };
    let mut first_of: BTreeMap<&P, usize> = BTreeMap::new();
    for (index, occurrence) in occurrences.iter().enumerate() {
        first_of.entry(&occurrence.pattern).or_insert(index);
    }
    let mut groups = Groups::of(occurrences);
    let bits_before = groups.total();
    let proposed = changes.len();
    let taken_by_merges = taken_by_merges(&changes);
    let mut slots: Vec<Option<Change<P, O>>> = changes.into_iter().map(Some).collect();
    let mut kept: Vec<Change<P, O>> = Vec::new();
    keep_lone_splits(&mut slots, &taken_by_merges, &mut groups, &mut kept, &indices);
    // Each merge, with the parts split for it.
    for index in 0..slots.len() {
        if !matches!(slots[index], Some(Change::Merge { .. })) {
            continue;
        }
        let Some(Change::Merge { into, sources, template }) = slots[index].take() else { continue };
        let mut splits = Vec::new();
        let mut patterns = Vec::new();
        for target in std::iter::once(into).chain(sources) {
            match target {
                Target::SplitOf(split) => splits.extend(slots.get_mut(split).and_then(Option::take)),
                Target::Pattern(pattern) => patterns.push(pattern),
            }
        }
        for with_parts in [true, false] {
            if !with_parts && (splits.is_empty() || patterns.len() < 2) {
                break;
            }
            let mut trial = groups.clone();
            let mut holders: Vec<usize> = patterns.iter().map(|pattern| trial.group_of[first_of[pattern]]).collect();
            if with_parts {
                for split in &splits {
                    if let Change::Split { occurrences: moved, .. } = split {
                        holders.push(trial.split_off(&indices(moved)));
                    }
                }
            }
            holders.sort_unstable();
            holders.dedup();
            if holders.len() < 2 {
                break;
            }
            trial.merge(&holders);
            if trial.total() >= groups.total() - BITS_SLACK {
                continue;
            }
            groups = trial;
            let mut targets: Vec<Target<P>> = patterns.iter().cloned().map(Target::Pattern).collect();
            if with_parts {
                for split in splits.drain(..) {
                    targets.push(Target::SplitOf(kept.len()));
                    kept.push(split);
                }
            }
            let mut targets = targets.into_iter();
            let into = targets.next().expect("two holders or more");
            kept.push(Change::Merge { into, sources: targets.collect(), template: template.clone() });
            break;
        }
    }
    let bits_after = groups.total();
    Judged { rejected: proposed.saturating_sub(kept.len()), changes: kept, bits_before, bits_after }
}

/// The splits whose parts a merge of `changes` takes, by index.
fn taken_by_merges<P, O>(changes: &[Change<P, O>]) -> BTreeSet<usize> {
    changes
        .iter()
        .flat_map(|change| match change {
            Change::Merge { into, sources, .. } => std::iter::once(into).chain(sources).collect(),
            Change::Split { .. } => Vec::new(),
        })
        .filter_map(|target| match target {
            Target::SplitOf(split) => Some(*split),
            Target::Pattern(_) => None,
        })
        .collect()
}

/// A split no merge takes from: its part becomes a pattern of its own when
/// that shortens the description.
fn keep_lone_splits<P, O>(
    slots: &mut [Option<Change<P, O>>],
    taken_by_merges: &BTreeSet<usize>,
    groups: &mut Groups,
    kept: &mut Vec<Change<P, O>>,
    indices: &dyn Fn(&[O]) -> Vec<usize>,
) {
    for (index, slot) in slots.iter_mut().enumerate() {
        if taken_by_merges.contains(&index) || !matches!(slot, Some(Change::Split { .. })) {
            continue;
        }
        let Some(split) = slot.take() else { continue };
        let Change::Split { occurrences: moved, .. } = &split else { continue };
        let mut trial = groups.clone();
        trial.split_off(&indices(moved));
        if trial.total() < groups.total() - BITS_SLACK {
            *groups = trial;
            kept.push(split);
        }
    }
}

/// The changes of a plan as moves a person can take one at a time: each
/// merge with the splits whose parts it takes (numbered within the move),
/// and each split no merge takes, alone.
pub fn moves<P: Clone, O: Clone>(changes: &[Change<P, O>]) -> Vec<Vec<Change<P, O>>> {
    let split_of = |target: &Target<P>| match target {
        Target::SplitOf(split) => Some(*split),
        Target::Pattern(_) => None,
    };
    let taken: BTreeSet<usize> = changes
        .iter()
        .flat_map(|change| match change {
            Change::Merge { into, sources, .. } => std::iter::once(into).chain(sources).filter_map(split_of).collect(),
            Change::Split { .. } => Vec::new(),
        })
        .collect();
    let mut moves = Vec::new();
    for (index, change) in changes.iter().enumerate() {
        match change {
            Change::Split { .. } if !taken.contains(&index) => moves.push(vec![change.clone()]),
            Change::Split { .. } => {}
            Change::Merge { into, sources, template } => {
                let mut parts: Vec<Change<P, O>> = Vec::new();
                let mut renumbered = |target: &Target<P>| match target {
                    Target::SplitOf(split) => {
                        parts.push(changes[*split].clone());
                        Target::SplitOf(parts.len() - 1)
                    }
                    Target::Pattern(pattern) => Target::Pattern(pattern.clone()),
                };
                let into = renumbered(into);
                let sources = sources.iter().map(&mut renumbered).collect();
                parts.push(Change::Merge { into, sources, template: template.clone() });
                moves.push(parts);
            }
        }
    }
    moves
}

/// Bits a change must save to be kept: rounding is no improvement.
pub(crate) const BITS_SLACK: f64 = 1e-6;

/// The groups a plan is judged on, each with its description length.
#[derive(Clone)]
struct Groups<'a> {
    code: Code,
    templates: Vec<&'a Template>,
    group_of: Vec<usize>,
    members: Vec<Vec<usize>>,
    bits: Vec<f64>,
}

impl<'a> Groups<'a> {
    /// The occurrences' patterns as they are.
    fn of<P: Ord, O>(occurrences: &'a [Occurrence<P, O>]) -> Self {
        let templates: Vec<&Template> = occurrences.iter().map(|occurrence| &occurrence.template).collect();
        let mut numbers: BTreeMap<&P, usize> = BTreeMap::new();
        let mut members: Vec<Vec<usize>> = Vec::new();
        let mut group_of = Vec::with_capacity(occurrences.len());
        for (index, occurrence) in occurrences.iter().enumerate() {
            let group = *numbers.entry(&occurrence.pattern).or_insert_with(|| {
                members.push(Vec::new());
                members.len() - 1
            });
            members[group].push(index);
            group_of.push(group);
        }
        let mut groups =
            Self { code: Code::of(templates.iter().copied()), templates, group_of, members, bits: Vec::new() };
        groups.bits = (0..groups.members.len()).map(|group| groups.bits_of(group)).collect();
        groups
    }

    fn bits_of(&self, group: usize) -> f64 {
        let templates: Vec<&Template> = self.members[group].iter().map(|index| self.templates[*index]).collect();
        self.code.group(&templates)
    }

    fn total(&self) -> f64 {
        self.bits.iter().sum()
    }

    /// Moves `part` into a new group; its number.
    fn split_off(&mut self, part: &[usize]) -> usize {
        let new = self.members.len();
        let moving: std::collections::HashSet<usize> = part.iter().copied().collect();
        let from: BTreeSet<usize> = part.iter().map(|index| self.group_of[*index]).collect();
        for group in &from {
            self.members[*group].retain(|index| !moving.contains(index));
        }
        self.members.push(part.to_vec());
        self.bits.push(0.0);
        for index in part {
            self.group_of[*index] = new;
        }
        for group in from.into_iter().chain([new]) {
            self.bits[group] = self.bits_of(group);
        }
        new
    }

    /// Puts every member of `groups` into the first.
    fn merge(&mut self, groups: &[usize]) {
        let (into, sources) = groups.split_first().expect("a group to merge into");
        for source in sources {
            let moved = std::mem::take(&mut self.members[*source]);
            for index in &moved {
                self.group_of[*index] = *into;
            }
            self.members[*into].extend(moved);
            self.bits[*source] = 0.0;
        }
        self.bits[*into] = self.bits_of(*into);
    }
}

/// The template of a part: positions where its members differ are
/// wildcards (members of one mined group have one length).
fn widest<'a>(mut templates: impl Iterator<Item = &'a Template>) -> Template {
    let first = templates.next().expect("a part has members").clone();
    templates.fold(first, |widest, next| widest.generalize(next))
}

#[cfg(test)]
mod tests;
