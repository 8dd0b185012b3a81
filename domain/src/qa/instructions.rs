//! Where the server writes standing instructions itself: the instructions
//! file of a project on the server's own disk (`[[qa.instructions]]`), for a
//! single host whose repositories sit beside the server. In a fleet the
//! repositories are on the agents' machines, and `lore instructions sync`
//! and the SessionStart hook write them there from
//! `QaLearningService.StandingInstructions`; the editing is
//! `lore_instructions`'s either way.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

pub use lore_instructions::{Edit, apply, remove, upsert};

/// `[[qa.instructions]]`: the instructions file of one project.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InstructionsFile {
    pub project: String,
    /// E.g. `/srv/repos/shop/AGENTS.md`; created when missing.
    pub file: PathBuf,
}
