//! The words a text must hold for a rule to match there: what gates a rule
//! whose catalog names no keywords (Veles' and Kingfisher's own rules,
//! which Kingfisher prefilters with Hyperscan; some of CredSweeper's).
//!
//! A set of literals is *required* when every match of the pattern contains
//! one of them. Read from the pattern's syntax tree: a literal requires
//! itself; a capture or a repetition of at least one requires what its body
//! requires; an alternation requires the union of what each branch
//! requires (when every branch requires something); a concatenation
//! requires the best of what its parts require, where runs of parts that
//! match a few exact strings join into longer literals. Case is folded: a
//! class of one letter in both cases is that letter, and the keyword
//! automaton compares case-insensitively. This is the prefilter idea of Hyperscan and
//! of the `regex` crate's own literal optimizations, reduced to "which
//! words must be there".

use regex_syntax::hir::literal::{ExtractKind, Extractor};
use regex_syntax::hir::{Class, Hir, HirKind};

/// Literals of at least this many bytes gate a rule; shorter ones are in
/// too many texts to save work.
const MIN_LEN: usize = 3;

/// One of these, lowercased, is in every match of `pattern`; `None` when
/// no such set of literals of `MIN_LEN` bytes or more exists.
pub(super) fn required(pattern: &str) -> Option<Vec<String>> {
    let hir = regex_syntax::ParserBuilder::new().utf8(false).unicode(false).build().parse(pattern).ok()?;
    let mut words: Vec<String> =
        inner(&hir)?.into_iter().map(|word| String::from_utf8_lossy(&word).to_ascii_lowercase()).collect();
    words.sort();
    words.dedup();
    (!words.is_empty() && words.iter().all(|word| word.trim().len() >= MIN_LEN)).then_some(words)
}

/// The literals one of which every match of `pattern` begins with, or else
/// ends with, lowercased (`regex-syntax`'s own extraction): the words that
/// must be in a text for the rule to find anything there. None when no
/// such set of words of `MIN_LEN` characters or more exists.
pub(super) fn prefixes_or_suffixes(pattern: &str) -> Option<Vec<String>> {
    [ExtractKind::Prefix, ExtractKind::Suffix].into_iter().find_map(|kind| extracted(pattern, kind))
}

/// The literals one of which every match of `pattern` begins with, read
/// the same way.
pub(super) fn prefixes(pattern: &str) -> Option<Vec<String>> {
    extracted(pattern, ExtractKind::Prefix)
}

fn extracted(pattern: &str, kind: ExtractKind) -> Option<Vec<String>> {
    let hir = regex_syntax::ParserBuilder::new().utf8(false).build().parse(pattern).ok()?;
    let mut extractor = Extractor::new();
    extractor.kind(kind);
    let seq = extractor.extract(&hir);
    let literals = seq.literals()?;
    let mut words: Vec<String> =
        literals.iter().map(|literal| String::from_utf8_lossy(literal.as_bytes()).to_lowercase()).collect();
    words.sort();
    words.dedup();
    (!words.is_empty() && words.iter().all(|word| word.trim().len() >= MIN_LEN)).then_some(words)
}

/// The literals one of which every match of `hir` contains.
fn inner(hir: &Hir) -> Option<Vec<Vec<u8>>> {
    match hir.kind() {
        HirKind::Literal(literal) => Some(vec![literal.0.to_vec()]),
        HirKind::Class(class) => characters(class).map(|bytes| bytes.into_iter().map(|byte| vec![byte]).collect()),
        HirKind::Capture(capture) => inner(&capture.sub),
        HirKind::Repetition(repetition) if repetition.min >= 1 => inner(&repetition.sub),
        HirKind::Alternation(branches) => {
            let mut union = Vec::new();
            for branch in branches {
                union.extend(inner(branch)?);
            }
            Some(union)
        }
        HirKind::Concat(parts) => best(concat(parts)),
        _ => None,
    }
}

/// What each part of a concatenation requires, with adjacent parts that
/// match a few exact strings joined into runs (`p(?:assword|wd)` is
/// `password` or `pwd`).
fn concat(parts: &[Hir]) -> Vec<Vec<Vec<u8>>> {
    let mut candidates = Vec::new();
    let mut run: Option<Vec<Vec<u8>>> = None;
    for part in parts {
        match exact(part) {
            Some(strings) => {
                run = Some(match run.take() {
                    None => strings,
                    Some(before) => match cross(&before, &strings) {
                        Some(joined) => joined,
                        None => {
                            candidates.push(before);
                            strings
                        }
                    },
                })
            }
            None => {
                candidates.extend(run.take());
                candidates.extend(inner(part));
            }
        }
    }
    candidates.extend(run);
    candidates
}

/// At most this many strings stand for a part (a longer alternation is
/// left as what it requires).
const MAX_STRINGS: usize = 16;

/// Every `a` followed by every `b`, when there are few enough.
fn cross(a: &[Vec<u8>], b: &[Vec<u8>]) -> Option<Vec<Vec<u8>>> {
    (a.len() * b.len() <= MAX_STRINGS)
        .then(|| a.iter().flat_map(|a| b.iter().map(move |b| [a.as_slice(), b].concat())).collect())
}

/// The set whose shortest literal is longest, then the one of fewest
/// literals: the rarest words (`(?:server|host|dsn)=…(?:password|pwd)=`
/// is gated by the password, which fewer texts hold).
fn best(candidates: Vec<Vec<Vec<u8>>>) -> Option<Vec<Vec<u8>>> {
    candidates
        .into_iter()
        .filter(|set| !set.is_empty())
        .max_by_key(|set| (set.iter().map(Vec::len).min().unwrap_or(0), std::cmp::Reverse(set.len())))
}

/// The few strings `hir` matches exactly (case folded), when it matches
/// no others.
fn exact(hir: &Hir) -> Option<Vec<Vec<u8>>> {
    match hir.kind() {
        HirKind::Literal(literal) => Some(vec![literal.0.to_ascii_lowercase()]),
        HirKind::Class(class) => characters(class).map(|bytes| bytes.into_iter().map(|byte| vec![byte]).collect()),
        HirKind::Capture(capture) => exact(&capture.sub),
        HirKind::Concat(parts) => parts.iter().try_fold(vec![Vec::new()], |joined, part| cross(&joined, &exact(part)?)),
        HirKind::Alternation(branches) => {
            let mut union = Vec::new();
            for branch in branches {
                union.extend(exact(branch)?);
            }
            (union.len() <= MAX_STRINGS).then_some(union)
        }
        _ => None,
    }
}

/// The few characters a class holds, case folded (`(?i)k` is `[Kk]`, one
/// character; `[_-]` is two).
fn characters(class: &Class) -> Option<Vec<u8>> {
    const MAX: usize = 4;
    let mut bytes: Vec<u8> = match class {
        Class::Bytes(bytes) => {
            bytes.ranges().iter().flat_map(|range| range.start()..=range.end()).take(2 * MAX + 1).collect()
        }
        Class::Unicode(chars) => chars
            .ranges()
            .iter()
            .flat_map(|range| range.start()..=range.end())
            .take(2 * MAX + 1)
            .map(|char| u8::try_from(u32::from(char)).ok())
            .collect::<Option<_>>()?,
    };
    bytes.iter_mut().for_each(|byte| byte.make_ascii_lowercase());
    bytes.sort_unstable();
    bytes.dedup();
    (!bytes.is_empty() && bytes.len() <= MAX).then_some(bytes)
}

#[cfg(test)]
mod tests {
    use super::required;

    #[test]
    fn a_word_anywhere_in_every_match_gates_the_rule() {
        let words = |pattern: &str| required(pattern);
        assert_eq!(
            words(r"(?i)[\w.-]{0,50}?(?:deepseek)(?:[ \t\w.-]{0,20})=([a-z0-9]{32})"),
            Some(vec!["deepseek".into()])
        );
        // An alternation: one of its branches' words, joined with what is
        // around them; of two, the one of fewer words.
        assert_eq!(
            words(r"(?i)(?:^|;)(?:server|host|dsn)=[^;]+;(?:password|pwd)=([^;]{4,})"),
            Some(vec![";password=".into(), ";pwd=".into()])
        );
        // A prefix joined across a capture.
        assert_eq!(words(r"\b(SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43})"), Some(vec!["sg.".into()]));
        // Nothing every match must hold.
        assert_eq!(words(r"[A-Za-z0-9]{40}"), None);
        assert_eq!(words(r"(?:abc|[0-9]{8})"), None);
        assert_eq!(words(r"(?:ab)?xy"), None);
        // Case folded: `(?i)` classes are letters.
        assert_eq!(words(r"(?i)api[_-]key=(\w+)"), Some(vec!["api-key=".into(), "api_key=".into()]));
    }
}
