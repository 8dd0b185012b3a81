//! Whether a change makes a project's groups better, judged from the
//! project's own messages alone: the minimum description length principle
//! (Rissanen 1978; Grünwald, "The Minimum Description Length Principle",
//! 2007). A grouping is a two-part code of the messages, and the better
//! grouping is the one that codes them in fewer bits.
//!
//! The code of one group of messages (templates):
//! - which group each message is in: `-log2(n_g / N)` bits a message;
//! - for messages of one length, each position: one bit for whether it
//!   varies, the distinct tokens seen there spelled once (`log2 V` bits
//!   each, V the vocabulary of all the messages), and each message's token
//!   coded by its frequency at that position (the position's entropy);
//! - a group whose messages differ in length says which length each has.
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

use std::collections::HashMap;

use crate::template::Template;

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
    /// included.
    pub fn group(&self, members: &[&Template]) -> f64 {
        if members.is_empty() {
            return 0.0;
        }
        let size = members.len() as f64;
        let mut bits = size * (self.messages as f64 / size).log2();
        let mut by_length: HashMap<usize, Vec<&Template>> = HashMap::new();
        for member in members {
            by_length.entry(member.tokens.len()).or_default().push(member);
        }
        if by_length.len() > 1 {
            bits += by_length.values().map(|part| entropy_bits(part.len(), size)).sum::<f64>();
        }
        for part in by_length.values() {
            let count = part.len() as f64;
            for position in 0..part[0].tokens.len() {
                let mut seen: HashMap<&str, usize> = HashMap::new();
                for member in part {
                    *seen.entry(member.tokens[position].as_str()).or_default() += 1;
                }
                bits += 1.0 + seen.len() as f64 * self.spelling;
                bits += seen.values().map(|times| entropy_bits(*times, count)).sum::<f64>();
            }
        }
        bits
    }
}

/// What `times` messages out of `of` cost when each names its share:
/// `times * log2(of / times)`.
fn entropy_bits(times: usize, of: f64) -> f64 {
    let times = times as f64;
    times * (of / times).log2()
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
    fn no_messages_cost_nothing_and_lengths_are_told_apart() {
        let code = Code::of(&templates(&["a b", "a b c"]));
        assert_eq!(code.group(&[]), 0.0);
        let [short, long] = [Template::of("a b"), Template::of("a b c")];
        let mixed = code.group(&[&short, &long]);
        assert!(mixed > code.group(&[&short]) && mixed.is_finite(), "{mixed}");
    }
}
