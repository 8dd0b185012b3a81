//! lore-agent: where coding agents meet Lore.
//!
//! The agents people run (Claude Code, Codex, Cursor) do not take generated
//! gRPC clients. They take MCP servers (tools a model calls) and hooks
//! (commands they run at session start, around every tool call, at the
//! end). This crate is both, for the `lore` CLI (`lore mcp`, `lore hook`,
//! `lore init`) and for lore-sidecar (MCP over streamable HTTP), so that
//! searching before planning, logging every action and capturing failures
//! happen without the agent remembering to do them.
//!
//! # Layout
//! - [`identity`]: who speaks: the project, the agent, and the one Lore
//!   session of an agent session, whichever process speaks for it.
//! - [`connection`]: how to reach Lore: the local sidecar when it runs
//!   (writes spooled, reads proxied), else the server.
//! - [`home`]: where Lore keeps its files on the agent's machine.
//! - [`outbox`]: writes kept on this machine while neither the sidecar nor
//!   the server answers, sent in order once Lore is back.
//! - [`checks`]: which shell commands are QA checks, and the error lines of
//!   their output.
//! - [`mcp`]: the MCP server: its tools, over stdio and streamable HTTP.
//! - [`requests`]: the requests hooks and MCP tools both send, built once.
//! - [`hooks`]: `lore hook <event>`: the agents' hook JSON in, their
//!   answer out, within a time budget, failing open.
//! - [`instructions`]: the project's standing instructions written into
//!   the repository's CLAUDE.md or AGENTS.md, where it lives.
//! - [`init`]: `lore init claude-code|codex`: the MCP server and the hooks
//!   merged into a repository's configuration.
//! - [`error`]: the crate's error, as sentences.

pub mod call_index;
pub mod checks;
pub mod codex_trust;
pub mod connection;
pub mod current_session;
pub mod error;
pub mod pending_injections;
/// Moved to `lore-calls`, where the server's domain reads it too.
pub use lore_calls::failure_lines;
pub mod home;
pub mod hooks;
pub mod identity;
pub mod init;
pub mod instructions;
pub mod mcp;
mod ordered_json;
pub mod outbox;
pub mod requests;

pub use error::AgentError;
