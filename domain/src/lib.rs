//! lore-domain: what Lore does, over lore-store and lore-types: the three
//! services' domains and what spans them. No SQL (the store speaks it) and
//! no wire types (the server's handlers convert into these).
//!
//! # Layout
//! - [`actions`]: the append-only, hash-chained action log, sessions,
//!   resume, export and retention.
//! - [`knowledge`]: lessons with their solutions, hybrid search, indexed
//!   markdown and drafts.
//! - [`qa`]: failures grouped into patterns, warnings measured, proven
//!   patterns promoted.
//! - [`briefing`]: AgentService's one-call briefing, over the three.
//! - [`ledger`]: what Lore put into each agent's context and what it
//!   withheld.
//! - [`screening`]: the injection screen applied to an item's parts, a leaf
//!   that knowledge, qa and briefing call.
//! - [`trust`]: the quarantine of what the screen holds, and erasure; above
//!   knowledge and qa, which it releases into and erases from.
//! - [`reports`]: the activity reports, read apart from their rendering.
//! - [`console`]: what the web console reads beyond the services, from the
//!   read pools.
//! - [`background`]: the tasks a service runs beside its calls.
//! - [`metrics`]: the instruments the domain records on.

pub mod actions;
pub mod background;
pub mod briefing;
pub mod console;
pub mod injections;
pub mod knowledge;
pub mod metrics;
pub mod qa;
pub mod reports;
pub mod screening;
pub mod settings;
pub mod trust;

pub use lore_types::Error;
