//! A project's activity: sessions on a timeline, actions per day by
//! outcome, and the action list with every SearchActions filter, kept in the
//! URL; one action in detail; and the filtered actions as a download.

use axum::body::Body;
use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, TimeDelta, Utc};
use futures_util::StreamExt as _;
use maud::{Markup, html};

use super::charts::{self, Series, Span};
use super::layout::{self, Section};
use super::params::Params;
use super::viewer::Viewer;
use super::{Console, PageError, ProjectView};
use crate::Error;
use lore_domain::actions::export::ExportFormat;
use lore_domain::actions::report::ActivityReport;
use lore_types::actions::query::{ActionFilter, Position};
use lore_types::actions::{Action, Outcome, Session, SessionStatus, StoredName as _};
use lore_types::validate;

/// The query fields that make up a filter, carried from page to page.
pub const FILTER_FIELDS: [&str; 10] =
    ["type", "outcome", "agent", "session", "epic", "issue", "from", "until", "contains", "q"];
const OUTCOMES: [(&str, Outcome); 4] = [
    ("success", Outcome::Success),
    ("failure", Outcome::Failure),
    ("blocked", Outcome::Blocked),
    ("in_progress", Outcome::InProgress),
];
/// The charts' window when the filter sets none.
const DEFAULT_WINDOW: TimeDelta = TimeDelta::days(14);
const TIMELINE_SESSIONS: i64 = 30;
/// Rows per chunk of a download.
const EXPORT_CHUNK_ROWS: i64 = 1000;

/// The filter the query string describes, checked field by field.
pub fn action_filter(project: &str, params: &Params) -> Result<ActionFilter, Error> {
    let context_contains = match params.text("contains") {
        None => None,
        Some(text) => match serde_json::from_str::<serde_json::Value>(text) {
            Ok(value @ serde_json::Value::Object(_)) => Some(value),
            _ => return Err(Error::invalid("contains", "must be a JSON object, like {\"file\": \"src/main.rs\"}")),
        },
    };
    let types: Vec<String> = params
        .all("type")
        .iter()
        .flat_map(|value| value.split(','))
        .map(|value| value.trim().to_owned())
        .filter(|value| !value.is_empty())
        .collect();
    // The same checks as SearchActions, so both refuse the same input.
    let text = |name: &str| validate::optional_text(name, params.text(name).unwrap_or_default());
    Ok(ActionFilter {
        project: project.to_owned(),
        action_types: validate::action_types("type", &types)?,
        agent_id: text("agent")?,
        session_id: params.uuid("session")?,
        epic_id: text("epic")?,
        issue_id: text("issue")?,
        outcomes: params.choice("outcome", &OUTCOMES)?.into_iter().collect(),
        from: params.time("from")?,
        until: params.time("until")?,
        context_contains,
        text: text("q")?,
        received_by: None,
    })
}

pub async fn page(
    State(console): State<Console>,
    ProjectView { viewer, scope, project, params }: ProjectView,
) -> Result<Markup, PageError> {
    let filter = action_filter(&project, &params);
    let after = match params.text("after").map(Position::decode) {
        Some(Err(_)) => return Err(Error::invalid("after", "not a cursor this page gave").into()),
        Some(Ok(position)) => Some(position),
        None => None,
    };
    let carried = params.encode_only(&FILTER_FIELDS);
    let body = match filter {
        Err(problem) => html! {
            (filter_form(&project, &params))
            (layout::problem(Some(&super::sentence(&problem.to_string()))))
        },
        Ok(filter) => {
            let now = Utc::now();
            let until = filter.until.unwrap_or(now);
            let from = filter.from.unwrap_or(until - DEFAULT_WINDOW);
            let charted = ActionFilter { from: Some(from), until: Some(until), ..filter.clone() };
            let page_size = console.config.page_size;
            let (report, sessions, mut rows) = tokio::try_join!(
                console.actions.activity_report(&scope, &charted, 0),
                console.reads.sessions_between(&scope, &project, from, until, TIMELINE_SESSIONS),
                console.actions.search(&scope, &filter, after, page_size + 1),
            )?;
            let more = rows.len() as i64 > page_size;
            rows.truncate(page_size as usize);
            let next = more.then(|| rows.last()).flatten().map(|last| {
                Position { occurred_at: last.action.occurred_at, action_id: last.action.action_id }.encode()
            });
            let totals = &report.counts.totals;
            html! {
                (filter_form(&project, &params))
                div.tiles {
                    (layout::tile("actions in the window", totals.total, None))
                    (layout::tile("succeeded", layout::ratio(totals.succeeded, totals.total), None))
                    (layout::tile("failed", totals.failed, None))
                    (layout::tile("blocked", totals.blocked, None))
                    (layout::tile("sessions", sessions.len(), None))
                }
                (charts_section(&report, &sessions, from, until, now))
                h2 { "Actions" }
                div.actions-row { span.muted { "Download these actions:" } (downloads(&project, &carried)) }
                (action_table(&rows, &carried))
                div.pager {
                    @if after.is_some() { a href={ (layout::project_path(&project)) "?" (carried) } { "Newest" } }
                    @if let Some(next) = next {
                        a href={ (layout::project_path(&project)) "?" (carried) "&after=" (next) } { "Older →" }
                    }
                }
            }
        }
    };
    Ok(layout::page(&viewer, &format!("{project}: activity"), Some(&project), Section::Activity, body))
}

/// Actions per day by outcome, and the sessions over the window.
fn charts_section(
    report: &ActivityReport,
    sessions: &[Session],
    from: DateTime<Utc>,
    until: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Markup {
    let days: Vec<String> = report.counts.by_day.iter().map(|day| day.key[5..].to_owned()).collect();
    let layer = |pick: fn(&lore_types::actions::Counts) -> i64| -> Vec<f64> {
        report.counts.by_day.iter().map(|day| pick(day) as f64).collect()
    };
    let spans: Vec<Span<'_>> = sessions
        .iter()
        .map(|session| Span {
            label: format!("{} · {}", session.agent_id, layout::short_id(session.session_id)),
            link: format!("/sessions/{}", session.session_id),
            start: session.started_at.max(from),
            end: session.ended_at.unwrap_or(session.last_activity_at.max(now.min(until))),
            class: match session.status {
                SessionStatus::Active => "span-active",
                SessionStatus::Ended => "span-ended",
                SessionStatus::Disconnected => "span-disconnected",
            },
        })
        .collect();
    html! {
    p.muted { "Charts cover " (layout::time(from)) " to " (layout::time(until)) "." }
    div.grid2 {
        div {
            h2 { "Actions per day by outcome" }
            (charts::stacked_bars("Actions per day by outcome", &days, &[
                Series { name: "succeeded", class: "bar-success", values: layer(|day| day.succeeded) },
                Series { name: "failed", class: "bar-failure", values: layer(|day| day.failed) },
                Series { name: "blocked", class: "bar-blocked", values: layer(|day| day.blocked) },
                Series { name: "other", class: "bar-other",
                    values: layer(|day| day.total - day.succeeded - day.failed - day.blocked) },
            ], 220.0))
        }
        div {
            h2 { "Sessions" }
            @if spans.is_empty() { p.muted { "No session in the window." } }
            @else { (charts::timeline("Sessions over the window", &spans, from, until)) }
        }
    }
    }
}

/// Links that download the actions of the `carried` filter.
fn downloads(project: &str, carried: &str) -> Markup {
    html! {
        @for (format, label) in [("jsonl", "JSONL"), ("csv", "CSV")] {
            a.button.secondary href={ (layout::project_path(project)) "/export?format=" (format) "&" (carried) } { (label) }
        }
    }
}

fn filter_form(project: &str, params: &Params) -> Markup {
    let value = |name: &str| params.get(name).unwrap_or_default().to_owned();
    let outcome = value("outcome");
    html! {
        form.filters method="get" action=(layout::project_path(project)) role="search" aria-label="Filter actions" {
            label { "Type" input name="type" value=(value("type")) placeholder="tool_call,deploy" size="14"; }
            label { "Outcome"
                select name="outcome" {
                    option value="" { "any" }
                    @for (name, _) in OUTCOMES { option value=(name) selected[outcome == name] { (name.replace('_', " ")) } }
                }
            }
            label { "Agent" input name="agent" value=(value("agent")) size="12"; }
            label { "Epic" input name="epic" value=(value("epic")) size="10"; }
            label { "Session" input name="session" value=(value("session")) size="12"; }
            label { "From" input name="from" value=(value("from")) placeholder="2026-11-24" size="16"; }
            label { "Until" input name="until" value=(value("until")) placeholder="2026-11-25T09:00" size="16"; }
            label { "Context contains" input name="contains" value=(value("contains")) placeholder=r#"{"file": "a.rs"}"# size="18"; }
            label { "Text" input name="q" value=(value("q")) placeholder="type, category or error" size="16"; }
            button type="submit" { "Filter" }
            a href=(layout::project_path(project)) { "Clear" }
        }
    }
}

/// The list of actions, each linking to its detail with the filter carried.
pub fn action_table(rows: &[Action], carried: &str) -> Markup {
    html! {
        @if rows.is_empty() {
            p.muted { "No action matches." }
        } @else {
            table {
                thead { tr { th { "When" } th { "Type" } th { "Outcome" } th { "Agent" } th { "Category" } th { "Error" } th { "Session" } } }
                tbody {
                    @for row in rows {
                        @let action = &row.action;
                        tr {
                            td { a href={ "/actions/" (action.action_id) "?" (carried) } { (layout::time(action.occurred_at)) } }
                            td.mono { (action.action_type) }
                            td { (layout::outcome(action.outcome)) }
                            td { (action.agent_id) }
                            td { (action.category) }
                            td.clip { (action.error) }
                            td { @if let Some(session) = action.session_id { (layout::session_link(session)) } }
                        }
                    }
                }
            }
        }
    }
}

pub async fn action(
    State(console): State<Console>,
    viewer: Viewer,
    Path(action_id): Path<String>,
    RawQuery(query): RawQuery,
) -> Result<Markup, PageError> {
    let scope = viewer.scope();
    let action_id = super::path_id("action_id", &action_id)?;
    let stored = console.reads.action(&scope, action_id).await?;
    let action = &stored.action;
    let params = Params::from_query(query.as_deref());
    let carried = params.encode_only(&FILTER_FIELDS);
    let parent = match action.parent_action_id {
        Some(parent) => console.reads.action(&scope, parent).await.ok(),
        None => None,
    };
    let (children, chain) = match action.session_id {
        Some(session) => (
            console.reads.children(&scope, session, action_id, 100).await?,
            Some(console.actions.verify_chain(&scope, session).await?),
        ),
        None => (Vec::new(), None),
    };
    let project = action.project.clone();
    let body = html! {
        div.card {
            dl.facts {
                dt { "Outcome" } dd { (layout::outcome(action.outcome)) }
                dt { "Type" } dd.mono { (action.action_type) }
                dt { "Category" } dd { (action.category) }
                dt { "Agent" } dd { (action.agent_id) }
                dt { "Project" } dd { a href=(layout::project_path(&project)) { (project) } }
                dt { "Session" } dd { @if let Some(session) = action.session_id {
                    a.mono href={ "/sessions/" (session) } { (session) } } @else { span.muted { "none" } } }
                dt { "Occurred" } dd { (layout::time(action.occurred_at)) }
                dt { "Received" } dd { (layout::time(stored.received_at)) }
                dt { "Duration" } dd { (action.duration_ms) " ms" }
                @if !action.epic_id.is_empty() { dt { "Epic" } dd { (action.epic_id) } }
                @if !action.issue_id.is_empty() { dt { "Issue" } dd { (action.issue_id) } }
                dt { "Redacted values" } dd { (action.redaction_count) @if action.truncated { " · context truncated" } }
                dt { "Chain" } dd { (chain_state(stored.chain_seq, chain.as_ref())) }
            }
        }
        @if !action.error.is_empty() { h2 { "Error" } pre { (action.error) } }
        h2 { "Context" }
        p.muted { "As stored, after redaction." }
        (layout::json(&action.context))
        h2 { "Parent" }
        @match &parent {
            Some(parent) => (action_table(std::slice::from_ref(parent), &carried)),
            None => p.muted { @if action.parent_action_id.is_some() { "Not in your projects or no longer stored." } @else { "None." } },
        }
        h2 { "Children" }
        (action_table(&children, &carried))
        div.actions-row {
            a href={ (layout::project_path(&project)) "?" (carried) } { "← Back to the list" }
            span.muted { "Download the current filter:" }
            (downloads(&project, &carried))
        }
    };
    let title = format!("{} · {}", action.action_type, action.outcome.as_str());
    Ok(layout::page(&viewer, &title, Some(&stored.action.project), Section::Activity, body))
}

fn chain_state(seq: Option<i64>, chain: Option<&lore_domain::actions::ChainReport>) -> Markup {
    html! {
        @match (seq, chain) {
            (Some(seq), Some(report)) => {
                "link " (seq) " of the session's chain; "
                @match &report.first_broken {
                    None => { span.badge.status-active { "intact" } " (" (report.checked) " links verified)" },
                    Some(broken) => { span.badge.status-rejected { "broken" } " at link " (broken.chain_seq) ": " (broken.reason) },
                }
            },
            _ => span.muted { "not chained (no session)" },
        }
    }
}

/// The filtered actions as a download, streamed as the export RPC streams
/// them and pinned to what was stored when it began.
pub async fn export(
    State(console): State<Console>,
    ProjectView { viewer, scope, project, params }: ProjectView,
) -> Result<Response, PageError> {
    viewer.require("/lore.v1.ActionService/Export")?;
    let filter = action_filter(&project, &params)?;
    let (format, extension, content_type) = params
        .choice(
            "format",
            &[
                ("jsonl", (ExportFormat::Jsonl, "jsonl", "application/x-ndjson")),
                ("csv", (ExportFormat::Csv, "csv", "text/csv; charset=utf-8")),
            ],
        )?
        .unwrap_or((ExportFormat::Jsonl, "jsonl", "application/x-ndjson"));
    let chunks = console.actions.export(scope, format, filter, None, None, EXPORT_CHUNK_ROWS).map(|chunk| {
        chunk.map(|chunk| axum::body::Bytes::from(chunk.data)).map_err(|error| std::io::Error::other(error.to_string()))
    });
    let mut response = Body::from_stream(chunks).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    let name = format!("attachment; filename=\"{}-actions.{extension}\"", super::layout::segment(&project));
    if let Ok(value) = HeaderValue::from_str(&name) {
        headers.insert(header::CONTENT_DISPOSITION, value);
    }
    Ok(response)
}
