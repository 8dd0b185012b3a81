//! Which of the files Lore's lessons and warnings cite are gone from this
//! checkout. The server cannot see the agent's repository; the hook asks it
//! which files its items cite (ListCitedFiles) and answers with those it
//! cannot find, so a briefing leaves out an item whose files are all gone
//! (renamed, deleted) instead of steering the agent to them.

use std::path::{Component, Path, PathBuf};
use std::time::Duration;

use lore_proto::v1 as proto;

use crate::connection::Connection;

/// The question must not cost the briefing: an answer that takes longer
/// is given up on, and the briefing goes without it.
const ASK_BUDGET: Duration = Duration::from_millis(800);

/// The cited files missing under the repository holding `dir`; empty when
/// the server does not answer in time (the briefing is then unfiltered).
pub async fn missing_cited_files(connection: &Connection, project: &str, dir: &Path) -> Vec<String> {
    let request = proto::ListCitedFilesRequest { project: project.to_owned() };
    let asked = tokio::time::timeout(ASK_BUDGET, connection.agent().list_cited_files(request)).await;
    let Ok(Ok(answer)) = asked else { return Vec::new() };
    let root = repository_root(dir).await.unwrap_or_else(|| dir.to_path_buf());
    let paths = answer.into_inner().paths;
    tokio::task::spawn_blocking(move || missing_under(&root, &paths)).await.unwrap_or_default()
}

/// The repository's top folder, as git sees it.
async fn repository_root(dir: &Path) -> Option<PathBuf> {
    let mut command = tokio::process::Command::new("git");
    command.arg("-C").arg(dir).args(["rev-parse", "--show-toplevel"]);
    command.stdin(std::process::Stdio::null()).stderr(std::process::Stdio::null()).kill_on_drop(true);
    let output = tokio::time::timeout(Duration::from_secs(1), command.output()).await.ok()?.ok()?;
    let root = String::from_utf8(output.stdout).ok()?;
    (output.status.success() && !root.trim().is_empty()).then(|| PathBuf::from(root.trim()))
}

/// The paths not found under `root`. Only plain relative paths are looked
/// up: what the server sends is data, and `..` or an absolute path must not
/// make the hook look outside the repository.
fn missing_under(root: &Path, paths: &[String]) -> Vec<String> {
    paths
        .iter()
        .filter(|path| {
            let relative = Path::new(path.as_str());
            let plain = !path.is_empty() && relative.components().all(|part| matches!(part, Component::Normal(_)));
            plain && std::fs::symlink_metadata(root.join(relative)).is_err()
        })
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_relative_paths_that_are_gone_are_missing() {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.path().join("src")).unwrap();
        std::fs::write(root.path().join("src/kept.rs"), "").unwrap();
        let paths: Vec<String> =
            ["src/kept.rs", "src/gone.rs", "../outside.rs", "/etc/passwd", ""].into_iter().map(String::from).collect();
        assert_eq!(missing_under(root.path(), &paths), vec!["src/gone.rs".to_owned()]);
    }
}
