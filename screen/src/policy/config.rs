//! Configuration lines inside a fix or a lesson: what `.npmrc`, `pip.conf`,
//! `.gitconfig`, `.condarc`, `.yarnrc.yml` and cargo's config would do
//! with the `key = value` (or `key: value`) a text asks to put in them.
//! The keys are the ones those files document; a line is read only when it
//! is the whole line, as a file holds it.

use std::sync::LazyLock;

use regex::Regex;

use super::Risk;
use super::rules::{NO_VERIFY_FLAGS, VERIFY_SWITCHES, is_known_source, is_off};

static LINE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(?m)^[ \t]*(?:[-*][ \t]+)?([@a-z0-9_.:/-]+?)[ \t]*(?:=|:[ \t])[ \t]*["']?([^"'\n]*?)["']?[ \t]*$"#)
        .expect("config line pattern")
});

/// A configuration line of the text that does something risky, with where
/// it starts and ends.
pub struct Line {
    pub risk: Risk,
    pub start: usize,
    pub end: usize,
}

/// A JSON pair anywhere (`"http.proxyStrictSSL": false`), as editor and
/// tool settings hold them.
static PAIR: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#""([@a-z0-9_.:/-]+)"\s*:\s*("[^"\n]*"|true|false|[0-9]+)"#).expect("json pair pattern")
});

pub fn risky_lines(text: &str, own_hosts: &[String]) -> Vec<Line> {
    let mut found = Vec::new();
    for captures in PAIR.captures_iter(text) {
        let (Some(whole), Some(key), Some(value)) = (captures.get(0), captures.get(1), captures.get(2)) else {
            continue;
        };
        if let Some(risk) = risk_of(key.as_str(), value.as_str().trim_matches('"'), own_hosts) {
            found.push(Line { risk, start: whole.start(), end: whole.end() });
        }
    }
    for captures in LINE.captures_iter(text) {
        let (Some(whole), Some(key), Some(value)) = (captures.get(0), captures.get(1), captures.get(2)) else {
            continue;
        };
        if let Some(risk) = risk_of(key.as_str(), value.as_str().trim(), own_hosts) {
            found.push(Line { risk, start: key.start(), end: whole.end() });
        }
    }
    found
}

fn risk_of(key: &str, value: &str, own_hosts: &[String]) -> Option<Risk> {
    let name = key.rsplit('.').next().unwrap_or(key);
    let source =
        |value: &str| (value.contains("://") && !is_known_source(value, own_hosts)).then_some(Risk::ChangesSource);
    match name {
        "registry"
        | "index-url"
        | "extra-index-url"
        | "index_url"
        | "extra_index_url"
        | "npmregistryserver"
        | "goproxy"
        | "pip_index_url"
        | "pip_extra_index_url"
        | "npm_config_registry" => source(value),
        _ if key.ends_with(":registry") => source(value),
        "insteadof" | "pushinsteadof" | "replace-with" => Some(Risk::ChangesSource),
        "strict-ssl" | "strict_ssl" | "sslverify" | "ssl_verify" | "enablestrictssl" | "verify_ssl"
        | "check-revoke" | "proxystrictssl" | "rejectunauthorized" | "strictssl" => {
            is_off(value).then_some(Risk::DisablesVerification)
        }
        "trusted-host" | "trusted_host" | "pip_trusted_host" => {
            (!value.is_empty()).then_some(Risk::DisablesVerification)
        }
        _ if VERIFY_SWITCHES.contains(&name) => is_off(value).then_some(Risk::DisablesVerification),
        _ if NO_VERIFY_FLAGS.contains(&name) => Some(Risk::DisablesVerification),
        "stricthostkeychecking" => (value == "no").then_some(Risk::DisablesVerification),
        "hookspath" => Some(Risk::BypassesChecks),
        "insecureskipverify" | "insecure-skip-tls-verify" | "insecure_skip_tls_verify" | "tlsinsecureskipverify" => {
            matches!(value, "true" | "yes" | "1").then_some(Risk::DisablesVerification)
        }
        _ => None,
    }
}
