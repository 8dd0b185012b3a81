//! Which pattern a normalized message joins.
//!
//! The candidates are the live patterns with the message's route (same
//! length and first tokens, see `Template::route`). The most similar wins;
//! equally similar templates go to the most specific (fewest wildcards). A
//! message joins it when the similarity reaches the threshold, or, for a
//! short template, when it differs in one position only; otherwise it
//! starts a new candidate pattern.

use std::collections::HashMap;

use crate::masks::Masks;
use crate::template::Template;

/// The default share of positions a message must fit to join a pattern.
pub const DEFAULT_SIMILARITY_THRESHOLD: f64 = 0.85;

/// Templates of this many tokens may differ from a message in one position
/// whatever the threshold. Below seven tokens a threshold of 0.85 asks every
/// position to fit, so a short message could never carry a variable its
/// normalization missed (a user or test name: `Invalid user webmaster from
/// <*>`); from four tokens on, the route's two and one more that fit are
/// evidence enough. Three-token messages stay exact: one word is a third.
pub const ONE_OFF_TOKENS: std::ops::RangeInclusive<usize> = 4..=6;

/// The threshold that asks every position to fit: no short template may
/// then differ in one position either (a project read literally).
pub const EXACT: f64 = 1.0;

/// The share of positions a message must fit to join a pattern of a
/// project read with `masks`: the configured threshold, or all of them
/// when the project is read literally.
pub fn threshold(masks: &Masks, configured: f64) -> f64 {
    if masks.reads_literally() { EXACT } else { configured }
}

/// Whether a message with `similarity` to a template of `length` tokens
/// joins it.
pub fn joins(similarity: f64, length: usize, threshold: f64) -> bool {
    similarity >= threshold || (threshold < EXACT && ONE_OFF_TOKENS.contains(&length) && one_off(similarity, length))
}

/// Whether all positions but one fit.
fn one_off(similarity: f64, length: usize) -> bool {
    (similarity * length as f64).round() as usize + 1 >= length
}

/// The best candidate for a message.
#[derive(Debug, Clone, PartialEq)]
pub struct Match<T> {
    pub candidate: T,
    pub similarity: f64,
}

/// The most similar candidate at or over `threshold`, if any.
pub fn best_match<'a, T>(
    message: &Template,
    candidates: impl IntoIterator<Item = (T, &'a Template)>,
    threshold: f64,
) -> Option<Match<T>> {
    let mut best: Option<(Match<T>, usize)> = None;
    for (candidate, template) in candidates {
        let similarity = template.similarity(message);
        if !joins(similarity, template.tokens.len(), threshold) {
            continue;
        }
        let wildcards = template.wildcards();
        let better = match &best {
            None => true,
            Some((current, current_wildcards)) => {
                similarity > current.similarity || (similarity == current.similarity && wildcards < *current_wildcards)
            }
        };
        if better {
            best = Some((Match { candidate, similarity }, wildcards));
        }
    }
    best.map(|(found, _)| found)
}

/// Online assignment without a database, as captures make it one message
/// after another: for the evaluation and the tests. Returns group numbers
/// from 1.
#[derive(Debug)]
pub struct OnlineGrouper {
    routes: HashMap<String, Vec<(usize, Template)>>,
    next: usize,
    threshold: f64,
}

impl OnlineGrouper {
    pub fn new(threshold: f64) -> Self {
        Self { routes: HashMap::new(), next: 0, threshold }
    }

    /// The group `message` joins, widening its template, or a new one.
    pub fn add(&mut self, message: &Template) -> usize {
        let bucket = self.routes.entry(message.route()).or_default();
        let candidates = bucket.iter().enumerate().map(|(index, (_, template))| (index, template));
        match best_match(message, candidates, self.threshold) {
            Some(Match { candidate, .. }) => {
                let (id, current) = &mut bucket[candidate];
                *current = current.generalize(message);
                *id
            }
            None => {
                self.next += 1;
                bucket.push((self.next, message.clone()));
                self.next
            }
        }
    }
}

impl OnlineGrouper {
    /// Each group's template as it stands, by group number.
    pub fn templates(&self) -> HashMap<usize, Template> {
        self.routes.values().flatten().map(|(id, template)| (*id, template.clone())).collect()
    }
}

impl Default for OnlineGrouper {
    fn default() -> Self {
        Self::new(DEFAULT_SIMILARITY_THRESHOLD)
    }
}

#[cfg(test)]
pub(crate) mod tests;
