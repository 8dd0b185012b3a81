//! QA → Grouping masks, the regroupings: the merges and splits re-mining
//! would make where this project's people have not shown that its
//! criterion holds for them, each with a form to accept it (the move is
//! made in the person's name) or reject it (it is not proposed again; the
//! masks page handles the form).

use maud::{Markup, html};

use super::layout;
use super::viewer::Viewer;
use lore_types::qa::remining::RegroupingProposal;

pub const DECIDE: &str = "/lore.v1.QaLearningService/DecideRegroupingProposal";

/// The open proposals, for the masks page; each form posts to `action`.
pub fn section(viewer: &Viewer, action: &str, proposals: &[RegroupingProposal]) -> Markup {
    let may_decide = viewer.may(DECIDE);
    html! {
        h2 #regroupings { "Proposed regroupings" }
        @if proposals.is_empty() {
            p.muted { "No open proposal. Where re-mining would merge or split this project's patterns and its people \
                       have not shown that it groups as they would, the move waits here." }
        } @else {
            p { "Re-mining read every recent message at once and would regroup these. Nothing here has changed yet: \
                 re-mining has not yet shown it would make this project's people's merges and splits, so each move \
                 waits for a person. Accepting makes it in your name; rejecting keeps it from being proposed again." }
            table {
                thead { tr { th { "Move" } th { "The group it makes" } th { "Patterns" } th { "Occurrences moved" }
                    @if may_decide { th { span.muted { "Decide" } } } } }
                tbody { @for proposal in proposals { tr {
                    td { (proposal.kind()) }
                    td { code { (proposal.template) } }
                    td { (proposal.pattern_ids.len()) }
                    td { (proposal.occurrences) }
                    @if may_decide { td {
                        form method="post" action=(action) {
                            (layout::csrf_field(viewer))
                            input type="hidden" name="proposal_id" value=(proposal.proposal_id);
                            button type="submit" name="decision" value="accept"
                                aria-label={ "Accept the " (proposal.kind()) " into " (proposal.template) } { "Accept" }
                            button.danger type="submit" name="decision" value="reject"
                                aria-label={ "Reject the " (proposal.kind()) " into " (proposal.template) } { "Reject" }
                        }
                    } }
                } } }
            }
            @if !may_decide { p.muted { "Deciding a proposal needs an admin token." } }
        }
    }
}
