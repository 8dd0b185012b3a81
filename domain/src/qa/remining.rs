//! Re-mining: the leader (or an admin, `RemineProject`) runs Brain over a
//! project's recent occurrences, category by category, where it disagrees
//! with what captures grouped one message at a time
//! (`lore_grouping::remine`). Brain proposes; the minimum description
//! length criterion keeps a change only when it shortens the description
//! of the project's own messages (`lore_grouping::remine::judge`); then
//! patterns of one kind at several lengths, which Brain compares apart,
//! are offered as merges (`lore_grouping::lengths`).
//!
//! The criterion held on the sets we develop on and not on every log
//! system kept apart, so what it keeps is made by itself only in a project
//! whose people support it: replayed from the groups as they were before
//! their merges and splits, it makes some of them and undoes none of what
//! capture had right (`lore_grouping::evidence`). Elsewhere each move
//! waits for a person as a proposal (`regrouping_proposals`) and the
//! groups stay as captured. A project's masks are a person's word: they
//! apply at once either way, and patterns a mask leaves with one template
//! merge at once, as a capture joins an exact template. Changes keep
//! pattern ids, fixes and warning history and are remembered as
//! corrections, so later captures follow them; a pattern a person merged
//! or split is left as they left it; an occurrence re-mining moved says
//! so as the reason it joined its pattern. First of all, each round weighs
//! whether the people's corrections ask for the project to be read
//! literally (`literal_reading`).

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::Arc;

use lore_grouping::brain::BrainSettings;
use lore_grouping::convention::keeping_names;
use lore_grouping::masks::Masks;
use lore_grouping::remine::{Occurrence, judge, plan};
use uuid::Uuid;

use super::regrouping::Voice;
use super::template::Template;
use super::{QaLearning, regrouping_proposals};
use crate::Error;
use lore_store::qa::regrouping_proposals as regrouping_store;
use lore_store::qa::remining as store;
use lore_types::scope::ProjectScope;

pub use super::regrouping::REASON_PREFIX;

pub use lore_types::qa::remining::{RemineRun, Remined};

/// Why a merge was made, before the template it names.
const BRAIN: &str = "Brain groups them as";
const LENGTHS: &str = "one kind at several lengths, like";
const ONE_TEMPLATE: &str = "one template under the project's masks:";

impl QaLearning {
    /// The projects with a capture since `since`: the leader's next round
    /// of re-mining.
    pub async fn projects_to_remine(&self, since: chrono::DateTime<chrono::Utc>) -> Result<Vec<String>, Error> {
        store::projects_captured_since(&self.pool, since).await
    }

    /// Re-mines the newest `window` occurrences of `project`: masks apply
    /// at once; Brain's merges and splits are made when the project's
    /// people support re-mining (`lore_grouping::evidence`), and proposed
    /// to a person otherwise.
    pub async fn remine(&self, scope: &ProjectScope, project: &str, window: i64) -> Result<Remined, Error> {
        self.learning_on()?;
        scope.require(project)?;
        let size = window;
        let window = self.read_window(project, size).await?;
        let pinned = store::corrected_by_people(&self.pool, project, REASON_PREFIX).await?;
        let corrections = store::people_corrections(&self.pool, project, REASON_PREFIX).await?;
        let settings = BrainSettings::default();
        let mut done = Remined { occurrences: window.read, ..Remined::default() };
        let reading = (scope, project, size);
        let window = self.weigh_literal_reading(reading, window, (&pinned, &corrections), &mut done).await?;
        for occurrences in window.by_category.values() {
            done.evidence.add(regrouping_proposals::verdict(occurrences, &corrections, &settings));
        }
        done.automatic = done.evidence.supports();
        let mut proposals = Vec::new();
        for occurrences in window.by_category.values() {
            let pattern_of = if done.automatic {
                self.regroup(scope, occurrences, (&pinned, window.masks.reads_literally()), &settings, &mut done)
                    .await?
            } else {
                let kept = (&pinned, window.masks.reads_literally());
                let proposed = regrouping_proposals::propose(project, occurrences, kept, &settings, &mut done);
                proposals.extend(proposed.proposals);
                self.carry_out(scope, occurrences, &proposed.exact, &Voice::re_mining(ONE_TEMPLATE), &mut done).await?
            };
            self.follow_templates(occurrences, &pattern_of, &window.retemplated, false, &mut done).await?;
        }
        done.proposed = regrouping_store::replace_open(&self.pool, project, &proposals).await?;
        if done.merges + done.splits + done.moves + done.rejected + done.proposed > 0 {
            tracing::info!(
                project,
                merges = done.merges,
                splits = done.splits,
                rejected = done.rejected,
                moves = done.moves,
                proposed = done.proposed,
                automatic = done.automatic,
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

    /// The newest `window` occurrences of `project` by category, each
    /// message normalized again under the project's masks now (a mask
    /// added or removed since its capture changes its template, and so
    /// does reading the project literally).
    pub(super) async fn read_window(&self, project: &str, window: i64) -> Result<Window, Error> {
        let recent = store::recent_occurrences(&self.pool, project, window).await?;
        let masks = {
            let mut connection = self.pool.acquire().await?;
            self.masks_of(&mut connection, project).await?
        };
        let mut retemplated = Vec::new();
        let read = recent.len();
        let mut by_category: BTreeMap<String, Vec<Occurrence<Uuid, Uuid>>> = BTreeMap::new();
        let mut messages: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for occurrence in recent {
            let template = Template::of_masked(&occurrence.message, &masks);
            if template.text() != occurrence.template {
                retemplated.push((occurrence.occurrence_id, template.text()));
            }
            by_category.entry(occurrence.category.clone()).or_default().push(Occurrence {
                id: occurrence.occurrence_id,
                pattern: occurrence.pattern_id,
                template,
            });
            messages.entry(occurrence.category).or_default().push(occurrence.message);
        }
        store::retemplate_occurrences(&self.pool, &retemplated).await?;
        Ok(Window {
            read,
            masks,
            by_category,
            messages,
            retemplated: retemplated.into_iter().map(|(occurrence, _)| occurrence).collect(),
        })
    }

    /// Makes the changes the criterion keeps of Brain's plan for one
    /// category, then the merges of one kind at several lengths (in a
    /// project read literally, none that joins two quoted names). Returns
    /// the pattern each occurrence is in after them.
    async fn regroup(
        &self,
        scope: &ProjectScope,
        occurrences: &[Occurrence<Uuid, Uuid>],
        (pinned, literally): (&BTreeSet<Uuid>, bool),
        settings: &BrainSettings,
        done: &mut Remined,
    ) -> Result<HashMap<Uuid, Uuid>, Error> {
        let mut judged = judge(occurrences, plan(occurrences, pinned, settings));
        if literally {
            judged.changes = keeping_names(&judged.changes, occurrences);
        }
        done.rejected += judged.rejected;
        done.bits_before += judged.bits_before;
        let pattern_of = self.carry_out(scope, occurrences, &judged.changes, &Voice::re_mining(BRAIN), done).await?;
        // Then the kinds Brain cannot see whole: one kind at several
        // lengths, offered and judged on the groups as they are now.
        let after: Vec<Occurrence<Uuid, Uuid>> = occurrences
            .iter()
            .map(|occurrence| Occurrence { pattern: pattern_of[&occurrence.id], ..occurrence.clone() })
            .collect();
        let mut lengths = lore_grouping::lengths::merges(&after, pinned);
        if literally {
            lengths.changes = keeping_names(&lengths.changes, &after);
        }
        done.rejected += lengths.rejected;
        done.bits_after += lengths.bits_after;
        self.carry_out(scope, &after, &lengths.changes, &Voice::re_mining(LENGTHS), done).await
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
    /// window) may still hold its route. `narrow`: the project has just
    /// been read literally, and a pattern takes what its members share
    /// even within its route (its wildcards held the names now kept).
    pub(super) async fn follow_templates(
        &self,
        occurrences: &[Occurrence<Uuid, Uuid>],
        pattern_of: &HashMap<Uuid, Uuid>,
        retemplated: &HashSet<Uuid>,
        narrow: bool,
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
            let widens = !narrow && current.route() == shared.route();
            let template = if widens { current.generalize(&shared) } else { shared };
            if template == current && template.route() == live.route {
                continue;
            }
            if store::move_pattern(&self.pool, &live, &template.tokens, &template.route()).await? {
                done.moves += 1;
            }
        }
        Ok(())
    }
}

/// A project's recent occurrences as re-mining reads them.
pub(super) struct Window {
    pub(super) read: usize,
    /// How the project's messages were read (`Masks::reads_literally`).
    pub(super) masks: Arc<Masks>,
    pub(super) by_category: BTreeMap<String, Vec<Occurrence<Uuid, Uuid>>>,
    /// Each occurrence's message, in the order of `by_category`.
    pub(super) messages: BTreeMap<String, Vec<String>>,
    /// Occurrences whose template the project's masks changed.
    pub(super) retemplated: HashSet<Uuid>,
}

/// The template members of one route share: positions where they differ
/// are wildcards. None when they are on more than one route.
fn shared_template(members: &[&Template]) -> Option<Template> {
    let (first, rest) = members.split_first()?;
    let route = first.route();
    rest.iter()
        .try_fold((*first).clone(), |shared, member| (member.route() == route).then(|| shared.generalize(member)))
}
