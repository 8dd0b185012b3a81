//! Finding secrets in free text and replacing them. Every layer reports the
//! spans of the secrets it sees in the original text: the catalog, Lore's
//! own formats, the key/value readers, entropy. Overlapping spans merge, and
//! each merged span becomes one `[REDACTED]`, so the layers never redact
//! each other's output and a second pass finds nothing more.

use std::borrow::Cow;
use std::ops::Range;

use crate::placeholders::is_format_stand_in;
use crate::{PersonalData, REDACTED, assignments, catalog, entropy, patterns, personal};

/// Replaces every secret in `text`; returns the text and how many secrets
/// were replaced.
pub(crate) fn redact<'a>(text: &'a str, personal: &PersonalData) -> (Cow<'a, str>, u32) {
    let spans = secret_spans(text, personal);
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
pub(crate) fn secret_spans(text: &str, personal: &PersonalData) -> Vec<Range<usize>> {
    let mut spans = Vec::new();
    let catalog = catalog::compiled();
    let mut findings = Vec::new();
    catalog.find(text, &mut findings);
    spans.extend(findings.into_iter().map(|finding| finding.secret));
    patterns::compiled().find(text, &mut spans);
    // Formats match stand-ins too (`AKIAIOSFODNN7EXAMPLE`, `sk_live_xxxx…`).
    spans.retain(|span| !text.get(span.clone()).is_some_and(is_format_stand_in));
    assignments::find(text, &mut spans);
    entropy::find(text, &mut spans);
    personal::find(text, personal, &mut spans);
    let markers: Vec<Range<usize>> =
        text.match_indices(REDACTED).map(|(start, marker)| start..start + marker.len()).collect();
    merge(text, spans, &markers)
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
