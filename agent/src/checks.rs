//! Which shell commands are QA checks (tests, builds, type checks, linters),
//! and the lines of their output that say what failed.
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
/// Error lines taken as the failure's messages, each cut to this.
const MAX_ERROR_LINES: usize = 20;
const MAX_LINE_CHARS: usize = 500;

/// The commands that count as checks.
#[derive(Debug, Clone)]
pub struct Checks {
    patterns: Vec<Regex>,
}

impl Default for Checks {
    fn default() -> Self {
        Self::new(&[]).expect("the default patterns compile")
    }
}

impl Checks {
    /// The defaults and `extra` (regexes, matched like them); a bad regex is
    /// refused naming it.
    pub fn new(extra: &[String]) -> Result<Self, String> {
        let mut patterns = Vec::new();
        for pattern in extra.iter().map(String::as_str).chain(DEFAULT_PATTERNS.iter().copied()) {
            patterns.push(ascii(pattern).map_err(|error| format!("check pattern {pattern:?}: {error}"))?);
        }
        Ok(Self { patterns })
    }

    /// The check a command runs, by name (`cargo test`, `pytest`), when one
    /// of its commands is one.
    pub fn check_of(&self, command: &str) -> Option<String> {
        parts(command).find_map(|segment| {
            self.patterns
                .iter()
                .find_map(|pattern| pattern.find(segment.as_bytes()).filter(|found| found.start() == 0))
                .map(|found| fold(&String::from_utf8_lossy(found.as_bytes())))
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

/// A line that says something failed, in the words test runners,
/// compilers and linters use.
static ERROR_LINE: LazyLock<Regex> = LazyLock::new(|| {
    ascii(r"(?i)\b(?:error|errors|failed|failure|fail|panicked|assert\w*|exception|traceback|fatal|cannot|undefined|not found)\b|\bE\d{3,5}\b|\bTS\d{4}\b")
        .expect("the error pattern compiles")
});

/// The lines of a failing check's output that say what failed: those that
/// look like errors, else the last lines. Never empty for a non-empty
/// output.
pub fn error_lines(output: &str) -> Vec<String> {
    let error = &*ERROR_LINE;
    let lines: Vec<&str> = output.lines().map(str::trim).filter(|line| !line.is_empty()).collect();
    let mut picked: Vec<String> = Vec::new();
    for line in lines.iter().filter(|line| error.is_match(line.as_bytes())) {
        let line = cut(line, MAX_LINE_CHARS);
        if !picked.contains(&line) {
            picked.push(line);
        }
        if picked.len() == MAX_ERROR_LINES {
            break;
        }
    }
    if picked.is_empty() {
        picked = lines[lines.len().saturating_sub(5)..].iter().map(|line| cut(line, MAX_LINE_CHARS)).collect();
    }
    picked
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
    fn the_error_lines_of_an_output_are_picked_else_its_last_lines() {
        let output = "running 3 tests\ntest a ... ok\ntest b ... FAILED\n\nthread 'b' panicked at src/lib.rs:4:5:\nassertion `left == right` failed\n  left: 4\n right: 5\ntest result: FAILED. 1 passed; 1 failed\n";
        assert_eq!(
            error_lines(output),
            vec![
                "test b ... FAILED",
                "thread 'b' panicked at src/lib.rs:4:5:",
                "assertion `left == right` failed",
                "test result: FAILED. 1 passed; 1 failed",
            ]
        );
        assert_eq!(error_lines("a\nb\nc\n"), vec!["a", "b", "c"]);
        assert!(error_lines("").is_empty());
    }

    #[test]
    fn a_long_output_keeps_its_end_on_a_character_boundary() {
        let output = format!("{}{}", "é".repeat(20_000), "the end");
        let kept = tail(&output);
        assert!(kept.len() <= MAX_OUTPUT_BYTES && kept.ends_with("the end"));
    }
}
