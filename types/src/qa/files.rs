//! File globs learned from the files of failures.
//!
//! A file stands for its directory and extension: `schema/users.ts` teaches
//! `schema/*.ts`. Because the glob is a function of the file, "does a task
//! file match a pattern's globs" is "is the file's glob among them", which
//! PostgreSQL answers from a GIN index (`file_globs && $globs`).

use super::limits::MAX_FILE_GLOBS;

/// The glob a file teaches and matches.
pub fn glob_of(path: &str) -> String {
    let path = path.trim().replace('\\', "/");
    let path = path.trim_start_matches("./").trim_start_matches('/');
    let (directory, name) = match path.rsplit_once('/') {
        Some((directory, name)) => (directory, name),
        None => ("", path),
    };
    let pattern = match name.rsplit_once('.') {
        Some((stem, extension)) if !stem.is_empty() && !extension.is_empty() => format!("*.{extension}"),
        _ => "*".to_owned(),
    };
    if directory.is_empty() { pattern } else { format!("{directory}/{pattern}") }
}

/// The distinct globs of some files, in first-seen order.
pub fn globs_of<'a>(files: impl IntoIterator<Item = &'a String>) -> Vec<String> {
    let mut globs: Vec<String> = Vec::new();
    for file in files {
        let glob = glob_of(file);
        if !glob.is_empty() && !globs.contains(&glob) {
            globs.push(glob);
        }
    }
    globs
}

/// A pattern's globs after a failure with these files: the known ones first,
/// then new ones, at most `MAX_FILE_GLOBS`.
pub fn learn(known: &[String], files: &[String]) -> Vec<String> {
    let mut globs = known.to_vec();
    for glob in globs_of(files) {
        if globs.len() >= MAX_FILE_GLOBS {
            break;
        }
        if !globs.contains(&glob) {
            globs.push(glob);
        }
    }
    globs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_teaches_its_directory_and_extension() {
        assert_eq!(glob_of("schema/users.ts"), "schema/*.ts");
        assert_eq!(glob_of("./src/db/schema.rs"), "src/db/*.rs");
        assert_eq!(glob_of("Makefile"), "*");
        assert_eq!(glob_of("docs/.env"), "docs/*");
        assert_eq!(glob_of("main.py"), "*.py");
        assert_eq!(glob_of("src\\win\\a.cs"), "src/win/*.cs");
    }

    #[test]
    fn learning_keeps_known_globs_and_a_bound() {
        let known = vec!["schema/*.ts".to_owned()];
        let learned = learn(&known, &["schema/a.ts".into(), "api/b.ts".into(), "api/c.ts".into()]);
        assert_eq!(learned, ["schema/*.ts", "api/*.ts"]);
        let many: Vec<String> = (0..100).map(|index| format!("dir{index}/x.rs")).collect();
        assert_eq!(learn(&[], &many).len(), MAX_FILE_GLOBS);
    }
}
