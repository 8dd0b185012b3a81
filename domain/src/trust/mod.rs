//! Whether what Lore puts into an agent's context can be trusted.
//!
//! Lore is a channel between agents: what one agent writes, or one tool
//! prints, reaches every agent of the project through briefings, MCP
//! results and the standing instructions file. So every item that can get
//! there carries where it came from ([`Origin`]) and how far it is trusted
//! ([`Trust`]), and every text of it passes one screen (`crate::screening`) in
//! the domain layer before it is stored where a briefing reads it. What the
//! screen holds is quarantined ([`quarantine`]): stored, counted, shown to
//! people with the reason, and never injected until a person releases it.
//!
//! Trust decides what a briefing may say in an agent's words: the error a
//! tool printed is always shown, as quoted data; a fix's prose only when a
//! person reviewed it or a passing result verified it.
//!
//! # Layout
//! - this module: [`Trust`], [`Origin`].
//! - the screen itself is `crate::screening`, a leaf that knowledge and qa
//!   call, below this module, which calls them.
//! - [`quarantine`]: the review queue, release and erasure.
//! - [`erasure`]: a memory item erased with everything derived from it.

pub mod erasure;
pub mod quarantine;
