//! Secrets no rule describes, found by the word before them: a value next
//! to a secret word (`token`, `key`, `sig`, …) is a secret when it looks
//! random enough, and the weaker the word, the more random it must look.
//!
//! This is how scanners without a provider format find generic secrets
//! (detect-secrets' keyword plugin gates on the word; gitleaks' generic rule
//! adds an entropy floor); here the two are one judgement: the value's
//! estimated randomness in bits must reach what its word asks for
//! (`ContextThresholds`), and it must not be data that merely sits there: a
//! path, a URL, a version, a number, a reference, a stand-in or a name.
//!
//! The forms read, within a line: `word: value`, `word=value`, `word -
//! 'value'`, `Using word value`, `word value` (a log line), `?word=value`
//! and `&sig=value` in URLs. The word may be a part of a name (`X-Api-Key`,
//! `authToken`, `sas_sig`).

use std::ops::Range;
use std::sync::LazyLock;

use regex::Regex;

use crate::placeholders::{is_reference, is_secret_name, is_stand_in, looks_like_placeholder};

/// Bits of estimated randomness a value must show after a secret word.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ContextThresholds {
    /// After a word that says "secret" by itself: token, secret, password
    /// (passphrase, passwd, pwd, pw), credential, bearer, private.
    pub strong_bits: f64,
    /// After a word that often names other things: key, auth, api, sig,
    /// signature.
    pub weak_bits: f64,
}

impl Default for ContextThresholds {
    /// What `lore eval redaction --leave-one-out` chooses on every source
    /// together (docs/EVALUATION.md: each source left out, the choice
    /// holds).
    fn default() -> Self {
        Self { strong_bits: 40.0, weak_bits: 64.0 }
    }
}

/// Shannon's estimate of the entropy of printed English, per letter.
const ENGLISH_BITS_PER_LETTER: f64 = 1.3;

/// How much a secret word says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Strength {
    Strong,
    Weak,
}

/// The secret words, each with what it says; a longer word before one it
/// begins with, since the regex takes the first alternative that fits.
const SECRET_WORDS: &[(&str, Strength)] = &[
    ("token", Strength::Strong),
    ("secret", Strength::Strong),
    ("passphrase", Strength::Strong),
    ("password", Strength::Strong),
    ("passwd", Strength::Strong),
    ("pwd", Strength::Strong),
    ("pw", Strength::Strong),
    ("credentials", Strength::Strong),
    ("credential", Strength::Strong),
    ("bearer", Strength::Strong),
    ("private", Strength::Strong),
    ("signature", Strength::Weak),
    ("sig", Strength::Weak),
    ("key", Strength::Weak),
    ("auth", Strength::Weak),
    ("api", Strength::Weak),
];

fn strength(word: &str) -> Strength {
    SECRET_WORDS
        .iter()
        .find(|(known, _)| known.eq_ignore_ascii_case(word))
        .map_or(Strength::Strong, |(_, strength)| *strength)
}

/// A secret word with the rest of its name after it, what separates the
/// name from its value, and the value: quoted (any characters but the
/// quote) or bare. The part of the name before the word is read backwards
/// from it (`name_start`): a leading `[A-Za-z0-9_.-]*?` would make the
/// regex try every position of the text.
static KEYWORD_VALUE: LazyLock<Regex> = LazyLock::new(|| {
    let words: Vec<&str> = SECRET_WORDS.iter().map(|(word, _)| *word).collect();
    Regex::new(&format!(
        r#"(?xi)
        (?P<word>{words})
        (?P<tail>[A-Za-z0-9_-]*?)
        ["'\]]?
        (?: [\x20\t]*(?:=|:|=>|:=)[\x20\t]* | [\x20\t]+-[\x20\t]+ | [\x20\t]+ )
        (?: (?:is|was|of|to)[\x20\t]+ )?
        (?: ["'`](?P<quoted>[^"'`\r\n]{{1,256}})["'`] | (?P<bare>[^\s"'`,;&|(){{}}\[\]<>]{{1,256}}) )
        "#,
        words = words.join("|")
    ))
    .expect("keyword context regex compiles")
});

/// Where the name holding the secret word at `word_start` begins.
fn name_start(text: &str, word_start: usize) -> usize {
    let before = &text.as_bytes()[..word_start];
    let part = before
        .iter()
        .rev()
        .take_while(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'_' | b'.' | b'-'))
        .count();
    word_start - part
}

/// The spans of values after secret words that look random enough.
pub(crate) fn find(text: &str, thresholds: &ContextThresholds, spans: &mut Vec<Range<usize>>) {
    // Most text holds no secret word: one automaton pass says so, before
    // the regex looks at every position.
    static WORDS: LazyLock<aho_corasick::AhoCorasick> = LazyLock::new(|| {
        aho_corasick::AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .build(SECRET_WORDS.iter().map(|(word, _)| *word))
            .expect("secret words build")
    });
    if !WORDS.is_match(text) {
        return;
    }
    let mut at = 0;
    while let Some(captures) = KEYWORD_VALUE.captures_at(text, at) {
        let whole = captures.get(0).expect("group 0 always matches");
        let (Some(word), Some(tail), Some(value)) =
            (captures.name("word"), captures.name("tail"), captures.name("quoted").or_else(|| captures.name("bare")))
        else {
            at = whole.end();
            continue;
        };
        let start = name_start(text, word.start());
        let name = &text[start..tail.end()];
        // A refused value may itself be the next secret word (`auth token
        // is …`): the search goes on from it.
        at = value.start().max(whole.start() + 1);
        while !text.is_char_boundary(at) {
            at += 1;
        }
        if !is_word_boundary(text, start) || is_not_a_secret_name(name) || is_called(text, value.end()) {
            continue;
        }
        let trimmed = value.as_str().trim_end_matches(['.', ':', '!', '?']);
        let needed = match strength(word.as_str()) {
            Strength::Strong => thresholds.strong_bits,
            Strength::Weak => thresholds.weak_bits,
        };
        if is_data(trimmed) || randomness_bits(trimmed) < needed {
            continue;
        }
        spans.push(value.start()..value.start() + trimmed.len());
        at = whole.end();
    }
}

/// A value followed by `(` is a call: code, not a secret.
fn is_called(text: &str, end: usize) -> bool {
    text[end..].trim_start_matches([' ', '\t']).starts_with('(')
}

/// The name starts a word: `api_key`, not the `key` inside `monkey`.
fn is_word_boundary(text: &str, at: usize) -> bool {
    text[..at].chars().next_back().is_none_or(|before| !before.is_ascii_alphanumeric())
}

/// Names that hold a secret word but count or point at something else.
fn is_not_a_secret_name(name: &str) -> bool {
    let lower: String = name.chars().filter(char::is_ascii_alphanumeric).flat_map(|c| c.to_lowercase()).collect();
    const OTHER: &[&str] = &[
        "tokens",
        "tokenizer",
        "tokencount",
        "tokenlimit",
        "tokentype",
        "keyboard",
        "keyword",
        "keys",
        "keyid",
        "keyname",
        "keyfile",
        "keypath",
        "publickey",
        "pubkey",
        "apiversion",
        "apiurl",
        "apihost",
        "authors",
        "author",
        "authority",
        "authmethod",
        "authtype",
        "authurl",
        "secretname",
        "secretref",
        "signatures",
        "passwordfile",
        "tokenfile",
        "primarykey",
        "foreignkey",
        "sortkey",
        "partitionkey",
        "cachekey",
    ];
    OTHER.iter().any(|other| lower.ends_with(other))
}

/// What sits after a secret word without being a secret: a path, a URL, a
/// version, a number, a reference, a stand-in, a name, a type or a word.
fn is_data(value: &str) -> bool {
    static VERSION: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"^[vV]?\d+(?:\.\d+)+(?:[-+][\w.]+)?$").expect("version regex compiles"));
    static TYPE: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"^(?:[A-Z][a-z]+)+(?:[<\[].*)?$").expect("type regex compiles"));
    value.contains("://")
        || value.starts_with('/')
        || value.starts_with("./")
        || value.starts_with("~/")
        || value.bytes().all(|byte| byte.is_ascii_digit() || byte == b'.' || byte == b'-')
        || VERSION.is_match(value)
        || TYPE.is_match(value)
        || is_reference(value)
        || is_stand_in(value)
        || looks_like_placeholder(value)
        || is_secret_name(value)
        || value.contains(crate::REDACTED)
        || is_path_like(value)
}

/// `src/app/main.rs`, `refs/heads/main`: segments that are words.
fn is_path_like(value: &str) -> bool {
    value.contains('/')
        && value.split('/').filter(|segment| !segment.is_empty()).count() >= 2
        && value.split('/').any(|segment| segment.len() >= 2 && segment.bytes().all(|byte| byte.is_ascii_lowercase()))
}

/// An estimate of how many random bits `value` holds. Its length times
/// the bits per character of its empirical distribution, capped by the
/// bits of the alphabet its character classes span, for what looks random;
/// and 1.3 bits a letter for what reads as words: pieces of three letters
/// or more of one case, or capitalized (`HTTPBasicAuth`, `key->value`).
/// Nothing short of a dictionary tells a word from random letters, and
/// English holds about 1.3 bits a letter (Shannon, 1951).
pub(crate) fn randomness_bits(value: &str) -> f64 {
    let bytes = value.as_bytes();
    if bytes.is_empty() {
        return 0.0;
    }
    let word_letters = word_pieces(value).map(str::len).sum::<usize>();
    let wordiness = word_letters as f64 / bytes.len() as f64;
    looks_random_bits(bytes) * (1.0 - wordiness) + word_letters as f64 * ENGLISH_BITS_PER_LETTER
}

fn looks_random_bits(bytes: &[u8]) -> f64 {
    let classes = [
        (bytes.iter().any(u8::is_ascii_lowercase), 26.0),
        (bytes.iter().any(u8::is_ascii_uppercase), 26.0),
        (bytes.iter().any(u8::is_ascii_digit), 10.0),
        (bytes.iter().any(|byte| !byte.is_ascii_alphanumeric()), 32.0),
    ];
    let alphabet: f64 = classes.iter().filter(|(present, _)| *present).map(|(_, size)| size).sum();
    // Hex is its own alphabet: 16, not 36.
    let alphabet =
        if bytes.iter().all(u8::is_ascii_hexdigit) && bytes.iter().any(u8::is_ascii_digit) { 16.0 } else { alphabet };
    let empirical = crate::entropy::shannon(bytes);
    // The most a string of this length can show empirically; a random one
    // shows close to it, a repetition far less.
    let ceiling = (bytes.len() as f64).log2().min(alphabet.log2());
    let spread = if ceiling > 0.0 { (empirical / ceiling).min(1.0) } else { 0.0 };
    bytes.len() as f64 * alphabet.log2() * spread * spread
}

/// The pieces of `value` that read as words: split at anything but a
/// letter and where lower case turns upper (`HTTPBasicAuth` is HTTP, Basic,
/// Auth), those of three letters or more.
fn word_pieces(value: &str) -> impl Iterator<Item = &str> {
    let bytes = value.as_bytes();
    let mut pieces = Vec::new();
    let mut start = None;
    for at in 0..=bytes.len() {
        let letter = bytes.get(at).is_some_and(u8::is_ascii_alphabetic);
        // A new piece where a capital follows a small letter, or where a
        // capital follows capitals and precedes a small one (HTTPBasic).
        let turns = letter
            && at > 0
            && bytes[at].is_ascii_uppercase()
            && (bytes[at - 1].is_ascii_lowercase()
                || (bytes[at - 1].is_ascii_uppercase() && bytes.get(at + 1).is_some_and(u8::is_ascii_lowercase)));
        match (start, letter) {
            (Some(from), true) if turns => {
                pieces.push(&value[from..at]);
                start = Some(at);
            }
            (Some(from), false) => {
                pieces.push(&value[from..at]);
                start = None;
            }
            (None, true) => start = Some(at),
            _ => {}
        }
    }
    pieces.into_iter().filter(|piece| piece.len() >= 3)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secrets(text: &str) -> Vec<&str> {
        let mut spans = Vec::new();
        find(text, &ContextThresholds::default(), &mut spans);
        spans.iter().map(|span| &text[span.clone()]).collect()
    }

    #[test]
    fn a_random_value_after_a_secret_word_is_a_secret_in_each_form() {
        for (text, secret) in [
            ("siteleaf token - 'lklep3k2nq9xm4v7b8c1z0wq5'", "lklep3k2nq9xm4v7b8c1z0wq5"),
            ("[DEBUG] Using token spu-3f10a9c4e7b24d6f8a1c", "spu-3f10a9c4e7b24d6f8a1c"),
            ("GET https://maps.example.com/api?key=AIzq8Xv2LpA9sKeTm4Wn7Rb&q=paris", "AIzq8Xv2LpA9sKeTm4Wn7Rb"),
            (
                "https://acct.blob.core.windows.net/c?sv=2021-08-06&sig=Zx9%2Bq8Xv2LpA9sKeTm4Wn7RbYc3",
                "Zx9%2Bq8Xv2LpA9sKeTm4Wn7RbYc3",
            ),
            ("X-Api-Key: 7fa3c9e1b2d84f6a9c0e5b7d3a1f8e2c", "7fa3c9e1b2d84f6a9c0e5b7d3a1f8e2c"),
            ("auth token is Qm9Yx2Lp8sKe4Wn7Rb3T", "Qm9Yx2Lp8sKe4Wn7Rb3T"),
        ] {
            assert_eq!(secrets(text), vec![secret], "{text}");
        }
    }

    #[test]
    fn words_numbers_paths_and_versions_after_a_secret_word_are_kept() {
        for text in [
            "token_count: 4096",
            "the api version 2.14.1 is deprecated",
            "Using token file /etc/lore/token",
            "key: value",
            "public key: ssh-ed25519",
            "password: required",
            "primary key violation on users",
            "auth method password failed for user deploy",
            "api https://api.example.com/v1",
            "secret: ${DB_SECRET}",
            "token expired at 2026-11-25T10:00:00Z",
            "keyboard layout us",
            "the key monkey_business was not found",
            "private repository main",
        ] {
            assert!(secrets(text).is_empty(), "{text}: {:?}", secrets(text));
        }
    }

    #[test]
    fn randomness_grows_with_length_and_mix_and_stays_low_for_words() {
        assert!(randomness_bits("production") < 32.0, "{}", randomness_bits("production"));
        assert!(randomness_bits("aaaaaaaaaaaaaaaa") < 32.0);
        assert!(randomness_bits("HTTPBasicAuth") < 32.0, "{}", randomness_bits("HTTPBasicAuth"));
        assert!(
            randomness_bits("lklep3k2nq9xm4v7b8c1z0wq5") > 64.0,
            "{}",
            randomness_bits("lklep3k2nq9xm4v7b8c1z0wq5")
        );
        assert!(randomness_bits("Qm9Yx2Lp8sKe4Wn7Rb3T") > 64.0, "{}", randomness_bits("Qm9Yx2Lp8sKe4Wn7Rb3T"));
        assert!(randomness_bits("7fa3c9e1b2d84f6a9c0e5b7d3a1f8e2c") > 64.0);
    }
}
