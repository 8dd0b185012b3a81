//! What the two queues of agents' words share (fixes to review, lessons to
//! review): the batch form that approves the ticked cards, a card's tick,
//! and a card's approve and reject forms.

use maud::{Markup, html};
use uuid::Uuid;

use super::layout;
use super::viewer::Viewer;

/// The form that approves the ticked cards at once. The ticks on the cards
/// belong to it (their `form` attribute), so a reviewer clears a page in
/// one submit.
pub const BATCH_FORM: &str = "approve-ticked";

pub fn approve_ticked_form(viewer: &Viewer, action: &str, label: &str) -> Markup {
    html! {
        form.actions-row id=(BATCH_FORM) method="post" action=(action) {
            (layout::csrf_field(viewer))
            button type="submit" { (label) }
        }
    }
}

/// A card's tick, in the batch form's `field`.
pub fn tick(field: &str, id: Uuid) -> Markup {
    html! {
        p { label { input type="checkbox" name=(field) value=(id) form=(BATCH_FORM); " Tick to approve with the others" } }
    }
}

/// A card's Approve, and its Reject with a required why, posting to
/// `action`.
pub fn decide_forms(viewer: &Viewer, action: &str, id: Uuid) -> Markup {
    html! {
        @for (decision, label) in [("approve", "Approve"), ("reject", "Reject")] {
            form.actions-row method="post" action=(action) {
                (layout::csrf_field(viewer))
                input type="hidden" name="decision" value=(decision);
                @if decision == "reject" {
                    label for={ "reject-" (id) } { "Why" }
                    input type="text" id={ "reject-" (id) } name="note" size="40" required;
                }
                button class=[(decision == "reject").then_some("danger")] type="submit" { (label) }
            }
        }
    }
}
