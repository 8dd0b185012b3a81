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
    /// The epic it belongs to (`checkout-v2`), from `--epic`, the branch
    /// (`epic/checkout-v2/...`) or a commit's `Epic:` trailer.
    pub epic: String,
    /// Sub-agents running, by the agent's id for them: the `subagent`
    /// action each will be, so what they do names it as its parent.
    pub subagents: BTreeMap<String, Spawn>,
    /// Sub-agents that stopped, waiting for the tool call that spawned
    /// them to be recorded (it comes after its sub-agent's stop).
    pub stopped: Vec<Spawn>,
}

/// One sub-agent of the session.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Spawn {
    /// The `subagent` action's id, chosen when the sub-agent started.
    pub action_id: Uuid,
    pub agent_id: String,
    pub agent_type: String,
    /// Its last answer, cut short.
    pub summary: String,
    /// The spawning tool call was recorded as its action already (a
    /// sub-agent in the background is launched before it stops).
    pub recorded: bool,
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

/// Sub-agents remembered at once: more running than this is a runaway, and
/// the oldest loses its link.
const MAX_SUBAGENTS: usize = 64;

impl SessionState {
    /// A sub-agent started: its `subagent` action's id is chosen now.
    pub fn start_subagent(&mut self, agent_id: &str, agent_type: &str) {
        if self.subagents.len() >= MAX_SUBAGENTS
            && let Some(oldest) =
                self.subagents.iter().min_by_key(|(_, spawn)| spawn.action_id).map(|(id, _)| id.clone())
        {
            self.subagents.remove(&oldest);
        }
        let spawn = Spawn {
            action_id: Uuid::now_v7(),
            agent_id: agent_id.to_owned(),
            agent_type: agent_type.to_owned(),
            ..Spawn::default()
        };
        self.subagents.entry(agent_id.to_owned()).or_insert(spawn);
    }

    /// A spawning tool call recorded before its sub-agent started (Codex
    /// answers spawn_agent at once, with the sub-agent's id): that call is
    /// the sub-agent's action, which its own calls name as their parent.
    pub fn launch_subagent(&mut self, agent_id: &str, agent_type: &str, action_id: Uuid) {
        self.start_subagent(agent_id, agent_type);
        if let Some(spawn) = self.subagents.get_mut(agent_id) {
            spawn.action_id = action_id;
            spawn.recorded = true;
        }
    }

    /// A sub-agent stopped (one whose start was missed gets its id now).
    pub fn stop_subagent(&mut self, agent_id: &str, agent_type: &str, summary: String) -> Spawn {
        let mut spawn = self.subagents.remove(agent_id).unwrap_or_else(|| Spawn {
            action_id: Uuid::now_v7(),
            agent_id: agent_id.to_owned(),
            agent_type: agent_type.to_owned(),
            ..Spawn::default()
        });
        spawn.summary = summary;
        spawn
    }

    pub fn push_stopped(&mut self, spawn: Spawn) {
        if self.stopped.len() >= MAX_SUBAGENTS {
            self.stopped.remove(0);
        }
        self.stopped.push(spawn);
    }

    /// The sub-agent a spawning tool call was for: the one it names
    /// (still running when it was launched in the background, or stopped),
    /// else the oldest stopped one of its type, else the oldest stopped.
    pub fn spawned_by(&mut self, agent_id: Option<&str>, agent_type: Option<&str>) -> Option<Spawn> {
        if let Some(running) = agent_id.and_then(|id| self.subagents.get_mut(id)) {
            running.recorded = true;
            return Some(running.clone());
        }
        let index = self
            .stopped
            .iter()
            .position(|spawn| Some(spawn.agent_id.as_str()) == agent_id)
            .or_else(|| self.stopped.iter().position(|spawn| Some(spawn.agent_type.as_str()) == agent_type))
            .or_else(|| (!self.stopped.is_empty()).then_some(0))?;
        Some(self.stopped.remove(index))
    }

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
    fn a_spawning_tool_call_finds_its_sub_agent_by_id_then_type_then_age() {
        let mut state = SessionState::default();
        state.start_subagent("a1", "reviewer");
        state.start_subagent("a2", "explorer");
        state.start_subagent("a3", "reviewer");
        let a1 = state.subagents["a1"].action_id;
        // In the background, the call comes first: the running one is its
        // action, and stays for what it does next.
        let launched = state.spawned_by(Some("a3"), Some("reviewer")).unwrap();
        assert_eq!(launched.action_id, state.subagents["a3"].action_id);
        assert!(state.stop_subagent("a3", "reviewer", String::new()).recorded, "its stop writes nothing more");
        for (id, kind) in [("a1", "reviewer"), ("a2", "explorer")] {
            let spawn = state.stop_subagent(id, kind, format!("{id} done"));
            state.push_stopped(spawn);
        }
        let by_type = state.spawned_by(None, Some("explorer")).unwrap();
        assert_eq!((by_type.agent_id.as_str(), by_type.summary.as_str()), ("a2", "a2 done"));
        let oldest = state.spawned_by(None, None).unwrap();
        assert_eq!(oldest.action_id, a1, "the id chosen at its start");
        assert_eq!(state.spawned_by(Some("a1"), None), None, "each is taken once");
        let unknown = state.stop_subagent("never-started", "x", String::new());
        assert!(!unknown.action_id.is_nil() && !unknown.recorded);
    }

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

    #[test]
    fn a_sub_agent_launched_before_it_started_keeps_its_spawning_calls_action() {
        let mut state = SessionState::default();
        let call = Uuid::now_v7();
        state.launch_subagent("child", "", call);
        state.start_subagent("child", "default");
        assert_eq!(state.subagents["child"].action_id, call, "the start keeps the launch's action");
        let stopped = state.stop_subagent("child", "default", "done".into());
        assert!(stopped.recorded && stopped.action_id == call);
        assert!(state.subagents.is_empty());
    }
}
