//! QA → Guards: the project's switch, its guards with a button to remove
//! each, a form to add one, and the warnings agents were given at the call
//! lately, each with a link that fills the form. Only people set guards:
//! the forms need an admin token.
//!
//! Shapes and failures are what agents ran and tools printed: maud escapes
//! them.

use axum::extract::State;
use axum::response::Response;
use maud::{Markup, html};

use super::layout::{self, Section};
use super::viewer::Submitted;
use super::{Console, PageError, ProjectView};
use crate::Error;
use lore_types::qa::guards::{self, Guard};

const PUT: &str = "/lore.v1.QaLearningService/PutGuard";
const REMOVE: &str = "/lore.v1.QaLearningService/RemoveGuard";
const SWITCH: &str = "/lore.v1.QaLearningService/SetGuardsEnabled";
/// Days of warnings at the call the page lists.
const WARNING_DAYS: u32 = 30;

pub fn path(project: &str) -> String {
    format!("{}/guards", layout::project_path(project))
}

/// The form's link, filled from a warning at the call.
fn prefilled(project: &str, shape: &str, failure: &str) -> String {
    let query = form_urlencoded::Serializer::new(String::new())
        .append_pair("command", shape)
        .append_pair("reason", &reason_of(failure))
        .finish();
    format!("{}?{query}#add", path(project))
}

/// A guard's reason from the failure a warning named, within the bound a
/// reason has.
fn reason_of(failure: &str) -> String {
    format!("Earlier sessions failed with: {failure}").chars().take(guards::limits::MAX_REASON_CHARS).collect()
}

pub async fn page(
    State(console): State<Console>,
    ProjectView { viewer, scope, project, params }: ProjectView,
) -> Result<Markup, PageError> {
    let (guards, warnings) = tokio::try_join!(
        console.qa.guards(&scope, &project),
        console.ledger.call_warnings_given(&scope, &project, WARNING_DAYS)
    )?;
    let (may_put, may_remove, may_switch) = (viewer.may(PUT), viewer.may(REMOVE), viewer.may(SWITCH));
    let body = html! {
        (layout::notice(params.text(layout::DONE_FIELD)))
        p { "Before an agent runs a shell command, Lore warns it when earlier sessions failed with the same \
             command and says what worked after. A guard goes further: while guards are on, a call of the \
             guarded shape is refused, and the agent reads the reason and what to run instead. Agents never \
             set guards; the hooks read them at session start and every few minutes." }
        div.tiles {
            (layout::tile("guards", if guards.enabled { "on" } else { "off" }, Some("qa.guards.enabled for this project")))
            (layout::tile("guarded shapes", guards.guards.len(), None))
        }
        @if may_switch {
            form method="post" action={ (path(&project)) "/switch" } {
                (layout::csrf_field(&viewer))
                input type="hidden" name="enabled" value=(if guards.enabled { "false" } else { "true" });
                button type="submit" class=[guards.enabled.then_some("danger")] {
                    @if guards.enabled { "Turn guards off" } @else { "Turn guards on" }
                }
            }
        }
        h2 { "Guards" }
        @if guards.guards.is_empty() { p.muted { "No guard: agents are warned, never refused." } } @else {
            table {
                thead { tr { th { "Shape" } th { "Reason" } th { "Instead" } th { "Set" }
                    @if may_remove { th { span.muted { "Remove" } } } } }
                tbody { @for guard in &guards.guards { tr {
                    td { code { (guard.shape) } }
                    td { (guard.reason) }
                    td { @if !guard.alternative.is_empty() { code { (guard.alternative) } } }
                    td { (layout::time(guard.created_at)) @if !guard.created_by.is_empty() { " by " (guard.created_by) } }
                    @if may_remove { td {
                        form method="post" action={ (path(&project)) "/remove" } {
                            (layout::csrf_field(&viewer))
                            input type="hidden" name="guard_id" value=(guard.guard_id);
                            button.danger type="submit" aria-label={ "remove the guard of " (guard.shape) } { "Remove" }
                        }
                    } }
                } } }
            }
        }
        @if may_put {
            h2 #add { "Add or replace a guard" }
            form.card method="post" action=(path(&project)) {
                (layout::csrf_field(&viewer))
                div.actions-row {
                    label for="guard_command" { "Command" }
                    input #guard_command type="text" name="command" size="30" required
                        maxlength=(guards::limits::MAX_COMMAND_CHARS)
                        placeholder="pytest <arg>" value=(params.text("command").unwrap_or_default());
                    label for="guard_reason" { "Reason" }
                    input #guard_reason type="text" name="reason" size="40" required
                        maxlength=(guards::limits::MAX_REASON_CHARS)
                        value=(params.text("reason").unwrap_or_default());
                    label for="guard_alternative" { "Run instead" }
                    input #guard_alternative type="text" name="alternative" size="30"
                        maxlength=(guards::limits::MAX_ALTERNATIVE_CHARS)
                        value=(params.text("alternative").unwrap_or_default());
                    button type="submit" { "Save the guard" }
                }
            }
        } @else { p.muted { "Your token may read the guards; setting them needs an admin token." } }
        h2 { "Warnings given at the call, last " (WARNING_DAYS) " days" }
        @if warnings.is_empty() { p.muted { "No warning at the call was given." } } @else {
            table {
                thead { tr { th { "Shape" } th { "Failure" } th.num { "Given" } th.num { "Sessions" } th { "Last" }
                    @if may_put { th { span.muted { "Guard" } } } } }
                tbody { @for warning in &warnings { tr {
                    td { code { (warning.shape) } }
                    td { (warning.failure) }
                    td.num { (warning.times) }
                    td.num { (warning.sessions) }
                    td { (layout::time(warning.last_given)) }
                    @if may_put { td { a href=(prefilled(&project, &warning.shape, &warning.failure)) { "Guard this call" } } }
                } } }
            }
        }
    };
    Ok(layout::page(&viewer, &format!("{project}: guards"), Some(&project), Section::Qa, body))
}

pub async fn put(
    State(console): State<Console>,
    ProjectView { scope, project, .. }: ProjectView,
    Submitted { viewer, fields }: Submitted,
) -> Result<Response, PageError> {
    viewer.require(PUT)?;
    let field = |name: &str| fields.get(name).unwrap_or_default();
    let guard =
        Guard::submitted("guard", &project, field("command"), field("reason"), field("alternative"), viewer.name())
            .map_err(Error::from)?;
    let guard = console.qa.put_guard(&scope, &guard).await?;
    Ok(layout::done_at(&path(&project), &format!("Saved the guard of {}.", guard.shape)))
}

pub async fn remove(
    State(console): State<Console>,
    ProjectView { scope, project, .. }: ProjectView,
    Submitted { viewer, fields }: Submitted,
) -> Result<Response, PageError> {
    viewer.require(REMOVE)?;
    let guard_id = lore_types::validate::required_uuid("guard_id", fields.get("guard_id").unwrap_or_default())
        .map_err(Error::from)?;
    let message = if console.qa.remove_guard(&scope, &project, guard_id).await? {
        "Removed the guard."
    } else {
        "There was no such guard; nothing changed."
    };
    Ok(layout::done_at(&path(&project), message))
}

pub async fn switch(
    State(console): State<Console>,
    ProjectView { scope, project, .. }: ProjectView,
    Submitted { viewer, fields }: Submitted,
) -> Result<Response, PageError> {
    viewer.require(SWITCH)?;
    let enabled = match fields.get("enabled").unwrap_or_default() {
        "true" => true,
        "false" => false,
        other => {
            return Err(Error::from(lore_types::validate::FieldError::new(
                "enabled",
                format!("{other:?} is not true or false"),
            ))
            .into());
        }
    };
    let guards = console.qa.set_guards_enabled(&scope, &project, enabled, viewer.name()).await?;
    let said = if guards.enabled {
        "Guards are on: agents' calls of a guarded shape are refused."
    } else if enabled {
        "Guards are on for this project, but the qa.warnings kill switch keeps them off."
    } else {
        "Guards are off: agents are warned, never refused."
    };
    Ok(layout::done_at(&path(&project), said))
}
