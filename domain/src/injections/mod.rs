//! The injection ledger: what Lore put into each agent's context.
//!
//! Every briefing (at session start, at each prompt, a Resume's learnings
//! and warnings) and every MCP read made in a session is an [`Injection`].
//! It keeps each item it considered: the lesson, warning or last-session
//! summary, its trust, what it took of the context (characters, and tokens
//! estimated from them), why it was chosen (its score and the parts of the
//! score), and, when it was not shown, why it was withheld. So a person can
//! answer "what did Lore tell this agent, and why", and the session budget
//! can be kept: what a session was given is the sum of its injections.

mod items;

use chrono::Utc;
use sqlx::PgPool;
use uuid::Uuid;

pub use items::{entry_item, hit_item, warning_item};
pub use lore_types::injections::{
    CallGiven, CallWarningGiven, Day, Given, InjectedItem, Injection, InjectionFilter, ItemKind, Surface, Totals,
    Withheld, estimate_tokens,
};

use crate::Error;
use lore_store::injections as store;
use lore_types::actions::query::Position;
use lore_types::scope::ProjectScope;

/// The ledger over its table.
#[derive(Debug, Clone)]
pub struct InjectionLedger {
    pool: PgPool,
}

impl InjectionLedger {
    pub fn new(pool: PgPool) -> Self {
        Self { pool }
    }

    /// Records an injection (the project is created on first use); false
    /// when its id was recorded already.
    pub async fn record(&self, injection: &Injection) -> Result<bool, Error> {
        let mut transaction = self.pool.begin().await?;
        let recorded = store::insert(&mut transaction, injection).await?;
        transaction.commit().await?;
        Ok(recorded)
    }

    /// Records what a hook gave with a call; false when it was recorded
    /// already.
    pub async fn record_call(&self, scope: &ProjectScope, given: &CallGiven) -> Result<bool, Error> {
        scope.require(&given.project)?;
        self.record(&given.injection()).await
    }

    /// Records the reads of a session, when the read names one; a read
    /// without a session gave nothing to an agent Lore knows of.
    pub async fn record_read(
        &self,
        project: &str,
        session_id: Option<Uuid>,
        surface: Surface,
        items: Vec<InjectedItem>,
    ) -> Result<(), Error> {
        match session_id {
            Some(session_id) => self.record(&Injection::read(project, session_id, surface, items)).await.map(drop),
            None => Ok(()),
        }
    }

    /// The warnings at the call given in the project over the last `days`
    /// days, the most given first.
    pub async fn call_warnings_given(
        &self,
        scope: &ProjectScope,
        project: &str,
        days: u32,
    ) -> Result<Vec<CallWarningGiven>, Error> {
        scope.require(project)?;
        let since = Utc::now() - chrono::Duration::days(i64::from(days));
        store::call_warnings_given(&self.pool, project, since, 50).await
    }

    pub async fn given(&self, project: &str, session_id: Uuid) -> Result<Given, Error> {
        store::given(&self.pool, project, session_id).await
    }

    /// Newest first.
    pub async fn list(
        &self,
        scope: &ProjectScope,
        filter: &InjectionFilter,
        limit: i64,
        after: Option<Position>,
    ) -> Result<Vec<Injection>, Error> {
        scope.require(&filter.project)?;
        store::list(&self.pool, scope, filter, limit, after).await
    }

    pub async fn totals(&self, scope: &ProjectScope, filter: &InjectionFilter) -> Result<Totals, Error> {
        scope.require(&filter.project)?;
        store::totals(&self.pool, scope, filter).await
    }

    /// Tokens injected per day over the last `days` days, oldest first,
    /// days without any included as zero.
    pub async fn per_day(&self, scope: &ProjectScope, project: &str, days: u32) -> Result<Vec<Day>, Error> {
        scope.require(project)?;
        let today = Utc::now().date_naive();
        let first = today - chrono::Days::new(u64::from(days.max(1) - 1));
        let stored = store::per_day(&self.pool, scope, project, first).await?;
        Ok(first
            .iter_days()
            .take_while(|day| *day <= today)
            .map(|day| {
                stored.iter().find(|stored| stored.day == day).copied().unwrap_or(Day { day, tokens: 0, injections: 0 })
            })
            .collect())
    }
}
