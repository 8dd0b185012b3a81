//! The replay through a real server and the hooks' own code.
//!
//! Each repository is a project of the server (named after it, with the
//! replay's start time so a second replay starts empty). Its runs go in
//! time order, as an agent's hooks would send them:
//!
//! - **At a run's start**, `lore hook session-start` and then
//!   `lore hook user-prompt-submit` with the task's text: the briefings the
//!   agent would read, and the call index the session-start hook writes,
//!   which the `pre-tool-use` hook answers from. What the briefings gave is
//!   read back from the injection ledger (ListInjections): the QA warnings,
//!   by their patterns' templates, and the failures named from the call
//!   index, by Lore's names for them.
//! - **Once a run has finished**, before the first run that starts after
//!   it, `lore hook post-tool-use` for each of its commands, with what it
//!   printed and its exit code, then `lore hook session-end`, then the
//!   task's verdict (`resolved`) with RecordTaskResult, as CI reports one.
//!   A run that has not finished teaches no one, as the data set asks.
//!
//! The hooks are the `lore` binary itself, run as Gemini CLI runs them
//! (its shell tool reports the exit code and output the runs hold), with no
//! sidecar, against the server this command is pointed at, and with a
//! budget long enough that no write is given up: the replay measures what
//! Lore knows, not how fast it answers (`make bench` does).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::Stdio;

use anyhow::Context as _;
use indicatif::ProgressBar;
use lore_agent::call_index;
use lore_agent::hooks::HookEvent;
use lore_agent::identity::{AgentKind, lore_session_id};
use lore_calls::memory::tokens;
use lore_proto::v1 as proto;
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt as _;

use super::runs::{Ended, Event, Run, timeline};
use super::simulate::Known;
use crate::Channel;

/// A QA pattern's gotcha lesson is keyed `qa-gotcha-<pattern id>`.
const GOTCHA_PREFIX: &str = "qa-gotcha-";
/// Long enough for any write on a loaded machine.
const HOOK_BUDGET_MS: &str = "60000";

/// The `lore hook` processes of one replay, sharing one state directory.
struct Hooks {
    exe: PathBuf,
    server: String,
    token: Option<String>,
    state: tempfile::TempDir,
    /// The agents' working directory: empty, not a repository.
    cwd: tempfile::TempDir,
}

impl Hooks {
    fn new((server, token): (&str, Option<&str>)) -> anyhow::Result<Self> {
        let state = tempfile::tempdir().context("cannot make the hooks' state directory")?;
        // The replay gives the call warnings the pre-tool-use hook would:
        // the briefings leave those to the call.
        call_index::mark_wired(state.path(), AgentKind::Gemini.as_str());
        Ok(Self {
            exe: std::env::current_exe().context("cannot find the lore binary to run the hooks")?,
            server: server.to_owned(),
            // The hooks of a dev-mode server's replay speak with its token,
            // as this command does.
            token: lore_proto::auth::token_for(server, token),
            state,
            cwd: tempfile::tempdir().context("cannot make the agents' working directory")?,
        })
    }

    /// Runs one hook of `session` and returns what it printed. Each run is
    /// an agent of its own, as each ran on a machine of its own.
    async fn run(&self, event: HookEvent, project: &str, session: &str, fields: Value) -> anyhow::Result<String> {
        let mut input = json!({
            "session_id": session,
            "cwd": self.cwd.path(),
            "hook_event_name": event.agent_name(),
        });
        if let (Value::Object(input), Value::Object(fields)) = (&mut input, fields) {
            input.extend(fields);
        }
        let mut command = tokio::process::Command::new(&self.exe);
        if let Some(token) = &self.token {
            command.env("LORE_TOKEN", token);
        }
        let mut child = command
            .args(["--server", &self.server, "hook", event.arg_name(), "--agent", AgentKind::Gemini.as_str()])
            .args(["--project", project, "--agent-id", &format!("gemini@{session}")])
            .args(["--sidecar", "off", "--budget-ms", HOOK_BUDGET_MS, "--instructions", "off"])
            .env("LORE_STATE_DIR", self.state.path())
            .env_remove("LORE_HOOK_BUDGET_MS")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .with_context(|| format!("cannot run {} hook {}", self.exe.display(), event.arg_name()))?;
        if let Some(mut stdin) = child.stdin.take() {
            stdin.write_all(input.to_string().as_bytes()).await?;
        }
        let output = child.wait_with_output().await?;
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    }

    /// What the hooks wrote to their log: each is a write that failed.
    fn log(&self) -> PathBuf {
        lore_agent::hooks::HookLog::new(self.state.path().to_owned()).path().to_owned()
    }
}

/// The text a hook's answer gives the model (Gemini's additionalContext).
fn context_of(answer: &str) -> String {
    serde_json::from_str::<Value>(answer.trim())
        .ok()
        .and_then(|answer| answer["hookSpecificOutput"]["additionalContext"].as_str().map(str::to_owned))
        .unwrap_or_default()
}

/// What a briefing warned of: a QA pattern (by id), or a failure the call
/// index counted (by Lore's name for it).
enum Warned {
    Pattern(String),
    Failure(String),
}

/// One repository's project on the server.
struct Project<'a> {
    name: String,
    /// This replay's, so that a second replay on the same server has
    /// sessions of its own.
    stamp: String,
    channel: Channel,
    hooks: &'a Hooks,
    /// Patterns' templates by id, read once each.
    templates: HashMap<String, String>,
    /// Where each run's briefings are written, when asked.
    briefings: Option<&'a Path>,
}

impl Project<'_> {
    /// The agent's session id of a run.
    fn session(&self, run: &Run) -> String {
        format!("{}@{}", run.id, self.stamp)
    }

    fn lore_session(&self, run: &Run) -> String {
        lore_session_id(AgentKind::Gemini, &self.session(run)).to_string()
    }

    /// What the run is told before its first call.
    async fn start(&mut self, run: &Run) -> anyhow::Result<Known> {
        let started = self
            .hooks
            .run(HookEvent::SessionStart, &self.name, &self.session(run), json!({ "source": "startup" }))
            .await?;
        let prompted = if run.task_text.trim().is_empty() {
            String::new()
        } else {
            let fields = json!({ "prompt": run.task_text });
            self.hooks.run(HookEvent::UserPromptSubmit, &self.name, &self.session(run), fields).await?
        };
        let (start_tokens, prompt_tokens) =
            (tokens(&context_of(&started)) as u64, tokens(&context_of(&prompted)) as u64);
        if let Some(dir) = &self.briefings {
            let file =
                dir.join(format!("{}.md", run.id.replace(|c: char| !c.is_ascii_alphanumeric() && c != '-', "_")));
            let text = format!("{}\n\n---\n\n{}", context_of(&started), context_of(&prompted));
            std::fs::write(&file, text).with_context(|| format!("cannot write {}", file.display()))?;
        }
        let Some(index) = call_index::load(&call_index::path(self.hooks.state.path(), &self.name), &self.name) else {
            let log = std::fs::read_to_string(self.hooks.log()).unwrap_or_default();
            anyhow::bail!(
                "the session-start hook wrote no call index for {}; its log says: {}",
                self.name,
                log.lines().last().unwrap_or("nothing")
            );
        };
        let (warned, withheld) = self.warned(run).await?;
        let mut known =
            Known { index, patterns: Vec::new(), failures: Vec::new(), start_tokens, prompt_tokens, withheld };
        for item in warned {
            match item {
                Warned::Pattern(pattern) => known.patterns.push(self.template(&pattern).await?),
                Warned::Failure(failure) => known.failures.push(failure),
            }
        }
        Ok(known)
    }

    /// What the run's briefings warned of, by the injection ledger, and
    /// how many items the screen withheld from them.
    async fn warned(&self, run: &Run) -> anyhow::Result<(Vec<Warned>, u64)> {
        let request = proto::ListInjectionsRequest {
            project: self.name.clone(),
            session_id: self.lore_session(run),
            page: Some(proto::PageRequest { page_size: 500, cursor: String::new() }),
            ..Default::default()
        };
        let listed = proto::agent_service_client::AgentServiceClient::new(self.channel.clone())
            .list_injections(request)
            .await
            .context("ListInjections")?
            .into_inner();
        let items = || listed.injections.iter().flat_map(|injection| &injection.items);
        let withheld = items().filter(|item| item.withheld == proto::Withheld::Quarantined as i32).count() as u64;
        let warned = items()
            .filter(|item| item.withheld == proto::Withheld::Unspecified as i32)
            .filter_map(|item| match proto::InjectedKind::try_from(item.kind) {
                Ok(proto::InjectedKind::Warning) => Some(Warned::Pattern(item.item_id.clone())),
                // A pattern's gotcha, the lesson QA made of it.
                Ok(proto::InjectedKind::Lesson) => {
                    item.label.strip_prefix(GOTCHA_PREFIX).map(|pattern| Warned::Pattern(pattern.to_owned()))
                }
                // A failure the call index counted in many sessions.
                Ok(proto::InjectedKind::CallWarning) => Some(Warned::Failure(item.label.clone())),
                _ => None,
            })
            .collect();
        Ok((warned, withheld))
    }

    async fn template(&mut self, pattern: &str) -> anyhow::Result<String> {
        if let Some(template) = self.templates.get(pattern) {
            return Ok(template.clone());
        }
        let request = proto::GetPatternRequest { pattern_id: pattern.to_owned(), ..Default::default() };
        let template = proto::qa_learning_service_client::QaLearningServiceClient::new(self.channel.clone())
            .get_pattern(request)
            .await
            .context("GetPattern")?
            .into_inner()
            .pattern
            .map(|pattern| pattern.template)
            .unwrap_or_default();
        self.templates.insert(pattern.to_owned(), template.clone());
        Ok(template)
    }

    /// Teaches the server a finished run, as its hooks and CI would.
    async fn finish(&self, run: &Run) -> anyhow::Result<()> {
        for step in &run.steps {
            let report = match step.ended {
                Ended::NoCommand => continue,
                Ended::Exit(code) => json!({ "llmContent": format!("Output: {}\nExit Code: {code}", step.output) }),
                Ended::Timeout => json!({
                    "llmContent": format!("Output: {}", step.output),
                    "error": { "message": "the command timed out" },
                }),
            };
            let fields = json!({
                "tool_name": "run_shell_command",
                "tool_input": { "command": step.command },
                "tool_response": report,
            });
            self.hooks.run(HookEvent::PostToolUse, &self.name, &self.session(run), fields).await?;
        }
        self.hooks.run(HookEvent::SessionEnd, &self.name, &self.session(run), json!({ "reason": "exit" })).await?;
        let Some(resolved) = run.resolved else { return Ok(()) };
        let verdict = if resolved { proto::TaskVerdict::Passed } else { proto::TaskVerdict::Failed };
        let request = proto::RecordTaskResultRequest {
            result_id: uuid::Uuid::new_v5(&uuid::Uuid::NAMESPACE_OID, self.session(run).as_bytes()).to_string(),
            project: self.name.clone(),
            task: Some(proto::Task { task_id: run.task_id.clone(), ..Default::default() }),
            session_id: self.lore_session(run),
            verdict: verdict as i32,
            ..Default::default()
        };
        let recorded = proto::qa_learning_service_client::QaLearningServiceClient::new(self.channel.clone())
            .record_task_result(request)
            .await;
        match recorded {
            // A failed run whose hooks captured no failure leaves nothing
            // for the verdict to score; inventing a failed check would
            // teach a pattern the run never printed.
            Err(status) if !resolved && status.code() == tonic::Code::FailedPrecondition => Ok(()),
            Err(status) => Err(anyhow::anyhow!(status).context(format!("RecordTaskResult of run {}", run.id))),
            Ok(_) => Ok(()),
        }
    }
}

/// Replays every repository's runs into the server at `server` and returns
/// what Lore knew at each run's start, by run id.
pub async fn learn(
    channel: Channel,
    server: (&str, Option<&str>),
    repos: &BTreeMap<&str, Vec<&Run>>,
    briefings: Option<&Path>,
    bar: &ProgressBar,
) -> anyhow::Result<HashMap<String, Known>> {
    if let Some(dir) = briefings {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot make {}", dir.display()))?;
    }
    let hooks = Hooks::new(server)?;
    let stamp = chrono::Utc::now().format("%Y%m%d%H%M%S").to_string();
    let mut known = HashMap::new();
    for (repo, runs) in repos {
        let mut project = Project {
            name: format!("replay-{}-{stamp}", repo.replace('/', "-")),
            stamp: stamp.clone(),
            channel: channel.clone(),
            hooks: &hooks,
            templates: HashMap::new(),
            briefings,
        };
        bar.set_message(project.name.clone());
        for event in timeline(runs) {
            match event {
                Event::Started(run) => {
                    known.insert(run.id.clone(), project.start(run).await?);
                }
                Event::Finished(done) => {
                    project.finish(done).await?;
                    bar.inc(1);
                }
            }
        }
    }
    report_hook_errors(&hooks.log());
    Ok(known)
}

/// A hook never fails its agent: what went wrong is in its log. Said here,
/// since a write that did not arrive is a run Lore did not learn.
fn report_hook_errors(log: &Path) {
    let Ok(text) = std::fs::read_to_string(log) else { return };
    let lines: Vec<&str> = text.lines().filter(|line| !line.trim().is_empty()).collect();
    if let Some(last) = lines.last() {
        eprintln!("the hooks logged {} problem(s); the last: {last}", lines.len());
    }
}
