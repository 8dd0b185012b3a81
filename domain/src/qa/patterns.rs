//! Reading patterns, and the corrections people make to the grouping:
//! edits, merges and splits. Corrections are remembered (see
//! `capture::link`), so the next capture does not undo them.

use uuid::Uuid;

use super::QaLearning;
use super::template::Template;
use crate::Error;
use lore_store::qa as store;
use lore_types::qa::mask_proposals::MaskProposal;
use lore_types::qa::{FixAttempt, Merge, Pattern, PatternEdits, PatternFilter, PatternReport, PatternStatus, Split};
use lore_types::scope::ProjectScope;
use lore_types::trust::{Author, Origin, Trust};

/// What a merge did.
#[derive(Debug, Clone)]
pub struct Merged {
    /// The survivor.
    pub pattern: Pattern,
    /// The mask the merge proposed, when it proposed a new one.
    pub proposal: Option<MaskProposal>,
}

/// Fix attempts GetPattern shows at most.
const MAX_FIXES: i64 = 50;

impl QaLearning {
    pub async fn pattern(
        &self,
        scope: &ProjectScope,
        pattern_id: Uuid,
        occurrence_limit: i64,
    ) -> Result<PatternReport, Error> {
        let pattern = store::pattern(&self.pool, scope, pattern_id).await?;
        let (occurrences, fixes) = tokio::try_join!(
            store::patterns::occurrences(&self.pool, pattern_id, occurrence_limit),
            store::fixes::pattern_fixes(&self.pool, pattern_id, MAX_FIXES),
        )?;
        Ok(PatternReport { pattern, occurrences, fixes })
    }

    pub async fn list_patterns(
        &self,
        scope: &ProjectScope,
        filter: &PatternFilter,
        limit: i64,
        after: Option<(i64, Uuid)>,
    ) -> Result<Vec<Pattern>, Error> {
        self.check_category(scope, &filter.project, filter.category.as_deref()).await?;
        store::patterns::list_patterns(&self.pool, scope, filter, limit, after).await
    }

    /// A person's edits; screened like everything a briefing can show
    /// (a held edit is stored and the pattern held out of warnings until
    /// released). A recommended fix written here is reviewed.
    pub async fn update_pattern(
        &self,
        scope: &ProjectScope,
        pattern_id: Uuid,
        edits: &PatternEdits,
        origin: &Origin,
    ) -> Result<Pattern, Error> {
        let parts = [
            ("name", &edits.name),
            ("description", &edits.description),
            ("common_cause", &edits.common_cause),
            ("recommended_fix", &edits.recommended_fix),
        ];
        // A pattern never changes project; its own hosts are the screen's.
        let project = store::pattern(&self.pool, scope, pattern_id).await?.project;
        let held = self.screening().screen(
            &project,
            parts.iter().filter_map(|(part, text)| text.as_deref().map(|text| ((*part).to_owned(), text))),
        );
        store::patterns::update_pattern(&self.pool, scope, pattern_id, edits, held.as_ref(), origin).await
    }

    /// Merges patterns into one. A person's merge of patterns that differ
    /// only in words of one shape also proposes the mask that would have
    /// merged them (`mask_proposals`), returned when it is new.
    pub async fn merge_patterns(&self, scope: &ProjectScope, merge: &Merge) -> Result<Merged, Error> {
        if merge.sources.contains(&merge.into) {
            return Err(Error::invalid("pattern_ids", "must not contain into_pattern_id"));
        }
        let mut transaction = self.pool.begin().await?;
        let (pattern, before) = store::patterns::merge_patterns(&mut transaction, scope, merge).await?;
        let proposal = match super::mask_proposals::implied(merge, &before) {
            Some(proposal) => lore_store::qa::mask_proposals::propose(&mut transaction, &proposal).await?,
            None => None,
        };
        transaction.commit().await?;
        Ok(Merged { pattern, proposal })
    }

    /// Moves occurrences into a new pattern whose id is `split_id`; a retry
    /// with the same id returns the first split.
    pub async fn split_pattern(&self, scope: &ProjectScope, split: &Split) -> Result<(Pattern, Pattern), Error> {
        let mut transaction = self.pool.begin().await?;
        let original = store::lock_pattern(&mut transaction, scope, split.pattern_id).await?;
        if let Ok(done) = store::pattern(&self.pool, scope, split.split_id).await {
            transaction.rollback().await?;
            return Ok((store::pattern(&self.pool, scope, split.pattern_id).await?, done));
        }
        if original.status == PatternStatus::Merged {
            return Err(Error::FailedPrecondition(format!(
                "pattern {} is merged; split its survivor",
                original.pattern_id
            )));
        }
        let moved =
            store::patterns::occurrence_templates(&mut transaction, split.pattern_id, &split.occurrence_ids).await?;
        let remaining =
            store::patterns::remaining_templates(&mut transaction, split.pattern_id, &split.occurrence_ids).await?;
        if remaining.is_empty() {
            return Err(Error::FailedPrecondition(
                "occurrence_ids: a split must leave the pattern some occurrences; rename it instead".into(),
            ));
        }
        let mut templates: Vec<String> = moved.iter().map(|(_, tokens, _)| tokens.join(" ")).collect();
        templates.sort();
        templates.dedup();
        let template = widest(moved.iter().map(|(_, tokens, _)| Template::from_tokens(tokens.clone())))
            .expect("occurrence_ids is not empty");
        let original_template =
            widest(remaining.iter().map(|text| Template::from_tokens(text.split(' ').map(str::to_owned).collect())));
        let name =
            split.new_name.clone().unwrap_or_else(|| super::capture::generated_name(&original.category, &template));
        store::patterns::split_pattern(
            &mut transaction,
            &store::patterns::SplitRows {
                split_id: split.split_id,
                original: &original,
                name: &name,
                template: &template,
                original_template: original_template.as_ref(),
                occurrence_ids: &split.occurrence_ids,
                templates: &templates,
                reason: &split.reason,
                by: split.by,
            },
        )
        .await?;
        transaction.commit().await?;
        Ok((
            store::pattern(&self.pool, scope, split.pattern_id).await?,
            store::pattern(&self.pool, scope, split.split_id).await?,
        ))
    }
}

/// A pattern as `reader` may read it: an agent reads its fix and the cause
/// drawn from it only once a person reviewed the fix (issue 56); a person
/// reads everything, to review it.
pub fn as_read_by(mut pattern: Pattern, reader: &Origin) -> Pattern {
    if reader.author != Author::Person && !pattern.fix_trust.is_some_and(Trust::speaks) {
        pattern.recommended_fix.clear();
        pattern.common_cause.clear();
    }
    pattern
}

/// A fix attempt as `reader` may read it: an agent reads its words only
/// once a person reviewed them; what it changed and how it went stay.
pub fn fix_as_read_by(mut attempt: FixAttempt, reader: &Origin) -> FixAttempt {
    if reader.author != Author::Person && !attempt.trust.speaks() {
        attempt.approach.clear();
        attempt.summary.clear();
    }
    attempt
}

/// The template covering all of these that have the first one's length.
fn widest(templates: impl IntoIterator<Item = Template>) -> Option<Template> {
    let mut templates = templates.into_iter();
    let first = templates.next()?;
    Some(templates.fold(first, |widest, next| {
        if next.tokens.len() == widest.tokens.len() { widest.generalize(&next) } else { widest }
    }))
}
