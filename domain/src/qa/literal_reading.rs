//! Reading a project literally when its people's corrections ask for it
//! (`lore_grouping::convention`).
//!
//! Capture reads a quoted name, or one word that differs in a short
//! message, as a variable; the people of one repository may tell failures
//! apart by exactly those names. Each re-mining weighs their corrections:
//! where a literal reading, replayed from the groups before them, makes
//! enough of them and undoes none, the project is read literally from then
//! on. Its recent occurrences take their literal templates, every pattern
//! no person touched is split by them (through the same split a person's
//! goes through, remembered for later captures), and each pattern takes
//! the template its recent members share. Nothing undoes it by itself: a
//! person who disagrees merges patterns back, and the merges are
//! remembered for later captures as any person's.

use std::collections::BTreeSet;

use lore_grouping::convention;
use uuid::Uuid;

use super::QaLearning;
use super::regrouping::Voice;
use super::regrouping_proposals;
use super::remining::Window;
use super::template::Template;
use crate::Error;
use lore_store::qa::masks as masks_store;
use lore_store::qa::remining::PersonCorrection;
use lore_types::qa::remining::Remined;
use lore_types::scope::ProjectScope;

impl QaLearning {
    /// Weighs the people's `corrections` for reading the project
    /// literally, into `done`; when they support it and the project is not
    /// read so yet, reads it so and regroups the window. Returns the window
    /// as the rest of re-mining should read it.
    pub(super) async fn weigh_literal_reading(
        &self,
        (scope, project, size): (&ProjectScope, &str, i64),
        window: Window,
        (pinned, corrections): (&BTreeSet<Uuid>, &[PersonCorrection]),
        done: &mut Remined,
    ) -> Result<Window, Error> {
        done.read_literally = window.masks.reads_literally();
        // Without a person's correction there is nothing to weigh (and no
        // literal template worth computing for every message).
        if done.read_literally || corrections.is_empty() {
            return Ok(window);
        }
        let literally = (*window.masks).clone().reading_literally(true);
        for (category, occurrences) in &window.by_category {
            let literal: Vec<Template> =
                window.messages[category].iter().map(|message| Template::of_masked(message, &literally)).collect();
            done.literal.add(regrouping_proposals::literal_evidence(occurrences, &literal, corrections));
        }
        if !done.literal.supports() {
            return Ok(window);
        }
        masks_store::read_literally(&self.pool, project).await?;
        tracing::info!(
            project,
            agreeing = done.literal.agreeing,
            "the project's people keep apart the names their messages quote: it is read literally from now on"
        );
        // Read again: the occurrences take their literal templates.
        let window = self.read_window(project, size).await?;
        for occurrences in window.by_category.values() {
            let changes = convention::literal_splits(occurrences, pinned);
            let voice = Voice::reading_literally();
            let pattern_of = self.carry_out(scope, occurrences, &changes, &voice, done).await?;
            self.follow_templates(occurrences, &pattern_of, &window.retemplated, true, done).await?;
        }
        done.read_literally = true;
        self.read_window(project, size).await
    }
}
