//! Provider secret formats from two maintained catalogs, each pinned and
//! copied unmodified (`rules/README.md` says how to update them): the
//! default rule set of gitleaks (`rules/gitleaks.toml`, MIT) and the default
//! rule set of Nosey Parker (`rules/noseyparker/`, Apache-2.0). One
//! interpreter reads both, with gitleaks' semantics, so that an update is a
//! file copy:
//! - a rule runs only when one of its keywords is in the text (compared
//!   lowercase), which keeps the cost of ~220 rules near that of a few; its
//!   regex is compiled when it first runs, so a process pays in memory only
//!   for the rules its texts wake;
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
//!
//! Nosey Parker's rules name no keywords and no secret group: a rule's
//! keywords are the literals every match must begin (or end) with, read off
//! its regex (`required_literals`); its secret is its last capture group
//! that is not a host name (a user and a password: the password; a
//! connection string: its password, not its host). Its rules carry no
//! allowlists; the global one of gitleaks applies to them too.
//!
//! gitleaks is written in Go, whose RE2 regexes are ASCII-only: `\w`, `\s`
//! and `(?i)` know no Unicode. The rules are compiled as byte regexes with
//! Unicode off, which is the same language (and keeps `[\w.-]{0,50}` small);
//! a match's ends are widened to character boundaries before use.

use std::ops::Range;
use std::sync::{LazyLock, OnceLock};

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};
use regex::bytes::{Regex, RegexBuilder, RegexSet, RegexSetBuilder};
use serde::Deserialize;

/// The vendored catalogs, compiled into the binary.
const GITLEAKS_RULES: &str = include_str!("../rules/gitleaks.toml");
/// Which of Nosey Parker's rules its default rule set runs: those that
/// detect secrets with few false positives (not identifiers, public keys or
/// password hashes).
const NOSEYPARKER_DEFAULT_RULESET: &str = include_str!("../rules/noseyparker-default-ruleset.yml");
include!(concat!(env!("OUT_DIR"), "/noseyparker_files.rs"));

/// Big enough for the largest rule (the generic key rule's alternations).
const REGEX_SIZE_LIMIT: usize = 64 * 1024 * 1024;

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

/// What an allowlist regex is matched against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    Secret,
    Match,
    Line,
}

#[derive(Debug)]
struct Allowlist {
    regexes: Vec<Regex>,
    target: Target,
    stopwords: Option<AhoCorasick>,
    /// `AND` with a path or commit check: can never hold for a context.
    never: bool,
    all: bool,
}

#[derive(Debug, Deserialize)]
struct NoseyParkerFile {
    #[serde(default)]
    rules: Vec<NoseyParkerRule>,
}

#[derive(Debug, Deserialize)]
struct NoseyParkerRule {
    id: String,
    pattern: String,
}

#[derive(Debug, Deserialize)]
struct NoseyParkerRulesets {
    rulesets: Vec<NoseyParkerRuleset>,
}

#[derive(Debug, Deserialize)]
struct NoseyParkerRuleset {
    id: String,
    include_rule_ids: Vec<String>,
}

/// Which part of a rule's match is the secret.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SecretGroup {
    /// gitleaks' `secretGroup`.
    Numbered(usize),
    /// gitleaks without a `secretGroup`: the first non-empty group, else the
    /// whole match.
    FirstNonEmpty,
    /// Nosey Parker: the last non-empty group that is not a host name.
    LastNotHost,
}

/// How a rule's pattern is compiled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dialect {
    /// gitleaks: ASCII classes.
    Ascii,
    /// Nosey Parker: ASCII classes, Unicode when the pattern needs it.
    AsciiElseUnicode,
}

#[derive(Debug)]
struct Rule {
    id: String,
    /// The pattern as the catalog gives it.
    source: String,
    dialect: Dialect,
    /// Compiled when the rule is first woken: most rules never are in a
    /// process's life, and the 385 compiled at once cost a sidecar 23 MiB.
    regex: OnceLock<Option<Regex>>,
    secret_group: SecretGroup,
    entropy: Option<f64>,
    allowlists: Vec<Allowlist>,
}

impl Rule {
    fn new(id: String, source: String, dialect: Dialect, secret_group: SecretGroup) -> Self {
        Self { id, source, dialect, regex: OnceLock::new(), secret_group, entropy: None, allowlists: Vec::new() }
    }

    /// Its regex, compiled on first use; `None` when it does not compile
    /// here (the catalog's tests make sure none of the vendored ones fail).
    fn regex(&self) -> Option<&Regex> {
        self.regex
            .get_or_init(|| {
                let compiled = compile(&self.source);
                match self.dialect {
                    Dialect::Ascii => compiled,
                    Dialect::AsciiElseUnicode => {
                        compiled.or_else(|_| RegexBuilder::new(&self.source).size_limit(REGEX_SIZE_LIMIT).build())
                    }
                }
                .ok()
            })
            .as_ref()
    }
}

/// The compiled catalog.
#[derive(Debug)]
pub(crate) struct Catalog {
    rules: Vec<Rule>,
    /// Keyword automaton; `keyword_rules[pattern]` are the rules it wakes.
    keywords: AhoCorasick,
    keyword_rules: Vec<Vec<usize>>,
    /// Rules without keywords, woken by one pass of `always_set` over the
    /// text (its patterns are theirs, in order) instead of one pass each.
    always: Vec<usize>,
    always_set: Option<RegexSet>,
    global: Vec<Allowlist>,
    /// Rules of the file that could not be used here, with why.
    pub(crate) skipped: Vec<(String, String)>,
}

/// One secret found by a rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Finding {
    pub rule: usize,
    pub secret: Range<usize>,
}

static CATALOG: LazyLock<Catalog> = LazyLock::new(|| {
    let mut builder = Builder::default();
    let global = builder.gitleaks(GITLEAKS_RULES).expect("the vendored gitleaks rules parse");
    builder.noseyparker(NOSEYPARKER_DEFAULT_RULESET, NOSEYPARKER_FILES).expect("the vendored Nosey Parker rules parse");
    builder.finish(global).expect("the catalog's keywords build")
});

pub(crate) fn compiled() -> &'static Catalog {
    &CATALOG
}

fn compile(source: &str) -> Result<Regex, regex::Error> {
    RegexBuilder::new(&literal_braces(source)).unicode(false).size_limit(REGEX_SIZE_LIMIT).build()
}

/// A pattern without its `(?# … )` comments.
fn without_comments(pattern: &str) -> String {
    static COMMENT: LazyLock<regex::Regex> =
        LazyLock::new(|| regex::Regex::new(r"\(\?#[^)]*\)").expect("comment regex compiles"));
    COMMENT.replace_all(pattern, "").into_owned()
}

/// The literals one of which every match of `pattern` begins with, or else
/// ends with, lowercased: the words that must be in a text for the rule to
/// find anything there. None when no such set of words of three characters
/// or more exists (the rule then runs on every text).
fn required_literals(pattern: &str) -> Option<Vec<String>> {
    use regex_syntax::hir::literal::{ExtractKind, Extractor};
    let hir = regex_syntax::ParserBuilder::new().unicode(false).utf8(false).build().parse(pattern).ok()?;
    [ExtractKind::Prefix, ExtractKind::Suffix].into_iter().find_map(|kind| {
        let mut extractor = Extractor::new();
        extractor.kind(kind);
        let seq = extractor.extract(&hir);
        let literals = seq.literals()?;
        let mut words: Vec<String> =
            literals.iter().map(|literal| String::from_utf8_lossy(literal.as_bytes()).to_lowercase()).collect();
        words.sort();
        words.dedup();
        (!words.is_empty() && words.iter().all(|word| word.trim().len() >= 3)).then_some(words)
    })
}

/// RE2 reads a `{` that does not open a repetition (`{\d+}` in
/// `^\$(?:\d+|{\d+})$`) as a literal; Rust's parser refuses it. Escape
/// those, outside classes and escapes, and leave the rest as written.
fn literal_braces(source: &str) -> String {
    let bytes = source.as_bytes();
    let mut out = String::with_capacity(source.len() + 8);
    let (mut at, mut in_class) = (0, false);
    while at < bytes.len() {
        let byte = bytes[at];
        match byte {
            b'\\' => {
                let end = (at + 2).min(bytes.len());
                out.push_str(&source[at..end]);
                at = end;
                continue;
            }
            b'[' => in_class = true,
            b']' => in_class = false,
            b'{' if !in_class && !opens_repetition(&source[at..]) => {
                out.push_str("\\{");
                at += 1;
                continue;
            }
            _ => {}
        }
        let width = source[at..].chars().next().map_or(1, char::len_utf8);
        out.push_str(&source[at..at + width]);
        at += width;
    }
    out
}

/// `{3}`, `{3,}`, `{3,5}`.
fn opens_repetition(rest: &str) -> bool {
    let Some(close) = rest.find('}') else { return false };
    let inner = &rest[1..close];
    let (low, high) = inner.split_once(',').unwrap_or((inner, "0"));
    !low.is_empty() && low.bytes().all(|byte| byte.is_ascii_digit()) && high.bytes().all(|byte| byte.is_ascii_digit())
}

fn stopword_automaton(words: &[String]) -> Option<AhoCorasick> {
    if words.is_empty() {
        return None;
    }
    let lower: Vec<String> = words.iter().map(|word| word.to_lowercase()).collect();
    AhoCorasickBuilder::new().ascii_case_insensitive(true).build(&lower).ok()
}

impl Allowlist {
    fn compile(file: &AllowlistFile) -> Result<Self, String> {
        let regexes = file
            .regexes
            .iter()
            .map(|source| compile(source).map_err(|error| format!("allowlist regex {source:?}: {error}")))
            .collect::<Result<Vec<_>, _>>()?;
        let target = match file.regex_target.as_deref() {
            None | Some("secret") => Target::Secret,
            Some("match") => Target::Match,
            Some("line") => Target::Line,
            Some(other) => return Err(format!("unknown regexTarget {other:?}")),
        };
        let all = file.condition.as_deref().is_some_and(|condition| condition.eq_ignore_ascii_case("and"));
        let never = all && (!file.paths.is_empty() || !file.commits.is_empty());
        Ok(Self { regexes, target, stopwords: stopword_automaton(&file.stopwords), never, all })
    }

    /// True when the finding is allowed (not a secret).
    fn allows(&self, secret: &[u8], matched: &[u8], line: &[u8]) -> bool {
        if self.never {
            return false;
        }
        let target = match self.target {
            Target::Secret => secret,
            Target::Match => matched,
            Target::Line => line,
        };
        let regex = (!self.regexes.is_empty()).then(|| self.regexes.iter().any(|regex| regex.is_match(target)));
        let stopword = self.stopwords.as_ref().map(|words| words.is_match(secret));
        let checks = [regex, stopword];
        if self.all {
            checks.iter().flatten().all(|held| *held) && checks.iter().any(Option::is_some)
        } else {
            checks.iter().flatten().any(|held| *held)
        }
    }
}

/// Rules as they are read, and the keywords that wake them.
#[derive(Default)]
struct Builder {
    rules: Vec<Rule>,
    skipped: Vec<(String, String)>,
    keyword_index: Vec<(String, usize)>,
    always: Vec<usize>,
    always_patterns: Vec<String>,
}

impl Builder {
    fn push(&mut self, rule: Rule, keywords: &[String]) {
        let index = self.rules.len();
        if keywords.is_empty() {
            self.always.push(index);
            self.always_patterns.push(literal_braces(&rule.source));
        }
        self.keyword_index.extend(keywords.iter().map(|keyword| (keyword.to_lowercase(), index)));
        self.rules.push(rule);
    }

    /// gitleaks' rules; returns its global allowlists.
    fn gitleaks(&mut self, text: &str) -> Result<Vec<Allowlist>, String> {
        let file: CatalogFile = toml::from_str(text).map_err(|error| error.to_string())?;
        let global =
            file.allowlist.iter().chain(&file.allowlists).map(Allowlist::compile).collect::<Result<Vec<_>, _>>()?;
        for rule in file.rules {
            let Some(source) = rule.regex.as_deref() else {
                self.skipped.push((rule.id, "matches file paths only".to_owned()));
                continue;
            };
            if rule.path.is_some() {
                self.skipped.push((rule.id, "holds only in files of a given path".to_owned()));
                continue;
            }
            let allowlists = match rule.allowlists.iter().map(Allowlist::compile).collect::<Result<Vec<_>, _>>() {
                Ok(allowlists) => allowlists,
                Err(error) => {
                    self.skipped.push((rule.id, error));
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
                ..Rule::new(rule.id, source.to_owned(), Dialect::Ascii, secret_group)
            };
            self.push(compiled, &rule.keywords);
        }
        Ok(global)
    }

    /// The rules of Nosey Parker's `default` rule set.
    fn noseyparker(&mut self, rulesets: &str, files: &[(&str, &str)]) -> Result<(), String> {
        let rulesets: NoseyParkerRulesets =
            serde_saphyr::from_str(rulesets).map_err(|error| format!("the rule sets: {error}"))?;
        let default =
            rulesets.rulesets.into_iter().find(|ruleset| ruleset.id == "default").ok_or("no rule set named default")?;
        for (name, text) in files {
            let file: NoseyParkerFile = serde_saphyr::from_str(text).map_err(|error| format!("{name}: {error}"))?;
            for rule in file.rules.into_iter().filter(|rule| default.include_rule_ids.contains(&rule.id)) {
                // Nosey Parker compiles its patterns for Vectorscan, which
                // reads `(?# comments )`, and for Rust's regex crate, which
                // does not: it drops them first, as done here. ASCII classes
                // as for gitleaks, Unicode when a pattern needs it.
                let pattern = without_comments(&rule.pattern);
                let keywords = required_literals(&pattern).unwrap_or_default();
                let rule = Rule::new(rule.id, pattern, Dialect::AsciiElseUnicode, SecretGroup::LastNotHost);
                self.push(rule, &keywords);
            }
        }
        Ok(())
    }

    fn finish(mut self, global: Vec<Allowlist>) -> Result<Catalog, String> {
        self.keyword_index.sort();
        let mut words: Vec<String> = Vec::new();
        let mut keyword_rules: Vec<Vec<usize>> = Vec::new();
        for (word, rule) in self.keyword_index {
            if words.last() != Some(&word) {
                words.push(word);
                keyword_rules.push(Vec::new());
            }
            let rules = keyword_rules.last_mut().expect("pushed above");
            if rules.last() != Some(&rule) {
                rules.push(rule);
            }
        }
        let keywords = AhoCorasickBuilder::new()
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::Standard)
            .build(&words)
            .map_err(|error| error.to_string())?;
        // Without the set (a pattern it cannot hold), every such rule runs.
        let always_set = RegexSetBuilder::new(&self.always_patterns)
            .unicode(false)
            .size_limit(REGEX_SIZE_LIMIT)
            .dfa_size_limit(REGEX_SIZE_LIMIT)
            .build()
            .ok();
        Ok(Catalog {
            rules: self.rules,
            keywords,
            keyword_rules,
            always: self.always,
            always_set,
            global,
            skipped: self.skipped,
        })
    }
}

impl Catalog {
    /// How many rules are in use.
    pub(crate) fn len(&self) -> usize {
        self.rules.len()
    }

    /// The id of a rule (`github-pat`).
    #[cfg(test)]
    pub(crate) fn rule_id(&self, rule: usize) -> &str {
        &self.rules[rule].id
    }

    /// Every secret the catalog finds in `text`, in no particular order.
    pub(crate) fn find(&self, text: &str, findings: &mut Vec<Finding>) {
        let bytes = text.as_bytes();
        let mut woken = vec![false; self.rules.len()];
        match &self.always_set {
            Some(set) => {
                for matched in set.matches(bytes).iter() {
                    woken[self.always[matched]] = true;
                }
            }
            None => {
                for rule in &self.always {
                    woken[*rule] = true;
                }
            }
        }
        for found in self.keywords.find_overlapping_iter(bytes) {
            for rule in &self.keyword_rules[found.pattern().as_usize()] {
                woken[*rule] = true;
            }
        }
        for (index, rule) in self.rules.iter().enumerate().filter(|(index, _)| woken[*index]) {
            self.find_rule(index, rule, bytes, findings);
        }
    }

    fn find_rule(&self, index: usize, rule: &Rule, bytes: &[u8], findings: &mut Vec<Finding>) {
        let Some(regex) = rule.regex() else { return };
        for captures in regex.captures_iter(bytes) {
            let whole = captures.get(0).expect("group 0 always matches");
            let secret = match rule.secret_group {
                SecretGroup::Numbered(group) => captures.get(group),
                SecretGroup::FirstNonEmpty => {
                    captures.iter().skip(1).flatten().find(|group| !group.is_empty()).or(Some(whole))
                }
                SecretGroup::LastNotHost => captures
                    .iter()
                    .skip(1)
                    .flatten()
                    .filter(|group| !group.is_empty() && !is_host_name(group.as_bytes()))
                    .last()
                    .or(Some(whole)),
            };
            let Some(secret) = secret.filter(|secret| !secret.is_empty()) else { continue };
            let secret_bytes = secret.as_bytes();
            if rule.entropy.is_some_and(|minimum| crate::entropy::shannon(secret_bytes) <= minimum) {
                continue;
            }
            let line = line_around(bytes, whole.range());
            let allowed = self
                .global
                .iter()
                .chain(&rule.allowlists)
                .any(|allowlist| allowlist.allows(secret_bytes, whole.as_bytes(), line));
            if !allowed {
                findings.push(Finding { rule: index, secret: password_of_pair(&rule.id, secret.range(), bytes) });
            }
        }
    }
}

/// A `user:password` secret (`curl -u`) keeps its user: the password is
/// the secret, the user is what tells whose it was.
fn password_of_pair(rule: &str, secret: Range<usize>, bytes: &[u8]) -> Range<usize> {
    if !rule.ends_with("-auth-user") {
        return secret;
    }
    let inner = &bytes[secret.clone()];
    let quoted = inner.len() >= 2 && matches!(inner[0], b'"' | b'\'') && inner.last() == Some(&inner[0]);
    let (start, end) = if quoted { (secret.start + 1, secret.end - 1) } else { (secret.start, secret.end) };
    match bytes[start..end].iter().position(|byte| *byte == b':') {
        Some(colon) if start + colon + 1 < end => start + colon + 1..end,
        _ => secret,
    }
}

/// `db.example.com`, `localhost`, `10.0.0.1:5432`: where a secret is used,
/// not the secret.
fn is_host_name(group: &[u8]) -> bool {
    let host = group.split(|byte| *byte == b':').next().unwrap_or_default();
    let labels = || host.split(|byte| *byte == b'.');
    let plain_labels = labels()
        .all(|label| !label.is_empty() && label.iter().all(|byte| byte.is_ascii_alphanumeric() || *byte == b'-'));
    let word_label = labels().any(|label| label.iter().all(u8::is_ascii_lowercase) && label.len() >= 2);
    let numeric = labels().count() == 4 && labels().all(|label| label.iter().all(u8::is_ascii_digit));
    host == b"localhost" || (plain_labels && labels().count() >= 2 && (word_label || numeric))
}

/// The lines of `bytes` that `range` touches.
fn line_around(bytes: &[u8], range: Range<usize>) -> &[u8] {
    let start = bytes[..range.start].iter().rposition(|byte| *byte == b'\n').map_or(0, |at| at + 1);
    let end = bytes[range.end..].iter().position(|byte| *byte == b'\n').map_or(bytes.len(), |at| range.end + at);
    &bytes[start..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secrets(text: &str) -> Vec<(String, String)> {
        let catalog = compiled();
        let mut findings = Vec::new();
        catalog.find(text, &mut findings);
        findings
            .iter()
            .map(|found| (catalog.rule_id(found.rule).to_owned(), text[found.secret.clone()].to_owned()))
            .collect()
    }

    #[test]
    fn nearly_every_rule_of_the_catalog_is_in_use() {
        let catalog = compiled();
        assert!(catalog.len() >= 200, "{} rules", catalog.len());
        // Compiled on first use at run time; every one must compile.
        let broken: Vec<&str> =
            catalog.rules.iter().filter(|rule| rule.regex().is_none()).map(|rule| rule.id.as_str()).collect();
        assert!(broken.is_empty(), "{broken:?}");
    }

    #[test]
    fn a_rule_yields_its_secret_group_not_its_whole_match() {
        let found = secrets("export GITHUB_TOKEN=ghp_XIxB7KMNdAr3zqWtQqhE94qglHqOzn1D1stg\n");
        assert!(found.iter().any(|(rule, secret)| rule == "github-pat" && secret.starts_with("ghp_")), "{found:?}");
        let found = secrets("aws_secret_access_key = \"wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY\"");
        assert!(found.iter().all(|(_, secret)| !secret.contains("aws_secret")), "{found:?}");
    }

    #[test]
    fn a_curl_user_keeps_its_name_and_loses_its_password_quoted_or_not() {
        for text in ["curl -u deploy:S3cr3tPa55 https://nexus", "curl -u \"deploy:S3cr3tPa55\" https://nexus"] {
            let found = secrets(text);
            assert!(found.iter().any(|(rule, secret)| rule == "curl-auth-user" && secret == "S3cr3tPa55"), "{found:?}");
        }
    }

    #[test]
    fn keywords_wake_rules_case_insensitively_and_allowlists_spare_what_they_name() {
        assert!(!secrets("API_KEY=sk_live_ReTllpYQYfIZu2Jnf2lAPFjD").is_empty());
        assert!(secrets("nothing to see: cargo build --release").is_empty());
        // The global allowlist: template variables are not secrets.
        assert!(secrets("password = \"${DATABASE_PASSWORD}\"").is_empty());
    }
}
