//! Carrying out a regrouping: a plan's merges and splits made in order
//! through the same merge and split a person's correction goes through, in
//! the name of re-mining or of the person who accepted its proposal, each
//! moved occurrence saying why it moved.

use std::collections::HashMap;

use lore_grouping::remine::{Change, Occurrence, Target};
use uuid::Uuid;

use super::QaLearning;
use crate::Error;
use lore_store::qa::remining as store;
use lore_types::qa::remining::Remined;
use lore_types::qa::{ChangedBy, Merge, Split};
use lore_types::scope::ProjectScope;

/// How re-mining's own corrections begin their reason, which tells them
/// from people's.
pub const REASON_PREFIX: &str = "re-mined";

impl QaLearning {
    /// Makes the plan's changes in order; each occurrence that moved then
    /// says so ("why grouped"). Returns the pattern each occurrence is in
    /// after them.
    pub(super) async fn carry_out(
        &self,
        scope: &ProjectScope,
        occurrences: &[Occurrence<Uuid, Uuid>],
        changes: &[Change<Uuid, Uuid>],
        voice: &Voice,
        done: &mut Remined,
    ) -> Result<HashMap<Uuid, Uuid>, Error> {
        // Where each read occurrence is as the changes go.
        let mut pattern_of: HashMap<Uuid, Uuid> =
            occurrences.iter().map(|occurrence| (occurrence.id, occurrence.pattern)).collect();
        let mut created: HashMap<usize, Uuid> = HashMap::new();
        let resolve = |target: &Target<Uuid>, created: &HashMap<usize, Uuid>| match target {
            Target::Pattern(pattern) => Some(*pattern),
            Target::SplitOf(change) => created.get(change).copied(),
        };
        for (index, change) in changes.iter().enumerate() {
            match change {
                Change::Split { from, occurrences, template } => {
                    let split = Split {
                        split_id: Uuid::now_v7(),
                        pattern_id: *from,
                        occurrence_ids: occurrences.clone(),
                        new_name: None,
                        reason: format!("{}: {} {} apart", voice.prefix, voice.why_split, template.text()),
                        by: voice.by,
                    };
                    match self.split_pattern(scope, &split).await {
                        Ok((_, new)) => {
                            created.insert(index, new.pattern_id);
                            for moved in occurrences {
                                pattern_of.insert(*moved, new.pattern_id);
                            }
                            store::note_regrouped(&self.pool, occurrences, &split.reason).await?;
                            done.splits += 1;
                        }
                        // A capture or a person changed the pattern since it
                        // was read: the next round sees the new state.
                        Err(Error::FailedPrecondition(why)) => tracing::debug!(%why, "re-mining skipped a split"),
                        Err(error) => return Err(error),
                    }
                }
                Change::Merge { into, sources, template } => {
                    let Some(into) = resolve(into, &created) else { continue };
                    let sources: Vec<Uuid> = sources.iter().filter_map(|source| resolve(source, &created)).collect();
                    if sources.is_empty() {
                        continue;
                    }
                    let reason = format!("{}: {} {}", voice.prefix, voice.why_merged, template.text());
                    let merge = Merge { into, sources, reason, by: voice.by, actor: voice.actor.clone() };
                    match self.merge_patterns(scope, &merge).await {
                        Ok(_) => {
                            let moved: Vec<Uuid> = pattern_of
                                .iter_mut()
                                .filter(|(_, pattern)| merge.sources.contains(pattern))
                                .map(|(occurrence, pattern)| {
                                    *pattern = into;
                                    *occurrence
                                })
                                .collect();
                            store::note_regrouped(&self.pool, &moved, &merge.reason).await?;
                            done.merges += 1;
                        }
                        Err(Error::FailedPrecondition(why)) => tracing::debug!(%why, "re-mining skipped a merge"),
                        Err(error) => return Err(error),
                    }
                }
            }
        }
        Ok(pattern_of)
    }
}

/// Who makes a regrouping, and how the reasons it leaves begin.
pub(super) struct Voice {
    by: ChangedBy,
    actor: String,
    prefix: String,
    why_merged: &'static str,
    why_split: &'static str,
}

impl Voice {
    pub(super) fn re_mining(why_merged: &'static str) -> Self {
        Self {
            by: ChangedBy::ReMining,
            actor: String::new(),
            prefix: REASON_PREFIX.to_owned(),
            why_merged,
            why_split: "Brain keeps",
        }
    }

    /// Re-mining splitting a project's patterns by their literal templates
    /// (`super::literal_reading`).
    pub(super) fn reading_literally() -> Self {
        Self { why_split: "the project is read literally, which keeps", ..Self::re_mining("") }
    }

    /// A person who accepted re-mining's proposal: the change is theirs.
    pub(super) fn accepted_by(actor: &str) -> Self {
        let who = if actor.is_empty() { "a person" } else { actor };
        Self {
            by: ChangedBy::Person,
            actor: actor.to_owned(),
            prefix: format!("{who} accepted re-mining's proposal"),
            why_merged: "it groups them as",
            why_split: "Brain keeps",
        }
    }
}
