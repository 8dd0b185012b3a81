//! The runs and steps `lore eval replay` reads: one JSON object a line, in
//! the format of the trajectory data set (a run's `traj_id`, `repo`,
//! `start_ts`, `end_ts`; a step's `traj_id`, `step`, `command`,
//! `output`, `exit_code_or_status`, `is_failure`, `error_sig`,
//! `sig_in_task_text`; optional: a run's `task_id`, `task_text` and
//! `resolved`). A line that does not hold them is an error naming the
//! file, the line and the field.

use std::collections::HashMap;
use std::io::BufRead as _;
use std::path::Path;

use anyhow::{Context as _, bail};
use serde_json::{Map, Value};

/// One run of an agent on a task.
#[derive(Debug, Clone)]
pub struct Run {
    pub id: String,
    pub repo: String,
    pub start: i64,
    pub end: i64,
    /// The task, as the agent was given it (the run's first prompt).
    pub task_id: String,
    pub task_text: String,
    /// The task's verdict, when known.
    pub resolved: Option<bool>,
    pub steps: Vec<Step>,
}

/// One command of a run and how it ended.
#[derive(Debug, Clone)]
pub struct Step {
    pub step: i64,
    pub command: String,
    pub output: String,
    pub ended: Ended,
    /// The data set's labels, which judge Lore and never feed it.
    pub label: Label,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Ended {
    Exit(i64),
    Timeout,
    /// The step ran no command (`submitted`, `format_error`).
    NoCommand,
}

impl Ended {
    /// What a hook sees: a non-zero exit code, or a timeout.
    pub fn failed(&self) -> bool {
        matches!(self, Self::Exit(code) if *code != 0) || *self == Self::Timeout
    }
}

#[derive(Debug, Clone, Default)]
pub struct Label {
    pub is_failure: bool,
    pub error_sig: Option<String>,
    pub sig_in_task_text: bool,
}

impl Label {
    /// The failure as the data set names it, when it is one.
    pub fn failure(&self) -> Option<&str> {
        self.error_sig.as_deref().filter(|_| self.is_failure)
    }
}

/// A moment of a repository's history.
pub enum Event<'a> {
    Started(&'a Run),
    Finished(&'a Run),
}

/// A repository's runs (any order) as time passes. A run's finish comes
/// before every run that starts after it (`end < start`), which are the
/// only runs it may teach; the runs still going at the last start finish
/// after it.
pub fn timeline<'a>(runs: &[&'a Run]) -> Vec<Event<'a>> {
    let mut by_start: Vec<&Run> = runs.to_vec();
    by_start.sort_by(|a, b| (a.start, &a.id).cmp(&(b.start, &b.id)));
    let mut by_end = by_start.clone();
    by_end.sort_by(|a, b| (a.end, &a.id).cmp(&(b.end, &b.id)));
    let mut finished = by_end.into_iter().peekable();
    let mut events = Vec::with_capacity(runs.len() * 2);
    for run in by_start {
        while let Some(done) = finished.next_if(|done| done.end < run.start) {
            events.push(Event::Finished(done));
        }
        events.push(Event::Started(run));
    }
    events.extend(finished.map(Event::Finished));
    events
}

/// Reads both files; every step belongs to a run of the runs file.
pub fn read(runs_path: &Path, steps_path: &Path) -> anyhow::Result<Vec<Run>> {
    let mut runs = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    for_each_object(runs_path, |line, object| {
        let field = Fields { path: runs_path, line, object };
        let id = field.string("traj_id")?;
        let run = Run {
            repo: field.string("repo")?,
            start: field.integer("start_ts")?,
            end: field.integer("end_ts")?,
            task_id: field.optional_string("task_id")?.unwrap_or_else(|| id.clone()),
            task_text: field.optional_string("task_text")?.unwrap_or_default(),
            resolved: field.optional_boolean("resolved")?,
            id,
            steps: Vec::new(),
        };
        if run.end < run.start {
            bail!("{}: line {line}: field end_ts is before start_ts", runs_path.display());
        }
        if index.insert(run.id.clone(), runs.len()).is_some() {
            bail!("{}: line {line}: field traj_id repeats run {:?}", runs_path.display(), run.id);
        }
        runs.push(run);
        Ok(())
    })?;
    for_each_object(steps_path, |line, object| {
        let field = Fields { path: steps_path, line, object };
        let id = field.string("traj_id")?;
        let Some(&run) = index.get(&id) else {
            bail!(
                "{}: line {line}: field traj_id names no run of {}: {id:?}",
                steps_path.display(),
                runs_path.display()
            );
        };
        let ended = match object.get("exit_code_or_status") {
            Some(Value::Number(code)) if code.is_i64() => Ended::Exit(code.as_i64().unwrap_or_default()),
            Some(Value::String(status)) if status == "timeout" => Ended::Timeout,
            Some(Value::String(_)) => Ended::NoCommand,
            _ => bail!(
                "{}: line {line}: field exit_code_or_status must be an integer exit code or a status",
                steps_path.display()
            ),
        };
        let step = Step {
            step: field.integer("step")?,
            command: field.optional_string("command")?.unwrap_or_default(),
            output: field.optional_string("output")?.unwrap_or_default(),
            ended,
            label: Label {
                is_failure: field.boolean("is_failure")?,
                error_sig: field.optional_string("error_sig")?,
                sig_in_task_text: field.optional_boolean("sig_in_task_text")?.unwrap_or(false),
            },
        };
        runs[run].steps.push(step);
        Ok(())
    })?;
    for run in &mut runs {
        run.steps.sort_by_key(|step| step.step);
    }
    Ok(runs)
}

fn for_each_object(
    path: &Path,
    mut each: impl FnMut(usize, &Map<String, Value>) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let file = std::fs::File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    for (number, line) in std::io::BufReader::new(file).lines().enumerate() {
        let number = number + 1;
        let line = line.with_context(|| format!("{}: line {number} cannot be read", path.display()))?;
        if line.trim().is_empty() {
            continue;
        }
        let value: Value = serde_json::from_str(&line)
            .with_context(|| format!("{}: line {number} is not a JSON object", path.display()))?;
        let Value::Object(object) = value else {
            bail!("{}: line {number} is not a JSON object", path.display());
        };
        each(number, &object)?;
    }
    Ok(())
}

/// One line's fields, read with errors that say where.
struct Fields<'a> {
    path: &'a Path,
    line: usize,
    object: &'a Map<String, Value>,
}

impl Fields<'_> {
    fn wrong(&self, name: &str, expected: &str) -> anyhow::Error {
        let found = if self.object.contains_key(name) { "is not" } else { "is missing; it must be" };
        anyhow::anyhow!("{}: line {}: field {name} {found} {expected}", self.path.display(), self.line)
    }

    fn string(&self, name: &str) -> anyhow::Result<String> {
        self.optional_string(name)?.ok_or_else(|| self.wrong(name, "a string"))
    }

    fn optional_string(&self, name: &str) -> anyhow::Result<Option<String>> {
        match self.object.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(text)) => Ok(Some(text.clone())),
            Some(_) => Err(self.wrong(name, "a string")),
        }
    }

    fn integer(&self, name: &str) -> anyhow::Result<i64> {
        self.object.get(name).and_then(Value::as_i64).ok_or_else(|| self.wrong(name, "an integer"))
    }

    fn boolean(&self, name: &str) -> anyhow::Result<bool> {
        self.optional_boolean(name)?.ok_or_else(|| self.wrong(name, "true or false"))
    }

    fn optional_boolean(&self, name: &str) -> anyhow::Result<Option<bool>> {
        match self.object.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Bool(value)) => Ok(Some(*value)),
            Some(_) => Err(self.wrong(name, "true or false")),
        }
    }
}
