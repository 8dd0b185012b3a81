//! Error messages as templates: normalization and the similarity that groups
//! them.
//!
//! A message is normalized into tokens where every variable part is the
//! wildcard `<*>`: URLs, quoted values, and any token carrying a digit
//! (numbers, hex ids, UUIDs, IPs, ports, timestamps, line:column) or a path.
//! Error codes such as `TS2322` or `E0308` are kept: they name the error.
//! A list of variables is one wildcard, whatever its length: versions or
//! ids after commas, or paths one after another, do not change a message's
//! length, so messages of one kind keep one route. (Patterns stored before
//! this rule keep their longer templates; a list message now starts its own
//! pattern beside such a one, which a merge joins.)
//!
//! Grouping follows Drain (He et al., ICWS 2017): messages are only compared
//! with templates of the same length whose first tokens are the same (the
//! "route", Drain's fixed-depth parse tree), and a message joins the most
//! similar template when the share of positions it fits reaches the
//! threshold; the template then turns the positions that differ into `<*>`.

use std::sync::LazyLock;

use regex::Regex;

use crate::masks::Masks;

pub const WILDCARD: &str = "<*>";
/// Messages longer than this are cut before tokenizing; the tail of a huge
/// message is almost always a stack trace or a dump that only varies.
pub const MAX_MESSAGE_CHARS: usize = 4096;
/// Tokens compared; longer messages are grouped by their first tokens.
pub const MAX_TOKENS: usize = 128;
/// Tokens of the route after the length (Drain's depth minus two).
const ROUTE_TOKENS: usize = 2;

static URL: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://\S+").expect("valid regex"));
/// Where a quote opens, as a regex group: after a space, bracket, '=', ':'
/// or ',', so that an apostrophe inside a word ("don't") does not open one.
pub const QUOTE_OPENER: &str = r"(^|[\s(\[{=:,])";
/// A quoted value.
static QUOTED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(r#"{QUOTE_OPENER}(?:'[^'\n]{{0,512}}'|"[^"\n]{{0,512}}"|`[^`\n]{{0,512}}`)"#))
        .expect("valid regex")
});
/// A run of digits inside a quoted value kept whole.
static DIGITS: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"[0-9]+").expect("valid regex"));
/// Error codes that identify the error: TS2322, E0308, C4996, SQL23505.
static ERROR_CODE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?:^|[^A-Za-z0-9])[A-Z][A-Za-z]{0,4}\d{2,6}(?:$|[^A-Za-z0-9])").expect("valid regex")
});

/// A normalized message: its tokens, variables as `<*>`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Template {
    pub tokens: Vec<String>,
}

impl Template {
    /// Normalizes one error message with the generic masks alone.
    pub fn of(message: &str) -> Self {
        Self::of_masked(message, &Masks::none())
    }

    /// Normalizes one error message: a project's own masks first, then the
    /// generic ones. A project read literally (`crate::convention`) keeps
    /// each quoted value as one token (`No module named 'psycopg#'`), its
    /// digits masked within it; a quoted path is still a variable.
    pub fn of_masked(message: &str, masks: &Masks) -> Self {
        let message = match message.char_indices().nth(MAX_MESSAGE_CHARS) {
            Some((cut, _)) => &message[..cut],
            None => message,
        };
        let message = masks.apply(message, WILDCARD);
        let message = URL.replace_all(&message, WILDCARD);
        let message = if !masks.reads_literally() {
            QUOTED.replace_all(&message, "${1}<*>")
        } else {
            QUOTED.replace_all(&message, |found: &regex::Captures<'_>| {
                let opener = &found[1];
                let value: Vec<&str> = found[0][opener.len()..].split_whitespace().collect();
                // Its numbers still vary (`'psycopg2'`, `'psycopg3'`): each
                // run of digits is one mark, so the name stays a name.
                format!("{opener}{}", DIGITS.replace_all(&value.join("_"), "#"))
            })
        };
        let mut tokens: Vec<String> = Vec::new();
        let mut previous: Option<&str> = None;
        for token in message.split_whitespace().take(MAX_TOKENS) {
            let normalized = normalize_token(token);
            let continues_run = normalized == WILDCARD
                && tokens.last().is_some_and(|last| last == WILDCARD)
                && previous.is_some_and(|previous| continues_list(previous, token));
            if !continues_run {
                tokens.push(normalized);
            }
            previous = Some(token);
        }
        Self { tokens }
    }

    pub fn from_tokens(tokens: Vec<String>) -> Self {
        Self { tokens }
    }

    pub fn text(&self) -> String {
        self.tokens.join(" ")
    }

    /// The bucket a template is compared in: its length and first tokens.
    /// Only templates with the same route are compared, which keeps a
    /// capture's work independent of the number of patterns. A call among
    /// those first tokens (`TypeError: load_user() takes 2 positional
    /// arguments …`) says where the error happened, not which error it is: it
    /// routes as a wildcard, and the comparison decides.
    pub fn route(&self) -> String {
        let mut route = self.tokens.len().to_string();
        for token in self.tokens.iter().take(ROUTE_TOKENS) {
            route.push(' ');
            route.push_str(if token.ends_with("()") { WILDCARD } else { token });
        }
        route
    }

    /// The share of this template's positions that `message` fits: equal
    /// tokens, or any token where the template has a wildcard. 0 when the
    /// lengths differ.
    pub fn similarity(&self, message: &Template) -> f64 {
        if self.tokens.len() != message.tokens.len() {
            return 0.0;
        }
        if self.tokens.is_empty() {
            return 1.0;
        }
        let fitting = self.tokens.iter().zip(&message.tokens).filter(|(ours, theirs)| fits(ours, theirs)).count();
        fitting as f64 / self.tokens.len() as f64
    }

    /// Wildcards: ties between equally similar templates go to the one with
    /// fewer, the more specific.
    pub fn wildcards(&self) -> usize {
        self.tokens.iter().filter(|token| *token == WILDCARD).count()
    }

    /// This template widened to cover `message`: positions that differ
    /// become wildcards.
    pub fn generalize(&self, message: &Template) -> Template {
        debug_assert_eq!(self.tokens.len(), message.tokens.len());
        let tokens = self
            .tokens
            .iter()
            .zip(&message.tokens)
            .map(|(ours, theirs)| if ours == theirs { ours.clone() } else { WILDCARD.to_owned() })
            .collect();
        Template { tokens }
    }
}

/// Whether `token` goes on a list that `previous` is part of: after a
/// comma (`1.0, 1.1, 1.2`), or one path after another (`src/a.rs src/b.rs`).
/// A host then its address are two things, not a list.
fn continues_list(previous: &str, token: &str) -> bool {
    previous.ends_with(',') || (is_path(previous) && is_path(token))
}

fn fits(template_token: &str, message_token: &str) -> bool {
    template_token == WILDCARD || template_token == message_token
}

/// One whitespace-separated token: a variable becomes the wildcard.
fn normalize_token(token: &str) -> String {
    if token.contains(WILDCARD) {
        // A URL or quoted value inside the token: keep what surrounds it
        // only when that is punctuation, so "(<*>)," stays comparable.
        return WILDCARD.to_owned();
    }
    let has_digit = |text: &str| text.bytes().any(|byte| byte.is_ascii_digit());
    if has_digit(token) && has_digit(&ERROR_CODE.replace_all(token, " ")) {
        return WILDCARD.to_owned();
    }
    if is_path(token) {
        return WILDCARD.to_owned();
    }
    token.to_owned()
}

/// `/usr/lib`, `./x`, `~/x`, `src/app.ts`, `a/b/c`, `C:\x\y`; not "and/or".
fn is_path(token: &str) -> bool {
    let token = token.trim_matches(|c: char| matches!(c, '(' | ')' | '[' | ']' | ',' | ';' | ':' | '"' | '\''));
    let slashes = token.bytes().filter(|byte| *byte == b'/').count();
    let backslashes = token.bytes().filter(|byte| *byte == b'\\').count();
    if slashes == 0 && backslashes == 0 {
        return false;
    }
    token.starts_with('/')
        || token.starts_with("./")
        || token.starts_with("../")
        || token.starts_with("~/")
        || slashes >= 2
        || backslashes >= 1
        || token.rsplit('/').next().is_some_and(|last| last.contains('.'))
}

#[cfg(test)]
mod tests;
