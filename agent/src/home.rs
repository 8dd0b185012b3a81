//! Where Lore keeps its files on an agent's machine: the hooks' state and
//! log, and the outbox of writes waiting for Lore.

use std::path::PathBuf;

/// The state directory: `LORE_STATE_DIR`, else `$XDG_STATE_HOME/lore`, else
/// `~/.local/state/lore`, else a folder in the temporary directory.
pub fn state_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("LORE_STATE_DIR").filter(|dir| !dir.is_empty()) {
        return PathBuf::from(dir);
    }
    if let Some(dir) = std::env::var_os("XDG_STATE_HOME").filter(|dir| !dir.is_empty()) {
        return PathBuf::from(dir).join("lore");
    }
    match std::env::var_os("HOME").filter(|dir| !dir.is_empty()) {
        Some(home) => PathBuf::from(home).join(".local/state/lore"),
        None => std::env::temp_dir().join("lore-state"),
    }
}
