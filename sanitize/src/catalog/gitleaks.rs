//! gitleaks' rule file (`rules/gitleaks.toml`), read with gitleaks'
//! semantics:
//! - keywords gate the rules;
//! - the secret is the rule's `secretGroup`, else its first non-empty
//!   capture group, else the whole match;
//! - a secret whose Shannon entropy is at most the rule's `entropy` is not
//!   one;
//! - the global and the rule's allowlists spare a finding when one of their
//!   regexes matches the secret (or the match, or the line, per
//!   `regexTarget`) or the secret contains one of their stopwords; `AND`
//!   allowlists need every check, and path and commit checks never hold
//!   here (an action context has no file path), nor do rules that only
//!   match paths.

use serde::Deserialize;

use super::{Allowlist, Builder, Catalog, Dialect, Patterns, Rule, SecretGroup, Target, WordList};

#[derive(Debug, Deserialize)]
struct CatalogFile {
    #[serde(default)]
    allowlist: Option<AllowlistFile>,
    #[serde(default)]
    allowlists: Vec<AllowlistFile>,
    rules: Vec<RuleFile>,
}

#[derive(Debug, Deserialize)]
struct RuleFile {
    id: String,
    regex: Option<String>,
    path: Option<String>,
    #[serde(default, rename = "secretGroup")]
    secret_group: usize,
    entropy: Option<f64>,
    #[serde(default)]
    keywords: Vec<String>,
    #[serde(default)]
    allowlists: Vec<AllowlistFile>,
}

#[derive(Debug, Deserialize)]
struct AllowlistFile {
    #[serde(default)]
    regexes: Vec<String>,
    #[serde(default, rename = "regexTarget")]
    regex_target: Option<String>,
    #[serde(default)]
    stopwords: Vec<String>,
    #[serde(default)]
    paths: Vec<String>,
    #[serde(default)]
    commits: Vec<String>,
    #[serde(default)]
    condition: Option<String>,
}

impl Allowlist {
    fn compile(file: &AllowlistFile) -> Result<Self, String> {
        let regexes = Patterns::new(file.regexes.clone());
        let target = match file.regex_target.as_deref() {
            None | Some("secret") => Target::Secret,
            Some("match") => Target::Match,
            Some("line") => Target::Line,
            Some(other) => return Err(format!("unknown regexTarget {other:?}")),
        };
        let all = file.condition.as_deref().is_some_and(|condition| condition.eq_ignore_ascii_case("and"));
        let never = all && (!file.paths.is_empty() || !file.commits.is_empty());
        Ok(Self { regexes, target, stopwords: WordList::new(&file.stopwords), never, all })
    }
}

/// The catalog of a gitleaks rule file.
pub(super) fn read(text: &str) -> Result<Catalog, String> {
    let file: CatalogFile = toml::from_str(text).map_err(|error| error.to_string())?;
    let global =
        file.allowlist.iter().chain(&file.allowlists).map(Allowlist::compile).collect::<Result<Vec<_>, _>>()?;
    let mut builder = Builder::new("gitleaks");
    for rule in file.rules {
        let Some(source) = rule.regex.as_deref() else {
            builder.skip(rule.id, "matches file paths only");
            continue;
        };
        if rule.path.is_some() {
            builder.skip(rule.id, "holds only in files of a given path");
            continue;
        }
        let allowlists = match rule.allowlists.iter().map(Allowlist::compile).collect::<Result<Vec<_>, _>>() {
            Ok(allowlists) => allowlists,
            Err(error) => {
                builder.skip(rule.id, error);
                continue;
            }
        };
        let secret_group = match rule.secret_group {
            0 => SecretGroup::FirstNonEmpty,
            group => SecretGroup::Numbered(group),
        };
        let compiled = Rule {
            entropy: rule.entropy,
            allowlists,
            ..Rule::new(rule.id, source.to_owned(), Dialect::Re2, secret_group)
        };
        builder.push(compiled, &rule.keywords);
    }
    builder.finish(global)
}
