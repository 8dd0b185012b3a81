//! Masks proposed from a person's merges, and a person's decision on each.
//! The proposal itself is `lore_grouping::mask_proposals`; here it is made
//! only for a person's merge (re-mining's merges follow the criterion, not
//! a correction), stored with the merge, listed, and accepted (the mask is
//! added and the project re-mined) or rejected.

use uuid::Uuid;

use super::QaLearning;
use super::remining::Remined;
use crate::Error;
use lore_store::qa::mask_proposals as store;
use lore_store::qa::masks as masks_store;
use lore_types::qa::mask_proposals::{MaskDecision, MaskProposal, ProposalState};
use lore_types::qa::{ChangedBy, GroupingMask, Merge, Pattern};
use lore_types::scope::ProjectScope;

const MAX_DESCRIPTION_CHARS: usize = 2000;

/// The proposal a merge implies, if any, from the patterns as they were
/// before it: only a person's merges propose.
pub(super) fn implied(merge: &Merge, before: &[Pattern]) -> Option<MaskProposal> {
    if merge.by != ChangedBy::Person {
        return None;
    }
    let survivor = before.iter().find(|pattern| pattern.pattern_id == merge.into)?;
    let sources: Vec<&Pattern> = before.iter().filter(|pattern| pattern.pattern_id != merge.into).collect();
    let templates: Vec<&str> = sources.iter().map(|source| source.template.as_str()).collect();
    let proposal = lore_grouping::mask_proposals::propose(&survivor.template, &templates)?;
    Some(MaskProposal {
        proposal_id: Uuid::now_v7(),
        project: survivor.project.clone(),
        name: proposal.name,
        pattern: proposal.pattern,
        examples: proposal.examples,
        pattern_ids: std::iter::once(survivor.pattern_id)
            .chain(sources.iter().map(|source| source.pattern_id))
            .collect(),
        proposed_by: merge.actor.clone(),
        proposed_at: chrono::Utc::now(),
        state: ProposalState::Open,
        decided_by: String::new(),
        decided_at: None,
        mask_name: String::new(),
    })
}

/// What deciding a proposal did.
#[derive(Debug, Clone)]
pub struct Decided {
    pub proposal: MaskProposal,
    /// The mask added, when accepted.
    pub mask: Option<GroupingMask>,
    /// What re-mining changed (nothing when rejected).
    pub remined: Remined,
}

impl QaLearning {
    /// A project's mask proposals, newest first: the open ones, or all.
    pub async fn mask_proposals(
        &self,
        scope: &ProjectScope,
        project: &str,
        decided_too: bool,
    ) -> Result<Vec<MaskProposal>, Error> {
        scope.require(project)?;
        store::proposals(&self.pool, project, decided_too).await
    }

    /// A person's decision on an open proposal. Accepting adds the mask
    /// (under the name given, else the proposal's or the first free one
    /// after it) and re-mines the project, as adding it by hand does.
    pub async fn decide_mask_proposal(
        &self,
        scope: &ProjectScope,
        project: &str,
        proposal_id: Uuid,
        decision: &MaskDecision,
        by: &str,
    ) -> Result<Decided, Error> {
        scope.require(project)?;
        let name = match decision {
            MaskDecision::Reject => {
                let proposal = store::reject(&self.pool, project, proposal_id, by).await?;
                return Ok(Decided { proposal, mask: None, remined: Remined::default() });
            }
            MaskDecision::Accept { name } => name,
        };
        let proposal = store::proposal(&self.pool, project, proposal_id).await?;
        let name = match name {
            Some(name) => name.clone(),
            None => {
                let mut connection = self.pool.acquire().await?;
                free_name(&proposal.name, &masks_store::masks(&mut connection, project).await?)
            }
        };
        let mask = GroupingMask {
            project: project.to_owned(),
            name,
            pattern: proposal.pattern.clone(),
            description: description(&proposal),
            updated_by: by.to_owned(),
            updated_at: chrono::Utc::now(),
        };
        let (proposal, mask) = store::accept(&self.pool, proposal_id, &mask, super::masks::all_compile).await?;
        let remined = self.remine(scope, project, self.config.remine_window).await?;
        Ok(Decided { proposal, mask: Some(mask), remined })
    }
}

/// `name`, or the first of `name-2`, `name-3`, … no mask of the project has.
fn free_name(name: &str, taken: &[GroupingMask]) -> String {
    let free = |candidate: &str| !taken.iter().any(|mask| mask.name == candidate);
    if free(name) {
        return name.to_owned();
    }
    (2..).map(|index| format!("{name}-{index}")).find(|candidate| free(candidate)).expect("some suffix is free")
}

/// The mask's description: where it came from, within the 2,000
/// characters a description may hold.
fn description(proposal: &MaskProposal) -> String {
    let by = if proposal.proposed_by.is_empty() { "a person" } else { &proposal.proposed_by };
    let text = format!("Proposed when {by} merged patterns that differ in {}.", proposal.examples.join(", "));
    text.chars().take(MAX_DESCRIPTION_CHARS).collect()
}
