//! Promotion: patterns whose warnings proved themselves (effectiveness,
//! distinct tasks and confidence over the thresholds) are proposed as
//! markdown; a reviewer approves (the proposal is published as a learning
//! in the project's publish folder and indexed) or rejects; a published
//! promotion can be rolled back (the learning becomes obsolete). Every step
//! is kept in the promotion's history.

use serde_json::{Map, Value};
use uuid::Uuid;

use super::QaLearning;
use super::instructions::{self, Edit};
use crate::Error;
use crate::knowledge::document;
use lore_instructions::Instruction;
use lore_store::qa as pattern_store;
use lore_store::qa::promotion as store;
use lore_types::actions::StoredName as _;
use lore_types::qa::significance::{Comparison, Counts};
use lore_types::qa::{Pattern, PatternStatus, Promotion, PromotionDecision, PromotionStatus};
use lore_types::scope::ProjectScope;

/// A project's standing instructions, with the promotion of each.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StandingInstructions {
    pub instructions: Vec<(Uuid, Instruction)>,
    /// Keys of entries that come out.
    pub withdrawn: Vec<String>,
}

/// Published and rolled-back promotions a project's list is built from.
const MAX_INSTRUCTIONS: i64 = 500;
/// Example failures a proposal quotes.
const EXAMPLES: i64 = 3;
/// Patterns over the thresholds whose evidence is weighed per listing.
const MAX_EXAMINED: i64 = 500;

impl QaLearning {
    /// Patterns over the thresholds whose effect is significant, best
    /// first, with their evidence.
    pub async fn promotion_candidates(
        &self,
        scope: &ProjectScope,
        project: &str,
        limit: i64,
    ) -> Result<Vec<(Pattern, Comparison)>, Error> {
        let over =
            store::promotion_candidates(&self.pool, scope, project, &self.config.promotion, MAX_EXAMINED).await?;
        let ids: Vec<Uuid> = over.iter().map(|pattern| pattern.pattern_id).collect();
        let evidence = store::pattern_evidence(&self.pool, &ids).await?;
        Ok(over
            .into_iter()
            .map(|pattern| {
                let comparison = self.comparison(evidence.get(&pattern.pattern_id).copied().unwrap_or_default());
                (pattern, comparison)
            })
            .filter(|(_, comparison)| comparison.significant)
            .take(usize::try_from(limit).unwrap_or(0))
            .collect())
    }

    /// The evidence of a pattern's warnings: shown against held-out tasks.
    pub async fn evidence(&self, pattern_id: Uuid) -> Result<Comparison, Error> {
        let evidence = store::pattern_evidence(&self.pool, &[pattern_id]).await?;
        Ok(self.comparison(evidence.get(&pattern_id).copied().unwrap_or_default()))
    }

    fn comparison(&self, (shown, held_out): (Counts, Counts)) -> Comparison {
        Comparison::new(shown, held_out, self.config.promotion.significance)
    }

    /// Proposes a qualifying pattern. A replay of `promotion_id` returns the
    /// stored promotion.
    pub async fn propose(
        &self,
        scope: &ProjectScope,
        promotion_id: Uuid,
        pattern_id: Uuid,
        actor: &str,
    ) -> Result<Promotion, Error> {
        self.learning_on()?;
        let mut connection = self.pool.acquire().await?;
        if let Some(stored) = store::promotion(&mut connection, scope, promotion_id, false).await? {
            if stored.pattern_id != pattern_id {
                return Err(Error::AlreadyExists(format!("promotion_id {promotion_id} promotes another pattern")));
            }
            return Ok(stored);
        }
        let pattern = pattern_store::pattern(&self.pool, scope, pattern_id).await?;
        let evidence = self.evidence(pattern_id).await?;
        self.check_qualifies(&pattern, &evidence)?;
        let examples = store::example_failures(&self.pool, pattern_id, EXAMPLES).await?;
        let promotion = Promotion {
            promotion_id,
            project: pattern.project.clone(),
            pattern_id,
            status: PromotionStatus::Pending,
            markdown: proposal(&pattern, &evidence, &examples),
            entry_id: None,
            history: Vec::new(),
            instructions: String::new(),
        };
        let mut transaction = self.pool.begin().await?;
        if !store::insert_promotion(&mut transaction, &promotion, actor).await? {
            return Err(Error::FailedPrecondition(format!("pattern {pattern_id} already has an open promotion")));
        }
        transaction.commit().await?;
        store::promotion(&mut connection, scope, promotion_id, false)
            .await?
            .ok_or_else(|| Error::NotFound(format!("promotion {promotion_id}")))
    }

    fn check_qualifies(&self, pattern: &Pattern, evidence: &Comparison) -> Result<(), Error> {
        let thresholds = &self.config.promotion;
        let mut short = Vec::new();
        if pattern.status != PatternStatus::Active {
            short.push(format!("status is {}, not active", pattern.status.as_str()));
        }
        if pattern.effectiveness() < thresholds.min_effectiveness {
            short.push(format!("effectiveness {:.2} < {:.2}", pattern.effectiveness(), thresholds.min_effectiveness));
        }
        if pattern.task_count < thresholds.min_tasks {
            short.push(format!("seen in {} tasks < {}", pattern.task_count, thresholds.min_tasks));
        }
        if pattern.confidence < thresholds.min_confidence {
            short.push(format!("confidence {:.2} < {:.2}", pattern.confidence, thresholds.min_confidence));
        }
        if !evidence.significant {
            short.push(format!(
                "its effect is not significant: p = {:.3} > {} (shown: {} of {} tasks failed on it; held out: {} of {})",
                evidence.p_value,
                evidence.significance,
                evidence.shown.counts.failed,
                evidence.shown.counts.tasks,
                evidence.held_out.counts.failed,
                evidence.held_out.counts.tasks,
            ));
        }
        if short.is_empty() {
            Ok(())
        } else {
            Err(Error::FailedPrecondition(format!(
                "pattern {} does not qualify for promotion: {}",
                pattern.pattern_id,
                short.join(", ")
            )))
        }
    }

    /// Applies a reviewer's decision. The same decision again (a retry)
    /// answers with the promotion as it is.
    pub async fn review_promotion(
        &self,
        scope: &ProjectScope,
        promotion_id: Uuid,
        decision: PromotionDecision,
        actor: &str,
        note: &str,
    ) -> Result<Promotion, Error> {
        let mut transaction = self.pool.begin().await?;
        let promotion = store::promotion(&mut transaction, scope, promotion_id, true)
            .await?
            .ok_or_else(|| Error::NotFound(format!("promotion {promotion_id}")))?;
        let (from, to) = match decision {
            PromotionDecision::Approve => (PromotionStatus::Pending, PromotionStatus::Published),
            PromotionDecision::Reject => (PromotionStatus::Pending, PromotionStatus::Rejected),
            PromotionDecision::Rollback => (PromotionStatus::Published, PromotionStatus::RolledBack),
        };
        if promotion.status == to {
            return Ok(promotion);
        }
        if promotion.status != from {
            return Err(Error::FailedPrecondition(format!(
                "promotion {promotion_id} is {}, not {}",
                promotion.status.as_str(),
                from.as_str()
            )));
        }
        let mut published = None;
        match decision {
            PromotionDecision::Approve => {
                store::set_promotion_status(&mut transaction, &promotion, PromotionStatus::Approved, None, actor, note)
                    .await?;
                let markdown = published_markdown(&promotion, actor, false);
                let entry = self
                    .knowledge
                    .publish(&mut transaction, scope, &promotion.project, &file_name(&promotion), &markdown)
                    .await?;
                store::set_promotion_status(&mut transaction, &promotion, to, Some(entry.entry_id), actor, "").await?;
                store::set_pattern_status(&mut transaction, promotion.pattern_id, PatternStatus::Promoted.as_str())
                    .await?;
                published = Some(entry.entry_id);
            }
            PromotionDecision::Reject => {
                store::set_promotion_status(&mut transaction, &promotion, to, None, actor, note).await?;
            }
            PromotionDecision::Rollback => {
                // The document stays where readers and the watcher find it,
                // marked obsolete, so a rescan agrees with the database.
                let markdown = published_markdown(&promotion, actor, true);
                let entry = self
                    .knowledge
                    .publish(&mut transaction, scope, &promotion.project, &file_name(&promotion), &markdown)
                    .await?;
                store::set_promotion_status(&mut transaction, &promotion, to, None, actor, note).await?;
                store::set_pattern_status(&mut transaction, promotion.pattern_id, PatternStatus::Active.as_str())
                    .await?;
                published = Some(entry.entry_id);
            }
        }
        transaction.commit().await?;
        if published.is_some() {
            self.knowledge.written().await;
        }
        if decision != PromotionDecision::Reject {
            self.update_instructions(&promotion, decision).await?;
        }
        let mut connection = self.pool.acquire().await?;
        store::promotion(&mut connection, scope, promotion_id, false)
            .await?
            .ok_or_else(|| Error::NotFound(format!("promotion {promotion_id}")))
    }

    /// Writes a published promotion into its project's instructions file,
    /// or takes a rolled-back one out, and records how that went on the
    /// promotion. Edits of one file are serialized across replicas.
    async fn update_instructions(&self, promotion: &Promotion, decision: PromotionDecision) -> Result<(), Error> {
        let Some(file) = self.config.instructions.iter().find(|file| file.project == promotion.project) else {
            let status = "repositories take it in through `lore instructions sync` and the SessionStart hook \
                          (no instructions file on the server for this project)"
                .to_owned();
            let mut connection = self.pool.acquire().await?;
            return store::set_promotion_instructions(&mut connection, promotion.promotion_id, &status).await;
        };
        let pattern = pattern_store::pattern(&self.pool, &ProjectScope::All, promotion.pattern_id).await?;
        let key = entry_key(promotion);
        let body = standing_instruction(&pattern, &key);
        let path = file.file.clone();
        let mut transaction = store::lock_instructions_file(&self.pool, &path.to_string_lossy()).await?;
        let knowledge = self.knowledge.clone();
        let entry = key.clone();
        let applied = tokio::task::spawn_blocking(move || {
            instructions::apply(
                &path,
                |text| match decision {
                    PromotionDecision::Approve => instructions::upsert(text, &entry, &body),
                    _ => instructions::remove(text, &entry),
                },
                |bytes| knowledge.own_writes().record(&path, bytes),
            )
        })
        .await
        .map_err(|error| Error::Unavailable(format!("writing the instructions file stopped: {error}")))?;
        let shown = file.file.display();
        let status = match (applied, decision) {
            (Ok((Edit::Changed(_), _)), PromotionDecision::Approve) => format!("written to {shown} as entry {key}"),
            (Ok((Edit::Unchanged, _)), PromotionDecision::Approve) => format!("already in {shown} as entry {key}"),
            (Ok((Edit::Changed(_), _)), _) => format!("entry {key} removed from {shown}"),
            (Ok((Edit::Unchanged, _)), _) => format!("entry {key} was not in {shown}; nothing to remove"),
            (Ok((Edit::Conflict(reason), _)), _) => format!("conflict in {shown}: {reason}"),
            (Err(error), _) => format!("could not write {shown}: {error}"),
        };
        if status.starts_with("conflict") || status.starts_with("could not") {
            tracing::warn!(promotion_id = %promotion.promotion_id, status, "standing instructions not updated");
        }
        store::set_promotion_instructions(&mut transaction, promotion.promotion_id, &status).await?;
        transaction.commit().await?;
        Ok(())
    }

    /// The project's standing instructions, as repositories hold them: each
    /// published promotion as its entry, oldest first, and the keys of the
    /// rolled-back ones that were not published again.
    pub async fn standing_instructions(
        &self,
        scope: &ProjectScope,
        project: &str,
    ) -> Result<StandingInstructions, Error> {
        let statuses = [PromotionStatus::Published, PromotionStatus::RolledBack];
        let listed = store::list_promotions(&self.pool, scope, project, &statuses, MAX_INSTRUCTIONS, None).await?;
        // Every session start reads this: the patterns in one query.
        let published: Vec<Uuid> = listed
            .iter()
            .filter(|(promotion, _)| promotion.status == PromotionStatus::Published)
            .map(|(promotion, _)| promotion.pattern_id)
            .collect();
        let patterns: std::collections::HashMap<Uuid, Pattern> = pattern_store::patterns(&self.pool, scope, &published)
            .await?
            .into_iter()
            .map(|pattern| (pattern.pattern_id, pattern))
            .collect();
        let mut standing = StandingInstructions::default();
        // Oldest first, so that of two promotions of one pattern the newer
        // decides whether its entry stands.
        for (promotion, _) in listed.iter().rev() {
            let key = entry_key(promotion);
            standing.withdrawn.retain(|withdrawn| withdrawn != &key);
            standing.instructions.retain(|(_, instruction)| instruction.key != key);
            if promotion.status == PromotionStatus::Published {
                let pattern = patterns
                    .get(&promotion.pattern_id)
                    .ok_or_else(|| Error::NotFound(format!("pattern {}", promotion.pattern_id)))?;
                let body = standing_instruction(pattern, &key);
                standing.instructions.push((promotion.promotion_id, Instruction { key, body }));
            } else {
                standing.withdrawn.push(key);
            }
        }
        Ok(standing)
    }

    /// The published promotion whose learning `entry_id` is, if any.
    pub async fn published_promotion_of(&self, scope: &ProjectScope, entry_id: Uuid) -> Result<Option<Uuid>, Error> {
        pattern_store::fixes::published_promotion_of(&self.pool, scope, entry_id).await
    }

    pub async fn list_promotions(
        &self,
        scope: &ProjectScope,
        project: &str,
        statuses: &[PromotionStatus],
        limit: i64,
        after: Option<(chrono::DateTime<chrono::Utc>, Uuid)>,
    ) -> Result<Vec<(Promotion, chrono::DateTime<chrono::Utc>)>, Error> {
        store::list_promotions(&self.pool, scope, project, statuses, limit, after).await
    }
}

/// The key and file name of a promotion's learning.
fn entry_key(promotion: &Promotion) -> String {
    let hex = promotion.pattern_id.simple().to_string();
    format!("QA-{}", &hex[hex.len() - 12..])
}

/// A promotion as one standing instruction: what to do, and where it came
/// from.
fn standing_instruction(pattern: &Pattern, key: &str) -> String {
    let advice = [&pattern.recommended_fix, &pattern.description]
        .into_iter()
        .map(|text| text.trim())
        .find(|text| !text.is_empty())
        .map(str::to_owned)
        .unwrap_or_else(|| {
            format!("QA fails with `{}`; check for it before you submit", pattern.template.replace('`', "'"))
        });
    let files = if pattern.file_globs.is_empty() {
        String::new()
    } else {
        format!(" (files {})", pattern.file_globs.iter().map(|glob| format!("`{glob}`")).collect::<Vec<_>>().join(", "))
    };
    let one_line = |text: &str| text.split_whitespace().collect::<Vec<_>>().join(" ");
    format!(
        "- **{}**{files}: {}. _From Lore QA pattern {key} ({}), seen {} times in {} tasks._",
        one_line(&pattern.name),
        one_line(advice.trim_end_matches('.')),
        pattern.category.replace('_', " "),
        pattern.occurrence_count,
        pattern.task_count,
    )
}

fn file_name(promotion: &Promotion) -> String {
    format!("{}.md", entry_key(promotion))
}

fn published_markdown(promotion: &Promotion, approver: &str, obsolete: bool) -> String {
    let mut front_matter = Map::new();
    front_matter.insert("id".into(), entry_key(promotion).into());
    front_matter.insert("category".into(), Value::from("qa"));
    front_matter.insert("tags".into(), Value::from(vec!["qa", "promoted"]));
    front_matter.insert("status".into(), Value::from(if obsolete { "obsolete" } else { "active" }));
    front_matter.insert("qa_pattern_id".into(), promotion.pattern_id.to_string().into());
    front_matter.insert("promotion_id".into(), promotion.promotion_id.to_string().into());
    front_matter.insert("approved_by".into(), approver.into());
    document::with_front_matter(&front_matter, &promotion.markdown)
}

/// The proposal: title, when it occurs, what goes wrong, how to avoid it,
/// how often, and concrete example failures.
pub fn proposal(pattern: &Pattern, evidence: &Comparison, examples: &[(String, String, String)]) -> String {
    let mut text = format!("# {}\n\n", pattern.name);
    text.push_str("## When it occurs\n\n");
    text.push_str(&format!("QA category: {}.", pattern.category.replace('_', " ")));
    if !pattern.file_globs.is_empty() {
        text.push_str(&format!(
            " Files: {}.",
            pattern.file_globs.iter().map(|glob| format!("`{glob}`")).collect::<Vec<_>>().join(", ")
        ));
    }
    text.push_str("\n\n## What goes wrong\n\n");
    if !pattern.description.is_empty() {
        text.push_str(&format!("{}\n\n", pattern.description));
    }
    text.push_str(&format!("QA fails with:\n\n```\n{}\n```\n\n", pattern.template.replace("```", "'''")));
    if !pattern.common_cause.is_empty() {
        text.push_str(&format!("Common cause: {}\n\n", pattern.common_cause));
    }
    text.push_str("## How to avoid it\n\n");
    if pattern.recommended_fix.is_empty() {
        text.push_str("No fix is recorded yet; see the example failures.\n\n");
    } else {
        text.push_str(&format!("{}\n\n", pattern.recommended_fix));
    }
    text.push_str("## Frequency\n\n");
    text.push_str(&format!(
        "Seen {} times in {} tasks between {} and {}. When warned about, the failure was prevented {:.0}% of the \
         time ({} of {}); confidence {:.2}.\n",
        pattern.occurrence_count,
        pattern.task_count,
        pattern.first_seen_at.format("%Y-%m-%d"),
        pattern.last_seen_at.format("%Y-%m-%d"),
        pattern.effectiveness() * 100.0,
        pattern.prevented_count,
        pattern.prevented_count + pattern.failed_anyway_count,
        pattern.confidence,
    ));
    let (shown, held_out) = (&evidence.shown, &evidence.held_out);
    if held_out.counts.tasks > 0 {
        text.push_str(&format!(
            "Tasks shown the warning failed on it {} of {} times ({:.0}%); tasks it was held out from, {} of {} \
             ({:.0}%); one-sided Fisher exact p = {:.3}.\n",
            shown.counts.failed,
            shown.counts.tasks,
            shown.rate * 100.0,
            held_out.counts.failed,
            held_out.counts.tasks,
            held_out.rate * 100.0,
            evidence.p_value
        ));
    }
    if !examples.is_empty() {
        text.push_str("\n## Example failures\n\n");
        for (task_id, title, message) in examples {
            let message: String = message.chars().take(300).collect();
            let title = if title.is_empty() { String::new() } else { format!(" ({title})") };
            text.push_str(&format!("- Task {task_id}{title}: `{}`\n", message.replace('`', "'").replace('\n', " ")));
        }
    }
    text
}
