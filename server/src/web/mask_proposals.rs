//! QA → Grouping masks, the proposals: masks Lore proposed from a person's
//! merges, each with what it was drawn from and a form to accept it (under
//! its own name or another) or reject it (the masks page handles the form).
//! Nothing becomes a mask without this decision.

use maud::{Markup, html};

use super::layout;
use super::viewer::Viewer;
use lore_types::qa::mask_proposals::MaskProposal;

pub const DECIDE: &str = "/lore.v1.QaLearningService/DecideMaskProposal";

/// The open proposals, for the masks page; each form posts to `action`.
pub fn section(viewer: &Viewer, action: &str, proposals: &[MaskProposal]) -> Markup {
    let may_decide = viewer.may(DECIDE);
    html! {
        h2 { "Proposed masks" }
        @if proposals.is_empty() {
            p.muted { "No open proposal. When someone merges patterns whose templates differ only in words of one \
                       shape, the mask that would have merged them is proposed here." }
        } @else {
            p { "Each was drawn from a person's merge: the expression that would have grouped those patterns \
                 together, and nothing they share. Accepting adds it and re-mines the project; rejecting keeps \
                 it from being proposed again." }
            @for proposal in proposals {
                div.card {
                    p { code { (proposal.pattern) } " — differs in " (proposal.examples.join(", ")) }
                    p.muted {
                        "Proposed " (layout::time(proposal.proposed_at))
                        @if !proposal.proposed_by.is_empty() { " from a merge by " (proposal.proposed_by) }
                        " (" (proposal.pattern_ids.len()) " patterns)."
                    }
                    @if may_decide {
                        form method="post" action=(action) {
                            (layout::csrf_field(viewer))
                            input type="hidden" name="proposal_id" value=(proposal.proposal_id);
                            div.actions-row {
                                label for={ "name-" (proposal.proposal_id) } { "Name" }
                                input id={ "name-" (proposal.proposal_id) } type="text" name="name" size="20"
                                    value=(proposal.name) pattern="[A-Za-z0-9._\\-]{0,64}";
                                button type="submit" name="decision" value="accept"
                                    aria-label={ "Accept and re-mine the mask " (proposal.pattern) } { "Accept and re-mine" }
                                button.danger type="submit" name="decision" value="reject"
                                    aria-label={ "Reject the mask " (proposal.pattern) } { "Reject" }
                            }
                        }
                    }
                }
            }
            @if !may_decide { p.muted { "Deciding a proposal needs an admin token." } }
        }
    }
}
