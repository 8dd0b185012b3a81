//! `--index DIR`: markdown folders on this machine, indexed in Lore where
//! they live. The server's own watcher sees only its disk; in a fleet the
//! notes, runbooks and ADRs are in the agents' repositories.
//!
//! At start every folder is compared with what was last sent; then `notify`
//! reports changes, debounced, and each changed file is looked at again.
//! A file whose content hash differs from the one last sent becomes an
//! `IndexDocument` write, a file gone a `RemoveDocument`, both spooled like
//! actions: nothing is lost while the server is away, and they reach it in
//! the order they happened.
//!
//! The hashes sent are kept in `index-state.json` beside the spool, written
//! after the spool has the writes. A crash in between sends a file again at
//! the next start, which the server takes as unchanged: nothing doubles.
//!
//! A folder that is not there yet (a repository not cloned yet) is looked
//! for every few seconds; one that goes away keeps its documents until it
//! is back.
//!
//! A document's path is the file's path under its folder (`ops/deploy.md`),
//! in the project of `--index-project` (else the folder's repository name).
//! Hidden files and folders are skipped, and so is a file over the server's
//! 1 MiB or not UTF-8 (said in the log).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use anyhow::Context as _;
use lore_proto::v1 as proto;
use notify_debouncer_mini::{DebounceEventResult, Debouncer, new_debouncer};
use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;

use lore_spool::Spool;
use lore_spool::entry::Write;

/// The server's limit on one document.
const MAX_DOCUMENT_BYTES: u64 = 1024 * 1024;
/// What the sidecar names itself as the writer of indexed documents.
const CLIENT: &str = "sidecar-index";
/// What was sent, in the spool's directory.
const STATE_FILE: &str = "index-state.json";

/// One folder to keep indexed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Folder {
    pub dir: PathBuf,
    pub project: String,
}

/// Counts for the sidecar's status and logs.
#[derive(Debug, Default)]
pub struct FolderStats {
    /// Documents spooled for indexing (new or changed).
    pub indexed: AtomicU64,
    /// Documents spooled for removal.
    pub removed: AtomicU64,
    /// Files left out (too large, not UTF-8, unreadable).
    pub skipped: AtomicU64,
}

/// The watch, running until dropped.
pub struct FolderWatch {
    task: tokio::task::JoinHandle<()>,
}

impl Drop for FolderWatch {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// How often a folder that is not there (yet) is looked for: an agent's
/// pod may start its sidecar before the repository is cloned.
const LOOK_FOR_MISSING: Duration = Duration::from_secs(5);

/// What was last sent of each folder: its files' content hashes by path.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Sent {
    /// By folder (its path as given), then by document path.
    folders: BTreeMap<String, BTreeMap<String, String>>,
}

/// One change to send, or a file to leave out.
#[derive(Debug, PartialEq, Eq)]
enum Change {
    Index {
        path: String,
        content: String,
        hash: String,
    },
    Remove {
        path: String,
    },
    /// Not sent; remembered by `marker` (what the file was when it was
    /// left out), so the same file is not looked at and logged again at
    /// every event while it is being written.
    Skip {
        path: String,
        marker: String,
        reason: String,
    },
}

/// Sends what changed since the last run, then watches the folders. A
/// folder that is not there is looked for every few seconds, and its
/// documents stay as they were meanwhile.
pub async fn start(
    folders: Vec<Folder>,
    debounce: Duration,
    spool: Arc<Spool>,
    state_dir: PathBuf,
    stats: Arc<FolderStats>,
) -> anyhow::Result<FolderWatch> {
    let (sender, mut events) = mpsc::channel::<DebounceEventResult>(64);
    let debouncer = new_debouncer(debounce, move |result| drop(sender.blocking_send(result)))
        .context("cannot watch the folders to index")?;
    let sent = read_state(&state_dir.join(STATE_FILE));
    let watching = vec![Watching::NotYet { said: false }; folders.len()];
    let mut indexer = Indexer { folders, spool, state_dir, stats, sent, debouncer, watching };
    // Changes made while the sidecar was down, before any event.
    indexer.watch_new().await;
    let task = tokio::spawn(async move {
        let mut look = tokio::time::interval_at(tokio::time::Instant::now() + LOOK_FOR_MISSING, LOOK_FOR_MISSING);
        loop {
            tokio::select! {
                result = events.recv() => match result {
                    None => return,
                    Some(Ok(events)) => {
                        let paths: BTreeSet<PathBuf> = events.into_iter().map(|event| event.path).collect();
                        indexer.changed(paths).await;
                    }
                    Some(Err(error)) => {
                        // Events may have been lost: look at everything again.
                        tracing::warn!(%error, "the folder watch lost events; rescanning");
                        for index in 0..indexer.folders.len() {
                            indexer.rescan(index).await;
                        }
                    }
                },
                _ = look.tick() => indexer.watch_new().await,
            }
        }
    });
    Ok(FolderWatch { task })
}

/// Whether a folder is watched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Watching {
    Yes,
    /// Not there (yet); `said` once it was logged.
    NotYet {
        said: bool,
    },
}

struct Indexer {
    folders: Vec<Folder>,
    spool: Arc<Spool>,
    state_dir: PathBuf,
    stats: Arc<FolderStats>,
    sent: Sent,
    debouncer: Debouncer<notify::RecommendedWatcher>,
    watching: Vec<Watching>,
}

impl Indexer {
    /// Starts watching the folders that are there now and were not, each
    /// compared with what was sent of it first.
    async fn watch_new(&mut self) {
        for index in 0..self.folders.len() {
            let Watching::NotYet { said } = self.watching[index] else { continue };
            let dir = self.folders[index].dir.clone();
            let watched = if dir.is_dir() {
                self.debouncer
                    .watcher()
                    .watch(&dir, notify::RecursiveMode::Recursive)
                    .map_err(|error| error.to_string())
            } else {
                Err("not a folder (yet)".to_owned())
            };
            match watched {
                Ok(()) => {
                    tracing::info!(folder = %dir.display(), project = self.folders[index].project, "indexing the folder");
                    self.watching[index] = Watching::Yes;
                    self.rescan(index).await;
                }
                Err(reason) if !said => {
                    tracing::warn!(folder = %dir.display(), reason, "cannot watch the folder; looking for it every 5 s");
                    self.watching[index] = Watching::NotYet { said: true };
                }
                Err(_) => {}
            }
        }
    }

    /// Looks at the paths notify reported: a markdown file by itself,
    /// anything else (a folder renamed or removed) by rescanning its folder.
    async fn changed(&mut self, paths: BTreeSet<PathBuf>) {
        let mut rescans = BTreeSet::new();
        let mut changes: Vec<(usize, Change)> = Vec::new();
        for path in paths {
            let Some((index, relative)) = self.locate(&path) else { continue };
            if relative.is_empty() || !is_markdown(&path) || path.is_dir() {
                rescans.insert(index);
                continue;
            }
            if is_hidden(&relative) {
                continue;
            }
            let known = self.known(index).get(&relative).cloned();
            if let Some(change) = look_at(&path, relative, known.as_deref()) {
                changes.push((index, change));
            }
        }
        self.send(changes).await;
        for index in rescans {
            self.rescan(index).await;
        }
    }

    /// Compares a whole folder with what was sent of it. A folder gone
    /// (unmounted, moved away) keeps its documents until it is back.
    async fn rescan(&mut self, index: usize) {
        let dir = self.folders[index].dir.clone();
        if !dir.is_dir() {
            if self.watching[index] == Watching::Yes {
                let _ = self.debouncer.watcher().unwatch(&dir);
                self.watching[index] = Watching::NotYet { said: false };
            }
            return;
        }
        let known = self.known(index).clone();
        let found = tokio::task::spawn_blocking(move || {
            let mut changes = Vec::new();
            let mut present = BTreeSet::new();
            // What cannot be walked is left as it was sent.
            for (path, relative) in markdown_files(&dir).documents {
                present.insert(relative.clone());
                let hash = known.get(&relative).map(String::as_str);
                if let Some(change) = look_at(&path, relative, hash) {
                    changes.push(change);
                }
            }
            changes.extend(
                known.keys().filter(|path| !present.contains(*path)).map(|path| Change::Remove { path: path.clone() }),
            );
            changes
        })
        .await;
        match found {
            Ok(changes) => self.send(changes.into_iter().map(|change| (index, change)).collect()).await,
            Err(error) => tracing::warn!(%error, "rescanning a folder stopped"),
        }
    }

    fn known(&mut self, index: usize) -> &mut BTreeMap<String, String> {
        let key = self.folders[index].dir.display().to_string();
        self.sent.folders.entry(key).or_default()
    }

    /// The folder a path is under, and its document path there.
    fn locate(&self, path: &Path) -> Option<(usize, String)> {
        self.folders.iter().enumerate().find_map(|(index, folder)| Some((index, document_path(&folder.dir, path)?)))
    }

    /// Spools the changes in one append, then remembers them as sent.
    async fn send(&mut self, changes: Vec<(usize, Change)>) {
        if changes.is_empty() {
            return;
        }
        let writes: Vec<Write> = changes
            .iter()
            .filter_map(|(index, change)| {
                let project = self.folders[*index].project.clone();
                match change {
                    Change::Index { path, content, .. } => Some(Write::IndexDocument(proto::IndexDocumentRequest {
                        project,
                        path: path.clone(),
                        content: content.clone(),
                    })),
                    Change::Remove { path } => {
                        Some(Write::RemoveDocument(proto::RemoveDocumentRequest { project, path: path.clone() }))
                    }
                    Change::Skip { .. } => None,
                }
            })
            .collect();
        if !writes.is_empty()
            && let Err(status) = crate::api::spool_writes_from(&self.spool, writes, CLIENT).await
        {
            // Not remembered as sent: the next change or start tries again.
            tracing::warn!(error = %status.message(), "cannot spool the folder's changes");
            return;
        }
        for (index, change) in changes {
            match change {
                Change::Index { path, hash, .. } => {
                    tracing::info!(path, "document spooled for indexing");
                    self.stats.indexed.fetch_add(1, Ordering::Relaxed);
                    self.known(index).insert(path, hash);
                }
                Change::Remove { path } => {
                    tracing::info!(path, "document spooled for removal");
                    self.stats.removed.fetch_add(1, Ordering::Relaxed);
                    self.known(index).remove(&path);
                }
                Change::Skip { path, marker, reason } => {
                    tracing::warn!(path, "not indexed: {reason}");
                    self.stats.skipped.fetch_add(1, Ordering::Relaxed);
                    self.known(index).insert(path, marker);
                }
            }
        }
        let saved = serde_json::to_vec(&self.sent)
            .map_err(std::io::Error::from)
            .and_then(|bytes| lore_spool::acked::replace_file(&self.state_dir, STATE_FILE, &bytes));
        if let Err(error) = saved {
            tracing::warn!(%error, "cannot save what was indexed in {STATE_FILE}; the next start sends it again");
        }
    }
}

/// What to send about one file: its content when it differs from `known`,
/// its removal when it is gone and was known, that it is left out when it
/// cannot be sent (once per version of it), nothing otherwise.
fn look_at(path: &Path, relative: String, known: Option<&str>) -> Option<Change> {
    let gone = |relative: String| known.map(|_| Change::Remove { path: relative });
    let skip = |relative: String, marker: String, reason: String| {
        (known != Some(marker.as_str())).then_some(Change::Skip { path: relative, marker, reason })
    };
    let metadata = match std::fs::metadata(path) {
        Ok(metadata) => metadata,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return gone(relative),
        Err(error) => return skip(relative, format!("skipped:{}", error.kind()), error.to_string()),
    };
    if metadata.len() > MAX_DOCUMENT_BYTES {
        let modified = metadata.modified().ok().and_then(|at| at.duration_since(std::time::UNIX_EPOCH).ok());
        let marker = format!("skipped:{}:{}", metadata.len(), modified.map_or(0, |at| at.as_nanos()));
        return skip(relative, marker, format!("{} bytes is over the server's 1 MiB", metadata.len()));
    }
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return gone(relative),
        Err(error) => return skip(relative, format!("skipped:{}", error.kind()), error.to_string()),
    };
    let hash = blake3::hash(&bytes).to_hex().to_string();
    if known == Some(hash.as_str()) {
        return None;
    }
    match String::from_utf8(bytes) {
        Ok(content) => Some(Change::Index { path: relative, content, hash }),
        Err(_) => skip(relative, format!("skipped:{hash}"), "not UTF-8 text".into()),
    }
}

/// The markdown files of a folder, as `lore index` and the watcher see it.
#[derive(Debug, Default)]
pub struct MarkdownFiles {
    /// Each file that is not hidden, with its document path (its path
    /// under the folder, `/`-separated), sorted.
    pub documents: Vec<(PathBuf, String)>,
    /// Markdown files whose names are not UTF-8: no document path.
    pub not_utf8: Vec<PathBuf>,
    /// What the walk could not read.
    pub unreadable: Vec<walkdir::Error>,
}

/// Every markdown file under `dir` that is not hidden.
pub fn markdown_files(dir: &Path) -> MarkdownFiles {
    let mut files = MarkdownFiles::default();
    let walk = walkdir::WalkDir::new(dir)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|entry| entry.depth() == 0 || !entry.file_name().to_string_lossy().starts_with('.'));
    for entry in walk {
        let entry = match entry {
            Ok(entry) => entry,
            Err(error) => {
                files.unreadable.push(error);
                continue;
            }
        };
        if !entry.file_type().is_file() || !is_markdown(entry.path()) {
            continue;
        }
        match document_path(dir, entry.path()) {
            Some(relative) => files.documents.push((entry.path().to_owned(), relative)),
            None => files.not_utf8.push(entry.path().to_owned()),
        }
    }
    files
}

/// `path` under `dir` as a document path, `/`-separated; `None` when it is
/// not under `dir` or its name is not UTF-8.
fn document_path(dir: &Path, path: &Path) -> Option<String> {
    let relative = path.strip_prefix(dir).ok()?;
    let parts: Option<Vec<&str>> = relative.components().map(|part| part.as_os_str().to_str()).collect();
    Some(parts?.join("/"))
}

fn is_markdown(path: &Path) -> bool {
    path.extension().is_some_and(|extension| extension.eq_ignore_ascii_case("md"))
}

fn is_hidden(relative: &str) -> bool {
    relative.split('/').any(|part| part.starts_with('.'))
}

fn read_state(path: &Path) -> Sent {
    match std::fs::read(path) {
        Ok(bytes) => serde_json::from_slice(&bytes).unwrap_or_else(|error| {
            tracing::warn!(%error, path = %path.display(), "what was indexed is unreadable; every file is sent again");
            Sent::default()
        }),
        Err(_) => Sent::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_sent_when_its_content_changes_and_removed_once_gone() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("deploy.md");
        std::fs::write(&path, "# Deploy\n").unwrap();
        let Some(Change::Index { hash, content, .. }) = look_at(&path, "deploy.md".into(), None) else {
            panic!("a new file is sent")
        };
        assert_eq!(content, "# Deploy\n");
        assert_eq!(look_at(&path, "deploy.md".into(), Some(&hash)), None, "unchanged");
        std::fs::remove_file(&path).unwrap();
        assert_eq!(look_at(&path, "deploy.md".into(), Some(&hash)), Some(Change::Remove { path: "deploy.md".into() }));
        assert_eq!(look_at(&path, "deploy.md".into(), None), None, "never sent, nothing to remove");
    }

    #[test]
    fn large_binary_and_hidden_files_are_left_out() {
        let folder = tempfile::tempdir().unwrap();
        std::fs::write(folder.path().join("big.md"), vec![b'a'; MAX_DOCUMENT_BYTES as usize + 1]).unwrap();
        std::fs::write(folder.path().join("bytes.md"), [0xff, 0xfe]).unwrap();
        for name in ["big.md", "bytes.md"] {
            let Some(Change::Skip { marker, .. }) = look_at(&folder.path().join(name), name.into(), None) else {
                panic!("{name} is left out")
            };
            assert_eq!(look_at(&folder.path().join(name), name.into(), Some(&marker)), None, "once per version");
        }
        std::fs::create_dir_all(folder.path().join(".git")).unwrap();
        std::fs::create_dir_all(folder.path().join("ops")).unwrap();
        std::fs::write(folder.path().join(".git/notes.md"), "x").unwrap();
        std::fs::write(folder.path().join(".draft.md"), "x").unwrap();
        std::fs::write(folder.path().join("ops/runbook.MD"), "x").unwrap();
        std::fs::write(folder.path().join("ops/script.sh"), "x").unwrap();
        let found: Vec<String> =
            markdown_files(folder.path()).documents.into_iter().map(|(_, relative)| relative).collect();
        assert_eq!(found, ["big.md", "bytes.md", "ops/runbook.MD"]);
        assert!(is_hidden(".draft.md") && is_hidden("a/.b/c.md") && !is_hidden("a/b.md"));
    }

    #[test]
    fn what_was_sent_survives_a_restart_and_a_bad_file_starts_afresh() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join(STATE_FILE);
        let mut sent = Sent::default();
        sent.folders.entry("/docs".into()).or_default().insert("a.md".into(), "hash".into());
        lore_spool::acked::replace_file(folder.path(), STATE_FILE, &serde_json::to_vec(&sent).unwrap()).unwrap();
        assert_eq!(read_state(&path).folders, sent.folders);
        std::fs::write(&path, "{not json").unwrap();
        assert!(read_state(&path).folders.is_empty());
    }
}
