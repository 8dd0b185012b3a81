//! `lore mcp`: Lore's MCP server over stdio, as an agent launches it
//! (`lore init` writes the command into the agent's configuration).

use std::time::Duration;

use lore_agent::connection::LoreAddress;
use lore_agent::identity::{AgentKind, Identity, lore_session_id};
use lore_agent::mcp::{LoreMcp, McpDefaults};
use rmcp::ServiceExt as _;

#[derive(clap::Args)]
pub struct Args {
    /// The Lore project (default: LORE_PROJECT, else the repository's name).
    #[arg(long, env = "LORE_PROJECT")]
    project: Option<String>,
    /// The agent's identity (default: LORE_AGENT_ID, else <agent>@<host>).
    #[arg(long, env = "LORE_AGENT_ID")]
    agent_id: Option<String>,
    /// Which agent launched the server: claude-code or codex (default: told
    /// by the environment it gives).
    #[arg(long, value_parser = lore_agent::hooks::parse_agent)]
    agent: Option<AgentKind>,
    /// The local sidecar, or "off".
    #[arg(long, env = "LORE_SIDECAR", default_value = lore_agent::connection::DEFAULT_SIDECAR)]
    sidecar: String,
    /// The Lore session to record in (default: the agent session's, from
    /// CLAUDE_CODE_SESSION_ID; else the one the agent's hooks last noted for
    /// this repository, as for Codex; else one the server starts).
    #[arg(long, env = "LORE_SESSION_ID")]
    session: Option<uuid::Uuid>,
}

pub async fn run(args: Args, mut address: LoreAddress) -> anyhow::Result<()> {
    // stdout carries the protocol: logs go to stderr.
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()))
        .with_writer(std::io::stderr)
        .init();
    address.sidecar = (args.sidecar != "off").then_some(args.sidecar);
    let kind = args.agent.unwrap_or_else(AgentKind::from_environment);
    let dir = std::env::current_dir()?;
    let identity = Identity::resolve(args.project.as_deref(), args.agent_id.as_deref(), kind, &dir);
    let session = args
        .session
        .or_else(|| kind.session_from_environment().map(|agent_session| lore_session_id(kind, &agent_session)));
    let repository = lore_agent::identity::repository_root(&dir).unwrap_or(dir);
    let defaults = McpDefaults {
        project: Some(identity.project),
        agent_id: identity.agent_id,
        kind,
        session,
        repository: Some(repository),
    };
    let mcp = LoreMcp::new(address, defaults, Duration::from_secs(2));
    let running = mcp.clone().serve(rmcp::transport::stdio()).await?;
    running.waiting().await?;
    mcp.finish().await;
    Ok(())
}
