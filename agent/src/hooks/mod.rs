//! `lore hook <event>`: the commands Claude Code, Codex and Gemini CLI run
//! at session start, at every prompt, before and after every tool call and
//! at the end. Each reads
//! the agent's JSON on stdin, speaks to Lore, and answers in the agent's
//! format: a briefing as `additionalContext` at session start and at each
//! prompt, nothing otherwise.
//!
//! What each event does:
//! - **session-start**: starts (or, resumed, reopens) the agent session's
//!   Lore session and answers with the briefing for the repository: where
//!   the last session stopped, the lessons for the work in progress, the
//!   QA warnings for the files changed. Meanwhile it brings the
//!   repository's CLAUDE.md (AGENTS.md for Codex) to the project's standing
//!   instructions (see [`crate::instructions`]; `LORE_INSTRUCTIONS=off`
//!   leaves the file alone).
//! - **user-prompt-submit**: a briefing for what was asked, leaving out
//!   what this session was already given. Session start and, when it is
//!   due, the prompt also refresh the project's call index (see
//!   [`crate::call_index`]).
//! - **pre-tool-use** (Gemini's BeforeTool): the warning that comes with a
//!   shell call that failed in earlier sessions, and what worked after,
//!   answered from the call index alone (see [`pre_tool_use`]).
//! - **refresh-calls**: no agent's event; what a pre-tool-use hook starts in
//!   the background when the call index is missing or stale.
//! - **post-tool-use** (also Claude Code's PostToolUseFailure): the tool
//!   call as an action, typed by what it was (see [`typed`]), with the
//!   session's issue and epic. A shell command that runs a check
//!   (tests, build, type check, linter) and fails is captured as a QA
//!   failure of the session's task; the same command passing later is its
//!   fix, with the files edited in between. Lore's own MCP tools are left
//!   to the MCP server, which records them itself.
//! - **stop**: the agent has answered: the session ends (normal) with its
//!   last message as the summary; the next prompt reopens it.
//! - **session-end**: the session ends, if a stop did not end it already.
//! - **subagent-start** / **subagent-stop**: a sub-agent's `subagent`
//!   action gets its id at the start, so its own tool calls name it as
//!   their parent; the tool call that spawned it becomes that action (or,
//!   for an agent without one, the stop writes it).
//!
//! A hook never hurts the agent: whatever happens (Lore down, bad input, a
//! bug) it exits 0 within its time budget, prints nothing but a valid
//! answer, and says why in `hooks.log` of the state directory and on
//! stderr.
//!
//! Nor does it lose what it records: when neither the sidecar nor the
//! server answers within the budget, its writes wait in the outbox (see
//! [`crate::outbox`]), which the next hook that reaches Lore sends first.

pub mod adapter;
pub mod input;
mod pre_tool_use;
pub mod record;
mod staleness;
pub mod state;
mod transcript;
pub mod typed;

use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use lore_proto::v1 as proto;
use lore_spool::entry::Write;
use serde_json::json;
use tokio::time::Instant;
use uuid::Uuid;

use crate::AgentError;
use crate::checks::{self, Checks};
use crate::connection::{Connection, LoreAddress};
use crate::identity::{AgentKind, Identity, lore_session_id};
use crate::outbox::{self, Outbox};
use crate::requests::{self, FailedCheck};
use input::HookInput;
use state::{LockedState, OpenCheck};

/// The agent events a hook answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum HookEvent {
    SessionStart,
    UserPromptSubmit,
    PreToolUse,
    PostToolUse,
    Stop,
    SessionEnd,
    SubagentStart,
    SubagentStop,
    /// Not an agent's event: the background refresh of the call index a
    /// pre-tool-use hook starts when the index is stale.
    RefreshCalls,
}

impl HookEvent {
    pub const ALL: [Self; 8] = [
        Self::SessionStart,
        Self::UserPromptSubmit,
        Self::PreToolUse,
        Self::PostToolUse,
        Self::Stop,
        Self::SessionEnd,
        Self::SubagentStart,
        Self::SubagentStop,
    ];

    /// How long the agent may wait on it: a briefing is worth two seconds
    /// at the start of a session; after every tool call a tenth of one is
    /// already noticeable.
    pub fn default_budget(self) -> Duration {
        Duration::from_millis(match self {
            Self::SessionStart => 2000,
            Self::UserPromptSubmit => 1500,
            Self::PreToolUse | Self::PostToolUse => 100,
            Self::Stop | Self::SessionEnd | Self::SubagentStart | Self::SubagentStop => 500,
            Self::RefreshCalls => 5000,
        })
    }

    /// The name in the agents' configuration (`SessionStart`).
    pub fn agent_name(self) -> &'static str {
        match self {
            Self::SessionStart => "SessionStart",
            Self::UserPromptSubmit => "UserPromptSubmit",
            Self::PreToolUse => "PreToolUse",
            Self::PostToolUse => "PostToolUse",
            Self::Stop => "Stop",
            Self::SessionEnd => "SessionEnd",
            Self::SubagentStart => "SubagentStart",
            Self::SubagentStop => "SubagentStop",
            Self::RefreshCalls => "RefreshCalls",
        }
    }

    /// The argument of `lore hook` (`session-start`).
    pub fn arg_name(self) -> &'static str {
        match self {
            Self::SessionStart => "session-start",
            Self::UserPromptSubmit => "user-prompt-submit",
            Self::PreToolUse => "pre-tool-use",
            Self::PostToolUse => "post-tool-use",
            Self::Stop => "stop",
            Self::SessionEnd => "session-end",
            Self::SubagentStart => "subagent-start",
            Self::SubagentStop => "subagent-stop",
            Self::RefreshCalls => "refresh-calls",
        }
    }
}

/// `lore hook` arguments.
#[derive(Debug, Clone, clap::Args)]
pub struct HookArgs {
    /// The agent event to answer.
    pub event: HookEvent,
    /// The Lore project (default: LORE_PROJECT, else the repository's name).
    #[arg(long, env = "LORE_PROJECT")]
    pub project: Option<String>,
    /// The agent's identity (default: LORE_AGENT_ID, else <agent>@<host>).
    #[arg(long, env = "LORE_AGENT_ID")]
    pub agent_id: Option<String>,
    /// Which agent runs the hook: claude-code, codex or gemini.
    #[arg(long, default_value = "claude-code", value_parser = parse_agent)]
    pub agent: AgentKind,
    /// The local sidecar, or "off".
    #[arg(long, env = "LORE_SIDECAR", default_value = crate::connection::DEFAULT_SIDECAR)]
    pub sidecar: String,
    /// Time budget in ms (defaults: session-start 2000, user-prompt-submit
    /// 1500, pre-tool-use and post-tool-use 100, stop and session-end 500).
    #[arg(long, env = "LORE_HOOK_BUDGET_MS")]
    pub budget_ms: Option<u64>,
    /// A regex over shell commands that marks one more check (repeatable;
    /// also LORE_CHECK_PATTERNS, one per line).
    #[arg(long = "check-pattern")]
    pub check_patterns: Vec<String>,
    /// The name Lore's MCP server has in the agent: its tools are recorded
    /// by the server itself, not again by the hook.
    #[arg(long, default_value = crate::mcp::SERVER_NAME)]
    pub mcp_name: String,
    /// Size of the session-start briefing in characters.
    #[arg(long, env = "LORE_BRIEFING_CHARS", default_value_t = 4000)]
    pub briefing_chars: u32,
    /// Size of a prompt's briefing in characters.
    #[arg(long, env = "LORE_PROMPT_BRIEFING_CHARS", default_value_t = 2500)]
    pub prompt_briefing_chars: u32,
    /// A file of the project's own recognizers of typed actions, read
    /// before Lore's (the shape of agent/src/action_types.toml).
    #[arg(long, env = "LORE_ACTION_TYPES")]
    pub action_types: Option<PathBuf>,
    /// The epic the session's work belongs to (default: the branch's,
    /// `epic/NAME/...`, else a commit's `Epic: NAME` trailer).
    #[arg(long, env = "LORE_EPIC", value_parser = parse_epic)]
    pub epic: Option<String>,
    /// At session start, write the project's standing instructions into
    /// the repository's CLAUDE.md or AGENTS.md (sync), or leave it (off).
    #[arg(long, env = "LORE_INSTRUCTIONS", default_value = "sync", value_parser = ["sync", "off"])]
    pub instructions: String,
}

fn parse_epic(text: &str) -> Result<String, String> {
    let valid = (1..=256).contains(&text.len()) && !text.chars().any(char::is_control);
    valid.then(|| text.to_owned()).ok_or_else(|| "an epic is 1 to 256 characters with no control characters".into())
}

pub fn parse_agent(text: &str) -> Result<AgentKind, String> {
    match AgentKind::parse(text) {
        Some(AgentKind::Other) | None => Err(format!("{text:?}: expected claude-code, codex or gemini")),
        Some(kind) => Ok(kind),
    }
}

/// Runs the hook and exits 0, whatever happens. Its own small runtime:
/// a hook process lives for milliseconds.
pub fn run(args: HookArgs, mut address: LoreAddress) -> ExitCode {
    let started = Instant::now();
    let budget = args.budget_ms.map_or(args.event.default_budget(), Duration::from_millis);
    let log = HookLog::new(crate::home::state_dir());
    if args.sidecar == "off" {
        address.sidecar = None;
    } else {
        address.sidecar = Some(args.sidecar.clone());
    }
    let panic_log = log.clone();
    let event = args.event;
    std::panic::set_hook(Box::new(move |info| panic_log.write(event, None, &format!("bug: {info}"))));
    let outcome = std::panic::catch_unwind(|| {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
        let answer = runtime.block_on(async {
            tokio::time::timeout(budget, async {
                let bytes = read_stdin(budget).await?;
                let input = adapter::read(args.agent, &bytes).map_err(AgentError::Setup)?;
                handle(&args, &address, input, (budget, started + budget), &log).await
            })
            .await
        });
        // Anything left (a stdin read, a slow call) is abandoned, not awaited.
        runtime.shutdown_background();
        Ok::<_, std::io::Error>(answer)
    });
    match outcome {
        Ok(Ok(Ok(Ok(Some(answer))))) => {
            let mut stdout = std::io::stdout().lock();
            let _ = stdout.write_all(answer.as_bytes());
            let _ = stdout.flush();
        }
        Ok(Ok(Ok(Ok(None)))) => {}
        Ok(Ok(Ok(Err(error)))) => log.write(event, None, &error.to_string()),
        Ok(Ok(Err(_))) => log.write(
            event,
            None,
            &format!(
                "gave up after its budget of {} ms (took {} ms); the agent went on",
                budget.as_millis(),
                started.elapsed().as_millis()
            ),
        ),
        Ok(Err(error)) => log.write(event, None, &format!("cannot start: {error}")),
        Err(_) => {} // the panic hook logged it
    }
    ExitCode::SUCCESS
}

/// Reads stdin on a thread of its own, so a stdin that never closes costs
/// the budget, not the agent.
async fn read_stdin(budget: Duration) -> Result<Vec<u8>, AgentError> {
    let (sender, receiver) = tokio::sync::oneshot::channel();
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let read = std::io::stdin().lock().take(input::MAX_INPUT_BYTES as u64 + 1).read_to_end(&mut bytes);
        let _ = sender.send(read.map(|_| bytes));
    });
    match tokio::time::timeout(budget, receiver).await {
        Ok(Ok(Ok(bytes))) => Ok(bytes),
        Ok(Ok(Err(error))) => Err(AgentError::Setup(format!("cannot read the hook input: {error}"))),
        Ok(Err(_)) | Err(_) => Err(AgentError::Setup("the hook input never arrived on stdin".into())),
    }
}

/// Everything a hook does once its input is read; `Some` is what it prints.
async fn handle(
    args: &HookArgs,
    address: &LoreAddress,
    input: HookInput,
    (budget, deadline): (Duration, Instant),
    log: &HookLog,
) -> Result<Option<String>, AgentError> {
    let agent_session = if input.session_id.trim().is_empty() {
        args.agent.session_from_environment().ok_or_else(|| {
            AgentError::Setup("the hook input has no session_id, and the agent set none in the environment".into())
        })?
    } else {
        input.session_id.clone()
    };
    let dir =
        if input.cwd.is_empty() { std::env::current_dir().unwrap_or_default() } else { PathBuf::from(&input.cwd) };
    let identity = Identity::resolve(args.project.as_deref(), args.agent_id.as_deref(), args.agent, &dir);
    let session_id = lore_session_id(args.agent, &agent_session);
    // Before every tool call: a local file answers, Lore is not asked.
    if args.event == HookEvent::PreToolUse {
        let state_dir = crate::home::state_dir();
        crate::call_index::mark_wired(&state_dir, args.agent.as_str());
        let answer = pre_tool_use::answer(args.agent, &identity.project, session_id, &input, &state_dir);
        if crate::call_index::claim_background_refresh(&state_dir, &identity.project)
            && let Err(error) = refresh_in_background(args, &identity.project, &agent_session, &dir)
        {
            log.write(args.event, Some(session_id), &format!("cannot start a refresh of the call index: {error}"));
        }
        return Ok(answer);
    }
    // A sidecar that is not running refuses at once; one that hangs must
    // leave time for the server.
    let connection = match address.connect((budget / 3).min(Duration::from_millis(500)), "hook").await {
        Ok(connection) => Some(connection),
        Err(error) if error.is_unreachable() => {
            log.write(args.event, None, &format!("{error} The hook's writes wait in the outbox."));
            None
        }
        Err(error) => return Err(error),
    };
    let outbox = Outbox::local();
    // What waits goes first, so the order holds; what cannot go now makes
    // this hook's writes wait behind it.
    let mut queued = connection.is_none() && !outbox.is_empty();
    if let Some(connection) = &connection
        && !outbox.is_empty()
    {
        // Half the budget at most: a parallel hook waiting on the outbox's
        // lock must still have time for its own write.
        let drain_until = Instant::now() + deadline.saturating_duration_since(Instant::now()) / 2;
        let drained = outbox.drain(&connection.channel(), drain_until).await?;
        if drained.delivered + drained.rejected > 0 {
            log.write(
                args.event,
                Some(session_id),
                &format!(
                    "the outbox sent {} writes to {}{}",
                    drained.delivered,
                    connection.route,
                    if drained.rejected > 0 {
                        format!(" ({} refused, see outbox-rejects.jsonl)", drained.rejected)
                    } else {
                        String::new()
                    }
                ),
            );
        }
        queued = drained.waiting;
    }
    let hook = Hook {
        args,
        identity,
        session_id,
        agent_session,
        connection,
        outbox,
        queued: AtomicBool::new(queued),
        deadline,
        dir,
        log,
    };
    let answer = match args.event {
        HookEvent::SessionStart => hook.session_start(&input).await,
        HookEvent::UserPromptSubmit => hook.user_prompt_submit(&input).await,
        HookEvent::PreToolUse => Ok(None), // answered above, offline
        HookEvent::RefreshCalls => {
            if let Some(connection) = &hook.connection {
                hook.refresh_calls(connection, true).await;
            }
            Ok(None)
        }
        HookEvent::PostToolUse => hook.post_tool_use(&input).await.map(|()| None),
        HookEvent::Stop => hook.stop(&input).await.map(|()| None),
        HookEvent::SessionEnd => hook.session_end(&input).await.map(|()| None),
        HookEvent::SubagentStart => hook.subagent_start(&input).await.map(|()| None),
        HookEvent::SubagentStop => hook.subagent_stop(&input).await.map(|()| None),
    };
    // After the event's own work, which the agent waits on.
    hook.report_calls_given().await;
    answer
}

/// Starts `lore hook refresh-calls` for the project and leaves it running:
/// the pre-tool-use hook that starts it answers the agent at once.
fn refresh_in_background(args: &HookArgs, project: &str, agent_session: &str, dir: &Path) -> std::io::Result<()> {
    let input = json!({ "session_id": agent_session, "cwd": dir, "hook_event_name": "RefreshCalls" }).to_string();
    let mut child = std::process::Command::new(std::env::current_exe()?)
        .args(["hook", HookEvent::RefreshCalls.arg_name(), "--project", project, "--agent", args.agent.as_str()])
        .args(["--sidecar", &args.sidecar, "--budget-ms", "5000"])
        .env_remove("LORE_HOOK_BUDGET_MS")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin.write_all(input.as_bytes())?;
    }
    // Not waited for: it outlives this hook, and init reaps it.
    drop(child);
    Ok(())
}

struct Hook<'a> {
    args: &'a HookArgs,
    identity: Identity,
    session_id: Uuid,
    agent_session: String,
    /// `None`: neither the sidecar nor the server answered.
    connection: Option<Connection>,
    outbox: Outbox,
    /// Writes go to the outbox: Lore did not answer, or older writes wait
    /// there.
    queued: AtomicBool,
    /// When the budget ends.
    deadline: Instant,
    dir: PathBuf,
    log: &'a HookLog,
}

impl Hook<'_> {
    /// The session's state, locked (on a blocking thread: the lock may
    /// wait for a parallel hook of the same session).
    async fn state(&self) -> Result<LockedState, AgentError> {
        let dir = crate::home::state_dir();
        let session_id = self.session_id;
        let locked = tokio::task::spawn_blocking(move || LockedState::open(&dir, session_id))
            .await
            .map_err(|error| AgentError::Setup(format!("the state lock failed: {error}")))?
            .map_err(|error| AgentError::Setup(format!("cannot open the hook state: {error}")))?;
        if let Some(reason) = &locked.reset {
            self.log.write(
                self.args.event,
                Some(self.session_id),
                &format!("the hook state was unreadable and starts afresh: {reason}"),
            );
        }
        Ok(locked)
    }

    /// Sends the writes in order, or keeps them in the outbox, behind what
    /// waits there, when Lore does not answer within the budget. Only a
    /// refusal is an error.
    async fn send(&self, writes: Vec<Write>) -> Result<(), AgentError> {
        let mut writes = writes.into_iter();
        let mut waiting = Vec::new();
        if let Some(connection) = self.connection.as_ref().filter(|_| !self.queued.load(Ordering::Relaxed)) {
            for write in writes.by_ref() {
                let left = self.deadline.saturating_duration_since(Instant::now()).saturating_sub(outbox::KEEP_MARGIN);
                match tokio::time::timeout(left, write.clone().deliver(connection.channel(), "hook")).await {
                    Ok(Ok(())) => {}
                    Ok(Err(status)) if !lore_spool::entry::is_transient(&status) => return Err(status.into()),
                    Ok(Err(_)) | Err(_) => {
                        self.queued.store(true, Ordering::Relaxed);
                        waiting.push(write);
                        break;
                    }
                }
            }
        }
        waiting.extend(writes);
        if waiting.is_empty() {
            return Ok(());
        }
        let count = waiting.len();
        self.outbox.append(waiting, "hook").await?;
        self.log.write(
            self.args.event,
            Some(self.session_id),
            &format!("{count} writes wait in {} until Lore answers", self.outbox.dir().display()),
        );
        Ok(())
    }

    /// Reports to the injection ledger what pre-tool-use hooks gave (see
    /// [`crate::call_ledger`]): sent, or kept in the outbox. A record Lore
    /// refuses is dropped with a line in the log, never retried forever.
    async fn report_calls_given(&self) {
        let mut taken = crate::call_ledger::take(&crate::home::state_dir());
        let mut refused = taken.unreadable;
        for write in std::mem::take(&mut taken.writes) {
            match self.send(vec![write]).await {
                Ok(()) => {}
                Err(error @ (AgentError::Refused(_) | AgentError::InvalidArgument { .. })) => {
                    refused += 1;
                    self.log.write(
                        self.args.event,
                        Some(self.session_id),
                        &format!("a call warning was refused: {error}"),
                    );
                }
                // Neither sent nor kept (the outbox failed): leave the file.
                Err(error) => {
                    self.log.write(self.args.event, Some(self.session_id), &format!("call warnings wait: {error}"));
                    return;
                }
            }
        }
        if refused > 0 {
            self.log.write(self.args.event, Some(self.session_id), &format!("{refused} call warning records dropped"));
        }
        taken.done();
    }

    async fn save(&self, locked: LockedState) -> Result<(), AgentError> {
        tokio::task::spawn_blocking(move || locked.save())
            .await
            .map_err(|error| AgentError::Setup(format!("saving the hook state failed: {error}")))?
            .map_err(|error| AgentError::Setup(format!("cannot save the hook state: {error}")))
    }

    /// Starts the Lore session, or reopens it when Stop ended it (a resumed
    /// or continued agent session goes on in the same Lore session).
    async fn start_session(&self, source: &str, model: Option<String>) -> Result<(), AgentError> {
        let mut metadata = json!({ "agent_session_id": self.agent_session, "cwd": self.dir.display().to_string() });
        if !source.is_empty() {
            metadata["source"] = json!(source);
        }
        if let Some(model) = model {
            metadata["model"] = json!(model);
        }
        let start = proto::StartSessionRequest {
            session_id: self.session_id.to_string(),
            project: self.identity.project.clone(),
            agent_id: self.identity.agent_id.clone(),
            supervisor_type: self.identity.kind.as_str().to_owned(),
            metadata: Some(lore_proto::json::to_struct(&metadata)),
            reopen: true,
            ..Default::default()
        };
        self.send(vec![Write::StartSession(start)]).await
    }

    async fn session_start(&self, input: &HookInput) -> Result<Option<String>, AgentError> {
        self.note_session();
        // The session starts while git is asked for the branch, whose issue
        // the state keeps: one lock and one save.
        let started = async {
            let locked = self.state().await?;
            self.start_session(&input.source, input.model_name()).await?;
            Ok::<_, AgentError>(locked)
        };
        let ((branch, files), missing_files, started) =
            tokio::join!(git_context(&self.dir), self.missing_cited_files(), started);
        let mut locked = started?;
        locked.state.started = true;
        locked.state.ended = false;
        if let Some(issue) = branch.as_deref().and_then(typed::issue_of_branch) {
            locked.state.issue = issue;
        }
        if let Some(epic) = self.args.epic.clone().or_else(|| branch.as_deref().and_then(typed::epic_of_branch)) {
            locked.state.epic = epic;
        }
        self.save(locked).await?;
        let Some(connection) = &self.connection else { return Ok(None) };
        let task = proto::BriefTask { files, labels: branch.into_iter().collect(), ..Default::default() };
        // The briefing names what the call index, refreshed first, counts
        // in many sessions and no call is warned of.
        let briefing = async {
            self.refresh_calls(connection, true).await;
            let (at_call, frequent_failures) = crate::call_index::session_start_hints(
                &crate::home::state_dir(),
                &self.identity.project,
                self.args.agent.as_str(),
            );
            let request = proto::BriefRequest {
                budget_chars: self.args.briefing_chars,
                surface: proto::InjectionSurface::SessionStart as i32,
                missing_files,
                at_call,
                frequent_failures,
                ..requests::brief(&self.identity, self.session_id, task)
            };
            connection.agent().brief(request).await
        };
        let (briefing, ()) = tokio::join!(briefing, self.sync_instructions(connection));
        Ok(context_answer(self.args.agent, HookEvent::SessionStart, &briefing?.into_inner().markdown))
    }

    /// Brings the repository's instructions file to the project's standing
    /// instructions. What goes wrong is logged, never the agent's problem.
    async fn sync_instructions(&self, connection: &Connection) {
        if self.args.instructions == "off" {
            return;
        }
        let Some(path) = crate::instructions::file_for(&self.dir, self.args.agent) else { return };
        let list = match crate::instructions::fetch(connection.channel(), &self.identity.project).await {
            Ok(list) => list,
            Err(error) => {
                self.log.write(self.args.event, Some(self.session_id), &format!("standing instructions: {error}"));
                return;
            }
        };
        let written = {
            let path = path.clone();
            tokio::task::spawn_blocking(move || crate::instructions::sync_file(&path, &list)).await
        };
        let message = match written {
            Ok(Ok(synced)) if synced.conflicts.is_empty() && synced.text.is_none() => return,
            Ok(Ok(synced)) => {
                let mut message = crate::instructions::summary(&path, &synced);
                for conflict in &synced.conflicts {
                    message.push_str(&format!("; {conflict}"));
                }
                message
            }
            Ok(Err(error)) => format!("cannot write {}: {error}", path.display()),
            Err(error) => format!("writing {} stopped: {error}", path.display()),
        };
        self.log.write(self.args.event, Some(self.session_id), &format!("standing instructions: {message}"));
    }

    /// Notes the agent session as the one the repository is in now, for
    /// an MCP server its agent told nothing (see [`crate::current_session`]).
    fn note_session(&self) {
        let repository = crate::identity::repository_root(&self.dir).unwrap_or_else(|| self.dir.clone());
        let noted = crate::current_session::remember(
            &crate::home::state_dir(),
            self.args.agent,
            &repository,
            &self.agent_session,
        );
        if let Err(error) = noted {
            self.log.write(
                self.args.event,
                Some(self.session_id),
                &format!("cannot note the current session: {error}"),
            );
        }
    }

    async fn user_prompt_submit(&self, input: &HookInput) -> Result<Option<String>, AgentError> {
        self.note_session();
        let prompt = input.prompt.trim();
        let title: String = prompt.lines().next().unwrap_or_default().chars().take(200).collect();
        let mut locked = self.state().await?;
        if !locked.state.started || locked.state.ended {
            self.start_session(&input.source, input.model_name()).await?;
            locked.state.started = true;
            locked.state.ended = false;
        }
        if locked.state.task_title.is_empty() {
            locked.state.task_title = title.clone();
        }
        self.save(locked).await?;
        let Some(connection) = self.connection.as_ref().filter(|_| !prompt.is_empty()) else { return Ok(None) };
        let description: String = prompt.chars().take(8000).collect();
        let missing_files = self.missing_cited_files().await;
        let task = proto::BriefTask { title, description, ..Default::default() };
        let request = proto::BriefRequest {
            budget_chars: self.args.prompt_briefing_chars,
            omit_given: true,
            omit_last_session: true,
            surface: proto::InjectionSurface::Prompt as i32,
            missing_files,
            at_call: self.at_call(),
            ..requests::brief(&self.identity, self.session_id, task)
        };
        let mut agent = connection.agent();
        let (briefing, ()) = tokio::join!(agent.brief(request), self.refresh_calls(connection, false));
        Ok(context_answer(self.args.agent, HookEvent::UserPromptSubmit, &briefing?.into_inner().markdown))
    }

    /// What the briefing leaves to the call: the failures the call index
    /// warns of, from the index as it stands.
    fn at_call(&self) -> Vec<String> {
        crate::call_index::at_call(&crate::home::state_dir(), &self.identity.project, self.args.agent.as_str())
    }

    /// Refreshes the project's call index, which `pre-tool-use` answers
    /// from: always at session start, later only when this session has not
    /// or it is stale. What goes wrong is logged; the old index stays.
    async fn refresh_calls(&self, connection: &Connection, always: bool) {
        let project = &self.identity.project;
        let path = crate::call_index::path(&crate::home::state_dir(), project);
        if !always && crate::call_index::load(&path, project).is_some_and(|index| !index.needs_refresh(self.session_id))
        {
            return;
        }
        // A quarter of what is left stays for answering the agent.
        let deadline = Instant::now() + self.deadline.saturating_duration_since(Instant::now()) * 3 / 4;
        let message = match crate::call_index::refresh(connection, project, self.session_id, deadline).await {
            Ok(index) => match tokio::task::spawn_blocking(move || {
                pre_tool_use::prune_given(&crate::home::state_dir());
                crate::call_index::save(&path, &index)
            })
            .await
            {
                Ok(Ok(())) => return,
                Ok(Err(error)) => format!("cannot write the call index: {error}"),
                Err(error) => format!("writing the call index stopped: {error}"),
            },
            Err(error) => format!("the call index was not refreshed: {error}"),
        };
        self.log.write(self.args.event, Some(self.session_id), &message);
    }

    async fn post_tool_use(&self, input: &HookInput) -> Result<(), AgentError> {
        if input.tool_name.starts_with(&format!("mcp__{}__", self.args.mcp_name)) {
            return Ok(());
        }
        let failed = input.tool_failed();
        // Only a shell command can be a check: the patterns are compiled
        // for it alone, not for every Read.
        let check = match input.command() {
            Some(command) if record::is_shell(&input.tool_name) && !input.is_interrupt => {
                self.checks()?.check_of(command).map(|check| (check, checks::fold(command)))
            }
            _ => None,
        };
        let edited = record::edited_files(input);
        let typed = self.recognizers().recognize(input);
        let mut locked = self.state().await?;
        if !locked.state.started {
            self.start_session("", None).await?;
            locked.state.started = true;
        }
        let mut context = json!({
            "tool": input.tool_name,
            "input": record::input_summary(input),
            "agent_session_id": self.agent_session,
        });
        if !failed {
            context["response"] = record::response_summary(input);
        }
        // Kept for the call index: exit 1 of a grep found nothing.
        if let Some(code) = input.exit_code().filter(|_| input.command().is_some()) {
            context["exit_code"] = json!(code);
        }
        if let Some((name, _)) = &check {
            context["check"] = json!(name);
        }
        // A commit's trailers (`Fixes #12`) name the issue from then on.
        if let Some(issue) = typed.as_ref().and_then(|typed| typed.details.get("issue")?.as_str()) {
            locked.state.issue = issue.to_owned();
        }
        if let Some(epic) = typed.as_ref().and_then(|typed| typed.details.get("epic")?.as_str())
            && self.args.epic.is_none()
        {
            locked.state.epic = epic.to_owned();
        }
        // Inside a sub-agent, its `subagent` action is the parent; the tool
        // call that spawned a sub-agent is that action.
        let parent_action_id = locked.state.subagents.get(&input.agent_id).map(|spawn| spawn.action_id);
        let mut action_id = Uuid::now_v7();
        let action_type = match typed {
            Some(mut typed) => {
                let agent_type = typed.details.get("subagent_type").and_then(serde_json::Value::as_str);
                if typed.action_type == "subagent" {
                    let child = input.spawned_agent_id();
                    if let Some(spawn) = locked.state.spawned_by(child, agent_type) {
                        action_id = spawn.action_id;
                        typed.details.extend(spawn_details(&spawn));
                    } else if let Some(child) = child {
                        locked.state.launch_subagent(child, agent_type.unwrap_or_default(), action_id);
                    }
                }
                if let Some((runner, _)) = check.as_ref().filter(|_| typed.action_type == "test_run") {
                    typed.details.insert("runner".into(), json!(runner));
                }
                context["details"] = serde_json::Value::Object(typed.details);
                typed.action_type
            }
            None => "tool_call".to_owned(),
        };
        let action = proto::Action {
            action_id: action_id.to_string(),
            session_id: self.session_id.to_string(),
            project: self.identity.project.clone(),
            agent_id: self.identity.agent_id.clone(),
            action_type,
            issue_id: locked.state.issue.clone(),
            epic_id: self.args.epic.clone().unwrap_or_else(|| locked.state.epic.clone()),
            parent_action_id: parent_action_id.map(|id| id.to_string()).unwrap_or_default(),
            category: record::category(&input.tool_name),
            context: Some(lore_proto::json::to_struct(&context)),
            outcome: if failed { proto::Outcome::Failure } else { proto::Outcome::Success } as i32,
            error: if failed { record::error_text(input) } else { String::new() },
            duration_ms: input.duration_ms.unwrap_or(0),
            occurred_at: Some(requests::now()),
            ..Default::default()
        };
        self.send(vec![Write::Action(action)]).await?;
        locked.state.record_edits(&edited);
        if let Some((name, key)) = check {
            self.check_ran(&mut locked, input, &name, key, failed).await?;
        }
        self.save(locked).await
    }

    /// A check ran: a failure is captured (or, when it was failing already,
    /// is one more failed attempt); a pass after a failure is its fix.
    async fn check_ran(
        &self,
        locked: &mut LockedState,
        input: &HookInput,
        name: &str,
        key: String,
        failed: bool,
    ) -> Result<(), AgentError> {
        let state = &mut locked.state;
        // A pass says something only as the task's first result or as the
        // fix of its last failing check.
        let pass_is_news = !state.passed && state.open_checks.is_empty();
        match (state.open_checks.get_mut(&key), failed) {
            (None, false) if !pass_is_news => Ok(()),
            (None, false) => {
                state.passed = true;
                self.task_result(name, None).await
            }
            (None, true) => {
                let output = input.tool_output();
                let failure_id = Uuid::now_v7();
                let task = proto::Task {
                    task_id: requests::session_task(self.session_id),
                    title: state.task_title.clone(),
                    files: state.edited.clone(),
                    ..Default::default()
                };
                let failed = FailedCheck { name, output: &output, exit_code: input.exit_code().unwrap_or(1) };
                let capture = requests::capture_failure(
                    &self.identity,
                    self.session_id,
                    failure_id,
                    task,
                    &failed,
                    state.edited.clone(),
                );
                self.send(vec![Write::CaptureFailure(capture)]).await?;
                state.open_checks.insert(
                    key,
                    OpenCheck { failure_id, check: name.to_owned(), attempts: 0, edited_since: Vec::new() },
                );
                state.passed = false;
                self.task_result(name, Some(failure_id)).await
            }
            (Some(open), failed) => {
                open.attempts += 1;
                let files = std::mem::take(&mut open.edited_since);
                let approach = if files.is_empty() {
                    format!("ran {name} again without editing a file")
                } else {
                    format!("edited {}", files.join(", "))
                };
                let attempt = proto::RecordFixAttemptRequest {
                    attempt_id: Uuid::now_v7().to_string(),
                    failure_id: open.failure_id.to_string(),
                    attempt_number: open.attempts,
                    approach: approach.clone(),
                    files_changed: files,
                    summary: approach,
                    outcome: if failed { proto::FixOutcome::Failure } else { proto::FixOutcome::Success } as i32,
                    qa_result: if failed {
                        checks::error_lines(&input.tool_output()).join("\n")
                    } else {
                        format!("{name} passes")
                    },
                };
                self.send(vec![Write::RecordFixAttempt(attempt)]).await?;
                if !failed {
                    state.open_checks.remove(&key);
                    if state.open_checks.is_empty() {
                        state.passed = true;
                        return self.task_result(name, None).await;
                    }
                }
                Ok(())
            }
        }
    }

    /// The session's task passed or failed QA: the warnings it was given are
    /// scored by it.
    async fn task_result(&self, check: &str, failure_id: Option<Uuid>) -> Result<(), AgentError> {
        let result = requests::task_result(
            &self.identity.project,
            requests::session_task(self.session_id),
            self.session_id,
            check,
            failure_id,
        );
        self.send(vec![Write::RecordTaskResult(result)]).await
    }

    /// The repository's files lessons cite that are gone (none without
    /// Lore).
    async fn missing_cited_files(&self) -> Vec<String> {
        match &self.connection {
            Some(connection) => staleness::missing_cited_files(connection, &self.identity.project, &self.dir).await,
            None => Vec::new(),
        }
    }

    /// The recognizers of typed actions: the project's file first when one
    /// is set; a file that cannot be used is logged and Lore's are used.
    fn recognizers(&self) -> typed::Recognizers {
        let Some(path) = &self.args.action_types else { return typed::Recognizers::shipped() };
        typed::Recognizers::with_file(path).unwrap_or_else(|problem| {
            self.log.write(self.args.event, Some(self.session_id), &format!("LORE_ACTION_TYPES: {problem}"));
            typed::Recognizers::shipped()
        })
    }

    fn checks(&self) -> Result<Checks, AgentError> {
        let mut patterns = self.args.check_patterns.clone();
        if let Ok(extra) = std::env::var("LORE_CHECK_PATTERNS") {
            patterns.extend(extra.lines().map(str::trim).filter(|line| !line.is_empty()).map(str::to_owned));
        }
        Checks::new(&patterns).map_err(AgentError::Setup)
    }

    /// A sub-agent starts: the id of the `subagent` action it will be is
    /// chosen now, so what it does can name it as its parent. Nothing is
    /// sent.
    async fn subagent_start(&self, input: &HookInput) -> Result<(), AgentError> {
        if input.agent_id.trim().is_empty() {
            return Err(AgentError::invalid("agent_id", "SubagentStart needs the sub-agent's id"));
        }
        let mut locked = self.state().await?;
        locked.state.start_subagent(&input.agent_id, &input.agent_type);
        self.save(locked).await
    }

    /// A sub-agent stops. Claude Code records the Task tool call that
    /// spawned it next, and that call becomes its `subagent` action; other
    /// agents spawn without such a call, so the action is written now.
    async fn subagent_stop(&self, input: &HookInput) -> Result<(), AgentError> {
        if input.agent_id.trim().is_empty() {
            return Err(AgentError::invalid("agent_id", "SubagentStop needs the sub-agent's id"));
        }
        let mut locked = self.state().await?;
        let summary = checks::cut(input.last_assistant_message.as_deref().unwrap_or_default(), 500).to_owned();
        let spawn = locked.state.stop_subagent(&input.agent_id, &input.agent_type, summary);
        if spawn.recorded {
            // Launched in the background: its tool call is its action.
        } else if self.args.agent == AgentKind::ClaudeCode {
            locked.state.push_stopped(spawn);
        } else {
            let action = proto::Action {
                action_id: spawn.action_id.to_string(),
                session_id: self.session_id.to_string(),
                project: self.identity.project.clone(),
                agent_id: self.identity.agent_id.clone(),
                action_type: "subagent".into(),
                issue_id: locked.state.issue.clone(),
                epic_id: self.args.epic.clone().unwrap_or_else(|| locked.state.epic.clone()),
                category: "agent".into(),
                context: Some(lore_proto::json::to_struct(&json!({
                    "agent_session_id": self.agent_session,
                    "details": spawn_details(&spawn),
                }))),
                outcome: proto::Outcome::Success as i32,
                occurred_at: Some(requests::now()),
                ..Default::default()
            };
            self.send(vec![Write::Action(action)]).await?;
        }
        self.save(locked).await
    }

    async fn stop(&self, input: &HookInput) -> Result<(), AgentError> {
        let summary: String = input.last_assistant_message.as_deref().unwrap_or_default().chars().take(2000).collect();
        self.end(summary).await
    }

    async fn session_end(&self, input: &HookInput) -> Result<(), AgentError> {
        let reason = if input.reason.is_empty() { "other" } else { &input.reason };
        self.end(format!("the agent session ended ({reason})")).await
    }

    /// Ends the Lore session (ending an ended one changes nothing).
    async fn end(&self, summary: String) -> Result<(), AgentError> {
        let mut locked = self.state().await?;
        let end = proto::EndSessionRequest {
            session_id: self.session_id.to_string(),
            reason: proto::EndReason::Normal as i32,
            summary,
        };
        self.send(vec![Write::EndSession(end)]).await?;
        locked.state.ended = true;
        self.save(locked).await
    }
}

/// What a `subagent` action says of its sub-agent.
fn spawn_details(spawn: &state::Spawn) -> serde_json::Map<String, serde_json::Value> {
    let mut details = serde_json::Map::new();
    details.insert("agent_id".into(), json!(spawn.agent_id));
    if !spawn.agent_type.is_empty() {
        details.insert("agent_type".into(), json!(spawn.agent_type));
    }
    if !spawn.summary.is_empty() {
        details.insert("summary".into(), json!(spawn.summary));
    }
    details
}

/// The agent's answer carrying a briefing; nothing when it is empty.
fn context_answer(agent: AgentKind, event: HookEvent, markdown: &str) -> Option<String> {
    if markdown.trim().is_empty() {
        return None;
    }
    // Gemini CLI names the prompt's moment after its agent loop.
    let name = match (agent, event) {
        (AgentKind::Gemini, HookEvent::UserPromptSubmit) => "BeforeAgent",
        _ => event.agent_name(),
    };
    let answer = json!({
        "hookSpecificOutput": {
            "hookEventName": name,
            "additionalContext": markdown,
        }
    });
    Some(format!("{answer}\n"))
}

/// The branch and the changed files of the repository at `dir` (for the
/// warnings of those files), each read by git within a second; nothing
/// when it is not a repository.
async fn git_context(dir: &Path) -> (Option<String>, Vec<String>) {
    let git = |args: &'static [&'static str]| {
        let mut command = tokio::process::Command::new("git");
        command.arg("-C").arg(dir).args(args).stdin(std::process::Stdio::null()).stderr(std::process::Stdio::null());
        command.kill_on_drop(true);
        async move {
            let output = tokio::time::timeout(Duration::from_secs(1), command.output()).await.ok()?.ok()?;
            output.status.success().then(|| String::from_utf8_lossy(&output.stdout).into_owned())
        }
    };
    // symbolic-ref, not rev-parse: a branch with no commit yet has a name.
    let (branch, status) =
        tokio::join!(git(&["symbolic-ref", "--short", "-q", "HEAD"]), git(&["status", "--porcelain"]));
    let branch = branch.map(|branch| branch.trim().to_owned()).filter(|branch| !branch.is_empty() && branch != "HEAD");
    let files = status
        .unwrap_or_default()
        .lines()
        .filter_map(|line| line.get(3..))
        .map(|path| path.rsplit(" -> ").next().unwrap_or(path).trim_matches('"').to_owned())
        .filter(|path| !path.is_empty())
        .take(50)
        .collect();
    (branch, files)
}

/// Where hooks say what went wrong: `hooks.log` in the state directory
/// (kept under 1 MiB: the older half goes to `hooks.log.1`), and stderr,
/// which the agents show only in their verbose views.
#[derive(Debug, Clone)]
pub struct HookLog {
    path: PathBuf,
}

/// Past this, the log moves aside.
const MAX_LOG_BYTES: u64 = 1024 * 1024;

impl HookLog {
    pub fn new(dir: PathBuf) -> Self {
        Self { path: dir.join("hooks.log") }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn write(&self, event: HookEvent, session: Option<Uuid>, message: &str) {
        let line = format!(
            "{} lore hook {}{}: {}\n",
            chrono::Utc::now().format("%Y-%m-%dT%H:%M:%S%.3fZ"),
            event.arg_name(),
            session.map(|session| format!(" (session {session})")).unwrap_or_default(),
            message.replace('\n', " ")
        );
        let _ = std::io::stderr().write_all(line.as_bytes());
        if let Some(dir) = self.path.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        if std::fs::metadata(&self.path).is_ok_and(|metadata| metadata.len() > MAX_LOG_BYTES) {
            let _ = std::fs::rename(&self.path, self.path.with_extension("log.1"));
        }
        if let Ok(mut file) = std::fs::OpenOptions::new().create(true).append(true).open(&self.path) {
            let _ = file.write_all(line.as_bytes());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_briefing_is_answered_in_the_agents_format_and_nothing_is_said_without_one() {
        let answer =
            context_answer(AgentKind::ClaudeCode, HookEvent::SessionStart, "# Lore briefing\n- x \"quoted\"").unwrap();
        let parsed: serde_json::Value = serde_json::from_str(&answer).unwrap();
        assert_eq!(parsed["hookSpecificOutput"]["hookEventName"], "SessionStart");
        assert_eq!(parsed["hookSpecificOutput"]["additionalContext"], "# Lore briefing\n- x \"quoted\"");
        assert_eq!(parsed.as_object().unwrap().len(), 1, "no key Codex's strict schema would refuse");
        assert_eq!(context_answer(AgentKind::Codex, HookEvent::UserPromptSubmit, "  \n"), None);
        let gemini = context_answer(AgentKind::Gemini, HookEvent::UserPromptSubmit, "# Lore briefing").unwrap();
        assert!(gemini.contains("\"hookEventName\":\"BeforeAgent\""), "{gemini}");
    }

    #[test]
    fn budgets_are_those_the_agents_can_afford() {
        assert_eq!(HookEvent::PostToolUse.default_budget(), Duration::from_millis(100));
        assert!(HookEvent::SessionStart.default_budget() <= Duration::from_secs(2));
        for event in HookEvent::ALL {
            assert_eq!(<HookEvent as clap::ValueEnum>::from_str(event.arg_name(), false), Ok(event));
        }
    }
}
