//! What a tool call was, beyond `tool_call`: a commit with its sha, a push,
//! a pull request, a deploy, a test run with its counts, a lint, a build, a
//! file edit, a sub-agent. The reports' deployment sections, the drafts of
//! epics and the activity views by type fill from these by themselves.
//!
//! The recognizers are data (`action_types.toml`, its comments say the
//! shape), extended by a project's own file (`LORE_ACTION_TYPES`), read
//! before them. A hook compiles only what it needs: the command patterns
//! for a shell command, and the detail patterns of the one recognizer that
//! matched.

use std::path::Path;

use regex::bytes::{Regex, RegexBuilder};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::input::HookInput;
use super::record;
use crate::checks::{self, Prefixes};

/// The recognizers shipped with Lore.
const SHIPPED: &str = include_str!("../action_types.toml");
/// A detail kept is cut to this.
const MAX_DETAIL_CHARS: usize = 300;
/// Output read for details: the end of a long log holds the summary.
const MAX_OUTPUT_BYTES: usize = 64 * 1024;

/// The file's shape.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    shell: Vec<ShellRecognizer>,
    #[serde(default)]
    tool: Vec<ToolRecognizer>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct ShellRecognizer {
    #[serde(rename = "type")]
    action_type: String,
    command: String,
    #[serde(default)]
    details: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct ToolRecognizer {
    #[serde(rename = "type")]
    action_type: String,
    tools: Vec<String>,
}

/// The recognizers in force: a project's first, then Lore's.
#[derive(Debug, Clone)]
pub struct Recognizers {
    shell: Vec<ShellRecognizer>,
    tool: Vec<ToolRecognizer>,
}

/// A tool call's type and what it says about itself.
#[derive(Debug, Clone, PartialEq)]
pub struct Typed {
    pub action_type: String,
    pub details: Map<String, Value>,
}

impl Recognizers {
    /// Lore's recognizers. Their patterns are not compiled here: a hook
    /// runs in milliseconds and compiles only those it uses (the tests
    /// compile every one).
    pub fn shipped() -> Self {
        let file: File = toml::from_str(SHIPPED).expect("the shipped recognizers parse");
        Self { shell: file.shell, tool: file.tool }
    }

    /// A project's file (`path`) before Lore's; what is wrong with it is
    /// said naming the file and the recognizer.
    pub fn with_file(path: &Path) -> Result<Self, String> {
        let text = std::fs::read_to_string(path).map_err(|error| format!("{}: {error}", path.display()))?;
        let mut theirs = Self::checked(&text, &path.display().to_string())?;
        let ours = Self::shipped();
        theirs.shell.extend(ours.shell);
        theirs.tool.extend(ours.tool);
        Ok(theirs)
    }

    /// Parses a file and compiles every pattern, naming what is wrong.
    fn checked(text: &str, name: &str) -> Result<Self, String> {
        let file: File = toml::from_str(text).map_err(|error| format!("{name}: {error}"))?;
        for (index, recognizer) in file.shell.iter().enumerate() {
            let at = format!("{name}: shell[{index}] ({})", recognizer.action_type);
            valid_type(&recognizer.action_type).map_err(|reason| format!("{at}: type {reason}"))?;
            for pattern in std::iter::once(&recognizer.command).chain(&recognizer.details) {
                compile(pattern).map_err(|error| format!("{at}: {pattern:?}: {error}"))?;
            }
        }
        for (index, recognizer) in file.tool.iter().enumerate() {
            valid_type(&recognizer.action_type)
                .map_err(|reason| format!("{name}: tool[{index}] ({}): type {reason}", recognizer.action_type))?;
        }
        Ok(Self { shell: file.shell, tool: file.tool })
    }

    /// What the call was, when a recognizer knows it.
    pub fn recognize(&self, input: &HookInput) -> Option<Typed> {
        match input.command() {
            Some(command) if record::is_shell(&input.tool_name) => {
                let mut typed = self.shell_command(command, &input.tool_output())?;
                if typed.action_type == "commit" && !typed.details.contains_key("sha") && !input.tool_failed() {
                    head_commit(command, &input.cwd, &mut typed.details);
                }
                Some(typed)
            }
            _ => {
                let recognizer =
                    self.tool.iter().find(|tool| tool.tools.iter().any(|name| name == &input.tool_name))?;
                let details = match recognizer.action_type.as_str() {
                    "file_edit" => edit_details(input),
                    "subagent" => subagent_details(input),
                    _ => Map::new(),
                };
                Some(Typed { action_type: recognizer.action_type.clone(), details })
            }
        }
    }

    fn shell_command(&self, command: &str, output: &str) -> Option<Typed> {
        let parts: Vec<String> = checks::parts(command).collect();
        let recognizer = self.shell.iter().find(|recognizer| {
            let prefixes = Prefixes::of(&recognizer.command);
            let candidates: Vec<&String> = parts.iter().filter(|part| prefixes.may_start(part)).collect();
            if candidates.is_empty() {
                return false;
            }
            let Ok(pattern) = compile(&recognizer.command) else { return false };
            candidates.iter().any(|part| pattern.find(part.as_bytes()).is_some_and(|found| found.start() == 0))
        })?;
        let output = checks::tail_within(output, MAX_OUTPUT_BYTES);
        let mut details = Map::new();
        for source in &recognizer.details {
            let prefixes = Prefixes::of(source);
            let texts: Vec<&str> = [command, output].into_iter().filter(|text| prefixes.may_occur(text)).collect();
            let Some(pattern) = (!texts.is_empty()).then(|| compile(source).ok()).flatten() else { continue };
            for text in texts {
                read_details(&pattern, text, &mut details);
            }
        }
        if recognizer.action_type == "commit" {
            let messages = commit_messages(command);
            if let Some(issue) = issue_of_message(&messages) {
                details.insert("issue".into(), json!(issue));
            }
            if let Some(epic) = epic_of_message(&messages) {
                details.insert("epic".into(), json!(epic));
            }
        }
        Some(Typed { action_type: recognizer.action_type.clone(), details })
    }
}

/// A commit that printed nothing (`git commit -q`) is read from the
/// repository it was made in: HEAD's short sha, its subject and its
/// branch, for what the output did not give. One `git log`, run only after
/// a commit that succeeded; when it fails the commit keeps what it has.
fn head_commit(command: &str, cwd: &str, details: &mut Map<String, Value>) {
    static DIRECTORY: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r#"git\s+-C\s+(?:"([^"]+)"|'([^']+)'|(\S+))\s+commit\b"#).expect("the -C pattern compiles")
    });
    let mut directory = std::path::PathBuf::from(cwd);
    if let Some(found) = DIRECTORY.captures(command) {
        let given = found.get(1).or_else(|| found.get(2)).or_else(|| found.get(3)).map_or("", |m| m.as_str());
        directory = directory.join(given);
    }
    let output = std::process::Command::new("git")
        .arg("-C")
        .arg(&directory)
        .args(["log", "-1", "--format=%h%x1f%s%x1f%D"])
        .env("GIT_OPTIONAL_LOCKS", "0")
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output();
    let Some(output) = output.ok().filter(|output| output.status.success()) else { return };
    let text = String::from_utf8_lossy(&output.stdout);
    let mut fields = text.trim_end().splitn(3, '\u{1f}');
    let (Some(sha), Some(subject)) = (fields.next(), fields.next()) else { return };
    let branch = fields.next().and_then(|refs| refs.split(", ").find_map(|name| name.strip_prefix("HEAD -> ")));
    details.insert("sha".into(), json!(sha));
    details.entry("message").or_insert_with(|| json!(checks::cut(subject, MAX_DETAIL_CHARS)));
    if let Some(branch) = branch {
        details.entry("branch").or_insert_with(|| json!(branch));
    }
}

/// Every `-m` message of a commit command, the trailers' paragraph too
/// (`git commit -m "Fix it" -m "Fixes #12"`).
fn commit_messages(command: &str) -> String {
    static MESSAGE: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r#"(?:-m|--message)(?:\s+|=)(?:"([^"]*)"|'([^']*)')"#).expect("the message pattern compiles")
    });
    MESSAGE
        .captures_iter(command)
        .filter_map(|found| found.get(1).or_else(|| found.get(2)))
        .map(|message| message.as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The named groups of every match of `pattern` in `text`: counts summed,
/// other values first found.
fn read_details(pattern: &Regex, text: &str, details: &mut Map<String, Value>) {
    for captures in pattern.captures_iter(text.as_bytes()) {
        for name in pattern.capture_names().flatten() {
            let Some(found) = captures.name(name) else { continue };
            let value = String::from_utf8_lossy(found.as_bytes());
            if is_count(name) {
                let count: u64 = value.parse().unwrap_or(0);
                let sum = details.get(name).and_then(Value::as_u64).unwrap_or(0) + count;
                details.insert(name.to_owned(), json!(sum));
            } else if name == "failed_test" {
                // One per failing test: counted as failed.
                let sum = details.get("failed").and_then(Value::as_u64).unwrap_or(0) + 1;
                details.insert("failed".into(), json!(sum));
            } else if !details.contains_key(name) {
                details.insert(name.to_owned(), json!(checks::cut(value.trim(), MAX_DETAIL_CHARS)));
            }
        }
    }
}

fn is_count(name: &str) -> bool {
    matches!(name, "passed" | "failed" | "skipped")
}

/// A file edit's paths and lines, never its content.
fn edit_details(input: &HookInput) -> Map<String, Value> {
    let tool_input = &input.tool_input;
    let lines = |key: &str| tool_input.get(key).and_then(Value::as_str).map_or(0, |text| text.lines().count());
    let (added, removed) = match input.tool_name.as_str() {
        "MultiEdit" => tool_input.get("edits").and_then(Value::as_array).map_or((0, 0), |edits| {
            edits.iter().fold((0, 0), |(added, removed), edit| {
                let count = |key: &str| edit.get(key).and_then(Value::as_str).map_or(0, |text| text.lines().count());
                (added + count("new_string"), removed + count("old_string"))
            })
        }),
        "Write" | "write_file" => (lines("content"), 0),
        "apply_patch" => {
            let patch = ["input", "patch", "command"]
                .iter()
                .find_map(|key| tool_input.get(*key)?.as_str())
                .or_else(|| tool_input.as_str())
                .unwrap_or_default();
            let count = |sign: char, header: &str| {
                patch.lines().filter(|line| line.starts_with(sign) && !line.starts_with(header)).count()
            };
            (count('+', "+++"), count('-', "---"))
        }
        _ => (lines("new_string"), lines("old_string")),
    };
    let mut details = Map::new();
    details.insert("files".into(), json!(record::edited_files(input)));
    details.insert("lines_added".into(), json!(added));
    details.insert("lines_removed".into(), json!(removed));
    details
}

/// A sub-agent's description and kind (its prompt is not kept).
fn subagent_details(input: &HookInput) -> Map<String, Value> {
    let mut details = Map::new();
    for key in ["description", "subagent_type"] {
        if let Some(text) = input.tool_input.get(key).and_then(Value::as_str) {
            details.insert(key.into(), json!(checks::cut(text, MAX_DETAIL_CHARS)));
        }
    }
    details
}

/// An action type as the server takes it.
fn valid_type(action_type: &str) -> Result<(), String> {
    let valid = (1..=64).contains(&action_type.len())
        && action_type.bytes().all(|byte| byte.is_ascii_lowercase() || byte.is_ascii_digit() || b"_.-".contains(&byte));
    if valid { Ok(()) } else { Err(format!("{action_type:?} is not like [a-z0-9_.-]{{1,64}}")) }
}

/// ASCII classes over bytes, as the check patterns: quick to compile in a
/// hook's budget, and output that is not UTF-8 is still read.
fn compile(pattern: &str) -> Result<Regex, regex::Error> {
    RegexBuilder::new(pattern).unicode(false).build()
}

/// The issue a commit message names: `#123` from `Fixes #123` and kin, or
/// a key like `SHOP-42` (upper case, as trackers write them: `utf-8` in a
/// message is not an issue).
pub fn issue_of_message(message: &str) -> Option<String> {
    static TRAILER: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"(?i)\b(?:fix(?:es|ed)?|close[sd]?|resolve[sd]?|refs?|part of)\s*:?\s+#(\d+)\b")
            .expect("the trailer pattern compiles")
    });
    static KEY: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"(?:^|[\s(\[])([A-Z][A-Z0-9]{1,9}-\d{1,7})\b").expect("the issue key pattern compiles")
    });
    if let Some(found) = TRAILER.captures(message) {
        return Some(format!("#{}", &found[1]));
    }
    KEY.captures(message).map(|found| found[1].to_owned())
}

/// The issue a branch names: `feature/SHOP-42-cart` and `shop-42-cart`
/// (branches are often lower case), or `123-fix-login` as `#123`.
pub fn issue_of_branch(branch: &str) -> Option<String> {
    static KEY: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"(?i)(?:^|[/_])([a-z][a-z0-9]{1,9}-\d{1,7})(?:$|[-_/])")
            .expect("the branch key pattern compiles")
    });
    static NUMBERED: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"(?:^|/)(\d{1,7})[-_]").expect("the branch number pattern compiles")
    });
    if let Some(found) = KEY.captures(branch) {
        return Some(found[1].to_ascii_uppercase());
    }
    NUMBERED.captures(branch).map(|found| format!("#{}", &found[1]))
}

/// The epic a commit message names in a trailer (`Epic: checkout-v2`).
pub fn epic_of_message(message: &str) -> Option<String> {
    static TRAILER: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"(?im)^\s*epic\s*:\s*([A-Za-z0-9][A-Za-z0-9._#-]{0,63})\s*$")
            .expect("the epic trailer pattern compiles")
    });
    TRAILER.captures(message).map(|found| found[1].to_owned())
}

/// The epic a branch names: `epic/checkout-v2` and what is under it
/// (`epic/checkout-v2/SHOP-42-cart`), or `epics/...`.
pub fn epic_of_branch(branch: &str) -> Option<String> {
    let rest = branch.strip_prefix("epic/").or_else(|| branch.strip_prefix("epics/"))?;
    let name = rest.split('/').next()?;
    let valid = (1..=64).contains(&name.len())
        && name.bytes().all(|byte| byte.is_ascii_alphanumeric() || b"._#-".contains(&byte));
    valid.then(|| name.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn epics_are_read_from_the_branch_and_from_a_trailer() {
        assert_eq!(epic_of_branch("epic/checkout-v2/SHOP-42-cart").as_deref(), Some("checkout-v2"));
        assert_eq!(epic_of_branch("epics/search").as_deref(), Some("search"));
        assert_eq!(epic_of_branch("feature/epic/x"), None, "only as the branch's first segment");
        assert_eq!(epic_of_branch("epic/"), None);
        assert_eq!(epic_of_branch("epic/has space"), None);
        assert_eq!(epic_of_message("Fix totals\n\nEpic: checkout-v2\nFixes #7").as_deref(), Some("checkout-v2"));
        assert_eq!(epic_of_message("The epic: a long story"), None, "a trailer is a line of its own");
    }

    fn shell(command: &str, output: &str, failed: bool) -> Option<Typed> {
        let mut input = json!({"cwd": "/repo", "tool_name": "Bash", "tool_input": {"command": command}});
        if failed {
            input["hook_event_name"] = json!("PostToolUseFailure");
            input["error"] = json!(format!("Exit code 1\n{output}"));
        } else {
            input["tool_response"] = json!({"stdout": output, "stderr": ""});
        }
        Recognizers::shipped().recognize(&serde_json::from_value(input).unwrap())
    }

    fn typed(found: Option<Typed>) -> (String, Value) {
        let found = found.expect("recognized");
        (found.action_type, Value::Object(found.details))
    }

    #[test]
    fn a_pattern_is_compiled_only_for_a_command_it_may_match() {
        assert!(Prefixes::of(r"git\s+commit\b").may_start("git commit -m x"));
        assert!(!Prefixes::of(r"git\s+commit\b").may_start("cargo test"));
        assert!(Prefixes::of(r"(?:npm|pnpm)\s+test").may_start("pnpm test"));
        assert!(Prefixes::of(r"(?i)git").may_start("GIT commit"), "case-folded prefixes");
        assert!(Prefixes::of(r"\w+ test").may_start("anything"), "no finite prefix: always");
        assert!(Prefixes::of(r"(").may_start("x"), "a pattern that does not parse is left to the compiler");
        assert!(Prefixes::of(r"test result: \w+").may_occur("ok\ntest result: ok. 1 passed"));
        assert!(!Prefixes::of(r"test result: \w+").may_occur("3 passed in 0.1s"));
        assert!(!Prefixes::of(r"(?m)^=+ x").may_occur("no equals sign"), "every match begins with =");
        assert!(Prefixes::of(r"\w+ failed").may_occur("anything"), "no finite prefix: always");
    }

    #[test]
    fn every_shipped_recognizer_is_valid() {
        Recognizers::checked(SHIPPED, "action_types.toml").unwrap();
    }

    #[test]
    fn a_quiet_commit_is_read_from_the_repository_it_was_made_in() {
        let repository = tempfile::tempdir().unwrap();
        let git = |args: &[&str]| {
            let status = std::process::Command::new("git")
                .arg("-C")
                .arg(repository.path())
                .args(["-c", "user.name=Agent", "-c", "user.email=agent@example.com"])
                .args(args)
                .status()
                .unwrap();
            assert!(status.success(), "git {args:?}");
        };
        git(&["init", "-q", "-b", "feature/SHOP-7-quiet"]);
        std::fs::write(repository.path().join("a.txt"), "a").unwrap();
        git(&["add", "a.txt"]);
        git(&["commit", "-q", "-m", "Add a"]);
        let head = std::process::Command::new("git")
            .arg("-C")
            .arg(repository.path())
            .args(["rev-parse", "--short", "HEAD"])
            .output()
            .unwrap();
        let head = String::from_utf8(head.stdout).unwrap().trim().to_owned();
        let input = |command: &str, cwd: &std::path::Path| {
            json!({"cwd": cwd, "tool_name": "Bash", "tool_input": {"command": command},
                   "tool_response": {"stdout": "", "stderr": ""}})
        };
        let recognizers = Recognizers::shipped();
        let quiet = input("git commit -q -m 'Add a'", repository.path());
        let typed = recognizers.recognize(&serde_json::from_value(quiet).unwrap()).unwrap();
        assert_eq!(typed.details["sha"], head.as_str());
        assert_eq!(typed.details["message"], "Add a");
        assert_eq!(typed.details["branch"], "feature/SHOP-7-quiet");
        // `git -C <dir> commit` from elsewhere reads that repository.
        let parent = repository.path().parent().unwrap();
        let name = repository.path().file_name().unwrap().to_string_lossy();
        let elsewhere = input(&format!("git -C {name} commit -q -m 'Add a'"), parent);
        let typed = recognizers.recognize(&serde_json::from_value(elsewhere).unwrap()).unwrap();
        assert_eq!(typed.details["sha"], head.as_str());
        // A commit that failed is not read from HEAD: HEAD is the commit before.
        let mut failed = input("git commit -q -m 'Nothing'", repository.path());
        failed["hook_event_name"] = json!("PostToolUseFailure");
        failed["error"] = json!("Exit code 1\nnothing to commit");
        let typed = recognizers.recognize(&serde_json::from_value(failed).unwrap()).unwrap();
        assert!(typed.details.get("sha").is_none(), "{:?}", typed.details);
    }

    #[test]
    fn a_commit_has_its_sha_message_and_branch() {
        let output =
            "[feature/SHOP-42-cart 3f2a9c1] Fix the cart total\n 2 files changed, 10 insertions(+), 3 deletions(-)\n";
        let (kind, details) = typed(shell("git add -A && git commit -m \"Fix the cart total\"", output, false));
        assert_eq!(kind, "commit");
        assert_eq!(details["sha"], "3f2a9c1");
        assert_eq!(details["message"], "Fix the cart total");
        assert_eq!(details["branch"], "feature/SHOP-42-cart");
        assert_eq!(details["files_changed"], "2");
        assert!(details.get("issue").is_none(), "{details}");
        let (_, details) = typed(shell("git commit -m \"Fix the total\" -m \"Fixes #77\"", output, false));
        assert_eq!(details["issue"], "#77");
        let (_, details) = typed(shell("git commit -m 'Fix the total\n\nRefs SHOP-9'", output, false));
        assert_eq!(details["issue"], "SHOP-9");
        let (kind, _) = typed(shell("cd /repo && GIT_AUTHOR_NAME=x git commit -am wip && git push", "", false));
        assert_eq!(kind, "commit", "a commit before a push, whatever comes first");
    }

    #[test]
    fn a_push_a_pull_request_and_a_deploy_say_where() {
        let output = "To github.com:acme/shop.git\n   3f2a9c1..9b8e7d6  feature/x -> feature/x\n";
        let (kind, details) = typed(shell("git push origin feature/x", output, false));
        assert_eq!((kind.as_str(), details["remote"].as_str()), ("push", Some("origin")));
        assert_eq!(details["branch"], "feature/x");
        let (kind, details) = typed(shell("gh pr create --fill", "https://github.com/acme/shop/pull/128\n", false));
        assert_eq!((kind.as_str(), details["number"].as_str()), ("pull_request", Some("128")));
        let (kind, details) =
            typed(shell("helm upgrade --install shop ./chart -n prod", "Release \"shop\" has been upgraded.", false));
        assert_eq!(
            (kind.as_str(), details["release"].as_str(), details["namespace"].as_str()),
            ("deploy", Some("shop"), Some("prod"))
        );
        let (kind, details) = typed(shell(
            "terraform apply -auto-approve",
            "Apply complete! Resources: 1 added, 2 changed, 0 destroyed.",
            false,
        ));
        assert_eq!((kind.as_str(), details["changed"].as_str()), ("deploy", Some("2")));
        assert_eq!(typed(shell("kubectl apply -f k8s/", "", false)).0, "deploy");
    }

    #[test]
    fn a_test_run_counts_across_runners() {
        let cargo = "test result: ok. 5 passed; 0 failed; 1 ignored; 0 measured\n\ntest result: FAILED. 3 passed; 2 failed; 0 ignored; 0 measured\n";
        let (kind, details) = typed(shell("cargo test --workspace", cargo, true));
        assert_eq!(kind, "test_run");
        assert_eq!(
            (details["passed"].as_u64(), details["failed"].as_u64(), details["skipped"].as_u64()),
            (Some(8), Some(2), Some(1))
        );
        let pytest = "....F\n=========== 1 failed, 4 passed, 2 skipped in 0.31s ===========\n";
        let (_, details) = typed(shell("python -m pytest -q", pytest, true));
        assert_eq!(
            (details["passed"].as_u64(), details["failed"].as_u64(), details["skipped"].as_u64()),
            (Some(4), Some(1), Some(2))
        );
        let jest = "Tests:       1 failed, 5 passed, 6 total\n";
        let (_, details) = typed(shell("npx jest", jest, true));
        assert_eq!((details["passed"].as_u64(), details["failed"].as_u64()), (Some(5), Some(1)));
        let go = "--- FAIL: TestCart (0.00s)\n--- FAIL: TestTotal (0.00s)\nFAIL\n";
        assert_eq!(typed(shell("go test ./...", go, true)).1["failed"].as_u64(), Some(2));
        assert_eq!(typed(shell("make test", "", false)).0, "test_run");
    }

    #[test]
    fn lints_builds_and_the_rest() {
        assert_eq!(typed(shell("cargo clippy -- -D warnings", "", false)).0, "lint");
        assert_eq!(typed(shell("npx eslint src", "✖ 3 problems (3 errors, 0 warnings)", true)).1["problems"], "3");
        assert_eq!(typed(shell("cargo build --release", "", false)).0, "build");
        assert_eq!(typed(shell("make", "", false)).0, "build");
        assert_eq!(shell("ls -la && cat README.md", "", false), None);
        assert_eq!(shell("echo git commit", "", false), None, "the command's own program decides");
    }

    #[test]
    fn edits_and_subagents_are_read_from_the_tool_input() {
        let recognizers = Recognizers::shipped();
        let edit: HookInput = serde_json::from_value(json!({"cwd": "/repo", "tool_name": "Edit",
            "tool_input": {"file_path": "/repo/src/cart.rs", "old_string": "a\nb", "new_string": "a\nb\nc\nd"}}))
        .unwrap();
        let typed = recognizers.recognize(&edit).unwrap();
        assert_eq!(typed.action_type, "file_edit");
        assert_eq!(
            Value::Object(typed.details),
            json!({"files": ["src/cart.rs"], "lines_added": 4, "lines_removed": 2})
        );
        let task: HookInput = serde_json::from_value(json!({"tool_name": "Task",
            "tool_input": {"description": "Review the diff", "subagent_type": "reviewer", "prompt": "a long prompt"}}))
        .unwrap();
        let typed = recognizers.recognize(&task).unwrap();
        assert_eq!(typed.action_type, "subagent");
        assert_eq!(
            Value::Object(typed.details),
            json!({"description": "Review the diff", "subagent_type": "reviewer"})
        );
        let read: HookInput =
            serde_json::from_value(json!({"tool_name": "Read", "tool_input": {"file_path": "x"}})).unwrap();
        assert_eq!(recognizers.recognize(&read), None);
    }

    #[test]
    fn a_project_file_comes_first_and_a_bad_one_is_refused_naming_what() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("types.toml");
        std::fs::write(&path, "[[shell]]\ntype = \"release\"\ncommand = 'cargo\\s+release\\b'\ndetails = ['v(?P<version>\\d+\\.\\d+\\.\\d+)']\n").unwrap();
        let recognizers = Recognizers::with_file(&path).unwrap();
        let input: HookInput = serde_json::from_value(json!({"tool_name": "Bash",
            "tool_input": {"command": "cargo release minor"}, "tool_response": {"stdout": "Releasing v1.4.0"}}))
        .unwrap();
        let typed = recognizers.recognize(&input).unwrap();
        assert_eq!((typed.action_type.as_str(), typed.details["version"].as_str()), ("release", Some("1.4.0")));
        for (text, says) in [
            ("[[shell]]\ntype = \"Bad Type\"\ncommand = 'x'\n", "shell[0] (Bad Type): type"),
            ("[[shell]]\ntype = \"x\"\ncommand = '('\n", "shell[0] (x): \"(\""),
            ("[[shell]]\ntype = \"x\"\n", "missing field `command`"),
            ("[[shel]]\n", "unknown field"),
        ] {
            std::fs::write(&path, text).unwrap();
            let error = Recognizers::with_file(&path).unwrap_err();
            assert!(error.contains(says) && error.contains("types.toml"), "{error}");
        }
    }

    #[test]
    fn issues_come_from_branches_and_trailers() {
        assert_eq!(issue_of_branch("feature/SHOP-42-cart").as_deref(), Some("SHOP-42"));
        assert_eq!(issue_of_branch("shop-42-fix-cart").as_deref(), Some("SHOP-42"));
        assert_eq!(issue_of_branch("fix/123-login").as_deref(), Some("#123"));
        assert_eq!(issue_of_branch("main"), None);
        assert_eq!(issue_of_message("Fix the total\n\nFixes #77").as_deref(), Some("#77"));
        assert_eq!(issue_of_message("Closes: #9").as_deref(), Some("#9"));
        assert_eq!(issue_of_message("SHOP-42: fix the cart").as_deref(), Some("SHOP-42"));
        assert_eq!(issue_of_message("Fix utf-8 decoding in the sha-256 check"), None);
    }
}
