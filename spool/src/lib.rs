//! The spool: actions on local disk until the server has acknowledged them.
//!
//! # On disk
//! A directory (mode 0700) of files (mode 0600):
//! - segment files `<first_id:020>.seg`, append-only, each a sequence of
//!   records (see [`record`]: length, CRC32C, id, append time, payload). A
//!   segment is closed once it reaches `max_segment_bytes`; the writer then
//!   opens the next one. A new spool process starts a new segment, unless
//!   its config says to continue the last one (`continue_last_segment`:
//!   a spool opened for one append at a time, as the hooks' outbox is,
//!   would otherwise leave a file per append).
//! - `acked.ledger`: the highest record id the server has acknowledged (see
//!   [`acked`]), replaced atomically.
//! - `corrupt/`: bytes recovery found damaged, kept for inspection.
//!
//! # Invariants
//! - Record ids are assigned by the one writer, strictly increasing, never
//!   reused (a new process continues after the highest id on disk).
//! - An append is answered only after its bytes are durable by the fsync
//!   policy: `always` and `batch(ms)` fsync before answering (`batch` waits
//!   up to its window to share the fsync with more appends), `never` answers
//!   once the bytes are in the OS.
//! - A segment is deleted only when every record in it is acknowledged and
//!   a later segment exists (the writer is done with it, and the newest
//!   records stay readable across a restart).
//! - Recovery at open keeps every record whose checksum holds: a torn last
//!   record (a crash mid-write) is truncated; a damaged record in the middle
//!   is moved to `corrupt/`, counted and logged, and the records after it are
//!   kept. Nothing is ever silently dropped.
//! - The disk budget bounds the segments' total size. When an append would
//!   exceed it, the spool refuses it (default) or, with `drop_oldest`, deletes
//!   the oldest closed segments and counts the records lost.

pub mod acked;
pub mod entry;
pub mod record;

use std::collections::VecDeque;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write as _};
use std::os::unix::fs::{FileExt as _, OpenOptionsExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use tokio::sync::{oneshot, watch};

use record::{HEADER_LEN, MAX_PAYLOAD_LEN, RecordStatus};

/// Spool files are readable by their owner only: they hold agent actions.
pub const SPOOL_FILE_MODE: u32 = 0o600;
const SPOOL_DIR_MODE: u32 = 0o700;
const SEGMENT_EXTENSION: &str = "seg";
const CORRUPT_DIR: &str = "corrupt";

/// Large enough that rollover is rare, small enough that an acked segment
/// frees its space soon.
#[cfg(not(test))]
pub const DEFAULT_MAX_SEGMENT_BYTES: u64 = 8 * 1024 * 1024;
/// Tests roll over cheaply.
#[cfg(test)]
pub const DEFAULT_MAX_SEGMENT_BYTES: u64 = 4 * 1024;

/// Options that create files readable by their owner only.
pub fn open_options() -> OpenOptions {
    let mut options = OpenOptions::new();
    options.mode(SPOOL_FILE_MODE);
    options
}

/// When an append counts as durable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FsyncPolicy {
    /// fsync before answering; appends that queue up while one fsync runs
    /// share the next (group commit without waiting). The default: it was
    /// the fastest durable policy in `make bench` (docs/BENCHMARKS.md, "Spool
    /// appends per fsync policy"), since batch:<ms>'s window only adds
    /// waiting when every appender is already queued.
    Always,
    /// Collect appends for up to this long, write them, fsync once, answer
    /// them all (group commit).
    Batch(Duration),
    /// Answer once written to the OS; fsync only on rollover and close.
    Never,
}

/// What happens when the disk budget is full.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FullPolicy {
    /// Refuse the append (the agent sees RESOURCE_EXHAUSTED).
    Refuse,
    /// Delete the oldest segments, counting the records lost.
    DropOldest,
}

#[derive(Debug, Clone)]
pub struct SpoolConfig {
    pub dir: PathBuf,
    pub fsync: FsyncPolicy,
    pub max_segment_bytes: u64,
    pub disk_budget_bytes: u64,
    pub when_full: FullPolicy,
    /// Append to the last segment recovery kept (when it has room and its
    /// length is what recovery found valid) instead of starting one.
    pub continue_last_segment: bool,
}

impl SpoolConfig {
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self {
            dir: dir.into(),
            fsync: FsyncPolicy::Always,
            max_segment_bytes: DEFAULT_MAX_SEGMENT_BYTES,
            disk_budget_bytes: 1024 * 1024 * 1024,
            when_full: FullPolicy::Refuse,
            continue_last_segment: false,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SpoolError {
    #[error("spool I/O failed: {0}")]
    Io(#[from] io::Error),
    /// The disk budget is used up and the policy is to refuse.
    #[error("the spool is full ({used} of {budget} bytes)")]
    Full { used: u64, budget: u64 },
    #[error("a record of {0} bytes is larger than the limit")]
    TooLarge(usize),
    #[error("the spool is closed")]
    Closed,
}

/// What recovery found at open.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct RecoveryReport {
    pub segments: usize,
    /// Unacknowledged records kept.
    pub records: u64,
    /// Bytes of a torn last record that were cut off.
    pub torn_bytes_truncated: u64,
    /// Damaged records (or damaged stretches) moved aside.
    pub corrupt_records: u64,
    pub moved_aside: Vec<PathBuf>,
    /// The ledger was unreadable; everything on disk will be replayed.
    pub ledger_damaged: bool,
}

/// A record read back from the spool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpooledRecord {
    pub id: u64,
    /// Microseconds since the epoch.
    pub appended_at: i64,
    pub payload: Vec<u8>,
}

/// Figures for status and metrics.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SpoolStats {
    /// Records written and not yet acknowledged.
    pub unacked_records: u64,
    /// Bytes of the segments on disk.
    pub disk_bytes: u64,
    /// Highest id written, and highest acknowledged.
    pub written_id: u64,
    pub acked_id: u64,
    /// Records deleted unacknowledged by the drop_oldest policy.
    pub dropped_records: u64,
}

#[derive(Debug, Clone)]
struct Segment {
    first_id: u64,
    /// Highest id in the segment; `first_id - 1` while it is empty.
    last_id: u64,
    bytes: u64,
    path: PathBuf,
}

#[derive(Debug)]
struct State {
    segments: VecDeque<Segment>,
    acked: u64,
    dropped: u64,
}

#[derive(Debug)]
struct Shared {
    dir: PathBuf,
    config: SpoolConfig,
    state: Mutex<State>,
    /// The highest id the writer has handed to the OS (readers read up to it).
    written: watch::Sender<u64>,
}

struct Append {
    payloads: Vec<Vec<u8>>,
    reply: oneshot::Sender<Result<Vec<u64>, SpoolError>>,
}

/// A spool directory, open for appending, reading and acknowledging.
pub struct Spool {
    shared: Arc<Shared>,
    commands: Mutex<Option<mpsc::Sender<Append>>>,
    writer: Mutex<Option<JoinHandle<()>>>,
}

fn now_micros() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |since| since.as_micros() as i64)
}

fn segment_path(dir: &Path, first_id: u64) -> PathBuf {
    dir.join(format!("{first_id:020}.{SEGMENT_EXTENSION}"))
}

impl Spool {
    /// Opens (creating if needed) and recovers the spool in `config.dir`.
    /// Blocking: call it from a blocking context.
    pub fn open(config: SpoolConfig) -> Result<(Self, RecoveryReport), SpoolError> {
        let dir = config.dir.clone();
        fs::create_dir_all(&dir)?;
        fs::set_permissions(&dir, fs::Permissions::from_mode(SPOOL_DIR_MODE))?;
        let mut report = RecoveryReport::default();
        let acked = match acked::read(&dir) {
            Ok(acked) => acked,
            Err(error) => {
                tracing::warn!(%error, "spool ledger unreadable: replaying everything on disk (the server deduplicates)");
                report.ledger_damaged = true;
                0
            }
        };
        let mut segments = recover_segments(&dir, acked, &mut report)?;
        // The last run's newest segment stays even when fully acknowledged:
        // a reader of its records (the inbox recovers its position from
        // them) may still need them after a crash.
        remove_acknowledged(&mut segments, acked)?;
        report.segments = segments.len();
        let last_written = segments.back().map_or(acked, |segment| segment.last_id.max(acked));

        let (written, _) = watch::channel(last_written);
        let shared = Arc::new(Shared {
            dir,
            config: config.clone(),
            state: Mutex::new(State { segments, acked, dropped: 0 }),
            written,
        });
        let (commands, receiver) = mpsc::channel();
        let writer_shared = Arc::clone(&shared);
        let writer = std::thread::Builder::new()
            .name("spool-writer".into())
            .spawn(move || Writer::new(writer_shared, last_written + 1).run(&receiver))?;
        let spool = Self { shared, commands: Mutex::new(Some(commands)), writer: Mutex::new(Some(writer)) };
        Ok((spool, report))
    }

    /// Appends records; answers with their ids once they are durable by the
    /// fsync policy.
    pub async fn append(&self, payloads: Vec<Vec<u8>>) -> Result<Vec<u64>, SpoolError> {
        if let Some(payload) = payloads.iter().find(|payload| payload.len() > MAX_PAYLOAD_LEN) {
            return Err(SpoolError::TooLarge(payload.len()));
        }
        let needed: u64 = payloads.iter().map(|payload| (HEADER_LEN + payload.len()) as u64).sum();
        self.make_room(needed)?;
        let (reply, answer) = oneshot::channel();
        let sender = self.commands.lock().expect("spool lock").clone().ok_or(SpoolError::Closed)?;
        sender.send(Append { payloads, reply }).map_err(|_| SpoolError::Closed)?;
        answer.await.map_err(|_| SpoolError::Closed)?
    }

    /// Checks the disk budget for `needed` more bytes, dropping the oldest
    /// closed segments first under the drop_oldest policy.
    fn make_room(&self, needed: u64) -> Result<(), SpoolError> {
        let config = &self.shared.config;
        let mut state = self.shared.state.lock().expect("spool lock");
        loop {
            let used: u64 = state.segments.iter().map(|segment| segment.bytes).sum();
            if used + needed <= config.disk_budget_bytes {
                return Ok(());
            }
            // The active (last) segment is never dropped: the writer owns it.
            if config.when_full == FullPolicy::Refuse || state.segments.len() < 2 {
                return Err(SpoolError::Full { used, budget: config.disk_budget_bytes });
            }
            let oldest = state.segments.pop_front().expect("two segments");
            let lost = (oldest.last_id + 1).saturating_sub(oldest.first_id.max(state.acked + 1));
            state.dropped += lost;
            state.acked = state.acked.max(oldest.last_id);
            tracing::warn!(lost, segment = %oldest.path.display(), "spool full: dropped the oldest segment");
            acked::write(&self.shared.dir, state.acked)?;
            fs::remove_file(&oldest.path)?;
        }
    }

    /// Records that the server acknowledged every record up to `id`, and
    /// deletes the segments that are now fully acknowledged.
    pub fn ack(&self, id: u64) -> Result<(), SpoolError> {
        let mut state = self.shared.state.lock().expect("spool lock");
        if id <= state.acked {
            return Ok(());
        }
        acked::write(&self.shared.dir, id)?;
        state.acked = id;
        remove_acknowledged(&mut state.segments, id)?;
        Ok(())
    }

    /// A reader that starts after the acknowledged records.
    pub fn reader(&self) -> SpoolReader {
        let acked = self.shared.state.lock().expect("spool lock").acked;
        SpoolReader { shared: Arc::clone(&self.shared), next_id: acked + 1, open: None }
    }

    /// Notifies on every write (the value is the highest id written).
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.shared.written.subscribe()
    }

    pub fn stats(&self) -> SpoolStats {
        let state = self.shared.state.lock().expect("spool lock");
        let written_id = *self.shared.written.borrow();
        SpoolStats {
            unacked_records: written_id.saturating_sub(state.acked),
            disk_bytes: state.segments.iter().map(|segment| segment.bytes).sum(),
            written_id,
            acked_id: state.acked,
            dropped_records: state.dropped,
        }
    }

    /// When the oldest unacknowledged record was appended (microseconds
    /// since the epoch), if there is one.
    pub fn oldest_unacked_appended_at(&self) -> Option<i64> {
        let mut reader = self.reader();
        reader.read_batch(1, usize::MAX).ok()?.first().map(|record| record.appended_at)
    }

    /// Stops the writer after it has written and fsynced everything queued.
    pub fn close(&self) {
        self.commands.lock().expect("spool lock").take();
        if let Some(writer) = self.writer.lock().expect("spool lock").take() {
            let _ = writer.join();
        }
    }
}

impl Drop for Spool {
    fn drop(&mut self) {
        self.close();
    }
}

/// The writer thread: owns the active segment.
struct Writer {
    shared: Arc<Shared>,
    next_id: u64,
    file: Option<File>,
    buffer: Vec<u8>,
}

impl Writer {
    fn new(shared: Arc<Shared>, next_id: u64) -> Self {
        Self { shared, next_id, file: None, buffer: Vec::new() }
    }

    fn run(mut self, commands: &mpsc::Receiver<Append>) {
        let policy = self.shared.config.fsync;
        while let Ok(first) = commands.recv() {
            let mut group = vec![first];
            match policy {
                FsyncPolicy::Batch(window) => {
                    let deadline = Instant::now() + window;
                    loop {
                        let left = deadline.saturating_duration_since(Instant::now());
                        match commands.recv_timeout(left) {
                            Ok(next) => group.push(next),
                            Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => break,
                        }
                    }
                }
                FsyncPolicy::Always | FsyncPolicy::Never => group.extend(commands.try_iter()),
            }
            let first_id = self.next_id;
            let result = self.write_group(&group);
            match result {
                Ok(()) => {
                    let mut id = first_id;
                    for append in group {
                        let ids: Vec<u64> = (id..id + append.payloads.len() as u64).collect();
                        id += append.payloads.len() as u64;
                        let _ = append.reply.send(Ok(ids));
                    }
                }
                Err(error) => {
                    tracing::error!(%error, "spool write failed");
                    self.next_id = first_id;
                    let message = error.to_string();
                    for append in group {
                        let _ = append.reply.send(Err(SpoolError::Io(io::Error::other(message.clone()))));
                    }
                }
            }
        }
        if let Some(file) = &self.file
            && let Err(error) = file.sync_data()
        {
            tracing::error!(%error, "spool fsync at close failed");
        }
    }

    /// Writes a group of appends; on failure the active segment is cut back
    /// to where it was, so no partial record stays behind.
    fn write_group(&mut self, group: &[Append]) -> io::Result<()> {
        let policy = self.shared.config.fsync;
        let max_segment_bytes = self.shared.config.max_segment_bytes;
        let appended_at = now_micros();
        self.buffer.clear();
        for payload in group.iter().flat_map(|append| &append.payloads) {
            let record_len = (HEADER_LEN + payload.len()) as u64;
            let active_bytes = self.active_bytes();
            if self.file.is_none() && self.shared.config.continue_last_segment {
                self.continue_last_segment(record_len)?;
            }
            if self.file.is_none()
                || (active_bytes + self.buffer.len() as u64 + record_len > max_segment_bytes
                    && active_bytes + self.buffer.len() as u64 > 0)
            {
                self.flush(policy != FsyncPolicy::Never)?;
                self.start_segment()?;
            }
            record::encode(self.next_id, appended_at, payload, &mut self.buffer);
            self.next_id += 1;
        }
        self.flush(policy != FsyncPolicy::Never)
    }

    /// Opens the last segment for appending when it ends with the record
    /// before the next and has room; otherwise leaves `file` unset, and a
    /// new segment starts.
    fn continue_last_segment(&mut self, record_len: u64) -> io::Result<()> {
        let last = self.shared.state.lock().expect("spool lock").segments.back().cloned();
        let Some(last) = last else { return Ok(()) };
        let fits = last.bytes + record_len <= self.shared.config.max_segment_bytes;
        if last.last_id + 1 != self.next_id || !fits || fs::metadata(&last.path)?.len() != last.bytes {
            return Ok(());
        }
        self.file = Some(open_options().append(true).open(&last.path)?);
        Ok(())
    }

    fn active_bytes(&self) -> u64 {
        self.shared.state.lock().expect("spool lock").segments.back().map_or(0, |segment| segment.bytes)
    }

    /// Writes the buffered records (up to id `self.next_id - 1`) to the
    /// active segment, fsyncs when asked, and publishes them.
    fn flush(&mut self, sync: bool) -> io::Result<()> {
        let Some(file) = &mut self.file else { return Ok(()) };
        if self.buffer.is_empty() {
            return Ok(());
        }
        let length_before = file.metadata()?.len();
        let written = file.write_all(&self.buffer).and_then(|()| if sync { file.sync_data() } else { Ok(()) });
        if let Err(error) = written {
            let _ = file.set_len(length_before);
            return Err(error);
        }
        let last_id = self.next_id - 1;
        {
            let mut state = self.shared.state.lock().expect("spool lock");
            let segment = state.segments.back_mut().expect("an active segment");
            segment.bytes += self.buffer.len() as u64;
            segment.last_id = last_id;
        }
        self.buffer.clear();
        self.shared.written.send_replace(last_id);
        Ok(())
    }

    fn start_segment(&mut self) -> io::Result<()> {
        if let Some(file) = self.file.take() {
            file.sync_data()?;
        }
        let path = segment_path(&self.shared.dir, self.next_id);
        let file = open_options().create_new(true).append(true).open(&path)?;
        File::open(&self.shared.dir)?.sync_all()?;
        self.shared.state.lock().expect("spool lock").segments.push_back(Segment {
            first_id: self.next_id,
            last_id: self.next_id - 1,
            bytes: 0,
            path,
        });
        self.file = Some(file);
        Ok(())
    }
}

/// Reads records in id order, from a position the caller sets.
pub struct SpoolReader {
    shared: Arc<Shared>,
    next_id: u64,
    /// The segment being read: its first id, the file and the offset of the
    /// record `next_id` (once found).
    open: Option<(u64, File, u64)>,
}

/// How much of a segment one read takes at most (beyond one record).
const READ_WINDOW: usize = 256 * 1024;

impl SpoolReader {
    /// Continue after `id` (e.g. the acked id, after a reconnect).
    pub fn rewind(&mut self, after_id: u64) {
        self.next_id = after_id + 1;
        self.open = None;
    }

    /// Up to `max_records` records (and about `max_bytes`) from the current
    /// position that the writer has written. Empty when caught up.
    pub fn read_batch(&mut self, max_records: usize, max_bytes: usize) -> io::Result<Vec<SpooledRecord>> {
        let written = *self.shared.written.borrow();
        let mut records = Vec::new();
        let mut bytes = 0;
        while records.len() < max_records && bytes < max_bytes && self.next_id <= written {
            let Some((segment_first_id, segment_last_id, path)) = self.locate() else { break };
            if self.next_id < segment_first_id {
                // Deleted (acked or dropped) records: continue at what exists.
                self.next_id = segment_first_id;
                self.open = None;
            }
            if self.open.as_ref().is_none_or(|(first_id, _, _)| *first_id != segment_first_id) {
                self.open = Some((segment_first_id, File::open(&path)?, 0));
            }
            let (_, file, offset) = self.open.as_mut().expect("opened above");
            let mut window = vec![0; READ_WINDOW];
            let read = file.read_at(&mut window, *offset)?;
            window.truncate(read);
            let mut position = 0;
            let mut progressed = false;
            while records.len() < max_records && bytes < max_bytes {
                match record::decode(&window[position..]) {
                    RecordStatus::Valid { id, appended_at, payload, len } => {
                        // Not yet published by the writer: stop before it, so
                        // the next read starts at it.
                        if id > written {
                            break;
                        }
                        position += len;
                        progressed = true;
                        if id < self.next_id {
                            continue;
                        }
                        bytes += payload.len();
                        records.push(SpooledRecord { id, appended_at, payload: payload.to_vec() });
                        self.next_id = id + 1;
                    }
                    RecordStatus::Incomplete if position == 0 && read == READ_WINDOW => {
                        // One record larger than the window: read it whole.
                        let mut header = [0; 4];
                        file.read_at(&mut header, *offset)?;
                        let len = HEADER_LEN + u32::from_le_bytes(header) as usize;
                        let mut whole = vec![0; len];
                        file.read_exact_at(&mut whole, *offset)?;
                        window = whole;
                    }
                    RecordStatus::Incomplete => break,
                    RecordStatus::Corrupted => {
                        // Damaged since recovery (the disk, not us): skip to
                        // the next good record and say so.
                        let skip = record::resync(&window[position..], self.next_id.saturating_sub(1))
                            .unwrap_or(window.len() - position);
                        tracing::error!(
                            offset = *offset + position as u64,
                            skipped = skip,
                            "damaged spool record skipped while reading"
                        );
                        position += skip;
                        progressed = true;
                    }
                }
            }
            *offset += position as u64;
            if !progressed {
                // The end of this segment: move on if the records continue
                // in the next one.
                if self.next_id > segment_last_id {
                    self.open = None;
                    continue;
                }
                break;
            }
        }
        Ok(records)
    }

    /// The segment holding `next_id` (or the first one after it).
    fn locate(&self) -> Option<(u64, u64, PathBuf)> {
        let state = self.shared.state.lock().expect("spool lock");
        state
            .segments
            .iter()
            .find(|segment| segment.last_id >= self.next_id)
            .map(|segment| (segment.first_id, segment.last_id, segment.path.clone()))
    }
}

/// Scans the segment files in order, repairing what a crash or a bad disk
/// left, and returns the segments with their id ranges.
/// Deletes the segments whose records are all acknowledged up to `acked`,
/// except the newest: the writer appends to it, and it stays until a later
/// segment exists.
fn remove_acknowledged(segments: &mut VecDeque<Segment>, acked: u64) -> io::Result<()> {
    while segments.len() > 1 && segments.front().is_some_and(|segment| segment.last_id <= acked) {
        let segment = segments.pop_front().expect("front exists");
        fs::remove_file(&segment.path)?;
    }
    Ok(())
}

fn recover_segments(dir: &Path, acked: u64, report: &mut RecoveryReport) -> io::Result<VecDeque<Segment>> {
    let mut paths: Vec<(u64, PathBuf)> = fs::read_dir(dir)?
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|extension| extension == SEGMENT_EXTENSION))
        .filter_map(|path| {
            let first_id = path.file_stem()?.to_str()?.parse::<u64>().ok()?;
            Some((first_id, path))
        })
        .collect();
    paths.sort();
    let mut segments = VecDeque::new();
    let mut last_id = 0_u64;
    let count = paths.len();
    for (index, (first_id, path)) in paths.into_iter().enumerate() {
        let is_last = index + 1 == count;
        let bytes = fs::read(&path)?;
        let mut kept: Vec<u8> = Vec::with_capacity(bytes.len());
        let mut offset = 0;
        let mut damaged = false;
        let mut segment_last = first_id.saturating_sub(1).max(last_id);
        while offset < bytes.len() {
            match record::decode(&bytes[offset..]) {
                RecordStatus::Valid { id, len, .. } if id > segment_last => {
                    kept.extend_from_slice(&bytes[offset..offset + len]);
                    segment_last = id;
                    offset += len;
                    if id > acked {
                        report.records += 1;
                    }
                }
                RecordStatus::Incomplete if is_last => {
                    // A crash during the last write: the caller was never
                    // answered for these bytes.
                    report.torn_bytes_truncated += (bytes.len() - offset) as u64;
                    tracing::warn!(path = %path.display(), bytes = bytes.len() - offset, "spool: cut a torn last record");
                    damaged = true;
                    break;
                }
                RecordStatus::Valid { .. } | RecordStatus::Incomplete | RecordStatus::Corrupted => {
                    let skip = record::resync(&bytes[offset..], segment_last).unwrap_or(bytes.len() - offset);
                    let aside = move_aside(dir, &path, offset, &bytes[offset..offset + skip])?;
                    tracing::error!(path = %path.display(), offset, bytes = skip, aside = %aside.display(), "spool: damaged record moved aside");
                    report.corrupt_records += 1;
                    report.moved_aside.push(aside);
                    damaged = true;
                    offset += skip;
                }
            }
        }
        if damaged {
            let temporary = path.with_extension("repair");
            let mut file = open_options().write(true).create(true).truncate(true).open(&temporary)?;
            file.write_all(&kept)?;
            file.sync_data()?;
            fs::rename(&temporary, &path)?;
            File::open(dir)?.sync_all()?;
        }
        if kept.is_empty() {
            fs::remove_file(&path)?;
            continue;
        }
        last_id = segment_last;
        segments.push_back(Segment { first_id, last_id: segment_last, bytes: kept.len() as u64, path });
    }
    Ok(segments)
}

fn move_aside(dir: &Path, segment: &Path, offset: usize, bytes: &[u8]) -> io::Result<PathBuf> {
    let corrupt_dir = dir.join(CORRUPT_DIR);
    fs::create_dir_all(&corrupt_dir)?;
    let name = segment.file_stem().and_then(|stem| stem.to_str()).unwrap_or("segment");
    let path = corrupt_dir.join(format!("{name}.{offset}.bin"));
    let mut file = open_options().write(true).create(true).truncate(true).open(&path)?;
    file.write_all(bytes)?;
    file.sync_data()?;
    Ok(path)
}

#[cfg(test)]
mod tests;
