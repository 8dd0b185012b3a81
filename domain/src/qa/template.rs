//! Error messages as templates: lore-grouping's `template`, where the
//! normalization and the similarity that group messages live.

pub use lore_grouping::template::*;
