//! What trust holds: quarantined text, and erasures.

pub mod erasure;
pub mod quarantine;
