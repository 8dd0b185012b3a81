//! `lore session start|end`, and the session `lore log` uses when it is
//! given none: one per agent and project, remembered in the state
//! directory and started on first use, so that a shell script's actions
//! form one chained, resumable session without passing ids around.

use std::path::PathBuf;

use anyhow::Context as _;
use lore_agent::identity::{AgentKind, Identity};
use lore_proto::v1 as proto;
use tonic::Code;
use uuid::Uuid;

use crate::commands::Channel;

#[derive(clap::Subcommand)]
pub enum Command {
    /// Start a session and print its id; this agent's `lore log` calls in
    /// the project use it from now on.
    Start(StartArgs),
    /// End this agent's session in the project (or the one given).
    End(EndArgs),
}

#[derive(clap::Args)]
pub struct Who {
    #[arg(long, env = "LORE_PROJECT")]
    project: String,
    /// The agent; `LORE_AGENT_ID`, else `agent@<host>`.
    #[arg(long, env = "LORE_AGENT_ID")]
    agent: Option<String>,
}

impl Who {
    fn resolve(&self) -> (String, String) {
        let directory = std::env::current_dir().unwrap_or_default();
        let identity = Identity::resolve(Some(&self.project), self.agent.as_deref(), AgentKind::Other, &directory);
        (identity.project, identity.agent_id)
    }
}

#[derive(clap::Args)]
pub struct StartArgs {
    #[command(flatten)]
    who: Who,
    #[arg(long, default_value = "work", value_parser = ["work", "planning", "qa", "supervisor", "interactive"])]
    kind: String,
    /// What runs the agent, e.g. claude-code.
    #[arg(long, default_value = "")]
    supervisor: String,
}

#[derive(clap::Args)]
pub struct EndArgs {
    #[command(flatten)]
    who: Who,
    /// The session to end; this agent's current one when left out.
    #[arg(long)]
    session: Option<String>,
    #[arg(long, default_value = "normal", value_parser = ["normal", "network_disconnect", "error", "cancelled"])]
    reason: String,
    /// What the session achieved.
    #[arg(long, default_value = "")]
    summary: String,
}

pub async fn run(channel: Channel, command: Command) -> anyhow::Result<()> {
    match command {
        Command::Start(args) => {
            let (project, agent) = args.who.resolve();
            let kind = proto::SessionKind::from_str_name(&format!("SESSION_KIND_{}", args.kind.to_uppercase()))
                .unwrap_or(proto::SessionKind::Work);
            let session_id = start(channel, &project, &agent, kind, &args.supervisor).await?;
            println!("{session_id}");
            Ok(())
        }
        Command::End(args) => {
            let (project, agent) = args.who.resolve();
            let remembered = CurrentSession::new(&project, &agent);
            let session_id = match &args.session {
                Some(session) => session.clone(),
                None => remembered
                    .read()
                    .map(|id| id.to_string())
                    .with_context(|| format!("agent {agent} has no current session in project {project}"))?,
            };
            let reason = proto::EndReason::from_str_name(&format!("END_REASON_{}", args.reason.to_uppercase()))
                .unwrap_or(proto::EndReason::Normal);
            let request = proto::EndSessionRequest {
                session_id: session_id.clone(),
                reason: reason.into(),
                summary: args.summary,
            };
            crate::commands::actions_client(channel).end_session(request).await?;
            if remembered.read().is_some_and(|current| current.to_string() == session_id) {
                remembered.forget();
            }
            println!("{session_id} ended");
            Ok(())
        }
    }
}

/// Starts a session for the agent in the project and remembers it as the
/// agent's current one.
async fn start(
    channel: Channel,
    project: &str,
    agent: &str,
    kind: proto::SessionKind,
    supervisor: &str,
) -> anyhow::Result<Uuid> {
    let session_id = Uuid::now_v7();
    let request = proto::StartSessionRequest {
        session_id: session_id.to_string(),
        project: project.to_owned(),
        agent_id: agent.to_owned(),
        supervisor_type: supervisor.to_owned(),
        kind: kind.into(),
        started_at: Some(crate::convert::now()),
        ..Default::default()
    };
    crate::commands::actions_client(channel).start_session(request).await?;
    CurrentSession::new(project, agent).remember(session_id)?;
    Ok(session_id)
}

/// The session `lore log` should use for the agent in the project: the
/// current one, or one started now. `stale` is the one the server did not
/// know, which is replaced.
pub async fn current_or_new(
    channel: Channel,
    project: &str,
    agent: Option<&str>,
    stale: Option<Uuid>,
) -> anyhow::Result<(Uuid, String)> {
    let who = Who { project: project.to_owned(), agent: agent.map(str::to_owned) };
    let (project, agent) = who.resolve();
    let current = CurrentSession::new(&project, &agent);
    if let Some(session_id) = current.read().filter(|session_id| Some(*session_id) != stale) {
        return Ok((session_id, agent));
    }
    let session_id = start(channel, &project, &agent, proto::SessionKind::Work, "cli").await?;
    eprintln!("started session {session_id} for agent {agent} in project {project}");
    Ok((session_id, agent))
}

/// Whether an error says the session is unknown to the server (another
/// server, a database reset) or over: a new one is needed.
pub fn is_gone(error: &tonic::Status) -> bool {
    matches!(error.code(), Code::NotFound | Code::FailedPrecondition) && error.message().contains("session")
}

/// The file that remembers an agent's current session in a project.
struct CurrentSession {
    path: PathBuf,
}

impl CurrentSession {
    fn new(project: &str, agent: &str) -> Self {
        let digest = blake3::hash(format!("{project}\u{1f}{agent}").as_bytes()).to_hex();
        let path = lore_agent::home::state_dir().join("cli-sessions").join(format!("{project}-{}", &digest[..16]));
        Self { path }
    }

    fn read(&self) -> Option<Uuid> {
        std::fs::read_to_string(&self.path).ok().and_then(|text| Uuid::parse_str(text.trim()).ok())
    }

    fn remember(&self, session_id: Uuid) -> anyhow::Result<()> {
        let folder = self.path.parent().expect("the file is in a folder");
        std::fs::create_dir_all(folder).with_context(|| format!("cannot create {}", folder.display()))?;
        std::fs::write(&self.path, format!("{session_id}\n"))
            .with_context(|| format!("cannot remember the session in {}", self.path.display()))
    }

    fn forget(&self) {
        let _ = std::fs::remove_file(&self.path);
    }
}
