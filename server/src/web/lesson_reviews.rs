//! Lessons to review: entries agents wrote whose words wait for a person
//! (issue 56). A person reads each one here, as data, and approves it
//! (briefings and search then say it unchanged) or rejects it (never said).
//! The same queue is ListEntriesToReview / ReviewEntry and
//! `lore knowledge review`.

use axum::extract::{Path, State};
use axum::response::Response;
use maud::{Markup, html};

use super::layout::{self, Section};
use super::viewer::{Submitted, Viewer};
use super::{Console, PageError, ProjectView, review_queue};
use crate::Error;
use lore_types::actions::StoredName as _;
use lore_types::knowledge::Entry;
use lore_types::knowledge::limits::MAX_NOTE_CHARS;
use lore_types::validate;

const REVIEW: &str = "/lore.v1.KnowledgeService/ReviewEntry";
const LIST: &str = "/lore.v1.KnowledgeService/ListEntriesToReview";
const SHOWN: i64 = 100;
/// The field of the batch form that approves the ticked lessons.
const BATCH_FIELD: &str = "entry";

pub async fn queue(
    State(console): State<Console>,
    ProjectView { viewer, scope, project, params }: ProjectView,
) -> Result<Markup, PageError> {
    viewer.require(LIST)?;
    let entries = console.knowledge.entries_to_review(&scope, &project, SHOWN).await?;
    let approve_ticked = format!("{}/lessons/approve", layout::project_path(&project));
    let body = html! {
        (layout::notice(params.text(layout::DONE_FIELD)))
        p.muted { "What an agent wrote as a lesson reaches no other agent until a person approves it here. \
                   Approved, briefings and search say it as written." }
        @if entries.is_empty() { p.muted { "No lesson waits for review." } }
        @if viewer.may(REVIEW) && !entries.is_empty() {
            (review_queue::approve_ticked_form(&viewer, &approve_ticked, "Approve the ticked lessons"))
        }
        @for entry in &entries { (lesson_card(&viewer, entry)) }
    };
    Ok(layout::page(&viewer, &format!("{project}: lessons to review"), Some(&project), Section::Lessons, body))
}

fn lesson_card(viewer: &Viewer, entry: &Entry) -> Markup {
    let id = entry.entry_id;
    html! {
        article.card id={ "lesson-" (id) } {
            @if viewer.may(REVIEW) { (review_queue::tick(BATCH_FIELD, id)) }
            p { span class={ "badge trust-" (entry.trust.as_str()) } { (entry.trust.as_str()) }
                " · " (entry.kind.as_str()) " · " (layout::time(entry.updated_at))
                " · by " (entry.origin.describe()) }
            // The agent's words, escaped and never rendered as markdown:
            // data for a person to read.
            p { "Title: " q.agent-text { (entry.title) } }
            @if !entry.summary.is_empty() { p { "Summary: " q.agent-text { (entry.summary) } } }
            @if !entry.body.is_empty() { p { "Body: " q.agent-text { (entry.body) } } }
            @for solution in &entry.solutions { p { "Solution: " q.agent-text { (solution.description) } } }
            @for item in &entry.prevention_checklist { p { "Check: " q.agent-text { (item) } } }
            p { a href={ "/entries/" (id) } { "The lesson in full" } }
            @if viewer.may(REVIEW) { (review_queue::decide_forms(viewer, &format!("/lessons/{id}/review"), id)) }
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
    let entry_id = validate::required_uuid("entry_id", &raw_id).map_err(Error::from)?;
    let note = validate::text("note", fields.get("note").unwrap_or_default(), MAX_NOTE_CHARS, !approved)
        .map_err(Error::from)?;
    let entry = console.knowledge.review_entry(&viewer.scope(), entry_id, approved, &viewer.origin(), &note).await?;
    let verb = if approved { "approved: briefings now say it" } else { "rejected: it is never said" };
    Ok(layout::done_at(&format!("{}/lessons", layout::project_path(&entry.project)), &format!("The lesson is {verb}.")))
}

/// Approves every ticked lesson: a person who has read a page of lessons
/// clears it in one submit (the CLI takes several ids the same way).
pub async fn approve_ticked(
    State(console): State<Console>,
    ProjectView { project, .. }: ProjectView,
    submitted: Submitted,
) -> Result<Response, PageError> {
    let Submitted { viewer, fields } = submitted;
    viewer.require(REVIEW)?;
    let ids = fields.ticked(BATCH_FIELD, SHOWN as usize, "lesson")?;
    for entry_id in &ids {
        console.knowledge.review_entry(&viewer.scope(), *entry_id, true, &viewer.origin(), "").await?;
    }
    let done = match ids.len() {
        1 => "1 lesson is approved: briefings now say it.".to_owned(),
        many => format!("{many} lessons are approved: briefings now say them."),
    };
    Ok(layout::done_at(&format!("{}/lessons", layout::project_path(&project)), &done))
}
