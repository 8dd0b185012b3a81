//! Knowledge: hybrid search showing why each hit matched and its score
//! parts, an entry with its solutions and where it was applied, and the
//! drafts queue with approve-with-edits and reject.
//!
//! Forms are turned into the same proto requests gRPC receives and checked
//! by the same conversions, so the console refuses exactly what gRPC does.

use axum::extract::{Path, State};
use axum::response::Response;
use maud::{Markup, html};

use super::layout::{self, Section};
use super::markdown;
use super::viewer::{Submitted, Viewer};
use super::{Console, PageError, ProjectView};
use crate::Error;
use lore_domain::knowledge::EntryReport;
use lore_domain::knowledge::search::{Hit, SearchMode, SearchQuery};
use lore_types::actions::StoredName as _;
use lore_types::knowledge::Entry;
use lore_types::knowledge::drafts::{Draft, DraftStatus, Review, SubmittedEdits, Verdict};

const HITS: u32 = 10;
const DRAFTS_SHOWN: i64 = 50;
const REVIEW_DRAFT: &str = "/lore.v1.KnowledgeService/ReviewDraft";
const ERASE_ENTRY: &str = "/lore.v1.KnowledgeService/EraseEntry";
const MODES: [(&str, SearchMode); 3] =
    [("hybrid", SearchMode::Hybrid), ("keyword", SearchMode::Keyword), ("semantic", SearchMode::Semantic)];

pub async fn search(
    State(console): State<Console>,
    ProjectView { viewer, scope, project, params }: ProjectView,
) -> Result<Markup, PageError> {
    let text = params.get("q").unwrap_or_default().to_owned();
    let mode = params.choice("mode", &MODES);
    let outcome = match (text.trim().is_empty(), mode) {
        (true, _) => None,
        (false, Err(problem)) => Some(Err(problem)),
        (false, Ok(mode)) => match SearchQuery::new(&project, &text, HITS, mode.unwrap_or(SearchMode::Hybrid)) {
            Err(problem) => Some(Err(Error::from(problem))),
            Ok(query) => Some(console.knowledge.search(&scope, &query).await),
        },
    };
    let chosen = params.get("mode").unwrap_or("hybrid").to_owned();
    let body = html! {
        (layout::notice(params.text(layout::DONE_FIELD)))
        form.filters method="get" role="search" aria-label="Search lessons" {
            label { "Search lessons" input type="search" name="q" value=(text) size="48" placeholder="an error message, a task, a file"; }
            label { "Signals"
                select name="mode" { @for (name, _) in MODES { option value=(name) selected[chosen == name] { (name) } } }
            }
            button type="submit" { "Search" }
        }
        @match outcome {
            None => p.muted { "Hybrid search fuses full text, trigram and embedding similarity; each hit says which signals found it." },
            Some(Err(problem)) => (layout::problem(Some(&super::sentence(&problem.to_string())))),
            Some(Ok(found)) => {
                @if let Some(degraded) = &found.degraded { p.problem { "Semantic search was left out: " (degraded) } }
                p.muted { (found.hits.len()) " hits." }
                @for hit in &found.hits { (hit_card(hit)) }
            }
        }
    };
    Ok(layout::page(&viewer, &format!("{project}: knowledge"), Some(&project), Section::Knowledge, body))
}

fn hit_card(hit: &Hit) -> Markup {
    let entry = &hit.entry;
    html! {
        article.hit {
            h3 { a href={ "/entries/" (entry.entry_id) } { (entry.title) } }
            p.muted { span class={ "badge trust-" (entry.trust.as_str()) } { (entry.trust.as_str()) }
                " from " (entry.origin.describe()) }
            div.parts {
                span { "score " (format!("{:.3}", hit.score)) }
                span { "similarity " (format!("{:.2}", hit.parts.similarity)) }
                span { "success " (format!("{:.2}", hit.parts.success_rate)) }
                span { "recency " (format!("{:.2}", hit.parts.recency)) }
                span { "specificity " (format!("{:.2}", hit.parts.specificity)) }
                span { "relevance " (format!("{:?}", hit.relevance).to_lowercase()) }
            }
            p.muted { "Why: "
                @for (index, reason) in hit.reasons.iter().enumerate() {
                    @if index > 0 { "; " }
                    (format!("{:?}", reason.signal).to_lowercase()) " rank " (reason.rank)
                    @if !reason.matched_terms.is_empty() { " (" (reason.matched_terms.join(", ")) ")" }
                }
            }
            @if !hit.snippet.is_empty() { p { (hit.snippet) } }
            @if let Some(solution) = hit.best_solution() {
                p { strong { "Best solution" } " (" (layout::ratio(solution.times_successful, solution.times_applied)) " of "
                    (solution.times_applied) " uses): " (solution.description) }
            }
        }
    }
}

pub async fn entry(
    State(console): State<Console>,
    viewer: Viewer,
    Path(raw_id): Path<String>,
) -> Result<Markup, PageError> {
    let scope = viewer.scope();
    let entry_id = super::path_id("entry_id", &raw_id)?;
    let report = console.knowledge.get(&scope, entry_id, 50).await?;
    let entry = &report.entry;
    let effectiveness = report.effectiveness;
    let body = html! {
        div.tiles {
            (layout::tile("applications", effectiveness.applications, None))
            (layout::tile("success rate", layout::ratio(effectiveness.successes, effectiveness.applications), None))
            (layout::tile("found via search", layout::percent(effectiveness.found_via_search_rate()), None))
            (layout::tile("occurrences", entry.occurrence_count, None))
        }
        (entry_facts(&report))
        @if !entry.summary.is_empty() { p { (entry.summary) } }
        div.report { (layout::trusted(markdown::to_html(&entry.body))) }
        (solutions_table(entry))
        @if viewer.may(ERASE_ENTRY) {
            h2 { "Erase" }
            form.actions-row method="post" action={ "/entries/" (entry.entry_id) "/erase" } {
                (layout::csrf_field(&viewer))
                p.muted { "Erasing removes this lesson for good with everything derived from it: its drafts, the \
                    pattern fix taken from the same fix attempt, its line in the standing instructions, its document \
                    file, and its place in every replica's search. The audit log records the erasure." }
                label for="erase-note" { "Why erase" }
                input type="text" id="erase-note" name="note" size="40" required;
                button.danger type="submit" { "Erase" }
            }
        }
        h2 { "Where it was applied" }
        @if report.history.is_empty() { p.muted { "Not applied yet." } } @else {
            table {
                thead { tr { th { "When" } th { "Session" } th { "Worked" } th { "Found via search" } th { "Note" } } }
                tbody { @for application in &report.history { tr {
                    td { (layout::time(application.applied_at)) }
                    td { (layout::session_link(application.session_id)) }
                    td { @if application.success { "yes" } @else { "no" } }
                    td { @if application.found_via_search { "yes" } @else { "no" } }
                    td { (application.note) }
                } } }
            }
        }
    };
    Ok(layout::page(&viewer, &entry.title, Some(&entry.project), Section::Knowledge, body))
}

/// What a lesson is, who wrote it, how far it is trusted, and what it
/// replaces or is replaced by.
fn entry_facts(report: &EntryReport) -> Markup {
    let entry = &report.entry;
    html! {
    div.card {
        dl.facts {
            dt { "Kind" } dd { (entry.kind.as_str()) }
            dt { "Category" } dd { (entry.category) }
            dt { "Status" } dd { span class={ "badge status-" (entry.status.as_str()) } { (entry.status.as_str()) } }
            dt { "Trust" } dd { span class={ "badge trust-" (entry.trust.as_str()) } { (entry.trust.as_str()) } }
            dt { "Written by" } dd { (entry.origin.describe()) }
            @if let Some(severity) = entry.severity { dt { "Severity" } dd { span class={ "badge sev-" (severity.as_str()) } { (severity.as_str()) } } }
            @if let Some(key) = &entry.key { dt { "Key" } dd.mono { (key) } }
            dt { "Tags" } dd { (entry.tags.join(", ")) }
            dt { "Last seen" } dd { (layout::maybe_time(entry.last_seen_at)) }
            @if let Some(newer) = entry.superseded_by {
                dt { "Superseded by" } dd { a.mono href={ "/entries/" (newer) } { (newer) } }
            }
            @if !report.superseded.is_empty() {
                dt { "Supersedes" } dd { @for (older, key, title) in &report.superseded {
                    a href={ "/entries/" (older) } { (key.as_deref().unwrap_or(title)) } " "
                } }
            }
            @if !entry.cited_files.is_empty() {
                dt { "Cites" } dd.mono { (entry.cited_files.join(", ")) }
            }
        }
    }
    }
}

fn solutions_table(entry: &Entry) -> Markup {
    html! {
    h2 { "Solutions" }
    @if entry.solutions.is_empty() { p.muted { "No solution recorded." } } @else {
        table {
            thead { tr { th { "Solution" } th.num { "Applied" } th.num { "Worked" } th.num { "Success rate" } th.num { "Avg minutes" } } }
            tbody { @for solution in &entry.solutions { tr {
                td { (solution.description) }
                td.num { (solution.times_applied) }
                td.num { (solution.times_successful) }
                td.num { (layout::percent(solution.success_rate())) }
                td.num { (format!("{:.0}", solution.avg_resolution_minutes())) }
            } } }
        }
    }
    }
}

pub async fn drafts(
    State(console): State<Console>,
    ProjectView { viewer, scope, project, params }: ProjectView,
) -> Result<Markup, PageError> {
    let status = params
        .choice(
            "status",
            &[
                ("pending", DraftStatus::Pending),
                ("approved", DraftStatus::Approved),
                ("rejected", DraftStatus::Rejected),
            ],
        )?
        .unwrap_or(DraftStatus::Pending);
    let drafts = console.knowledge.list_drafts(&scope, &project, status, DRAFTS_SHOWN, None).await?;
    let may_review = viewer.may(REVIEW_DRAFT);
    let body = html! {
        (layout::notice(params.text(layout::DONE_FIELD)))
        div.actions-row {
            @for name in ["pending", "approved", "rejected"] {
                a href={ (layout::project_path(&project)) "/drafts?status=" (name) }
                  aria-current=[(status.as_str() == name).then_some("page")] { (name) }
            }
        }
        @if !may_review { p.muted { "Your token may read drafts; reviewing them needs an admin token." } }
        @if drafts.is_empty() { p.muted { "No " (status.as_str()) " draft." } }
        @for draft in &drafts { (draft_card(&viewer, draft, may_review && status == DraftStatus::Pending)) }
    };
    Ok(layout::page(&viewer, &format!("{project}: drafts"), Some(&project), Section::Drafts, body))
}

fn draft_card(viewer: &Viewer, draft: &Draft, reviewable: bool) -> Markup {
    let id = draft.draft_id;
    html! {
        article.card id={ "draft-" (id) } {
            h2 { (draft.title) }
            p.muted { (draft.category) " · " (draft.tags.join(", ")) " · created " (layout::time(draft.created_at))
                @if let Some(reviewer) = &draft.reviewer { " · reviewed by " (reviewer) } }
            @if reviewable {
                form.editor method="post" action={ "/drafts/" (id) "/review" } {
                    (layout::csrf_field(viewer))
                    input type="hidden" name="decision" value="approve";
                    label for={ "title-" (id) } { "Title" }
                    input type="text" id={ "title-" (id) } name="title" value=(draft.title);
                    label for={ "category-" (id) } { "Category" }
                    input type="text" id={ "category-" (id) } name="category" value=(draft.category);
                    label for={ "tags-" (id) } { "Tags (comma-separated)" }
                    input type="text" id={ "tags-" (id) } name="tags" value=(draft.tags.join(", "));
                    label for={ "body-" (id) } { "Body (markdown)" }
                    textarea id={ "body-" (id) } name="body" { (draft.body) }
                    div.actions-row { button type="submit" { "Approve with these edits" } }
                }
                form.actions-row method="post" action={ "/drafts/" (id) "/review" } {
                    (layout::csrf_field(viewer))
                    input type="hidden" name="decision" value="reject";
                    label for={ "note-" (id) } { "Why reject" }
                    input type="text" id={ "note-" (id) } name="note" size="40";
                    button.danger type="submit" { "Reject" }
                }
            } @else {
                div.report { (layout::trusted(markdown::to_html(&draft.body))) }
                @if !draft.review_note.is_empty() { p { "Note: " (draft.review_note) } }
            }
        }
    }
}

pub async fn review(
    State(console): State<Console>,
    Path(raw_id): Path<String>,
    submitted: Submitted,
) -> Result<Response, PageError> {
    let Submitted { viewer, fields } = submitted;
    viewer.require(REVIEW_DRAFT)?;
    let verdict = if fields.approves()? { Verdict::Approve } else { Verdict::Reject };
    let field = |name: &str| fields.get(name).unwrap_or_default();
    // A rejection's form still carries the approval's fields: they are not
    // edits then.
    let approving = verdict == Verdict::Approve;
    let tags: Vec<String> = match approving {
        true => field("tags").split(',').map(str::trim).filter(|tag| !tag.is_empty()).map(str::to_owned).collect(),
        false => Vec::new(),
    };
    let edits = match approving {
        true => SubmittedEdits { title: field("title"), category: field("category"), body: field("body"), tags: &tags },
        false => SubmittedEdits::default(),
    };
    let review = Review::submitted(&raw_id, Some(verdict), viewer.name(), field("note"), edits).map_err(Error::from)?;
    let (draft, entry) = console.knowledge.review_draft(&viewer.scope(), &review).await?;
    let done = match entry {
        Some(entry) => format!("Approved “{}”: it is now a lesson ({}).", draft.title, entry.entry_id),
        None => format!("Rejected “{}”.", draft.title),
    };
    Ok(layout::done_at(&format!("{}/drafts", layout::project_path(&draft.project)), &done))
}

pub async fn erase(
    State(console): State<Console>,
    Path(raw_id): Path<String>,
    submitted: Submitted,
) -> Result<Response, PageError> {
    let Submitted { viewer, fields } = submitted;
    viewer.require(ERASE_ENTRY)?;
    let entry_id = super::path_id("entry_id", &raw_id)?;
    let note = fields.get("note").unwrap_or_default().trim().to_owned();
    if note.is_empty() {
        return Err(Error::invalid("note", "required: say why it is erased").into());
    }
    let erased = console.erasure.erase_entry(&viewer.scope(), entry_id, viewer.name(), &note).await?;
    let name = erased.key.clone().unwrap_or_else(|| erased.entry_id.to_string());
    let done = format!("Erased {name} with everything derived from it; the audit log records it.");
    Ok(layout::done_at(&format!("{}/knowledge", layout::project_path(&erased.project)), &done))
}
