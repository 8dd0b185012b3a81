//! The outbox: what hooks and the MCP server wrote while neither the
//! sidecar nor the server answered, kept on this machine until Lore is
//! back. Without it, a failure captured while the server was away was lost,
//! and the next pass counted as a first-time one.
//!
//! # On disk
//! `outbox/` in the state directory is a spool of the sidecar's own format
//! ([`lore_spool`]: checksummed records, a torn tail cut at open), one
//! record per write. `outbox.lock` beside it is held (flock) by the one
//! process appending or draining at a time; the hooks of parallel tool
//! calls take turns. Writes the server refuses for good are written to
//! `outbox-rejects.jsonl` with the reason, so they never block the rest.
//!
//! # Order and exactly once
//! - While the outbox holds anything, a new write goes behind it, never
//!   around it: [`Outbox::is_empty`] is one `stat`, cheap enough for every
//!   tool call.
//! - A drain sends the records in order, acknowledging each in the spool
//!   once the server (or the sidecar, which spools it in turn) has it. Every
//!   write carries its own id (action, session, failure, attempt), so one
//!   sent again after a crash between the answer and the acknowledgement is
//!   stored once.
//! - A drain stops at its deadline or at the first write that cannot go
//!   (Lore away again) and leaves the rest for the next one. Emptied, the
//!   directory is removed.

use std::fs::{self, File};
use std::io::Write as _;
use std::path::PathBuf;
use std::time::Duration;

use lore_proto::auth::AuthChannel;
use lore_spool::entry::{SpoolEntry, Write};
use lore_spool::{FsyncPolicy, Spool, SpoolConfig};
use tokio::time::Instant;

use crate::AgentError;

const DIR: &str = "outbox";
const LOCK_FILE: &str = "outbox.lock";
const REJECTS_FILE: &str = "outbox-rejects.jsonl";
/// An agent VM cut off for a week writes far less than this; past it the
/// oldest writes go (counted in the log), not the agent's disk.
const DISK_BUDGET_BYTES: u64 = 256 * 1024 * 1024;

/// The outbox of one state directory.
#[derive(Debug, Clone)]
pub struct Outbox {
    state_dir: PathBuf,
}

/// What a drain did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Drained {
    /// Writes Lore took.
    pub delivered: u64,
    /// Writes Lore refused for good (see `outbox-rejects.jsonl`).
    pub rejected: u64,
    /// True when writes are still waiting (Lore away again, the deadline,
    /// or another process draining).
    pub waiting: bool,
}

impl Outbox {
    pub fn new(state_dir: impl Into<PathBuf>) -> Self {
        Self { state_dir: state_dir.into() }
    }

    /// The outbox of this user's state directory (see [`crate::home`]).
    pub fn local() -> Self {
        Self::new(crate::home::state_dir())
    }

    pub fn dir(&self) -> PathBuf {
        self.state_dir.join(DIR)
    }

    /// True when nothing waits.
    pub fn is_empty(&self) -> bool {
        !self.dir().exists()
    }

    /// Keeps `writes` in order behind whatever waits, durable (fsynced)
    /// when this returns. `client` is what Lore records them as coming
    /// through (`hook`, `mcp`).
    pub async fn append(&self, writes: Vec<Write>, client: &str) -> Result<(), AgentError> {
        let payloads: Vec<Vec<u8>> = writes
            .into_iter()
            .map(|write| SpoolEntry { client: client.to_owned(), ..SpoolEntry::new(write) }.encode())
            .collect();
        let _lock = self.lock(Wait::Block).await?.expect("a blocking lock is taken");
        let spool = self.open()?;
        let appended = spool.append(payloads).await;
        spool.close();
        appended.map(drop).map_err(|error| self.failed("keep the write in", error))
    }

    /// Sends what waits, in order, until `deadline`, through `channel` (the
    /// sidecar's or the server's).
    pub async fn drain(&self, channel: &AuthChannel, deadline: Instant) -> Result<Drained, AgentError> {
        if self.is_empty() {
            return Ok(Drained::default());
        }
        let Some(_lock) = self.lock(Wait::Not).await? else {
            return Ok(Drained { waiting: true, ..Drained::default() });
        };
        let spool = self.open()?;
        let mut drained = Drained::default();
        let mut reader = spool.reader();
        'records: loop {
            let records = reader.read_batch(64, 4 * 1024 * 1024).map_err(|error| self.failed("read", error))?;
            if records.is_empty() {
                break;
            }
            for record in records {
                let Some(left) = deadline.checked_duration_since(Instant::now()).filter(|left| !left.is_zero()) else {
                    drained.waiting = true;
                    break 'records;
                };
                match SpoolEntry::decode(&record.payload) {
                    Ok(SpoolEntry { write: Some(write), client, .. }) => {
                        let what = write.what();
                        match tokio::time::timeout(left, write.deliver(channel.clone(), &client)).await {
                            Ok(Ok(())) => drained.delivered += 1,
                            // A token that may not write (a reader's `lore`
                            // command) says nothing of the write: keep it.
                            Ok(Err(status)) if status.code() == tonic::Code::PermissionDenied => {
                                drained.waiting = true;
                                break 'records;
                            }
                            Ok(Err(status)) if !lore_spool::entry::is_transient(&status) => {
                                self.reject(&format!("{what} refused: {status}"))?;
                                drained.rejected += 1;
                            }
                            Ok(Err(_)) | Err(_) => {
                                drained.waiting = true;
                                break 'records;
                            }
                        }
                    }
                    Ok(_) | Err(_) => {
                        self.reject(&format!("record {} of the outbox holds no write Lore knows", record.id))?;
                        drained.rejected += 1;
                    }
                }
                spool.ack(record.id).map_err(|error| self.failed("acknowledge a write in", error))?;
            }
        }
        spool.close();
        drop(spool);
        if !drained.waiting {
            fs::remove_dir_all(self.dir()).map_err(|error| self.failed("empty", error))?;
        }
        Ok(drained)
    }

    fn open(&self) -> Result<Spool, AgentError> {
        let config = SpoolConfig {
            fsync: FsyncPolicy::Always,
            disk_budget_bytes: DISK_BUDGET_BYTES,
            when_full: lore_spool::FullPolicy::DropOldest,
            // Opened for each hook's append: one file, not one per append.
            continue_last_segment: true,
            ..SpoolConfig::new(self.dir())
        };
        Spool::open(config).map(|(spool, _)| spool).map_err(|error| self.failed("open", error))
    }

    /// The outbox's lock: `None` when another process holds it and this
    /// one would not wait.
    async fn lock(&self, wait: Wait) -> Result<Option<File>, AgentError> {
        let path = self.state_dir.join(LOCK_FILE);
        let locked = tokio::task::spawn_blocking(move || {
            if let Some(dir) = path.parent() {
                fs::create_dir_all(dir)?;
            }
            let file = lore_spool::open_options().create(true).truncate(false).write(true).open(&path)?;
            match wait {
                Wait::Block => file.lock().map(|()| Some(file)),
                Wait::Not => match file.try_lock() {
                    Ok(()) => Ok(Some(file)),
                    Err(std::fs::TryLockError::WouldBlock) => Ok(None),
                    Err(std::fs::TryLockError::Error(error)) => Err(error),
                },
            }
        })
        .await
        .map_err(|error| AgentError::Setup(format!("the outbox lock failed: {error}")))?;
        locked.map_err(|error| self.failed("lock", error))
    }

    fn reject(&self, reason: &str) -> Result<(), AgentError> {
        let path = self.state_dir.join(REJECTS_FILE);
        let line = serde_json::json!({ "at": chrono::Utc::now().to_rfc3339(), "reason": reason });
        lore_spool::open_options()
            .create(true)
            .append(true)
            .open(&path)
            .and_then(|mut file| writeln!(file, "{line}"))
            .map_err(|error| self.failed("record a refused write of", error))
    }

    fn failed(&self, doing: &str, error: impl std::fmt::Display) -> AgentError {
        AgentError::Setup(format!("cannot {doing} the outbox {}: {error}", self.dir().display()))
    }
}

#[derive(Debug, Clone, Copy)]
enum Wait {
    Block,
    Not,
}

/// The time a hook leaves itself to keep its writes in the outbox when
/// Lore does not answer in time: an fsync on a slow disk.
pub const KEEP_MARGIN: Duration = Duration::from_millis(25);
