//! The QA dashboard: failure rate per day, top patterns, categories, mean
//! attempts to pass, resolution rate, prevention effectiveness, the task
//! figures of task results (failure rate, first-time pass rate, attempts to
//! pass), missed opportunities, and shown against held-out tasks with
//! intervals.

use super::QaLearning;
use crate::Error;
use lore_store::qa::dashboard as store;
use lore_types::qa::significance::Comparison;
use lore_types::qa::{Dashboard, DashboardQuery};
use lore_types::scope::ProjectScope;

impl QaLearning {
    pub async fn dashboard(&self, scope: &ProjectScope, query: &DashboardQuery) -> Result<Dashboard, Error> {
        scope.require(&query.project)?;
        self.check_category(scope, &query.project, query.category.as_deref()).await?;
        // A dashboard may be as old as a replica is allowed to lag.
        let figures = store::dashboard(&self.reads.bounded(), scope, query).await?;
        Ok(Dashboard {
            failure_rate: figures.days,
            top_patterns: figures.top,
            categories: figures.categories,
            failures: figures.failures,
            resolved: figures.resolved,
            mean_attempts_to_pass: figures.mean_attempts,
            prevented: figures.prevented,
            failed_anyway: figures.failed_anyway,
            warnings_delivered: figures.delivered,
            acknowledged: figures.acknowledged,
            acknowledged_prevented: figures.acknowledged_prevented,
            acknowledged_failed_anyway: figures.acknowledged_failed_anyway,
            comparison: Comparison::new(figures.shown, figures.held_out, self.config.promotion.significance),
            tasks: figures.tasks,
            missed_opportunities: figures.missed,
        })
    }
}
