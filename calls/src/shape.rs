//! A shell command's shape: what stays the same when another session runs
//! "the same" command on other files.
//!
//! `cd /testbed && PYTHONPATH=. timeout 60 pytest -x tests/test_a.py -k slow`
//! has the shape `pytest -x <arg> -k <arg>`: the program as written, the
//! subcommand of programs that have them (`git commit`, `cargo test`), the
//! module of `python -m`, and flag names; every path and value is `<arg>`.
//! Segments joined by `&&`, `;` or a pipe each get a shape; those that only
//! move around or print (`cd`, `echo`) are left out, and a heredoc's body
//! is text, not commands.

/// What a masked argument reads as.
pub const ARG: &str = "<arg>";
/// A shape keeps at most this many segments: a long script repeats less
/// than its first commands do.
const MAX_SEGMENTS: usize = 3;
/// A command is cut to this many characters before it is read.
const MAX_COMMAND_CHARS: usize = 4096;

/// Programs whose first word is a subcommand that says what they do.
const WITH_SUBCOMMANDS: &[&str] = &[
    "apt",
    "apt-get",
    "brew",
    "bun",
    "bundle",
    "cargo",
    "conda",
    "deno",
    "docker",
    "dotnet",
    "gem",
    "gh",
    "git",
    "go",
    "gradle",
    "gradlew",
    "helm",
    "kubectl",
    "make",
    "mvn",
    "mvnw",
    "npm",
    "npx",
    "pip",
    "pip3",
    "pipenv",
    "pnpm",
    "poetry",
    "rustup",
    "terraform",
    "uv",
    "yarn",
];
/// Segments that only move around, print or set the shell up.
const NOISE: &[&str] = &[
    ":", ".", "cd", "clear", "echo", "exit", "export", "false", "printf", "pwd", "set", "sleep", "source", "true",
    "unset",
];
/// Words that run the command after them and say nothing of it.
const WRAPPERS: &[&str] = &["command", "env", "exec", "nice", "nohup", "stdbuf", "sudo", "time", "xargs"];

/// What kind of action a command is: a later command of the same kind that
/// passed is what worked after a failure.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    Test,
    Build,
    Install,
    Lint,
    /// Any other program, by its name.
    Run(String),
}

/// A command's shape; see the module's documentation.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Shape {
    segments: Vec<Segment>,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Segment {
    /// The program as written (an absolute path by its file name).
    program: String,
    /// Subcommand, `-m` module, flags and `<arg>`s, in order.
    words: Vec<String>,
}

impl Shape {
    pub fn of(command: &str) -> Self {
        let command = cut(command, MAX_COMMAND_CHARS);
        let segments = split_segments(&without_heredocs(command))
            .iter()
            .filter_map(|segment| Segment::of(segment))
            .take(MAX_SEGMENTS)
            .collect();
        Self { segments }
    }

    /// No segment that does anything (`cd x && echo done`).
    pub fn is_empty(&self) -> bool {
        self.segments.is_empty()
    }

    /// The shape as text, which is also its key.
    pub fn text(&self) -> String {
        self.segments.iter().map(Segment::text).collect::<Vec<_>>().join(" && ")
    }

    /// Exit code 1 of a query tool whose last segment it is means "found
    /// nothing" (POSIX: grep, diff, cmp, test), not a failure.
    pub fn is_no_match(&self, exit_code: i64) -> bool {
        const QUERIES: &[&str] = &["[", "cmp", "diff", "egrep", "fgrep", "grep", "rg", "test"];
        exit_code == 1
            && self
                .segments
                .last()
                .is_some_and(|segment| QUERIES.contains(&segment.program.rsplit('/').next().unwrap_or_default()))
    }

    /// Whether `other`'s segments run, in order and next to each other, in
    /// this shape: a guard of `pytest <arg>` holds `cd src && pytest <arg>`
    /// and `pytest <arg> ; make lint` too.
    pub fn contains(&self, other: &Shape) -> bool {
        !other.segments.is_empty() && self.segments.windows(other.segments.len()).any(|window| window == other.segments)
    }

    /// The kind of its first segment.
    pub fn kind(&self) -> Option<Kind> {
        self.segments.first().map(Segment::kind)
    }
}

/// The command with its whitespace folded, cut: the finest key, for a
/// command repeated word for word.
pub fn exact(command: &str) -> String {
    let folded = command.split_whitespace().collect::<Vec<_>>().join(" ");
    cut(&folded, 300).to_owned()
}

fn cut(text: &str, chars: usize) -> &str {
    match text.char_indices().nth(chars) {
        Some((end, _)) => &text[..end],
        None => text,
    }
}

impl Segment {
    fn of(text: &str) -> Option<Self> {
        let words = shlex::split(text).unwrap_or_else(|| text.split_whitespace().map(str::to_owned).collect());
        let words = without_redirections(words);
        let mut rest = words.as_slice();
        // Assignments, wrappers and their own arguments come before the program.
        loop {
            match rest.first().map(String::as_str) {
                Some(word) if is_assignment(word) => rest = &rest[1..],
                Some("timeout") => {
                    rest = &rest[1..];
                    while let Some(flag) = rest.first().filter(|word| word.starts_with('-')) {
                        // `-s KILL` and `-k 5` take a value.
                        let skip =
                            if matches!(flag.as_str(), "-s" | "-k" | "--signal" | "--kill-after") { 2 } else { 1 };
                        rest = rest.get(skip..).unwrap_or_default();
                    }
                    rest = rest.get(1..).unwrap_or_default();
                }
                Some(word) if WRAPPERS.contains(&word) => {
                    rest = &rest[1..];
                    while rest.first().is_some_and(|word| word.starts_with('-') || is_assignment(word)) {
                        rest = &rest[1..];
                    }
                }
                Some("uv" | "poetry" | "pipenv") if rest.get(1).is_some_and(|word| word == "run") => rest = &rest[2..],
                Some("bundle") if rest.get(1).is_some_and(|word| word == "exec") => rest = &rest[2..],
                _ => break,
            }
        }
        let (program, arguments) = rest.split_first()?;
        if program.starts_with('#') || NOISE.contains(&program.as_str()) {
            return None;
        }
        let program = program_name(program);
        Some(Self { words: masked(&program, arguments), program })
    }

    fn text(&self) -> String {
        std::iter::once(self.program.as_str())
            .chain(self.words.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn kind(&self) -> Kind {
        let program = self.program.rsplit('/').next().unwrap_or_default();
        let first = self.words.first().map(String::as_str).unwrap_or_default();
        let module = match (program.starts_with("python"), first) {
            (true, "-m") => self.words.get(1).map(String::as_str).unwrap_or_default(),
            _ => "",
        };
        let sub = if WITH_SUBCOMMANDS.contains(&program) { first } else { "" };
        let sub = if sub == "run" { self.words.get(1).map(String::as_str).unwrap_or_default() } else { sub };
        let tool = if module.is_empty() { program } else { module };
        const TESTS: &[&str] =
            &["ctest", "jest", "mocha", "nox", "phpunit", "py.test", "pytest", "rspec", "tox", "unittest", "vitest"];
        const LINTS: &[&str] = &[
            "black",
            "clippy",
            "eslint",
            "flake8",
            "golangci-lint",
            "mypy",
            "prettier",
            "pylint",
            "ruff",
            "shellcheck",
            "tsc",
            "vet",
        ];
        const BUILDS: &[&str] = &["build", "check", "compile", "package"];
        const INSTALLS: &[&str] = &["add", "ci", "get", "i", "install", "sync"];
        // `make check` runs a project's tests (the GNU Coding Standards'
        // name for the target), where `cargo check` builds.
        let make_check = program == "make" && sub == "check";
        // `npx vitest`, `pnpm exec jest`: the subcommand is the tool.
        if make_check || [tool, sub].iter().any(|name| TESTS.contains(name) || name.contains("test")) {
            Kind::Test
        } else if LINTS.contains(&tool) || LINTS.contains(&sub) || sub == "lint" {
            Kind::Lint
        } else if !sub.is_empty() && INSTALLS.contains(&sub) && program != "git" {
            Kind::Install
        } else if BUILDS.contains(&sub) || (program == "make" && (sub.is_empty() || sub == ARG)) {
            Kind::Build
        } else {
            Kind::Run(tool.to_owned())
        }
    }
}

fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty()
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !name.starts_with(|c: char| c.is_ascii_digit())
    })
}

/// An absolute program by its file name; a relative one as written, without
/// a leading `./` (`./tests/runtests.py` and `tests/runtests.py` are one).
fn program_name(program: &str) -> String {
    if program.starts_with('/') {
        program.rsplit('/').next().unwrap_or(program).to_owned()
    } else {
        program.trim_start_matches("./").to_owned()
    }
}

/// Subcommand (of programs that have them), `-m` module and flag names
/// kept; paths, values and code masked, a run of them as one `<arg>`.
fn masked(program: &str, arguments: &[String]) -> Vec<String> {
    let name = program.rsplit('/').next().unwrap_or(program);
    let interpreter = name.starts_with("python");
    let mut words: Vec<String> = Vec::new();
    let push_arg = |words: &mut Vec<String>| {
        if words.last().is_none_or(|last| last != ARG) {
            words.push(ARG.to_owned());
        }
    };
    let mut index = 0;
    while let Some(argument) = arguments.get(index) {
        index += 1;
        if argument.starts_with('-') && argument.len() > 1 && !argument.starts_with("--=") {
            let flag = argument.split_once('=').map_or(argument.as_str(), |(flag, _)| flag);
            words.push(flag.to_owned());
            if interpreter && flag == "-m" {
                if let Some(module) = arguments.get(index) {
                    words.push(module.clone());
                    index += 1;
                }
            } else if interpreter && flag == "-c" {
                push_arg(&mut words);
                index += 1;
            }
        } else if words.is_empty() && WITH_SUBCOMMANDS.contains(&name) && is_word(argument) {
            words.push(argument.clone());
        } else if words.len() == 1
            && matches!(words[0].as_str(), "run" | "exec")
            && WITH_SUBCOMMANDS.contains(&name)
            && is_word(argument)
        {
            // `npm run test`, `cargo run` is kept as `run` alone.
            words.push(argument.clone());
        } else {
            push_arg(&mut words);
        }
    }
    words
}

fn is_word(text: &str) -> bool {
    text.starts_with(|c: char| c.is_ascii_lowercase())
        && text.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == ':')
}

/// Redirections and their targets say where output goes, not what ran.
fn without_redirections(words: Vec<String>) -> Vec<String> {
    let mut kept = Vec::with_capacity(words.len());
    let mut words = words.into_iter();
    while let Some(word) = words.next() {
        let operator = word.trim_start_matches(|c: char| c.is_ascii_digit() || c == '&');
        // A shape's own mask, so that a shape read again is the same shape
        // (a person guards a call by the shape Lore showed).
        if word == ARG {
            kept.push(word);
        } else if matches!(operator, ">" | ">>" | "<" | "<<<" | ">|") {
            words.next();
        } else if !(operator.starts_with('>') || operator.starts_with('<')) || operator.starts_with("<(") {
            kept.push(word);
        }
    }
    kept
}

/// The command without heredoc bodies (`cat <<'EOF' > x.py` ... `EOF`),
/// lines continued with a backslash joined.
fn without_heredocs(command: &str) -> String {
    let mut kept = String::with_capacity(command.len());
    let mut until: Option<String> = None;
    for line in command.replace("\\\n", " ").lines() {
        if let Some(end) = &until {
            if line.trim() == end {
                until = None;
            }
            continue;
        }
        until = heredoc_end(line);
        kept.push_str(line);
        kept.push('\n');
    }
    kept
}

/// The word that ends a heredoc this line opens.
fn heredoc_end(line: &str) -> Option<String> {
    let start = line.find("<<")? + 2;
    let rest = line[start..].trim_start_matches('-').trim_start();
    let word: String =
        rest.trim_start_matches(['\'', '"']).chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
    (!word.is_empty() && !line[start..].starts_with('<')).then_some(word)
}

/// Splits at `&&`, `||`, `|`, `;`, `&` and newlines outside quotes.
fn split_segments(command: &str) -> Vec<String> {
    let mut segments = Vec::new();
    let mut current = String::new();
    let (mut single, mut double, mut escaped) = (false, false, false);
    let mut chars = command.chars().peekable();
    while let Some(c) = chars.next() {
        if escaped {
            escaped = false;
            current.push(c);
            continue;
        }
        match c {
            '\\' if !single => {
                escaped = true;
                current.push(c);
            }
            '\'' if !double => {
                single = !single;
                current.push(c);
            }
            '"' if !single => {
                double = !double;
                current.push(c);
            }
            '&' if !single && !double && (current.ends_with('>') || chars.peek() == Some(&'>')) => current.push(c),
            '|' | ';' | '&' | '\n' if !single && !double => {
                if matches!(chars.peek(), Some('|' | '&')) && c != '\n' && c != ';' {
                    chars.next();
                }
                segments.push(std::mem::take(&mut current));
            }
            _ => current.push(c),
        }
    }
    segments.push(current);
    segments.into_iter().map(|segment| segment.trim().to_owned()).filter(|segment| !segment.is_empty()).collect()
}

#[cfg(test)]
mod tests;
