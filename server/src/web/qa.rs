//! QA: the dashboard (failure rate over time, categories, top patterns by
//! severity, prevention effectiveness shown against held out with its
//! interval), a pattern with why it was grouped, merge and split, and the
//! promotions queue.

use axum::extract::{Path, RawQuery, State};
use axum::response::Response;
use chrono::{TimeDelta, Utc};
use maud::{Markup, html};
use uuid::Uuid;

use super::charts::{self, Series};
use super::layout::{self, Section};
use super::markdown;
use super::params::Params;
use super::viewer::{Submitted, Viewer};
use super::{Console, PageError, ProjectView};
use crate::Error;
use lore_domain::qa::hotspots::HotSpotQuery;
use lore_types::actions::StoredName as _;
use lore_types::qa::PatternReport;
use lore_types::qa::hotspots::{HotSpot, HotSpots};
use lore_types::qa::limits::{MAX_IDS, MAX_TEXT_CHARS};
use lore_types::qa::remining::RemineRun;
use lore_types::qa::significance::{Comparison, GroupRate};
use lore_types::qa::{
    ChangedBy, DashboardQuery, Merge, Pattern, PatternFilter, Promotion, PromotionDecision, PromotionReview,
    PromotionStatus, Split, decode_pattern_cursor, pattern_cursor,
};
use lore_types::validate;

const MERGE: &str = "/lore.v1.QaLearningService/MergePatterns";
const SPLIT: &str = "/lore.v1.QaLearningService/SplitPattern";
const TOP_PATTERNS: i64 = 10;
const MERGE_CANDIDATES: i64 = 50;
const OCCURRENCES_SHOWN: i64 = 100;
const PROMOTIONS_SHOWN: i64 = 50;

/// How alarming a pattern is, from how often and how widely it struck.
fn severity(pattern: &Pattern) -> &'static str {
    match (pattern.occurrence_count, pattern.task_count) {
        (occurrences, tasks) if occurrences >= 20 || tasks >= 10 => "critical",
        (occurrences, tasks) if occurrences >= 8 || tasks >= 4 => "high",
        (occurrences, _) if occurrences >= 3 => "medium",
        _ => "low",
    }
}

pub async fn dashboard(
    State(console): State<Console>,
    ProjectView { viewer, scope, project, params }: ProjectView,
) -> Result<Markup, PageError> {
    let days = params.number("days", 1..=365)?.unwrap_or(30);
    let after = match params.text("after") {
        Some(cursor) => Some(decode_pattern_cursor("after", cursor).map_err(Error::from)?),
        None => None,
    };
    let until = Utc::now();
    let query = DashboardQuery {
        project: project.clone(),
        from: until - TimeDelta::days(days),
        until,
        category: None,
        agent_id: None,
        top_patterns: TOP_PATTERNS,
    };
    let filter = PatternFilter { project: project.clone(), ..Default::default() };
    let page_size = console.config.page_size;
    let hot_query = HotSpotQuery {
        project: project.clone(),
        from: query.from,
        until,
        min_count: HOT_SPOT_MIN,
        limit: HOT_SPOTS_SHOWN,
    };
    let (dashboard, patterns, spots, remining) = tokio::try_join!(
        console.qa.dashboard(&scope, &query),
        console.qa.list_patterns(&scope, &filter, page_size, after),
        hot_spots(&console.qa, &scope, &hot_query),
        console.qa.last_remining(&scope, &project),
    )?;
    let tasks = dashboard.tasks;
    let comparison = dashboard.comparison;
    let days_labels: Vec<String> =
        dashboard.failure_rate.iter().map(|day| day.day.format("%m-%d").to_string()).collect();
    let failures: Vec<f64> = dashboard.failure_rate.iter().map(|day| day.failures as f64).collect();
    let passes: Vec<f64> = dashboard.failure_rate.iter().map(|day| (day.tasks - day.failures).max(0) as f64).collect();
    let categories: Vec<(String, f64, Option<String>)> =
        dashboard.categories.iter().map(|(name, count)| (name.clone(), *count as f64, None)).collect();
    let next = (patterns.len() as i64 == page_size).then(|| patterns.last()).flatten().map(pattern_cursor);
    let body = html! {
        form.filters method="get" {
            label { "Days" input type="number" name="days" min="1" max="365" value=(days); }
            button type="submit" { "Show" }
            a href=(super::grouping_masks::path(&project)) { "Grouping masks" }
            a href=(super::guards::path(&project)) { "Guards" }
        }
        div.tiles {
            (layout::tile("tasks with a result", tasks.tasks, None))
            (layout::tile("failure rate", layout::ratio(tasks.failed, tasks.tasks), Some("failed tasks over tasks with a result")))
            (layout::tile("first-time pass rate", layout::ratio(tasks.passed_first_time, tasks.tasks), None))
            (layout::tile("mean attempts to pass", format!("{:.2}", tasks.mean_attempts_to_pass), None))
            (layout::tile("prevention effectiveness", layout::ratio(dashboard.prevented, dashboard.prevented + dashboard.failed_anyway),
                Some("warned tasks that passed")))
            (layout::tile("missed opportunities", dashboard.missed_opportunities, Some("failures a warning could have named")))
            (layout::tile("acknowledged", dashboard.acknowledged, Some("shown warnings an agent acknowledged")))
        }
        div.grid2 {
            div {
                h2 { "Failures per day" }
                (charts::stacked_bars("Tasks per day: failed and passed", &days_labels, &[
                    Series { name: "failed", class: "bar-failure", values: failures },
                    Series { name: "passed", class: "bar-tasks", values: passes },
                ], 220.0))
            }
            div {
                h2 { "Categories" }
                @if categories.is_empty() { p.muted { "No failure in the window." } }
                @else { (charts::horizontal_bars("Failures by category", &categories, "bar-failure")) }
            }
        }
        h2 { "Do warnings help? Shown against held out" }
        div.card {
            p.muted { "Share of tasks that failed on a warned pattern, on the same denominator, with "
                (format!("{:.0}%", (1.0 - comparison.significance) * 100.0)) " Wilson intervals." }
            (compared(&comparison))
        }
        h2 { "Hot spots: where work fails QA more than the rest" }
        div.card {
            p.muted { "Of the " (spots.sessions.counts.tasks) " sessions that edited files, "
                (spots.sessions.counts.failed) " failed QA (" (format!("{:.0}%", spots.sessions.rate * 100.0))
                "). An area is hot when its interval lies above that rate." }
            (hot_spot_list("file areas (sessions)", &spots.areas))
            (hot_spot_list("action kinds (actions)", &spots.action_kinds))
        }
        h2 { "Re-mining: what Brain proposed and what the project's messages kept" }
        (remining_card(&project, remining.as_ref()))
        h2 { "Top patterns in the window" }
        (pattern_table(&dashboard.top_patterns))
        h2 { "All patterns" }
        (pattern_table(&patterns))
        @if let Some(next) = next {
            div.pager { a href={ (layout::project_path(&project)) "/qa?days=" (days) "&after=" (next) } { "More patterns →" } }
        }
    };
    Ok(layout::page(&viewer, &format!("{project}: QA"), Some(&project), Section::Qa, body))
}

/// The last re-mining, the evidence it went by and the criterion's
/// verdict: a change is kept only when it shortens the description of the
/// project's recent messages, and made only where the project's people
/// support re-mining; elsewhere it waits on the masks page.
fn remining_card(project: &str, run: Option<&RemineRun>) -> Markup {
    html! {
        div.card #remining {
            @match run {
                None => p.muted { "Not re-mined yet. The leader re-mines each project with new failures on a timer; "
                    code { "lore qa remine" } " does it now." },
                Some(run) => {
                    @let done = &run.remined;
                    @if done.automatic {
                        p { "Last re-mined " (layout::time(run.remined_at)) " over " (done.occurrences) " recent occurrences: "
                            (done.merges) " merges and " (done.splits) " splits made, " (done.rejected)
                            " more proposed by Brain and turned down, " (done.moves) " patterns moved to a new template." }
                    } @else {
                        p { "Last re-mined " (layout::time(run.remined_at)) " over " (done.occurrences) " recent occurrences: "
                            (done.proposed) " regroupings " a href=(super::grouping_masks::path(project)) { "proposed to a person" }
                            ", " (done.rejected) " more turned down, " (done.moves) " patterns moved to a new template." }
                    }
                    p.muted { (evidence_sentence(done)) }
                    @if let Some(sentence) = literal_sentence(done) {
                        p.muted #literal-reading { (sentence) }
                    }
                    p.muted { "The criterion is the minimum description length of those occurrences in their groups: "
                        "a change is kept only when it shortens it. Before: " (format!("{:.0}", done.bits_before))
                        " bits; after: " (format!("{:.0}", done.bits_after)) " bits ("
                        (format!("{:.1}", done.shorter_by() * 100.0)) " % shorter)." }
                    (charts::horizontal_bars("Description length of the recent occurrences, in bits", &[
                        ("before re-mining".to_owned(), done.bits_before, None),
                        ("after re-mining".to_owned(), done.bits_after, None),
                    ], "bar-tasks"))
                }
            }
        }
    }
}

/// What reading a project literally means, for people.
const READ_LITERALLY: &str =
    "read literally: quoted names stay in its templates, and a message joins only a pattern it fits in every position";

/// What the people's corrections said of reading the project literally,
/// as a sentence; none while no correction speaks of it.
fn literal_sentence(done: &lore_types::qa::remining::Remined) -> Option<String> {
    let literal = &done.literal;
    if done.read_literally && literal.agreeing == 0 {
        return Some(format!("This project is {READ_LITERALLY}."));
    }
    if literal.agreeing + literal.against == 0 {
        return None;
    }
    let verdict = if done.read_literally {
        format!("so the project is {READ_LITERALLY}")
    } else {
        "so it is read as captured (reading it literally asks for four made and none undone)".to_owned()
    };
    Some(format!(
        "Of people's merges and splits, reading this project literally (quoted names kept apart) makes {} and \
         undoes {}, {verdict}.",
        literal.agreeing, literal.against
    ))
}

/// What the people's corrections said of re-mining, as a sentence.
fn evidence_sentence(done: &lore_types::qa::remining::Remined) -> String {
    let evidence = &done.evidence;
    if evidence.before.pairs == 0.0 {
        return "No merge or split by a person among these occurrences yet, so nothing shows that re-mining groups \
                this project as its people would: its changes wait for a person."
            .to_owned();
    }
    let verdict = if done.automatic { "so its changes were made" } else { "so its changes wait for a person" };
    format!(
        "People's merges and splits speak about {:.0} pairs of messages; before them the groups kept {:.0}, and \
         re-mining replayed from there keeps {:.0} and undoes {} of them, {verdict}.",
        evidence.before.pairs, evidence.before.kept, evidence.replay.kept, evidence.regressions
    )
}

/// Areas and action kinds listed on the QA page, each.
const HOT_SPOTS_SHOWN: usize = 8;
/// Fewer sessions (or actions) than this are not listed.
const HOT_SPOT_MIN: u64 = 3;

/// The page's hot spots; a project with no work yet has none.
async fn hot_spots(
    qa: &lore_domain::qa::QaLearning,
    scope: &lore_types::scope::ProjectScope,
    query: &HotSpotQuery,
) -> Result<HotSpots, Error> {
    match qa.hot_spots(scope, query).await {
        Err(Error::NotFound(_)) => Ok(HotSpots::default()),
        other => other,
    }
}

fn hot_spot_list(title: &str, spots: &[HotSpot]) -> Markup {
    html! {
        h3 { (title) }
        @if spots.is_empty() { p.muted { "None with enough work in the window." } }
        @for spot in spots {
            @let label = format!("{}{} ({} of {})", if spot.hot { "HOT " } else { "" }, spot.name,
                spot.rate.counts.failed, spot.rate.counts.tasks);
            (charts::interval(&label, spot.rate.rate, spot.rate.low, spot.rate.high,
                if spot.hot { "bar-failure" } else { "bar-tasks" }))
        }
    }
}

/// Shown against held out: each group's failure rate with its interval,
/// and whether the difference is significant.
fn compared(comparison: &Comparison) -> Markup {
    let group = |label: &str, group: &GroupRate, class: &str| {
        if group.counts.tasks == 0 {
            html! { p.muted { (label) ": no task yet." } }
        } else {
            let label = format!("{label} ({} of {})", group.counts.failed, group.counts.tasks);
            charts::interval(&label, group.rate, group.low, group.high, class)
        }
    };
    html! {
        (group("shown", &comparison.shown, "bar-shown"))
        (group("held out", &comparison.held_out, "bar-held"))
        p { "One-sided Fisher exact p = " (format!("{:.4}", comparison.p_value)) ": "
            @if comparison.significant { strong { "warnings reduce failures significantly" } }
            @else { "not significant at " (comparison.significance) " yet" } "." }
        @if !comparison.significant {
            p.tasks-needed {
                @match comparison.tasks_needed {
                    Some(needed) => { "The evidence needs about " strong { (needed) } " more tasks with a QA result \
                        before a difference of this size would show (80% power, today's rates and split)." }
                    None => { "No difference in the warnings' favour to size yet: the evidence needs tasks in both \
                        groups (qa.holdout_fraction holds a share of tasks out)." }
                }
            }
        }
    }
}

/// Who made a pattern's last change, as the console says it.
fn changed_by(by: ChangedBy) -> &'static str {
    match by {
        ChangedBy::Capture => "a capture",
        ChangedBy::ReMining => "re-mining",
        ChangedBy::Person => "a person",
    }
}

fn pattern_table(patterns: &[Pattern]) -> Markup {
    html! {
        @if patterns.is_empty() { p.muted { "No pattern." } } @else {
            table {
                thead { tr { th { "Severity" } th { "Pattern" } th { "Category" } th { "Status" } th { "Last change" }
                    th.num { "Occurrences" } th.num { "Tasks" } th.num { "Effectiveness" } th { "Last seen" } } }
                tbody { @for pattern in patterns { tr {
                    td { span class={ "badge sev-" (severity(pattern)) } { (severity(pattern)) } }
                    td { a href={ "/patterns/" (pattern.pattern_id) } { (pattern.name) } }
                    td { (pattern.category) }
                    td { span class={ "badge status-" (pattern.status.as_str()) } { (pattern.status.as_str()) } }
                    td { (changed_by(pattern.last_change)) }
                    td.num { (pattern.occurrence_count) }
                    td.num { (pattern.task_count) }
                    td.num { (layout::ratio(pattern.prevented_count, pattern.prevented_count + pattern.failed_anyway_count)) }
                    td { (layout::time(pattern.last_seen_at)) }
                } } }
            }
        }
    }
}

pub async fn pattern(
    State(console): State<Console>,
    viewer: Viewer,
    Path(raw_id): Path<String>,
    RawQuery(query): RawQuery,
) -> Result<Markup, PageError> {
    let scope = viewer.scope();
    let report = console.qa.pattern(&scope, super::path_id("pattern_id", &raw_id)?, OCCURRENCES_SHOWN).await?;
    let pattern = &report.pattern;
    let params = Params::from_query(query.as_deref());
    let filter = PatternFilter { project: pattern.project.clone(), ..Default::default() };
    let gotcha_key = lore_domain::qa::fixes::gotcha_key(pattern.pattern_id);
    let (candidates, gotcha) = tokio::join!(
        console.qa.list_patterns(&scope, &filter, MERGE_CANDIDATES, None),
        console.knowledge.get_by_key(&scope, &pattern.project, &gotcha_key, 0),
    );
    let candidates: Vec<Pattern> =
        candidates?.into_iter().filter(|other| other.pattern_id != pattern.pattern_id).collect();
    let (may_merge, may_split) = (viewer.may(MERGE), viewer.may(SPLIT));
    let body = html! {
        (layout::notice(params.text(layout::DONE_FIELD)))
        div.tiles {
            (layout::tile("occurrences", pattern.occurrence_count, None))
            (layout::tile("tasks", pattern.task_count, None))
            (layout::tile("confidence", format!("{:.2}", pattern.confidence), None))
            (layout::tile("warnings delivered", pattern.warnings_delivered, None))
            (layout::tile("effectiveness", layout::ratio(pattern.prevented_count, pattern.prevented_count + pattern.failed_anyway_count), None))
        }
        div.card {
            dl.facts {
                dt { "Severity" } dd { span class={ "badge sev-" (severity(pattern)) } { (severity(pattern)) } }
                dt { "Status" } dd { span class={ "badge status-" (pattern.status.as_str()) } { (pattern.status.as_str()) }
                    @if let Some(into) = pattern.merged_into { " into " a href={ "/patterns/" (into) } { (into) } } }
                dt { "Last change" } dd { (changed_by(pattern.last_change)) }
                dt { "Category" } dd { (pattern.category) }
                dt { "Template" } dd { code { (pattern.template) } }
                dt { "Files" } dd { (pattern.file_globs.join(", ")) }
                dt { "Common cause" } dd { (pattern.common_cause) }
                dt { "Recommended fix" } dd { (pattern.recommended_fix)
                    @if let Some(trust) = pattern.fix_trust { " " span class={ "badge trust-" (trust.as_str()) } { (trust.as_str()) } } }
                @if pattern.held { dt { "Held" } dd { "a person's edit the injection screen held: not warned about until released (see Quarantine)" } }
                dt { "Seen" } dd { (layout::time(pattern.first_seen_at)) " to " (layout::time(pattern.last_seen_at)) }
            }
        }
        @if !pattern.description.is_empty() { p { (pattern.description) } }
        h2 { "Gotcha" }
        @match &gotcha {
            Ok(gotcha) => div.report { (layout::trusted(markdown::to_html(&gotcha.entry.body))) },
            Err(_) => p.muted { "No gotcha written yet: one is written when a fix of this pattern passes." },
        }
        (why_grouped(&viewer, &report, may_split))
        (fixes_table(&report))
        @if may_merge && !candidates.is_empty() { (merge_form(&viewer, pattern, &candidates)) }
    };
    Ok(layout::page(&viewer, &pattern.name, Some(&pattern.project), Section::Qa, body))
}

/// Each occurrence with why it joined, and the split form.
fn why_grouped(viewer: &Viewer, report: &PatternReport, may_split: bool) -> Markup {
    let pattern = &report.pattern;
    html! {
    h2 { "Why grouped" }
    p.muted { "Each failure joined the pattern because its message, with paths, numbers, ids and quoted values made wildcards, matched the template closely enough." }
    form method="post" action={ "/patterns/" (pattern.pattern_id) "/split" } {
        (layout::csrf_field(viewer))
        input type="hidden" name="split_id" value=(Uuid::new_v4());
        table {
            thead { tr { @if may_split { th { span.muted { "Split" } } } th { "When" } th { "Task" } th.num { "Similarity" } th { "Why" } th { "Message" } } }
            tbody { @for occurrence in &report.occurrences { tr {
                @if may_split { td { input type="checkbox" name="occurrence" value=(occurrence.occurrence_id)
                    aria-label={ "split occurrence of task " (occurrence.task_id) }; } }
                td { (layout::time(occurrence.occurred_at)) }
                td { (occurrence.task_id) }
                td.num { (format!("{:.2}", occurrence.link.similarity)) }
                td { (occurrence.link.reason) }
                td.clip { code { (occurrence.link.message) } }
            } } }
        }
        @if may_split {
            div.actions-row {
                label for="new_name" { "New pattern's name" }
                input #new_name type="text" name="new_name" size="30";
                label for="split_reason" { "Why" }
                input #split_reason type="text" name="reason" size="30";
                button.secondary type="submit" { "Split the ticked occurrences out" }
            }
        }
    }
    }
}

fn fixes_table(report: &PatternReport) -> Markup {
    html! {
    h2 { "Fixes" }
    @if report.fixes.is_empty() { p.muted { "No fix attempt recorded." } } @else {
        table {
            thead { tr { th { "When" } th { "Attempt" } th { "Outcome" } th { "Approach" } th { "Files" } } }
            tbody { @for fix in &report.fixes { tr {
                td { (layout::time(fix.recorded_at)) }
                td.num { (fix.attempt_number) }
                td { span class={ "badge outcome-" (fix.outcome.as_str()) } { (fix.outcome.as_str()) } }
                td { (fix.approach) @if !fix.summary.is_empty() { br; span.muted { (fix.summary) } } }
                td { (fix.files_changed.join(", ")) }
            } } }
        }
    }
    }
}

/// The other patterns of the project, to tick and merge into this one.
fn merge_form(viewer: &Viewer, pattern: &Pattern, candidates: &[Pattern]) -> Markup {
    html! {

    h2 { "Merge other patterns into this one" }
    form method="post" action={ "/patterns/" (pattern.pattern_id) "/merge" } {
        (layout::csrf_field(viewer))
        table {
            thead { tr { th { span.muted { "Merge" } } th { "Pattern" } th { "Template" } th.num { "Occurrences" } } }
            tbody { @for other in candidates { tr {
                td { input type="checkbox" name="source" value=(other.pattern_id) aria-label={ "merge " (other.name) }; }
                td { a href={ "/patterns/" (other.pattern_id) } { (other.name) } }
                td.clip { code { (other.template) } }
                td.num { (other.occurrence_count) }
            } } }
        }
        div.actions-row {
            label for="merge_reason" { "Why" }
            input #merge_reason type="text" name="reason" size="40";
            button type="submit" { "Merge the ticked patterns into this one" }
        }
    }
    }
}

pub async fn merge(
    State(console): State<Console>,
    Path(raw_id): Path<String>,
    submitted: Submitted,
) -> Result<Response, PageError> {
    let Submitted { viewer, fields } = submitted;
    viewer.require(MERGE)?;
    let into = super::path_id("pattern_id", &raw_id)?;
    let sources: Vec<String> = fields.all("source").into_iter().map(str::to_owned).collect();
    let sources = validate::uuids("source", &sources, MAX_IDS).map_err(Error::from)?;
    let reason = validate::text("reason", fields.get("reason").unwrap_or_default(), MAX_TEXT_CHARS, false)
        .map_err(Error::from)?;
    let count = sources.len();
    let merge = Merge { into, sources, reason, by: ChangedBy::Person, actor: viewer.name().to_owned() };
    let merged = console.qa.merge_patterns(&viewer.scope(), &merge).await?;
    let proposed = match &merged.proposal {
        Some(proposal) => format!(
            " They differ only in words like {}: the mask {} is proposed under QA → Grouping masks, for a person to accept or reject.",
            proposal.examples.join(", "),
            proposal.pattern
        ),
        None => String::new(),
    };
    Ok(layout::done_at(
        &format!("/patterns/{into}"),
        &format!("Merged {count} patterns into “{}”.{proposed}", merged.pattern.name),
    ))
}

pub async fn split(
    State(console): State<Console>,
    Path(raw_id): Path<String>,
    submitted: Submitted,
) -> Result<Response, PageError> {
    let Submitted { viewer, fields } = submitted;
    viewer.require(SPLIT)?;
    let field = |name: &str| fields.get(name).unwrap_or_default();
    let occurrences: Vec<String> = fields.all("occurrence").into_iter().map(str::to_owned).collect();
    let split = Split::submitted(field("split_id"), &raw_id, &occurrences, field("new_name"), field("reason"))
        .map_err(Error::from)?;
    let (_, new) = console.qa.split_pattern(&viewer.scope(), &split).await?;
    Ok(layout::done_at(
        &format!("/patterns/{}", new.pattern_id),
        &format!("Split into the new pattern “{}”.", new.name),
    ))
}

pub async fn promotions(
    State(console): State<Console>,
    ProjectView { viewer, scope, project, params }: ProjectView,
) -> Result<Markup, PageError> {
    let listed = console.qa.list_promotions(&scope, &project, &[], PROMOTIONS_SHOWN, None).await?;
    let mut cards = Vec::with_capacity(listed.len());
    for (promotion, created_at) in &listed {
        let evidence = console.qa.evidence(promotion.pattern_id).await?;
        cards.push(promotion_card(&viewer, promotion, *created_at, &evidence));
    }
    let body = html! {
        (layout::notice(params.text(layout::DONE_FIELD)))
        @if listed.is_empty() { p.muted { "No promotion yet: a pattern is proposed once its warnings have proved themselves." } }
        @for card in cards { (card) }
    };
    Ok(layout::page(&viewer, &format!("{project}: promotions"), Some(&project), Section::Promotions, body))
}

fn promotion_card(
    viewer: &Viewer,
    promotion: &Promotion,
    created_at: chrono::DateTime<Utc>,
    evidence: &Comparison,
) -> Markup {
    let id = promotion.promotion_id;
    let decisions: &[(&str, &str, &str)] = match promotion.status {
        PromotionStatus::Pending => {
            &[("approve", "Approve", "ApprovePromotion"), ("reject", "Reject", "RejectPromotion")]
        }
        PromotionStatus::Published => &[("rollback", "Roll back", "RollbackPromotion")],
        _ => &[],
    };
    html! {
        article.card id={ "promotion-" (id) } {
            p { span class={ "badge status-" (promotion.status.as_str()) } { (promotion.status.as_str().replace('_', " ")) }
                " · proposed " (layout::time(created_at)) " · pattern " a href={ "/patterns/" (promotion.pattern_id) } { "details" } }
            (compared(evidence))
            div.report { (layout::trusted(markdown::to_html(&promotion.markdown))) }
            @if !promotion.instructions.is_empty() { p { "Instructions file: " (promotion.instructions) } }
            @for (decision, label, method) in decisions {
                @if viewer.may(&format!("/lore.v1.QaLearningService/{method}")) {
                    form.actions-row method="post" action={ "/promotions/" (id) "/review" } {
                        (layout::csrf_field(viewer))
                        input type="hidden" name="decision" value=(decision);
                        @if *decision != "approve" {
                            label for={ (decision) "-" (id) } { "Why" }
                            input type="text" id={ (decision) "-" (id) } name="note" size="40" required;
                        }
                        button class=[(*decision != "approve").then_some("danger")] type="submit" { (label) }
                    }
                }
            }
        }
    }
}

pub async fn review_promotion(
    State(console): State<Console>,
    Path(raw_id): Path<String>,
    submitted: Submitted,
) -> Result<Response, PageError> {
    let Submitted { viewer, fields } = submitted;
    let (decision, method) = fields
        .choice(
            "decision",
            &[
                ("approve", (PromotionDecision::Approve, "ApprovePromotion")),
                ("reject", (PromotionDecision::Reject, "RejectPromotion")),
                ("rollback", (PromotionDecision::Rollback, "RollbackPromotion")),
            ],
        )?
        .ok_or_else(|| Error::invalid("decision", "required: approve, reject or rollback"))?;
    viewer.require(&format!("/lore.v1.QaLearningService/{method}"))?;
    let note = fields.get("note").unwrap_or_default();
    let review = PromotionReview::submitted(&raw_id, viewer.name(), note, decision != PromotionDecision::Approve)
        .map_err(Error::from)?;
    let promotion = console
        .qa
        .review_promotion(&viewer.scope(), review.promotion_id, decision, &review.actor, &review.note)
        .await?;
    Ok(layout::done_at(
        &format!("{}/promotions", layout::project_path(&promotion.project)),
        &format!("The promotion is now {}.", promotion.status.as_str().replace('_', " ")),
    ))
}
