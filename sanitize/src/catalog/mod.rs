//! Provider secret formats from maintained catalogs, each extracted
//! unmodified from a pinned registry package (`third-party.toml`;
//! `rules/README.md` says how to update them), and one interpreter that
//! runs them:
//! - gitleaks' default rules (`rules/gitleaks.toml`, MIT, from Debian's
//!   `golang-github-gitleaks-gitleaks-dev`), read with gitleaks' semantics
//!   (`gitleaks.rs`);
//! - CredSweeper's rules (`rules/credsweeper.yaml`, MIT, from its PyPI
//!   wheel), those that need no machine-learning model (`credsweeper.rs`);
//! - Kingfisher's rules (`rules/kingfisher.jsonl`, Apache-2.0, converted
//!   from its crates.io package): its own and those it imports from
//!   betterleaks and Veles, with betterleaks' filters (`kingfisher.rs`,
//!   `filter.rs`).
//!
//! Which catalogs run is part of the redaction setting ([`Catalogs`]),
//! chosen like the others by `lore eval redaction --leave-one-out`.
//!
//! Common to all three:
//! - a rule runs only when one of its keywords is in the text (compared
//!   case-insensitively), which keeps the cost of hundreds of rules near
//!   that of a few; a rule without keywords is woken by one `RegexSet` pass
//!   over the text for all such rules;
//! - its pattern is compiled when it first runs, and its allowlists' regexes
//!   and stopwords and its filter when they first judge a match, so a
//!   process pays in memory only for the rules its texts wake (read, the
//!   443 rules of Kingfisher's catalog hold 0.5 MiB);
//! - the secret is the capture group the catalog names, else the whole
//!   match; entropy floors and allowlists spare findings as the catalog
//!   says.
//!
//! gitleaks is written in Go, whose RE2 regexes are ASCII-only: `\w`, `\s`
//! and `(?i)` know no Unicode. Its rules are compiled as byte regexes with
//! Unicode off, which is the same language (and keeps `[\w.-]{0,50}`
//! small); a match's ends are widened to character boundaries before use.
//! CredSweeper is written in Python, whose patterns look around and branch
//! on groups: they are compiled by the `regex` crate when it reads them,
//! else by `fancy-regex`.

mod credsweeper;
mod filter;
mod gitleaks;
mod kingfisher;
mod literals;

use std::fmt;
use std::ops::Range;
use std::sync::{LazyLock, OnceLock};

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};
use regex::bytes::{RegexBuilder, RegexSet, RegexSetBuilder};

/// The catalogs as extracted from their packages, compiled into the binary.
const GITLEAKS_RULES: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/rules/gitleaks.toml"));
const CREDSWEEPER_RULES: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/rules/credsweeper.yaml"));
const KINGFISHER_RULES: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/rules/kingfisher.jsonl"));

/// Big enough for the largest rule (gitleaks' generic key rule's
/// alternations, CredSweeper's `{4,8000}` repetitions).
const REGEX_SIZE_LIMIT: usize = 64 * 1024 * 1024;
/// Steps a look-around pattern may take on one text before it gives up
/// there: a pathological text costs milliseconds, not minutes.
const BACKTRACK_LIMIT: usize = 200_000;

/// Which catalogs redaction runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Catalogs {
    pub gitleaks: bool,
    pub credsweeper: bool,
    pub kingfisher: bool,
}

impl Catalogs {
    pub const NONE: Self = Self { gitleaks: false, credsweeper: false, kingfisher: false };
    pub const GITLEAKS: Self = Self { gitleaks: true, ..Self::NONE };
    pub const CREDSWEEPER: Self = Self { credsweeper: true, ..Self::NONE };
    pub const KINGFISHER: Self = Self { kingfisher: true, ..Self::NONE };
    pub const ALL: Self = Self { gitleaks: true, credsweeper: true, kingfisher: true };

    /// The choices the evaluation weighs: every non-empty set, fewer rules
    /// first.
    pub const CHOICES: [Self; 7] = [
        Self::GITLEAKS,
        Self::CREDSWEEPER,
        Self::KINGFISHER,
        Self { gitleaks: true, credsweeper: true, kingfisher: false },
        Self { gitleaks: true, kingfisher: true, credsweeper: false },
        Self { credsweeper: true, kingfisher: true, gitleaks: false },
        Self::ALL,
    ];

    fn each(self) -> [(bool, &'static str, &'static LazyLock<Catalog>); 3] {
        [
            (self.gitleaks, "gitleaks", &GITLEAKS),
            (self.credsweeper, "credsweeper", &CREDSWEEPER),
            (self.kingfisher, "kingfisher", &KINGFISHER),
        ]
    }

    fn selected(self) -> impl Iterator<Item = &'static Catalog> {
        self.each().into_iter().filter(|(on, _, _)| *on).map(|(_, _, catalog)| &**catalog)
    }
}

/// What ships: chosen on every source of the development data
/// (docs/EVALUATION.md, "Redaction").
impl Default for Catalogs {
    fn default() -> Self {
        Self::KINGFISHER
    }
}

impl fmt::Display for Catalogs {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.each().into_iter().filter(|(on, _, _)| *on).map(|(_, name, _)| name).collect();
        if names.is_empty() { formatter.write_str("none") } else { formatter.write_str(&names.join("+")) }
    }
}

static GITLEAKS: LazyLock<Catalog> =
    LazyLock::new(|| gitleaks::read(GITLEAKS_RULES).expect("the extracted gitleaks rules parse"));
static CREDSWEEPER: LazyLock<Catalog> =
    LazyLock::new(|| credsweeper::read(CREDSWEEPER_RULES).expect("the extracted CredSweeper rules parse"));
static KINGFISHER: LazyLock<Catalog> =
    LazyLock::new(|| kingfisher::read(KINGFISHER_RULES).expect("the converted Kingfisher rules parse"));

/// What the catalogs' rules say about a text's spans, in no particular
/// order.
#[derive(Debug, Default)]
pub(crate) struct Findings {
    /// Secrets found by rules of a provider's format: every match begins
    /// with the same few characters (`SG.`, `ghp_`, `xoxb-`). Only a
    /// stand-in of the format spares them.
    pub formats: Vec<Range<usize>>,
    /// Other secrets, mostly values after a provider's name or a secret
    /// word, where references and names of secrets are spared too.
    pub secrets: Vec<Range<usize>>,
    /// Matches of a rule's pattern that the rule's own allowlist, filter or
    /// entropy floor declares no secret: the rules' knowledge of their near
    /// misses (`AKIAIOSFODNN7EXAMPLE`, `xoxb-xxxxxxxxx-...`), which Lore's
    /// own layers then respect.
    pub spared: Vec<Range<usize>>,
}

/// What the chosen catalogs find in `text`.
pub(crate) fn find(text: &str, catalogs: Catalogs, findings: &mut Findings) {
    for catalog in catalogs.selected() {
        catalog.find(text, findings);
    }
}

/// Where gitleaks' generic rule (a value after a secret word, the kind of
/// secret Lore's keyword layers find) matches in `text` and its own
/// allowlists' regexes declare no secret: `credentialsId: '<uuid>'`,
/// `keyboard`, `secret_length = X25519.secret_length`, a value of letters
/// alone. gitleaks wrote them against the near misses of its users'
/// repositories. Its stopwords and entropy floor are left out: Lore's
/// layers weigh randomness their own way.
pub(crate) fn generic_near_misses(text: &str) -> Vec<Range<usize>> {
    static GENERIC: LazyLock<Option<&'static Rule>> =
        LazyLock::new(|| GITLEAKS.rules.iter().find(|rule| rule.id == "generic-api-key"));
    let mut spared = Vec::new();
    let Some(rule) = *GENERIC else { return spared };
    let Some(compiled) = rule.compiled() else { return spared };
    let bytes = text.as_bytes();
    compiled.each_match(text, rule.secret_group, |whole, secret| {
        let line = line_around(bytes, whole.clone());
        if GITLEAKS.allows(rule, &bytes[secret.clone()], &bytes[whole], line, Stopwords::Ignored) {
            spared.push(secret);
        }
    });
    spared
}

/// The chosen catalogs' rules in use, the rules they hold that do not
/// apply to an action's context, and the parts of their filters not
/// evaluated, each with why.
pub(crate) fn summary(catalogs: Catalogs) -> crate::CatalogSummary {
    let mut summary = crate::CatalogSummary { rules: 0, unused: Vec::new(), unevaluated: Vec::new() };
    for catalog in catalogs.selected() {
        summary.rules += catalog.rules.len();
        let named = |(id, why): &(String, String)| (format!("{}:{id}", catalog.name), why.clone());
        summary.unused.extend(catalog.skipped.iter().map(named));
        summary.unevaluated.extend(catalog.unevaluated.iter().map(|(what, rules)| {
            (format!("{}:{what}", catalog.name), format!("in {rules} rules' filters: never spares a finding"))
        }));
    }
    summary
}

/// Which part of a rule's match is the secret.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SecretGroup {
    /// gitleaks' `secretGroup`.
    Numbered(usize),
    /// gitleaks without a `secretGroup`: the first non-empty group, else the
    /// whole match.
    FirstNonEmpty,
    /// CredSweeper: the group named `value`.
    Named(&'static str),
}

/// The language a rule's pattern is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dialect {
    /// Go's RE2: ASCII classes, compiled as a byte regex.
    Re2,
    /// Python's `re`: Unicode classes, look-around, conditionals.
    Python,
}

/// A pattern as compiled.
#[derive(Debug)]
enum Compiled {
    Bytes(regex::bytes::Regex),
    Text(regex::Regex),
    Fancy(fancy_regex::Regex),
}

impl Compiled {
    fn new(source: &str, dialect: Dialect) -> Option<Self> {
        match dialect {
            Dialect::Re2 => compile(source).ok().map(Self::Bytes),
            Dialect::Python => {
                regex::RegexBuilder::new(source).size_limit(REGEX_SIZE_LIMIT).build().map(Self::Text).ok().or_else(
                    || {
                        fancy_regex::RegexBuilder::new(source)
                            .backtrack_limit(BACKTRACK_LIMIT)
                            .delegate_size_limit(REGEX_SIZE_LIMIT)
                            .build()
                            .ok()
                            .map(Self::Fancy)
                    },
                )
            }
        }
    }

    /// Each match of `text`: its span and the span of its secret.
    fn each_match(&self, text: &str, group: SecretGroup, mut found: impl FnMut(Range<usize>, Range<usize>)) {
        // The three engines' captures share their shape, not a type.
        macro_rules! each {
            ($matches:expr) => {
                for captures in $matches {
                    let groups = (0..captures.len()).map(|index| captures.get(index).map(|group| group.range()));
                    if let Some((whole, secret)) = pick(groups, group, |name| captures.name(name).map(|m| m.range())) {
                        found(whole, secret);
                    }
                }
            };
        }
        match self {
            Self::Bytes(regex) => each!(regex.captures_iter(text.as_bytes())),
            Self::Text(regex) => each!(regex.captures_iter(text)),
            // A text past the backtracking limit yields no more matches.
            Self::Fancy(regex) => each!(regex.captures_iter(text).map_while(Result::ok)),
        }
    }
}

/// The whole match and the secret in it, from a match's groups in order.
fn pick(
    mut groups: impl Iterator<Item = Option<Range<usize>>>,
    group: SecretGroup,
    named: impl Fn(&str) -> Option<Range<usize>>,
) -> Option<(Range<usize>, Range<usize>)> {
    let whole = groups.next().flatten()?;
    let secret = match group {
        SecretGroup::Numbered(index) => groups.nth(index - 1).flatten(),
        SecretGroup::FirstNonEmpty => groups.flatten().find(|group| !group.is_empty()).or(Some(whole.clone())),
        SecretGroup::Named(name) => named(name),
    }?;
    (!secret.is_empty()).then_some((whole, secret))
}

#[derive(Debug)]
struct Rule {
    id: String,
    /// The pattern as it is compiled.
    source: String,
    dialect: Dialect,
    /// Compiled when the rule is first woken: most rules never are in a
    /// process's life, and all of them compiled at once cost a sidecar tens
    /// of MiB.
    compiled: OnceLock<Option<Compiled>>,
    secret_group: SecretGroup,
    entropy: Option<f64>,
    allowlists: Vec<Allowlist>,
    /// CredSweeper: a line shorter than this holds no such secret.
    min_line_len: usize,
    /// CredSweeper: the line must also match this, compiled with the rule.
    line_pattern: Option<String>,
    line_regex: OnceLock<Option<regex::Regex>>,
    /// Kingfisher: discards a finding when it holds.
    filter: Option<filter::Filter>,
    format: OnceLock<bool>,
}

impl Rule {
    fn new(id: String, source: String, dialect: Dialect, secret_group: SecretGroup) -> Self {
        Self {
            id,
            source,
            dialect,
            compiled: OnceLock::new(),
            secret_group,
            entropy: None,
            allowlists: Vec::new(),
            min_line_len: 0,
            line_pattern: None,
            line_regex: OnceLock::new(),
            filter: None,
            format: OnceLock::new(),
        }
    }

    /// True when every match begins with a literal of three characters or
    /// more: a provider's format, not a value after a word.
    fn is_format(&self) -> bool {
        *self.format.get_or_init(|| literals::prefixes(&literal_braces(&self.source)).is_some())
    }

    /// Its pattern, compiled on first use; `None` when it does not compile
    /// here (the catalog's tests make sure none of the shipped ones fail).
    fn compiled(&self) -> Option<&Compiled> {
        self.compiled.get_or_init(|| Compiled::new(&self.source, self.dialect)).as_ref()
    }

    /// True when the line around a match may hold this rule's secret.
    fn line_qualifies(&self, line: &[u8]) -> bool {
        if line.len() < self.min_line_len {
            return false;
        }
        let Some(pattern) = &self.line_pattern else { return true };
        let regex = self.line_regex.get_or_init(|| regex::Regex::new(pattern).ok());
        regex.as_ref().is_none_or(|regex| regex.is_match(&String::from_utf8_lossy(line)))
    }
}

/// Go regexes (an allowlist's, a filter's `matchesAny` list), joined into
/// one set on first use: compiled, the allowlists of gitleaks' catalog alone
/// take 0.4 MiB, and most are never asked.
#[derive(Debug)]
struct Patterns {
    sources: Vec<String>,
    set: OnceLock<Option<RegexSet>>,
}

impl Patterns {
    fn new(sources: Vec<String>) -> Self {
        Self { sources, set: OnceLock::new() }
    }

    fn is_empty(&self) -> bool {
        self.sources.is_empty()
    }

    /// True when one of the patterns matches `text`; `None` when they do not
    /// compile here (the tests keep that from happening).
    fn is_match(&self, text: &[u8]) -> Option<bool> {
        let set = self.set.get_or_init(|| {
            RegexSetBuilder::new(self.sources.iter().map(|source| literal_braces(source)))
                .unicode(false)
                .size_limit(REGEX_SIZE_LIMIT)
                .build()
                .ok()
        });
        set.as_ref().map(|set| set.is_match(text))
    }

    /// The patterns no regex of this crate compiles.
    #[cfg(test)]
    fn broken(&self) -> Vec<&str> {
        self.sources.iter().filter(|source| compile(source).is_err()).map(String::as_str).collect()
    }
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
    regexes: Patterns,
    target: Target,
    stopwords: Option<WordList>,
    /// `AND` with a path or commit check: can never hold for a context.
    never: bool,
    all: bool,
}

impl Allowlist {
    /// True when the finding is allowed (not a secret).
    fn allows(&self, secret: &[u8], matched: &[u8], line: &[u8], stopwords: Stopwords) -> bool {
        if self.never {
            return false;
        }
        let target = match self.target {
            Target::Secret => secret,
            Target::Match => matched,
            Target::Line => line,
        };
        let regex = (!self.regexes.is_empty()).then(|| self.regexes.is_match(target) == Some(true));
        let stopword =
            self.stopwords.as_ref().filter(|_| stopwords == Stopwords::Read).map(|words| words.is_found_in(secret));
        let checks = [regex, stopword];
        if self.all {
            checks.iter().flatten().all(|held| *held) && checks.iter().any(Option::is_some)
        } else {
            checks.iter().flatten().any(|held| *held)
        }
    }
}

/// Whether an allowlist's stopwords count. They are substrings, which a
/// random value holds by chance (one of gitleaks' 1,400 in one of about
/// twenty random 32-character keys): read for a rule's own finds, ignored
/// where an allowlist judges what another layer found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stopwords {
    Read,
    Ignored,
}

/// One compiled catalog.
#[derive(Debug)]
struct Catalog {
    name: &'static str,
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
    skipped: Vec<(String, String)>,
    /// What the rules' filters hold that is not evaluated here, with how
    /// many rules it touches, most first.
    unevaluated: Vec<(String, usize)>,
}

impl Catalog {
    /// True when the catalog's global allowlists or the rule's own allow
    /// the finding (declare it no secret).
    fn allows(&self, rule: &Rule, secret: &[u8], matched: &[u8], line: &[u8], stopwords: Stopwords) -> bool {
        self.global.iter().chain(&rule.allowlists).any(|allowlist| allowlist.allows(secret, matched, line, stopwords))
    }

    /// What this catalog finds in `text`.
    fn find(&self, text: &str, findings: &mut Findings) {
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
        for (_, rule) in self.rules.iter().enumerate().filter(|(index, _)| woken[*index]) {
            self.find_rule(rule, text, findings);
        }
    }

    fn find_rule(&self, rule: &Rule, text: &str, findings: &mut Findings) {
        let Some(compiled) = rule.compiled() else { return };
        let bytes = text.as_bytes();
        compiled.each_match(text, rule.secret_group, |whole, secret| {
            let secret_bytes = &bytes[secret.clone()];
            if rule.entropy.is_some_and(|minimum| crate::entropy::shannon(secret_bytes) <= minimum) {
                findings.spared.push(secret);
                return;
            }
            let line = line_around(bytes, whole.clone());
            if !rule.line_qualifies(line) {
                return;
            }
            let matched = &bytes[whole];
            let allowed = self.allows(rule, secret_bytes, matched, line, Stopwords::Read);
            let filtered = rule
                .filter
                .as_ref()
                .is_some_and(|filter| filter.discards(&filter::Finding { secret: secret_bytes, matched, line }));
            let secret = password_of_pair(&rule.id, secret, bytes);
            if allowed || filtered {
                findings.spared.push(secret);
            } else if rule.is_format() {
                findings.formats.push(secret);
            } else {
                findings.secrets.push(secret);
            }
        });
    }
}

/// Rules as they are read, and the keywords that wake them.
struct Builder {
    name: &'static str,
    rules: Vec<Rule>,
    skipped: Vec<(String, String)>,
    unevaluated: Vec<(String, usize)>,
    keyword_index: Vec<(String, usize)>,
    always: Vec<usize>,
    always_patterns: Vec<String>,
}

impl Builder {
    fn new(name: &'static str) -> Self {
        Self {
            name,
            rules: Vec::new(),
            skipped: Vec::new(),
            unevaluated: Vec::new(),
            keyword_index: Vec::new(),
            always: Vec::new(),
            always_patterns: Vec::new(),
        }
    }

    fn skip(&mut self, id: impl Into<String>, why: impl Into<String>) {
        self.skipped.push((id.into(), why.into()));
    }

    /// A rule without keywords is gated by the words every match of it
    /// holds (`literals.rs`); one without such words is woken by the set of
    /// such rules, which only the `regex` crate's syntax can join, and a
    /// rule that needs more would run on every text, so it is left out.
    fn push(&mut self, rule: Rule, keywords: &[String]) {
        let index = self.rules.len();
        let pattern = match rule.dialect {
            Dialect::Re2 => literal_braces(&rule.source),
            Dialect::Python => rule.source.clone(),
        };
        let required = if keywords.is_empty() { literals::required(&pattern) } else { None };
        let keywords = required.as_deref().unwrap_or(keywords);
        if keywords.is_empty() {
            if regex_syntax::Parser::new().parse(&pattern).is_err() {
                self.skip(rule.id, "names no keyword, and its pattern needs look-around");
                return;
            }
            self.always.push(index);
            self.always_patterns.push(pattern);
        }
        self.keyword_index.extend(keywords.iter().map(|keyword| (keyword.to_lowercase(), index)));
        self.rules.push(rule);
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
            name: self.name,
            rules: self.rules,
            keywords,
            keyword_rules,
            always: self.always,
            always_set,
            global,
            skipped: self.skipped,
            unevaluated: self.unevaluated,
        })
    }
}

fn compile(source: &str) -> Result<regex::bytes::Regex, regex::Error> {
    RegexBuilder::new(&literal_braces(source)).unicode(false).size_limit(REGEX_SIZE_LIMIT).build()
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

/// An allowlist's stopwords, compared case-insensitively. Their automaton is
/// built on first use: few rules are ever woken, and the automata of all of
/// them would cost a sidecar more than the rules' patterns.
#[derive(Debug)]
struct WordList {
    words: Vec<String>,
    automaton: OnceLock<Option<AhoCorasick>>,
}

impl WordList {
    /// `None` for no words.
    fn new(words: &[String]) -> Option<Self> {
        (!words.is_empty())
            .then(|| Self { words: words.iter().map(|word| word.to_lowercase()).collect(), automaton: OnceLock::new() })
    }

    /// True when `text` holds one of the words.
    fn is_found_in(&self, text: &[u8]) -> bool {
        self.automaton
            .get_or_init(|| AhoCorasickBuilder::new().ascii_case_insensitive(true).build(&self.words).ok())
            .as_ref()
            .is_some_and(|automaton| automaton.is_match(text))
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

/// The lines of `bytes` that `range` touches.
fn line_around(bytes: &[u8], range: Range<usize>) -> &[u8] {
    let start = bytes[..range.start].iter().rposition(|byte| *byte == b'\n').map_or(0, |at| at + 1);
    let end = bytes[range.end..].iter().position(|byte| *byte == b'\n').map_or(bytes.len(), |at| range.end + at);
    &bytes[start..end]
}

#[cfg(test)]
mod tests;
