//! What plugs agents in: `lore init`, `lore mcp`, `lore sidecar status`.

pub mod init;
pub mod mcp;
pub mod sidecar_status;
