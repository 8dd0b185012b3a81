//! Watched folders: markdown files on disk kept indexed.
//!
//! Each configured folder feeds one project. A change under it is noticed
//! by `notify` (recursive, debounced), then the file system is asked what
//! is there now: a `.md` file is (re)indexed, a folder is walked, a path
//! that is gone leaves the index (with everything under it, when it was a
//! folder). Acting on the state rather than on the event kinds makes
//! renames, editors that save through a temporary file, and bursts of
//! events come out right. A document's path is relative to its folder.
//!
//! At start, and every `rescan_secs` as a safety net for events the kernel
//! dropped, each folder is reconciled: every file indexed (unchanged ones
//! are no-ops), every indexed document whose file is gone removed.
//!
//! Files that cannot be indexed (invalid UTF-8, broken front matter, over
//! the size limit, binary) are reported and skipped, and their last good
//! version stays indexed. A database failure is retried on the next tick.
//! Hidden files and folders (a name starting with `.`) are ignored.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use notify::RecursiveMode;
use notify_debouncer_mini::{DebounceEventResult, new_debouncer};
use serde::{Deserialize, Serialize};

use super::KnowledgeBase;
use super::document::{self, DocumentError};
use crate::Error;
use lore_types::knowledge::DocumentSource;
use lore_types::scope::ProjectScope;

/// `[knowledge.watch]` configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WatchConfig {
    /// Folders of markdown to keep indexed.
    pub folders: Vec<WatchedFolder>,
    /// Quiet time after a change before the file is read: an editor's
    /// burst of writes becomes one indexing.
    pub debounce_ms: u64,
    /// Larger files are reported and skipped.
    pub max_file_bytes: usize,
    /// How often every folder is reconciled in full.
    pub rescan_secs: u64,
}

impl Default for WatchConfig {
    fn default() -> Self {
        Self { folders: Vec::new(), debounce_ms: 200, max_file_bytes: 1024 * 1024, rescan_secs: 600 }
    }
}

/// One folder and the project its documents belong to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WatchedFolder {
    pub path: PathBuf,
    pub project: String,
    /// Approved drafts of the project are written here as `<key>.md` (at
    /// most one such folder per project).
    #[serde(default)]
    pub publish: bool,
}

/// A folder's canonical path (created when missing) and the name its
/// documents record as their `source_root`.
pub fn resolve_folder(path: &Path) -> Result<(PathBuf, String), Error> {
    let root = std::fs::create_dir_all(path)
        .and_then(|()| path.canonicalize())
        .map_err(|error| Error::Unavailable(format!("cannot use {}: {error}", path.display())))?;
    let name = root
        .to_str()
        .map(str::to_owned)
        .ok_or_else(|| Error::Unavailable(format!("{} is not a UTF-8 path", path.display())))?;
    Ok((root, name))
}

/// What the watcher has done since it started.
#[derive(Debug, Default)]
pub struct WatchStats {
    pub indexed: AtomicU64,
    pub unchanged: AtomicU64,
    pub removed: AtomicU64,
    /// Times a file was reported and skipped (not indexable).
    pub skipped: AtomicU64,
    /// Completed reconciliations of every folder.
    pub reconciled: AtomicU64,
    /// The files that cannot be indexed now, with the reason; a file
    /// leaves it when it is indexed or deleted.
    problems: Mutex<BTreeMap<PathBuf, String>>,
}

impl WatchStats {
    pub fn problems(&self) -> BTreeMap<PathBuf, String> {
        self.problems.lock().expect("problems lock").clone()
    }

    fn resolved(&self, path: &Path) {
        self.problems.lock().expect("problems lock").remove(path);
    }
}

/// The content Lore last wrote to files of its own (the standing
/// instructions block): a file that still holds exactly that is not
/// reindexed, so Lore's writes trigger nothing. A person's later edit
/// changes the content and is indexed as usual.
#[derive(Debug, Default)]
pub struct OwnWrites {
    written: Mutex<BTreeMap<PathBuf, blake3::Hash>>,
}

impl OwnWrites {
    pub fn record(&self, path: &Path, bytes: &[u8]) {
        let path = path.canonicalize().unwrap_or_else(|_| path.to_owned());
        self.written.lock().expect("own writes lock").insert(path, blake3::hash(bytes));
    }

    pub fn is_own(&self, path: &Path, bytes: &[u8]) -> bool {
        let written = self.written.lock().expect("own writes lock");
        let path = path.canonicalize().unwrap_or_else(|_| path.to_owned());
        written.get(&path).is_some_and(|hash| *hash == blake3::hash(bytes))
    }
}

/// A folder ready to watch: canonical root and the name stored as the
/// documents' `source_root`.
#[derive(Debug, Clone)]
struct Folder {
    root: PathBuf,
    name: String,
    project: String,
}

/// Watches the configured folders until the future is dropped.
pub async fn watch(knowledge: KnowledgeBase, config: WatchConfig, stats: Arc<WatchStats>) -> Result<(), Error> {
    if config.folders.is_empty() {
        return Ok(());
    }
    let folders = resolve(&config.folders)?;
    let (sender, mut receiver) = tokio::sync::mpsc::channel::<DebounceEventResult>(64);
    let mut debouncer =
        new_debouncer(Duration::from_millis(config.debounce_ms), move |result| drop(sender.blocking_send(result)))
            .map_err(|error| Error::Unavailable(format!("cannot watch folders: {error}")))?;
    for folder in &folders {
        debouncer
            .watcher()
            .watch(&folder.root, RecursiveMode::Recursive)
            .map_err(|error| Error::Unavailable(format!("cannot watch {}: {error}", folder.root.display())))?;
        tracing::info!(folder = %folder.root.display(), project = folder.project, "watching markdown folder");
    }
    let indexer = Indexer { knowledge, max_file_bytes: config.max_file_bytes, stats };
    let mut retry: BTreeSet<PathBuf> = BTreeSet::new();
    let mut rescan = tokio::time::interval(Duration::from_secs(config.rescan_secs.max(1)));
    let mut retry_tick = tokio::time::interval(Duration::from_secs(5));
    loop {
        tokio::select! {
            _ = rescan.tick() => {
                for folder in &folders {
                    indexer.reconcile(folder, &mut retry).await;
                }
                indexer.stats.reconciled.fetch_add(1, Ordering::Relaxed);
            }
            _ = retry_tick.tick(), if !retry.is_empty() => {
                let paths = std::mem::take(&mut retry);
                indexer.changed(&folders, paths, &mut retry).await;
            }
            events = receiver.recv() => match events {
                Some(Ok(events)) => {
                    let paths = events.into_iter().map(|event| event.path).collect();
                    indexer.changed(&folders, paths, &mut retry).await;
                }
                Some(Err(error)) => {
                    // Typically the kernel's event queue overflowed: only a
                    // full rescan is sure to catch up.
                    tracing::warn!(%error, "folder watch error; rescanning");
                    rescan.reset_immediately();
                }
                None => return Err(Error::Unavailable("the folder watcher stopped".into())),
            },
        }
    }
}

/// Creates missing folders and canonicalizes them; two folders may not
/// overlap (a file would belong to both).
fn resolve(configured: &[WatchedFolder]) -> Result<Vec<Folder>, Error> {
    let mut folders: Vec<Folder> = Vec::with_capacity(configured.len());
    for folder in configured {
        let (root, name) = resolve_folder(&folder.path)?;
        if let Some(other) = folders.iter().find(|other| other.root.starts_with(&root) || root.starts_with(&other.root))
        {
            return Err(Error::Unavailable(format!(
                "watched folders {} and {} overlap",
                other.root.display(),
                root.display()
            )));
        }
        folders.push(Folder { root, name, project: folder.project.clone() });
    }
    Ok(folders)
}

/// The document path of `path` under `root`: relative, `/`-separated.
/// `None` for the root itself, hidden entries and non-UTF-8 names.
fn relative(root: &Path, path: &Path) -> Option<String> {
    let parts: Vec<&str> =
        path.strip_prefix(root).ok()?.components().map(|part| part.as_os_str().to_str()).collect::<Option<_>>()?;
    if parts.is_empty() || parts.iter().any(|part| part.starts_with('.')) {
        return None;
    }
    Some(parts.join("/"))
}

fn is_markdown(path: &Path) -> bool {
    path.extension().is_some_and(|extension| extension.eq_ignore_ascii_case("md"))
}

struct Indexer {
    knowledge: KnowledgeBase,
    max_file_bytes: usize,
    stats: Arc<WatchStats>,
}

/// What happened to one file.
enum Outcome {
    Indexed,
    Unchanged,
    Skipped,
    /// The database failed, or the file changed while it was indexed: try
    /// again later.
    Retry,
}

impl Indexer {
    /// Brings the index in line with what is at each path now.
    async fn changed(&self, folders: &[Folder], paths: BTreeSet<PathBuf>, retry: &mut BTreeSet<PathBuf>) {
        for path in paths {
            let Some(folder) = folders.iter().find(|folder| path.starts_with(&folder.root)) else { continue };
            let Some(relative_path) = relative(&folder.root, &path) else { continue };
            let outcome = match tokio::fs::metadata(&path).await {
                Ok(metadata) if metadata.is_dir() => {
                    self.index_tree(folder, &path, retry).await;
                    continue;
                }
                Ok(_) if is_markdown(&path) => self.index_file(folder, &path, &relative_path).await,
                Ok(_) => continue,
                Err(error) if error.kind() == std::io::ErrorKind::NotFound => self.remove(folder, &relative_path).await,
                Err(error) => {
                    tracing::warn!(%error, path = %path.display(), "cannot read; skipped");
                    Outcome::Skipped
                }
            };
            if matches!(outcome, Outcome::Retry) {
                retry.insert(path);
            }
        }
    }

    /// Indexes every markdown file under `root` and removes the indexed
    /// documents whose files are gone.
    async fn reconcile(&self, folder: &Folder, retry: &mut BTreeSet<PathBuf>) {
        let on_disk = self.index_tree(folder, &folder.root, retry).await;
        match self.knowledge.document_paths(&folder.project, &folder.name).await {
            Ok(indexed) => {
                for gone in indexed.into_iter().filter(|path| !on_disk.contains(path)) {
                    if matches!(self.remove(folder, &gone).await, Outcome::Retry) {
                        retry.insert(folder.root.join(&gone));
                    }
                }
            }
            Err(error) => tracing::warn!(%error, folder = folder.name, "cannot list indexed documents; next rescan"),
        }
    }

    /// Indexes the markdown files under `directory`; returns their paths.
    async fn index_tree(&self, folder: &Folder, directory: &Path, retry: &mut BTreeSet<PathBuf>) -> BTreeSet<String> {
        let files = {
            let (root, directory) = (folder.root.clone(), directory.to_owned());
            tokio::task::spawn_blocking(move || markdown_files(&root, &directory)).await.unwrap_or_default()
        };
        for (path, relative_path) in &files {
            if matches!(self.index_file(folder, path, relative_path).await, Outcome::Retry) {
                retry.insert(path.clone());
            }
        }
        files.into_iter().map(|(_, relative_path)| relative_path).collect()
    }

    async fn index_file(&self, folder: &Folder, path: &Path, relative_path: &str) -> Outcome {
        let (bytes, modified) = match read_limited(path, self.max_file_bytes).await {
            Ok(read) => read,
            Err(problem) => return self.skip(path, &problem),
        };
        if self.knowledge.own_writes().is_own(path, &bytes) {
            self.stats.unchanged.fetch_add(1, Ordering::Relaxed);
            return Outcome::Unchanged;
        }
        let parsed = match document::parse_bytes(relative_path, &bytes, self.max_file_bytes) {
            Ok(parsed) => parsed,
            Err(error) => return self.skip(path, &error.to_string()),
        };
        let source = DocumentSource {
            project: folder.project.clone(),
            path: relative_path.to_owned(),
            root: Some(folder.name.clone()),
        };
        match self.knowledge.store_watched_document(&ProjectScope::All, &source, parsed, path, &bytes).await {
            // Changed since it was read: its newer version is read again.
            Ok(None) => Outcome::Retry,
            Ok(Some((entry, true))) => {
                self.stats.resolved(path);
                self.stats.indexed.fetch_add(1, Ordering::Relaxed);
                if let Some(lag) = modified.and_then(|modified| modified.elapsed().ok()) {
                    crate::metrics::metrics().watch_lag.record(lag.as_secs_f64(), &[]);
                }
                tracing::info!(path = %path.display(), entry_id = %entry.entry_id, "document indexed");
                Outcome::Indexed
            }
            Ok(Some((_, false))) => {
                self.stats.resolved(path);
                self.stats.unchanged.fetch_add(1, Ordering::Relaxed);
                Outcome::Unchanged
            }
            Err(Error::InvalidArgument { field, reason }) => self.skip(path, &format!("{field}: {reason}")),
            Err(Error::AlreadyExists(reason)) => self.skip(path, &reason),
            Err(error) => {
                tracing::warn!(%error, path = %path.display(), "indexing failed; retrying");
                Outcome::Retry
            }
        }
    }

    async fn remove(&self, folder: &Folder, relative_path: &str) -> Outcome {
        self.stats.resolved(&folder.root.join(relative_path));
        match self
            .knowledge
            .remove_documents(&ProjectScope::All, &folder.project, Some(&folder.name), relative_path)
            .await
        {
            Ok(0) => Outcome::Unchanged,
            Ok(removed) => {
                self.stats.removed.fetch_add(removed, Ordering::Relaxed);
                tracing::info!(path = relative_path, folder = folder.name, removed, "documents removed");
                Outcome::Indexed
            }
            Err(error) => {
                tracing::warn!(%error, path = relative_path, "removing failed; retrying");
                Outcome::Retry
            }
        }
    }

    fn skip(&self, path: &Path, problem: &str) -> Outcome {
        self.stats.skipped.fetch_add(1, Ordering::Relaxed);
        self.stats.problems.lock().expect("problems lock").insert(path.to_owned(), problem.to_owned());
        tracing::warn!(path = %path.display(), problem, "document skipped");
        Outcome::Skipped
    }
}

/// Reads a file unless it is larger than `max_bytes` (checked before
/// reading, so a huge file costs nothing), with its modification time.
async fn read_limited(path: &Path, max_bytes: usize) -> Result<(Vec<u8>, Option<std::time::SystemTime>), String> {
    let metadata = tokio::fs::metadata(path).await.map_err(|error| format!("cannot read: {error}"))?;
    if metadata.len() > max_bytes as u64 {
        return Err(DocumentError::TooLarge { bytes: metadata.len() as usize, limit: max_bytes }.to_string());
    }
    let bytes = tokio::fs::read(path).await.map_err(|error| format!("cannot read: {error}"))?;
    Ok((bytes, metadata.modified().ok()))
}

/// The markdown files under `directory` (not following links, skipping
/// hidden entries), with their document paths under `root`.
fn markdown_files(root: &Path, directory: &Path) -> Vec<(PathBuf, String)> {
    walkdir::WalkDir::new(directory)
        .follow_links(false)
        .into_iter()
        .filter_entry(|entry| entry.depth() == 0 || !entry.file_name().to_string_lossy().starts_with('.'))
        .filter_map(|entry| match entry {
            Ok(entry) => Some(entry),
            Err(error) => {
                tracing::warn!(%error, "cannot walk part of a watched folder");
                None
            }
        })
        .filter(|entry| entry.file_type().is_file() && is_markdown(entry.path()))
        .filter_map(|entry| {
            let relative_path = relative(root, entry.path());
            if relative_path.is_none() {
                tracing::warn!(path = %entry.path().display(), "not a UTF-8 file name; skipped");
            }
            Some((entry.path().to_owned(), relative_path?))
        })
        .collect()
}
