//! The wire form of regrouping proposals: the moves re-mining offers a
//! person instead of making, and a person's decision on one.

use lore_proto::v1 as proto;
use uuid::Uuid;

use crate::grpc::convert::{FieldError, FieldResult, enum_value, required_uuid, to_timestamp};
use lore_types::actions::StoredName as _;
use lore_types::qa::remining::{RegroupingDecision, RegroupingProposal};

pub fn proposal_to_proto(proposal: &RegroupingProposal) -> proto::RegroupingProposal {
    proto::RegroupingProposal {
        proposal_id: proposal.proposal_id.to_string(),
        project: proposal.project.clone(),
        kind: proposal.kind().to_owned(),
        template: proposal.template.clone(),
        pattern_ids: proposal.pattern_ids.iter().map(Uuid::to_string).collect(),
        occurrences: u32::try_from(proposal.occurrences).unwrap_or(u32::MAX),
        proposed_at: Some(to_timestamp(proposal.proposed_at)),
        state: proposal.state.as_str().to_owned(),
        decided_by: proposal.decided_by.clone(),
        decided_at: proposal.decided_at.map(to_timestamp),
    }
}

/// A DecideRegroupingProposal request as (project, proposal, decision).
pub fn decision(request: &proto::DecideRegroupingProposalRequest) -> FieldResult<(String, Uuid, RegroupingDecision)> {
    let project = lore_types::validate::project("project", &request.project)?;
    let proposal_id = required_uuid("proposal_id", &request.proposal_id)?;
    let decision = match enum_value::<proto::RegroupingDecision>("decision", request.decision)? {
        proto::RegroupingDecision::Unspecified => {
            return Err(FieldError::new("decision", "required: accept or reject"));
        }
        proto::RegroupingDecision::Accept => RegroupingDecision::Accept,
        proto::RegroupingDecision::Reject => RegroupingDecision::Reject,
    };
    Ok((project, proposal_id, decision))
}
