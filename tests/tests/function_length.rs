//! No production function a reader cannot hold whole:
//! `scripts/checks/function_length.py` (run by `make lint`) passes on this
//! checkout, and fails on a new long function, on a listed one that grew,
//! and on a listed one that no longer needs its line; a function whose
//! comment says why it is one piece passes, and so does a long test.

use std::path::Path;
use std::process::Command;

use lore_e2e::{repository, run_check};

fn check(root: &Path) -> (bool, String, String) {
    run_check("function_length.py", root)
}

/// A function of `lines` lines (its signature and closing brace counted).
fn function(name: &str, lines: usize) -> String {
    let body: String = (0..lines - 2).map(|line| format!("    let _ = {line};\n")).collect();
    format!("fn {name}() {{\n{body}}}\n")
}

#[test]
fn this_repository_has_no_long_function_without_a_reason() {
    let (ok, stdout, stderr) = check(&repository());
    assert!(ok, "{stderr}");
    assert!(stdout.starts_with("no production function over 80 lines"), "{stdout}");
}

#[test]
fn a_new_long_function_a_grown_one_and_a_stale_line_fail_and_reasons_and_tests_pass() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path();
    let write = |path: &str, text: &str| {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    let test_module = format!("#[cfg(test)]\nmod tests {{\n{}}}\n", function("long_test", 120));
    let reasoned = format!("// One piece: a state machine read top to bottom.\n{}", function("machine", 90));
    write(
        "src/lib.rs",
        &[function("short", 80), function("new_long", 81), function("grown", 95), reasoned, test_module].concat(),
    );
    write("tests/it.rs", &function("long_integration_test", 200));
    write("scripts/checks/long_functions.txt", "# debt\nsrc/lib.rs grown 90\nsrc/lib.rs split_since 100\n");
    let git = |args: &[&str]| assert!(Command::new("git").args(args).current_dir(root).status().unwrap().success());
    git(&["init", "--quiet"]);
    git(&["add", "-A"]);

    let (ok, _, stderr) = check(root);
    assert!(!ok, "the check passed long functions");
    assert!(stderr.contains("src/lib.rs:81: new_long is 81 lines"), "{stderr}");
    assert!(stderr.contains("grown grew to 95 lines"), "{stderr}");
    assert!(stderr.contains("lists src/lib.rs split_since, which is no longer long"), "{stderr}");
    for spared in ["short", "machine", "long_test", "long_integration_test"] {
        assert!(!stderr.contains(&format!(" {spared} ")), "{spared} was reported:\n{stderr}");
    }
}
