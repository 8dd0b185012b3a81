//! docs/ARCHITECTURE.md's crate table is the workspace's:
//! `scripts/checks/crate_table.py` (run by `make lint`) passes on this
//! checkout and names each crate the table leaves out and each dependency a
//! row does not declare.

use std::path::Path;

use lore_e2e::{repository, run_check};

fn check(root: &Path) -> (bool, String, String) {
    run_check("crate_table.py", root)
}

#[test]
fn the_crate_table_of_this_repository_names_every_crate_and_what_it_imports() {
    let (ok, stdout, stderr) = check(&repository());
    assert!(ok, "{stderr}");
    assert!(stdout.contains("names all"), "{stdout}");
}

#[test]
fn a_crate_without_a_row_and_an_import_its_row_does_not_name_fail_the_check() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path();
    let write = |path: &str, text: &str| {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write("Cargo.toml", "[workspace]\nmembers = [\"model\", \"store\", \"web\"]\n");
    write("model/Cargo.toml", "[package]\nname = \"lore-types\"\n");
    write(
        "store/Cargo.toml",
        "[package]\nname = \"lore-store\"\n[dependencies]\nlore-types = { path = \"../model\" }\nlore-web = { path = \"../web\" }\n[dev-dependencies]\nlore-pgtest = { path = \"../pgtest\" }\n",
    );
    write("web/Cargo.toml", "[package]\nname = \"lore-web\"\n");
    let table = "# Architecture\n\n## The crates, and what each may import\n\n\
        | crate | holds | may import |\n|---|---|---|\n\
        | `model/` lore-types | the types | nothing of Lore |\n\
        | `store/` lore-store | the queries | lore-types |\n\n## Next\n";
    write("docs/ARCHITECTURE.md", table);
    let (ok, _, stderr) = check(root);
    assert!(!ok, "{stderr}");
    assert!(stderr.contains("crate lore-web (web/) has no row in the table"), "{stderr}");
    assert!(stderr.contains("lore-store depends on lore-web, which its row's 'may import' does not name"), "{stderr}");
    // A dev-dependency is the tests' own: not named, not missed.
    assert!(!stderr.contains("lore-pgtest"), "{stderr}");
    // With the row and the import named, it passes.
    let fixed = table
        .replace("| lore-types |\n", "| lore-types, lore-web |\n| `web/` lore-web | the console | nothing of Lore |\n");
    write("docs/ARCHITECTURE.md", &fixed);
    let (ok, _, stderr) = check(root);
    assert!(ok, "{stderr}");
}
