//! The wire form of mask proposals: converting requests into domain types
//! and proposals back.

use lore_proto::v1 as proto;
use uuid::Uuid;

use crate::grpc::convert::{FieldError, FieldResult, enum_value, required_uuid, to_timestamp};
use lore_types::actions::StoredName as _;
use lore_types::qa::mask_proposals::{MaskDecision, MaskProposal};

pub fn proposal_to_proto(proposal: &MaskProposal) -> proto::MaskProposal {
    proto::MaskProposal {
        proposal_id: proposal.proposal_id.to_string(),
        project: proposal.project.clone(),
        name: proposal.name.clone(),
        pattern: proposal.pattern.clone(),
        examples: proposal.examples.clone(),
        pattern_ids: proposal.pattern_ids.iter().map(Uuid::to_string).collect(),
        proposed_by: proposal.proposed_by.clone(),
        proposed_at: Some(to_timestamp(proposal.proposed_at)),
        state: proposal.state.as_str().to_owned(),
        decided_by: proposal.decided_by.clone(),
        decided_at: proposal.decided_at.map(to_timestamp),
        mask_name: proposal.mask_name.clone(),
    }
}

/// A DecideMaskProposal request as (project, proposal, decision).
pub fn decision(request: &proto::DecideMaskProposalRequest) -> FieldResult<(String, Uuid, MaskDecision)> {
    let project = lore_types::validate::project("project", &request.project)?;
    let proposal_id = required_uuid("proposal_id", &request.proposal_id)?;
    let decision = match enum_value::<proto::MaskDecision>("decision", request.decision)? {
        proto::MaskDecision::Unspecified => return Err(FieldError::new("decision", "required: accept or reject")),
        proto::MaskDecision::Accept => MaskDecision::accept("name", &request.name)?,
        proto::MaskDecision::Reject if !request.name.is_empty() => {
            return Err(FieldError::new("name", "only an acceptance takes a name"));
        }
        proto::MaskDecision::Reject => MaskDecision::Reject,
    };
    Ok((project, proposal_id, decision))
}
