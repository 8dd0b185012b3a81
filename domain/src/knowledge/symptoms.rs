//! Symptoms: the error messages an entry is known by, and how a pasted error
//! message is matched against them.
//!
//! Both sides are normalized as QA normalizes a failure's messages into
//! templates ([`lore_grouping::template::Template`]): paths, numbers, ids,
//! quoted values and URLs become one wildcard, so the same error from
//! another machine, file or line reads the same. What is left is cut into
//! lowercase words at any punctuation (`error[E0308]:` is `error e0308`),
//! and a dotted name is its last part (`java.lang.OutOfMemoryError` is
//! `outofmemoryerror`): a symptom written with or without a compiler's
//! prefix or a class's package is the same words, and an exception raised
//! through another library's wrapper costs one word, not one per package.
//!
//! One thing differs from QA's templates: quoted text of three words or
//! more is prose, not a value (`message: "Too many open files"`, Python's
//! `SSLError('... certificate verify failed ...')`). Its quotes are
//! dropped and its words kept, since an error wrapped in another's quotes
//! is still that error; a quoted name or a short value is still a wildcard.
//!
//! The similarity of a symptom to a message is how much of the symptom the
//! message holds: one minus the fewest token edits (insert, delete,
//! substitute) that turn the symptom into some stretch of the message,
//! over the symptom's length (approximate substring matching, Sellers
//! 1980). A pasted message is usually longer than the symptom it shows (a
//! prefix like `error:`, the rest of a stack trace): those extra tokens
//! cost nothing. A message that holds only part of the symptom scores that
//! part.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::{Captures, Regex};

use lore_grouping::template::{QUOTE_OPENER, Template, WILDCARD};

/// Quoted text with at least two spaces inside, opened where QA's templates
/// open a quoted value.
static QUOTED_PROSE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(r#"{QUOTE_OPENER}(?:'([^'\n]*[ \t][^'\n]*[ \t][^'\n]*)'|"([^"\n]*[ \t][^"\n]*[ \t][^"\n]*)")"#))
        .expect("valid regex")
});

/// Symptoms shorter than this match too much to say anything.
pub const MIN_TOKENS: usize = 2;
/// A message holding less of a symptom than this does not show it: one
/// word in four may differ, two in seven. At 0.6 the dev pairs showed
/// "No module named <*>" inside "no method named <*>"; the lowest true
/// match there is 0.75.
pub const MIN_SIMILARITY: f64 = 0.7;
/// A symptom's first tokens are enough to tell it; longer ones are cut.
pub const MAX_TOKENS: usize = 64;

/// A message as comparable tokens.
pub fn tokens(message: &str) -> Vec<String> {
    Template::of(&unquote_prose(message))
        .tokens
        .iter()
        .flat_map(|token| -> Vec<String> {
            if token == WILDCARD {
                return vec![WILDCARD.to_owned()];
            }
            token
                .split(|c: char| !c.is_alphanumeric() && c != '.')
                .filter_map(|word| word.rsplit('.').find(|segment| !segment.is_empty()))
                .map(str::to_lowercase)
                .collect()
        })
        .take(MAX_TOKENS)
        .collect()
}

fn unquote_prose(message: &str) -> Cow<'_, str> {
    QUOTED_PROSE.replace_all(message, |quoted: &Captures| {
        let inside = quoted.get(2).or_else(|| quoted.get(3)).map_or("", |inside| inside.as_str());
        format!("{} {inside} ", &quoted[1])
    })
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
    fn quoted_prose_keeps_its_words_and_a_quoted_value_does_not() {
        assert_eq!(
            tokens(r#"Os { code: 24, message: "Too many open files" }"#),
            ["os", "code", WILDCARD, "message", "too", "many", "open", "files"]
        );
        assert_eq!(tokens("may require 'docker login'"), ["may", "require", WILDCARD]);
        assert_eq!(tokens("error[E0308]: java.lang.OutOfMemoryError"), ["error", "e0308", "outofmemoryerror"]);
        // An apostrophe inside a word opens no quote.
        assert_eq!(tokens("don't know what 'x y' is"), ["don", "t", "know", "what", WILDCARD, "is"]);
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

    /// Errors from many ecosystems (compilers, runtimes, databases, git,
    /// containers, package managers), each with a message from another
    /// machine that shows it: written for Lore, not taken from any one log.
    const PAIRS: &str = include_str!("symptoms/pairs.tsv");

    #[test]
    fn each_pasted_message_holds_its_own_symptom_best_of_all() {
        let pairs: Vec<(Vec<String>, Vec<String>)> = PAIRS
            .lines()
            .filter(|line| !line.starts_with('#'))
            .map(|line| {
                let (symptom, message) = line.split_once('\t').expect("symptom<TAB>message");
                (tokens(symptom), tokens(&message.replace("\\n", "\n")))
            })
            .collect();
        assert!(pairs.len() >= 20, "{}", pairs.len());
        let symptoms: Vec<Vec<String>> = pairs.iter().map(|(symptom, _)| symptom.clone()).collect();
        for (index, (symptom, message)) in pairs.iter().enumerate() {
            let own = similarity(symptom, message);
            assert!(own >= MIN_SIMILARITY, "{symptom:?} in {message:?}: {own}");
            assert_eq!(best(&symptoms, message).map(|(best, _)| best), Some(index), "{message:?}");
            for other in symptoms.iter().filter(|other| *other != symptom) {
                let score = similarity(other, message);
                assert!(score < MIN_SIMILARITY, "{other:?} is not in {message:?}, yet scores {score}");
            }
        }
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
