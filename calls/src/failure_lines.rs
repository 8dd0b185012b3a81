//! The lines of a failed command's output that explain the failure.
//!
//! A failure is named by the line that explains it: an exception, an
//! `error:` line, a `FAILED` test, a shell's `not found`. A line that only
//! reports on the run never names one, though it reads as an error: a test
//! runner's summary (`=== 1 failed, 2 passed in 0.3s ===`, `FAILED
//! (failures=1)`), markup (a rule of `=` or `-`), a progress line (`[ 40%]`)
//! or a bare exit code (`Exit code 1`, make's `*** [test] Error 2`). Named
//! by those, the failures of every test run would be one pattern, and its
//! warning would say nothing (issue 55).

/// The line that marks where a long error was cut when it was recorded
/// (`hooks::record`): it says nothing of the failure.
pub const CUT_LINE: &str = "[…]";

/// Error lines taken as the failure's messages, each cut to this.
const MAX_ERROR_LINES: usize = 20;
const MAX_LINE_CHARS: usize = 500;
/// Lines taken from the end of an output none of whose lines reads as an
/// error.
const LAST_LINES: usize = 5;

/// Words that say something failed, as test runners, compilers and
/// linters write them (compared in lower case, whole words).
const ERROR_WORDS: &[&str] = &[
    "error",
    "errors",
    "failed",
    "failure",
    "fail",
    "panicked",
    "exception",
    "traceback",
    "fatal",
    "cannot",
    "undefined",
];

/// Phrases that say a call failed without an error word: the C library's
/// messages (`strerror`) for the errors a shell command meets most, as
/// every tool that reports them prints them, GNU make's missing target,
/// Python's missing module (its class name is often masked in a
/// template: `<*> No module named <*>`) and a missing object as databases,
/// git and package managers report it (`relation "users" does not exist`).
const ERROR_PHRASES: &[&str] = &[
    "no such file or directory",
    "permission denied",
    "operation not permitted",
    "connection refused",
    "no space left on device",
    "is a directory",
    "not a directory",
    "segmentation fault",
    "no rule to make target",
    "no module named",
    "does not exist",
];

/// A line that says something failed: one of [`ERROR_WORDS`], a word
/// beginning `assert`, an exception class, "not found", one of
/// [`ERROR_PHRASES`], or a compiler's error code (`E0308`, `TS2345`). Read
/// word by word rather than by a regex: compiling one costs a hook a
/// millisecond.
pub fn is_error_line(line: &str) -> bool {
    if has_error_phrase(line) {
        return true;
    }
    let is_word = |byte: u8| byte.is_ascii_alphanumeric() || byte == b'_';
    let bytes = line.as_bytes();
    let mut words = Vec::new();
    let mut start = None;
    for (index, &byte) in bytes.iter().chain(std::iter::once(&b' ')).enumerate() {
        match (is_word(byte), start) {
            (true, None) => start = Some(index),
            (false, Some(from)) => {
                words.push((from, index));
                start = None;
            }
            _ => {}
        }
    }
    let code = |word: &[u8], letters: usize, digits: std::ops::RangeInclusive<usize>| {
        word.len() > letters
            && digits.contains(&(word.len() - letters))
            && word[letters..].iter().all(u8::is_ascii_digit)
    };
    // An exception class (ModuleNotFoundError, NullPointerException): the
    // naming convention of Python, Java, JavaScript, C# and Ruby alike.
    let exception_class = |word: &str| {
        ["Error", "Exception"].iter().any(|suffix| word.len() > suffix.len() && word.ends_with(suffix))
            && word.starts_with(|c: char| c.is_ascii_uppercase())
    };
    words.iter().enumerate().any(|(at, &(from, to))| {
        if exception_class(&line[from..to]) {
            return true;
        }
        let word = line[from..to].to_ascii_lowercase();
        let word = word.as_bytes();
        let not_found = word == b"not"
            && words.get(at + 1).is_some_and(|&(next_from, next_to)| {
                next_from == to + 1 && bytes[to] == b' ' && line[next_from..next_to].eq_ignore_ascii_case("found")
            });
        ERROR_WORDS.iter().any(|error| error.as_bytes() == word)
            || word.starts_with(b"assert")
            || not_found
            || (word[0] == b'e' && code(word, 1, 3..=5))
            || (word.starts_with(b"ts") && code(word, 2, 4..=4))
    })
}

fn has_error_phrase(line: &str) -> bool {
    let lower = line.to_ascii_lowercase();
    ERROR_PHRASES.iter().any(|phrase| lower.contains(phrase))
}

/// Words a test runner counts its results in (`3 passed`, `failures=1`,
/// `Ran 4 tests`).
const RESULT_WORDS: &[&str] = &[
    "passed",
    "failed",
    "failures",
    "failure",
    "errors",
    "error",
    "skipped",
    "xfailed",
    "xpassed",
    "deselected",
    "warnings",
    "warning",
    "tests",
    "test",
    "succeeded",
    "pending",
];

/// The words a bare exit code is said in (`Exit code 1`, `exited with
/// status 2`, `npm ERR! errno 1`, make's `*** [test] Error 2`), and those
/// of them that say it is one.
const EXIT_WORDS: &[&str] = &[
    "exit", "exited", "code", "status", "error", "errno", "err", "with", "process", "command", "returned", "make",
    "npm",
];
const EXIT_MARKS: &[&str] = &["exit", "exited", "code", "status", "errno", "error"];

/// A line that reports on the run rather than explaining a failure: markup,
/// a count of results, progress, or a bare exit code (see the module).
pub fn is_report(line: &str) -> bool {
    let line = line.trim();
    is_rule(line) || is_count(line) || is_progress(line) || is_bare_exit(line)
}

/// Markup: a line that begins and ends with a run of one mark
/// (`=== FAILURES ===`, `____ test_x ____`, `------`), or one tag alone
/// (`</output>`, `<testcase name="x">`).
fn is_rule(line: &str) -> bool {
    ['=', '-', '_', '*', '#', '~'].into_iter().any(|mark| {
        let leading = line.chars().take_while(|c| *c == mark).count();
        let trailing = line.chars().rev().take_while(|c| *c == mark).count();
        leading >= 3 && trailing >= 3
    }) || is_tag(line)
}

/// One XML or HTML tag and nothing else.
fn is_tag(line: &str) -> bool {
    let Some(inside) = line.strip_prefix('<').and_then(|rest| rest.strip_suffix('>')) else {
        return false;
    };
    let name = inside.strip_prefix('/').unwrap_or(inside);
    name.starts_with(|c: char| c.is_ascii_alphabetic()) && !inside.contains(['<', '>'])
}

/// The words and numbers of a line, lower case, each with the characters
/// between it and the one before.
fn tokens(line: &str) -> Vec<(String, String)> {
    let mut tokens = Vec::new();
    let (mut gap, mut current) = (String::new(), String::new());
    for c in line.chars().chain(std::iter::once(' ')) {
        if c.is_alphanumeric() {
            current.push(c);
        } else {
            if !current.is_empty() {
                tokens.push((std::mem::take(&mut gap), std::mem::take(&mut current).to_lowercase()));
            }
            gap.push(c);
        }
    }
    tokens
}

fn is_number(token: &str) -> bool {
    token.chars().all(|c| c.is_ascii_digit())
}

/// A count of results: a number then a result word (`2 failed`), or a
/// result word then `=` and a number (`failures=1`).
fn is_count(line: &str) -> bool {
    tokens(line).windows(2).any(|pair| {
        let ((_, first), (gap, second)) = (&pair[0], &pair[1]);
        (is_number(first) && gap == " " && RESULT_WORDS.contains(&second.as_str()))
            || (RESULT_WORDS.contains(&first.as_str()) && gap == "=" && is_number(second))
    })
}

/// Progress: a line that ends with a percentage in brackets (`[ 40%]`).
fn is_progress(line: &str) -> bool {
    line.strip_suffix(']')
        .and_then(|rest| rest.rsplit_once('['))
        .and_then(|(_, inside)| inside.trim().strip_suffix('%'))
        .is_some_and(|share| share.trim().parse::<u8>().is_ok())
}

/// A bare exit code: outside brackets (a make target, a tool's tag), only
/// [`EXIT_WORDS`] and one number.
fn is_bare_exit(line: &str) -> bool {
    let mut outside = String::new();
    let mut depth = 0usize;
    for c in line.chars() {
        match c {
            '[' => depth += 1,
            ']' => depth = depth.saturating_sub(1),
            _ if depth == 0 => outside.push(c),
            _ => {}
        }
    }
    let tokens = tokens(&outside);
    let numbers = tokens.iter().filter(|(_, token)| is_number(token)).count();
    numbers == 1
        && tokens.iter().all(|(_, token)| is_number(token) || EXIT_WORDS.contains(&token.as_str()))
        && tokens.iter().any(|(_, token)| EXIT_MARKS.contains(&token.as_str()))
}

/// How Python begins a traceback. Its frames follow, indented deeper, and
/// then, at the header's own indent, the exception that explains it
/// (`django.core.exceptions.ImproperlyConfigured: ...`), whatever the
/// exception's class is called. A traceback may itself be indented (`site`
/// prints one so when a `.pth` file fails).
pub(crate) const TRACEBACK_HEADER: &str = "Traceback (most recent call last):";

/// How pytest marks the source line a test failed at (`>       raise
/// TypeError(...)`): code, with the explaining `E   ` lines after it.
const PYTEST_SOURCE_MARK: &str = ">   ";

/// What a line of output is to the traceback around it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    /// The exception a Python traceback ends with: it explains the failure.
    Exception,
    /// Where the failure happened: a traceback's frames and the source they
    /// quote, or the source line pytest marks. Code that mentions an error
    /// (`raise TypeError(`) is not the error, so it names no failure.
    Frame,
    /// A test pytest's short summary lists without a reason (`FAILED
    /// tests/test_x.py::test_y`): which test, not why. With a reason
    /// (`FAILED ... - KeyError: 'id'`) the line explains.
    Listed,
    Other,
}

/// How pytest heads the section that lists each failed test again.
const PYTEST_SUMMARY: &str = "short test summary info";

/// The role of each of `lines`: the first line after a traceback's header
/// at no deeper indent than the header is its exception, the lines between
/// are its frames.
fn roles(lines: &[&str]) -> Vec<Role> {
    let indent = |line: &str| line.len() - line.trim_start().len();
    let mut roles = vec![Role::Other; lines.len()];
    let mut header_indent = None;
    let mut in_summary = false;
    for (index, line) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        if is_rule(line.trim()) {
            in_summary = line.contains(PYTEST_SUMMARY);
        } else if in_summary && is_listed(line.trim()) {
            roles[index] = Role::Listed;
        }
        if line.trim() == TRACEBACK_HEADER {
            header_indent = Some(indent(line));
        } else if let Some(header) = header_indent {
            if indent(line) <= header {
                roles[index] = Role::Exception;
                header_indent = None;
            } else {
                roles[index] = Role::Frame;
            }
        } else if line.starts_with(PYTEST_SOURCE_MARK) {
            roles[index] = Role::Frame;
        }
    }
    roles
}

/// A summary's line that names a test and gives no reason.
fn is_listed(line: &str) -> bool {
    ["FAILED ", "ERROR "]
        .iter()
        .filter_map(|word| line.strip_prefix(word).map(str::trim))
        .any(|test| !test.is_empty() && !test.contains(' '))
}

/// The lines of a failed command's output that explain the failure: those
/// that read as errors, and a Python traceback's exception line, and
/// neither report on the run nor show where it failed, the last
/// [`MAX_ERROR_LINES`] of them. When no line reads as an error, the tests
/// a summary lists, else the last lines that are not reports. Empty when
/// every line is a report (a bare `Exit code 1`): no line explains that
/// failure, and none names it.
pub fn error_lines(output: &str) -> Vec<String> {
    let raw: Vec<&str> = output.lines().collect();
    let lines: Vec<(&str, Role)> = raw
        .iter()
        .zip(roles(&raw))
        .map(|(line, role)| (line.trim(), role))
        .filter(|(line, role)| !line.is_empty() && *line != CUT_LINE && *role != Role::Frame && !is_report(line))
        .collect();
    let explaining = last_distinct(
        lines.iter().filter(|(line, role)| *role == Role::Exception || (*role == Role::Other && is_error_line(line))),
    );
    if !explaining.is_empty() {
        return explaining;
    }
    // Which tests failed says more than whatever the run printed last.
    let listed = last_distinct(lines.iter().filter(|(_, role)| *role == Role::Listed));
    if !listed.is_empty() {
        return listed;
    }
    lines[lines.len().saturating_sub(LAST_LINES)..].iter().map(|(line, _)| cut(line, MAX_LINE_CHARS)).collect()
}

/// The last [`MAX_ERROR_LINES`] distinct `lines`, in order, each cut: the
/// last, since a failure is named by its last explaining line and the cap
/// must not choose another.
fn last_distinct<'a>(lines: impl DoubleEndedIterator<Item = &'a (&'a str, Role)>) -> Vec<String> {
    let mut picked: Vec<String> = Vec::new();
    for (line, _) in lines.rev() {
        let line = cut(line, MAX_LINE_CHARS);
        if !picked.contains(&line) {
            picked.push(line);
        }
        if picked.len() == MAX_ERROR_LINES {
            break;
        }
    }
    picked.reverse();
    picked
}

/// The first `max` characters of `line`.
fn cut(line: &str, max: usize) -> String {
    line.chars().take(max).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lines_that_explain_a_failure_are_picked_else_the_last_lines() {
        let output = "running 3 tests\ntest a ... ok\ntest b ... FAILED\n\nthread 'b' panicked at src/lib.rs:4:5:\nassertion `left == right` failed\n  left: 4\n right: 5\ntest result: FAILED. 1 passed; 1 failed\n";
        assert_eq!(
            error_lines(output),
            vec!["test b ... FAILED", "thread 'b' panicked at src/lib.rs:4:5:", "assertion `left == right` failed",]
        );
        assert_eq!(error_lines("a\nb\nc\n"), vec!["a", "b", "c"]);
        assert_eq!(error_lines(&format!("a\n{CUT_LINE}\nExit code 1")), vec!["a"], "the cut's mark names nothing");
        assert!(error_lines("").is_empty());
        let traceback =
            "Traceback (most recent call last):\n  File \"x.py\", line 1\nModuleNotFoundError: No module named 'y'";
        assert_eq!(error_lines(traceback).last().map(String::as_str), Some("ModuleNotFoundError: No module named 'y'"));
        let unnamed = "Traceback (most recent call last):\n  File \"x.py\", line 1, in <module>\n    settings.configure()\ndjango.core.exceptions.ImproperlyConfigured: Requested setting DEBUG, but settings are not configured.";
        assert_eq!(
            error_lines(unnamed),
            vec![
                "Traceback (most recent call last):",
                "django.core.exceptions.ImproperlyConfigured: Requested setting DEBUG, but settings are not configured."
            ],
            "a traceback is explained by its exception, whatever its class is called"
        );
        let indented = "Error processing line 1 of x.pth:\n\n  Traceback (most recent call last):\n    File \"site.py\", line 177, in addpackage\n      exec(line)\n  ModuleNotFoundError: No module named '_distutils_hack'\n\nRemainder of file ignored";
        assert_eq!(
            error_lines(indented).last().map(String::as_str),
            Some("ModuleNotFoundError: No module named '_distutils_hack'"),
            "an indented traceback ends at its header's indent"
        );
        // Where a failure happened, and which test a summary lists, explain
        // it only when nothing else does.
        for (output, expected, why) in [
            (
                "Traceback (most recent call last):\n  File \"x.py\", line 3, in <module>\n    raise TypeError(\"bad input\")\nTypeError: bad input",
                &["Traceback (most recent call last):", "TypeError: bad input"][..],
                "the code a frame quotes is not the error",
            ),
            (
                "    def test_parse():\n>       raise ValueError(\"no digits\")\nE       ValueError: no digits\n\ntest_x.py:2: ValueError",
                &["E       ValueError: no digits", "test_x.py:2: ValueError"],
                "the source line pytest marks is code",
            ),
            (
                "E       KeyError: 'id'\n=========================== short test summary info ============================\nFAILED test_x.py::test_id\nFAILED test_x.py::test_name - AssertionError: 'a' != 'b'\n========================= 2 failed in 0.02s =========================",
                &["E       KeyError: 'id'", "FAILED test_x.py::test_name - AssertionError: 'a' != 'b'"],
                "pytest's summary lists a test without a reason: which test, not why",
            ),
            (
                "plugins: cov-4.1.0\ncollected 2 items\n==== short test summary info ====\nFAILED test_x.py::test_id\n==== 1 failed, 1 passed in 0.02s ====",
                &["FAILED test_x.py::test_id"],
                "when nothing says why, which test",
            ),
        ] {
            assert_eq!(error_lines(output), expected, "{why}");
        }
        let java = "Exception in thread \"main\" java.lang.NullPointerException\n\tat Main.main(Main.java:3)";
        assert_eq!(error_lines(java), vec!["Exception in thread \"main\" java.lang.NullPointerException"]);
        assert_eq!(error_lines("Errors\nan Errorless run\nnothing"), vec!["Errors"]);
    }

    #[test]
    fn a_line_that_reports_on_the_run_explains_nothing() {
        for report in [
            "=== tests finished: 3 passed, 1 failed, 0 skipped in 2.1s ===",
            "========================= 1 failed, 2 passed in 0.12s =========================",
            "FAILED (failures=1)",
            "FAILED (errors=2, skipped=1)",
            "test result: FAILED. 1 passed; 1 failed; 0 ignored",
            "Ran 4 tests in 0.003s",
            "Tests: 1 failed, 3 passed, 4 total",
            "----------------------------------------------------------------------",
            "_____________________________ test_divide ______________________________",
            "tests/test_calc.py ..F.                                      [ 40%]",
            "Exit code 1",
            "exit status 2",
            "make: *** [Makefile:3: test] Error 2",
            "npm ERR! errno 1",
            "Process exited with code 137",
            "error: 2 errors generated.",
            "</output>",
            "<testcase classname=\"calc\" name=\"test_divide\">",
            "</error>",
        ] {
            assert!(is_report(report), "{report:?} reports on the run");
        }
        for explains in [
            "ModuleNotFoundError: No module named 'pytest'",
            "FAILED tests/test_calc.py::test_divide - ZeroDivisionError: division by zero",
            "test b ... FAILED",
            "error[E0308]: mismatched types",
            "make: *** No rule to make target 'check'.  Stop.",
            "bash: line 1: pytset: command not found",
            "AssertionError: 2 != 3",
            "TypeError: f() takes 2 positional arguments but 3 were given",
            "sqlite3.InterfaceError: Error binding parameter 1 - probably unsupported type.",
            "subprocess.CalledProcessError: Command '['ls']' returned non-zero exit status 2.",
            "*** Error in `./a.out': double free or corruption",
            "fatal: not a git repository (or any of the parent directories): .git",
            "queue.c:9:12: error: 'queue' undeclared (first use in this function)",
            "CacheRecord.java:2: error: cannot find symbol",
            "<*> ValueError: <b> is not a tag",
            "error: expected `<` or `>`",
        ] {
            assert!(!is_report(explains), "{explains:?} explains a failure");
        }
    }

    #[test]
    fn a_failure_no_line_explains_has_no_error_line() {
        assert!(error_lines("Exit code 1\n").is_empty());
        let pytest = "F.\n=================================== FAILURES ===================================\n________________________________ test_divide _________________________________\n>       assert divide(1, 0) is None\nE       ZeroDivisionError: division by zero\ncalc.py:2: ZeroDivisionError\n=========================== short test summary info ============================\nFAILED test_calc.py::test_divide - ZeroDivisionError: division by zero\n========================= 1 failed, 1 passed in 0.02s ==========================";
        let lines = error_lines(pytest);
        assert_eq!(
            lines.last().map(String::as_str),
            Some("FAILED test_calc.py::test_divide - ZeroDivisionError: division by zero"),
            "{lines:?}"
        );
        assert!(lines.iter().all(|line| !is_report(line)), "{lines:?}");
    }

    #[test]
    fn error_lines_are_read_as_the_regex_they_replace_would() {
        let regex = regex::bytes::RegexBuilder::new(
            r"(?i)\b(?:error|errors|failed|failure|fail|panicked|assert\w*|exception|traceback|fatal|cannot|undefined|not found)\b|\bE\d{3,5}\b|\bTS\d{4}\b",
        )
        .unicode(false)
        .build()
        .unwrap();
        for line in [
            "error[E0308]: mismatched types",
            "test b ... FAILED",
            "AssertionError: 1 != 2",
            "assert_eq failed",
            "src/app.ts(3,5): error TS2345: Argument",
            "TS23456 is not a code",
            "e0308",
            "E12",
            "E123456",
            "command not found",
            "not  found",
            "notfound",
            "NOT FOUND",
            "Traceback (most recent call last):",
            "failures: 0",
            "unfailing",
            "errors_total 3",
            "cannot borrow",
            "all good",
            "päniked error",
            "cat: a.yaml: No such file or directory",
            "make: *** No rule to make target 'check'.  Stop.",
            "_error_",
            "",
        ] {
            assert_eq!(is_error_line(line), regex.is_match(line.as_bytes()) || has_error_phrase(line), "{line:?}");
        }
    }
}
