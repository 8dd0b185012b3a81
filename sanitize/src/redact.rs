//! Finding secrets in free text and replacing them. Every layer reports the
//! spans of the secrets it sees in the original text: the catalog, Lore's
//! own formats, the key/value readers, entropy. Overlapping spans merge, and
//! each merged span becomes one `[REDACTED]`, so the layers never redact
//! each other's output and a second pass finds nothing more.

use std::borrow::Cow;
use std::ops::Range;

use crate::placeholders::{is_format_stand_in, is_reference, is_secret_name};
use crate::{REDACTED, SanitizeConfig, assignments, catalog, context, entropy, generated, patterns, personal, public};

/// Replaces every secret in `text`; returns the text and how many secrets
/// were replaced.
pub(crate) fn redact<'a>(text: &'a str, config: &SanitizeConfig) -> (Cow<'a, str>, u32) {
    let spans = secret_spans(text, config);
    if spans.is_empty() {
        return (Cow::Borrowed(text), 0);
    }
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for span in &spans {
        out.push_str(&text[at..span.start]);
        out.push_str(REDACTED);
        at = span.end;
    }
    out.push_str(&text[at..]);
    (Cow::Owned(out), spans.len() as u32)
}

/// The merged, ordered spans of the secrets in `text`.
pub(crate) fn secret_spans(text: &str, config: &SanitizeConfig) -> Vec<Range<usize>> {
    let mut catalogs = catalog::Findings::default();
    catalog::find(text, config.catalogs, &mut catalogs);
    // What a catalog rule matched and then declared no secret (its
    // allowlist, filter or entropy floor) is not one for Lore's own layers
    // either, unless another rule finds a secret there (Kingfisher
    // discards an imported rule's match that a better rule reports).
    let reported: Vec<Range<usize>> = catalogs.formats.iter().chain(&catalogs.secrets).cloned().collect();
    let found = |range: &Range<usize>| reported.iter().any(|span| span.start < range.end && range.start < span.end);
    let mut spared: Vec<Range<usize>> = catalogs.spared.iter().filter(|range| !found(range)).cloned().collect();
    // Formats match stand-ins too (`AKIAIOSFODNN7EXAMPLE`, `sk_live_xxxx…`),
    // and the catalogs' other rules (a value after a name or a secret word)
    // match what the key/value readers refuse: a reference, a secret's name.
    let mut spans = catalogs.formats;
    spans.retain(|span| !text.get(span.clone()).is_some_and(is_format_stand_in));
    let mut own = catalogs.secrets;
    patterns::compiled().find(text, &mut own);
    own.retain(|span| !text.get(span.clone()).is_some_and(is_not_a_secret_value));
    assignments::find(text, &mut own);
    context::find(text, &config.context, &mut own);
    entropy::find(text, &mut own);
    generated::find(text, &mut own);
    if config.generic_allowlist && !own.is_empty() {
        spared.extend(catalog::generic_near_misses(text).into_iter().filter(|range| !found(range)));
    }
    own.retain(|span| !within(span, &spared));
    spans.append(&mut own);
    // Public key material looks random and is made to be shared; a secret
    // layer's find inside it is data (an e-mail address inside it is
    // still personal data, found below).
    let public = public::ranges(text);
    spans.retain(|span| !within(span, &public));
    personal::find(text, &config.personal, &mut spans);
    let markers: Vec<Range<usize>> =
        text.match_indices(REDACTED).map(|(start, marker)| start..start + marker.len()).collect();
    merge(text, spans, &markers)
}

/// True when `span` lies inside one of `ranges`.
fn within(span: &Range<usize>, ranges: &[Range<usize>]) -> bool {
    ranges.iter().any(|range| range.start <= span.start && span.end <= range.end)
}

/// A stand-in, a reference to where the secret is, or a secret's name
/// (`prod-db-password`, `K8S_CRED`; `open_sesame` names nothing and may
/// well be the password).
fn is_not_a_secret_value(found: &str) -> bool {
    const SECRET_WORDS: &[&str] = &["pass", "pwd", "secret", "token", "key", "cred", "auth"];
    let value = found.trim_matches(|character| matches!(character, '"' | '\'' | '`'));
    let names_a_secret = || {
        let lower = value.to_ascii_lowercase();
        is_secret_name(value) && SECRET_WORDS.iter().any(|word| lower.contains(word))
    };
    let stand_in_word = || {
        const WORDS: &[&str] = &["password", "passwd", "secret", "token", "replace_me", "replaceme", "changeme"];
        WORDS.iter().any(|word| value.eq_ignore_ascii_case(word))
    };
    is_format_stand_in(value) || is_reference(value) || names_a_secret() || stand_in_word()
}

/// Widens spans to character boundaries (byte rules may cut one), drops
/// those inside an earlier `[REDACTED]` and merges the overlapping ones.
fn merge(text: &str, mut spans: Vec<Range<usize>>, markers: &[Range<usize>]) -> Vec<Range<usize>> {
    for span in &mut spans {
        while !text.is_char_boundary(span.start) {
            span.start -= 1;
        }
        while !text.is_char_boundary(span.end) {
            span.end += 1;
        }
    }
    spans.retain(|span| {
        !span.is_empty() && !markers.iter().any(|marker| marker.start <= span.start && span.end <= marker.end)
    });
    spans.sort_by_key(|span| (span.start, std::cmp::Reverse(span.end)));
    let mut merged: Vec<Range<usize>> = Vec::with_capacity(spans.len());
    for span in spans {
        match merged.last_mut() {
            Some(last) if span.start < last.end => last.end = last.end.max(span.end),
            _ => merged.push(span),
        }
    }
    merged
}
