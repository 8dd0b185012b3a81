//! SearchMany: the queries of a triage (one per error or task) at once.
//!
//! - The queries that are not kept from before are embedded in one call to
//!   the model, then searched side by side.
//! - A query that fails (a bad filter, an unknown category) fails alone.
//! - At most `max_queries_with_hits` queries keep hits, those whose best
//!   hit scores highest, each at most `per_query` hits, and at most
//!   `total` hits in all.
//! - Each query's answer is kept per project for a few minutes
//!   ([`super::search_cache`]) and dropped by any write to the project.

use futures_util::{StreamExt as _, stream};

use super::KnowledgeBase;
use super::search::{Hit, SearchQuery};
use crate::Error;
use lore_types::scope::ProjectScope;

/// Queries searched at once: enough to overlap their round trips to
/// PostgreSQL, few enough to leave the pool to other calls.
const CONCURRENCY: usize = 4;

/// How many hits a SearchMany keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Caps {
    pub per_query: usize,
    pub queries_with_hits: usize,
    pub total: usize,
}

/// One query's answer.
#[derive(Debug)]
pub struct QueryAnswer {
    pub result: Result<Vec<Hit>, Error>,
    /// Kept from an earlier identical query.
    pub cached: bool,
    /// It had hits, but better queries took its place.
    pub capped: bool,
}

/// What SearchMany answers.
#[derive(Debug)]
pub struct ManyOutcome {
    /// In request order.
    pub answers: Vec<QueryAnswer>,
    /// Hits left out by the caps.
    pub truncated: bool,
    /// Why the semantic signal was left out, when it was.
    pub degraded: Option<String>,
}

/// The cache's key for a query: all of it (its `Debug` form is complete
/// and stable within a server's life).
fn key(query: &SearchQuery) -> String {
    format!("{query:?}")
}

impl KnowledgeBase {
    /// Runs `queries` (each already checked, or the error that check gave)
    /// of `project` under `caps`.
    pub async fn search_many(
        &self,
        scope: &ProjectScope,
        project: &str,
        queries: Vec<Result<SearchQuery, Error>>,
        caps: Caps,
    ) -> Result<ManyOutcome, Error> {
        scope.require(project)?;
        // One call to the model for every query to search.
        let fresh: Vec<String> = queries
            .iter()
            .filter_map(|query| query.as_ref().ok())
            .filter(|query| self.answers.get(project, &key(query)).is_none())
            .map(|query| query.text.clone())
            .collect();
        self.warm_query_vectors(&fresh).await;

        let searched: Vec<(QueryAnswer, Option<String>)> = stream::iter(queries)
            .map(|query| async move {
                let query = match query {
                    Ok(query) => query,
                    Err(error) => return (QueryAnswer { result: Err(error), cached: false, capped: false }, None),
                };
                let key = key(&query);
                if let Some(outcome) = self.answers.get(project, &key) {
                    return (QueryAnswer { result: Ok(outcome.hits), cached: true, capped: false }, None);
                }
                let generation = self.answers.generation(project);
                match self.search(scope, &query).await {
                    Ok(outcome) => {
                        let degraded = outcome.degraded.clone();
                        let hits = outcome.hits.clone();
                        if degraded.is_none() {
                            self.answers.put(project, &key, generation, outcome);
                        }
                        (QueryAnswer { result: Ok(hits), cached: false, capped: false }, degraded)
                    }
                    Err(error) => (QueryAnswer { result: Err(error), cached: false, capped: false }, None),
                }
            })
            .buffered(CONCURRENCY)
            .collect()
            .await;
        let degraded = searched.iter().find_map(|(_, degraded)| degraded.clone());
        let mut answers: Vec<QueryAnswer> = searched.into_iter().map(|(answer, _)| answer).collect();
        let truncated = cap(&mut answers, caps);
        Ok(ManyOutcome { answers, truncated, degraded })
    }
}

/// Applies the caps; returns whether they cut hits.
fn cap(answers: &mut [QueryAnswer], caps: Caps) -> bool {
    let mut truncated = false;
    for answer in answers.iter_mut() {
        if let Ok(hits) = &mut answer.result
            && hits.len() > caps.per_query
        {
            hits.truncate(caps.per_query);
            truncated = true;
        }
    }
    // The queries with the best hits keep theirs; ties go to the earlier.
    let best = |answer: &QueryAnswer| match &answer.result {
        Ok(hits) => hits.first().map(|hit| hit.score),
        Err(_) => None,
    };
    let mut with_hits: Vec<usize> = (0..answers.len()).filter(|&index| best(&answers[index]).is_some()).collect();
    with_hits.sort_by(|&a, &b| {
        best(&answers[b]).unwrap_or(0.0).total_cmp(&best(&answers[a]).unwrap_or(0.0)).then(a.cmp(&b))
    });
    for &index in with_hits.iter().skip(caps.queries_with_hits) {
        if let Ok(hits) = &mut answers[index].result {
            hits.clear();
            answers[index].capped = true;
            truncated = true;
        }
    }
    // The total cap keeps the best-scoring hits across the queries.
    let mut scores: Vec<f64> =
        answers.iter().filter_map(|answer| answer.result.as_ref().ok()).flatten().map(|hit| hit.score).collect();
    if scores.len() > caps.total {
        scores.sort_by(|a, b| b.total_cmp(a));
        let cutoff = scores[caps.total.max(1) - 1];
        let mut kept = 0;
        for hits in answers.iter_mut().filter_map(|answer| answer.result.as_mut().ok()) {
            hits.retain(|hit| {
                let keep = hit.score >= cutoff && kept < caps.total;
                kept += usize::from(keep);
                keep
            });
        }
        truncated = true;
    }
    truncated
}
