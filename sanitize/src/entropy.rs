//! The last layer: a long token that looks random is taken for a secret
//! even with nothing around it to say so, unless it is data: a digest
//! (hex, or after `sha256-`/`sha512-`/`sha256:`), a path, a public key, a
//! stand-in, or a blob too long to be a credential.

use std::ops::Range;
use std::sync::LazyLock;

use regex::Regex;

use crate::placeholders::is_stand_in;

/// Runs of base64/url-safe characters that the entropy rule inspects.
const TOKEN: &str = r"[A-Za-z0-9+/=_-]{20,}";
/// Shannon entropy (bits per character) above which a mixed-case,
/// digit-bearing token of at least 20 characters is taken for a secret. A
/// random base64 string of 20 characters scores about 4.1, identifiers and
/// words stay well below.
const THRESHOLD: f64 = 3.8;
/// Credentials are short; longer runs are encoded data (an image, a
/// certificate body, a compressed payload).
const MAX_TOKEN_CHARS: usize = 128;
/// Prefixes of keys that are public by design (Stripe publishable keys).
const PUBLIC_KEY_PREFIXES: &[&str] = &["pk_live_", "pk_test_"];
/// In random base62 about 60% of neighbouring characters switch between
/// upper case, lower case and digits; in CamelCase identifiers, whose words
/// are runs of lower case, far fewer do.
const MIN_CLASS_SWITCH_RATIO: f64 = 0.4;

/// The spans of random-looking tokens in `text`.
pub(crate) fn find(text: &str, spans: &mut Vec<Range<usize>>) {
    static TOKENS: LazyLock<Regex> = LazyLock::new(|| Regex::new(TOKEN).expect("entropy token regex compiles"));
    // Password hashes (`$2b$12$…`, `$6$salt$…`) are data a login checks, not
    // a credential one can present.
    static HASHES: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"\$(?:1|2[abxy]?|5|6|7|8|9|y|gy|krb5asrep|krb5tgs)\$[^\s\x22']+").expect("hash regex compiles")
    });
    let hashes: Vec<Range<usize>> = HASHES.find_iter(text).map(|hash| hash.range()).collect();
    for token in TOKENS.find_iter(text) {
        let in_hash = hashes.iter().any(|hash| hash.start <= token.start() && token.end() <= hash.end);
        // `payload=eyJ…`: the token is what follows a name and its `=`.
        let start = token.start() + assigned_name_len(token.as_str());
        let value = &text[start..token.end()];
        if !in_hash && value.len() >= 20 && is_secret_token(value) && !follows_digest_label(&text[..start]) {
            spans.push(start..token.end());
        }
    }
}

/// `sha512-...` (subresource integrity, npm locks), `sha256:...` (image
/// digests), `md5=...`: what follows is a checksum.
fn follows_digest_label(before: &str) -> bool {
    let tail = before.trim_end_matches(['-', ':', '=']);
    if tail.len() == before.len() {
        return false;
    }
    let label: String =
        tail.chars().rev().take_while(char::is_ascii_alphanumeric).collect::<String>().chars().rev().collect();
    let label = label.to_ascii_lowercase();
    label.starts_with("sha") || label.starts_with("md5") || label == "integrity" || label == "checksum"
}

/// A long token of mixed case and digits with high entropy that switches
/// character class like random text does, and is not a path, a public key
/// or data.
fn is_secret_token(token: &str) -> bool {
    if token.len() > MAX_TOKEN_CHARS || PUBLIC_KEY_PREFIXES.iter().any(|prefix| token.starts_with(prefix)) {
        return false;
    }
    if token.split('=').any(is_labelled_digest) || encodes_text(token) {
        return false;
    }
    let has_upper = token.bytes().any(|byte| byte.is_ascii_uppercase());
    let has_lower = token.bytes().any(|byte| byte.is_ascii_lowercase());
    let has_digit = token.bytes().any(|byte| byte.is_ascii_digit());
    if !(has_upper && has_lower && has_digit) {
        return false;
    }
    // A path: some segment is a plain lowercase word ("src", "home").
    if token.contains('/')
        && token.split('/').any(|segment| segment.len() >= 2 && segment.bytes().all(|byte| byte.is_ascii_lowercase()))
    {
        return false;
    }
    shannon(token.as_bytes()) >= THRESHOLD && class_switch_ratio(token) >= MIN_CLASS_SWITCH_RATIO && !is_stand_in(token)
}

/// The length of a leading `name=` (a lowercase or snake-case name), or 0.
fn assigned_name_len(token: &str) -> usize {
    match token.find('=') {
        Some(at) if at > 0 && token[..at].bytes().all(|byte| byte.is_ascii_lowercase() || byte == b'_') => at + 1,
        _ => 0,
    }
}

/// `sha512-…` (subresource integrity), `sha1-…`, `md5-…`.
fn is_labelled_digest(part: &str) -> bool {
    let lower = part.get(..7).unwrap_or(part).to_ascii_lowercase();
    let label = lower.split('-').next().unwrap_or_default();
    part.contains('-') && (label.starts_with("sha") || label == "md5") && label.len() <= 6
}

/// Base64 whose bytes are mostly printable text is encoded data (a config,
/// a message); a random key decodes to bytes that mostly are not.
fn encodes_text(token: &str) -> bool {
    use base64::Engine as _;
    use base64::engine::general_purpose::{STANDARD, URL_SAFE};
    if token.len() < 24 || !token.len().is_multiple_of(4) {
        return false;
    }
    let Ok(bytes) = STANDARD.decode(token).or_else(|_| URL_SAFE.decode(token)) else { return false };
    let printable = bytes.iter().filter(|byte| byte.is_ascii_graphic() || **byte == b' ' || **byte == b'\n').count();
    printable * 10 >= bytes.len() * 9
}

fn class_switch_ratio(token: &str) -> f64 {
    fn class(byte: u8) -> u8 {
        match byte {
            b'A'..=b'Z' => 0,
            b'a'..=b'z' => 1,
            b'0'..=b'9' => 2,
            _ => 3,
        }
    }
    let bytes = token.as_bytes();
    let switches = bytes.windows(2).filter(|pair| class(pair[0]) != class(pair[1])).count();
    switches as f64 / (bytes.len() - 1) as f64
}

/// Shannon entropy in bits per byte, as gitleaks computes it.
pub(crate) fn shannon(bytes: &[u8]) -> f64 {
    let mut counts = [0u32; 256];
    for byte in bytes {
        counts[*byte as usize] += 1;
    }
    let length = bytes.len() as f64;
    counts
        .iter()
        .filter(|count| **count > 0)
        .map(|count| {
            let probability = f64::from(*count) / length;
            -probability * probability.log2()
        })
        .sum()
}
