//! What the hooks of one agent session remember between their processes:
//! whether the Lore session was started, the task's title, the checks
//! that are failing (with the failure each became and the files edited
//! since) and the files edited in the session.
//!
//! One small JSON file per Lore session in the state directory, read and
//! written under an exclusive lock on the file itself: an agent runs the
//! hooks of parallel tool calls at once, and two of them must not both
//! capture the same failure. A file that cannot be read is started afresh
//! (logged): the worst case is a check whose fix is not linked to its
//! failure, never a broken agent.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{Read as _, Seek as _, SeekFrom, Write as _};
use std::path::Path;

use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// Files remembered per session and per failing check.
const MAX_FILES: usize = 200;

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct SessionState {
    /// StartSession was sent (it is sent again after Stop ended it).
    pub started: bool,
    /// Stop ended the Lore session; the next prompt reopens it.
    pub ended: bool,
    /// The first line of the session's first prompt.
    pub task_title: String,
    /// Failing checks by their command, folded.
    pub open_checks: BTreeMap<String, OpenCheck>,
    /// Files edited in the session, oldest first.
    pub edited: Vec<String>,
    /// The last task result sent was a pass: passing checks after it say
    /// nothing new until a check fails again.
    pub passed: bool,
    /// The issue the session works on (`SHOP-42`, `#12`), from the branch
    /// at session start or a commit's trailers; set on every action.
    pub issue: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OpenCheck {
    /// The captured failure.
    pub failure_id: Uuid,
    /// The check's name (`cargo test`).
    pub check: String,
    /// Fix attempts recorded so far: each rerun is one.
    pub attempts: u32,
    /// Files edited since the check last failed.
    pub edited_since: Vec<String>,
}

impl SessionState {
    /// Remembers edited files, for the session and for every failing check.
    pub fn record_edits(&mut self, files: &[String]) {
        for file in files {
            push_bounded(&mut self.edited, file);
            for check in self.open_checks.values_mut() {
                push_bounded(&mut check.edited_since, file);
            }
        }
    }
}

fn push_bounded(files: &mut Vec<String>, file: &str) {
    if files.iter().any(|known| known == file) {
        return;
    }
    if files.len() == MAX_FILES {
        files.remove(0);
    }
    files.push(file.to_owned());
}

/// A session's state file, locked for as long as this lives.
pub struct LockedState {
    file: File,
    pub state: SessionState,
    /// Why the stored state was dropped, when it was.
    pub reset: Option<String>,
}

impl LockedState {
    /// Opens (creating) the session's state file under `dir` and takes its
    /// lock, waiting for another hook of the session to finish.
    pub fn open(dir: &Path, session_id: Uuid) -> std::io::Result<Self> {
        let dir = dir.join("sessions");
        std::fs::create_dir_all(&dir)?;
        let path = dir.join(format!("{session_id}.json"));
        let file = OpenOptions::new().read(true).write(true).create(true).truncate(false).open(&path)?;
        file.lock()?;
        let mut text = String::new();
        let mut reader = &file;
        let read = reader.read_to_string(&mut text);
        let (state, reset) = match read {
            Ok(_) if text.trim().is_empty() => (SessionState::default(), None),
            Ok(_) => match serde_json::from_str(&text) {
                Ok(state) => (state, None),
                Err(error) => (SessionState::default(), Some(format!("{}: {error}", path.display()))),
            },
            Err(error) => (SessionState::default(), Some(format!("{}: {error}", path.display()))),
        };
        Ok(Self { file, state, reset })
    }

    /// Writes the state back; the lock goes with `self`.
    pub fn save(mut self) -> std::io::Result<()> {
        let text = serde_json::to_vec(&self.state).map_err(std::io::Error::other)?;
        self.file.set_len(0)?;
        self.file.seek(SeekFrom::Start(0))?;
        self.file.write_all(&text)?;
        self.file.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_survives_between_hook_processes_and_a_damaged_file_starts_afresh() {
        let dir = tempfile::tempdir().unwrap();
        let session = Uuid::now_v7();
        let mut locked = LockedState::open(dir.path(), session).unwrap();
        locked.state.started = true;
        locked.state.open_checks.insert(
            "pytest -q".into(),
            OpenCheck { failure_id: Uuid::now_v7(), check: "pytest".into(), attempts: 0, edited_since: Vec::new() },
        );
        locked.state.record_edits(&["src/calc.py".into(), "src/calc.py".into()]);
        locked.save().unwrap();

        let again = LockedState::open(dir.path(), session).unwrap();
        assert!(again.state.started && again.reset.is_none());
        assert_eq!(again.state.edited, vec!["src/calc.py"]);
        assert_eq!(again.state.open_checks["pytest -q"].edited_since, vec!["src/calc.py"]);
        drop(again);

        std::fs::write(dir.path().join(format!("sessions/{session}.json")), "{broken").unwrap();
        let damaged = LockedState::open(dir.path(), session).unwrap();
        assert_eq!(damaged.state, SessionState::default());
        assert!(damaged.reset.is_some());
    }

    #[test]
    fn concurrent_hooks_of_a_session_take_turns() {
        let dir = tempfile::tempdir().unwrap();
        let session = Uuid::now_v7();
        let threads: Vec<_> = (0..8)
            .map(|index| {
                let dir = dir.path().to_owned();
                std::thread::spawn(move || {
                    let mut locked = LockedState::open(&dir, session).unwrap();
                    locked.state.record_edits(&[format!("file-{index}.rs")]);
                    locked.save().unwrap();
                })
            })
            .collect();
        for thread in threads {
            thread.join().unwrap();
        }
        let locked = LockedState::open(dir.path(), session).unwrap();
        assert_eq!(locked.state.edited.len(), 8, "no hook's edit was lost: {:?}", locked.state.edited);
    }
}
