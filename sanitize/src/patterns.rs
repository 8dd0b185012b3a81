//! Lore's own secret formats, for what the catalog (`catalog.rs`) does not
//! cover as an agent's context shows it: private-key blocks cut by a log
//! line, passwords inside URLs, bearer and basic credentials, `curl -u`,
//! `.npmrc` auth tokens, and a few provider formats kept as a floor under
//! the catalog. Each yields the secret's span, never the text around it.

use std::ops::Range;
use std::sync::{LazyLock, OnceLock};

use regex::{Regex, RegexSet};

use crate::placeholders::looks_random;

/// What a match must also pass to be a secret.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Check {
    /// The format says it all.
    Format,
    /// Generic patterns redact only values that look random.
    Random,
    /// Base64 of `user:password`, as HTTP Basic carries it ("basic
    /// initialisations" is prose).
    BasicCredentials,
}

/// One value pattern: the regex and which capture group is the secret (0 for
/// the whole match).
#[derive(Debug)]
struct ValuePattern {
    source: &'static str,
    /// Compiled when the set first finds the pattern in a text: most texts
    /// hold none of these formats, and all of them compiled cost a sidecar
    /// about 0.8 MiB it rarely uses.
    regex: OnceLock<Regex>,
    secret_group: usize,
    check: Check,
}

impl ValuePattern {
    fn regex(&self) -> &Regex {
        self.regex.get_or_init(|| Regex::new(self.source).expect("secret pattern compiles"))
    }
}

#[derive(Debug)]
pub(crate) struct Patterns {
    set: RegexSet,
    values: Vec<ValuePattern>,
}

/// (regex, secret group, check)
const VALUE_PATTERNS: &[(&str, usize, Check)] = &[
    // PEM private keys, with or without their END line (a cut log line).
    (
        r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(?s:.*?)(?:-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\z)",
        0,
        Check::Format,
    ),
    // Passwords inside URLs: scheme://user:password@host.
    // A password may hold '@' itself: the host starts after the last one.
    (r"\b[A-Za-z][A-Za-z0-9+.-]*://[^\s:/@]+:([^\s/]+)@", 1, Check::Format),
    // AWS access key ids.
    (r"\b((?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|APKA)[A-Z0-9]{16})\b", 1, Check::Format),
    // GitHub tokens.
    (r"\b((?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})", 1, Check::Format),
    // GitLab tokens (personal, pipeline trigger, deploy, runner, ...).
    (
        r"\b(gl(?:pat|ptt|dt|rt|cbt|imt|soat|ft|oas|agent)-[A-Za-z0-9_-]{20,}|GR1348941[A-Za-z0-9_-]{20,})",
        1,
        Check::Format,
    ),
    // Slack tokens and webhooks.
    (r"\b(xox[abposre]-[A-Za-z0-9-]{10,})", 1, Check::Format),
    (r"(https://hooks\.slack\.com/services/[A-Za-z0-9_/]+)", 1, Check::Format),
    // Stripe secret and restricted keys (publishable pk_ keys are public).
    (r"\b((?:sk|rk)_(?:live|test)_[A-Za-z0-9]{10,})", 1, Check::Format),
    // OpenAI keys.
    (r"\b(sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{32,})", 1, Check::Format),
    // SendGrid.
    (r"\b(SG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{16,64})", 1, Check::Format),
    // npm tokens, bare and in .npmrc.
    (r"\b(npm_[A-Za-z0-9]{36})\b", 1, Check::Format),
    (r"_authToken=([^\s]+)", 1, Check::Random),
    // PyPI upload tokens.
    (r"\b(pypi-AgE[A-Za-z0-9_-]{50,})", 1, Check::Format),
    // Telegram bot tokens.
    (r"\b([0-9]{8,10}:AA[A-Za-z0-9_-]{33})\b", 1, Check::Format),
    // Discord bot tokens.
    (r"\b([MNO][A-Za-z0-9_-]{23,25}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38})\b", 1, Check::Format),
    // Mailchimp API keys.
    (r"\b([0-9a-f]{32}-us[0-9]{1,2})\b", 1, Check::Format),
    // Google OAuth access tokens, Sourcegraph tokens, Azure DevOps PATs.
    (r"\b(ya29\.[0-9A-Za-z_-]{20,})", 1, Check::Format),
    (r"\b(sgp_(?:[a-f0-9]{16}_)?[a-f0-9]{40})\b", 1, Check::Format),
    (r"\b([a-zA-Z0-9]{76}AZDO[a-zA-Z0-9]{4})\b", 1, Check::Format),
    // A .netrc entry's password.
    (r"\bmachine\s+\S+\s+login\s+\S+\s+password\s+(\S+)", 1, Check::Format),
    // JFrog Artifactory API keys.
    (r"\b(AKC[A-Za-z0-9]{10,})\b", 1, Check::Format),
    // Azure storage account keys in connection strings.
    (r"AccountKey=([A-Za-z0-9+/=]{40,})", 1, Check::Format),
    // JWTs (header.payload[.signature]).
    (r"\b(eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}(?:\.[A-Za-z0-9_-]+)?)", 1, Check::Format),
    // Bearer and Basic credentials, and Authorization headers.
    (r"(?i)\bbearer\s+([A-Za-z0-9._~+/=-]{12,})", 1, Check::Random),
    (r"(?i)\bbasic\s+([A-Za-z0-9+/]{8,}={0,2})", 1, Check::BasicCredentials),
    // Any scheme: Token, SSWS (Okta), Digest, ApiKey.
    (r#"(?i)\bauthorization["']?\s*[:=]\s*["']?(?:[a-z][a-z0-9-]{1,20}\s+)?([^\s"']{8,})"#, 1, Check::Random),
    // curl -u user:password.
    (r#"(?:^|\s)(?:-u|--user)\s+["']?[^\s:"']+:([^\s"']+)"#, 1, Check::Random),
];

static PATTERNS: LazyLock<Patterns> = LazyLock::new(|| {
    let sources: Vec<&str> = VALUE_PATTERNS.iter().map(|(source, _, _)| *source).collect();
    Patterns {
        set: RegexSet::new(&sources).expect("secret patterns compile"),
        values: VALUE_PATTERNS
            .iter()
            .map(|(source, secret_group, check)| ValuePattern {
                source,
                regex: OnceLock::new(),
                secret_group: *secret_group,
                check: *check,
            })
            .collect(),
    }
});

pub(crate) fn compiled() -> &'static Patterns {
    &PATTERNS
}

/// Base64 that decodes to `user:password`.
fn is_basic_credentials(value: &str) -> bool {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD
        .decode(value)
        .is_ok_and(|bytes| std::str::from_utf8(&bytes).is_ok_and(|text| text.contains(':') && !text.contains('\n')))
}

impl Patterns {
    /// The spans of every secret these patterns find in `text`.
    pub(crate) fn find(&self, text: &str, spans: &mut Vec<Range<usize>>) {
        for index in self.set.matches(text).into_iter() {
            let pattern = &self.values[index];
            for captures in pattern.regex().captures_iter(text) {
                let Some(secret) = captures.get(pattern.secret_group) else { continue };
                let passes = match pattern.check {
                    Check::Format => true,
                    Check::Random => looks_random(secret.as_str()),
                    Check::BasicCredentials => is_basic_credentials(secret.as_str()),
                };
                if !passes {
                    continue;
                }
                spans.push(secret.range());
            }
        }
    }
}
