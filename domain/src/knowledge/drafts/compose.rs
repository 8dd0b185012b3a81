//! A draft's text from the log: what failed, what fixed it, what still
//! fails, the decisions and the time taken, built from actions already
//! read; nothing here reads or writes.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use uuid::Uuid;

use super::{DESCRIPTIVE_KEYS, MAX_DRAFT_ACTIONS, MAX_LINES, MAX_LISTED_IDS, MAX_QUOTE_CHARS};
use lore_types::actions::{Action, Outcome};
use lore_types::knowledge::drafts::{Composed, DraftSource, Proposal, short_id};

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
    let episodes = episodes(actions);
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

    let mut body = format!("# {title}\n\n");
    body.push_str(&overview(source, actions, failed.len(), resolved.len(), episodes.len()));
    section(&mut body, "What failed", failed.iter().map(|action| failed_line(action)));
    section(&mut body, "What fixed it", resolved.iter().map(|episode| fixed_line(episode)));
    section(&mut body, "Still failing", unresolved.iter().map(|episode| still_failing_line(episode)));
    section(
        &mut body,
        "Decisions",
        actions
            .iter()
            .filter(|action| matches!(action.action.action_type.as_str(), "plan" | "decision" | "decide"))
            .filter_map(decision_line),
    );
    body.push_str(&time_and_actions(actions));
    Composed { title: cut_chars(&title, 512), category: cut_chars(&category, 128), body, tags }
}

/// Per kind of action (type and category), each run of failures and the
/// success that ended it, in the order the first failures came.
fn episodes(actions: &[Action]) -> Vec<Episode<'_>> {
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
    episodes
}

/// Who did how much over how long, and how much of it failed.
fn overview(source: &DraftSource, actions: &[Action], failures: usize, resolved: usize, kinds: usize) -> String {
    let (first, last) = (&actions[0].action, &actions[actions.len() - 1].action);
    let agents: BTreeSet<&str> =
        actions.iter().map(|action| action.action.agent_id.as_str()).filter(|agent| !agent.is_empty()).collect();
    let sessions: BTreeSet<Uuid> = actions.iter().filter_map(|action| action.action.session_id).collect();
    let mut text = format!(
        "{}: {} actions by {} over {}, {} from {} to {} UTC. {failures} failures, {resolved} of {kinds} failing kinds of action resolved.\n",
        source.label(),
        actions.len(),
        plural(agents.len(), "agent"),
        plural(sessions.len(), "session"),
        duration(last.occurred_at - first.occurred_at),
        first.occurred_at.format("%Y-%m-%d %H:%M"),
        last.occurred_at.format("%Y-%m-%d %H:%M"),
    );
    if actions.len() == MAX_DRAFT_ACTIONS {
        text.push_str(&format!("\nBuilt from the first {MAX_DRAFT_ACTIONS} actions only.\n"));
    }
    text
}

fn failed_line(action: &Action) -> String {
    let record = &action.action;
    let error = if record.error.trim().is_empty() {
        String::new()
    } else {
        format!(": {}", quote(&record.error, MAX_QUOTE_CHARS))
    };
    format!("{} {}{error} [{}]", record.occurred_at.format("%H:%M"), kind_label(action), short_id(&record.action_id))
}

fn fixed_line(episode: &Episode<'_>) -> String {
    let first_failure = episode.failures[0];
    let success = episode.resolved_by.expect("resolved episodes have a success");
    let minutes = (success.action.occurred_at - first_failure.action.occurred_at).num_minutes();
    let attempts =
        if episode.failures.len() > 1 { format!(" after {} failures", episode.failures.len()) } else { String::new() };
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
}

fn still_failing_line(episode: &Episode<'_>) -> String {
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
}

fn decision_line(action: &Action) -> Option<String> {
    description(action).map(|text| {
        format!(
            "{} `{}`: {text} [{}]",
            action.action.occurred_at.format("%H:%M"),
            action.action.action_type,
            short_id(&action.action.action_id)
        )
    })
}

/// How long it all took, and every action's id.
fn time_and_actions(actions: &[Action]) -> String {
    let (first, last) = (&actions[0].action, &actions[actions.len() - 1].action);
    let succeeded = actions.iter().filter(|action| action.action.outcome == Outcome::Success).count();
    let busy_ms: i64 = actions.iter().map(|action| action.action.duration_ms).sum();
    let mut text = format!(
        "\n## Time taken\n\n- {} from the first action to the last; {} of it inside actions.\n- {} actions, {:.0}% successful.\n",
        duration(last.occurred_at - first.occurred_at),
        duration(chrono::Duration::milliseconds(busy_ms)),
        actions.len(),
        100.0 * succeeded as f64 / actions.len() as f64,
    );
    text.push_str("\n## Actions\n\nOldest first:");
    for action in actions.iter().take(MAX_LISTED_IDS) {
        text.push_str(&format!(" `{}`", action.action.action_id));
    }
    if actions.len() > MAX_LISTED_IDS {
        text.push_str(&format!(" and {} more", actions.len() - MAX_LISTED_IDS));
    }
    text.push('\n');
    text
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
