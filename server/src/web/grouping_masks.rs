//! QA → Grouping masks: a project's own masks, with a form to add or
//! replace one and a button to remove each, and the masks proposed from
//! merges (`mask_proposals`), and the regroupings re-mining proposes
//! (`regrouping_proposals`). A change re-mines the project, and the page
//! says what that changed.

use axum::extract::State;
use axum::response::Response;
use maud::{Markup, html};

use super::layout::{self, Section};
use super::viewer::Submitted;
use super::{Console, PageError, ProjectView};
use super::{mask_proposals, regrouping_proposals};
use crate::Error;
use lore_domain::qa::remining::Remined;
use lore_types::qa::GroupingMask;
use lore_types::qa::limits::MAX_MASK_NAME_CHARS;
use lore_types::qa::mask_proposals::MaskDecision;
use lore_types::qa::remining::RegroupingDecision;

const PUT: &str = "/lore.v1.QaLearningService/PutGroupingMask";
const DELETE: &str = "/lore.v1.QaLearningService/DeleteGroupingMask";

pub fn path(project: &str) -> String {
    format!("{}/masks", layout::project_path(project))
}

pub async fn page(
    State(console): State<Console>,
    ProjectView { viewer, scope, project, params }: ProjectView,
) -> Result<Markup, PageError> {
    let (masks, proposals, regroupings) = tokio::try_join!(
        console.qa.grouping_masks(&scope, &project),
        console.qa.mask_proposals(&scope, &project, false),
        console.qa.regrouping_proposals(&scope, &project, false),
    )?;
    let (may_put, may_delete) = (viewer.may(PUT), viewer.may(DELETE));
    let body = html! {
        (layout::notice(params.text(layout::DONE_FIELD)))
        p { "Failures are grouped by their messages, with numbers, ids, paths, URLs and quoted values read as \
             variables. Where this project's messages carry a variable those cannot see, a mask makes every \
             match of its regular expression one variable, before the generic masks. A change re-mines the \
             project's recent failures at once." }
        @if masks.is_empty() { p.muted { "No mask: the generic masks alone apply." } } @else {
            table {
                thead { tr { th { "Name" } th { "Regular expression" } th { "What it masks" } th { "Changed" }
                    @if may_delete { th { span.muted { "Remove" } } } } }
                tbody { @for mask in &masks { tr {
                    td { (mask.name) }
                    td { code { (mask.pattern) } }
                    td { (mask.description) }
                    td { (layout::time(mask.updated_at)) @if !mask.updated_by.is_empty() { " by " (mask.updated_by) } }
                    @if may_delete { td {
                        form method="post" action={ (path(&project)) "/delete" } {
                            (layout::csrf_field(&viewer))
                            input type="hidden" name="name" value=(mask.name);
                            button.danger type="submit" aria-label={ "remove mask " (mask.name) } { "Remove" }
                        }
                    } }
                } } }
            }
        }
        @if may_put {
            h2 { "Add or replace a mask" }
            form.card method="post" action=(path(&project)) {
                (layout::csrf_field(&viewer))
                div.actions-row {
                    label for="mask_name" { "Name" }
                    input #mask_name type="text" name="name" size="20" required pattern="[A-Za-z0-9._\\-]{1,64}";
                    label for="mask_pattern" { "Regular expression" }
                    input #mask_pattern type="text" name="pattern" size="30" required placeholder="svc-[a-z]+";
                    label for="mask_description" { "What it masks" }
                    input #mask_description type="text" name="description" size="30";
                    button type="submit" { "Save and re-mine" }
                }
            }
        } @else { p.muted { "Your token may read the masks; changing them needs an admin token." } }
        (mask_proposals::section(&viewer, &proposals_path(&project), &proposals))
        (regrouping_proposals::section(&viewer, &regroupings_path(&project), &regroupings))
    };
    Ok(layout::page(&viewer, &format!("{project}: grouping masks"), Some(&project), Section::Qa, body))
}

fn proposals_path(project: &str) -> String {
    format!("{}/proposals", path(project))
}

fn regroupings_path(project: &str) -> String {
    format!("{}/regroupings", path(project))
}

pub async fn put(
    State(console): State<Console>,
    ProjectView { scope, project, .. }: ProjectView,
    Submitted { viewer, fields }: Submitted,
) -> Result<Response, PageError> {
    viewer.require(PUT)?;
    let field = |name: &str| fields.get(name).unwrap_or_default();
    let mask =
        GroupingMask::submitted("mask", &project, field("name"), field("pattern"), field("description"), viewer.name())
            .map_err(Error::from)?;
    let (mask, created, remined) = console.qa.put_grouping_mask(&scope, &mask).await?;
    let said = if created { "Added" } else { "Replaced" };
    Ok(layout::done_at(&path(&project), &format!("{said} the mask {}; {}", mask.name, remined_sentence(&remined))))
}

pub async fn delete(
    State(console): State<Console>,
    ProjectView { scope, project, .. }: ProjectView,
    Submitted { viewer, fields }: Submitted,
) -> Result<Response, PageError> {
    viewer.require(DELETE)?;
    let name = lore_types::validate::name("name", fields.get("name").unwrap_or_default(), MAX_MASK_NAME_CHARS, true)
        .map_err(Error::from)?;
    let (deleted, remined) = console.qa.delete_grouping_mask(&scope, &project, &name).await?;
    let message = if deleted {
        format!("Removed the mask {name}; {}", remined_sentence(&remined))
    } else {
        format!("There was no mask {name}; nothing changed.")
    };
    Ok(layout::done_at(&path(&project), &message))
}

/// A person's decision on a proposal: accept (under the name typed) or
/// reject.
pub async fn decide(
    State(console): State<Console>,
    ProjectView { scope, project, .. }: ProjectView,
    Submitted { viewer, fields }: Submitted,
) -> Result<Response, PageError> {
    viewer.require(mask_proposals::DECIDE)?;
    let proposal_id = lore_types::validate::required_uuid("proposal_id", fields.get("proposal_id").unwrap_or_default())
        .map_err(Error::from)?;
    let name = fields.get("name").unwrap_or_default();
    let decision = match fields.get("decision").unwrap_or_default() {
        "accept" => MaskDecision::accept("name", name).map_err(Error::from)?,
        "reject" => MaskDecision::Reject,
        _ => return Err(Error::invalid("decision", "choose accept or reject").into()),
    };
    let decided = console.qa.decide_mask_proposal(&scope, &project, proposal_id, &decision, viewer.name()).await?;
    let message = match &decided.mask {
        Some(mask) => {
            format!(
                "Accepted: the mask {} = {} is added; {}",
                mask.name,
                mask.pattern,
                remined_sentence(&decided.remined)
            )
        }
        None => format!("Rejected {}: it will not be proposed again.", decided.proposal.pattern),
    };
    Ok(layout::done_at(&path(&project), &message))
}

/// A person's decision on a regrouping proposal.
pub async fn decide_regrouping(
    State(console): State<Console>,
    ProjectView { scope, project, .. }: ProjectView,
    Submitted { viewer, fields }: Submitted,
) -> Result<Response, PageError> {
    viewer.require(regrouping_proposals::DECIDE)?;
    let proposal_id = lore_types::validate::required_uuid("proposal_id", fields.get("proposal_id").unwrap_or_default())
        .map_err(Error::from)?;
    let decision = match fields.get("decision").unwrap_or_default() {
        "accept" => RegroupingDecision::Accept,
        "reject" => RegroupingDecision::Reject,
        _ => return Err(Error::invalid("decision", "choose accept or reject").into()),
    };
    let decided = console.qa.decide_regrouping_proposal(&scope, &project, proposal_id, decision, viewer.name()).await?;
    let proposal = &decided.proposal;
    let message = match decision {
        RegroupingDecision::Accept => format!(
            "Accepted: the {} into {} is made in your name ({} merges, {} splits).",
            proposal.kind(),
            proposal.template,
            decided.remined.merges,
            decided.remined.splits
        ),
        RegroupingDecision::Reject => {
            format!("Rejected the {} into {}: it will not be proposed again.", proposal.kind(), proposal.template)
        }
    };
    Ok(layout::done_at(&path(&project), &message))
}

fn remined_sentence(done: &Remined) -> String {
    let regrouped = if done.automatic {
        format!("made {} merges and {} splits", done.merges, done.splits)
    } else {
        format!("proposed {} regroupings below", done.proposed)
    };
    format!(
        "re-mining read {} recent occurrences and {regrouped} ({} more turned down: they would have grouped the messages worse); {} patterns took their new template.",
        done.occurrences, done.rejected, done.moves
    )
}
