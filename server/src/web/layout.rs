//! The page shell and the small pieces every page uses. Everything goes
//! through maud, which escapes every value it interpolates.

use axum::http::StatusCode;
use chrono::{DateTime, Utc};
use maud::{DOCTYPE, Markup, PreEscaped, html};

use super::viewer::{CSRF_FIELD, Viewer};
use lore_types::actions::{Outcome, StoredName as _};

/// The sections of a project, in the order of its tabs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    Fleet,
    Activity,
    Knowledge,
    Drafts,
    Qa,
    Promotions,
    Fixes,
    Lessons,
    Quarantine,
    Injections,
    Reports,
}

const TABS: [(Section, &str, &str); 10] = [
    (Section::Activity, "Activity", ""),
    (Section::Knowledge, "Knowledge", "/knowledge"),
    (Section::Drafts, "Drafts", "/drafts"),
    (Section::Qa, "QA", "/qa"),
    (Section::Promotions, "Promotions", "/promotions"),
    (Section::Fixes, "Fixes to review", "/fixes"),
    (Section::Lessons, "Lessons to review", "/lessons"),
    (Section::Quarantine, "Quarantine", "/quarantine"),
    (Section::Injections, "Injected", "/injections"),
    (Section::Reports, "Reports", "/reports"),
];

fn head(title: &str) -> Markup {
    html! {
        head {
            meta charset="utf-8";
            meta name="viewport" content="width=device-width, initial-scale=1";
            // htmx must not inject its own <style> (the policy allows no
            // inline style) nor evaluate anything.
            meta name="htmx-config" content=r#"{"includeIndicatorStyles":false,"allowEval":false,"allowScriptTags":false}"#;
            title { (title) " · Lore" }
            link rel="stylesheet" href=(super::assets::path("console.css"));
            script src=(super::assets::path("htmx.min.js")) defer {}
            script src=(super::assets::path("console.js")) defer {}
        }
    }
}

/// A page of the console, for `viewer`, inside `project` when it has one.
pub fn page(viewer: &Viewer, title: &str, project: Option<&str>, section: Section, body: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            (head(title))
            body {
                a.skip href="#main" { "Skip to content" }
                header.top {
                    nav aria-label="Main" {
                        a.brand href="/" aria-current=[(section == Section::Fleet).then_some("page")] { "Lore" }
                        @if let Some(project) = project {
                            span.crumb { (project) }
                            ul.tabs {
                                @for (tab, label, suffix) in TABS {
                                    li {
                                        a href={ (project_path(project)) (suffix) }
                                          aria-current=[(tab == section).then_some("page")] { (label) }
                                    }
                                }
                            }
                        }
                    }
                    div.who {
                        span { (viewer.name()) " · " (<&str>::from(viewer.role())) }
                        @if viewer.caller.is_some() {
                            form method="post" action="/signout" {
                                (csrf_field(viewer))
                                button.link type="submit" { "Sign out" }
                            }
                        }
                    }
                }
                main #main { h1 { (title) } (body) }
            }
        }
    }
}

/// A page without navigation (sign-in).
pub fn bare(title: &str, body: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" { (head(title)) body { (body) } }
    }
}

pub fn error_page(status: StatusCode, message: &str) -> Markup {
    bare(
        status.canonical_reason().unwrap_or("Error"),
        html! {
            main.signin {
                h1 { (status.as_u16()) " · " (status.canonical_reason().unwrap_or("Error")) }
                p.problem role="alert" { (message) }
                p { a href="/" { "Back to the fleet" } }
            }
        },
    )
}

/// `/projects/<project>`, with the name encoded as a path segment.
pub fn project_path(project: &str) -> String {
    format!("/projects/{}", segment(project))
}

/// A path segment: project names are `[A-Za-z0-9._-]`, but a URL is built
/// from stored text only through here.
pub fn segment(text: &str) -> String {
    form_urlencoded::byte_serialize(text.as_bytes()).collect()
}

pub fn csrf_field(viewer: &Viewer) -> Markup {
    html! { input type="hidden" name=(CSRF_FIELD) value=(viewer.csrf); }
}

pub fn time(at: DateTime<Utc>) -> Markup {
    html! { time datetime=(at.to_rfc3339()) { (at.format("%Y-%m-%d %H:%M:%S")) } }
}

pub fn maybe_time(at: Option<DateTime<Utc>>) -> Markup {
    match at {
        Some(at) => time(at),
        None => html! { span.muted { "never" } },
    }
}

pub fn outcome(outcome: Outcome) -> Markup {
    let name = outcome.as_str();
    html! { span class={ "badge outcome-" (name) } { (name.replace('_', " ")) } }
}

pub fn percent(share: f64) -> String {
    if share.is_finite() { format!("{:.0}%", share * 100.0) } else { "–".into() }
}

/// `part / whole` as a percentage, or a dash when there is no whole.
pub fn ratio(part: i64, whole: i64) -> String {
    if whole > 0 { percent(part as f64 / whole as f64) } else { "–".into() }
}

/// A figure with its label, for the tiles at the top of a page.
pub fn tile(label: &str, value: impl maud::Render, note: Option<&str>) -> Markup {
    html! {
        div.tile {
            div.value { (value) }
            div.label { (label) }
            @if let Some(note) = note { div.note { (note) } }
        }
    }
}

/// JSON, pretty-printed, as text.
pub fn json(value: &serde_json::Value) -> Markup {
    let text = serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string());
    html! { pre.json { (text) } }
}

/// The first eight characters of an id, enough to tell sessions apart on
/// a page.
pub fn short_id(id: uuid::Uuid) -> String {
    id.simple().to_string()[..8].to_owned()
}

/// A link to a session, by its short id.
pub fn session_link(session_id: uuid::Uuid) -> Markup {
    html! { a.mono href={ "/sessions/" (session_id) } { (short_id(session_id)) } }
}

/// What a form post just did, carried to the page it redirected to.
pub fn notice(message: Option<&str>) -> Markup {
    html! { @if let Some(message) = message { p.notice role="status" { (message) } } }
}

/// Redirects after a form post to `path`, saying what was done there.
pub fn done_at(path: &str, message: &str) -> axum::response::Response {
    use axum::response::IntoResponse as _;
    let query = form_urlencoded::Serializer::new(String::new()).append_pair(DONE_FIELD, message).finish();
    axum::response::Redirect::to(&format!("{path}?{query}")).into_response()
}

/// The query field [`done_at`] sets and [`notice`] shows.
pub const DONE_FIELD: &str = "done";

/// A message for a filter that failed to parse, shown above the page.
pub fn problem(message: Option<&str>) -> Markup {
    html! { @if let Some(message) = message { p.problem role="alert" { (message) } } }
}

/// A trusted, already-safe fragment (our own SVG and sanitized markdown).
pub fn trusted(markup: String) -> PreEscaped<String> {
    PreEscaped(markup)
}
