//! Draft learnings built from the action log of an epic or a session, and
//! their review.
//!
//! A draft says what failed, what fixed it (the next success of the same
//! kind of action, what happened in between, how long it took), what is
//! still failing, the decisions taken and the time spent, with the ids of
//! the actions it came from. It stays pending until a person approves it
//! (it then becomes a learning, written to the project's publish folder
//! when one is configured) or rejects it. Building a draft never calls a
//! model: it is the log, arranged.

use std::collections::{BTreeMap, HashMap};

use chrono::Utc;
use uuid::Uuid;

use std::path::Path;

use super::KnowledgeBase;
use super::document;
use crate::Error;
use crate::trust::screening;
use lore_model::actions::query::{ActionFilter, Position};
use lore_model::actions::{Action, Outcome, StoredName as _};
use lore_model::knowledge::drafts::{
    Composed, Decision, Draft, DraftEdits, DraftSource, DraftStatus, Proposal, Review, short_id,
};
use lore_model::knowledge::{DocumentSource, Entry};
use lore_model::scope::ProjectScope;
use lore_model::trust::Origin;
use lore_store::actions::{self as action_store, Direction};
use lore_store::drafts as store;

/// Actions a draft is built from, at most (the oldest ones).
pub const MAX_DRAFT_ACTIONS: usize = 2000;
/// Lines per section of a draft's body.
const MAX_LINES: usize = 20;
/// Action ids listed at the end of a draft's body.
const MAX_LISTED_IDS: usize = 100;
/// A quoted error or context value is cut to this many characters.
const MAX_QUOTE_CHARS: usize = 200;
/// Context keys that describe what an action did, most telling first.
const DESCRIPTIVE_KEYS: [&str; 8] =
    ["message", "summary", "description", "fix", "decision", "title", "plan", "command"];

impl KnowledgeBase {
    /// Builds and stores a draft from the actions of an epic or session,
    /// led by the agent's own `proposal` when there is one. Returns it and
    /// whether `draft_id` was a replay of the same request.
    pub async fn create_draft(
        &self,
        scope: &ProjectScope,
        draft_id: Uuid,
        project: &str,
        source: DraftSource,
        proposal: Option<Proposal>,
        origin: Origin,
    ) -> Result<(Draft, bool), Error> {
        self.create_tagged_draft(scope, draft_id, project, source, proposal, &[], origin).await
    }

    /// [`Self::create_draft`] with `extra_tags` added to the draft's own
    /// (an automatic draft says why it was made). A draft whose title,
    /// body or tags the injection screen holds is stored quarantined: it
    /// goes to review only once a person releases it.
    #[allow(clippy::too_many_arguments)]
    pub async fn create_tagged_draft(
        &self,
        scope: &ProjectScope,
        draft_id: Uuid,
        project: &str,
        source: DraftSource,
        proposal: Option<Proposal>,
        extra_tags: &[String],
        origin: Origin,
    ) -> Result<(Draft, bool), Error> {
        if let Some(existing) = store::get(&self.pool, scope, draft_id).await? {
            if existing.project == project && existing.source == source {
                return Ok((existing, true));
            }
            return Err(Error::AlreadyExists(format!("draft_id {draft_id} is already used by another draft")));
        }
        let mut filter = ActionFilter { project: project.to_owned(), ..Default::default() };
        match &source {
            DraftSource::Epic(epic) => filter.epic_id = Some(epic.clone()),
            DraftSource::Session(session) => filter.session_id = Some(*session),
        }
        let actions =
            action_store::page(&self.pool, scope, &filter, None, Direction::Ascending, MAX_DRAFT_ACTIONS as i64)
                .await?;
        let from_log = (!actions.is_empty()).then(|| compose(&source, &actions));
        let mut composed = match (proposal, from_log) {
            (Some(proposal), from_log) => with_proposal(&proposal, from_log),
            (None, Some(from_log)) => from_log,
            (None, None) => {
                let source = match &source {
                    DraftSource::Epic(epic) => format!("epic {epic}"),
                    DraftSource::Session(session) => format!("session {session}"),
                };
                return Err(Error::NotFound(format!("actions of {source} in project {project}")));
            }
        };
        for tag in extra_tags {
            if !composed.tags.contains(tag) {
                composed.tags.push(tag.clone());
            }
        }
        let mut draft = Draft {
            draft_id,
            project: project.to_owned(),
            source,
            title: composed.title,
            category: composed.category,
            body: composed.body,
            tags: composed.tags,
            status: DraftStatus::Pending,
            reviewer: None,
            review_note: String::new(),
            entry_id: None,
            created_at: Utc::now(),
            reviewed_at: None,
            origin,
        };
        let parts = [("title".to_owned(), draft.title.as_str()), ("body".to_owned(), draft.body.as_str())];
        let held = screening::screen(parts.into_iter().chain(screening::listed("tags", &draft.tags)));
        if held.is_some() {
            draft.status = DraftStatus::Quarantined;
        }
        let mut transaction = self.pool.begin().await?;
        let stored = store::insert(&mut transaction, scope, &draft).await?;
        if let (Some(held), (_, false)) = (&held, &stored) {
            let kind = lore_model::trust::quarantine::ItemKind::Draft;
            lore_store::quarantine::hold(&mut transaction, project, kind, draft_id, held, &draft.origin).await?;
        }
        transaction.commit().await?;
        Ok(stored)
    }

    pub async fn draft(&self, scope: &ProjectScope, draft_id: Uuid) -> Result<Draft, Error> {
        store::get(&self.pool, scope, draft_id).await?.ok_or_else(|| Error::NotFound(format!("draft {draft_id}")))
    }

    pub async fn list_drafts(
        &self,
        scope: &ProjectScope,
        project: &str,
        status: DraftStatus,
        limit: i64,
        after: Option<Position>,
    ) -> Result<Vec<Draft>, Error> {
        store::list(&self.pool, scope, project, status, limit, after).await
    }

    /// Approves (the draft becomes a learning, published to the project's
    /// folder when one is configured) or rejects a pending draft. The same
    /// decision by the same reviewer again is a replay and answers as the
    /// first time.
    pub async fn review_draft(&self, scope: &ProjectScope, review: &Review) -> Result<(Draft, Option<Entry>), Error> {
        let mut transaction = self.pool.begin().await?;
        let mut draft = store::lock(&mut transaction, scope, review.draft_id)
            .await?
            .ok_or_else(|| Error::NotFound(format!("draft {}", review.draft_id)))?;
        let wanted = match review.decision {
            Decision::Approve(_) => DraftStatus::Approved,
            Decision::Reject => DraftStatus::Rejected,
        };
        if draft.status == DraftStatus::Quarantined {
            return Err(Error::FailedPrecondition(format!(
                "draft {} is held by the injection screen: release it (lore quarantine release) before reviewing it",
                draft.draft_id
            )));
        }
        if draft.status != DraftStatus::Pending {
            transaction.commit().await?;
            if draft.status != wanted || draft.reviewer.as_deref() != Some(review.reviewer.as_str()) {
                return Err(Error::FailedPrecondition(format!(
                    "draft {} is already {} by {}",
                    draft.draft_id,
                    draft.status.as_str(),
                    draft.reviewer.as_deref().unwrap_or("someone")
                )));
            }
            let entry = match draft.entry_id {
                Some(entry_id) => Some(lore_store::knowledge::get(&self.pool, scope, entry_id).await?),
                None => None,
            };
            return Ok((draft, entry));
        }
        draft.status = wanted;
        draft.reviewer = Some(review.reviewer.clone());
        draft.review_note = review.note.clone();
        draft.reviewed_at = Some(Utc::now());
        let mut entry = None;
        if let Decision::Approve(edits) = &review.decision {
            apply_edits(&mut draft, edits);
            let approved = self.publish_draft(&mut transaction, scope, &draft).await?;
            draft.entry_id = Some(approved.entry_id);
            entry = Some(approved);
        }
        store::record_review(&mut transaction, &draft).await?;
        transaction.commit().await?;
        if entry.is_some() {
            self.written().await;
        }
        Ok((draft, entry))
    }
}

impl KnowledgeBase {
    /// The learning an approved draft becomes, inside the review's
    /// transaction: a document `<key>.md` in the project's publish folder
    /// (written first, so the watcher later finds it unchanged), or
    /// `drafts/<key>.md` when the project has none.
    async fn publish_draft(
        &self,
        transaction: &mut sqlx::PgConnection,
        scope: &ProjectScope,
        draft: &Draft,
    ) -> Result<Entry, Error> {
        let file_name = format!("{}.md", entry_key(draft.draft_id));
        self.publish(transaction, scope, &draft.project, &file_name, &published_markdown(draft)).await
    }

    /// Writes a markdown document into the project's publish folder (or
    /// keeps it under `drafts/` when the project has none) and indexes it,
    /// inside the caller's transaction. The file is written first, so the
    /// watcher later finds it unchanged.
    pub(crate) async fn publish(
        &self,
        transaction: &mut sqlx::PgConnection,
        scope: &ProjectScope,
        project: &str,
        file_name: &str,
        markdown: &str,
    ) -> Result<Entry, Error> {
        let parsed = document::parse(file_name, markdown).map_err(|error| Error::invalid("body", error.to_string()))?;
        let folder = self.publish_folders.iter().find(|folder| folder.project == project);
        let source = match folder {
            Some(folder) => {
                let (root, name) = super::watch::resolve_folder(&folder.path)?;
                write_atomically(&root, file_name, markdown)?;
                DocumentSource { project: project.to_owned(), path: file_name.to_owned(), root: Some(name) }
            }
            None => DocumentSource { project: project.to_owned(), path: format!("drafts/{file_name}"), root: None },
        };
        let (entry, _) = self.store_document_in(transaction, scope, &source, parsed).await?;
        Ok(entry)
    }
}

/// Writes `file_name` in `directory` through a hidden temporary file (which
/// the watcher ignores) and a rename, so no reader sees half a file.
fn write_atomically(directory: &Path, file_name: &str, text: &str) -> Result<(), Error> {
    let unavailable = |error: std::io::Error| Error::Unavailable(format!("cannot publish {file_name}: {error}"));
    let mut file = tempfile::NamedTempFile::new_in(directory).map_err(unavailable)?;
    std::io::Write::write_all(&mut file, text.as_bytes()).map_err(unavailable)?;
    file.as_file().sync_all().map_err(unavailable)?;
    file.persist(directory.join(file_name)).map_err(|error| unavailable(error.error))?;
    Ok(())
}

fn apply_edits(draft: &mut Draft, edits: &DraftEdits) {
    if let Some(title) = &edits.title {
        draft.title = title.clone();
    }
    if let Some(category) = &edits.category {
        draft.category = category.clone();
    }
    if let Some(body) = &edits.body {
        draft.body = body.clone();
    }
    if let Some(tags) = &edits.tags {
        draft.tags = tags.clone();
    }
}

/// The entry key of an approved draft: stable, and short enough to type.
pub fn entry_key(draft_id: Uuid) -> String {
    let hex = draft_id.simple().to_string();
    format!("LRN-{}", &hex[hex.len() - 12..])
}

/// The markdown document an approved draft becomes: front matter with its
/// key, so the file's identity survives a rename, then the body.
pub fn published_markdown(draft: &Draft) -> String {
    let mut front_matter = serde_json::Map::new();
    front_matter.insert("id".into(), entry_key(draft.draft_id).into());
    front_matter.insert("title".into(), draft.title.clone().into());
    if !draft.category.is_empty() {
        front_matter.insert("category".into(), draft.category.clone().into());
    }
    if !draft.tags.is_empty() {
        front_matter.insert("tags".into(), draft.tags.clone().into());
    }
    front_matter.insert("draft_id".into(), draft.draft_id.to_string().into());
    match &draft.source {
        DraftSource::Epic(epic) => front_matter.insert("epic_id".into(), epic.clone().into()),
        DraftSource::Session(session) => front_matter.insert("session_id".into(), session.to_string().into()),
    };
    if let Some(reviewer) = &draft.reviewer {
        front_matter.insert("approved_by".into(), reviewer.clone().into());
    }
    document::with_front_matter(&front_matter, &draft.body)
}

/// A draft led by the agent's proposal, with what the log shows (when it
/// shows anything) as the evidence under it.
pub fn with_proposal(proposal: &Proposal, from_log: Option<Composed>) -> Composed {
    let mut body = format!("# {}\n\n", proposal.title);
    for (heading, text) in [("Problem", &proposal.problem), ("Solution", &proposal.solution)] {
        if !text.trim().is_empty() {
            body.push_str(&format!("## {heading}\n\n{}\n\n", text.trim()));
        }
    }
    let mut tags = proposal.tags.clone();
    let mut category = proposal.category.clone();
    if let Some(log) = from_log {
        body.push_str("## Evidence from the log\n\n");
        // The log's own title gives way to the proposal's; its sections
        // become subsections of the evidence.
        for line in log.body.lines().skip_while(|line| line.starts_with("# ") || line.is_empty()) {
            match line.strip_prefix("## ") {
                Some(heading) => body.push_str(&format!("### {heading}\n")),
                None => body.push_str(&format!("{line}\n")),
            }
        }
        for tag in log.tags {
            if !tags.contains(&tag) {
                tags.push(tag);
            }
        }
        if category.is_empty() {
            category = log.category;
        }
    }
    Composed { title: proposal.title.clone(), category, body: body.trim_end().to_owned() + "\n", tags }
}

/// A failure and what followed it, for one kind of action (type and
/// category).
struct Episode<'a> {
    failures: Vec<&'a Action>,
    resolved_by: Option<&'a Action>,
    /// Actions of other kinds between the first failure and the success.
    between: Vec<&'a Action>,
}

/// Arranges an epic's or session's actions (oldest first) as a draft.
pub fn compose(source: &DraftSource, actions: &[Action]) -> Composed {
    let mut episodes: Vec<Episode> = Vec::new();
    let mut open: HashMap<(&str, &str), usize> = HashMap::new();
    for action in actions {
        let record = &action.action;
        let kind = (record.action_type.as_str(), record.category.as_str());
        for (open_kind, index) in &open {
            if *open_kind != kind {
                episodes[*index].between.push(action);
            }
        }
        match record.outcome {
            Outcome::Failure | Outcome::Blocked => match open.get(&kind) {
                Some(&index) => episodes[index].failures.push(action),
                None => {
                    open.insert(kind, episodes.len());
                    episodes.push(Episode { failures: vec![action], resolved_by: None, between: Vec::new() });
                }
            },
            Outcome::Success => {
                if let Some(index) = open.remove(&kind) {
                    episodes[index].resolved_by = Some(action);
                }
            }
            Outcome::InProgress => {}
        }
    }

    let first = &actions[0].action;
    let last = &actions[actions.len() - 1].action;
    let failed: Vec<&Action> = episodes.iter().flat_map(|episode| episode.failures.iter().copied()).collect();
    let resolved: Vec<&Episode> = episodes.iter().filter(|episode| episode.resolved_by.is_some()).collect();
    let unresolved: Vec<&Episode> = episodes.iter().filter(|episode| episode.resolved_by.is_none()).collect();

    let headline = match failed.first() {
        Some(failure) if !failure.action.error.trim().is_empty() => quote(&failure.action.error, 120),
        Some(failure) => format!("{} failed", failure.action.action_type),
        None => format!("{} without a failure", plural(actions.len(), "action")),
    };
    let title = format!("{}: {headline}", source.label());
    let category = most_common(failed.iter().map(|action| action.action.category.as_str()))
        .or_else(|| most_common(actions.iter().map(|action| action.action.category.as_str())))
        .unwrap_or_default()
        .to_lowercase();
    let mut tags: Vec<String> = Vec::new();
    for action in failed.iter().copied().chain(resolved.iter().filter_map(|episode| episode.resolved_by)) {
        let tag = action.action.action_type.to_lowercase();
        if !tags.contains(&tag) && tags.len() < 10 {
            tags.push(tag);
        }
    }

    let agents: std::collections::BTreeSet<&str> =
        actions.iter().map(|action| action.action.agent_id.as_str()).filter(|agent| !agent.is_empty()).collect();
    let sessions: std::collections::BTreeSet<Uuid> =
        actions.iter().filter_map(|action| action.action.session_id).collect();
    let succeeded = actions.iter().filter(|action| action.action.outcome == Outcome::Success).count();
    let span = last.occurred_at - first.occurred_at;

    let mut body = format!("# {title}\n\n");
    body.push_str(&format!(
        "{}: {} actions by {} over {}, {} from {} to {} UTC. {} failures, {} of {} failing kinds of action resolved.\n",
        source.label(),
        actions.len(),
        plural(agents.len(), "agent"),
        plural(sessions.len(), "session"),
        duration(span),
        first.occurred_at.format("%Y-%m-%d %H:%M"),
        last.occurred_at.format("%Y-%m-%d %H:%M"),
        failed.len(),
        resolved.len(),
        episodes.len(),
    ));
    if actions.len() == MAX_DRAFT_ACTIONS {
        body.push_str(&format!("\nBuilt from the first {MAX_DRAFT_ACTIONS} actions only.\n"));
    }

    section(
        &mut body,
        "What failed",
        failed.iter().map(|action| {
            let record = &action.action;
            let error = if record.error.trim().is_empty() {
                String::new()
            } else {
                format!(": {}", quote(&record.error, MAX_QUOTE_CHARS))
            };
            format!(
                "{} {}{error} [{}]",
                record.occurred_at.format("%H:%M"),
                kind_label(action),
                short_id(&record.action_id)
            )
        }),
    );
    section(
        &mut body,
        "What fixed it",
        resolved.iter().map(|episode| {
            let first_failure = episode.failures[0];
            let success = episode.resolved_by.expect("resolved episodes have a success");
            let minutes = (success.action.occurred_at - first_failure.action.occurred_at).num_minutes();
            let attempts = if episode.failures.len() > 1 {
                format!(" after {} failures", episode.failures.len())
            } else {
                String::new()
            };
            let between = if episode.between.is_empty() {
                String::new()
            } else {
                format!(", with {} in between", counts_by_type(&episode.between))
            };
            let fix = episode
                .between
                .iter()
                .rev()
                .chain([&success])
                .find_map(|action| description(action))
                .map(|text| format!(": {text}"))
                .unwrap_or_default();
            format!(
                "{} failed at {} and succeeded at {}{attempts} ({} min{between}){fix} [{} -> {}]",
                kind_label(first_failure),
                first_failure.action.occurred_at.format("%H:%M"),
                success.action.occurred_at.format("%H:%M"),
                minutes,
                short_id(&first_failure.action.action_id),
                short_id(&success.action.action_id),
            )
        }),
    );
    section(
        &mut body,
        "Still failing",
        unresolved.iter().map(|episode| {
            let latest = episode.failures[episode.failures.len() - 1];
            let error = if latest.action.error.trim().is_empty() {
                String::new()
            } else {
                format!(": {}", quote(&latest.action.error, MAX_QUOTE_CHARS))
            };
            format!(
                "{} failed {} (last at {}){error}, with no later success [{}]",
                kind_label(latest),
                plural(episode.failures.len(), "time"),
                latest.action.occurred_at.format("%H:%M"),
                short_id(&latest.action.action_id),
            )
        }),
    );
    section(
        &mut body,
        "Decisions",
        actions
            .iter()
            .filter(|action| matches!(action.action.action_type.as_str(), "plan" | "decision" | "decide"))
            .filter_map(|action| {
                description(action).map(|text| {
                    format!(
                        "{} `{}`: {text} [{}]",
                        action.action.occurred_at.format("%H:%M"),
                        action.action.action_type,
                        short_id(&action.action.action_id)
                    )
                })
            }),
    );
    let busy_ms: i64 = actions.iter().map(|action| action.action.duration_ms).sum();
    body.push_str(&format!(
        "\n## Time taken\n\n- {} from the first action to the last; {} of it inside actions.\n- {} actions, {:.0}% successful.\n",
        duration(span),
        duration(chrono::Duration::milliseconds(busy_ms)),
        actions.len(),
        100.0 * succeeded as f64 / actions.len() as f64,
    ));
    body.push_str("\n## Actions\n\nOldest first:");
    for action in actions.iter().take(MAX_LISTED_IDS) {
        body.push_str(&format!(" `{}`", action.action.action_id));
    }
    if actions.len() > MAX_LISTED_IDS {
        body.push_str(&format!(" and {} more", actions.len() - MAX_LISTED_IDS));
    }
    body.push('\n');
    Composed { title: cut_chars(&title, 512), category: cut_chars(&category, 128), body, tags }
}

/// `## heading` and a bullet per line (at most [`MAX_LINES`]); nothing when
/// there are no lines.
fn section(body: &mut String, heading: &str, lines: impl Iterator<Item = String>) {
    let lines: Vec<String> = lines.collect();
    if lines.is_empty() {
        return;
    }
    body.push_str(&format!("\n## {heading}\n\n"));
    for line in lines.iter().take(MAX_LINES) {
        body.push_str(&format!("- {line}\n"));
    }
    if lines.len() > MAX_LINES {
        body.push_str(&format!("- and {} more\n", lines.len() - MAX_LINES));
    }
}

/// `` `validate` (tests) ``
fn kind_label(action: &Action) -> String {
    match action.action.category.as_str() {
        "" => format!("`{}`", action.action.action_type),
        category => format!("`{}` ({category})", action.action.action_type),
    }
}

/// The first telling string of an action's context.
fn description(action: &Action) -> Option<String> {
    let context = action.action.context.as_object()?;
    DESCRIPTIVE_KEYS.iter().find_map(|key| match context.get(*key) {
        Some(serde_json::Value::String(text)) if !text.trim().is_empty() => Some(quote(text, MAX_QUOTE_CHARS)),
        _ => None,
    })
}

/// "2 × `commit`, 1 × `tool_call`", most frequent first.
fn counts_by_type(actions: &[&Action]) -> String {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for action in actions {
        *counts.entry(action.action.action_type.as_str()).or_default() += 1;
    }
    let mut counts: Vec<(&str, usize)> = counts.into_iter().collect();
    counts.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    counts.iter().map(|(kind, count)| format!("{count} × `{kind}`")).collect::<Vec<_>>().join(", ")
}

fn most_common<'a>(values: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for value in values.filter(|value| !value.is_empty()) {
        match counts.iter_mut().find(|(known, _)| *known == value) {
            Some((_, count)) => *count += 1,
            None => counts.push((value, 1)),
        }
    }
    // First seen wins a tie.
    counts.iter().enumerate().max_by(|(ia, a), (ib, b)| a.1.cmp(&b.1).then(ib.cmp(ia))).map(|(_, (value, _))| *value)
}

/// One line, backticks escaped as quotes, cut.
fn quote(text: &str, max_chars: usize) -> String {
    let line = text.lines().map(str::trim).find(|line| !line.is_empty()).unwrap_or_default().replace('`', "'");
    format!("`{}`", cut_chars(&line, max_chars))
}

fn cut_chars(text: &str, max_chars: usize) -> String {
    if text.chars().count() <= max_chars {
        return text.to_owned();
    }
    let mut cut: String = text.chars().take(max_chars.saturating_sub(3)).collect();
    cut.push_str("...");
    cut
}

fn plural(count: usize, noun: &str) -> String {
    if count == 1 { format!("1 {noun}") } else { format!("{count} {noun}s") }
}

/// "2h 14m", "25m", "40s".
fn duration(span: chrono::Duration) -> String {
    let seconds = span.num_seconds().max(0);
    match (seconds / 3600, seconds % 3600 / 60) {
        (0, 0) => format!("{seconds}s"),
        (0, minutes) => format!("{minutes}m"),
        (hours, minutes) => format!("{hours}h {minutes}m"),
    }
}

#[cfg(test)]
mod tests;
