//! Sanitization of agent action context before it is stored anywhere: on the
//! server before a row is written, and in the sidecar before a record touches
//! the spool. One implementation, shared, so both redact the same way.
//!
//! What it does to a JSON value, in one walk:
//! - **Secret keys**: a string under a key that looks like a secret
//!   (`password`, `api_key`, `Authorization`, `client_secret`, ... matched
//!   case-insensitively on the key with `_`/`-` removed, at any depth, inside
//!   arrays) becomes `[REDACTED]`. Numbers and booleans stay (`max_tokens: 4096`
//!   is not a secret).
//! - **Secret values** anywhere, in layers (`redact.rs`): the provider
//!   formats of maintained catalogs (Kingfisher's, gitleaks' and
//!   CredSweeper's rules, `catalog/`; Kingfisher's by default), whose rules'
//!   own allowlists and filters also spare what they know is no secret
//!   from every layer; Lore's
//!   own formats for what agents' contexts hold (`patterns.rs`: private-key
//!   blocks, URL passwords, bearer and basic credentials); the values of
//!   secret-named keys in env, shell-flag, YAML, TOML, JSON, XML, HCL,
//!   Makefile and Gradle syntax (`assignments.rs`); values after a secret
//!   word that look random enough, in any form (`context.rs`); and long
//!   random tokens
//!   that are not digests or data (`entropy.rs`); and what a command that
//!   makes secrets printed after it (`generated.rs`: `openssl rand -hex
//!   32`'s digits, which alone read as a digest). Placeholders, references
//!   and the names of secrets are spared (`placeholders.rs`), and so is
//!   public key material: certificates, public keys, signatures
//!   (`public.rs`). Only the
//!   secret part of a string is replaced, so `https://user:[REDACTED]@host/path`
//!   keeps what helps debugging.
//! - **Personal data** (`personal.rs`): card numbers (Luhn), IBANs
//!   (mod-97), US and UK national ids, e-mail addresses and phone numbers,
//!   each class switchable (`PersonalData`).
//! - **Limits**: strings longer than `max_string_chars` are cut and marked
//!   `... [TRUNCATED]`; NUL bytes (which PostgreSQL rejects in text and JSON)
//!   are removed from keys and strings; -0.0 becomes 0 (PostgreSQL's numeric
//!   has no negative zero, and the hash chain needs a stable value).
//!
//! The caller learns how many values were redacted and whether anything was
//! truncated, never what the secrets were.

#![forbid(unsafe_code)]

mod assignments;
mod catalog;
mod context;
mod entropy;
mod generated;
mod keys;
mod patterns;
mod personal;
mod placeholders;
mod public;
mod redact;

use std::borrow::Cow;

use serde_json::Value;

pub use catalog::Catalogs;
pub use context::ContextThresholds;
pub use personal::PersonalData;
pub use placeholders::looks_like_placeholder;

/// The rule catalogs shipped: how many rules, which of their rules do not
/// apply to an action's context, and what of their filters is not
/// evaluated (each with why). Reads them on first use, so a server that
/// calls this at start pays that once, up front.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatalogSummary {
    pub rules: usize,
    pub unused: Vec<(String, String)>,
    pub unevaluated: Vec<(String, String)>,
}

pub fn catalog_summary() -> CatalogSummary {
    catalog_summary_of(Catalogs::default())
}

/// The same for any choice of catalogs (the evaluation and the benchmarks
/// weigh them all).
pub fn catalog_summary_of(catalogs: Catalogs) -> CatalogSummary {
    catalog::summary(catalogs)
}

/// Marker that replaces a secret.
pub const REDACTED: &str = "[REDACTED]";
/// Marker appended to a cut string.
pub const TRUNCATED_MARKER: &str = "... [TRUNCATED]";

/// Long enough for a stack-trace line or a command, short enough that one
/// action cannot carry a whole file.
pub const DEFAULT_MAX_STRING_CHARS: usize = 1000;

/// Sanitization limits.
#[derive(Debug, Clone, PartialEq)]
pub struct SanitizeConfig {
    /// Strings longer than this many characters are truncated.
    pub max_string_chars: usize,
    /// The classes of personal data redacted.
    pub personal: PersonalData,
    /// How random a value after a secret word must look to be redacted.
    pub context: ContextThresholds,
    /// Which catalogs of provider formats run.
    pub catalogs: Catalogs,
    /// Whether gitleaks' generic rule's allowlists (`credentialsId`,
    /// `keyboard`, its stopwords) spare what Lore's keyword layers find.
    pub generic_allowlist: bool,
}

impl Default for SanitizeConfig {
    fn default() -> Self {
        Self {
            max_string_chars: DEFAULT_MAX_STRING_CHARS,
            personal: PersonalData::default(),
            context: ContextThresholds::default(),
            catalogs: Catalogs::default(),
            generic_allowlist: true,
        }
    }
}

/// What sanitization changed.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Report {
    /// Secrets replaced by `[REDACTED]`.
    pub redactions: u32,
    /// True when a string was cut to the length limit.
    pub truncated: bool,
    /// True when NUL bytes were removed.
    pub nul_bytes_removed: bool,
}

impl Report {
    fn merge(&mut self, other: Report) {
        self.redactions += other.redactions;
        self.truncated |= other.truncated;
        self.nul_bytes_removed |= other.nul_bytes_removed;
    }
}

/// Redacts and truncates. Cheap to clone; build one and share it.
#[derive(Debug, Clone)]
pub struct Sanitizer {
    config: SanitizeConfig,
}

impl Default for Sanitizer {
    fn default() -> Self {
        Self::new(SanitizeConfig::default())
    }
}

impl Sanitizer {
    pub fn new(config: SanitizeConfig) -> Self {
        Self { config }
    }

    pub fn config(&self) -> &SanitizeConfig {
        &self.config
    }

    /// Sanitizes a JSON value in place.
    pub fn sanitize_value(&self, value: &mut Value) -> Report {
        let mut report = Report::default();
        self.walk(value, false, &mut report);
        report
    }

    /// Sanitizes free text (an error message, a summary): secret values are
    /// redacted, NUL bytes removed, the length capped.
    pub fn sanitize_text(&self, text: &str) -> (String, Report) {
        let mut report = Report::default();
        let text = self.clean_string(text, &mut report);
        (text, report)
    }

    fn walk(&self, value: &mut Value, under_secret_key: bool, report: &mut Report) {
        match value {
            Value::String(text) => {
                if under_secret_key && !text.is_empty() && !looks_like_placeholder(text) {
                    *text = REDACTED.to_owned();
                    report.redactions += 1;
                } else {
                    let cleaned = self.clean_string(text, report);
                    *text = cleaned;
                }
            }
            Value::Array(items) => {
                for item in items {
                    self.walk(item, under_secret_key, report);
                }
            }
            Value::Object(map) => {
                // Keys with NUL bytes must be rebuilt; keys are rarely dirty,
                // so only rebuild the map when one is.
                if map.keys().any(|key| key.contains('\0')) {
                    report.nul_bytes_removed = true;
                    let entries: Vec<(String, Value)> = std::mem::take(map).into_iter().collect();
                    for (key, entry) in entries {
                        map.insert(key.replace('\0', ""), entry);
                    }
                }
                for (key, entry) in map.iter_mut() {
                    let secret = under_secret_key || keys::is_secret_key(key);
                    self.walk(entry, secret, report);
                }
            }
            Value::Number(number) => {
                if number.as_f64().is_some_and(|float| float == 0.0 && float.is_sign_negative()) {
                    *value = Value::from(0);
                }
            }
            Value::Bool(_) | Value::Null => {}
        }
    }

    fn clean_string(&self, text: &str, report: &mut Report) -> String {
        let mut text: Cow<'_, str> = Cow::Borrowed(text);
        if text.contains('\0') {
            text = Cow::Owned(text.replace('\0', ""));
            report.nul_bytes_removed = true;
        }
        let (redacted, redactions) = redact::redact(&text, &self.config);
        if redactions > 0 {
            report.redactions += redactions;
            text = Cow::Owned(redacted.into_owned());
        }
        let mut text = text.into_owned();
        if let Some((cut_at, _)) = text.char_indices().nth(self.config.max_string_chars) {
            text.truncate(cut_at);
            text.push_str(TRUNCATED_MARKER);
            report.truncated = true;
        }
        text
    }
}

/// Sanitizes several values and texts of one record into one report.
pub fn merge_reports(reports: impl IntoIterator<Item = Report>) -> Report {
    let mut total = Report::default();
    for report in reports {
        total.merge(report);
    }
    total
}

#[cfg(test)]
mod tests;
