//! The `x-lore-*` metadata of the wire contract: what clients say of
//! themselves beside the bearer token, and what a sidecar says back.

/// What kind of client sends a call: `cli`, `hook`, `mcp`, `sidecar`. The
/// server records it as where what is written came from.
pub const CLIENT: &str = "x-lore-client";
/// The agent a call speaks for (`gen_ai.agent.id` in traces).
pub const AGENT_ID: &str = "x-lore-agent-id";
/// The Lore session a call belongs to: Knowledge and QA calls are logged as
/// tool calls of it.
pub const SESSION_ID: &str = "x-lore-session-id";
/// The project an MCP request over HTTP speaks for.
pub const PROJECT: &str = "x-lore-project";
/// On a response: the sidecar spooled the write on its disk rather than the
/// server processing it (`true`).
pub const SPOOLED: &str = "x-lore-spooled";
