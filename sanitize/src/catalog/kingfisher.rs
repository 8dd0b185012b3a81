//! Kingfisher's catalog (`rules/kingfisher.jsonl`, converted from its
//! crates.io package by `scripts/data/kingfisher_catalog.py`): its own rules and
//! those it imports from betterleaks and Veles, read as Kingfisher runs
//! them:
//! - keywords gate the rules; Veles' and Kingfisher's own rules name none
//!   (Kingfisher prefilters with Hyperscan) and are gated by the words
//!   every match holds (`literals.rs`);
//! - the secret is the rule's capture group, else its first non-empty one,
//!   else the whole match;
//! - a finding is discarded when its filter holds (`filter.rs`), when it
//!   contains one of the rule's `ignore_if_contains` words, or when its
//!   entropy is at most the rule's floor.
//!
//! Left out, each with its reason in the summary: rules bound to file paths,
//! rules Kingfisher reports only as part of another's finding (`visible:
//! false`), and rules whose filter discards every finding (Kingfisher's way
//! of replacing an imported rule by another). A rule that needs a partner
//! (`depends_on`, an AWS secret key beside its key id) redacts its secret
//! alone: a secret without its partner in the same text is still one.

use std::sync::Arc;

use serde::Deserialize;
use serde_json::Value as Json;
use serde_json::value::RawValue;

use super::filter::{self, Filter};
use super::{Allowlist, Builder, Catalog, Dialect, Patterns, Rule, SecretGroup, Target, WordList};

#[derive(Debug, Deserialize)]
struct Header {
    global_filter: Json,
}

#[derive(Debug, Deserialize)]
struct RuleLine<'a> {
    id: String,
    pattern: String,
    #[serde(default)]
    keywords: Vec<String>,
    #[serde(default)]
    secret_group: usize,
    /// Borrowed from the file: parsed when the rule first judges a finding.
    #[serde(borrow)]
    filter: Option<&'a RawValue>,
    min_entropy: Option<f64>,
    #[serde(default)]
    ignore_if_contains: Vec<String>,
    #[serde(default = "visible")]
    visible: bool,
    path: Option<String>,
}

fn visible() -> bool {
    true
}

/// The catalog of Kingfisher's converted rule file.
pub(super) fn read(text: &'static str) -> Result<Catalog, String> {
    let mut lines = text.lines().filter(|line| !line.trim().is_empty());
    let header: Header = serde_json::from_str(lines.next().ok_or("the file is empty")?)
        .map_err(|error| format!("the first line: {error}"))?;
    let global = Arc::new(filter::parse(&header.global_filter, None));
    let mut builder = Builder::new("kingfisher");
    // What the filters hold that is not evaluated, with how many rules each
    // touches: those rules run, and these parts never spare a finding.
    let mut unevaluated: Vec<(String, usize)> = Vec::new();
    for (at, line) in lines.enumerate() {
        let rule: RuleLine = serde_json::from_str(line).map_err(|error| format!("rule line {}: {error}", at + 2))?;
        if rule.path.is_some() {
            builder.skip(rule.id, "holds only in files of a given path");
            continue;
        }
        if !rule.visible {
            builder.skip(rule.id, "reported only as part of another rule's finding");
            continue;
        }
        // Parsed here to judge the rule, then dropped until it is woken.
        let tree = rule.filter.map(|source| filter::parse_text(source.get(), Some(&global)));
        if tree.as_ref().is_some_and(|tree| tree.discards_everything()) {
            builder.skip(rule.id, "its filter discards every finding (Kingfisher replaced it by another rule)");
            continue;
        }
        let mut reasons = Vec::new();
        if let Some(tree) = &tree {
            tree.unknowns(&mut reasons);
        }
        for reason in reasons {
            match unevaluated.iter_mut().find(|(known, _)| *known == reason) {
                Some((_, count)) => *count += 1,
                None => unevaluated.push((reason, 1)),
            }
        }
        let filter = rule.filter.map(|source| Filter::new(source.get(), &global));
        let secret_group = match rule.secret_group {
            0 => SecretGroup::FirstNonEmpty,
            group => SecretGroup::Numbered(group),
        };
        let ignore = WordList::new(&rule.ignore_if_contains).map(|words| Allowlist {
            regexes: Patterns::new(Vec::new()),
            target: Target::Secret,
            stopwords: Some(words),
            never: false,
            all: false,
        });
        let compiled = Rule {
            entropy: rule.min_entropy.filter(|floor| *floor > 0.0),
            allowlists: ignore.into_iter().collect(),
            filter,
            ..Rule::new(rule.id, rule.pattern, Dialect::Re2, secret_group)
        };
        builder.push(compiled, &rule.keywords);
    }
    unevaluated.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    builder.unevaluated = unevaluated;
    builder.finish(Vec::new())
}
