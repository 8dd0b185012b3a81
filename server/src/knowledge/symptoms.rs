//! Symptoms: the error messages an entry is known by, and how a pasted error
//! message is matched against them.
//!
//! Both sides are normalized as QA normalizes a failure's messages into
//! templates ([`crate::qa::template::Template`]): paths, numbers, ids,
//! quoted values and URLs become one wildcard, so the same error from
//! another machine, file or line reads the same. Tokens are then lowercased
//! and stripped of the punctuation around them (`TS2307:` is `ts2307`).
//!
//! The similarity of a symptom to a message is how much of the symptom the
//! message holds: one minus the fewest token edits (insert, delete,
//! substitute) that turn the symptom into some stretch of the message,
//! over the symptom's length (approximate substring matching, Sellers
//! 1980). A pasted message is usually longer than the symptom it shows (a
//! prefix like `error:`, the rest of a stack trace): those extra tokens
//! cost nothing. A message that holds only part of the symptom scores that
//! part.

use crate::qa::template::{Template, WILDCARD};

/// Symptoms shorter than this match too much to say anything.
pub const MIN_TOKENS: usize = 2;
/// A message holding less of a symptom than this does not show it.
pub const MIN_SIMILARITY: f64 = 0.6;
/// A symptom's first tokens are enough to tell it; longer ones are cut.
pub const MAX_TOKENS: usize = 64;

/// A message as comparable tokens.
pub fn tokens(message: &str) -> Vec<String> {
    Template::of(message)
        .tokens
        .iter()
        .filter_map(|token| {
            if token == WILDCARD {
                return Some(WILDCARD.to_owned());
            }
            let word = token.trim_matches(|c: char| !c.is_alphanumeric()).to_lowercase();
            (!word.is_empty()).then_some(word)
        })
        .take(MAX_TOKENS)
        .collect()
}

/// The words of a token list that can find it in an index (the wildcards
/// cannot).
pub fn words(tokens: &[String]) -> impl Iterator<Item = &str> {
    tokens.iter().map(String::as_str).filter(|token| *token != WILDCARD)
}

/// How much of `symptom` the message `message` holds, in 0..=1 (both as
/// [`tokens`]); 0 for a symptom too short to tell.
pub fn similarity(symptom: &[String], message: &[String]) -> f64 {
    if symptom.len() < MIN_TOKENS {
        return 0.0;
    }
    // previous[j]: the fewest edits turning the symptom's first i tokens
    // into a stretch of the message ending at its j-th token. Row 0 is all
    // zeros: the stretch may start anywhere in the message.
    let mut previous = vec![0usize; message.len() + 1];
    let mut current = vec![0usize; message.len() + 1];
    for (i, wanted) in symptom.iter().enumerate() {
        current[0] = i + 1;
        for (j, seen) in message.iter().enumerate() {
            let substitute = previous[j] + usize::from(wanted != seen);
            current[j + 1] = substitute.min(previous[j + 1] + 1).min(current[j] + 1);
        }
        std::mem::swap(&mut previous, &mut current);
    }
    // The stretch may end anywhere too.
    let edits = previous.iter().copied().min().unwrap_or(symptom.len());
    1.0 - edits.min(symptom.len()) as f64 / symptom.len() as f64
}

/// The best-matching of `symptoms` for `message`: its index and similarity.
pub fn best(symptoms: &[Vec<String>], message: &[String]) -> Option<(usize, f64)> {
    symptoms
        .iter()
        .enumerate()
        .map(|(index, symptom)| (index, similarity(symptom, message)))
        .max_by(|a, b| a.1.total_cmp(&b.1).then(b.0.cmp(&a.0)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_numbers_ids_and_quoted_values_do_not_matter() {
        assert_eq!(
            tokens("ENOENT: no such file or directory, open '/home/ci/app/config.json'"),
            tokens("ENOENT: no such file or directory, open '/srv/other/settings.yaml'")
        );
        assert_eq!(tokens("TS2307: Cannot find module"), ["ts2307", "cannot", "find", "module"]);
        assert_eq!(
            tokens("connection refused at 10.0.0.12:5432 after 30s"),
            ["connection", "refused", "at", WILDCARD, "after", WILDCARD]
        );
    }

    #[test]
    fn a_symptom_inside_a_longer_message_matches_fully() {
        let symptom = tokens("TS2307: Cannot find module 'x'");
        let pasted = tokens(
            "src/app.ts(3,21): error TS2307: Cannot find module '@/components/Button' or its corresponding type \
             declarations.",
        );
        assert_eq!(similarity(&symptom, &pasted), 1.0);
        let other = tokens("TS2322: Type 'string' is not assignable to type 'number'.");
        assert!(similarity(&symptom, &other) < 0.5, "{}", similarity(&symptom, &other));
    }

    #[test]
    fn one_word_off_costs_one_edit_of_the_symptom() {
        let symptom = tokens("permission denied for table users");
        let message = tokens("ERROR: permission denied for relation users");
        assert!((similarity(&symptom, &message) - 0.8).abs() < 1e-12);
        // Half of the symptom, half the similarity.
        let half = tokens("permission denied");
        let long = tokens("permission denied while reading the table");
        assert_eq!(similarity(&tokens("reading the table users"), &long), 0.75);
        assert_eq!(similarity(&half, &long), 1.0);
    }

    #[test]
    fn too_short_or_empty_symptoms_say_nothing() {
        assert_eq!(similarity(&tokens("error"), &tokens("error: anything")), 0.0);
        assert_eq!(similarity(&[], &tokens("error")), 0.0);
        assert_eq!(similarity(&tokens("cannot connect"), &[]), 0.0);
        assert_eq!(best(&[], &tokens("x y")), None);
        let symptoms = vec![tokens("cannot connect to the database"), tokens("disk full")];
        assert_eq!(best(&symptoms, &tokens("fatal: disk full")), Some((1, 1.0)));
    }
}
