//! What Lore told agents: the injection ledger, per session ("what Lore
//! told this agent", item by item, with totals) and per project (tokens
//! injected per day, the latest injections).
//!
//! Labels are what agents wrote or tools printed: maud escapes them, and
//! nothing here renders them as markdown.

use axum::extract::{Path, State};
use maud::{Markup, html};

use super::charts::{self, Series};
use super::layout::{self, Section};
use super::viewer::Viewer;
use super::{Console, PageError, ProjectView};
use lore_domain::injections::{Injection, InjectionFilter, Totals};
use lore_types::actions::StoredName as _;

/// Injections listed on a page.
const SHOWN: i64 = 100;
/// Days of the project chart.
const CHART_DAYS: u32 = 30;

fn totals_line(totals: &Totals) -> Markup {
    html! {
        div.tiles {
            (layout::tile("injections", totals.injections, None))
            (layout::tile("tokens given", totals.tokens, Some(&format!("{} characters", totals.chars))))
            (layout::tile("items shown", totals.items_shown, None))
            (layout::tile("items withheld", totals.items_withheld, None))
        }
    }
}

fn injection_card(injection: &Injection, with_session: bool) -> Markup {
    let surface = injection.surface.as_str().replace('_', " ");
    html! {
        article.card.injection id={ "injection-" (injection.injection_id) } {
            h3 {
                (surface) " · " (layout::maybe_time(injection.created_at))
                " · " (injection.chars) " characters (~" (injection.tokens()) " tokens)"
            }
            @if with_session {
                p.muted { "agent " (injection.agent_id) " · session "
                    @match injection.session_id { Some(id) => (layout::session_link(id)), None => "none" } }
            }
            @if !injection.task_id.is_empty() { p.muted { "task " code { (injection.task_id) } } }
            @if injection.items.is_empty() { p.muted { "It found nothing to give." } } @else {
            table {
                thead { tr { th { "Item" } th { "Kind" } th { "Trust" } th.num { "Chars" } th.num { "Score" } th { "Why" } } }
                tbody { @for item in &injection.items {
                    tr class=[item.withheld.map(|_| "withheld")] {
                        td {
                            @match item.kind {
                                lore_domain::injections::ItemKind::Lesson => a href={ "/entries/" (item.item_id) } { (item.label) },
                                lore_domain::injections::ItemKind::Warning => a href={ "/patterns/" (item.item_id) } { (item.label) },
                                lore_domain::injections::ItemKind::LastSession
                                | lore_domain::injections::ItemKind::SimilarSession => (layout::session_link(item.item_id)),
                                lore_domain::injections::ItemKind::CallWarning => (item.label),
                                lore_domain::injections::ItemKind::Guard => a href=(super::guards::path(&injection.project)) { (item.label) },
                            }
                        }
                        td { (item.kind.as_str().replace('_', " ")) }
                        td { @if let Some(trust) = item.trust {
                            span class={ "badge trust-" (trust.as_str()) } { (trust.as_str()) } } }
                        td.num { (item.chars) }
                        td.num { (format!("{:.2}", item.score)) }
                        td {
                            @match item.withheld {
                                Some(why) => { strong { "withheld: " } (why.explain()) }
                                None => (item.why),
                            }
                        }
                    }
                } }
            }
            }
        }
    }
}

/// "What Lore told this agent": every injection of one session.
pub async fn session(
    State(console): State<Console>,
    viewer: Viewer,
    Path(raw_id): Path<String>,
) -> Result<Markup, PageError> {
    let scope = viewer.scope();
    let session = console.actions.session(&scope, super::path_id("session_id", &raw_id)?).await?;
    let filter = InjectionFilter {
        project: session.project.clone(),
        session_id: Some(session.session_id),
        ..InjectionFilter::default()
    };
    let (injections, totals) =
        tokio::try_join!(console.ledger.list(&scope, &filter, SHOWN, None), console.ledger.totals(&scope, &filter))?;
    let body = html! {
        p { "Everything Lore put into the context of agent " strong { (session.agent_id) } " in session "
            (layout::session_link(session.session_id)) ", newest first: each lesson, warning and summary it \
            considered, what it took of the context, why it was chosen, and why it was withheld when it was not shown." }
        (totals_line(&totals))
        @if injections.is_empty() { p.muted { "Lore has told this session nothing yet." } }
        @for injection in &injections { (injection_card(injection, false)) }
    };
    let title = format!("What Lore told this agent (session {})", layout::short_id(session.session_id));
    Ok(layout::page(&viewer, &title, Some(&session.project), Section::Injections, body))
}

/// A project's injections: tokens per day, and the latest.
pub async fn project(
    State(console): State<Console>,
    ProjectView { viewer, scope, project, .. }: ProjectView,
) -> Result<Markup, PageError> {
    let filter = InjectionFilter { project: project.clone(), ..InjectionFilter::default() };
    let (days, injections, totals) = tokio::try_join!(
        console.ledger.per_day(&scope, &project, CHART_DAYS),
        console.ledger.list(&scope, &filter, SHOWN, None),
        console.ledger.totals(&scope, &filter)
    )?;
    let labels: Vec<String> = days.iter().map(|day| day.day.format("%m-%d").to_string()).collect();
    let tokens: Vec<f64> = days.iter().map(|day| day.tokens as f64).collect();
    let chart_title = format!("Tokens injected per day, last {CHART_DAYS} days");
    let body = html! {
        (totals_line(&totals))
        h2 { (chart_title) }
        (charts::stacked_bars(&chart_title, &labels, &[Series { name: "tokens", class: "bar-success", values: tokens }], 220.0))
        h2 { "Latest injections" }
        @if injections.is_empty() { p.muted { "Lore has injected nothing into this project's agents yet." } }
        @for injection in &injections { (injection_card(injection, true)) }
    };
    Ok(layout::page(&viewer, &format!("{project}: what Lore injected"), Some(&project), Section::Injections, body))
}
