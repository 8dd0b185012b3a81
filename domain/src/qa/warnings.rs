//! GetWarnings and RecordOutcome.
//!
//! A pattern is relevant to a task through its files (the share of the
//! task's files whose glob the pattern learned), its task category, similar
//! past task titles (trigram similarity) and shared words. Warnings are
//! ranked by relevance x confidence x normalized frequency; every warning
//! chosen is recorded as a delivery, and outcomes move confidence exactly
//! once per delivery.

use uuid::Uuid;

use super::QaLearning;
use crate::Error;
use crate::screening::Screening;
use lore_store::qa::warnings::{self as store, NewDelivery, RelevanceWeights, WarningCandidate, WarningSignals};
use lore_types::actions::StoredName as _;
use lore_types::qa::files;
use lore_types::qa::{Pattern, PatternStanding, Warning, WarningOutcome, WarningRequest};
use lore_types::scope::ProjectScope;
use lore_types::trust::Trust;

/// Words of the task used for the text signal.
const MAX_WORDS: usize = 24;
/// Files weigh most: a pattern learned from the very folders and kinds of
/// file a task touches is the likeliest to recur in it.
const WEIGHTS: RelevanceWeights = RelevanceWeights { files: 0.45, similar_task: 0.25, category: 0.15, words: 0.15 };

/// What GetWarnings answers.
#[derive(Debug, Clone, PartialEq)]
pub struct Warnings {
    pub warnings: Vec<Warning>,
    /// The task was held out: warnings were chosen and recorded, not shown.
    pub held_out: bool,
}

impl QaLearning {
    /// GetWarnings: chooses the task's warnings and records them as
    /// delivered (held out or shown).
    pub async fn warnings(&self, scope: &ProjectScope, request: &WarningRequest) -> Result<Warnings, Error> {
        let chosen = self.choose_warnings(scope, request).await?;
        self.record_deliveries(request, &chosen).await?;
        Ok(Warnings { warnings: if chosen.held_out { Vec::new() } else { chosen.warnings }, held_out: chosen.held_out })
    }

    /// The task's warnings, best first, and whether the task is held out;
    /// nothing is recorded yet (a briefing records only what it shows).
    pub async fn choose_warnings(&self, scope: &ProjectScope, request: &WarningRequest) -> Result<Warnings, Error> {
        scope.require(&request.project)?;
        if !self.switches.warnings() {
            return Ok(Warnings { warnings: Vec::new(), held_out: false });
        }
        let task = &request.task;
        let globs = files::globs_of(&task.files);
        let words = query_words(&format!("{} {}", task.title, task.description));
        let signals = WarningSignals {
            project: &request.project,
            file_globs: &globs,
            task_category: &task.category.to_lowercase(),
            title: &task.title,
            words: &words,
            min_occurrences: self.config.warn_min_occurrences,
            min_confidence: self.config.warn_min_confidence,
            weights: &WEIGHTS,
        };
        let candidates = store::warning_candidates(&self.pool, scope, &signals, request.limit as i64).await?;
        // A template that keeps no word of its line would be said and tell
        // the agent nothing.
        let mut ranked: Vec<Warning> = candidates
            .iter()
            .map(|candidate| warning(candidate, self.screening(), &request.project))
            .filter(|warning| !lore_calls::memory::is_nameless(&warning.template))
            .collect();
        ranked.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.pattern_id.cmp(&b.pattern_id)));
        let held_out = held_out(&request.project, &task.task_id, self.config.holdout_fraction);
        Ok(Warnings { warnings: ranked, held_out })
    }

    /// Records `chosen` as delivered for the request's task and session:
    /// shown ones count on their patterns, held-out ones are kept for the
    /// comparison.
    pub async fn record_deliveries(&self, request: &WarningRequest, chosen: &Warnings) -> Result<(), Error> {
        let deliveries: Vec<NewDelivery> = chosen
            .warnings
            .iter()
            .enumerate()
            .map(|(index, warning)| NewDelivery {
                delivery_id: warning.delivery_id,
                pattern_id: warning.pattern_id,
                rank: index as i32 + 1,
                relevance: warning.relevance,
                confidence: warning.confidence,
                frequency: warning.frequency,
                score: warning.score,
                text: &warning.text,
                reason: &warning.reason,
            })
            .collect();
        store::record_deliveries(
            &self.pool,
            &request.project,
            &request.task.task_id,
            request.session_id,
            chosen.held_out,
            &deliveries,
        )
        .await
    }

    /// An agent acknowledged the deliveries: returns how many were not
    /// acknowledged before.
    pub async fn acknowledge(&self, scope: &ProjectScope, delivery_ids: &[Uuid], note: &str) -> Result<u64, Error> {
        store::acknowledge(&self.pool, scope, delivery_ids, note).await
    }

    /// Returns how many deliveries took the outcome (those that already had
    /// one are left alone) and the standing of their patterns.
    pub async fn record_outcome(
        &self,
        scope: &ProjectScope,
        delivery_ids: &[Uuid],
        outcome: WarningOutcome,
        note: &str,
    ) -> Result<(u64, Vec<PatternStanding>), Error> {
        let effect = self.outcome_effect();
        let (updated, patterns) =
            store::record_outcome(&self.pool, scope, delivery_ids, outcome, note, &effect).await?;
        let standings = patterns
            .iter()
            .map(|pattern| PatternStanding {
                pattern_id: pattern.pattern_id,
                effectiveness: pattern.effectiveness(),
                confidence: pattern.confidence,
            })
            .collect();
        Ok((updated, standings))
    }
}

fn warning(candidate: &WarningCandidate, screening: &Screening, project: &str) -> Warning {
    let pattern = &candidate.pattern;
    let relevance = candidate.relevance.clamp(0.0, 1.0);
    let frequency = normalized_frequency(pattern.occurrence_count, candidate.most_frequent);
    let mut reasons = Vec::new();
    if !candidate.matching_globs.is_empty() {
        reasons.push(format!("files match {}", candidate.matching_globs.join(", ")));
    }
    if let Some(title) = &candidate.similar_task {
        // A task's title is what an agent wrote: quoted, and left out when
        // the screen would hold it.
        let percent = candidate.task_similarity * 100.0;
        match screening.screen_text(project, "task title", title) {
            None => reasons
                .push(format!("similar past task {} ({percent:.0}% of the words)", lore_screen::fence::quoted(title))),
            Some(_) => reasons.push(format!("a similar past task ({percent:.0}% of the words)")),
        }
    }
    if candidate.same_category {
        reasons.push("same task category".to_owned());
    }
    if candidate.text_match > 0.0 {
        reasons.push("words in common".to_owned());
    }
    Warning {
        delivery_id: Uuid::now_v7(),
        pattern_id: pattern.pattern_id,
        pattern_name: pattern.name.clone(),
        text: actionable_text(pattern, &candidate.fix_files),
        // An agent's fix waits for a person before any agent reads it,
        // in a briefing, a resume or an MCP answer.
        recommended_fix: if pattern.fix_trust.is_some_and(Trust::speaks) {
            pattern.recommended_fix.clone()
        } else {
            String::new()
        },
        fix_trust: pattern.fix_trust,
        template: pattern.template.clone(),
        category: pattern.category.clone(),
        task_count: pattern.task_count,
        last_seen_at: pattern.last_seen_at,
        reason: reasons.join("; "),
        relevance,
        confidence: pattern.confidence,
        frequency: pattern.occurrence_count,
        score: relevance * pattern.confidence * frequency,
        cited_files: candidate.fix_files.clone(),
    }
}

/// ln(1 + n) / ln(1 + max): a pattern seen 10 times is not worth 10 seen
/// once, but more than one.
fn normalized_frequency(occurrences: i64, most_frequent: i64) -> f64 {
    let most = (most_frequent.max(1) as f64).ln_1p();
    ((occurrences.max(0) as f64).ln_1p() / most).clamp(0.0, 1.0)
}

/// What happens, why, how to avoid it, how often, and how well the warning
/// has worked, as an agent may read it: the error is quoted as tool output;
/// the cause and the fix are an agent's prose until a person reviewed the
/// fix, and only then are they said (a passing result verifies what was
/// done, not what was written of it).
/// (A description is only ever a person's edit.)
pub fn actionable_text(pattern: &Pattern, fix_files: &[String]) -> String {
    let mut text = if pattern.description.is_empty() {
        format!(
            "QA has failed with {} ({}).",
            lore_screen::fence::quoted(&pattern.template),
            pattern.category.replace('_', " ")
        )
    } else {
        pattern.description.clone()
    };
    let fix_speaks = pattern.fix_trust.is_some_and(Trust::speaks);
    if fix_speaks && !pattern.common_cause.is_empty() {
        text.push_str(&format!(" Why: {}.", pattern.common_cause.trim_end_matches('.')));
    }
    match pattern.fix_trust {
        Some(fix_trust) if fix_speaks && !pattern.recommended_fix.is_empty() => text.push_str(&format!(
            " How to avoid ({} fix): {}.",
            fix_trust.as_str(),
            pattern.recommended_fix.trim_end_matches('.')
        )),
        _ if !pattern.recommended_fix.is_empty() => {
            // What the fix did is observed; what its agent wrote of it waits.
            match passed_fix_files(pattern.fix_trust, fix_files) {
                Some(files) => text.push_str(&format!(
                    " A fix that passed QA changed {files}; its description waits for a person's review."
                )),
                None => {
                    text.push_str(" A fix is recorded and waits for a person's review: check this before you submit.")
                }
            }
        }
        _ => text.push_str(" How to avoid: check this before you submit; no fix is recorded yet."),
    }
    text.push_str(&format!(
        " Seen {} times in {} tasks, last on {}.",
        pattern.occurrence_count,
        pattern.task_count,
        pattern.last_seen_at.format("%Y-%m-%d")
    ));
    let judged = pattern.prevented_count + pattern.failed_anyway_count;
    if judged > 0 {
        text.push_str(&format!(
            " When shown, this warning prevented the failure {:.0}% of the time ({} of {}).",
            pattern.effectiveness() * 100.0,
            pattern.prevented_count,
            judged
        ));
    }
    text
}

/// The task's words as an OR-ed text query (letters, digits and '_', at
/// least three characters), or empty.
fn query_words(text: &str) -> String {
    let mut words: Vec<String> = Vec::new();
    for word in text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
        let word = word.to_ascii_lowercase();
        if word.len() >= 3 && !words.contains(&word) {
            words.push(word);
        }
        if words.len() == MAX_WORDS {
            break;
        }
    }
    words.join(" | ")
}

/// Whether a task's warnings are held out: a stable function of the
/// project and task, so every call for the task agrees.
pub fn held_out(project: &str, task_id: &str, fraction: f64) -> bool {
    if fraction <= 0.0 {
        return false;
    }
    let hash = blake3::hash(format!("{project}\u{1f}{task_id}").as_bytes());
    let bytes: [u8; 8] = hash.as_bytes()[..8].try_into().expect("8 bytes");
    (u64::from_le_bytes(bytes) as f64 / u64::MAX as f64) < fraction
}

/// The files a fix that passed QA changed, as a warning names them while
/// its words wait for review: at most three, each a path (one word), in
/// code; `None` when the fix is not verified or names no such file.
pub fn passed_fix_files(fix_trust: Option<Trust>, files: &[String]) -> Option<String> {
    if fix_trust != Some(Trust::Verified) {
        return None;
    }
    let paths: Vec<String> = files
        .iter()
        .filter(|file| !file.is_empty() && lore_screen::fence::is_one_word(file))
        .take(MAX_FIX_FILES)
        .map(|file| lore_screen::fence::code(file, FIX_FILE_CHARS))
        .collect();
    (!paths.is_empty()).then(|| paths.join(", "))
}

/// How many of a verified fix's files a warning names, and how long each.
const MAX_FIX_FILES: usize = 3;
const FIX_FILE_CHARS: usize = 120;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_words_are_safe_for_to_tsquery() {
        assert_eq!(
            query_words("Add users' table & (schema) migration: users"),
            "add | users | table | schema | migration"
        );
        assert_eq!(query_words("a b !!"), "");
    }

    #[test]
    fn frequency_is_log_normalized() {
        assert_eq!(normalized_frequency(10, 10), 1.0);
        assert!(normalized_frequency(1, 10) > 0.25 && normalized_frequency(1, 10) < 0.35);
        assert_eq!(normalized_frequency(0, 0), 0.0);
    }

    #[test]
    fn hold_out_is_stable_and_near_its_fraction() {
        assert!(!held_out("p", "t", 0.0));
        assert!(held_out("p", "t", 1.0));
        let held = (0..10_000).filter(|index| held_out("p", &format!("task-{index}"), 0.2)).count();
        assert!((1800..2200).contains(&held), "{held} of 10000 held out at 0.2");
        assert_eq!(held_out("p", "task-7", 0.5), held_out("p", "task-7", 0.5));
    }
}
