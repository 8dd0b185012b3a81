//! Group accuracy as in logpai/logparser's evaluator (Zhu et al., ICSE-SEIP
//! 2019): a message counts when the group it was put in has exactly the
//! members of its true group.

use std::collections::HashMap;
use std::hash::Hash;

/// The share of messages whose predicted group is exactly their true group.
pub fn group_accuracy<P: Eq + Hash, T: Eq + Hash>(predicted: &[P], truth: &[T]) -> f64 {
    assert_eq!(predicted.len(), truth.len(), "one prediction per message");
    if truth.is_empty() {
        return 1.0;
    }
    let mut true_sizes: HashMap<&T, usize> = HashMap::new();
    for event in truth {
        *true_sizes.entry(event).or_default() += 1;
    }
    let mut clusters: HashMap<&P, Vec<usize>> = HashMap::new();
    for (line, group) in predicted.iter().enumerate() {
        clusters.entry(group).or_default().push(line);
    }
    let correct: usize = clusters
        .values()
        .filter(|lines| {
            let event = &truth[lines[0]];
            lines.iter().all(|line| &truth[*line] == event) && true_sizes[event] == lines.len()
        })
        .map(Vec::len)
        .sum();
    correct as f64 / truth.len() as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_counts_only_when_its_group_is_exact() {
        // E1 = {0, 1} exact; E2 = {2, 3} split; {4} merged with 3 under "c".
        let accuracy = group_accuracy(&["a", "a", "b", "c", "c"], &["E1", "E1", "E2", "E2", "E3"]);
        assert_eq!(accuracy, 0.4);
    }
}
