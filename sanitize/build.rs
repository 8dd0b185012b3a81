//! Lists the vendored Nosey Parker rule files for `include_str!`, so that an
//! update of the catalog is a copy of its folder (see rules/README.md).

use std::fmt::Write as _;
use std::path::Path;

fn main() {
    let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join("rules/noseyparker");
    println!("cargo::rerun-if-changed={}", folder.display());
    let mut files: Vec<_> = std::fs::read_dir(&folder)
        .expect("rules/noseyparker is readable")
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|path| path.extension().is_some_and(|extension| extension == "yml"))
        .collect();
    files.sort();
    let mut source = String::from("/// The vendored Nosey Parker rule files: name and text.\n");
    source.push_str("pub(crate) const NOSEYPARKER_FILES: &[(&str, &str)] = &[\n");
    for file in files {
        let name = file.file_name().expect("a file name").to_string_lossy().into_owned();
        writeln!(source, "    ({name:?}, include_str!({:?})),", file.display().to_string())
            .expect("writes to a String");
    }
    source.push_str("];\n");
    let out = Path::new(&std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("noseyparker_files.rs");
    std::fs::write(out, source).expect("OUT_DIR is writable");
}
