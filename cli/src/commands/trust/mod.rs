//! What agents wrote and what reached them: `lore quarantine`, `lore
//! injections`, and the review decisions `lore qa fixes` and `lore entry
//! review` share.

pub mod injections;
pub mod quarantine;
pub mod review_args;
