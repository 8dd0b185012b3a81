//! RecordTaskResult: a task's QA verdict scores the warnings delivered for
//! it, so nobody has to send delivery ids back.
//!
//! - passed: each open delivery of the task was a prevention;
//! - failed on the warned pattern: failed anyway;
//! - failed on other patterns: unrelated, not counted against the warning;
//! - failed on a warnable pattern that was not delivered: a missed
//!   opportunity.
//!
//! Held-out deliveries are scored the same way, which is what the
//! comparison of shown and held-out tasks stands on.

use uuid::Uuid;

use super::QaLearning;
use crate::Error;
use lore_store::qa::results::{self as store, WarnFloor};
use lore_store::qa::warnings::OutcomeEffect;
use lore_types::qa::{FailedCheck, NewFailure, NewTaskResult, TaskResultRecorded};
use lore_types::scope::ProjectScope;

/// The namespace of the failure a result captures from its checks: the same
/// result retried captures the same failure.
const CAPTURED_FROM_CHECKS: Uuid = Uuid::from_u128(0x6c6f_7265_2d71_612d_7265_7375_6c74_7331);

impl QaLearning {
    /// Records a task result. A replay of a stored `result_id` answers with
    /// what the first call decided; the same id with another task or
    /// verdict is refused.
    pub async fn record_result(
        &self,
        scope: &ProjectScope,
        mut result: NewTaskResult,
    ) -> Result<TaskResultRecorded, Error> {
        scope.require(&result.project)?;
        if let Some(stored) = self.replayed_result(scope, &result).await? {
            return Ok(stored);
        }
        if let Some(session_id) = result.session_id
            && !store::session_in_project(&self.pool, session_id, &result.project).await?
        {
            return Err(Error::NotFound(format!("session_id: session {session_id} of project {}", result.project)));
        }
        if !result.passed {
            result.failure_ids = self.failures_of(scope, &result).await?;
        }
        let effect = self.outcome_effect();
        let floor = WarnFloor {
            min_occurrences: self.config.warn_min_occurrences,
            min_confidence: self.config.warn_min_confidence,
        };
        match store::record(&self.pool, &result, &effect, &floor).await? {
            Some(recorded) => {
                self.follow_verified_fixes(scope, &recorded.verified_attempts).await?;
                Ok(recorded)
            }
            // A concurrent call with the same id won.
            None => self
                .replayed_result(scope, &result)
                .await?
                .ok_or_else(|| Error::Aborted(format!("result_id {} was being recorded; retry", result.result_id))),
        }
    }

    async fn replayed_result(
        &self,
        scope: &ProjectScope,
        result: &NewTaskResult,
    ) -> Result<Option<TaskResultRecorded>, Error> {
        let mut connection = self.pool.acquire().await?;
        let Some((project, task_id, stored)) = store::stored_result(&mut connection, scope, result.result_id).await?
        else {
            return Ok(None);
        };
        let verdict = |passed: bool| if passed { "passed" } else { "failed" };
        if project != result.project || task_id != result.task.task_id || stored.passed != result.passed {
            return Err(Error::AlreadyExists(format!(
                "result_id {} is already the {} result of task {task_id} in project {project}; a result is not changed \
                 by sending it again: record the new verdict under a new result_id",
                result.result_id,
                verdict(stored.passed)
            )));
        }
        Ok(Some(stored))
    }

    /// The failures a failed verdict is about: the ones given (of this task,
    /// claimed by no other result), else the task's unclaimed ones, else one
    /// captured now from the failed checks.
    async fn failures_of(&self, scope: &ProjectScope, result: &NewTaskResult) -> Result<Vec<Uuid>, Error> {
        let task_id = &result.task.task_id;
        if !result.failure_ids.is_empty() {
            let found = store::failures(&self.pool, &result.project, &result.failure_ids).await?;
            for (index, failure_id) in result.failure_ids.iter().enumerate() {
                let field = format!("failure_ids[{index}]");
                let Some(failure) = found.iter().find(|failure| failure.failure_id == *failure_id) else {
                    return Err(Error::NotFound(format!(
                        "{field}: failure {failure_id} of project {}",
                        result.project
                    )));
                };
                if failure.task_id != *task_id {
                    return Err(Error::invalid(
                        field,
                        format!("failure {failure_id} is of task {}, not {task_id}", failure.task_id),
                    ));
                }
                if let Some(other) = failure.claimed_by {
                    return Err(Error::FailedPrecondition(format!(
                        "{field}: failure {failure_id} is already counted by result {other}; a failure counts once"
                    )));
                }
            }
            return Ok(result.failure_ids.clone());
        }
        let unclaimed = store::unclaimed_failures(&self.pool, &result.project, task_id).await?;
        if !unclaimed.is_empty() {
            return Ok(unclaimed);
        }
        let failed_checks: Vec<FailedCheck> = result
            .checks
            .iter()
            .filter(|check| !check.passed && !check.output.trim().is_empty())
            .map(|check| FailedCheck {
                name: check.name.clone(),
                output: check.output.clone(),
                exit_code: check.exit_code,
            })
            .collect();
        if failed_checks.is_empty() {
            return Err(Error::FailedPrecondition(format!(
                "task {task_id} has no captured failure for this failed verdict: send failure_ids, capture the failure \
                 first, or include the failed checks with their output"
            )));
        }
        let failure = NewFailure {
            failure_id: Uuid::new_v5(&CAPTURED_FROM_CHECKS, result.result_id.as_bytes()),
            project: result.project.clone(),
            task: result.task.clone(),
            session_id: result.session_id,
            execution_id: String::new(),
            failed_checks,
            error_messages: Vec::new(),
            files_modified: result.task.files.clone(),
            diff_summary: String::new(),
            occurred_at: result.occurred_at,
            origin: result.origin.clone().tool_output(),
        };
        let captured = self.capture(scope, failure).await?;
        Ok(vec![captured.failure_id])
    }
}

impl QaLearning {
    /// How an outcome moves its pattern's confidence: not at all while
    /// learning is switched off (the outcome is still recorded).
    pub(super) fn outcome_effect(&self) -> OutcomeEffect {
        let learning = self.switches.learning();
        let config = &self.config;
        OutcomeEffect {
            prevention_boost: if learning { config.prevention_boost } else { 0.0 },
            max_confidence: config.max_confidence,
            failure_decay: if learning { config.failure_decay } else { 0.0 },
            min_confidence: config.min_confidence,
        }
    }
}
