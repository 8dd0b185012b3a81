//! The daily and weekly reports, rendered: a project's, and the fleet's
//! one row per project.

use axum::extract::{RawQuery, State};
use chrono::{NaiveDate, TimeDelta, Utc};
use maud::{Markup, html};

use super::layout::{self, Section};
use super::markdown;
use super::params::Params;
use super::viewer::Viewer;
use super::{Console, PageError, ProjectView};
use lore_domain::reports::{Period, Report};

const PERIODS: [(&str, Period); 2] = [("daily", Period::Daily), ("weekly", Period::Weekly)];

/// The period and day asked for: by default yesterday's daily report, the
/// last complete one.
fn chosen(params: &Params) -> Result<(Period, &'static str, NaiveDate), PageError> {
    let period = params.choice("period", &PERIODS)?.unwrap_or(Period::Daily);
    let name = PERIODS.iter().find(|(_, candidate)| *candidate == period).map_or("daily", |(name, _)| name);
    let day = params.day("day")?.unwrap_or_else(|| (Utc::now() - TimeDelta::days(1)).date_naive());
    Ok((period, name, day))
}

fn report_body(
    base: &str,
    period_name: &str,
    period: Period,
    day: NaiveDate,
    report: &Report,
    history: &[Report],
) -> Markup {
    let step = if period == Period::Weekly { 7 } else { 1 };
    let link = |day: NaiveDate, name: &str| format!("{base}?period={name}&day={day}");
    html! {
        div.actions-row {
            @for (name, _) in PERIODS {
                a href=(link(day, name)) aria-current=[(name == period_name).then_some("page")] { (name) }
            }
            span.muted { "·" }
            a href=(link(day - TimeDelta::days(step), period_name)) { "← Earlier" }
            a href=(link(day + TimeDelta::days(step), period_name)) { "Later →" }
        }
        p.muted {
            (layout::time(report.from)) " to " (layout::time(report.until)) " · "
            @match report.written_at {
                Some(at) => { "stored " (layout::time(at)) }
                None => { "not stored: rendered from the log now" }
            }
        }
        // The page's own heading is the report's title already.
        div.report { (layout::trusted(markdown::to_html(without_title(&report.markdown)))) }
        @if !history.is_empty() {
            h2 { "Stored " (period_name) " reports" }
            ul.history {
                @for stored in history {
                    li { a href=(link(stored.from.date_naive(), period_name)) { (stored.title) } }
                }
            }
        }
    }
}

/// The stored reports listed under a report.
const HISTORY: i64 = 14;

fn without_title(markdown: &str) -> &str {
    match markdown.strip_prefix("# ") {
        Some(rest) => rest.split_once('\n').map_or("", |(_, body)| body),
        None => markdown,
    }
}

pub async fn project(
    State(console): State<Console>,
    ProjectView { viewer, scope, project, params }: ProjectView,
) -> Result<Markup, PageError> {
    let (period, name, day) = chosen(&params)?;
    let (report, history) = tokio::try_join!(
        console.reports.report(&scope, Some(&project), period, day),
        console.reports.history(&scope, Some(&project), period, None, HISTORY),
    )?;
    let base = format!("{}/reports", layout::project_path(&project));
    let body = report_body(&base, name, period, day, &report, &history);
    Ok(layout::page(&viewer, &report.title, Some(&project), Section::Reports, body))
}

pub async fn fleet(
    State(console): State<Console>,
    viewer: Viewer,
    RawQuery(query): RawQuery,
) -> Result<Markup, PageError> {
    let params = Params::from_query(query.as_deref());
    let (period, name, day) = chosen(&params)?;
    let scope = viewer.scope();
    let (report, history) = tokio::try_join!(
        console.reports.report(&scope, None, period, day),
        console.reports.history(&scope, None, period, None, HISTORY),
    )?;
    let body = report_body("/reports", name, period, day, &report, &history);
    Ok(layout::page(&viewer, &report.title, None, Section::Fleet, body))
}
