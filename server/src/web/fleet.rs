//! The fleet: every project the viewer may see, what is running now, and
//! what waits for a person.

use axum::extract::State;
use chrono::{DurationRound as _, TimeDelta, Utc};
use maud::{Markup, html};

use super::charts::{self, Series};
use super::layout::{self, Section};
use super::viewer::Viewer;
use super::{Console, PageError};
use lore_types::actions::{Session, StoredName as _};

/// Live sessions shown on the fleet page.
const LIVE_SESSIONS: i64 = 25;

pub async fn page(State(console): State<Console>, viewer: Viewer) -> Result<Markup, PageError> {
    let now = Utc::now();
    let midnight = now.duration_trunc(TimeDelta::days(1)).unwrap_or(now);
    let projects = console.reads.projects(&viewer.scope()).await?;
    let (figures, hours, live) = tokio::try_join!(
        console.reads.project_figures(&projects, now, midnight),
        console.reads.actions_per_hour(&projects, now),
        console.reads.active_sessions(&projects, LIVE_SESSIONS),
    )?;
    let total = |pick: fn(&lore_domain::console::ProjectFigures) -> i64| figures.iter().map(pick).sum::<i64>();
    let (prevented, failed_anyway) = (total(|row| row.prevented), total(|row| row.failed_anyway));
    let start = now.duration_trunc(TimeDelta::hours(1)).unwrap_or(now) - TimeDelta::hours(23);
    let per_hour: Vec<f64> = (0..24)
        .map(|hour| {
            let at = start + TimeDelta::hours(hour);
            hours.iter().find(|(bucket, _)| *bucket == at).map_or(0.0, |(_, count)| *count as f64)
        })
        .collect();
    let labels: Vec<String> =
        (0..24).map(|hour| (start + TimeDelta::hours(hour)).format("%H:00").to_string()).collect();
    let body = html! {
        div.tiles {
            (layout::tile("active sessions", total(|row| row.active_sessions), None))
            (layout::tile("actions, last 24 h", total(|row| row.actions_last_day), None))
            (layout::tile("failures today", total(|row| row.failures_today), Some("failed or blocked actions, UTC day")))
            (layout::tile("drafts waiting", total(|row| row.drafts_waiting), None))
            (layout::tile("promotions waiting", total(|row| row.promotions_waiting), None))
            (layout::tile("prevention effectiveness", layout::ratio(prevented, prevented + failed_anyway),
                Some("warned tasks that then passed")))
        }
        h2 { "Actions per hour" }
        (charts::stacked_bars("Actions per hour, last 24 hours", &labels,
            &[Series { name: "actions", class: "bar", values: per_hour }], 200.0))
        h2 { "Sessions active now" }
        div hx-get="/fleet/sessions" hx-trigger="every 5s" hx-swap="innerHTML" {
            (sessions_table(&live, now))
        }
        h2 { "Projects" }
        @if figures.is_empty() {
            p.muted { "No project has any data yet." }
        } @else {
            table {
                thead { tr {
                    th { "Project" } th.num { "Actions, 24 h" } th.num { "Failures today" } th.num { "Active sessions" }
                    th.num { "Drafts waiting" } th.num { "Promotions waiting" } th.num { "Effectiveness" } th { "Last action" }
                } }
                tbody {
                    @for row in &figures {
                        tr {
                            td { a href=(layout::project_path(&row.project)) { (row.project) } }
                            td.num { (row.actions_last_day) }
                            td.num { (row.failures_today) }
                            td.num { (row.active_sessions) }
                            td.num { a href={ (layout::project_path(&row.project)) "/drafts" } { (row.drafts_waiting) } }
                            td.num { a href={ (layout::project_path(&row.project)) "/promotions" } { (row.promotions_waiting) } }
                            td.num { (layout::ratio(row.prevented, row.prevented + row.failed_anyway)) }
                            td { (layout::maybe_time(row.last_action_at)) }
                        }
                    }
                }
            }
        }
        p { a href="/reports" { "Fleet report" } }
    };
    Ok(layout::page(&viewer, "Fleet", None, Section::Fleet, body))
}

/// The live sessions alone, for the fleet page to refresh.
pub async fn live_sessions(State(console): State<Console>, viewer: Viewer) -> Result<Markup, PageError> {
    let projects = console.reads.projects(&viewer.scope()).await?;
    let live = console.reads.active_sessions(&projects, LIVE_SESSIONS).await?;
    Ok(sessions_table(&live, Utc::now()))
}

pub fn sessions_table(sessions: &[Session], now: chrono::DateTime<Utc>) -> Markup {
    html! {
        @if sessions.is_empty() {
            p.muted { "No session is active." }
        } @else {
            table {
                thead { tr { th { "Session" } th { "Project" } th { "Agent" } th { "Kind" } th.num { "Actions" } th { "Started" } th { "Last activity" } } }
                tbody {
                    @for session in sessions {
                        tr {
                            td { (layout::session_link(session.session_id)) }
                            td { a href=(layout::project_path(&session.project)) { (session.project) } }
                            td { (session.agent_id) }
                            td { (session.kind.as_str()) }
                            td.num { (session.action_count) }
                            td { (layout::time(session.started_at)) }
                            td { (ago(now - session.last_activity_at)) }
                        }
                    }
                }
            }
        }
    }
}

/// "3 min ago".
pub fn ago(elapsed: TimeDelta) -> String {
    let seconds = elapsed.num_seconds().max(0);
    match seconds {
        0..60 => format!("{seconds} s ago"),
        60..3600 => format!("{} min ago", seconds / 60),
        3600..86_400 => format!("{} h ago", seconds / 3600),
        _ => format!("{} days ago", seconds / 86_400),
    }
}
