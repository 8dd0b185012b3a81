//! Whether a change makes a project's groups better, judged from the
//! project's own messages alone: the minimum description length principle
//! (Rissanen 1978; Grünwald, "The Minimum Description Length Principle",
//! 2007). A grouping is a two-part code of the messages, and the better
//! grouping is the one that codes them in fewer bits.
//!
//! The code of one group of messages (templates):
//! - which group each message is in: `-log2(n_g / N)` bits a message;
//! - for messages of one length, each position: the distinct tokens seen
//!   there spelled once (`log2 V` bits each, V the vocabulary of all the
//!   messages) and each message's token coded by its frequency at that
//!   position (the position's entropy), or, when that is shorter (nearly
//!   every token differs), each message's token spelled; a bit says which;
//! - a group whose messages differ in length says which length each has,
//!   or, when shorter, aligns them on the tokens they all share
//!   ([`Alignment`]) and codes what each has between those.
//!
//! What this rewards: a token that is constant in a group costs its
//! spelling once, however many messages share it; a token that varies
//! costs bits in every message. So two groups that differ in one position
//! merge (their shared tokens are spelled once), and a group that lumps
//! two kinds differing in several positions at once splits (each message
//! would pay for every difference, where naming its group pays once).
//!
//! The criterion has no weight fitted to any data: the one constant is the
//! spelling cost, `log2 V`, the uniform code over the vocabulary, and the
//! development sets group the same for spellings from 4 to 24 bits
//! (docs/EVALUATION.md).

use std::collections::{BTreeMap, HashMap};

use crate::template::{Template, WILDCARD};

/// The description length, in bits, of the groups of one set of messages.
#[derive(Debug, Clone, Copy)]
pub struct Code {
    /// Messages in the whole set (`N`).
    messages: usize,
    /// Bits to spell one distinct token (`log2 V`).
    spelling: f64,
}

impl Code {
    /// The code for `templates`, all the messages the groups are made of.
    pub fn of<'a>(templates: impl IntoIterator<Item = &'a Template>) -> Self {
        let mut vocabulary: std::collections::HashSet<&str> = std::collections::HashSet::new();
        let mut messages = 0;
        for template in templates {
            messages += 1;
            vocabulary.extend(template.tokens.iter().map(String::as_str));
        }
        Self { messages, spelling: (vocabulary.len().max(2) as f64).log2() }
    }

    /// Bits to code the messages of one group, which group each is in
    /// included. A group of several lengths takes the shorter of two codes
    /// (and a bit to say which): each length apart, position by position,
    /// or every message aligned on the tokens they all hold ([`aligned`]).
    pub fn group(&self, members: &[&Template]) -> f64 {
        if members.is_empty() {
            return 0.0;
        }
        let size = members.len() as f64;
        let which = size * (self.messages as f64 / size).log2();
        let mut by_length: BTreeMap<usize, Vec<&Template>> = BTreeMap::new();
        for member in members {
            by_length.entry(member.tokens.len()).or_default().push(member);
        }
        let mut by_position: f64 = by_length.values().map(|part| self.positions(part)).sum();
        if by_length.len() == 1 {
            return which + by_position;
        }
        by_position += by_length.values().map(|part| entropy_bits(part.len(), size)).sum::<f64>();
        which + 1.0 + by_position.min(self.aligned(members))
    }

    /// Messages of one length, position by position.
    fn positions(&self, part: &[&Template]) -> f64 {
        (0..part[0].tokens.len())
            .map(|position| {
                let mut seen: HashMap<&str, usize> = HashMap::new();
                for member in part {
                    *seen.entry(member.tokens[position].as_str()).or_default() += 1;
                }
                self.tokens(&seen)
            })
            .sum()
    }

    /// Messages of several lengths aligned on their skeleton
    /// ([`Alignment`]): the skeleton's tokens spelled once, then each gap:
    /// how many tokens each message has there, and which; a gap's tokens
    /// are coded together, whatever their place in it.
    fn aligned(&self, members: &[&Template]) -> f64 {
        let alignment = Alignment::of(members);
        let size = members.len() as f64;
        let mut bits = alignment.skeleton.len() as f64 * (1.0 + self.spelling);
        for (lengths, tokens) in alignment.lengths.iter().zip(&alignment.tokens) {
            // Whether the gap is empty in every message.
            bits += 1.0;
            if tokens.is_empty() {
                continue;
            }
            bits += lengths.keys().map(|length| elias_gamma(length + 1)).sum::<f64>();
            bits += lengths.values().map(|times| entropy_bits(*times, size)).sum::<f64>();
            bits += self.tokens(tokens);
        }
        bits
    }

    /// Bits for the tokens seen at one place, with how often each: one bit
    /// for which of two codes, then either the distinct tokens spelled
    /// once and each occurrence coded by its frequency, or every
    /// occurrence spelled where it is (shorter when nearly all differ: a
    /// dictionary of names seen once only adds their index to them).
    fn tokens(&self, seen: &HashMap<&str, usize>) -> f64 {
        let occurrences: usize = seen.values().sum();
        let dictionary = seen.len() as f64 * self.spelling
            + seen.values().map(|times| entropy_bits(*times, occurrences as f64)).sum::<f64>();
        1.0 + dictionary.min(occurrences as f64 * self.spelling)
    }
}

/// Messages of several lengths aligned on their skeleton: the tokens
/// every one holds in the same order (their longest common subsequence,
/// found one message after another). Between the skeleton's tokens are its
/// gaps, where each message has a run of tokens of its own, maybe none.
/// This is how a test name with spaces, or a list that may be empty, is one
/// kind of message: its gap varies in length, the skeleton around it does
/// not.
struct Alignment<'a> {
    skeleton: Vec<&'a str>,
    /// Per gap: how many messages have a run of each length there.
    lengths: Vec<BTreeMap<usize, usize>>,
    /// Per gap: how often each token occurs in its runs.
    tokens: Vec<HashMap<&'a str, usize>>,
}

impl<'a> Alignment<'a> {
    fn of(members: &[&'a Template]) -> Self {
        let sequences = distinct_sequences(members);
        let skeleton = skeleton(&sequences);
        let gaps = skeleton.len() + 1;
        let mut alignment = Self { lengths: vec![BTreeMap::new(); gaps], tokens: vec![HashMap::new(); gaps], skeleton };
        for (sequence, times) in sequences {
            // The leftmost placement of the skeleton: the code says each
            // gap's length, so any placement decodes.
            let (mut gap, mut start) = (0, 0);
            for (index, token) in sequence.iter().enumerate() {
                if alignment.skeleton.get(gap) == Some(&token.as_str()) {
                    alignment.gap(gap, &sequence[start..index], times);
                    (gap, start) = (gap + 1, index + 1);
                }
            }
            debug_assert_eq!(gap, alignment.skeleton.len(), "the skeleton is a subsequence of every message");
            alignment.gap(gap, &sequence[start..], times);
        }
        alignment
    }

    fn gap(&mut self, gap: usize, run: &'a [String], times: usize) {
        *self.lengths[gap].entry(run.len()).or_default() += times;
        for token in run {
            *self.tokens[gap].entry(token.as_str()).or_default() += times;
        }
    }
}

/// The constants of `members`: the tokens of their skeleton ([`Alignment`])
/// that are not themselves a masked variable.
pub(crate) fn constants<'a>(members: &[&'a Template]) -> Vec<&'a str> {
    let mut constants = skeleton(&distinct_sequences(members));
    constants.retain(|token| *token != WILDCARD);
    constants
}

/// Each distinct message of `members` with how many times it occurs, the
/// shortest first.
fn distinct_sequences<'a>(members: &[&'a Template]) -> Vec<(&'a [String], usize)> {
    let mut distinct: BTreeMap<&[String], usize> = BTreeMap::new();
    for member in members {
        *distinct.entry(member.tokens.as_slice()).or_default() += 1;
    }
    let mut sequences: Vec<(&[String], usize)> = distinct.into_iter().collect();
    sequences.sort_by_key(|(tokens, _)| tokens.len());
    sequences
}

/// The tokens every sequence holds in the same order: their longest common
/// subsequence, taken one sequence after another from the shortest.
fn skeleton<'a>(sequences: &[(&'a [String], usize)]) -> Vec<&'a str> {
    let Some(((first, _), rest)) = sequences.split_first() else { return Vec::new() };
    let mut skeleton: Vec<&str> = first.iter().map(String::as_str).collect();
    for (tokens, _) in rest {
        skeleton = longest_common_subsequence(&skeleton, tokens);
    }
    skeleton
}

/// What `times` messages out of `of` cost when each names its share:
/// `times * log2(of / times)`.
fn entropy_bits(times: usize, of: f64) -> f64 {
    let times = times as f64;
    times * (of / times).log2()
}

/// Bits of Elias's gamma code for `n` (n ≥ 1), a code for integers with
/// no bound known in advance (Elias 1975).
fn elias_gamma(n: usize) -> f64 {
    f64::from(2 * n.max(1).ilog2() + 1)
}

/// The longest common subsequence of `left` and `right` (the classic
/// dynamic programme; messages are at most `MAX_TOKENS` long).
fn longest_common_subsequence<'a>(left: &[&'a str], right: &[String]) -> Vec<&'a str> {
    let columns = right.len() + 1;
    let mut table = vec![0_u16; (left.len() + 1) * columns];
    for i in (0..left.len()).rev() {
        for j in (0..right.len()).rev() {
            table[i * columns + j] = if left[i] == right[j] {
                table[(i + 1) * columns + j + 1] + 1
            } else {
                table[(i + 1) * columns + j].max(table[i * columns + j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut common = Vec::with_capacity(usize::from(table[0]));
    while i < left.len() && j < right.len() {
        if left[i] == right[j] {
            common.push(left[i]);
            (i, j) = (i + 1, j + 1);
        } else if table[(i + 1) * columns + j] >= table[i * columns + j + 1] {
            i += 1;
        } else {
            j += 1;
        }
    }
    common
}

#[cfg(test)]
mod tests {
    use super::*;

    fn templates(messages: &[&str]) -> Vec<Template> {
        messages.iter().map(|message| Template::of(message)).collect()
    }

    fn cost(code: &Code, groups: &[&[Template]]) -> f64 {
        groups.iter().map(|group| code.group(&group.iter().collect::<Vec<_>>())).sum()
    }

    #[test]
    fn groups_that_differ_in_one_token_code_shorter_as_one() {
        let closed = templates(&["connection closed by peer alpha", "connection closed by peer alpha"]);
        let reset = templates(&["connection closed by peer beta", "connection closed by peer beta"]);
        let code = Code::of(closed.iter().chain(&reset));
        let together: Vec<Template> = closed.iter().chain(&reset).cloned().collect();
        assert!(cost(&code, &[&together]) < cost(&code, &[&closed, &reset]));
    }

    #[test]
    fn a_group_of_two_kinds_that_differ_everywhere_codes_shorter_apart() {
        let disk = templates(&["disk quota exceeded on volume"; 20]);
        let auth = templates(&["token signature expired for user"; 20]);
        let code = Code::of(disk.iter().chain(&auth));
        let lumped: Vec<Template> = disk.iter().chain(&auth).cloned().collect();
        assert!(cost(&code, &[&disk, &auth]) < cost(&code, &[&lumped]));
    }

    #[test]
    fn a_list_whose_length_varies_codes_shorter_aligned_than_by_length() {
        let lists = templates(&[
            "cannot delete blocks blk_1",
            "cannot delete blocks blk_2 blk_3",
            "cannot delete blocks blk_4 blk_5 blk_6",
            "cannot delete blocks blk_7 blk_8 blk_9 blk_10",
        ]);
        let code = Code::of(&lists);
        let members: Vec<&Template> = lists.iter().collect();
        let by_length: f64 = members.iter().map(|member| code.positions(&[member])).sum();
        assert!(code.aligned(&members) < by_length, "{} >= {by_length}", code.aligned(&members));
        assert_eq!(constants(&members), ["cannot", "delete", "blocks"]);
    }

    #[test]
    fn no_messages_cost_nothing_and_lengths_are_told_apart() {
        let code = Code::of(&templates(&["a b", "a b c"]));
        assert_eq!(code.group(&[]), 0.0);
        let [short, long] = [Template::of("a b"), Template::of("a b c")];
        let mixed = code.group(&[&short, &long]);
        assert!(mixed > code.group(&[&short]) && mixed.is_finite(), "{mixed}");
    }
}
