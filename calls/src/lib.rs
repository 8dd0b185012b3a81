//! What Lore knows at the moment an agent is about to run a command.
//!
//! - [`failure_lines`]: the lines of a failed command's output that
//!   explain its failure, the only lines a failure is named by.
//! - [`prose`]: lines that read as prose rather than as a tool's statement
//!   of what failed; they name no failure that reaches an agent.
//! - [`shape`]: a shell command reduced to what repeats across sessions:
//!   program, subcommand and flags, with paths and values masked, and the
//!   kind of action it is (a test run, a build, an install...).
//! - [`memory`]: over finished sessions, which failure each shape led to,
//!   in how many sessions, and what later worked in the same session.
//! - [`guard`]: a person's refusal of every call of one shape.
//! - [`select`]: what Lore says, chosen by its worth per token within a
//!   budget, and nothing when nothing is worth saying.
//! - [`policy`]: commands that are never offered as "what worked", however
//!   often they did.
//!
//! It is a leaf: the hook matches a pending call against a project's
//! memory without the server, and `lore eval replay` replays real runs
//! through the same code.

pub mod failure_lines;
pub mod guard;
pub mod memory;
pub mod policy;
pub mod prose;
pub mod select;
pub mod shape;

pub use guard::Guard;
pub use memory::{Call, CallMemory, CallWarning, KnownFix, Outcome, Strength};
pub use shape::{Kind, Shape};
