//! What an agent's earlier session says, screened before another agent
//! reads it in a briefing or a Resume stream.
//!
//! The action log is the audit trail: what agents write there is stored as
//! written, hash-chained and never edited. But the text of a summary (the
//! session's last answer, an action's error, what it was about) reaches the
//! next agent, so it passes the same screen as everything Lore injects, at
//! the moment it is read. A held text is replaced by a note, recorded in the
//! review queue (once), and shown again only when a person releases it.

use sqlx::PgPool;
use uuid::Uuid;

use crate::Error;
use crate::actions::resume::ResumeSummary;
use crate::screening::Screening;
use lore_store::trust::quarantine as store;
use lore_types::actions::Action;
use lore_types::trust::Held;
use lore_types::trust::quarantine::ItemKind;
use lore_types::trust::{Author, Origin};

/// What a held text is replaced by.
pub const HELD_NOTE: &str = "[held for review by Lore's injection screen]";

/// The longest epic or issue id an agent reads back.
const EPIC_LABEL_CHARS: usize = 64;

/// One held text and where it belongs.
struct Hold {
    kind: ItemKind,
    item_id: Uuid,
    held: Held,
}

/// The summary with every text the screen holds (and no person released)
/// replaced, and the parts replaced; next steps built on such a text are
/// dropped.
pub async fn summary(
    pool: &PgPool,
    screening: &Screening,
    mut summary: ResumeSummary,
) -> Result<(ResumeSummary, Vec<String>), Error> {
    let session = &summary.session;
    let project = session.project.as_str();
    let mut holds = Vec::new();
    if let Some(held) = screening.screen_text(project, "summary", &session.summary) {
        holds.push(Hold { kind: ItemKind::Session, item_id: session.session_id, held });
    }
    if let Some(epic) = &summary.active_epic_id
        && let Some(held) = screening.screen_text(project, "epic", epic)
    {
        holds.push(Hold { kind: ItemKind::Session, item_id: session.session_id, held });
    }
    for item in &summary.work_in_progress {
        if let Some(held) = screening.screen_text(project, "resume", &item.description) {
            holds.push(Hold { kind: ItemKind::Action, item_id: item.action.action.action_id, held });
        }
    }
    let held_steps: Vec<bool> = summary
        .suggested_next_steps
        .iter()
        .map(|step| screening.screen_text(project, "step", step).is_some())
        .collect();
    if holds.is_empty() && !held_steps.contains(&true) {
        return Ok((summary, Vec::new()));
    }
    let origin = Origin { author: Author::Agent, channel: String::new(), ..Origin::default() }
        .in_session(Some(&session.agent_id), Some(session.session_id));
    let kept = record(pool, &summary.session.project, &holds, &origin).await?;
    let session_id = summary.session.session_id;
    let mut replaced: Vec<String> = Vec::new();
    for hold in &holds {
        if kept.contains(&(hold.item_id, hold.held.part.clone())) {
            continue;
        }
        replaced.push(hold.held.part.clone());
        match (hold.kind, hold.held.part.as_str()) {
            (ItemKind::Session, "summary") => summary.session.summary = HELD_NOTE.to_owned(),
            (ItemKind::Session, _) => drop_epic(&mut summary),
            _ => {
                for item in &mut summary.work_in_progress {
                    if item.action.action.action_id == hold.item_id {
                        item.description = HELD_NOTE.to_owned();
                    }
                }
            }
        }
    }
    let mut index = 0;
    summary.suggested_next_steps.retain(|_| {
        index += 1;
        !held_steps[index - 1]
    });
    if held_steps.contains(&true) {
        replaced.push("step".to_owned());
    }
    debug_assert_eq!(summary.session.session_id, session_id);
    Ok((summary, replaced))
}

/// The summary without the words its agent wrote, for another agent (or
/// the same one, in a later session) to read: no person reviews a
/// session's last answer, so it is written text and stays out (issue 56),
/// as does an epic that is prose rather than a label. What Lore composed
/// from the log (the unfinished work, the next steps, the counts) stays.
/// Returns the parts taken out, for the injection ledger.
pub fn without_written_words(summary: &mut ResumeSummary) -> Vec<&'static str> {
    let mut parts = Vec::new();
    if !summary.session.summary.trim().is_empty() {
        summary.session.summary.clear();
        parts.push("summary");
    }
    if summary.active_epic_id.as_deref().is_some_and(|epic| !is_label(epic)) {
        drop_epic(summary);
        parts.push("epic");
    }
    let actions =
        summary.last_action.iter_mut().chain(summary.work_in_progress.iter_mut().map(|item| &mut item.action));
    actions.for_each(action_without_written_words);
    parts
}

/// An action of a Resume stream without the labels its agent wrote as
/// prose (see [`without_written_words`]): what it did, how it went and
/// what the tool printed (screened) stay.
pub fn action_without_written_words(action: &mut Action) {
    for label in [&mut action.action.epic_id, &mut action.action.issue_id] {
        if !is_label(label) {
            label.clear();
        }
    }
}

/// Whether an epic or an issue id is a label (`PROJ-42`, `auth-rewrite`)
/// and not prose: a label is short and has no blanks.
fn is_label(text: &str) -> bool {
    text.chars().count() <= EPIC_LABEL_CHARS && lore_screen::fence::is_one_word(text)
}

/// The summary without its epic, and without the next step that names it.
fn drop_epic(summary: &mut ResumeSummary) {
    if let Some(epic) = summary.active_epic_id.take() {
        let named = lore_screen::fence::quoted(&epic);
        summary.suggested_next_steps.retain(|step| !step.contains(&named));
    }
}

/// An action of a Resume stream with its error and context replaced when
/// the screen holds them.
pub async fn action(pool: &PgPool, screening: &Screening, mut action: Action) -> Result<Action, Error> {
    let record_of = &action.action;
    let context = record_of.context.to_string();
    let held = screening.screen(
        &record_of.project,
        [("error".to_owned(), record_of.error.as_str()), ("context".to_owned(), &*context)],
    );
    let Some(held) = held else { return Ok(action) };
    let origin = Origin { author: Author::Agent, ..Origin::default() }
        .in_session(Some(&record_of.agent_id), record_of.session_id);
    let hold = Hold { kind: ItemKind::Action, item_id: record_of.action_id, held };
    let project = record_of.project.clone();
    if record(pool, &project, std::slice::from_ref(&hold), &origin).await?.is_empty() {
        if !action.action.error.is_empty() {
            action.action.error = HELD_NOTE.to_owned();
        }
        action.action.context = serde_json::json!({ "held": HELD_NOTE, "why": hold.held.reason() });
    }
    Ok(action)
}

/// Records the holds in the queue (once) and returns those a person
/// already released as they are now, which are shown.
async fn record(pool: &PgPool, project: &str, holds: &[Hold], origin: &Origin) -> Result<Vec<(Uuid, String)>, Error> {
    let mut released = Vec::new();
    let mut connection = pool.acquire().await?;
    for hold in holds {
        if !store::hold(&mut connection, project, hold.kind, hold.item_id, &hold.held, origin).await? {
            released.push((hold.item_id, hold.held.part.clone()));
        }
    }
    Ok(released)
}
