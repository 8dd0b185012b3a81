//! Guards: a person turns a warning at the call into a refusal (see
//! [`lore_types::qa::guards`]). The hooks read a project's guards into
//! their call index, so a refusal needs no network at the call.
//!
//! Guards are off for a project until a person turns them on, and the
//! `qa.warnings.enabled` kill switch turns them off with every warning,
//! warnings at the call included. The project's call warning mode travels
//! with its guards, since the same hooks read both.

use uuid::Uuid;

use super::QaLearning;
use crate::Error;
use lore_store::qa::guards as store;
use lore_types::qa::guards::{CallWarningMode, Guard, Guards};
use lore_types::scope::ProjectScope;

impl QaLearning {
    /// The project's guards, and whether they are in force.
    pub async fn guards(&self, scope: &ProjectScope, project: &str) -> Result<Guards, Error> {
        scope.require(project)?;
        let mut guards = store::guards(&self.pool, project).await?;
        if !self.switches.warnings() {
            guards.enabled = false;
            guards.call_warnings = CallWarningMode::Off;
        }
        Ok(guards)
    }

    /// Sets how the project's agents are warned at the call, and answers
    /// with the guards and the mode in force.
    pub async fn set_call_warning_mode(
        &self,
        scope: &ProjectScope,
        project: &str,
        mode: CallWarningMode,
        by: &str,
    ) -> Result<Guards, Error> {
        scope.require(project)?;
        store::set_call_warning_mode(&self.pool, project, mode, by).await?;
        self.guards(scope, project).await
    }

    /// Adds the guard, or replaces the project's guard of the same shape.
    pub async fn put_guard(&self, scope: &ProjectScope, guard: &Guard) -> Result<Guard, Error> {
        scope.require(&guard.project)?;
        store::put(&self.pool, guard).await
    }

    /// Removes a guard; false when the project had none by that id.
    pub async fn remove_guard(&self, scope: &ProjectScope, project: &str, guard_id: Uuid) -> Result<bool, Error> {
        scope.require(project)?;
        store::remove(&self.pool, project, guard_id).await
    }

    /// Turns the project's guards on or off, and answers with them.
    pub async fn set_guards_enabled(
        &self,
        scope: &ProjectScope,
        project: &str,
        enabled: bool,
        by: &str,
    ) -> Result<Guards, Error> {
        scope.require(project)?;
        store::set_enabled(&self.pool, project, enabled, by).await?;
        self.guards(scope, project).await
    }
}
