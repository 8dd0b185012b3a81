//! The repository stands alone: `scripts/checks/self_contained.py` (run by
//! `make lint`) passes on this checkout and catches paths that climb out of
//! a repository.

use std::path::Path;
use std::process::Command;

use lore_e2e::{repository, run_check};

fn check(root: &Path) -> (bool, String) {
    let (ok, _, stderr) = run_check("self_contained.py", root);
    (ok, stderr)
}

fn git(root: &Path, args: &[&str]) {
    let status = Command::new("git").arg("-C").arg(root).args(args).status().expect("git runs");
    assert!(status.success(), "git {args:?}");
}

#[test]
fn no_tracked_file_of_this_repository_points_outside_it() {
    let (ok, stderr) = check(&repository());
    assert!(ok, "{stderr}");
}

#[test]
fn the_guard_names_each_file_that_climbs_out_or_links_to_nothing_and_spares_the_rest() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path();
    git(root, &["init", "--quiet"]);
    std::fs::create_dir_all(root.join("crate/src/deep")).unwrap();
    std::fs::write(root.join("crate/Cargo.toml"), "[package]\n").unwrap();
    // Inside: one level up from the crate is the repository root.
    std::fs::write(root.join("crate/src/lib.rs"), "sqlx::migrate!(\"../migrations\");\n").unwrap();
    // Outside: two levels up from the crate, whatever the file's own depth
    // (spelled in pieces, or this very file would climb out).
    std::fs::write(
        root.join("crate/src/deep/tests.rs"),
        format!("let data = Path::new(env!(\"CARGO_MANIFEST_DIR\")).join(\"{0}/{0}/data/x.csv\");\n", ".."),
    )
    .unwrap();
    // The team's hand-over folder, even where it would resolve inside
    // (spelled in two pieces so this file does not name it).
    std::fs::write(root.join("crate/src/deep/notes.rs"), format!("// see ../{}/NOTES.md\n", "shared")).unwrap();
    std::fs::create_dir_all(root.join("docs")).unwrap();
    std::fs::write(root.join("docs/a.md"), "# A\n\n## The `lore` command line\n\n```sh\n# not a heading\n```\n")
        .unwrap();
    std::fs::write(
        root.join("README.md"),
        "[inside](docs/a.md#a), [web](https://example.com) and [outside](../elsewhere/b.md)\n\n[dead](docs/gone.md)\n\n\
         [heading](docs/a.md#the-lore-command-line), [no heading](docs/a.md#not-a-heading)\n",
    )
    .unwrap();
    git(root, &["add", "-A"]);

    let (ok, stderr) = check(root);
    assert!(!ok, "the guard passed a repository that points outside itself");
    for reported in [
        "crate/src/deep/tests.rs:1",
        "crate/src/deep/notes.rs:1",
        "README.md:1",
        "README.md:3: link to docs/gone.md",
        "README.md:5: link to docs/a.md#not-a-heading",
    ] {
        assert!(stderr.contains(reported), "{reported} not reported:\n{stderr}");
    }
    assert!(!stderr.contains("crate/src/lib.rs"), "a path inside the repository was reported:\n{stderr}");
    assert!(!stderr.contains("link to docs/a.md,"), "a link to a tracked file was reported:\n{stderr}");
    assert!(!stderr.contains("#the-lore-command-line"), "a link to a heading it has was reported:\n{stderr}");
    assert!(!stderr.contains("link to docs/a.md#a,"), "a link to a heading it has was reported:\n{stderr}");
}
