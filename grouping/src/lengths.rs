//! Messages of one kind whose length varies: a test name with spaces, a
//! list that may be empty. Captures (`matching`) and Brain (`brain`) only
//! compare messages of one length, so such a kind ends in one pattern per
//! length. After re-mining's own changes, patterns of different lengths
//! whose constants are the same are offered as merges, and the criterion
//! (`criterion`, which codes a group of several lengths aligned on the
//! tokens its messages share) keeps those that code the project's messages
//! shorter.
//!
//! A pattern's constants are the tokens all its messages hold in order,
//! without the masked variables (`criterion::constants`). Only variables
//! may differ in length between messages of one kind: a word that one
//! pattern always has and the other never (`user=root` at the end, `lib`
//! in `(lib test)`, `opened` or `closed`) tells two kinds apart, as a
//! position of few distinct tokens does in Brain. So a pattern of one
//! message, all of whose words are its constants, joins nothing here; it
//! first needs company of its own length, which Brain gives it. A
//! `key=value` token counts by its key: `user=` stays a constant, and a
//! message with it is not one without it, whatever user it names.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::criterion::{Code, constants};
use crate::remine::{BITS_SLACK, Change, Judged, Occurrence, Target};
use crate::template::Template;

/// The merges of patterns of different lengths with the same constants
/// that shorten the description of `occurrences`' groups, in the order to
/// make them. A pattern in `pinned` (a person merged or split it) is never
/// merged.
pub fn merges<P, O>(occurrences: &[Occurrence<P, O>], pinned: &BTreeSet<P>) -> Judged<P, O>
where
    P: Clone + Ord,
{
    let code = Code::of(occurrences.iter().map(|occurrence| &occurrence.template));
    let mut members: BTreeMap<&P, Vec<&Template>> = BTreeMap::new();
    for occurrence in occurrences {
        members.entry(&occurrence.pattern).or_default().push(&occurrence.template);
    }
    let mut bits_before = 0.0;
    let mut bits_after = 0.0;
    let mut by_constants: BTreeMap<Vec<String>, Vec<Pattern<'_, P>>> = BTreeMap::new();
    for (id, group) in members {
        let bits = code.group(&group);
        bits_before += bits;
        let keyed: Vec<Template> = group.iter().map(|template| keyed(template)).collect();
        let constants: Vec<String> =
            constants(&keyed.iter().collect::<Vec<_>>()).into_iter().map(str::to_owned).collect();
        if pinned.contains(id) || constants.is_empty() {
            bits_after += bits;
            continue;
        }
        by_constants.entry(constants).or_default().push(Pattern { id, group, bits });
    }
    let mut changes = Vec::new();
    let mut rejected = 0;
    for mut kind in by_constants.into_values() {
        // The largest pattern is the home; the others join it one by one,
        // largest first, when they lower the bits.
        kind.sort_by(|left, right| right.group.len().cmp(&left.group.len()).then(left.id.cmp(right.id)));
        let mut kind = kind.into_iter();
        let Pattern { id: home, group: mut joined, mut bits } = kind.next().expect("a kind has a pattern");
        let mut joined_lengths = lengths(&joined);
        for pattern in kind {
            let pattern_lengths = lengths(&pattern.group);
            if pattern_lengths == joined_lengths {
                // Same lengths: Brain's business, and it kept them apart.
                bits_after += pattern.bits;
                continue;
            }
            let together: Vec<&Template> = joined.iter().chain(&pattern.group).copied().collect();
            let together_bits = code.group(&together);
            if together_bits >= bits + pattern.bits - BITS_SLACK {
                rejected += 1;
                bits_after += pattern.bits;
                continue;
            }
            changes.push(Change::Merge {
                into: Target::Pattern(home.clone()),
                sources: vec![Target::Pattern(pattern.id.clone())],
                template: most_common(&pattern.group).clone(),
            });
            (joined, bits) = (together, together_bits);
            joined_lengths.extend(pattern_lengths);
        }
        bits_after += bits;
    }
    Judged { changes, rejected, bits_before, bits_after }
}

/// A pattern as this reads it: its recent messages and their bits alone.
struct Pattern<'a, P> {
    id: &'a P,
    group: Vec<&'a Template>,
    bits: f64,
}

/// The lengths a group's messages have.
fn lengths(group: &[&Template]) -> BTreeSet<usize> {
    group.iter().map(|template| template.tokens.len()).collect()
}

/// A message with each `key=value` token read as its key, `key=`: the key
/// is a constant even where the value varies (`user=root`, `user=admin`),
/// and two messages that differ by a key are two kinds.
fn keyed(template: &Template) -> Template {
    let key = |token: &String| match token.split_once('=') {
        Some((key, _)) if !key.is_empty() && key.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '-') => {
            format!("{key}=")
        }
        _ => token.clone(),
    };
    Template::from_tokens(template.tokens.iter().map(key).collect())
}

/// The template most of a group's messages have (the first on a tie).
fn most_common<'a>(group: &[&'a Template]) -> &'a Template {
    let mut counts: HashMap<&[String], (usize, usize)> = HashMap::new();
    for (index, template) in group.iter().enumerate() {
        counts.entry(template.tokens.as_slice()).or_insert((0, index)).0 += 1;
    }
    let (_, (_, first)) = counts
        .into_iter()
        .max_by_key(|(_, (times, first))| (*times, std::cmp::Reverse(*first)))
        .expect("a group has messages");
    group[first]
}

#[cfg(test)]
mod tests;
