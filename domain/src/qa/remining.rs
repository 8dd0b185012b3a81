//! Re-mining: the leader (or an admin, `RemineProject`) runs Brain over a
//! project's recent occurrences, category by category, and carries out the
//! merges and splits where it disagrees with what captures grouped one
//! message at a time (`lore_grouping::remine`). Patterns keep their ids,
//! fixes and warning history; both kinds of change are remembered as
//! corrections, so later captures follow them; a pattern a person merged
//! or split is left as they left it. Brain only proposes: a change is
//! carried out when it shortens the description of the project's own
//! messages (`lore_grouping::remine::judge`), so re-mining never trades
//! a project's groups for ones its messages code worse. Then patterns of
//! one kind at several lengths (a list that may be empty), which Brain
//! compares apart, are merged where the criterion says so
//! (`lore_grouping::lengths`). An occurrence re-mining moved says so
//! as the reason it joined its pattern.

use std::collections::{BTreeMap, HashMap, HashSet};

use lore_grouping::brain::BrainSettings;
use lore_grouping::remine::{Change, Occurrence, Target, judge, plan};
use uuid::Uuid;

use super::QaLearning;
use super::template::Template;
use crate::Error;
use lore_model::qa::{ChangedBy, Merge, Split};
use lore_model::scope::ProjectScope;
use lore_store::qa::remining as store;

/// How re-mining's own corrections begin their reason, which tells them
/// from people's.
pub const REASON_PREFIX: &str = "re-mined";

pub use lore_model::qa::remining::{RemineRun, Remined};

/// Why a merge was made, before the template it names.
const BRAIN: &str = "Brain groups them as";
const LENGTHS: &str = "one kind at several lengths, like";

impl QaLearning {
    /// The projects with a capture since `since`: the leader's next round
    /// of re-mining.
    pub async fn projects_to_remine(&self, since: chrono::DateTime<chrono::Utc>) -> Result<Vec<String>, Error> {
        store::projects_captured_since(&self.pool, since).await
    }

    /// Re-mines the newest `window` occurrences of `project`.
    pub async fn remine(&self, scope: &ProjectScope, project: &str, window: i64) -> Result<Remined, Error> {
        self.learning_on()?;
        scope.require(project)?;
        let recent = store::recent_occurrences(&self.pool, project, window).await?;
        let pinned = store::corrected_by_people(&self.pool, project, REASON_PREFIX).await?;
        let masks = {
            let mut connection = self.pool.acquire().await?;
            self.masks_of(&mut connection, project).await?
        };
        // Each message is normalized again under the project's masks now: a
        // mask added or removed since its capture changes its template.
        let mut retemplated = Vec::new();
        let mut by_category: BTreeMap<&str, Vec<Occurrence<Uuid, Uuid>>> = BTreeMap::new();
        for occurrence in &recent {
            let template = Template::of_masked(&occurrence.message, &masks);
            if template.text() != occurrence.template {
                retemplated.push((occurrence.occurrence_id, template.text()));
            }
            by_category.entry(occurrence.category.as_str()).or_default().push(Occurrence {
                id: occurrence.occurrence_id,
                pattern: occurrence.pattern_id,
                template,
            });
        }
        store::retemplate_occurrences(&self.pool, &retemplated).await?;
        let mut done = Remined { occurrences: recent.len(), ..Remined::default() };
        let settings = BrainSettings::default();
        let retemplated: HashSet<Uuid> = retemplated.into_iter().map(|(occurrence, _)| occurrence).collect();
        for occurrences in by_category.values() {
            let judged = judge(occurrences, plan(occurrences, &pinned, &settings));
            done.rejected += judged.rejected;
            done.bits_before += judged.bits_before;
            let pattern_of = self.carry_out(scope, occurrences, &judged.changes, BRAIN, &mut done).await?;
            // Then the kinds Brain cannot see whole: one kind at several
            // lengths, offered and judged on the groups as they are now.
            let after: Vec<Occurrence<Uuid, Uuid>> = occurrences
                .iter()
                .map(|occurrence| Occurrence { pattern: pattern_of[&occurrence.id], ..occurrence.clone() })
                .collect();
            let lengths = lore_grouping::lengths::merges(&after, &pinned);
            done.rejected += lengths.rejected;
            done.bits_after += lengths.bits_after;
            let pattern_of = self.carry_out(scope, &after, &lengths.changes, LENGTHS, &mut done).await?;
            self.follow_templates(occurrences, &pattern_of, &retemplated, &mut done).await?;
        }
        if done.merges + done.splits + done.moves + done.rejected > 0 {
            tracing::info!(
                project,
                merges = done.merges,
                splits = done.splits,
                rejected = done.rejected,
                moves = done.moves,
                "re-mined the project's patterns"
            );
        }
        // The verdict the QA page shows; re-mining is done either way. A
        // project with nothing to read has no verdict (and maybe no row).
        if done.occurrences > 0
            && let Err(error) = store::record_run(&self.pool, project, &done).await
        {
            tracing::warn!(%error, project, "cannot record the re-mining's verdict");
        }
        Ok(done)
    }

    /// `project`'s last re-mining and the criterion's verdict on it.
    pub async fn last_remining(&self, scope: &ProjectScope, project: &str) -> Result<Option<RemineRun>, Error> {
        scope.require(project)?;
        store::last_run(&self.reads.bounded(), scope, project).await
    }

    /// A pattern whose occurrences a mask change normalized anew takes the
    /// template they share now, and its route when they all have one, so
    /// the next capture of such a message joins it directly instead of
    /// starting a pattern beside it. Only templates a mask changed move a
    /// pattern: without one, a pattern's older occurrences (outside the
    /// window) may still hold its route.
    async fn follow_templates(
        &self,
        occurrences: &[Occurrence<Uuid, Uuid>],
        pattern_of: &HashMap<Uuid, Uuid>,
        retemplated: &HashSet<Uuid>,
        done: &mut Remined,
    ) -> Result<(), Error> {
        let mut members: BTreeMap<Uuid, Vec<&Template>> = BTreeMap::new();
        let mut changed: HashSet<Uuid> = HashSet::new();
        for occurrence in occurrences {
            let Some(pattern) = pattern_of.get(&occurrence.id) else { continue };
            members.entry(*pattern).or_default().push(&occurrence.template);
            if retemplated.contains(&occurrence.id) {
                changed.insert(*pattern);
            }
        }
        let patterns: Vec<Uuid> = changed.into_iter().collect();
        for live in store::live_templates(&self.pool, &patterns).await? {
            let Some(shared) = shared_template(&members[&live.pattern_id]) else { continue };
            let current = Template::from_tokens(live.tokens.clone());
            // Within its route a pattern only widens (it keeps covering what
            // it grouped before); on a new route it takes what its members
            // share.
            let template = if current.route() == shared.route() { current.generalize(&shared) } else { shared };
            if template == current && template.route() == live.route {
                continue;
            }
            if store::move_pattern(&self.pool, &live, &template.tokens, &template.route()).await? {
                done.moves += 1;
            }
        }
        Ok(())
    }

    /// Makes the plan's changes in order; each occurrence that moved then
    /// says so ("why grouped"). Returns the pattern each occurrence is in
    /// after them.
    async fn carry_out(
        &self,
        scope: &ProjectScope,
        occurrences: &[Occurrence<Uuid, Uuid>],
        changes: &[Change<Uuid, Uuid>],
        why_merged: &str,
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
                        reason: format!("{REASON_PREFIX}: Brain keeps {} apart", template.text()),
                        by: ChangedBy::ReMining,
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
                    let reason = format!("{REASON_PREFIX}: {why_merged} {}", template.text());
                    let merge = Merge { into, sources, reason, by: ChangedBy::ReMining, actor: String::new() };
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

/// The template members of one route share: positions where they differ
/// are wildcards. None when they are on more than one route.
fn shared_template(members: &[&Template]) -> Option<Template> {
    let (first, rest) = members.split_first()?;
    let route = first.route();
    rest.iter()
        .try_fold((*first).clone(), |shared, member| (member.route() == route).then(|| shared.generalize(member)))
}
