//! The QA dashboard: failure rate per day, top patterns, categories, mean
//! attempts to pass, resolution rate and prevention effectiveness (overall,
//! per pattern, and shown against held out).

use super::QaLearning;
use super::model::{Dashboard, DashboardQuery};
use crate::Error;
use crate::scope::ProjectScope;
use crate::store::qa_feedback as store;

impl QaLearning {
    pub async fn dashboard(&self, scope: &ProjectScope, query: &DashboardQuery) -> Result<Dashboard, Error> {
        if !scope.allows(&query.project) {
            return Err(Error::PermissionDenied(format!("project {} is outside your scope", query.project)));
        }
        self.check_category(scope, &query.project, query.category.as_deref()).await?;
        let figures = store::dashboard(&self.pool, scope, query).await?;
        let share = |part: i64, whole: i64| if whole == 0 { 0.0 } else { part as f64 / whole as f64 };
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
            shown_failure_rate: share(figures.shown_failed.0, figures.shown_failed.1),
            held_out_failure_rate: share(figures.held_out_failed.0, figures.held_out_failed.1),
        })
    }
}
