//! CredSweeper's rule file (`rules/credsweeper.yaml`), read as CredSweeper
//! reads it, for the rules that stand without its machine-learning model:
//! - `required_substrings` gate a rule, as keywords do in gitleaks (a rule
//!   without them is gated by the literals every match must begin or end
//!   with);
//! - each of its `values` is a Python pattern whose group `value` is the
//!   secret;
//! - `min_line_len` and `required_regex` must hold for the line the match
//!   is on.
//!
//! What is not used, and why (each such rule is listed with its reason in
//! the catalog's summary):
//! - rules with `use_ml`: CredSweeper keeps a candidate of theirs only when
//!   its model says so, and Lore does not run that model; without it their
//!   broad keyword patterns are not precise;
//! - `multi` rules, which pair an identifier with its secret on nearby
//!   lines, and the `pem_key` rule (Lore's own formats hold private-key
//!   blocks);
//! - rules for documents only (`target` without `code`);
//! - rules of severity `info`, which report identifiers (UUIDs, bucket
//!   names, domains), not credentials;
//! - `filter_type`: CredSweeper's filters are Python classes, not data.
//!   Lore's own test for stand-ins, references and secret names applies to
//!   every catalog's findings instead (`redact.rs`).

use std::sync::LazyLock;

use serde::Deserialize;

use super::{Builder, Catalog, Dialect, Rule, SecretGroup, literals};

#[derive(Debug, Deserialize)]
struct RuleFile {
    name: String,
    severity: String,
    #[serde(rename = "type")]
    kind: String,
    values: Vec<String>,
    #[serde(default)]
    use_ml: bool,
    #[serde(default)]
    required_substrings: Vec<String>,
    #[serde(default)]
    required_regex: Option<String>,
    #[serde(default)]
    min_line_len: usize,
    #[serde(default)]
    target: Vec<String>,
}

/// The catalog of a CredSweeper rule file.
pub(super) fn read(text: &str) -> Result<Catalog, String> {
    let rules: Vec<RuleFile> = serde_saphyr::from_str(text).map_err(|error| error.to_string())?;
    let mut builder = Builder::new("credsweeper");
    for rule in rules {
        let why = if rule.severity == "info" {
            Some("reports an identifier (severity info), not a credential")
        } else if rule.use_ml {
            Some("needs CredSweeper's machine-learning model to be precise")
        } else if rule.kind == "multi" {
            Some("pairs an identifier with its secret on nearby lines")
        } else if rule.kind != "pattern" {
            Some("private-key blocks, which Lore's own formats hold")
        } else if !rule.target.iter().any(|target| target == "code") {
            Some("applies to documents only")
        } else {
            None
        };
        if let Some(why) = why {
            builder.skip(rule.name, why);
            continue;
        }
        for (index, value) in rule.values.iter().enumerate() {
            let id = if rule.values.len() == 1 { rule.name.clone() } else { format!("{} #{}", rule.name, index + 1) };
            let source = python_to_rust(value);
            if fancy_regex::Expr::parse_tree(&source).is_err() {
                builder.skip(id, "its pattern uses syntax neither regex crate reads");
                continue;
            }
            let keywords = if rule.required_substrings.is_empty() {
                literals::prefixes_or_suffixes(&source).unwrap_or_default()
            } else {
                rule.required_substrings.clone()
            };
            let compiled = Rule {
                min_line_len: rule.min_line_len,
                line_pattern: rule.required_regex.as_deref().map(python_to_rust),
                ..Rule::new(id, source, Dialect::Python, SecretGroup::Named("value"))
            };
            builder.push(compiled, &keywords);
        }
    }
    builder.finish(Vec::new())
}

/// The few spellings of Python's `re` the Rust crates write otherwise: a
/// conditional on a named group (`(?(a)…)`, `(?(<a>)…)` for
/// `fancy-regex`) and a repetition without a minimum (`{,8}`).
fn python_to_rust(pattern: &str) -> String {
    static NAMED_CONDITION: LazyLock<regex::Regex> =
        LazyLock::new(|| regex::Regex::new(r"\(\?\(([A-Za-z_]\w*)\)").expect("valid regex"));
    static NO_MINIMUM: LazyLock<regex::Regex> =
        LazyLock::new(|| regex::Regex::new(r"\{,(\d+)\}").expect("valid regex"));
    let named = NAMED_CONDITION.replace_all(pattern, "(?(<$1>)");
    NO_MINIMUM.replace_all(&named, "{0,$1}").into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_spellings_become_rust_ones() {
        assert_eq!(python_to_rust(r"(?P<a>x)?(?(a)y|z)"), r"(?P<a>x)?(?(<a>)y|z)");
        assert_eq!(python_to_rust(r"a{,8}b{2,3}"), r"a{0,8}b{2,3}");
    }
}
