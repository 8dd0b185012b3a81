//! Masks proposed from a person's merges (`lore_grouping::mask_proposals`):
//! each waits for a person to accept it, which adds the mask and re-mines
//! the project, or to reject it, which keeps the same expression from being
//! proposed again. Nothing becomes a mask without a person.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::actions::StoredName;
use crate::validate::{self, FieldResult};

/// Where a proposal stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, strum::IntoStaticStr, strum::EnumString)]
#[strum(serialize_all = "snake_case")]
pub enum ProposalState {
    /// Waiting for a person.
    Open,
    /// A person made it a mask.
    Accepted,
    /// A person turned it down; the expression is not proposed again.
    Rejected,
}

impl StoredName for ProposalState {}

/// One proposed mask. A merge makes it open; the store keeps its id and
/// the rest, and sets when it was proposed.
#[derive(Debug, Clone, PartialEq)]
pub struct MaskProposal {
    pub proposal_id: Uuid,
    pub project: String,
    /// The name it takes unless the person gives another.
    pub name: String,
    pub pattern: String,
    /// The differing tokens of the merged templates it was drawn from.
    pub examples: Vec<String>,
    /// The merge's survivor first, then the patterns merged into it.
    pub pattern_ids: Vec<Uuid>,
    /// Who made the merge.
    pub proposed_by: String,
    pub proposed_at: DateTime<Utc>,
    pub state: ProposalState,
    /// Who decided, and when; empty and `None` while open.
    pub decided_by: String,
    pub decided_at: Option<DateTime<Utc>>,
    /// The mask's name once accepted.
    pub mask_name: String,
}

/// What a person decides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MaskDecision {
    /// Add the mask, under `name` when given, else the proposal's own name
    /// (or the first free one after it).
    Accept {
        name: Option<String>,
    },
    Reject,
}

impl MaskDecision {
    /// An acceptance with the name a person typed, checked: empty means the
    /// proposal's own.
    pub fn accept(field: &str, name: &str) -> FieldResult<Self> {
        let name = validate::optional_name(field, name, lore_grouping::masks::MAX_NAME_CHARS)?;
        if let Some(name) = &name {
            lore_grouping::masks::check_name(name).map_err(|error| validate::FieldError::new(field, error.message))?;
        }
        Ok(Self::Accept { name })
    }
}
