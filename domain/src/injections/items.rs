//! InjectionLedger items from what the domains answer: a search hit, a warning, an
//! entry read whole. Their size is that of the text an agent is given of
//! them; their score parts are those the ranking used.

use std::collections::BTreeMap;

use super::{InjectedItem, ItemKind};
use crate::knowledge::search::Hit;
use lore_types::knowledge::Entry;
use lore_types::knowledge::rank::Signal;
use lore_types::qa::Warning;
use lore_types::trust::Trust;

/// A label is cut to this many characters.
const LABEL_CHARS: usize = 120;

fn label(key: Option<&str>, title: &str) -> String {
    let text = key.filter(|key| !key.is_empty()).unwrap_or(title);
    text.split_whitespace().collect::<Vec<_>>().join(" ").chars().take(LABEL_CHARS).collect()
}

fn chars(parts: &[&str]) -> usize {
    parts.iter().map(|part| part.chars().count()).sum()
}

/// What an agent reads of an entry in a list of hits: its title, summary
/// and (when it speaks) its best fix.
fn listed_chars(entry: &Entry) -> usize {
    let fix = entry.best_solution().filter(|_| entry.trust.speaks()).map(|solution| solution.description.as_str());
    chars(&[&entry.title, &entry.summary, fix.unwrap_or_default()])
}

/// Which signals found a hit, with their scores and matched terms.
fn why_found(hit: &Hit) -> String {
    let reasons: Vec<String> = hit
        .reasons
        .iter()
        .map(|reason| {
            let terms = reason.matched_terms.iter().take(4).map(String::as_str).collect::<Vec<_>>().join(", ");
            let name = signal_name(reason.signal);
            if terms.is_empty() {
                format!("{name} {:.2}", reason.score)
            } else {
                format!("{name} {:.2} ({terms})", reason.score)
            }
        })
        .collect();
    if reasons.is_empty() { "ranked by the fused search".to_owned() } else { reasons.join("; ") }
}

fn signal_name(signal: Signal) -> &'static str {
    match signal {
        Signal::Keyword => "keyword",
        Signal::Fuzzy => "fuzzy",
        Signal::Semantic => "semantic",
        Signal::Symptom => "symptom",
    }
}

/// A lesson found by a search. `why`: the surface's own words (`None`: the
/// signals); `chars`: what the surface gave of it (`None`: its title,
/// summary and speaking fix).
pub fn hit_item(hit: &Hit, why: Option<&str>, chars: Option<usize>) -> InjectedItem {
    let entry = &hit.entry;
    let parts = &hit.parts;
    let mut score_parts = BTreeMap::from([
        ("similarity".to_owned(), parts.similarity),
        ("success_rate".to_owned(), parts.success_rate),
        ("recency".to_owned(), parts.recency),
        ("specificity".to_owned(), parts.specificity),
    ]);
    if let Some(category) = parts.category {
        score_parts.insert("category".to_owned(), category);
    }
    for reason in &hit.reasons {
        score_parts.insert(format!("signal.{}", signal_name(reason.signal)), reason.score);
    }
    InjectedItem {
        kind: ItemKind::Lesson,
        item_id: entry.entry_id,
        label: label(entry.key.as_deref(), &entry.title),
        trust: Some(entry.trust),
        chars: chars.unwrap_or_else(|| listed_chars(entry)),
        score: hit.score,
        score_parts,
        why: why.map_or_else(|| why_found(hit), str::to_owned),
        withheld: None,
    }
}

/// A warning; its trust is that of its fix (a warning without a reviewed
/// or verified fix says only what a tool printed: observed).
pub fn warning_item(warning: &Warning, chars: Option<usize>) -> InjectedItem {
    InjectedItem {
        kind: ItemKind::Warning,
        item_id: warning.pattern_id,
        label: label(None, &warning.pattern_name),
        trust: Some(warning.fix_trust.unwrap_or(Trust::Observed)),
        chars: chars.unwrap_or_else(|| self::chars(&[&warning.text, &warning.reason])),
        score: warning.score,
        score_parts: BTreeMap::from([
            ("relevance".to_owned(), warning.relevance),
            ("confidence".to_owned(), warning.confidence),
            ("frequency".to_owned(), warning.frequency as f64),
        ]),
        why: warning.reason.clone(),
        withheld: None,
    }
}

/// An entry read whole (`get_lesson`): all its text.
pub fn entry_item(entry: &Entry) -> InjectedItem {
    let solutions: usize = entry.solutions.iter().map(|solution| solution.description.chars().count()).sum();
    InjectedItem {
        kind: ItemKind::Lesson,
        item_id: entry.entry_id,
        label: label(entry.key.as_deref(), &entry.title),
        trust: Some(entry.trust),
        chars: chars(&[&entry.title, &entry.summary, &entry.body]) + solutions,
        score: 1.0,
        score_parts: BTreeMap::new(),
        why: "asked for by name".to_owned(),
        withheld: None,
    }
}
