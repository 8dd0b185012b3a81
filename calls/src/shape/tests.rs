use super::*;

fn shape(command: &str) -> String {
    Shape::of(command).text()
}

#[test]
fn paths_and_values_are_masked_and_flags_kept() {
    assert_eq!(shape("pytest -x tests/test_a.py -k slow"), "pytest -x <arg> -k <arg>");
    assert_eq!(shape("pytest --timeout=30 tests/a.py tests/b.py"), "pytest --timeout <arg>");
    assert_eq!(shape("python reproduce_issue.py"), "python <arg>");
    assert_eq!(shape("python3 -c \"import django; print(django.VERSION)\""), "python3 -c <arg>");
}

#[test]
fn a_subcommand_and_a_module_say_what_runs() {
    assert_eq!(shape("git commit -m 'fix: the thing'"), "git commit -m <arg>");
    assert_eq!(shape("cargo test -p lore-calls"), "cargo test -p <arg>");
    assert_eq!(shape("npm run test -- --watch=false"), "npm run test -- --watch");
    assert_eq!(shape("python3 -m pytest testing/test_x.py"), "python3 -m pytest <arg>");
    // A program without subcommands takes its first word as a value.
    assert_eq!(shape("ls tests"), "ls <arg>");
}

#[test]
fn where_and_how_a_command_runs_is_not_its_shape() {
    assert_eq!(shape("cd /testbed && PYTHONPATH=. timeout 60 ./tests/runtests.py forms"), "tests/runtests.py <arg>");
    assert_eq!(shape("sudo -E env A=1 /usr/bin/python3 x.py 2>&1 > out.txt"), "python3 <arg>");
    assert_eq!(shape("uv run pytest"), "pytest");
    assert_eq!(shape("timeout -s KILL 5s make test"), "make test");
    assert_eq!(shape("cd src; echo start"), "");
    assert!(Shape::of("cd src && echo done").is_empty());
}

#[test]
fn each_segment_has_its_shape_and_a_heredoc_is_text() {
    assert_eq!(
        shape("pip install -e . && pytest tests | tail -n 20"),
        "pip install -e <arg> && pytest <arg> && tail -n <arg>"
    );
    let script = "cat <<'EOF' > check.py\nimport os; os.system('rm -rf /'); x && y\nEOF\npython check.py";
    assert_eq!(shape(script), "cat && python <arg>");
    assert_eq!(shape("grep -n 'a|b;c' file.py"), "grep -n <arg>");
    assert_eq!(shape("ls \\\n  -la src"), "ls -la <arg>");
}

#[test]
fn a_command_that_cannot_be_parsed_still_has_a_shape() {
    assert_eq!(shape("echo 'unbalanced && python x.py"), "");
    assert_eq!(shape("python 'x.py"), "python <arg>");
    assert_eq!(shape(""), "");
    assert!(!shape(&"x ".repeat(100_000)).is_empty());
}

#[test]
fn kinds_are_what_the_command_does() {
    let kind = |command: &str| Shape::of(command).kind();
    assert_eq!(kind("pytest tests/a.py"), Some(Kind::Test));
    assert_eq!(kind("./tests/runtests.py forms"), Some(Kind::Test));
    assert_eq!(kind("python -m pytest"), Some(Kind::Test));
    assert_eq!(kind("cargo test"), Some(Kind::Test));
    assert_eq!(kind("npm run test"), Some(Kind::Test));
    assert_eq!(kind("npx vitest run"), Some(Kind::Test));
    assert_eq!(kind("npx eslint ."), Some(Kind::Lint));
    assert_eq!(kind("cargo build --release"), Some(Kind::Build));
    assert_eq!(kind("make"), Some(Kind::Build));
    // The job a recovery must share: `make test` after a failed `make check`.
    assert_eq!(kind("make check"), Some(Kind::Test));
    assert_eq!(kind("make test"), Some(Kind::Test));
    assert_eq!(kind("cargo check"), Some(Kind::Build));
    assert_eq!(kind("pip install -e ."), Some(Kind::Install));
    assert_eq!(kind("npm ci"), Some(Kind::Install));
    assert_eq!(kind("ruff check ."), Some(Kind::Lint));
    assert_eq!(kind("python reproduce.py"), Some(Kind::Run("python".into())));
    assert_eq!(kind("git add -A"), Some(Kind::Run("git".into())));
    assert_eq!(kind("cd x"), None);
}

#[test]
fn the_exact_key_folds_whitespace() {
    assert_eq!(exact("  python   x.py\n--flag "), "python x.py --flag");
    assert_eq!(exact(&"é".repeat(1000)).chars().count(), 300);
}

#[test]
fn a_query_that_found_nothing_did_not_fail() {
    assert!(Shape::of("grep -rn needle src").is_no_match(1));
    assert!(Shape::of("cd src && diff a b").is_no_match(1));
    assert!(!Shape::of("grep -rn needle src").is_no_match(2));
    assert!(!Shape::of("grep x f | python parse.py").is_no_match(1));
    assert!(!Shape::of("pytest").is_no_match(1));
}

#[test]
fn a_shape_read_again_is_the_same_shape() {
    for command in [
        "pytest tests/test_forms.py -x",
        "python -m pytest tests -k 'not slow'",
        "cd src && ./runtests.sh forms > out.txt 2>&1",
        "git -C repo commit -q -m 'x'",
        "npm run test -- --watch=false",
    ] {
        let shape = shape(command);
        assert_eq!(super::Shape::of(&shape).text(), shape, "{command}");
    }
}
