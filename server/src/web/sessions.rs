//! A session: where it stopped, what is unfinished, what comes next, then
//! its actions, followed live over server-sent events fed by the same
//! notification feed as a following Resume.

use std::convert::Infallible;
use std::time::Duration;

use axum::extract::{Path, State};
use axum::response::sse::{Event, KeepAlive, Sse};
use futures_util::{Stream, StreamExt as _};
use maud::{Markup, html};

use super::layout::{self, Section};
use super::viewer::Viewer;
use super::{Console, PageError};
use lore_domain::actions::ResumeEvent;
use lore_types::actions::{Action, StoredName as _};

/// Actions shown when the page opens (newest, oldest first).
const SHOWN: i64 = 200;

pub async fn page(
    State(console): State<Console>,
    viewer: Viewer,
    Path(raw_id): Path<String>,
) -> Result<Markup, PageError> {
    let scope = viewer.scope();
    let session = console.actions.session(&scope, super::path_id("session_id", &raw_id)?).await?;
    let given = lore_domain::injections::InjectionFilter {
        project: session.project.clone(),
        session_id: Some(session.session_id),
        ..Default::default()
    };
    let (summary, actions, injected) = tokio::try_join!(
        console.actions.summary(&scope, session.clone()),
        console.actions.recent_actions(&scope, session.session_id, SHOWN),
        console.ledger.totals(&scope, &given),
    )?;
    let project = session.project.clone();
    let body = html! {
        div.card {
            dl.facts {
                dt { "Status" } dd { span class={ "badge status-" (session.status.as_str()) } { (session.status.as_str()) }
                    @if let Some(reason) = session.end_reason { " · " (reason.as_str().replace('_', " ")) } }
                dt { "Agent" } dd { (session.agent_id) }
                dt { "Kind" } dd { (session.kind.as_str()) }
                dt { "Project" } dd { a href=(layout::project_path(&project)) { (project) } }
                dt { "Started" } dd { (layout::time(session.started_at)) }
                dt { "Last activity" } dd { (layout::time(session.last_activity_at)) }
                dt { "Actions" } dd { (session.action_count) }
                dt { "Lore told it" } dd {
                    a href={ "/sessions/" (session.session_id) "/injections" } {
                        (injected.injections) " injection(s), ~" (injected.tokens) " tokens" }
                    " (" (injected.items_shown) " shown, " (injected.items_withheld) " withheld)"
                }
                @if let Some(epic) = &summary.active_epic_id { dt { "Active epic" } dd { (epic) } }
            }
        }
        h2 { "Where it stopped" }
        div.card {
            @if !session.summary.is_empty() { p { (session.summary) } }
            @match &summary.last_action {
                Some(last) => p { "Last action: " span.mono { (last.action.action_type) } " " (layout::outcome(last.action.outcome))
                    " at " (layout::time(last.action.occurred_at)) },
                None => p.muted { "It has no action yet." },
            }
            h3 { "Work in progress" }
            @if summary.work_in_progress.is_empty() { p.muted { "Nothing left unfinished." } }
            ul { @for item in &summary.work_in_progress {
                li { (item.description) " · " a href={ "/actions/" (item.action.action.action_id) } { "action" } }
            } }
            h3 { "Next steps" }
            @if summary.suggested_next_steps.is_empty() { p.muted { "None suggested." } }
            ol { @for step in &summary.suggested_next_steps { li { (step) } } }
        }
        h2 { "Actions " span.muted { "(" span data-live-count { (actions.len()) } ")" } }
        p { span.live data-live-status role="status" { "Live updates need JavaScript." } }
        ol.actions #session-actions data-live={ "/sessions/" (session.session_id) "/live" } aria-live="polite" {
            @for action in &actions { (action_item(action)) }
        }
    };
    let title = format!("Session {}", layout::short_id(session.session_id));
    Ok(layout::page(&viewer, &title, Some(&session.project), Section::Activity, body))
}

/// One action of the session's list; the live feed sends the same markup.
pub fn action_item(stored: &Action) -> Markup {
    let action = &stored.action;
    html! {
        li id={ "action-" (action.action_id) } {
            a href={ "/actions/" (action.action_id) } { (layout::time(action.occurred_at)) }
            span.mono { (action.action_type) }
            span { (layout::outcome(action.outcome)) }
            span {
                @if !action.category.is_empty() { (action.category) " " }
                @if !action.error.is_empty() { span.muted { (action.error.lines().next().unwrap_or_default()) } }
            }
        }
    }
}

/// New actions of the session as they are stored, as `action` events. The
/// follow covers the whole project (it is the Resume feed), so actions of
/// other sessions are dropped here.
pub async fn live(
    State(console): State<Console>,
    viewer: Viewer,
    Path(raw_id): Path<String>,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, PageError> {
    let scope = viewer.scope();
    let session = console.actions.session(&scope, super::path_id("session_id", &raw_id)?).await?;
    let wanted = session.session_id;
    let events = console.actions.resume(scope, session, None, 0, true).filter_map(move |event| async move {
        match event {
            Ok(ResumeEvent::Action(action)) if action.action.session_id == Some(wanted) => {
                Some(Ok(Event::default().event("action").data(action_item(&action).into_string())))
            }
            Ok(_) => None,
            Err(error) => {
                tracing::warn!(%error, "console live session feed failed");
                Some(Ok(Event::default().event("problem").data("the live feed stopped; reload to follow again")))
            }
        }
    });
    Ok(Sse::new(events).keep_alive(KeepAlive::new().interval(Duration::from_secs(15))))
}
