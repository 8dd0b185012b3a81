//! Values printed by a command whose job is to make a secret. `openssl rand
//! -hex 32` prints 64 hex digits, which nothing but the command that printed
//! them tells from a SHA-256 digest, so the entropy layer spares them as
//! data. Where a text holds the command and what it printed (a terminal
//! transcript, a note an agent pasted), the printed value is the secret.
//!
//! The generators are those whose documentation says they print random key
//! material: `openssl rand`, `gpg --gen-random`, reads of `/dev/urandom`,
//! Python's `secrets.token_*` and `os.urandom`, Node's
//! `crypto.randomBytes`, Ruby's `SecureRandom`, `rails secret`, Phoenix's
//! `phx.gen.secret`, Laravel's `key:generate --show` and Django's
//! `get_random_secret_key`. The command must open its line (after a shell
//! prompt, if any): a line of code that calls one of them prints nothing.
//! What it printed is the lines after it that are each one token of key
//! characters, 16 or more, up to the first that is not.
//!
//! Not read: a command and its output in two fields of one action (the
//! hooks keep no output of a call that succeeded).

use std::ops::Range;
use std::sync::LazyLock;

use aho_corasick::AhoCorasick;
use regex::Regex;

/// Shorter printed tokens are words, not keys.
const MIN_KEY_CHARS: usize = 16;
/// A generator prints a few keys at most; a longer run of tokens is data.
const MAX_PRINTED_LINES: usize = 8;

/// A line that runs a generator: at its start or after a prompt's `$ `,
/// `# `, `% ` or `> `.
static GENERATOR_LINE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?m)(?:^|[$#%>][ \t]+)[ \t]*(?:sudo[ \t]+)?",
        r"(?:openssl[ \t]+rand\b|gpg2?[ \t][^\n]*--gen-random\b",
        r"|(?:head|tr|dd|od|xxd|base64|cat)\b[^\n]*/dev/u?random\b",
        r"|python[0-9.]*[ \t]+-c[ \t][^\n]*(?:secrets\.token_|os\.urandom|get_random_secret_key)",
        r"|node[ \t]+(?:-e|-p|--eval|--print)[ \t][^\n]*randomBytes",
        r"|ruby[ \t][^\n]*SecureRandom",
        r"|(?:bin/)?(?:rails|rake)[ \t]+secret\b|mix[ \t]+phx\.gen\.secret\b",
        r"|php[ \t]+artisan[ \t]+key:generate\b)",
        r"[^\n]*$",
    ))
    .expect("generator line regex compiles")
});

/// Words every generator's line holds: one pass for them spares almost every
/// text the line regex, whose anchor at a line's start leaves it no literal
/// to skip ahead by (it cost an ordinary action 5 % without them).
static GENERATOR_WORDS: LazyLock<AhoCorasick> = LazyLock::new(|| {
    AhoCorasick::new(["openssl", "random", "Random", "secret", "key:generate"]).expect("generator words build")
});

/// The spans of the values generators printed in `text`.
pub(crate) fn find(text: &str, spans: &mut Vec<Range<usize>>) {
    if !GENERATOR_WORDS.is_match(text) {
        return;
    }
    for command in GENERATOR_LINE.find_iter(text) {
        let mut at = command.end();
        for _ in 0..MAX_PRINTED_LINES {
            let Some(rest) = text[at..].strip_prefix('\n') else { break };
            let line_start = at + 1;
            let line = rest.split('\n').next().unwrap_or_default();
            let trimmed = line.trim();
            if !is_printed_key(trimmed) {
                break;
            }
            let start = line_start + (line.len() - line.trim_start().len());
            spans.push(start..start + trimmed.len());
            at = line_start + line.len();
        }
    }
}

/// One token of the characters keys are printed in: hex, base64 and its
/// URL-safe form, and Laravel's `base64:` prefix.
fn is_printed_key(line: &str) -> bool {
    let key = line.strip_prefix("base64:").unwrap_or(line);
    key.len() >= MIN_KEY_CHARS
        && key.bytes().all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'+' | b'/' | b'=' | b'_' | b'-'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(text: &str) -> Vec<&str> {
        let mut spans = Vec::new();
        find(text, &mut spans);
        spans.into_iter().map(|span| &text[span]).collect()
    }

    #[test]
    fn what_a_generator_printed_after_its_command_is_found() {
        let hex = "5bb870d42a59646eb9e84f9391031bd04d64791e53a6da6cce5029d1da0a4051";
        assert_eq!(found(&format!("$ openssl rand -hex 32\n{hex}\n$ ls")), [hex]);
        assert_eq!(found(&format!("dev@box:~/app$ openssl rand -hex 32\r\n  {hex}  \r\n")), [hex]);
        let two = "head -c 32 /dev/urandom | base64\nq8Zk3vX9bT5mK2pL8rW1zY4nC7dE0fHj\nZx81kQm2Lp0vN7rT5yW3abcd\ndone";
        assert_eq!(found(two), ["q8Zk3vX9bT5mK2pL8rW1zY4nC7dE0fHj", "Zx81kQm2Lp0vN7rT5yW3abcd"]);
        let laravel = "> php artisan key:generate --show\nbase64:Zx81kQm2Lp0vN7rT5yW3q8Zk3vX9bT5mK2pL8rW1zY4=";
        assert_eq!(found(laravel), ["base64:Zx81kQm2Lp0vN7rT5yW3q8Zk3vX9bT5mK2pL8rW1zY4="]);
    }

    /// The word check and the line regex list the generators twice: each
    /// generator's line must pass both.
    #[test]
    fn every_generator_named_is_read() {
        let key = "Zx81kQm2Lp0vN7rT5yW3q8Zk3vX9bT5m";
        for command in [
            "openssl rand -base64 24",
            "gpg --gen-random --armor 1 24",
            "head -c 24 /dev/urandom | base64",
            "tr -dc A-Za-z0-9 </dev/urandom | head -c 32",
            "python3 -c 'import secrets; print(secrets.token_urlsafe(24))'",
            "python -c 'import os, base64; print(base64.b64encode(os.urandom(24)).decode())'",
            "python -c 'from django.core.management.utils import get_random_secret_key as k; print(k())'",
            "node -e \"console.log(require('crypto').randomBytes(24).toString('base64'))\"",
            "ruby -rsecurerandom -e 'puts SecureRandom.hex(16)'",
            "bin/rails secret",
            "mix phx.gen.secret",
            "php artisan key:generate --show",
        ] {
            assert_eq!(found(&format!("$ {command}\n{key}")), [key], "{command}");
        }
    }

    #[test]
    fn a_digest_code_and_prose_are_not_what_a_generator_printed() {
        let hex = "5bb870d42a59646eb9e84f9391031bd04d64791e53a6da6cce5029d1da0a4051";
        // The same 64 digits printed by a digest command are data.
        assert!(found(&format!("$ sha256sum release.tar.gz\n{hex}  release.tar.gz")).is_empty());
        assert!(found(&format!("$ git rev-parse HEAD\n{hex}")).is_empty());
        // Code that calls a generator prints nothing where it stands.
        let code = "from django.core.management.utils import get_random_secret_key\nSECRET_KEY_FALLBACKS_ENABLED\n";
        assert!(found(code).is_empty());
        assert!(found("    key = secrets.token_hex(32)\nreturn_value_of_the_function").is_empty());
        // Inside a command substitution the key is assigned, not printed.
        assert!(found("export KEY=$(openssl rand -hex 32)\nconfigured_the_service_ok").is_empty());
        // What follows and is not one token ends the printed lines.
        assert!(found("$ openssl rand -hex 32 > key.txt\nwrote the key to key.txt\nabcdefabcdef0123456789").is_empty());
    }
}
