//! Fixes to review: agents' successful fixes whose words wait for a person
//! (issue 56). A person reads each fix's words here, as data, beside what
//! it fixed, and approves it (its words become its patterns' reviewed fix
//! and gotcha, which briefings then say) or rejects it (never said). The
//! same queue is ListFixesToReview / ReviewFix and `lore qa fixes`.

use axum::extract::{Path, State};
use axum::response::Response;
use maud::{Markup, html};

use super::layout::{self, Section};
use super::viewer::{Submitted, Viewer};
use super::{Console, PageError, ProjectView, review_queue};
use crate::Error;
use lore_types::actions::StoredName as _;
use lore_types::qa::FixToReview;
use lore_types::qa::limits::MAX_NOTE_CHARS;
use lore_types::validate;

const REVIEW: &str = "/lore.v1.QaLearningService/ReviewFix";
const LIST: &str = "/lore.v1.QaLearningService/ListFixesToReview";
const SHOWN: i64 = 100;
/// The field of the batch form that approves the ticked fixes.
const BATCH_FIELD: &str = "attempt";

pub async fn queue(
    State(console): State<Console>,
    ProjectView { viewer, scope, project, params }: ProjectView,
) -> Result<Markup, PageError> {
    viewer.require(LIST)?;
    let fixes = console.qa.fixes_to_review(&scope, &project, SHOWN).await?;
    let approve_ticked = format!("{}/fixes/approve", layout::project_path(&project));
    let body = html! {
        (layout::notice(params.text(layout::DONE_FIELD)))
        p.muted { "What an agent wrote of a fix reaches no other agent until a person approves it here. \
                   Until then briefings say only what agents did: the failure, its counts, what passed after." }
        @if fixes.is_empty() { p.muted { "No fix waits for review." } }
        @if viewer.may(REVIEW) && !fixes.is_empty() {
            (review_queue::approve_ticked_form(&viewer, &approve_ticked, "Approve the ticked fixes"))
        }
        @for fix in &fixes { (fix_card(&viewer, fix)) }
    };
    Ok(layout::page(&viewer, &format!("{project}: fixes to review"), Some(&project), Section::Fixes, body))
}

fn fix_card(viewer: &Viewer, fix: &FixToReview) -> Markup {
    let attempt = &fix.attempt;
    let id = attempt.attempt_id;
    html! {
        article.card id={ "fix-" (id) } {
            @if viewer.may(REVIEW) { (review_queue::tick(BATCH_FIELD, id)) }
            p { span class={ "badge trust-" (attempt.trust.as_str()) } { (attempt.trust.as_str()) }
                " · " (layout::time(attempt.recorded_at)) " · task " code { (fix.task_id) }
                " · by " (attempt.origin.describe()) }
            @for template in &fix.templates { p { "Fixed: " code { (template) } } }
            // The agent's words, escaped: data for a person to read.
            p { "Approach: " q.agent-text { (attempt.approach) } }
            @if !attempt.summary.is_empty() { p { "Summary: " q.agent-text { (attempt.summary) } } }
            @if !attempt.files_changed.is_empty() { p { "Files: " (attempt.files_changed.join(", ")) } }
            @if viewer.may(REVIEW) { (review_queue::decide_forms(viewer, &format!("/fixes/{id}/review"), id)) }
        }
    }
}

pub async fn review(
    State(console): State<Console>,
    Path(raw_id): Path<String>,
    submitted: Submitted,
) -> Result<Response, PageError> {
    let Submitted { viewer, fields } = submitted;
    viewer.require(REVIEW)?;
    let approved = fields.approves()?;
    let attempt_id = validate::required_uuid("attempt_id", &raw_id).map_err(Error::from)?;
    let note = validate::text("note", fields.get("note").unwrap_or_default(), MAX_NOTE_CHARS, !approved)
        .map_err(Error::from)?;
    let (project, _) = console.qa.review_fix(&viewer.scope(), attempt_id, approved, &viewer.origin(), &note).await?;
    let verb = if approved { "approved: briefings now say it" } else { "rejected: it is never said" };
    Ok(layout::done_at(&format!("{}/fixes", layout::project_path(&project)), &format!("The fix is {verb}.")))
}

/// Approves every ticked fix: a person who has read a page of fixes clears
/// it in one submit (the CLI takes several ids the same way).
pub async fn approve_ticked(
    State(console): State<Console>,
    ProjectView { project, .. }: ProjectView,
    submitted: Submitted,
) -> Result<Response, PageError> {
    let Submitted { viewer, fields } = submitted;
    viewer.require(REVIEW)?;
    let ids = fields.ticked(BATCH_FIELD, SHOWN as usize, "fix")?;
    for attempt_id in &ids {
        console.qa.review_fix(&viewer.scope(), *attempt_id, true, &viewer.origin(), "").await?;
    }
    let done = match ids.len() {
        1 => "1 fix is approved: briefings now say it.".to_owned(),
        many => format!("{many} fixes are approved: briefings now say them."),
    };
    Ok(layout::done_at(&format!("{}/fixes", layout::project_path(&project)), &done))
}
