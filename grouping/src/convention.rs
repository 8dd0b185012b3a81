//! Which convention a project's people group failures by.
//!
//! Capture reads a name a message quotes, or a word that differs in one
//! position of a short message, as a variable: `No module named 'x'` is one
//! failure whatever `x` is. Real tool failures are labelled that way by
//! the people who made them, and so are the log systems. People working in
//! one repository often want the opposite: a missing `psycopg2` and the
//! agent's own missing `reproduce_app` have different fixes, and the
//! labels of real agent runs keep them apart. No rule read off a message
//! tells the two conventions apart (keeping quoted names lifted the runs
//! and dropped the tool failures from 0.778 to 0.407), so a project's own
//! people decide, by their splits:
//!
//! - As captured, generically, is how every project is read at first.
//! - Literally (`crate::masks::Masks::reads_literally`), a message keeps
//!   what it quotes, and joins only a pattern it fits in every position
//!   (no threshold, no one-word difference). A project is read so when its
//!   people's corrections show it: read literally from the groups as they
//!   were before, enough of their corrections are made and none is undone
//!   ([`LiteralEvidence`]).

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::hash::Hash;

use crate::evidence::{Correction, Verdict, verdict_of};
use crate::remine::{Change, Occurrence, Target, moves};
use crate::template::{Template, WILDCARD};

/// The splits that leave each pattern outside `pinned` (a person's merges
/// and splits) with one template among `occurrences`, templates read
/// literally: what a project's groups become when it turns literal. A
/// pattern's largest part stays (ties by template, so a round is
/// repeatable); every other part moves to a pattern of its own.
pub fn literal_splits<P, O>(occurrences: &[Occurrence<P, O>], pinned: &BTreeSet<P>) -> Vec<Change<P, O>>
where
    P: Clone + Ord,
    O: Clone,
{
    let mut parts: BTreeMap<&P, BTreeMap<String, (&Template, Vec<O>)>> = BTreeMap::new();
    for occurrence in occurrences.iter().filter(|occurrence| !pinned.contains(&occurrence.pattern)) {
        parts
            .entry(&occurrence.pattern)
            .or_default()
            .entry(occurrence.template.text())
            .or_insert_with(|| (&occurrence.template, Vec::new()))
            .1
            .push(occurrence.id.clone());
    }
    let mut changes = Vec::new();
    for (pattern, by_template) in parts {
        let mut by_size: Vec<(String, (&Template, Vec<O>))> = by_template.into_iter().collect();
        by_size.sort_by(|left, right| right.1.1.len().cmp(&left.1.1.len()).then_with(|| left.0.cmp(&right.0)));
        for (_, (template, moved)) in by_size.into_iter().skip(1) {
            changes.push(Change::Split { from: pattern.clone(), occurrences: moved, template: template.clone() });
        }
    }
    changes
}

/// Each occurrence's pattern (numbered, `patterns`) after the
/// [`literal_splits`] of its `literal` templates: new patterns are
/// numbered past every number in use.
pub fn split_by_literal(patterns: &[usize], literal: &[Template], pinned: &BTreeSet<usize>) -> Vec<usize> {
    debug_assert_eq!(patterns.len(), literal.len());
    let occurrences: Vec<Occurrence<usize, usize>> = patterns
        .iter()
        .zip(literal)
        .enumerate()
        .map(|(id, (pattern, template))| Occurrence { id, pattern: *pattern, template: template.clone() })
        .collect();
    crate::rehearsal::carried_out(&occurrences, &literal_splits(&occurrences, pinned))
}

/// Corrections a project's people made the way a literal reading groups
/// (each merge or split is one judgment), with none against, before the
/// whole project is read so. One is a local judgment (in OpenSSH's logs a
/// person keeps `root` and `admin` apart in one message and not in the
/// others; read literally on that one split, that log fell from 0.999 to
/// 0.392). With none against, four is the fewest agreeing corrections
/// whose 95 % Wilson lower bound on the share that agree exceeds one half
/// (`n / (n + 1.96²) > 1/2`), so nothing here is fitted.
pub const MIN_CORRECTIONS: usize = 4;

/// What a project's people's corrections say of reading it literally.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LiteralEvidence {
    /// Corrections that reading literally, replayed from the groups
    /// before them, makes.
    pub agreeing: usize,
    /// Corrections it undoes (it parts what a person merged, or what a
    /// person left on one side of a split).
    pub against: usize,
    /// Every correction at once, as re-mining's evidence is counted.
    pub verdict: Verdict,
}

impl LiteralEvidence {
    /// Adds another category's evidence.
    pub fn add(&mut self, other: LiteralEvidence) {
        self.agreeing += other.agreeing;
        self.against += other.against;
        self.verdict.add(other.verdict);
    }

    /// Enough corrections agree and none is against.
    pub fn supports(&self) -> bool {
        self.against == 0 && self.agreeing >= MIN_CORRECTIONS && self.verdict.supports()
    }
}

/// What a project's people's `corrections` make of reading its
/// `occurrences` literally (`literal`: each occurrence's literal template),
/// replayed from the patterns they were in `before` the corrections.
pub fn literal_evidence<P, O>(
    occurrences: &[Occurrence<P, O>],
    literal: &[Template],
    before: &[P],
    corrections: &[Correction<P>],
) -> LiteralEvidence
where
    P: Clone + Ord + Hash,
{
    let replay = |_: &[Template], before: &[usize]| split_by_literal(before, literal, &BTreeSet::new());
    let mut evidence = LiteralEvidence::default();
    for correction in corrections {
        let one = verdict_of(occurrences, before, std::slice::from_ref(correction), replay);
        evidence.agreeing += usize::from(one.replay.kept > one.before.kept);
        evidence.against += usize::from(one.regressions > 0);
    }
    evidence.verdict = verdict_of(occurrences, before, corrections, replay);
    evidence
}

/// `changes` (a re-mining plan) without the moves that would merge
/// messages quoting different names into one group, for a project read
/// literally: Brain sees many names in one position and calls it a
/// variable, which is what the project's people said it is not. The moves
/// kept are renumbered into one plan.
pub fn keeping_names<P, O>(changes: &[Change<P, O>], occurrences: &[Occurrence<P, O>]) -> Vec<Change<P, O>>
where
    P: Clone + Eq + Hash,
    O: Clone + Eq + Hash,
{
    let mut kept = Vec::new();
    for steps in moves(changes) {
        if joins_names(&steps, occurrences) {
            continue;
        }
        let offset = kept.len();
        let shifted = |target: &Target<P>| match target {
            Target::SplitOf(step) => Target::SplitOf(step + offset),
            Target::Pattern(pattern) => Target::Pattern(pattern.clone()),
        };
        for step in steps {
            kept.push(match step {
                Change::Merge { into, sources, template } => {
                    Change::Merge { into: shifted(&into), sources: sources.iter().map(shifted).collect(), template }
                }
                split @ Change::Split { .. } => split,
            });
        }
    }
    kept
}

/// Whether a move's merge puts occurrences quoting two different names in
/// one position of its template's wildcards.
fn joins_names<P, O>(steps: &[Change<P, O>], occurrences: &[Occurrence<P, O>]) -> bool
where
    P: Eq + Hash,
    O: Eq + Hash,
{
    let Some(Change::Merge { into, sources, template }) = steps.last() else { return false };
    let mut members: HashSet<&O> = HashSet::new();
    let mut patterns: HashSet<&P> = HashSet::new();
    for target in std::iter::once(into).chain(sources) {
        match target {
            Target::Pattern(pattern) => {
                patterns.insert(pattern);
            }
            Target::SplitOf(step) => {
                if let Some(Change::Split { occurrences: moved, .. }) = steps.get(*step) {
                    members.extend(moved);
                }
            }
        }
    }
    let merged = occurrences
        .iter()
        .filter(|occurrence| patterns.contains(&occurrence.pattern) || members.contains(&occurrence.id))
        .filter(|occurrence| occurrence.template.tokens.len() == template.tokens.len());
    let mut names: HashMap<usize, &str> = HashMap::new();
    for occurrence in merged {
        for (position, token) in occurrence.template.tokens.iter().enumerate() {
            if template.tokens[position] != WILDCARD || !is_quoted(token) {
                continue;
            }
            if *names.entry(position).or_insert(token) != token.as_str() {
                return true;
            }
        }
    }
    false
}

/// A quoted value kept whole (`'reproduce_app'`, or `('reproduce_app'),`
/// with the punctuation around it).
fn is_quoted(token: &str) -> bool {
    let token = token.trim_matches(|c: char| matches!(c, ',' | '.' | ';' | ':' | '(' | ')' | '[' | ']'));
    let mut chars = token.chars();
    match (chars.next(), chars.next_back()) {
        (Some(open), Some(close)) => open == close && matches!(open, '\'' | '"' | '`'),
        _ => false,
    }
}

#[cfg(test)]
mod tests;
