//! Whether a text forbids what it names: a command (the policy) or an ask
//! (the cues). A lesson about a dangerous command mostly exists to say
//! "don't": "never run `chmod -R 777`",
//! "`curl … | sh` is how the mirror was compromised", "instead of
//! `--no-verify`, fix the hook". The negation must govern the command: it
//! stands before it in the same clause with no break between ("don't …,
//! use X" forbids the first and asks the second), or a verdict on it
//! follows ("… is unsafe").
//!
//! The words are the negation field of each language Lore's lessons are
//! written in, not phrasings of lessons.

use std::sync::LazyLock;

use regex::Regex;

/// A negation before the command, read back from it.
static BEFORE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?x)
        \b(?:don'?t|do\s+not|does\s+not|doesn'?t|never|not|no\s+longer|avoid|avoiding|instead\s+of|rather\s+than|
           stop|stopped|without|removed?|removing|dropped|replaced?|must\s+not|mustn'?t|should\s+not|shouldn'?t|cannot|can'?t|won'?t|refuse|refused|
           forbid|forbids|forbidden|prohibit|prohibits|prohibited|disallow|disallowed|ban|bans|banned|reject|rejected|
           resist|beware|dangerous|unsafe|insecure|risky|anti-?pattern|bad\s+idea|temptation|tempting|
           tempted|nunca|jamais|ne\s+\w+\s+pas|n'\w+\s+pas|niemals|nicht|kein|keine|nie|nunca|evite|évitez|evitare|
           non|mai|evitar|vermeiden|vermeide)\b
        |(?:^|[^\w])(?:не|никогда|нельзя)(?:[^\w]|$)
        |不要|别|勿|禁止|切勿|不得|决不|絶対に|しないで|してはいけない|禁止|금지|하지\s*마",
    )
    .expect("negation pattern")
});

/// A verdict after the command: it broke something, it is unsafe.
static AFTER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?x)^(?:[^.!?\n]|[.!?]\S){0,160}?
        (?:\b(?:is|are|was|were|would\s+be|remains?)\s+(?:never|not|dangerous|unsafe|insecure|forbidden|banned|prohibited|blocked|disallowed|risky|a\s+(?:bad\s+idea|security|trap|footgun|mistake))
          |\b(?:broke|breaks|caused|causes|leaked|leaks|exposed|exposes|disables|compromised|opened\s+up|hides|defeats|weakens|undermines|bypasses)\b
          |\b(?:never|not)\s+(?:the\s+)?(?:fix|answer|solution|ok|okay|acceptable|allowed)\b
          |\bis\s+off-?limits\b)",
    )
    .expect("verdict pattern")
});

/// What breaks a negation's reach: a new clause that asks for something
/// else ("don't X, use Y"; "not X but Y"; "it cannot reach the socket:
/// run Y").
static BREAK: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"[,:]\s|;|\s(?:but|instead|then|so|and)\b").expect("break pattern"));

/// The text forbids or warns against what stands at `at` (a command, an
/// ask). The verdict is looked for from there on, as the prose that
/// carries it often runs on as the command's last words.
pub fn refused(text: &str, at: usize) -> bool {
    negated_before(text, at) || AFTER.is_match(text.get(at..).unwrap_or_default())
}

/// A negation governs `at` from before it, in its sentence, with no new
/// clause between.
pub fn negated_before(text: &str, at: usize) -> bool {
    let sentence_start = text[..at]
        .char_indices()
        .rev()
        .find(|&(index, character)| {
            character == '\n'
                || character == '。'
                || (matches!(character, '.' | '!' | '?') && text[index + 1..].starts_with(char::is_whitespace))
        })
        .map_or(0, |(index, character)| index + character.len_utf8());
    let before = &text[sentence_start..at];
    BEFORE.find_iter(before).last().is_some_and(|cue| !BREAK.is_match(&before[cue.end()..]))
}
