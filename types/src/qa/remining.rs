//! What one re-mining of a project did, the evidence it went by, and the
//! moves it proposed to a person instead of making.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

pub use super::mask_proposals::ProposalState;
pub use lore_grouping::convention::LiteralEvidence;
pub use lore_grouping::evidence::{Agreement, Verdict};

/// What one re-mining of a project changed, and the description length of
/// its recent groups before and after (`lore_grouping::criterion`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Remined {
    pub occurrences: usize,
    pub merges: usize,
    pub splits: usize,
    /// Changes Brain proposed that the criterion turned down.
    pub rejected: usize,
    /// Patterns that took the template their occurrences share under the
    /// project's masks now.
    pub moves: usize,
    /// Bits to describe the recent occurrences in their groups, summed
    /// over categories, before and after.
    pub bits_before: f64,
    pub bits_after: f64,
    /// What the project's people's corrections say of re-mining
    /// (`lore_grouping::evidence`).
    pub evidence: Verdict,
    /// Whether the criterion's changes were made (the evidence supports
    /// them) rather than proposed.
    pub automatic: bool,
    /// Moves proposed to a person instead.
    pub proposed: usize,
    /// What the people's corrections say of reading the project literally
    /// (`lore_grouping::convention`).
    pub literal: LiteralEvidence,
    /// Whether the project is read literally after this re-mining.
    pub read_literally: bool,
}

impl Remined {
    /// How much shorter the description became, as a share (0 when nothing
    /// was read).
    pub fn shorter_by(&self) -> f64 {
        if self.bits_before > 0.0 { 1.0 - self.bits_after / self.bits_before } else { 0.0 }
    }
}

/// A project's last re-mining.
#[derive(Debug, Clone, PartialEq)]
pub struct RemineRun {
    pub project: String,
    pub remined_at: DateTime<Utc>,
    pub remined: Remined,
}

/// One step of a proposed move, as stored and carried out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RegroupingStep {
    /// Moves these occurrences out of `from` into a new pattern.
    Split { from: Uuid, occurrences: Vec<Uuid>, template: String },
    /// Merges `sources` into `into`.
    Merge { into: StepTarget, sources: Vec<StepTarget>, template: String },
}

/// A pattern, or the one an earlier split of the same move makes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepTarget {
    Pattern(Uuid),
    /// The new pattern of the move's step at this index.
    SplitOf(usize),
}

/// One move re-mining proposes, waiting for a person: a merge with the
/// parts it takes, or a split.
#[derive(Debug, Clone, PartialEq)]
pub struct RegroupingProposal {
    pub proposal_id: Uuid,
    pub project: String,
    /// The move's kind and the patterns it touches: the same move is
    /// proposed once.
    pub move_key: String,
    pub steps: Vec<RegroupingStep>,
    /// The group the move makes, as Brain mines it.
    pub template: String,
    /// The patterns it touches.
    pub pattern_ids: Vec<Uuid>,
    /// Occurrences it moves.
    pub occurrences: usize,
    pub proposed_at: DateTime<Utc>,
    pub state: ProposalState,
    pub decided_by: String,
    pub decided_at: Option<DateTime<Utc>>,
}

impl RegroupingProposal {
    /// What kind of move it is, for people: "merge", "split" or
    /// "move" (a part split out and merged with others).
    pub fn kind(&self) -> &'static str {
        let splits = self.steps.iter().filter(|step| matches!(step, RegroupingStep::Split { .. })).count();
        match (splits, self.steps.len() - splits) {
            (0, _) => "merge",
            (_, 0) => "split",
            _ => "move",
        }
    }
}

/// What a person decides about a regrouping proposal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RegroupingDecision {
    /// Make the move, as the person's own correction.
    Accept,
    /// Leave the groups as they are; the move is not proposed again.
    Reject,
}
