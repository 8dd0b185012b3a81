//! The mask a person's merge implies. When someone merges patterns whose
//! templates differ only where each holds a word of one shape
//! (`svc-billing` / `svc-payments`), the generic masks missed a variable;
//! the regular expression that would have masked it is proposed, and a
//! person accepts or rejects it. Nothing here becomes a mask by itself.
//!
//! Brain's per-system settings are exactly such expressions (Yu et al.,
//! IEEE TSC 2023, table 3); a correction is the evidence that one is
//! missing, and the two templates are the examples it must fit.
//!
//! A candidate is kept only when, applied to both templates, it makes them
//! one and leaves every token they share untouched: an expression that
//! would also swallow a word the patterns agree on would merge far more
//! than the person asked for. Candidates go from the most specific (the
//! literal prefix and suffix the examples share around one character
//! class) to their common shape with its punctuation (`[a-z]+-[a-z]+`),
//! and the first that holds wins. A bare class (`[a-z]+`) is never
//! proposed: it has nothing to hold on to, and where templates share no
//! word for it to spare (messages all variables but a word), it masked
//! every word of held-out messages (`lore eval grouping --corrections`:
//! our failures set fell from 0.933 to 0.159 with it).

use std::borrow::Cow;
use std::collections::BTreeSet;

use crate::masks::{MaskSpec, Masks};
use crate::template::{Template, WILDCARD};

/// Examples a proposal keeps to show the person, and the characters of
/// each (a token may be a whole unbroken line).
const MAX_EXAMPLES: usize = 8;
const MAX_EXAMPLE_CHARS: usize = 80;

/// A mask proposed from a merge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proposal {
    /// A name it may take: letters, digits, '-', '_' and '.'.
    pub name: String,
    /// The regular expression.
    pub pattern: String,
    /// The differing tokens it was drawn from, sorted.
    pub examples: Vec<String>,
}

/// The mask that would have merged `sources` into `survivor` (templates as
/// stored: tokens joined by spaces), or `None` when they differ in length,
/// not at all, or in ways no one expression of one token class covers
/// without touching what they share.
pub fn propose(survivor: &str, sources: &[&str]) -> Option<Proposal> {
    let survivor_tokens: Vec<&str> = survivor.split(' ').collect();
    let mut differing = BTreeSet::new();
    let mut shared = BTreeSet::new();
    let mut pairs = Vec::new();
    for source in sources {
        let tokens: Vec<&str> = source.split(' ').collect();
        if tokens.len() != survivor_tokens.len() {
            continue;
        }
        let mut differs = false;
        for (ours, theirs) in survivor_tokens.iter().zip(&tokens) {
            if ours == theirs {
                if *ours != WILDCARD {
                    shared.insert(*ours);
                }
            } else if *ours != WILDCARD && *theirs != WILDCARD {
                differing.insert(*ours);
                differing.insert(*theirs);
                differs = true;
            }
        }
        if differs {
            pairs.push(*source);
        }
    }
    if pairs.is_empty() {
        return None;
    }
    let examples: Vec<&str> = differing.into_iter().collect();
    // A word with control characters (a terminal escape a tool printed) is
    // not something to show a person as an example, nor to write a mask of.
    if examples.iter().any(|example| example.chars().any(char::is_control)) {
        return None;
    }
    // A candidate holds when masking with it gives every source the
    // survivor's template and leaves each shared word as it is.
    let holds = |pattern: &str| {
        let Ok(masks) = Masks::compile(&[MaskSpec { name: "proposal".into(), pattern: pattern.to_owned() }]) else {
            return false;
        };
        let masked = |text: &str| Template::of_masked(text, &masks);
        let target = masked(survivor);
        pairs.iter().all(|source| masked(source) == target)
            && shared.iter().all(|token| matches!(masks.apply(token, WILDCARD), Cow::Borrowed(_)))
    };
    let prefix = boundary_prefix(&examples);
    let pattern = candidates(&examples, prefix).into_iter().find(|pattern| holds(pattern))?;
    Some(Proposal {
        name: name(prefix),
        pattern,
        examples: examples.iter().take(MAX_EXAMPLES).map(|example| shortened(example)).collect(),
    })
}

fn shortened(example: &str) -> String {
    match example.char_indices().nth(MAX_EXAMPLE_CHARS) {
        Some((cut, _)) => format!("{}…", &example[..cut]),
        None => example.to_owned(),
    }
}

/// The expressions to try, the most specific first; `prefix` is the
/// examples' [`boundary_prefix`].
fn candidates(examples: &[&str], prefix: &str) -> Vec<String> {
    let rest: Vec<&str> = examples.iter().map(|example| &example[prefix.len()..]).collect();
    let suffix = boundary_suffix(&rest);
    let middles: Vec<&str> = rest.iter().map(|rest| &rest[..rest.len() - suffix.len()]).collect();
    let mut candidates = Vec::new();
    if middles.iter().all(|middle| !middle.is_empty()) && !(prefix.is_empty() && suffix.is_empty()) {
        let class = class_of(middles.iter().flat_map(|middle| middle.chars()));
        candidates.push(bounded(&format!("{}{class}+{}", literal(prefix), literal(suffix)), examples));
    }
    if let Some(shape) = common_shape(examples) {
        candidates.push(bounded(&shape, examples));
    }
    candidates.dedup();
    candidates
}

/// `pattern` with a word boundary at either end where the examples start or
/// end with a word character, so `svc-[a-z]+` does not match inside
/// `xsvc-billing`.
fn bounded(pattern: &str, examples: &[&str]) -> String {
    let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    let start = if examples.iter().all(|example| word(example.chars().next())) { r"\b" } else { "" };
    let end = if examples.iter().all(|example| word(example.chars().last())) { r"\b" } else { "" };
    format!("{start}{pattern}{end}")
}

/// The prefix all examples share, cut back to just after its last
/// punctuation: `user-alice` and `user-anna` share `user-`, not `user-a`.
fn boundary_prefix<'a>(examples: &[&'a str]) -> &'a str {
    let first = examples[0];
    let shared = examples[1..]
        .iter()
        .map(|example| first.chars().zip(example.chars()).take_while(|(a, b)| a == b).count())
        .min()
        .unwrap_or(first.chars().count());
    let end = first.char_indices().nth(shared).map_or(first.len(), |(at, _)| at);
    match first[..end].char_indices().rfind(|(_, c)| !c.is_alphanumeric()) {
        Some((at, c)) => &first[..at + c.len_utf8()],
        None => "",
    }
}

/// The suffix all examples share, cut forward to its first punctuation.
fn boundary_suffix<'a>(examples: &[&'a str]) -> &'a str {
    let first = examples[0];
    let shared = examples[1..]
        .iter()
        .map(|example| first.chars().rev().zip(example.chars().rev()).take_while(|(a, b)| a == b).count())
        .min()
        .unwrap_or(first.chars().count());
    let start = match shared {
        0 => first.len(),
        shared => first.char_indices().rev().nth(shared - 1).map_or(0, |(at, _)| at),
    };
    match first[start..].find(|c: char| !c.is_alphanumeric()) {
        Some(at) => &first[start + at..],
        None => "",
    }
}

/// `text` matched literally, escaping only what is special outside a
/// class, so a person reads `svc-` rather than `svc\-`.
fn literal(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '\\' | '.' | '+' | '*' | '?' | '(' | ')' | '|' | '[' | ']' | '{' | '}' | '^' | '$') {
            escaped.push('\\');
        }
        escaped.push(c);
    }
    escaped
}

/// A character class covering `chars`: letters and digits by range, any
/// other character by itself.
fn class_of(chars: impl Iterator<Item = char>) -> String {
    let (mut lower, mut upper, mut digit) = (false, false, false);
    let mut others = BTreeSet::new();
    for c in chars {
        match c {
            'a'..='z' => lower = true,
            'A'..='Z' => upper = true,
            '0'..='9' => digit = true,
            other => {
                others.insert(other);
            }
        }
    }
    let mut class = String::from("[");
    if lower {
        class.push_str("a-z");
    }
    if upper {
        class.push_str("A-Z");
    }
    if digit {
        class.push_str("0-9");
    }
    for other in others {
        class.push_str(&regex::escape(&other.to_string()));
    }
    class.push(']');
    class
}

/// The run shape every example shares, when one does and it holds some
/// punctuation: `svc-billing` and `api-gateway` are both `[a-z]+-[a-z]+`.
fn common_shape(examples: &[&str]) -> Option<String> {
    let first = shape(examples[0]);
    let same = examples[1..].iter().all(|example| shape(example) == first);
    (same && examples[0].contains(|c: char| !c.is_alphanumeric())).then_some(first)
}

/// A token as runs: each run of one character kind is its class and `+`,
/// punctuation is itself.
fn shape(token: &str) -> String {
    let kind = |c: char| match c {
        'a'..='z' => Some("[a-z]"),
        'A'..='Z' => Some("[A-Z]"),
        '0'..='9' => Some("[0-9]"),
        _ => None,
    };
    let mut shape = String::new();
    let mut previous = None;
    for c in token.chars() {
        match kind(c) {
            Some(class) if previous == Some(class) => {}
            Some(class) => {
                shape.push_str(class);
                shape.push('+');
                previous = Some(class);
            }
            None => {
                shape.push_str(&literal(&c.to_string()));
                previous = None;
            }
        }
    }
    shape
}

/// A name for the mask, from the prefix its examples share (`svc-values`),
/// else `merged-values`.
fn name(prefix: &str) -> String {
    let stem: String =
        prefix.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '-' }).collect();
    let stem = stem.trim_matches('-');
    let stem = if stem.is_empty() { "merged" } else { stem };
    let stem: String = stem.chars().take(40).collect();
    format!("{stem}-values")
}

#[cfg(test)]
mod tests;
