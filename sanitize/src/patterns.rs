//! The secret patterns. Provider formats follow the published token formats
//! (and detect-secrets / gitleaks rules); the generic rules (assignments,
//! entropy) only fire on values that look random, so placeholders such as
//! `${NPM_TOKEN}` or `"insert_key_here"` survive.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::{Captures, Regex, RegexSet};

use crate::REDACTED;

/// One value pattern: the regex and which capture group is the secret (0 for
/// the whole match).
#[derive(Debug)]
struct ValuePattern {
    regex: Regex,
    secret_group: usize,
    /// Generic patterns redact only values that look random.
    generic: bool,
}

#[derive(Debug)]
pub(crate) struct Patterns {
    set: RegexSet,
    values: Vec<ValuePattern>,
    entropy_token: Regex,
}

/// (regex, secret group, generic)
const VALUE_PATTERNS: &[(&str, usize, bool)] = &[
    // PEM private keys, with or without their END line (a cut log line).
    (
        r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(?s:.*?)(?:-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\z)",
        0,
        false,
    ),
    // Passwords inside URLs: scheme://user:password@host.
    (r"\b[A-Za-z][A-Za-z0-9+.-]*://[^\s:/@]+:([^\s@/]+)@", 1, false),
    // AWS access key ids.
    (r"\b((?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|APKA)[A-Z0-9]{16})\b", 1, false),
    // GitHub tokens.
    (r"\b((?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})", 1, false),
    // GitLab tokens (personal, pipeline trigger, deploy, runner, ...).
    (r"\b(gl(?:pat|ptt|dt|rt|cbt|imt|soat|ft|oas|agent)-[A-Za-z0-9_-]{20,}|GR1348941[A-Za-z0-9_-]{20,})", 1, false),
    // Slack tokens and webhooks.
    (r"\b(xox[abposre]-[A-Za-z0-9-]{10,})", 1, false),
    (r"(https://hooks\.slack\.com/services/[A-Za-z0-9_/]+)", 1, false),
    // Stripe secret and restricted keys (publishable pk_ keys are public).
    (r"\b((?:sk|rk)_(?:live|test)_[A-Za-z0-9]{10,})", 1, false),
    // OpenAI keys.
    (r"\b(sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{32,})", 1, false),
    // SendGrid.
    (r"\b(SG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{16,64})", 1, false),
    // npm tokens, bare and in .npmrc.
    (r"\b(npm_[A-Za-z0-9]{36})\b", 1, false),
    (r"_authToken=([^\s]+)", 1, true),
    // PyPI upload tokens.
    (r"\b(pypi-AgE[A-Za-z0-9_-]{50,})", 1, false),
    // Telegram bot tokens.
    (r"\b([0-9]{8,10}:AA[A-Za-z0-9_-]{33})\b", 1, false),
    // Discord bot tokens.
    (r"\b([MNO][A-Za-z0-9_-]{23,25}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38})\b", 1, false),
    // Mailchimp API keys.
    (r"\b([0-9a-f]{32}-us[0-9]{1,2})\b", 1, false),
    // JFrog Artifactory API keys.
    (r"\b(AKC[A-Za-z0-9]{10,})\b", 1, false),
    // Azure storage account keys in connection strings.
    (r"AccountKey=([A-Za-z0-9+/=]{40,})", 1, false),
    // JWTs (header.payload[.signature]).
    (r"\b(eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}(?:\.[A-Za-z0-9_-]+)?)", 1, false),
    // Bearer and Basic credentials, and Authorization headers.
    (r"(?i)\b(?:bearer|basic)\s+([A-Za-z0-9._~+/=-]{12,})", 1, false),
    (r#"(?i)\bauthorization["']?\s*[:=]\s*["']?(?:token\s+)?([^\s"']{8,})"#, 1, true),
    // curl -u user:password.
    (r#"(?:^|\s)(?:-u|--user)\s+["']?[^\s:"']+:([^\s"']+)"#, 1, true),
    // key = value assignments of secret-looking keys (config lines, env
    // files, command lines, JSON inside strings).
    (
        r#"(?i)[A-Za-z0-9_.-]*(?:password|passwd|passphrase|pwd|secret|token|api[_.-]?key|access[_.-]?key|auth[_.-]?key|private[_.-]?key|credentials?)[A-Za-z0-9_.-]*["']?\s*(?::=|=>|:|=)\s*["']?([^\s"',;}]{6,})"#,
        1,
        true,
    ),
];

/// Runs of base64/url-safe characters that the entropy rule inspects.
const ENTROPY_TOKEN: &str = r"[A-Za-z0-9+/=_-]{20,}";
/// Shannon entropy (bits per character) above which a mixed-case,
/// digit-bearing token of at least 20 characters is taken for a secret. A
/// random base64 string of 20 characters scores about 4.1, identifiers and
/// words stay well below.
const ENTROPY_THRESHOLD: f64 = 3.8;

static PATTERNS: LazyLock<Patterns> = LazyLock::new(|| {
    let sources: Vec<&str> = VALUE_PATTERNS.iter().map(|(source, _, _)| *source).collect();
    Patterns {
        set: RegexSet::new(&sources).expect("secret patterns compile"),
        values: VALUE_PATTERNS
            .iter()
            .map(|(source, secret_group, generic)| ValuePattern {
                regex: Regex::new(source).expect("secret pattern compiles"),
                secret_group: *secret_group,
                generic: *generic,
            })
            .collect(),
        entropy_token: Regex::new(ENTROPY_TOKEN).expect("entropy token regex compiles"),
    }
});

pub(crate) fn compiled() -> &'static Patterns {
    &PATTERNS
}

impl Patterns {
    /// True when a JSON key names a secret. Compared lowercase with `-`, `_`,
    /// `.` and spaces removed, so `API-Key`, `api_key` and `apiKey` agree.
    pub(crate) fn is_secret_key(&self, key: &str) -> bool {
        let normalized: String = key
            .chars()
            .filter(|character| !matches!(character, '-' | '_' | '.' | ' '))
            .flat_map(char::to_lowercase)
            .collect();
        const EXACT: &[&str] = &["pwd", "pass", "auth", "pin", "otp"];
        const CONTAINS: &[&str] = &[
            "password",
            "passwd",
            "passphrase",
            "secret",
            "apikey",
            "accesskey",
            "privatekey",
            "signingkey",
            "encryptionkey",
            "credential",
            "authorization",
            "cookie",
            "connectionstring",
        ];
        // "token" is a secret in auth_token or csrfToken, not in max_tokens,
        // token_count or tokenizer.
        const TOKEN_NOT_SECRET: &[&str] =
            &["tokens", "tokencount", "tokenizer", "tokenlimit", "tokentype", "tokenusage"];
        EXACT.contains(&normalized.as_str())
            || CONTAINS.iter().any(|word| normalized.contains(word))
            || (normalized.contains("token") && !TOKEN_NOT_SECRET.iter().any(|word| normalized.contains(word)))
    }

    /// Replaces every secret in `text`; returns the text and how many
    /// secrets were replaced.
    pub(crate) fn redact<'a>(&self, text: &'a str) -> (Cow<'a, str>, u32) {
        let mut redactions = 0;
        let mut current: Cow<'a, str> = Cow::Borrowed(text);
        let matched: Vec<usize> = self.set.matches(text).into_iter().collect();
        for index in matched {
            let pattern = &self.values[index];
            let replaced = pattern.regex.replace_all(&current, |captures: &Captures<'_>| {
                let whole = captures.get(0).expect("group 0 always matches");
                let Some(secret) = captures.get(pattern.secret_group) else {
                    return whole.as_str().to_owned();
                };
                if secret.as_str() == REDACTED || (pattern.generic && !looks_random(secret.as_str())) {
                    return whole.as_str().to_owned();
                }
                redactions += 1;
                let start = secret.start() - whole.start();
                let end = secret.end() - whole.start();
                format!("{}{REDACTED}{}", &whole.as_str()[..start], &whole.as_str()[end..])
            });
            if let Cow::Owned(owned) = replaced {
                current = Cow::Owned(owned);
            }
        }
        let (entropy_redacted, entropy_redactions) = self.redact_high_entropy(&current);
        if entropy_redactions > 0 {
            redactions += entropy_redactions;
            current = Cow::Owned(entropy_redacted.into_owned());
        }
        (current, redactions)
    }

    fn redact_high_entropy<'a>(&self, text: &'a str) -> (Cow<'a, str>, u32) {
        // Most text has no secret: look before building a new string.
        if !self.entropy_token.find_iter(text).any(|token| is_high_entropy_secret(token.as_str())) {
            return (Cow::Borrowed(text), 0);
        }
        let mut redactions = 0;
        let replaced = self.entropy_token.replace_all(text, |captures: &Captures<'_>| {
            let token = captures.get(0).expect("group 0 always matches").as_str();
            if is_high_entropy_secret(token) {
                redactions += 1;
                REDACTED.to_owned()
            } else {
                token.to_owned()
            }
        });
        (replaced, redactions)
    }
}

/// Prefixes of keys that are public by design (Stripe publishable keys).
const PUBLIC_KEY_PREFIXES: &[&str] = &["pk_live_", "pk_test_"];
/// In random base62 about 60% of neighbouring characters switch between
/// upper case, lower case and digits; in CamelCase identifiers, whose words
/// are runs of lower case, far fewer do.
const MIN_CLASS_SWITCH_RATIO: f64 = 0.4;

/// A long token of mixed case and digits with high entropy that switches
/// character class like random text does, and is not a path or a public key.
fn is_high_entropy_secret(token: &str) -> bool {
    if PUBLIC_KEY_PREFIXES.iter().any(|prefix| token.starts_with(prefix)) {
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
    shannon_entropy(token) >= ENTROPY_THRESHOLD && class_switch_ratio(token) >= MIN_CLASS_SWITCH_RATIO
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

fn shannon_entropy(text: &str) -> f64 {
    let mut counts = [0u32; 256];
    for byte in text.bytes() {
        counts[byte as usize] += 1;
    }
    let length = text.len() as f64;
    counts
        .iter()
        .filter(|count| **count > 0)
        .map(|count| {
            let probability = f64::from(*count) / length;
            -probability * probability.log2()
        })
        .sum()
}

/// A value of a generic rule must look random to be redacted: not a
/// placeholder, at least 6 characters, and either a digit or symbol in it or
/// mixed case. `notapassword` and `insert_key_here` are not secrets.
fn looks_random(value: &str) -> bool {
    if value.chars().count() < 6 || looks_like_placeholder(value) {
        return false;
    }
    let has_digit = value.bytes().any(|byte| byte.is_ascii_digit());
    let has_upper = value.bytes().any(|byte| byte.is_ascii_uppercase());
    let has_lower = value.bytes().any(|byte| byte.is_ascii_lowercase());
    let has_symbol = value.bytes().any(|byte| !byte.is_ascii_alphanumeric() && byte != b'_');
    has_digit || has_symbol || (has_upper && has_lower)
}

/// Template variables and stand-ins that are not secrets: `$API_KEY`,
/// `${NPM_TOKEN}`, `%s`, `%(name)s`, `<token>`, `{{ secret }}`, `<%= x %>`,
/// `insert_key_here`, `your-api-key`, `xxxxxxxx`, `********`.
pub fn looks_like_placeholder(value: &str) -> bool {
    static PLACEHOLDER: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"(?ix)^(?:
                \$\{[^}]*\}? | \$[A-Z_][A-Z0-9_]* | %[sd] | %\([a-z_]+\)[sd] | <[^>]*>? | \{\{.*\}\}? | <%.*
                | (?:insert|your|enter|put|add)[_-].*(?:here|key|token|secret|password)
                | .*[_-]here | x{4,} | \*{3,} | \.{3,} | changeme | example | placeholder | redacted | \[redacted\]
            )$",
        )
        .expect("placeholder regex compiles")
    });
    PLACEHOLDER.is_match(value.trim_matches(|character| matches!(character, '"' | '\'')))
}
