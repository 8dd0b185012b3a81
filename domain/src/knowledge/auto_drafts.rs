//! Drafts nobody has to ask for. On the leader, every `interval_secs`, each
//! project is looked at for the moments a lesson is worth writing down:
//!
//! - an epic was marked complete (an action of a `complete_types` type with
//!   its `epic_id`, succeeding);
//! - the validations of one epic failed more than `validation_failures`
//!   times (`validate` actions that failed);
//! - a session's QA failures were all fixed, and the session is over.
//!
//! Each cause is drafted once: the draft's id is derived from the cause, and
//! the cause is remembered with it, so neither a second tick nor a new
//! leader after a restart drafts it again. Drafts link their sources (the
//! epic or session and the ids of its actions) and wait for review.

use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};
use sqlx::PgPool;
use uuid::Uuid;

use super::KnowledgeBase;
use crate::Error;
use lore_store::knowledge::auto_drafts as store;
use lore_types::knowledge::drafts::DraftSource;
use lore_types::scope::ProjectScope;

/// `[knowledge.auto_drafts]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AutoDraftsConfig {
    pub enabled: bool,
    pub interval_secs: u64,
    /// How far back each look reaches: a cause older than this that was
    /// never drafted (the server was down for longer) is left alone.
    pub lookback_hours: i64,
    /// Action types that mark an epic complete.
    pub complete_types: Vec<String>,
    /// Failed validations of one epic beyond which it is drafted.
    pub validation_failures: i64,
}

impl Default for AutoDraftsConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            interval_secs: 60,
            lookback_hours: 7 * 24,
            complete_types: vec!["epic_complete".into(), "epic_completed".into()],
            validation_failures: 3,
        }
    }
}

/// Why a draft was made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cause {
    EpicComplete { project: String, epic: String },
    ValidationsFailing { project: String, epic: String },
    SessionFixed { project: String, session: Uuid },
}

impl Cause {
    /// The cause's stable name: what makes it "the same cause".
    pub fn key(&self) -> String {
        match self {
            Self::EpicComplete { project, epic } => format!("epic-complete\u{1f}{project}\u{1f}{epic}"),
            Self::ValidationsFailing { project, epic } => format!("epic-validations\u{1f}{project}\u{1f}{epic}"),
            Self::SessionFixed { project, session } => format!("session-fixed\u{1f}{project}\u{1f}{session}"),
        }
    }

    /// The tag a draft of this cause carries.
    pub fn tag(&self) -> &'static str {
        match self {
            Self::EpicComplete { .. } => "epic-complete",
            Self::ValidationsFailing { .. } => "validations-failing",
            Self::SessionFixed { .. } => "failures-fixed",
        }
    }

    fn project(&self) -> &str {
        match self {
            Self::EpicComplete { project, .. }
            | Self::ValidationsFailing { project, .. }
            | Self::SessionFixed { project, .. } => project,
        }
    }

    fn source(&self) -> DraftSource {
        match self {
            Self::EpicComplete { epic, .. } | Self::ValidationsFailing { epic, .. } => DraftSource::Epic(epic.clone()),
            Self::SessionFixed { session, .. } => DraftSource::Session(*session),
        }
    }

    /// The draft's id: the same cause always gives the same id.
    pub fn draft_id(&self) -> Uuid {
        Uuid::new_v5(&DRAFTS_OF_CAUSES, self.key().as_bytes())
    }
}

const DRAFTS_OF_CAUSES: Uuid = Uuid::from_u128(0x6c6f_7265_2d61_7574_6f2d_6472_6166_7473);

/// What one look drafted: (cause, draft id) of each new draft.
pub type Drafted = Vec<(Cause, Uuid)>;

impl KnowledgeBase {
    /// Looks at every project once and drafts the causes not drafted yet.
    pub async fn draft_what_happened(&self, config: &AutoDraftsConfig, now: DateTime<Utc>) -> Result<Drafted, Error> {
        let since = now - Duration::hours(config.lookback_hours);
        let mut drafted = Vec::new();
        for cause in causes(&self.pool, config, since).await? {
            let key = cause.key();
            let tags = vec!["auto-draft".to_owned(), cause.tag().to_owned()];
            let draft_id = cause.draft_id();
            let made = self
                .create_tagged_draft(
                    &ProjectScope::All,
                    draft_id,
                    cause.project(),
                    cause.source(),
                    None,
                    &tags,
                    lore_types::trust::Origin::lore(),
                )
                .await;
            let (draft_id, note) = match made {
                Ok((_, false)) => {
                    tracing::info!(cause = key.replace('\u{1f}', " "), %draft_id, "drafted a lesson");
                    drafted.push((cause.clone(), draft_id));
                    (Some(draft_id), "")
                }
                Ok((_, true)) => (Some(draft_id), "already drafted"),
                // Nothing in the log to draft from (a session whose actions
                // went elsewhere): remembered, so it is not tried again.
                Err(Error::NotFound(_)) => (None, "no actions to draft from"),
                Err(error) => return Err(error),
            };
            store::record(&self.pool, &key, cause.project(), draft_id, note).await?;
        }
        Ok(drafted)
    }
}

/// The causes since `since` that have not been drafted, each once.
async fn causes(pool: &PgPool, config: &AutoDraftsConfig, since: DateTime<Utc>) -> Result<Vec<Cause>, Error> {
    let mut causes = Vec::new();
    for project in store::projects(pool).await? {
        let completed = store::completed_epics(pool, &project, &config.complete_types, since).await?;
        causes.extend(completed.into_iter().map(|epic| Cause::EpicComplete { project: project.clone(), epic }));
        let failing = store::failing_epics(pool, &project, since, config.validation_failures).await?;
        causes.extend(failing.into_iter().map(|epic| Cause::ValidationsFailing { project: project.clone(), epic }));
        let fixed = store::fixed_sessions(pool, &project, since).await?;
        causes.extend(fixed.into_iter().map(|session| Cause::SessionFixed { project: project.clone(), session }));
    }
    let keys: Vec<String> = causes.iter().map(Cause::key).collect();
    let known = store::known_causes(pool, &keys).await?;
    causes.retain(|cause| !known.contains(&cause.key()));
    Ok(causes)
}
