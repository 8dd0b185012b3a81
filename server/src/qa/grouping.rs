//! Which pattern a normalized message joins.
//!
//! The candidates are the live patterns with the message's route (same
//! length and first tokens, see `Template::route`). The most similar wins;
//! equally similar templates go to the most specific (fewest wildcards). A
//! message joins it when the similarity reaches the threshold, otherwise it
//! starts a new candidate pattern.

use super::template::Template;

/// The default share of positions a message must fit to join a pattern.
pub const DEFAULT_SIMILARITY_THRESHOLD: f64 = 0.85;

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
        if similarity < threshold {
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

#[cfg(test)]
mod tests;
