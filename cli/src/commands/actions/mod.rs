//! The audit log's commands: `lore log`, `lore session`, `lore actions
//! search`, `lore resume`, `lore report`, `lore export`.

pub mod export;
pub mod log;
pub mod report;
pub mod resume;
pub mod search;
pub mod session;
