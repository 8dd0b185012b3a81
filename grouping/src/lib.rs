//! How failure messages become patterns, with no database and no wire
//! types, so that the server, the CLI's evaluation and the tests share one
//! implementation:
//! - `template`: a message normalized into tokens, its variables masked by
//!   generic masks (numbers, hex, IPs, UUIDs, paths, URLs, quoted values);
//! - `masks`: a project's own masks, applied before the generic ones;
//! - `mask_proposals`: the mask a person's merge implies, proposed to a
//!   person;
//! - `matching`: online assignment, the most similar template of a
//!   message's route (Drain's fixed-depth tree);
//! - `brain`: which tokens are constant, decided by frequency over many
//!   messages (Brain);
//! - `remine`: where Brain and the online assignment disagree, the merges
//!   and splits that make the patterns agree, keeping their ids;
//! - `lengths`: patterns of one kind at several lengths, offered as
//!   merges after re-mining's own changes;
//! - `rehearsal`: re-mining rehearsed in memory, for evaluations and
//!   for the evidence test;
//! - `convention`: whether a project's people tell failures apart by the
//!   names they quote, decided by their splits;
//! - `evidence`: a project's people's corrections as the judge of whether
//!   re-mining may change its groups by itself;
//! - `criterion`: whether a change makes the groups better, by the minimum
//!   description length of the project's own messages;
//! - `accuracy`: group accuracy, the figure both are judged by.

#![forbid(unsafe_code)]

pub mod accuracy;
pub mod brain;
pub mod convention;
pub mod criterion;
pub mod evidence;
pub mod lengths;
pub mod mask_proposals;
pub mod masks;
pub mod matching;
pub mod rehearsal;
pub mod remine;
pub mod template;
