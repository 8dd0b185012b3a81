//! Which shell commands are QA checks (tests, builds, type checks, linters),
//! and the end of their output (the lines that say what failed are
//! [`crate::failure_lines`]'s).
//!
//! A failing check becomes a captured QA failure and the same check passing
//! later its fix, so the patterns are the common checks of every ecosystem;
//! a project adds its own with `--check-pattern` or `LORE_CHECK_PATTERNS`.

use std::sync::LazyLock;

use regex::bytes::{Regex, RegexBuilder};

/// The checks recognized without configuration. Each is a regex that must
/// match at the start of a command (after `&&`, `;` or `|`, environment
/// assignments, wrappers such as `timeout 60` or `uv run`, and the
/// program's directory); the check's name is what it matched.
pub const DEFAULT_PATTERNS: &[&str] = &[
    r"cargo\s+(?:\+\S+\s+)?(?:test|nextest|build|check|clippy|fmt\s+--check)\b",
    r"(?:npm|pnpm|yarn|bun)\s+(?:run\s+)?(?:test|build|lint|typecheck|type-check|check)\b",
    r"(?:npx\s+)?(?:jest|vitest|mocha|tsc|eslint|prettier\s+--check)\b",
    r"python3?\s+-m\s+(?:pytest|unittest|mypy|ruff|flake8|pylint|black\s+--check)\b",
    r"(?:pytest|py\.test|tox|nox|mypy|ruff|flake8|pylint)\b",
    r"go\s+(?:test|build|vet)\b",
    r"golangci-lint\b",
    r"(?:gradlew|gradle|mvnw|mvn)\b[^|;&]*?\b(?:test|build|check|verify|compile)\b",
    r"dotnet\s+(?:test|build)\b",
    r"(?:bazel|bazelisk)\s+(?:test|build)\b",
    r"(?:ctest|rspec|phpunit|shellcheck|hadolint)\b",
    r"make\b(?:\s+(?:test|check|build|lint|all))?",
];

/// What may come before the program of a command and says nothing about
/// it: environment assignments and wrappers.
static PREFIX: LazyLock<Regex> = LazyLock::new(|| {
    ascii(r"^(?:[A-Za-z_][A-Za-z0-9_]*=\S*\s+|sudo\s+|time\s+|nice\s+|env\s+|timeout\s+\S+\s+|uv\s+run\s+|poetry\s+run\s+|pipenv\s+run\s+|bundle\s+exec\s+)+")
        .expect("the prefix pattern compiles")
});

/// A pattern over bytes with ASCII classes: commands and their tools' words
/// are ASCII, and such a pattern compiles in half the time of a Unicode one
/// (a hook compiles its patterns on every run, within 100 ms).
fn ascii(pattern: &str) -> Result<Regex, regex::Error> {
    RegexBuilder::new(pattern).unicode(false).build()
}

/// Output kept per check: the end of a long log says what failed.
const MAX_OUTPUT_BYTES: usize = 16 * 1024;

/// The commands that count as checks. A hook runs in milliseconds and
/// compiling every pattern costs more than the rest of its work, so a
/// pattern is compiled only for a command it may match: one that begins
/// with one of its literal prefixes (`cargo`, `npm`...).
#[derive(Debug, Clone)]
pub struct Checks {
    patterns: Vec<String>,
}

impl Default for Checks {
    fn default() -> Self {
        Self::new(&[]).expect("the default patterns compile")
    }
}

impl Checks {
    /// The defaults and `extra` (regexes, matched like them); a bad regex is
    /// refused naming it (so `extra` is compiled here, once).
    pub fn new(extra: &[String]) -> Result<Self, String> {
        for pattern in extra {
            ascii(pattern).map_err(|error| format!("check pattern {pattern:?}: {error}"))?;
        }
        let patterns =
            extra.iter().cloned().chain(DEFAULT_PATTERNS.iter().map(|pattern| (*pattern).to_owned())).collect();
        Ok(Self { patterns })
    }

    /// The check a command runs, by name (`cargo test`, `pytest`), when one
    /// of its commands is one.
    pub fn check_of(&self, command: &str) -> Option<String> {
        let parts: Vec<String> = parts(command).collect();
        if parts.is_empty() {
            return None;
        }
        // Each pattern's prefixes are read once, and only for a command.
        let prefixes: Vec<Prefixes> = self.patterns.iter().map(|pattern| Prefixes::of(pattern)).collect();
        parts.into_iter().find_map(|segment| {
            self.patterns
                .iter()
                .zip(&prefixes)
                .filter(|(_, prefixes)| prefixes.may_start(&segment))
                .filter_map(|(pattern, _)| ascii(pattern).ok())
                .find_map(|pattern| {
                    let found = pattern.find(segment.as_bytes()).filter(|found| found.start() == 0)?;
                    Some(fold(&String::from_utf8_lossy(found.as_bytes())))
                })
        })
    }
}

/// The literal prefixes a regex's matches begin with, read from its syntax
/// tree without compiling it (parsing is a small part of compiling).
/// `None` when they are not a finite set (or the pattern does not parse):
/// it may match anything.
#[derive(Debug, Clone)]
pub(crate) struct Prefixes(Option<Vec<Vec<u8>>>);

impl Prefixes {
    pub(crate) fn of(pattern: &str) -> Self {
        use regex_syntax::hir::literal::{ExtractKind, Extractor};
        let Ok(hir) = regex_syntax::ParserBuilder::new().unicode(false).utf8(false).build().parse(pattern) else {
            return Self(None);
        };
        let mut extractor = Extractor::new();
        extractor.kind(ExtractKind::Prefix);
        let literals = extractor.extract(&hir);
        Self(literals.literals().map(|literals| literals.iter().map(|literal| literal.as_bytes().to_vec()).collect()))
    }

    /// Whether a match may begin `part`.
    pub(crate) fn may_start(&self, part: &str) -> bool {
        self.0.as_ref().is_none_or(|prefixes| prefixes.iter().any(|prefix| part.as_bytes().starts_with(prefix)))
    }

    /// Whether a match may be anywhere in `text`.
    pub(crate) fn may_occur(&self, text: &str) -> bool {
        self.0.as_ref().is_none_or(|prefixes| {
            prefixes.iter().any(|prefix| memchr::memmem::find(text.as_bytes(), prefix).is_some())
        })
    }
}

/// The parts of a shell command (at `&&`, `;`, `|`, newlines and
/// parentheses), each from its program on.
pub fn parts(command: &str) -> impl Iterator<Item = String> + '_ {
    command.split(['\n', ';', '|', '&', '(', ')']).map(program_first).filter(|part| !part.is_empty())
}

/// A command from its program on: without environment assignments and
/// wrappers, and the program without its directory (`./gradlew` is
/// `gradlew`).
fn program_first(segment: &str) -> String {
    let segment = segment.trim();
    let segment = PREFIX.find(segment.as_bytes()).map_or(segment, |prefix| &segment[prefix.end()..]);
    let (program, rest) = segment.split_once(char::is_whitespace).unwrap_or((segment, ""));
    let program = program.rsplit('/').next().unwrap_or(program);
    if rest.is_empty() { program.to_owned() } else { format!("{program} {rest}") }
}

/// The command with its whitespace folded: the same check typed twice is
/// the same key.
pub fn fold(command: &str) -> String {
    command.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The end of an output, at most [`MAX_OUTPUT_BYTES`], cut on a character
/// boundary.
pub fn tail(output: &str) -> String {
    tail_within(output, MAX_OUTPUT_BYTES).to_owned()
}

/// The end of an output, at most `max` bytes, cut on a character boundary.
pub fn tail_within(output: &str, max: usize) -> &str {
    let mut start = output.len().saturating_sub(max);
    while !output.is_char_boundary(start) {
        start += 1;
    }
    &output[start..]
}

/// The first `max` characters of `line`.
pub fn cut(line: &str, max: usize) -> String {
    line.chars().take(max).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn common_checks_are_recognized_and_named() {
        let checks = Checks::default();
        for (command, name) in [
            ("cargo test -p lore-server", "cargo test"),
            ("cd app &&  npm   run test -- --watch=false", "npm run test"),
            ("python -m pytest tests/test_calc.py -q", "python -m pytest"),
            ("pytest -x", "pytest"),
            ("go vet ./...", "go vet"),
            ("./gradlew :app:test", "gradlew :app:test"),
            ("RUST_LOG=debug timeout 600 cargo nextest run", "cargo nextest"),
            ("uv run pytest tests", "pytest"),
            ("/usr/bin/python3 -m mypy src", "python3 -m mypy"),
            ("npx tsc --noEmit", "npx tsc"),
            ("make test", "make test"),
        ] {
            assert_eq!(checks.check_of(command).as_deref(), Some(name), "{command}");
        }
        for command in ["ls -la", "git status", "cat Makefile", "echo testing", "grep -r pytest docs", "vim Cargo.toml"]
        {
            assert_eq!(checks.check_of(command), None, "{command}");
        }
    }

    #[test]
    fn a_project_adds_its_own_checks_and_a_bad_pattern_is_named() {
        let checks = Checks::new(&[r"\brun-e2e\.sh\b".into()]).unwrap();
        assert_eq!(checks.check_of("./run-e2e.sh --fast").as_deref(), Some("run-e2e.sh"));
        let error = Checks::new(&["(".into()]).unwrap_err();
        assert!(error.starts_with("check pattern \"(\""), "{error}");
    }

    #[test]
    fn a_long_output_keeps_its_end_on_a_character_boundary() {
        let output = format!("{}{}", "é".repeat(20_000), "the end");
        let kept = tail(&output);
        assert!(kept.len() <= MAX_OUTPUT_BYTES && kept.ends_with("the end"));
    }
}
