//! The review queue of the injection screen: what it held, why, who wrote
//! it, and the release and erase buttons.
//!
//! The held texts are shown as people need to judge them: whole, escaped,
//! in a preformatted block, with the characters the screen undid (zero
//! width, bidirectional, tag characters) made visible as code points, so a
//! hidden payload is seen for what it is.

use axum::extract::{Path, State};
use axum::response::Response;
use maud::{Markup, html};

use super::layout::{self, Section};
use super::viewer::Submitted;
use super::{Console, PageError, ProjectView};
use crate::Error;
use lore_types::actions::StoredName as _;
use lore_types::trust::quarantine::{Decision, QuarantineFilter, QuarantineStatus, Quarantined};
use lore_types::validate::required_uuid;

const SHOWN: i64 = 100;
const RELEASE: &str = "/lore.v1.AgentService/ReleaseQuarantined";
const ERASE: &str = "/lore.v1.AgentService/EraseQuarantined";
const STATUSES: [(&str, QuarantineStatus); 3] =
    [("held", QuarantineStatus::Held), ("released", QuarantineStatus::Released), ("erased", QuarantineStatus::Erased)];

pub async fn page(
    State(console): State<Console>,
    ProjectView { viewer, scope, project, params }: ProjectView,
) -> Result<Markup, PageError> {
    let status = params.choice("status", &STATUSES)?.unwrap_or(QuarantineStatus::Held);
    let filter = QuarantineFilter { project: project.clone(), status: Some(status), item_kind: None };
    let (items, held) = tokio::try_join!(
        console.quarantine.list(&scope, &filter, SHOWN, None),
        console.quarantine.held_count(&scope, &project)
    )?;
    let may_decide = viewer.may(RELEASE);
    let body = html! {
        (layout::notice(params.text(layout::DONE_FIELD)))
        p { "Everything an agent wrote or a tool printed passes Lore's injection screen before it can reach \
             another agent. What the screen held is below: it reaches no agent until you release it. "
            strong { (held) " held." } }
        div.actions-row {
            @for (name, _) in STATUSES {
                a href={ (layout::project_path(&project)) "/quarantine?status=" (name) }
                  aria-current=[(status.as_str() == name).then_some("page")] { (name) }
            }
        }
        @if !may_decide { p.muted { "Your token may read the queue; releasing and erasing need an admin token." } }
        @if items.is_empty() { p.muted { "Nothing " (status.as_str()) "." } }
        @for item in &items { (card(&viewer, item, may_decide)) }
    };
    Ok(layout::page(&viewer, &format!("{project}: quarantine"), Some(&project), Section::Quarantine, body))
}

/// The held text with invisible and direction-changing characters shown as
/// their code points.
fn visible(text: &str) -> String {
    text.chars()
        .map(|character| {
            let hidden = matches!(character,
                '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{2069}' | '\u{FEFF}'
                    | '\u{E0000}'..='\u{E007F}' | '\u{00AD}');
            if hidden { format!("<U+{:04X}>", character as u32) } else { character.to_string() }
        })
        .collect()
}

fn card(viewer: &super::viewer::Viewer, item: &Quarantined, may_decide: bool) -> Markup {
    let id = item.quarantine_id;
    let kind = item.item_kind.as_str().replace('_', " ");
    html! {
        article.card id={ "quarantined-" (id) } {
            h2 { (kind) " " code { (item.item_id) } @if !item.part.is_empty() { " · " (item.part) } }
            p.muted { "from " (item.origin.describe()) " · caught " (layout::time(item.caught_at))
                " · score " (format!("{:.2}", item.score))
                @if let Some(by) = &item.decided_by { " · " (item.status.as_str()) " by " (by) } }
            p { strong { "Why: " } (item.reasons.join("; ")) }
            @if item.excerpt.is_empty() { p.muted { "(erased)" } } @else { pre { (visible(&item.excerpt)) } }
            @if !item.note.is_empty() { p { "Note: " (item.note) } }
            @if may_decide && item.status == QuarantineStatus::Held {
                form.actions-row method="post" action={ "/quarantine/" (id) "/decide" } {
                    (layout::csrf_field(viewer))
                    input type="hidden" name="decision" value="release";
                    button type="submit" { "Release: it is data" }
                }
                form.actions-row method="post" action={ "/quarantine/" (id) "/decide" } {
                    (layout::csrf_field(viewer))
                    input type="hidden" name="decision" value="erase";
                    label for={ "note-" (id) } { "Why erase" }
                    input type="text" id={ "note-" (id) } name="note" size="40" required;
                    button.danger type="submit" { "Erase" }
                }
            }
        }
    }
}

pub async fn decide(
    State(console): State<Console>,
    Path(raw_id): Path<String>,
    submitted: Submitted,
) -> Result<Response, PageError> {
    let Submitted { viewer, fields } = submitted;
    let decision = fields
        .choice("decision", &[("release", Decision::Release), ("erase", Decision::Erase)])?
        .ok_or_else(|| Error::invalid("decision", "required: release or erase"))?;
    viewer.require(if decision == Decision::Release { RELEASE } else { ERASE })?;
    let quarantine_id = required_uuid("quarantine_id", &raw_id).map_err(Error::from)?;
    let note = fields.get("note").unwrap_or_default().trim().to_owned();
    if decision == Decision::Erase && note.is_empty() {
        return Err(Error::invalid("note", "required: say why it is erased").into());
    }
    let item = console.quarantine.decide(&viewer.scope(), quarantine_id, decision, viewer.name(), &note).await?;
    let done = format!(
        "{} the {} held from {}.",
        if decision == Decision::Release { "Released" } else { "Erased" },
        item.item_kind.as_str().replace('_', " "),
        item.origin.describe()
    );
    Ok(layout::done_at(&format!("{}/quarantine", layout::project_path(&item.project)), &done))
}
