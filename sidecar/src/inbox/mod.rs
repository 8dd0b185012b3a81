//! The inbox: a file of JSON lines the sidecar tails, for agents and shell
//! hooks that can only append a line.
//!
//! # Lines
//! One JSON object per line with the fields of `lore.v1.Action` in
//! snake_case: `project`, `action_type` and `outcome` (`success`, `failure`,
//! `blocked`, `in_progress`) are required; `occurred_at` is RFC 3339;
//! `context` is an object. A line that is not valid UTF-8, not such an
//! object, or that the local ActionService would refuse is written to
//! `inbox-rejects.jsonl` in the spool directory with the reason (secrets in
//! it redacted) and the tail goes on. Blank lines are skipped.
//!
//! # Position
//! The tail remembers the file (device and inode, so a renamed file is the
//! same file) and the offset of the next line. Every action read from the
//! inbox is spooled with the position after its line, and `inbox.position`
//! is replaced after the append. At start the later of the two wins (the
//! file names the last spool record it knows of), so a crash between the
//! append and the position write neither reads a line twice nor skips one.
//! Rejected lines are written (and synced) before the append: a spool record
//! after a rejected line moves the position past it, so a crash in between
//! may repeat a reject but never lose one.
//! The spool keeps its newest segment across a restart even when the server
//! acknowledged all of it, and the sidecar ships only after the tail has
//! recovered, so records acknowledged just before a crash still count.
//! The one window left: within the running process, other writes roll the
//! spool over to a new segment and the server acknowledges the one holding
//! the last inbox record before the position file is written, and the
//! process dies right then.
//!
//! # Files
//! - A last line without its newline is still being written: it is waited
//!   for, never rejected.
//! - Rotation (the path now names another file, or none): the old file is
//!   read until it has stopped growing for a grace period (its writer may
//!   still append to it), its unterminated last line then counts as
//!   complete, and only then the new file is read: order is kept.
//! - Rotated while the sidecar was down: the old file is found by its
//!   identity in the inbox's directory and read to its end first.
//! - Truncation (the file is shorter than the offset): read again from 0.
//! - A line longer than the limit is rejected (its head kept in the rejects
//!   file) and skipped to its newline.
//!
//! The tail runs on a thread of its own (file reads block) and is woken by
//! `notify` events on the inbox's directory, with a poll as the fallback
//! for file systems that do not report changes.

use std::fs::{self, File};
use std::io::{self, Write as _};
use std::os::unix::fs::{FileExt as _, MetadataExt as _};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use notify::Watcher as _;
use serde::Deserialize;

use lore_proto::v1 as proto;
use lore_sanitize::Sanitizer;

use lore_spool::entry::{InboxMark, InboxPosition, SpoolEntry, Write};
use lore_spool::{Spool, SpoolError, acked};

pub const POSITION_FILE: &str = "inbox.position";
pub const REJECTS_FILE: &str = "inbox-rejects.jsonl";
/// Lines per spool append: a long backlog goes in bounded steps.
const LINES_PER_APPEND: usize = 1000;
/// How much of a rejected line the rejects file keeps.
const REJECTED_LINE_KEPT: usize = 4096;

#[derive(Debug, Clone)]
pub struct InboxConfig {
    /// The file to tail.
    pub path: PathBuf,
    /// Where the position and the rejects live (the spool directory).
    pub state_dir: PathBuf,
    /// How often the file is checked without a change notification.
    pub poll_interval: Duration,
    /// How long a rotated file's unterminated last line may still grow.
    pub rotated_grace: Duration,
    /// Longest line accepted, in bytes.
    pub max_line_bytes: usize,
}

impl InboxConfig {
    pub fn new(path: impl Into<PathBuf>, state_dir: impl Into<PathBuf>) -> Self {
        Self {
            path: path.into(),
            state_dir: state_dir.into(),
            poll_interval: Duration::from_millis(250),
            rotated_grace: Duration::from_secs(2),
            max_line_bytes: 1024 * 1024,
        }
    }
}

/// What the tail has done since start.
#[derive(Debug, Default)]
pub struct InboxStats {
    pub accepted: AtomicU64,
    pub rejected: AtomicU64,
}

/// The running tail; dropping it stops the thread after its current step.
pub struct InboxTail {
    wake: mpsc::Sender<Wake>,
    thread: Option<JoinHandle<()>>,
    // Kept for its lifetime: dropping it ends the notifications.
    _watcher: Option<notify::RecommendedWatcher>,
}

enum Wake {
    Changed,
    Stop,
}

impl InboxTail {
    /// Recovers the position and starts tailing. Must be called from within
    /// a tokio runtime (spool appends are awaited on it).
    pub fn start(
        config: InboxConfig,
        spool: Arc<Spool>,
        sanitizer: Sanitizer,
        stats: Arc<InboxStats>,
    ) -> io::Result<Self> {
        let directory = config.path.parent().filter(|parent| !parent.as_os_str().is_empty()).unwrap_or(Path::new("."));
        fs::create_dir_all(directory)?;
        let saved = recover_position(&config.state_dir, &spool)?;
        let (wake, woken) = mpsc::channel();
        let watcher = watch_directory(directory, wake.clone());
        let runtime = tokio::runtime::Handle::current();
        let mut tail = Tail::new(config, saved, spool, sanitizer, stats, runtime);
        let thread = std::thread::Builder::new().name("lore-inbox".into()).spawn(move || tail.run(&woken))?;
        Ok(Self { wake, thread: Some(thread), _watcher: watcher })
    }

    /// Stops the tail and waits for its thread.
    pub fn stop(mut self) {
        self.stop_thread();
    }

    fn stop_thread(&mut self) {
        let _ = self.wake.send(Wake::Stop);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for InboxTail {
    fn drop(&mut self) {
        self.stop_thread();
    }
}

/// Watches the directory rather than the file: the file may not exist yet
/// and is replaced on rotation. Without notifications the poll still works.
fn watch_directory(directory: &Path, wake: mpsc::Sender<Wake>) -> Option<notify::RecommendedWatcher> {
    let handler = move |event: notify::Result<notify::Event>| {
        if event.is_ok() {
            let _ = wake.send(Wake::Changed);
        }
    };
    let watched = notify::recommended_watcher(handler)
        .and_then(|mut watcher| watcher.watch(directory, notify::RecursiveMode::NonRecursive).map(|()| watcher));
    match watched {
        Ok(watcher) => Some(watcher),
        Err(error) => {
            tracing::warn!(%error, directory = %directory.display(), "no change notifications for the inbox; polling");
            None
        }
    }
}

/// The position file: the position and the last spool record it covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, Deserialize)]
struct SavedPosition {
    #[serde(flatten)]
    position: InboxPosition,
    /// The id of the last spooled inbox record at the time it was written.
    record_id: u64,
}

/// The later of the position file and the last inbox record in the spool.
fn recover_position(state_dir: &Path, spool: &Spool) -> io::Result<Option<SavedPosition>> {
    let from_file = match fs::read(state_dir.join(POSITION_FILE)) {
        Ok(bytes) => match serde_json::from_slice::<SavedPosition>(&bytes) {
            Ok(saved) => Some(saved),
            Err(error) => {
                // Replaced atomically, so this is damage from outside: the
                // spool still knows the position when it holds inbox records.
                tracing::error!(%error, "inbox position file is damaged; using the spool's");
                None
            }
        },
        Err(error) if error.kind() == io::ErrorKind::NotFound => None,
        Err(error) => return Err(error),
    };
    let mut reader = spool.reader();
    reader.rewind(from_file.map_or(0, |saved| saved.record_id));
    let mut latest = from_file;
    loop {
        let records = reader.read_batch(4096, 16 * 1024 * 1024)?;
        if records.is_empty() {
            break;
        }
        for record in records {
            if let Ok(InboxMark { inbox: Some(position) }) = InboxMark::decode(&record.payload)
                && latest.is_none_or(|saved| record.id > saved.record_id)
            {
                latest = Some(SavedPosition { position, record_id: record.id });
            }
        }
    }
    Ok(latest)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FileId {
    device: u64,
    inode: u64,
}

impl FileId {
    fn of(metadata: &fs::Metadata) -> Self {
        Self { device: metadata.dev(), inode: metadata.ino() }
    }

    fn at(&self, offset: u64) -> InboxPosition {
        InboxPosition { device: self.device, inode: self.inode, offset }
    }

    fn of_position(position: &InboxPosition) -> Self {
        Self { device: position.device, inode: position.inode }
    }

    /// How far into this file `position` is: its offset when it names this
    /// file, else 0.
    fn offset_of(&self, position: Option<InboxPosition>) -> u64 {
        position.filter(|position| Self::of_position(position) == *self).map_or(0, |position| position.offset)
    }
}

/// The file being read.
struct OpenFile {
    file: File,
    id: FileId,
    /// Start of the next unread line.
    offset: u64,
    /// Inside a line over the limit: skip to its newline.
    skipping: bool,
    /// The file's length when last looked at, and since when it has had it.
    unchanged: Option<(u64, Instant)>,
}

/// One line's outcome, ready to commit.
enum Line {
    Accepted(Box<proto::Action>),
    Rejected { reason: String, text: String },
    Blank,
}

struct Tail {
    config: InboxConfig,
    saved: Option<SavedPosition>,
    open: Option<OpenFile>,
    spool: Arc<Spool>,
    sanitizer: Sanitizer,
    stats: Arc<InboxStats>,
    runtime: tokio::runtime::Handle,
    /// Set while the spool refuses appends, to log that once.
    spool_full: bool,
    /// The file and offset up to which rejects are written, so a commit cut
    /// short by a full spool does not write them again when it retries.
    rejects_written: Option<InboxPosition>,
}

impl Tail {
    fn new(
        config: InboxConfig,
        saved: Option<SavedPosition>,
        spool: Arc<Spool>,
        sanitizer: Sanitizer,
        stats: Arc<InboxStats>,
        runtime: tokio::runtime::Handle,
    ) -> Self {
        Self { config, saved, open: None, spool, sanitizer, stats, runtime, spool_full: false, rejects_written: None }
    }

    fn run(&mut self, woken: &mpsc::Receiver<Wake>) {
        self.open_rotated_while_down();
        loop {
            if let Err(error) = self.step() {
                tracing::error!(%error, path = %self.config.path.display(), "inbox tail failed; retrying");
                self.open = None;
            }
            match woken.recv_timeout(self.config.poll_interval) {
                Ok(Wake::Stop) | Err(RecvTimeoutError::Disconnected) => return,
                Ok(Wake::Changed) | Err(RecvTimeoutError::Timeout) => {
                    // One step reads everything that is there: skip the
                    // wake-ups that piled up meanwhile.
                    while let Ok(wake) = woken.try_recv() {
                        if matches!(wake, Wake::Stop) {
                            return;
                        }
                    }
                }
            }
        }
    }

    /// When the saved file is no longer at the path, it was rotated while
    /// the sidecar was down: find it in the same directory by its identity.
    fn open_rotated_while_down(&mut self) {
        let Some(saved) = self.saved else { return };
        let saved_id = FileId::of_position(&saved.position);
        let at_path = fs::metadata(&self.config.path).ok().map(|metadata| FileId::of(&metadata));
        if at_path == Some(saved_id) {
            return;
        }
        let directory =
            self.config.path.parent().filter(|parent| !parent.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let Ok(entries) = fs::read_dir(directory) else { return };
        for entry in entries.flatten() {
            let Ok(metadata) = entry.metadata() else { continue };
            if metadata.is_file() && FileId::of(&metadata) == saved_id {
                tracing::info!(file = %entry.path().display(), "reading the rest of the rotated inbox file first");
                if let Ok(file) = File::open(entry.path()) {
                    self.open = Some(OpenFile::new(file, saved_id, saved.position.offset));
                }
                return;
            }
        }
        tracing::warn!(
            path = %self.config.path.display(),
            "the inbox file read before the restart is gone; starting on the new one"
        );
    }

    /// Reads and commits everything complete in the file, following a
    /// rotation to the new file.
    fn step(&mut self) -> io::Result<()> {
        loop {
            if self.open.is_none() && !self.open_path()? {
                return Ok(());
            }
            let open = self.open.as_mut().expect("opened above");
            let length = open.file.metadata()?.len();
            if length < open.offset {
                tracing::warn!(path = %self.config.path.display(), "inbox truncated; reading from the start");
                open.offset = 0;
                open.skipping = false;
                open.unchanged = None;
                self.rejects_written = None;
            }
            let rotated = match fs::metadata(&self.config.path) {
                Ok(metadata) => FileId::of(&metadata) != open.id,
                Err(error) if error.kind() == io::ErrorKind::NotFound => true,
                Err(error) => return Err(error),
            };
            // A rotated file may still grow (its writer has it open): it is
            // done once it has stopped growing for the grace period.
            let finished = rotated && open.unchanged_for(length) >= self.config.rotated_grace;
            let start = open.offset;
            let (lines, end) = read_lines(open, length, self.config.max_line_bytes, finished, &self.sanitizer)?;
            let Some(committed) = self.commit(&lines, end)? else {
                return Ok(());
            };
            if committed < length {
                if committed > start {
                    continue;
                }
                // An unterminated last line: wait for the rest.
                return Ok(());
            }
            if !finished {
                return Ok(());
            }
            tracing::info!(path = %self.config.path.display(), "rotated inbox file finished; following the new one");
            self.open = None;
        }
    }

    /// Opens the file at the path, at the saved offset when it is the saved
    /// file. False when there is no file yet.
    fn open_path(&mut self) -> io::Result<bool> {
        let file = match File::open(&self.config.path) {
            Ok(file) => file,
            Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(false),
            Err(error) => return Err(error),
        };
        let id = FileId::of(&file.metadata()?);
        let offset = id.offset_of(self.saved.map(|saved| saved.position));
        self.open = Some(OpenFile::new(file, id, offset));
        Ok(true)
    }

    /// Writes the rejected lines, spools the accepted ones and moves the
    /// position to `end`, in that order. Returns how far it got: when the
    /// spool is full it commits the first lines that fit, or nothing (the
    /// rest is read again later).
    fn commit(&mut self, lines: &[(u64, Line)], end: u64) -> io::Result<Option<u64>> {
        let id = self.open.as_ref().expect("commit on an open file").id;
        let mut entries = Vec::new();
        let mut rejects = Vec::new();
        for (line_end, line) in lines {
            match line {
                Line::Accepted(action) => {
                    let mut entry = SpoolEntry::new(Write::Action(action.as_ref().clone()));
                    entry.inbox = Some(id.at(*line_end));
                    entries.push(entry.encode());
                }
                Line::Rejected { reason, text } => rejects.push((*line_end, reason, text)),
                Line::Blank => {}
            }
        }
        let accepted = entries.len() as u64;
        self.write_rejects(id, &rejects)?;
        let mut record_id = self.saved.map_or(0, |saved| saved.record_id);
        if !entries.is_empty() {
            match self.runtime.block_on(self.spool.append(entries)) {
                Ok(ids) => record_id = ids.last().copied().unwrap_or(record_id),
                Err(SpoolError::Full { .. }) if lines.len() > 1 => {
                    let half = lines.len() / 2;
                    return self.commit(&lines[..half], lines[half - 1].0);
                }
                Err(SpoolError::Full { used, budget }) => {
                    if !self.spool_full {
                        tracing::warn!(used, budget, "spool full: the inbox waits until it has room");
                    }
                    self.spool_full = true;
                    return Ok(None);
                }
                Err(error) => return Err(io::Error::other(error)),
            }
        }
        self.spool_full = false;
        self.stats.accepted.fetch_add(accepted, Ordering::Relaxed);
        let saved = SavedPosition { position: id.at(end), record_id };
        if self.saved != Some(saved) {
            let bytes = serde_json::to_vec(&saved).map_err(io::Error::other)?;
            acked::replace_file(&self.config.state_dir, POSITION_FILE, &bytes)?;
            self.saved = Some(saved);
        }
        self.open.as_mut().expect("commit on an open file").offset = end;
        Ok(Some(end))
    }

    /// Appends the rejects not written yet to the rejects file, syncs it and
    /// counts them.
    fn write_rejects(&mut self, id: FileId, rejects: &[(u64, &String, &String)]) -> io::Result<()> {
        let written_to = id.offset_of(self.rejects_written);
        let fresh: Vec<_> = rejects.iter().filter(|(line_end, ..)| *line_end > written_to).collect();
        let Some((last_end, ..)) = fresh.last() else {
            return Ok(());
        };
        let mut out = Vec::new();
        for (line_end, reason, text) in &fresh {
            tracing::warn!(reason, "inbox line rejected");
            let record = serde_json::json!({
                "rejected_at": chrono::Utc::now().to_rfc3339(),
                "file": self.config.path.display().to_string(),
                "line_end_offset": line_end,
                "reason": reason,
                "line": self.sanitizer.sanitize_text(text).0,
            });
            serde_json::to_writer(&mut out, &record).map_err(io::Error::other)?;
            out.push(b'\n');
        }
        let mut file =
            lore_spool::open_options().create(true).append(true).open(self.config.state_dir.join(REJECTS_FILE))?;
        file.write_all(&out)?;
        file.sync_data()?;
        self.rejects_written = Some(id.at(*last_end));
        self.stats.rejected.fetch_add(fresh.len() as u64, Ordering::Relaxed);
        Ok(())
    }
}

impl OpenFile {
    fn new(file: File, id: FileId, offset: u64) -> Self {
        Self { file, id, offset, skipping: false, unchanged: None }
    }

    /// How long the file has had this length.
    fn unchanged_for(&mut self, length: u64) -> Duration {
        match self.unchanged {
            Some((seen, since)) if seen == length => since.elapsed(),
            _ => {
                self.unchanged = Some((length, Instant::now()));
                Duration::ZERO
            }
        }
    }
}

/// Reads the complete lines from the file's offset (a window of about two
/// of the longest lines). Returns each line's end offset and outcome, and
/// the offset after the last byte consumed. With `finished`, an
/// unterminated last line counts as complete.
fn read_lines(
    open: &mut OpenFile,
    length: u64,
    max_line: usize,
    finished: bool,
    sanitizer: &Sanitizer,
) -> io::Result<(Vec<(u64, Line)>, u64)> {
    let window = (length - open.offset).min(2 * max_line as u64 + 2) as usize;
    let mut buffer = vec![0; window];
    let read = read_full_at(&open.file, &mut buffer, open.offset)?;
    buffer.truncate(read);
    let mut lines = Vec::new();
    let mut consumed = 0;
    while consumed < buffer.len() && lines.len() < LINES_PER_APPEND {
        let rest = &buffer[consumed..];
        let newline = rest.iter().position(|&byte| byte == b'\n');
        if open.skipping {
            // The rest of a line already rejected as too long.
            match newline {
                Some(at) => {
                    consumed += at + 1;
                    open.skipping = false;
                }
                None => consumed = buffer.len(),
            }
            continue;
        }
        let (line, used) = match newline {
            Some(at) => (&rest[..at], at + 1),
            None if finished => (rest, rest.len()),
            None if rest.len() > max_line => {
                // Over the limit and no newline yet: reject what is here
                // and skip the rest of the line when it comes.
                open.skipping = true;
                (&rest[..max_line], max_line)
            }
            None => break,
        };
        consumed += used;
        let line_end = open.offset + consumed as u64;
        let outcome = if line.len() > max_line || open.skipping {
            Line::Rejected {
                reason: format!("line longer than {max_line} bytes"),
                text: String::from_utf8_lossy(&line[..line.len().min(REJECTED_LINE_KEPT)]).into_owned(),
            }
        } else {
            parse_line(line, sanitizer)
        };
        lines.push((line_end, outcome));
    }
    Ok((lines, open.offset + consumed as u64))
}

fn read_full_at(file: &File, buffer: &mut [u8], offset: u64) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buffer.len() {
        match file.read_at(&mut buffer[filled..], offset + filled as u64)? {
            0 => break,
            read => filled += read,
        }
    }
    Ok(filled)
}

/// One inbox line as agents write it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct InboxLine {
    #[serde(default)]
    action_id: String,
    #[serde(default)]
    session_id: String,
    project: String,
    #[serde(default)]
    agent_id: String,
    action_type: String,
    #[serde(default)]
    category: String,
    #[serde(default)]
    context: Option<serde_json::Map<String, serde_json::Value>>,
    outcome: String,
    #[serde(default)]
    error: String,
    #[serde(default)]
    duration_ms: u64,
    #[serde(default)]
    parent_action_id: String,
    #[serde(default)]
    epic_id: String,
    #[serde(default)]
    issue_id: String,
    #[serde(default)]
    occurred_at: Option<chrono::DateTime<chrono::Utc>>,
}

/// One line, checked and redacted as the local ActionService would.
fn parse_line(bytes: &[u8], sanitizer: &Sanitizer) -> Line {
    let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
    let rejected = |reason: String| Line::Rejected {
        reason,
        text: String::from_utf8_lossy(&bytes[..bytes.len().min(REJECTED_LINE_KEPT)]).into_owned(),
    };
    let text = match std::str::from_utf8(bytes) {
        Ok(text) => text,
        Err(error) => return rejected(format!("not UTF-8: {error}")),
    };
    if text.trim().is_empty() {
        return Line::Blank;
    }
    let line: InboxLine = match serde_json::from_str(text) {
        Ok(line) => line,
        Err(error) => return rejected(format!("not an action: {error}")),
    };
    let prepared = line.into_action().and_then(|mut action| {
        crate::api::prepare_action(sanitizer, &mut action)?;
        Ok(action)
    });
    match prepared {
        Ok(action) => Line::Accepted(Box::new(action)),
        Err(reason) => rejected(reason),
    }
}

impl InboxLine {
    fn into_action(self) -> Result<proto::Action, String> {
        let outcome = outcome_from_name(&self.outcome).ok_or_else(|| {
            format!("outcome: {:?} is not one of success, failure, blocked, in_progress", self.outcome)
        })?;
        Ok(proto::Action {
            action_id: self.action_id,
            session_id: self.session_id,
            project: self.project,
            agent_id: self.agent_id,
            action_type: self.action_type,
            category: self.category,
            context: self.context.map(|context| lore_proto::json::to_struct(&serde_json::Value::Object(context))),
            outcome: outcome as i32,
            error: self.error,
            duration_ms: self.duration_ms,
            parent_action_id: self.parent_action_id,
            epic_id: self.epic_id,
            issue_id: self.issue_id,
            occurred_at: self.occurred_at.map(|at| prost_types::Timestamp {
                seconds: at.timestamp(),
                nanos: at.timestamp_subsec_nanos() as i32,
            }),
            ..Default::default()
        })
    }
}

/// `success` or `OUTCOME_SUCCESS`, any case.
fn outcome_from_name(name: &str) -> Option<proto::Outcome> {
    let upper = name.trim().to_ascii_uppercase();
    let full = if upper.starts_with("OUTCOME_") { upper } else { format!("OUTCOME_{upper}") };
    proto::Outcome::from_str_name(&full).filter(|outcome| *outcome != proto::Outcome::Unspecified)
}

#[cfg(test)]
mod tests;
