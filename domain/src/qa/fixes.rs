//! Fix attempts: kept in order per failure; the first success resolves the
//! failure with its attempt count and becomes, for each pattern of the
//! failure, a gotcha in the knowledge base (problem, solution, and a
//! confidence from the pattern's fix success rate).
//!
//! An attempt's approach and summary are an agent's words: they are
//! screened, and one the screen holds still counts (the failure is
//! resolved) but fills no pattern and makes no gotcha until a person
//! releases it. A fix is observed until a passing result of its task
//! verifies it (`store::qa::verify_fixes`).
//!
//! A pattern's gotcha follows its most trusted, then newest, fix: an
//! observed fix rewrites an observed gotcha but never a verified one; a
//! verified fix rewrites an observed gotcha, and supersedes an older
//! verified one, which is kept under its own key with the relation.

use serde_json::json;
use uuid::Uuid;

use super::QaLearning;
use crate::Error;
use lore_store::qa as store;
use lore_types::knowledge::{Entry, EntryKind, EntryStatus, GotchaDetails, NewEntry};
use lore_types::qa::{FixAttempt, FixOutcome, FixRecorded, FixToReview, Pattern};
use lore_types::scope::ProjectScope;
use lore_types::trust::quarantine::ItemKind;
use lore_types::trust::{Author, Origin, Trust};

impl QaLearning {
    /// Records an attempt. A replay of a stored `attempt_id` answers as the
    /// first time; the same number under another id is ALREADY_EXISTS.
    pub async fn record_fix(&self, scope: &ProjectScope, attempt: &FixAttempt) -> Result<FixRecorded, Error> {
        let mut transaction = self.pool.begin().await?;
        let (project, already_resolved) =
            store::fixes::lock_failure(&mut transaction, scope, attempt.failure_id).await?;
        if let Some(stored) = store::fixes::attempt(&mut transaction, attempt.attempt_id).await? {
            if stored.failure_id != attempt.failure_id || stored.attempt_number != attempt.attempt_number {
                return Err(Error::AlreadyExists(format!(
                    "attempt_id {} is attempt {} of failure {}",
                    stored.attempt_id, stored.attempt_number, stored.failure_id
                )));
            }
            let attempts = store::fixes::attempt_count(&mut transaction, attempt.failure_id).await?;
            let held =
                lore_store::trust::quarantine::held_parts(&mut transaction, ItemKind::FixAttempt, stored.attempt_id)
                    .await?;
            let gotchas = if stored.outcome == FixOutcome::Success && held.is_empty() {
                let patterns = store::fixes::failure_patterns(&mut transaction, attempt.failure_id).await?;
                self.gotcha_ids(&mut transaction, scope, &patterns).await?
            } else {
                Vec::new()
            };
            return Ok(FixRecorded {
                attempt_id: attempt.attempt_id,
                duplicate: true,
                resolved: already_resolved,
                attempts: attempts as u32,
                gotcha_entry_ids: gotchas,
                held: (!held.is_empty()).then(|| format!("held by the injection screen ({})", held.join(", "))),
            });
        }
        let held = self.screening().screen(
            &project,
            [("approach".to_owned(), attempt.approach.as_str()), ("summary".to_owned(), attempt.summary.as_str())],
        );
        store::fixes::insert_attempt(&mut transaction, &project, attempt).await?;
        if let Some(held) = &held {
            let kind = ItemKind::FixAttempt;
            lore_store::trust::quarantine::hold(
                &mut transaction,
                &project,
                kind,
                attempt.attempt_id,
                held,
                &attempt.origin,
            )
            .await?;
        }
        let attempts = store::fixes::attempt_count(&mut transaction, attempt.failure_id).await?;
        let resolves = attempt.outcome == FixOutcome::Success && !already_resolved;
        let mut gotchas = Vec::new();
        if resolves {
            store::fixes::resolve(&mut transaction, &project, attempt.failure_id, attempt.attempt_id, attempts).await?;
            if held.is_none() {
                gotchas = self.apply_fix(&mut transaction, scope, attempt).await?;
            }
        }
        transaction.commit().await?;
        if !gotchas.is_empty() {
            self.knowledge.written().await;
        }
        Ok(FixRecorded {
            attempt_id: attempt.attempt_id,
            duplicate: false,
            resolved: resolves,
            attempts: attempts as u32,
            gotcha_entry_ids: gotchas,
            held: held.map(|held| held.reason()),
        })
    }

    /// What a resolving attempt's words do: fill its failure's patterns and
    /// become their gotchas. Returns the gotchas.
    async fn apply_fix(
        &self,
        transaction: &mut sqlx::PgConnection,
        scope: &ProjectScope,
        attempt: &FixAttempt,
    ) -> Result<Vec<Uuid>, Error> {
        let (_, messages, _) = store::fixes::failure_task_messages(transaction, attempt.failure_id).await?;
        let mut gotchas = Vec::new();
        for (pattern, fix_success_rate) in store::fixes::failure_patterns(transaction, attempt.failure_id).await? {
            store::fixes::fill_from_fix(transaction, pattern.pattern_id, attempt).await?;
            if names_nothing(&pattern) {
                continue;
            }
            let current = self.current_gotcha(transaction, scope, &pattern).await?;
            if let Some(current) = current.as_ref().filter(|current| current.trust < attempt.trust) {
                // An unverified fix does not rewrite a verified gotcha.
                gotchas.push(current.entry_id);
                continue;
            }
            let entry = gotcha(&pattern, attempt, fix_success_rate, &messages);
            let (stored, _) = self.knowledge.upsert_in(transaction, scope, &entry).await?;
            gotchas.push(stored.entry_id);
        }
        Ok(gotchas)
    }

    async fn current_gotcha(
        &self,
        transaction: &mut sqlx::PgConnection,
        scope: &ProjectScope,
        pattern: &Pattern,
    ) -> Result<Option<Entry>, Error> {
        lore_store::knowledge::find_in(transaction, scope, &pattern.project, &gotcha_key(pattern.pattern_id)).await
    }

    /// After a passing result verified `attempt_ids`: each one that resolved
    /// its failure becomes its patterns' gotcha, unless a newer verified
    /// fix already is. An older verified gotcha is superseded, not lost.
    pub(crate) async fn follow_verified_fixes(&self, scope: &ProjectScope, attempt_ids: &[Uuid]) -> Result<(), Error> {
        if attempt_ids.is_empty() {
            return Ok(());
        }
        let mut transaction = self.pool.begin().await?;
        let mut wrote = false;
        for &attempt_id in attempt_ids {
            let Some(attempt) = store::fixes::attempt(&mut transaction, attempt_id).await? else { continue };
            if store::fixes::resolving_attempt(&mut transaction, attempt.failure_id).await? != Some(attempt_id) {
                continue;
            }
            let (_, messages, _) = store::fixes::failure_task_messages(&mut transaction, attempt.failure_id).await?;
            for (pattern, fix_success_rate) in
                store::fixes::failure_patterns(&mut transaction, attempt.failure_id).await?
            {
                if names_nothing(&pattern) {
                    continue;
                }
                let entry = gotcha(&pattern, &attempt, fix_success_rate, &messages);
                wrote |= self.follow_verified(&mut transaction, scope, &pattern, &attempt, entry).await?;
            }
        }
        transaction.commit().await?;
        if wrote {
            self.knowledge.written().await;
        }
        Ok(())
    }

    /// Makes the verified `attempt`'s gotcha its pattern's; whether
    /// anything was written.
    async fn follow_verified(
        &self,
        transaction: &mut sqlx::PgConnection,
        scope: &ProjectScope,
        pattern: &Pattern,
        attempt: &FixAttempt,
        entry: NewEntry,
    ) -> Result<bool, Error> {
        let Some(current) = self.current_gotcha(transaction, scope, pattern).await? else {
            self.knowledge.upsert_in(transaction, scope, &entry).await?;
            return Ok(true);
        };
        let current_attempt = gotcha_attempt(&current);
        if current_attempt == Some(attempt.attempt_id) {
            // Verified with its attempt (`store::qa::verify_fixes`).
            return Ok(false);
        }
        if current.trust == Trust::Observed {
            self.knowledge.upsert_in(transaction, scope, &entry).await?;
            return Ok(true);
        }
        let older = match current_attempt {
            Some(id) => store::fixes::attempt(transaction, id)
                .await?
                .is_none_or(|other| other.recorded_at < attempt.recorded_at),
            // A gotcha a person wrote stays.
            None => false,
        };
        if !older || current.trust == Trust::Reviewed {
            return Ok(false);
        }
        let kept_key = format!("{}@{}", gotcha_key(pattern.pattern_id), current_attempt.unwrap_or_default());
        lore_store::knowledge::rekey(transaction, current.entry_id, &kept_key).await?;
        let (newer, _) = self.knowledge.upsert_in(transaction, scope, &NewEntry { entry_id: None, ..entry }).await?;
        lore_store::knowledge::supersede(transaction, current.entry_id, newer.entry_id).await?;
        Ok(true)
    }

    /// A held attempt a person released: when it resolved its failure, its
    /// words now do what they would have. Returns whether knowledge was
    /// written.
    pub(crate) async fn apply_released_fix(
        &self,
        transaction: &mut sqlx::PgConnection,
        scope: &ProjectScope,
        attempt_id: Uuid,
    ) -> Result<bool, Error> {
        let attempt = store::fixes::attempt(transaction, attempt_id)
            .await?
            .ok_or_else(|| Error::NotFound(format!("attempt {attempt_id}")))?;
        if store::fixes::resolving_attempt(transaction, attempt.failure_id).await? != Some(attempt_id) {
            return Ok(false);
        }
        Ok(!self.apply_fix(transaction, scope, &attempt).await?.is_empty())
    }

    /// A project's successful fixes waiting for a person, newest first.
    pub async fn fixes_to_review(
        &self,
        scope: &ProjectScope,
        project: &str,
        limit: i64,
    ) -> Result<Vec<FixToReview>, Error> {
        store::fixes::fixes_to_review(&self.pool, scope, project, limit).await
    }

    /// A person's decision on a fix's words. Approved, they become its
    /// patterns' reviewed fix and, when it resolved its failure, their
    /// gotcha, which a briefing then says; rejected, they leave the queue and
    /// no pattern keeps them. An agent never decides (the RPC is a
    /// person's), and a fix the screen holds is released or erased in the
    /// quarantine queue first. Returns the fix's project and the fix as
    /// decided.
    pub async fn review_fix(
        &self,
        scope: &ProjectScope,
        attempt_id: Uuid,
        approved: bool,
        reviewer: &Origin,
        note: &str,
    ) -> Result<(String, FixAttempt), Error> {
        if reviewer.author != Author::Person {
            return Err(Error::PermissionDenied("only a person reviews a fix".into()));
        }
        let mut transaction = self.pool.begin().await?;
        let attempt = store::fixes::attempt(&mut transaction, attempt_id)
            .await?
            .ok_or_else(|| Error::NotFound(format!("fix attempt {attempt_id}")))?;
        let (project, _) = store::fixes::lock_failure(&mut transaction, scope, attempt.failure_id).await?;
        if attempt.held {
            return Err(Error::FailedPrecondition(format!(
                "attempt_id: the injection screen holds fix attempt {attempt_id}: release or erase it in the \
                 quarantine queue"
            )));
        }
        if attempt.outcome != FixOutcome::Success {
            return Err(Error::FailedPrecondition(format!(
                "attempt_id: fix attempt {attempt_id} did not succeed; only a successful fix is reviewed"
            )));
        }
        if !store::fixes::review_attempt(&mut transaction, attempt_id, approved, &reviewer.token, note).await? {
            return Err(Error::FailedPrecondition(format!("attempt_id: fix attempt {attempt_id} is decided already")));
        }
        let reviewed = store::fixes::attempt(&mut transaction, attempt_id)
            .await?
            .ok_or_else(|| Error::NotFound(format!("fix attempt {attempt_id}")))?;
        let mut wrote = false;
        if approved {
            store::fixes::adopt_reviewed_fix(&mut transaction, &reviewed).await?;
            if store::fixes::resolving_attempt(&mut transaction, reviewed.failure_id).await? == Some(attempt_id) {
                wrote = !self.apply_fix(&mut transaction, scope, &reviewed).await?.is_empty();
            }
        } else {
            store::fixes::drop_rejected_fix(&mut transaction, attempt_id).await?;
        }
        transaction.commit().await?;
        if wrote {
            self.knowledge.written().await;
        }
        Ok((project, reviewed))
    }

    async fn gotcha_ids(
        &self,
        transaction: &mut sqlx::PgConnection,
        scope: &ProjectScope,
        patterns: &[(Pattern, f64)],
    ) -> Result<Vec<Uuid>, Error> {
        let mut ids = Vec::new();
        for (pattern, _) in patterns {
            let key = gotcha_key(pattern.pattern_id);
            if let Some(entry_id) =
                lore_store::knowledge::entry_id_by_key(transaction, scope, &pattern.project, &key).await?
            {
                ids.push(entry_id);
            }
        }
        Ok(ids)
    }
}

/// A pattern whose template keeps no word of its line (`<*> <*> in <*>`):
/// a gotcha of it would tell an agent nothing, and it gets none.
fn names_nothing(pattern: &Pattern) -> bool {
    lore_calls::memory::is_nameless(&pattern.template)
}

/// One gotcha per pattern: later fixes update it rather than pile up.
pub fn gotcha_key(pattern_id: Uuid) -> String {
    format!("qa-gotcha-{pattern_id}")
}

/// The fix attempt a gotcha was made from.
fn gotcha_attempt(entry: &Entry) -> Option<Uuid> {
    gotcha_id(entry, "attempt_id")
}

/// The QA pattern whose gotcha `entry` is.
pub fn gotcha_pattern(entry: &Entry) -> Option<Uuid> {
    gotcha_id(entry, "qa_pattern_id")
}

/// An id a gotcha's details hold (`GotchaDetails`).
fn gotcha_id(entry: &Entry, field: &str) -> Option<Uuid> {
    entry.details.get(field).and_then(|id| id.as_str()).and_then(|id| Uuid::parse_str(id).ok())
}

/// A failure's distinct messages as an entry's symptoms: a few, each cut
/// to the symptom limit.
fn symptoms_of(messages: &[String]) -> Vec<String> {
    use lore_types::knowledge::limits::MAX_SYMPTOM_CHARS;
    const KEPT: usize = 5;
    let mut symptoms: Vec<String> = Vec::new();
    for message in messages {
        let message: String = message.trim().chars().take(MAX_SYMPTOM_CHARS).collect();
        if !message.is_empty() && !symptoms.contains(&message) && symptoms.len() < KEPT {
            symptoms.push(message);
        }
    }
    symptoms
}

/// The gotcha a successful fix of a pattern's failure becomes.
fn gotcha(pattern: &Pattern, attempt: &FixAttempt, fix_success_rate: f64, messages: &[String]) -> NewEntry {
    let problem = if pattern.description.is_empty() {
        format!("QA fails with: {}", pattern.template)
    } else {
        pattern.description.clone()
    };
    let solution = [attempt.approach.as_str(), attempt.summary.as_str()]
        .into_iter()
        .filter(|part| !part.is_empty())
        .collect::<Vec<_>>()
        .join(" — ");
    let solution = if solution.is_empty() { "See the fix attempt's changes.".to_owned() } else { solution };
    let mut body = format!("## Problem\n\n{problem}\n\n## Solution\n\n{solution}\n");
    if !attempt.files_changed.is_empty() {
        body.push_str(&format!("\nFiles changed: {}\n", attempt.files_changed.join(", ")));
    }
    if let Some(example) = messages.first() {
        let example: String = example.chars().take(500).collect();
        body.push_str(&format!("\n## Example\n\n```\n{}\n```\n", example.replace("```", "'''")));
    }
    body.push_str(&format!(
        "\nSeen {} times in {} tasks; fixes of this pattern succeed {:.0}% of the time.\n",
        pattern.occurrence_count,
        pattern.task_count,
        fix_success_rate * 100.0
    ));
    let details = GotchaDetails {
        problem: problem.clone(),
        solution,
        confidence: fix_success_rate,
        qa_pattern_id: pattern.pattern_id.to_string(),
        attempt_id: attempt.attempt_id.to_string(),
    };
    NewEntry {
        entry_id: None,
        key: Some(gotcha_key(pattern.pattern_id)),
        project: pattern.project.clone(),
        kind: EntryKind::Gotcha,
        title: format!("Gotcha: {}", pattern.name).chars().take(500).collect(),
        category: pattern.category.clone(),
        summary: problem.chars().take(4000).collect(),
        body,
        tags: vec!["qa".into(), pattern.category.clone()],
        status: EntryStatus::Active,
        severity: None,
        prevention_checklist: Vec::new(),
        solutions: Vec::new(),
        details: serde_json::to_value(details).unwrap_or_else(|_| json!({})),
        source_path: None,
        front_matter: None,
        document: None,
        // The messages the failure was met with: the next agent that pastes
        // one finds this gotcha.
        symptoms: symptoms_of(messages),
        root_causes: Vec::new(),
        usage_count: 0,
        last_used_at: None,
        // Lore wrote it from the agent's fix: as trusted as that fix.
        origin: Origin { author: Author::Lore, channel: "lore".into(), ..attempt.origin.clone() },
        trust: attempt.trust,
        cited_files: attempt.files_changed.clone(),
        supersedes: Vec::new(),
    }
}
