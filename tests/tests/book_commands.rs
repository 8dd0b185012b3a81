//! The book quotes `lore` and `lore-server` commands in its chapters
//! (`docs/guide/*.md`, README.md); each must be one the real binary has:
//! every subcommand path is one its `--help` answers, and every `--flag`
//! written after it is one that help lists. A renamed command or flag
//! fails here instead of in a reader's shell.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use lore_e2e::{repository, workspace_binary};

/// The command lines of the fenced `sh` blocks of `text` that start with
/// one of `binaries` (a `\` at the end of a line continues it).
fn quoted_commands<'a>(text: &str, binaries: &[&'a str]) -> Vec<(&'a str, String)> {
    let mut commands = Vec::new();
    let (mut in_shell, mut pending) = (false, String::new());
    for line in text.lines() {
        if let Some(fence) = line.trim_start().strip_prefix("```") {
            in_shell = !in_shell && (fence == "sh" || fence == "bash");
            continue;
        }
        if !in_shell {
            continue;
        }
        let line = line.split(" # ").next().unwrap_or_default().trim();
        pending.push_str(line.trim_end_matches('\\'));
        pending.push(' ');
        if line.ends_with('\\') {
            continue;
        }
        let command = std::mem::take(&mut pending);
        // `A; B` and `A | B` on one line are two commands (`a|b` without
        // spaces is a choice within one).
        for part in command.split(';').flat_map(|part| part.split(" | ")) {
            let part = part.trim();
            if let Some(binary) = binaries.iter().find(|binary| part.starts_with(&format!("{binary} "))) {
                commands.push((*binary, part.to_owned()));
            }
        }
    }
    commands
}

/// The `--help` of `binary` with `path` (`None` when it is no command).
fn help(binary: &Path, path: &[&str]) -> Option<String> {
    let output = Command::new(binary).args(path).arg("--help").output().expect("the binary runs");
    output.status.success().then(|| String::from_utf8_lossy(&output.stdout).into_owned())
}

/// Each help asked for, by subcommand path (`None`: no such command).
type Helps = BTreeMap<Vec<String>, Option<String>>;

/// [`help`], asked once per path.
fn cached_help(helps: &mut Helps, binary: &Path, path: &[&str]) -> Option<String> {
    let key = path.iter().map(|word| (*word).to_owned()).collect();
    helps.entry(key).or_insert_with(|| help(binary, path)).clone()
}

/// What is wrong with a quoted command: its leading plain words (each
/// choice of an `a|b`) must be subcommands, as far as the binary takes
/// them as such, and its flags ones the deepest subcommand's help or the
/// binary's own lists.
fn check(binary: &Path, command: &str, helps: &mut Helps) -> Vec<String> {
    let words: Vec<&str> = command.split_whitespace().skip(1).collect();
    // Options before the subcommand (`lore --server URL search ...`) are
    // the binary's own.
    let mut leading = 0;
    while words.get(leading).is_some_and(|word| word.starts_with("--")) {
        leading += if words.get(leading + 1).is_some_and(|word| !word.starts_with('-')) { 2 } else { 1 };
    }
    let mut path: Vec<&str> = Vec::new();
    let mut problems = Vec::new();
    for word in &words[leading.min(words.len())..] {
        // `start|end`: each choice must be a command; the path goes on
        // with the first.
        let choices: Vec<&str> = word.split('|').collect();
        let plain =
            |choice: &&str| choice.chars().all(|c| c.is_ascii_lowercase() || c == '-') && !choice.starts_with('-');
        if !choices.iter().all(plain) {
            break;
        }
        let known: Vec<bool> = choices
            .iter()
            .map(|choice| cached_help(helps, binary, &[path.as_slice(), &[*choice]].concat()).is_some())
            .collect();
        if !known[0] {
            break;
        }
        if let Some(at) = known.iter().position(|known| !known) {
            problems.push(format!("`{command}`: `{} {}` is no command", path.join(" "), choices[at]));
        }
        path.push(choices[0]);
    }
    let Some(text) = cached_help(helps, binary, &path) else {
        return vec![format!("`{command}`: `{}` is no command", path.join(" "))];
    };
    let top = cached_help(helps, binary, &[]).unwrap_or_default();
    for flag in words.iter().flat_map(|word| word.split('|')) {
        let flag = flag.trim_start_matches('[').trim_end_matches([']', ',']);
        let Some(name) = flag.strip_prefix("--") else { continue };
        let name = name.split('=').next().unwrap_or_default();
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_lowercase() || c == '-') {
            continue;
        }
        let listed = [" ", "\n", " <", "="]
            .iter()
            .any(|after| [&text, &top].iter().any(|help| help.contains(&format!("--{name}{after}"))));
        if !listed {
            problems.push(format!("`{command}`: `{} --{name}` is no flag of the binary", path.join(" ")));
        }
    }
    problems
}

#[test]
fn every_lore_command_the_book_quotes_is_one_the_binaries_have() {
    let root = repository();
    let mut pages: Vec<_> = std::fs::read_dir(root.join("docs/guide"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|extension| extension == "md"))
        .collect();
    pages.push(root.join("README.md"));
    pages.sort();
    let binaries = [("lore", workspace_binary("lore")), ("lore-server", workspace_binary("lore-server"))];
    let names: Vec<&str> = binaries.iter().map(|(name, _)| *name).collect();
    let mut helps: BTreeMap<&str, Helps> = BTreeMap::new();
    let (mut checked, mut problems) = (0, Vec::new());
    for page in &pages {
        let text = std::fs::read_to_string(page).unwrap();
        for (name, command) in quoted_commands(&text, &names) {
            let binary = &binaries.iter().find(|(binary, _)| *binary == name).unwrap().1;
            checked += 1;
            let found = check(binary, &command, helps.entry(name).or_default());
            let page = page.strip_prefix(&root).unwrap().display().to_string();
            problems.extend(found.into_iter().map(|problem| format!("{page}: {problem}")));
        }
    }
    assert!(checked >= 40, "only {checked} commands were found in the book: is the reading of its blocks broken?");
    assert!(
        problems.is_empty(),
        "{} quoted commands the binaries do not have:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

#[test]
fn a_renamed_flag_or_command_in_a_page_is_found() {
    let lore = workspace_binary("lore");
    let mut helps = BTreeMap::new();
    assert!(check(&lore, "lore qa patterns --project lore --category x", &mut helps).is_empty());
    let flag = check(&lore, "lore qa patterns --project lore --kategory x", &mut helps);
    assert_eq!(flag.len(), 1, "{flag:?}");
    assert!(flag[0].contains("`qa patterns --kategory` is no flag"), "{flag:?}");
    let text = "```sh\nlore qa remine --project lore   # comment\nlore entry review pending --project lore; lore nothing --x\n```\n";
    let commands = quoted_commands(text, &["lore"]);
    assert_eq!(commands.len(), 3, "{commands:?}");
    let unknown = check(&lore, &commands[2].1, &mut helps);
    assert!(unknown.iter().any(|problem| problem.contains("--x")), "{unknown:?}");
}
