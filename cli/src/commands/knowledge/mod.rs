//! The knowledge base's commands: `lore search`, `lore triage`, `lore
//! entry`, `lore index`, `lore instructions`, `lore drafts`, `lore
//! synonyms` and `lore categories`.

pub mod display;
pub mod drafts;
pub mod entry;
pub mod index;
pub mod instructions;
pub mod reviews;
pub mod search;
pub mod triage;
pub mod vocabulary;
