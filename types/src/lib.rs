//! lore-types: Lore's domain types, with no SQL and no wire types: what the
//! store persists, the domain works on and the handlers convert into.
//!
//! # Layout
//! - [`error`]: the [`Error`] every layer under the handlers returns.
//! - [`scope`]: the projects a caller may touch.
//! - [`validate`]: checks on input that name the offending field.
//! - [`actions`]: the action log (with its hash chain and queries).
//! - [`knowledge`]: entries, drafts, vocabulary and the ranking maths.
//! - [`qa`]: failures, patterns, warnings and their statistics.
//! - [`ledger`]: what was injected into an agent's context.
//! - [`trust`]: where an item came from and how far it is trusted.
//! - [`tokens`]: roles and callers.

pub mod actions;
pub mod error;
pub mod injections;
pub mod knowledge;
pub mod qa;
pub mod scope;
pub mod tokens;
pub mod trust;
pub mod validate;

pub use error::Error;
