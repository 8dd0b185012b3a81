//! Brain: which tokens of a message are constant, decided by frequency
//! (Yu et al., "Brain: Log Parsing with Bidirectional Parallel Tree", IEEE
//! TSC 2023).
//!
//! Messages of one length are compared position by position. Each token
//! counts how many messages hold it at its position; the tokens of a message
//! that share one count form word combinations, and the largest of them
//! (the most frequent on a tie), its **longest common pattern**, is what the
//! message surely has in common with others: messages with the same longest
//! common pattern start one group. Within a group, a position that holds
//! one token everywhere is constant too (the tree's parent direction); the
//! other positions are read from the fewest distinct tokens up (its child
//! direction): a position with fewer distinct tokens than the variable
//! threshold splits the group by its token, one with as many or more is a
//! variable. No rule depends on the length of a message, and nothing on the
//! format of a log: the masks (`template`) are generic.

use std::collections::HashMap;

use crate::template::{Template, WILDCARD};

/// Brain's one setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BrainSettings {
    /// A position of a group with at least this many distinct tokens is a
    /// variable; fewer, and the group splits by it.
    pub variable_threshold: usize,
}

impl Default for BrainSettings {
    /// Chosen by `lore eval grouping --leave-one-out` on every development
    /// set together (docs/EVALUATION.md).
    fn default() -> Self {
        Self { variable_threshold: 3 }
    }
}

/// One mined group: its members (indexes into the messages) and its
/// template, the positions that are not constant as wildcards.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MinedGroup {
    pub members: Vec<usize>,
    pub template: Template,
}

/// Groups `messages`: every message is a member of exactly one group.
pub fn mine(messages: &[Template], settings: &BrainSettings) -> Vec<MinedGroup> {
    let mut by_length: HashMap<usize, Vec<usize>> = HashMap::new();
    for (index, message) in messages.iter().enumerate() {
        by_length.entry(message.tokens.len()).or_default().push(index);
    }
    let mut lengths: Vec<usize> = by_length.keys().copied().collect();
    lengths.sort_unstable();
    let mut groups = Vec::new();
    for length in lengths {
        let members = &by_length[&length];
        for initial in initial_groups(messages, members) {
            split(messages, initial, settings, &mut groups);
        }
    }
    groups
}

/// Each message's group: the index of its group in what [`mine`] returns.
pub fn group_of(messages: &[Template], settings: &BrainSettings) -> Vec<usize> {
    let mut group_of = vec![usize::MAX; messages.len()];
    for (group, mined) in mine(messages, settings).into_iter().enumerate() {
        for member in mined.members {
            group_of[member] = group;
        }
    }
    debug_assert!(group_of.iter().all(|group| *group != usize::MAX), "every message has a group");
    group_of
}

/// The messages of one length, grouped by their longest common pattern.
fn initial_groups(messages: &[Template], members: &[usize]) -> Vec<Vec<usize>> {
    let mut counts: HashMap<(usize, &str), usize> = HashMap::new();
    for &member in members {
        for (position, token) in messages[member].tokens.iter().enumerate() {
            *counts.entry((position, token.as_str())).or_default() += 1;
        }
    }
    // Keyed by the pattern's positions and tokens; kept in first-seen
    // order so that mining is deterministic.
    let mut order: Vec<Vec<(usize, &str)>> = Vec::new();
    let mut groups: HashMap<Vec<(usize, &str)>, Vec<usize>> = HashMap::new();
    for &member in members {
        let tokens = &messages[member].tokens;
        let mut by_count: HashMap<usize, Vec<usize>> = HashMap::new();
        for (position, token) in tokens.iter().enumerate() {
            by_count.entry(counts[&(position, token.as_str())]).or_default().push(position);
        }
        let pattern = by_count
            .iter()
            .max_by_key(|(count, positions)| (positions.len(), **count))
            .map(|(_, positions)| {
                let mut pattern: Vec<(usize, &str)> =
                    positions.iter().map(|position| (*position, tokens[*position].as_str())).collect();
                pattern.sort_unstable();
                pattern
            })
            .unwrap_or_default();
        match groups.get_mut(&pattern) {
            Some(group) => group.push(member),
            None => {
                order.push(pattern.clone());
                groups.insert(pattern, vec![member]);
            }
        }
    }
    order.into_iter().map(|pattern| groups.remove(&pattern).expect("every pattern has its group")).collect()
}

/// Splits a group down its positions of few distinct tokens, and adds the
/// leaves to `out`.
fn split(messages: &[Template], members: Vec<usize>, settings: &BrainSettings, out: &mut Vec<MinedGroup>) {
    let length = messages[members[0]].tokens.len();
    let distinct = |position: usize| {
        let mut tokens: Vec<&str> = members.iter().map(|member| messages[*member].tokens[position].as_str()).collect();
        tokens.sort_unstable();
        tokens.dedup();
        tokens.len()
    };
    let mut columns: Vec<(usize, usize)> = (0..length).map(|position| (distinct(position), position)).collect();
    columns.sort_unstable();
    let splitting = columns.iter().find(|(count, _)| *count > 1 && *count < settings.variable_threshold);
    if let Some(&(_, position)) = splitting {
        let mut children: Vec<(String, Vec<usize>)> = Vec::new();
        for member in members {
            let token = &messages[member].tokens[position];
            match children.iter_mut().find(|(value, _)| value == token) {
                Some((_, child)) => child.push(member),
                None => children.push((token.clone(), vec![member])),
            }
        }
        for (_, child) in children {
            split(messages, child, settings, out);
        }
        return;
    }
    let first = &messages[members[0]].tokens;
    let tokens = (0..length)
        .map(|position| if distinct(position) == 1 { first[position].clone() } else { WILDCARD.to_owned() })
        .collect();
    out.push(MinedGroup { members, template: Template::from_tokens(tokens) });
}

#[cfg(test)]
pub(crate) mod tests;
