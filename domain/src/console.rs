//! What the console's pages read beyond the services' own answers: the
//! fleet's figures and a project's activity, from a replica when one is
//! fresh enough (`database.read_urls`), as every dashboard reads.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::Error;
use lore_store::console as store;
use lore_store::replicas::ReadPools;
use lore_types::actions::{Action, Session};
use lore_types::scope::ProjectScope;

pub use lore_store::console::ProjectFigures;

#[derive(Debug, Clone)]
pub struct ConsoleReads {
    reads: ReadPools,
}

impl ConsoleReads {
    pub fn new(reads: ReadPools) -> Self {
        Self { reads }
    }

    /// The projects `scope` may see.
    pub async fn projects(&self, scope: &ProjectScope) -> Result<Vec<String>, Error> {
        store::projects(&self.reads.bounded(), scope).await
    }

    /// One row per project of `projects`; `today` starts at `midnight`.
    pub async fn project_figures(
        &self,
        projects: &[String],
        now: DateTime<Utc>,
        midnight: DateTime<Utc>,
    ) -> Result<Vec<ProjectFigures>, Error> {
        store::project_figures(&self.reads.bounded(), projects, now, midnight).await
    }

    /// Actions per hour over the 24 hours before `now`.
    pub async fn actions_per_hour(
        &self,
        projects: &[String],
        now: DateTime<Utc>,
    ) -> Result<Vec<(DateTime<Utc>, i64)>, Error> {
        store::actions_per_hour(&self.reads.bounded(), projects, now).await
    }

    /// The active sessions of `projects`, latest activity first.
    pub async fn active_sessions(&self, projects: &[String], limit: i64) -> Result<Vec<Session>, Error> {
        store::active_sessions(&self.reads.bounded(), projects, limit).await
    }

    /// A project's sessions that overlap `[from, until)`.
    pub async fn sessions_between(
        &self,
        scope: &ProjectScope,
        project: &str,
        from: DateTime<Utc>,
        until: DateTime<Utc>,
        limit: i64,
    ) -> Result<Vec<Session>, Error> {
        store::sessions_between(&self.reads.bounded(), scope, project, from, until, limit).await
    }

    /// One action; the primary answers when no replica has it yet (a link
    /// followed right after the action was logged).
    pub async fn action(&self, scope: &ProjectScope, action_id: Uuid) -> Result<Action, Error> {
        match store::action(&self.reads.bounded(), scope, action_id).await {
            Err(Error::NotFound(_)) => store::action(self.reads.primary(), scope, action_id).await,
            found => found,
        }
    }

    /// The actions of `session_id` whose parent is `parent`.
    pub async fn children(
        &self,
        scope: &ProjectScope,
        session_id: Uuid,
        parent: Uuid,
        limit: i64,
    ) -> Result<Vec<Action>, Error> {
        store::children(&self.reads.bounded(), scope, session_id, parent, limit).await
    }
}
