//! What the pre-tool-use hook gave, kept on disk until a hook that talks to
//! Lore reports it to the injection ledger (AgentService.RecordCallInjection).
//!
//! The pre-tool-use hook never waits on the network, so it appends one JSON
//! line per warning or refusal to `calls/ledger.jsonl` in the state
//! directory: one `write` of a short line in append mode, which parallel
//! hooks cannot interleave. The next hook that reaches Lore (or finds it
//! away, and uses the outbox) takes the file by renaming it, sends what it
//! holds, and deletes it once each record was delivered or is durable in
//! the outbox. A hook that dies in between leaves the renamed file, which
//! the next one sends again: each record carries the id it was given
//! under, so the ledger stores it once.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use lore_proto::v1 as proto;
use lore_spool::entry::Write;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

const DIR: &str = "calls";
const PENDING: &str = "ledger.jsonl";
const TAKEN_SUFFIX: &str = ".sending";

/// One warning or refusal given with a call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Given {
    pub injection_id: Uuid,
    pub project: String,
    pub session_id: Uuid,
    /// The guard that refused the call; `None` for a warning.
    pub guard_id: Option<String>,
    /// The call's shape.
    pub shape: String,
    /// The failure warned of, or the guard's reason.
    pub label: String,
    /// Characters the agent was given.
    pub chars: usize,
    pub given_at: DateTime<Utc>,
}

impl Given {
    fn write(self) -> Write {
        let kind = if self.guard_id.is_some() { proto::InjectedKind::Guard } else { proto::InjectedKind::CallWarning };
        Write::RecordCallInjection(proto::RecordCallInjectionRequest {
            injection_id: self.injection_id.to_string(),
            project: self.project,
            session_id: self.session_id.to_string(),
            kind: kind as i32,
            guard_id: self.guard_id.unwrap_or_default(),
            shape: cut(&self.shape, 500),
            label: cut(&self.label, 300),
            chars: u32::try_from(self.chars).unwrap_or(u32::MAX),
            given_at: Some(prost_types::Timestamp {
                seconds: self.given_at.timestamp(),
                nanos: i32::try_from(self.given_at.timestamp_subsec_nanos()).unwrap_or(0),
            }),
        })
    }
}

/// The first `chars` characters, on one line.
fn cut(text: &str, chars: usize) -> String {
    text.chars().map(|c| if c.is_control() { ' ' } else { c }).take(chars).collect()
}

/// Keeps `given` for the next hook that reaches Lore.
pub fn keep(state_dir: &Path, given: &Given) -> std::io::Result<()> {
    let dir = state_dir.join(DIR);
    std::fs::create_dir_all(&dir)?;
    let mut line = serde_json::to_vec(given)?;
    line.push(b'\n');
    let mut file = std::fs::OpenOptions::new().create(true).append(true).open(dir.join(PENDING))?;
    // One write: appends of parallel hooks do not interleave.
    file.write_all(&line)
}

/// What a hook took to report: the writes, and the files to delete once
/// they were sent or kept in the outbox.
#[derive(Debug, Default)]
pub struct Taken {
    pub writes: Vec<Write>,
    files: Vec<PathBuf>,
    /// Lines that were no record (a torn line of a crash): dropped.
    pub unreadable: usize,
}

impl Taken {
    /// Deletes the files the writes came from.
    pub fn done(self) {
        for file in self.files {
            let _ = std::fs::remove_file(file);
        }
    }
}

/// Takes what waits: the pending file (renamed, so new records start a new
/// one) and any taken file a hook that died left behind.
pub fn take(state_dir: &Path) -> Taken {
    let dir = state_dir.join(DIR);
    let pending = dir.join(PENDING);
    if pending.exists() {
        let _ = std::fs::rename(&pending, dir.join(format!("ledger-{}.jsonl{TAKEN_SUFFIX}", Uuid::now_v7())));
    }
    let mut taken = Taken::default();
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return taken;
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.to_str().is_some_and(|path| path.ends_with(TAKEN_SUFFIX)))
        .collect();
    files.sort();
    for file in files {
        let Ok(text) = std::fs::read_to_string(&file) else { continue };
        for line in text.lines().filter(|line| !line.trim().is_empty()) {
            match serde_json::from_str::<Given>(line) {
                Ok(given) => taken.writes.push(given.write()),
                Err(_) => taken.unreadable += 1,
            }
        }
        taken.files.push(file);
    }
    taken
}

#[cfg(test)]
mod tests {
    use super::*;

    fn given(label: &str) -> Given {
        Given {
            injection_id: Uuid::now_v7(),
            project: "acme".into(),
            session_id: Uuid::now_v7(),
            guard_id: None,
            shape: "pytest <arg>".into(),
            label: label.into(),
            chars: 120,
            given_at: Utc::now(),
        }
    }

    #[test]
    fn what_was_kept_is_taken_once_and_a_new_record_waits_for_the_next_hook() {
        let dir = tempfile::tempdir().expect("tempdir");
        keep(dir.path(), &given("No module named <*>")).expect("kept");
        keep(dir.path(), &Given { guard_id: Some(Uuid::nil().to_string()), ..given("refused") }).expect("kept");
        let taken = take(dir.path());
        assert_eq!(taken.writes.len(), 2);
        let Write::RecordCallInjection(guard) = &taken.writes[1] else { panic!("a call injection") };
        assert_eq!((guard.kind, guard.label.as_str()), (proto::InjectedKind::Guard as i32, "refused"));
        keep(dir.path(), &given("later")).expect("kept while the first two are sent");
        taken.done();
        let next = take(dir.path());
        assert_eq!(next.writes.len(), 1, "the two sent are gone, the later one waits");
        next.done();
        assert!(take(dir.path()).writes.is_empty());
    }

    #[test]
    fn a_hook_that_died_while_sending_leaves_its_records_for_the_next() {
        let dir = tempfile::tempdir().expect("tempdir");
        keep(dir.path(), &given("x")).expect("kept");
        let died = take(dir.path());
        assert_eq!(died.writes.len(), 1);
        drop(died);
        std::fs::OpenOptions::new()
            .append(true)
            .open(std::fs::read_dir(dir.path().join(DIR)).expect("dir").next().expect("a file").expect("entry").path())
            .and_then(|mut file| file.write_all(b"{\"torn"))
            .expect("a torn line");
        let again = take(dir.path());
        assert_eq!((again.writes.len(), again.unreadable), (1, 1), "sent again, under the same id");
    }
}
