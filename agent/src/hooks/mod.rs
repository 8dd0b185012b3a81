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
//!
//! Each event's work has a file of its own, as each MCP tool has:
//! `session_start`, `user_prompt_submit`, `pre_tool_use`, `post_tool_use`,
//! `subagents` and `session_end`. This module reads the input, runs the
//! event within its budget and answers; what every event shares (the
//! session state, sending writes, the hooks' log) stays here.

pub mod adapter;
mod after_failure;
pub mod input;
mod post_tool_use;
mod pre_tool_use;
pub mod record;
mod session_end;
mod session_start;
mod staleness;
pub mod state;
mod subagents;
mod transcript;
pub mod typed;
mod user_prompt_submit;

use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use lore_spool::entry::Write;
use serde_json::json;
use tokio::time::Instant;
use uuid::Uuid;

use crate::AgentError;
use crate::connection::{Connection, LoreAddress};
use crate::identity::{AgentKind, Identity, lore_session_id};
use crate::outbox::{self, Outbox};
use input::HookInput;
use state::LockedState;

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
    /// Tokens the session-start briefing may take (where the last session
    /// stopped comes first). Every token is paid again at every later step
    /// of the run, so the budget is small and the briefing says only what
    /// is worth its tokens (`lore_calls::select`).
    #[arg(long, env = "LORE_START_TOKENS", default_value_t = START_TOKENS)]
    pub start_tokens: u32,
    /// Tokens a prompt's briefing may take.
    #[arg(long, env = "LORE_PROMPT_TOKENS", default_value_t = PROMPT_TOKENS)]
    pub prompt_tokens: u32,
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

/// The tokens a session-start briefing and a prompt's take unless told
/// otherwise.
pub const START_TOKENS: u32 = 60;
pub const PROMPT_TOKENS: u32 = 60;

/// A briefing's budget in tokens as a request's characters (four a token,
/// the ledger's estimate).
fn chars_of(tokens: u32) -> u32 {
    tokens.saturating_mul(4)
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
    let agent_session = agent_session(args, &input)?;
    let dir =
        if input.cwd.is_empty() { std::env::current_dir().unwrap_or_default() } else { PathBuf::from(&input.cwd) };
    let identity = Identity::resolve(args.project.as_deref(), args.agent_id.as_deref(), args.agent, &dir);
    let session_id = lore_session_id(args.agent, &agent_session);
    // Before every tool call: a local file answers, Lore is not asked.
    if args.event == HookEvent::PreToolUse {
        return Ok(before_tool_use(args, &identity.project, (session_id, &agent_session), &input, &dir, log));
    }
    // Right after a failure: a local file answers too, and the answer does
    // not wait on (or fail with) the record's writes below.
    let after_failure = (args.event == HookEvent::PostToolUse)
        .then(|| after_failure::answer(args.agent, &identity.project, session_id, &input, &crate::home::state_dir()))
        .flatten();
    // A sidecar that is not running refuses at once; one that hangs must
    // leave time for the server.
    let connection = match address.connect((budget / 3).min(Duration::from_millis(500)), "hook").await {
        Ok(connection) => Some(connection),
        Err(error) if error.is_unreachable() => {
            log.write(args.event, None, &format!("{error} The hook's writes wait in the outbox."));
            None
        }
        Err(error) if after_failure.is_some() => {
            log.write(args.event, Some(session_id), &error.to_string());
            return Ok(after_failure);
        }
        Err(error) => return Err(error),
    };
    let outbox = Outbox::local();
    let queued = drain_outbox(connection.as_ref(), &outbox, deadline, log, args.event, session_id).await?;
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
        HookEvent::PostToolUse => match hook.post_tool_use(&input).await {
            Ok(()) => Ok(after_failure),
            Err(error) if after_failure.is_some() => {
                log.write(args.event, Some(session_id), &error.to_string());
                Ok(after_failure)
            }
            Err(error) => Err(error),
        },
        HookEvent::Stop => hook.stop(&input).await.map(|()| None),
        HookEvent::SessionEnd => hook.session_end(&input).await.map(|()| None),
        HookEvent::SubagentStart => hook.subagent_start(&input).await.map(|()| None),
        HookEvent::SubagentStop => hook.subagent_stop(&input).await.map(|()| None),
    };
    // After the event's own work, which the agent waits on.
    hook.report_calls_given().await;
    answer
}

/// The agent's own session id: the hook input's, else the one the agent
/// set in the environment.
fn agent_session(args: &HookArgs, input: &HookInput) -> Result<String, AgentError> {
    if !input.session_id.trim().is_empty() {
        return Ok(input.session_id.clone());
    }
    args.agent.session_from_environment().ok_or_else(|| {
        AgentError::Setup("the hook input has no session_id, and the agent set none in the environment".into())
    })
}

/// Sends what the outbox holds before this hook's own writes, so the order
/// holds; returns whether writes still wait there (this hook's then wait
/// behind them).
async fn drain_outbox(
    connection: Option<&Connection>,
    outbox: &Outbox,
    deadline: Instant,
    log: &HookLog,
    event: HookEvent,
    session_id: Uuid,
) -> Result<bool, AgentError> {
    let mut queued = connection.is_none() && !outbox.is_empty();
    if let Some(connection) = connection
        && !outbox.is_empty()
    {
        // Half the budget at most: a parallel hook waiting on the outbox's
        // lock must still have time for its own write.
        let drain_until = Instant::now() + deadline.saturating_duration_since(Instant::now()) / 2;
        let drained = outbox.drain(&connection.channel(), drain_until).await?;
        if drained.delivered + drained.rejected > 0 {
            log.write(
                event,
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
    Ok(queued)
}

/// The pre-tool-use answer, from the call index on this machine; starts a
/// refresh of the index in the background when it is due.
fn before_tool_use(
    args: &HookArgs,
    project: &str,
    (session_id, agent_session): (Uuid, &str),
    input: &HookInput,
    dir: &Path,
    log: &HookLog,
) -> Option<String> {
    let state_dir = crate::home::state_dir();
    crate::call_index::mark_wired(&state_dir, args.agent.as_str());
    let answer = pre_tool_use::answer(args.agent, project, session_id, input, &state_dir);
    if crate::call_index::claim_background_refresh(&state_dir, project)
        && let Err(error) = refresh_in_background(args, project, agent_session, dir)
    {
        log.write(args.event, Some(session_id), &format!("cannot start a refresh of the call index: {error}"));
    }
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
    /// [`crate::pending_injections`]): sent, or kept in the outbox. A record Lore
    /// refuses is dropped with a line in the log, never retried forever.
    async fn report_calls_given(&self) {
        let mut taken = crate::pending_injections::take(&crate::home::state_dir());
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
