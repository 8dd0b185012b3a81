//! Which pattern a normalized message joins: lore-grouping's `matching`.

pub use lore_grouping::matching::*;
