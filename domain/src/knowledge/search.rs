//! Hybrid search: synonym-expanded keywords (BM25), typos, symptoms (a
//! pasted error message against the error messages entries are known by)
//! and embedding similarity, fused by reciprocal rank fusion and ranked by
//! the blend of [`lore_types::knowledge::rank`]. Keywords, typos and symptoms come from the
//! replica's keyword index ([`super::keyword`]); while it is being built
//! (or when it is switched off), keywords and typos come from PostgreSQL's
//! full text and trigrams, and symptoms are not matched.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::Utc;
use sqlx::PgPool;

pub use super::keyword::analysis::{Expansion, expand};
use super::{KnowledgeBase, symptoms};
use crate::Error;
use lore_store::knowledge::search::{self as store, KeywordMatches, SearchFilter, VectorScan};
use lore_types::knowledge::rank::{self, Candidate, Reason, Relevance, ScoreParts, Signal, SignalList};
use lore_types::knowledge::{Application, Entry, EntryKind, Solution};
use lore_types::scope::ProjectScope;
use lore_types::validate::{self, FieldError, FieldResult};

/// Which signals a query uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SearchMode {
    Keyword,
    Semantic,
    Hybrid,
}

/// A query's text is at most this long.
pub const MAX_QUERY_CHARS: usize = 4096;
/// Hits one query may ask for.
pub const MAX_SEARCH_LIMIT: u32 = 100;

#[derive(Debug, Clone, PartialEq)]
pub struct SearchQuery {
    /// What every signal is restricted to (its `category` only when the
    /// query asked for that category alone).
    pub filter: SearchFilter,
    pub text: String,
    pub limit: usize,
    /// Overrides the configured minimum fused similarity.
    pub min_similarity: Option<f64>,
    pub mode: SearchMode,
    /// Entries of this category rank first, of a related one next.
    pub category: Option<String>,
}

impl SearchQuery {
    /// A query of `project`'s entries, its text and size checked as every
    /// entry point checks them; the rest of the filter is open.
    pub fn new(project: &str, text: &str, limit: u32, mode: SearchMode) -> FieldResult<Self> {
        let text = validate::text("text", text, MAX_QUERY_CHARS, true)?;
        if limit == 0 {
            return Err(FieldError::new("limit", format!("required, 1 to {MAX_SEARCH_LIMIT}")));
        }
        if limit > MAX_SEARCH_LIMIT {
            return Err(FieldError::new("limit", format!("{limit} is over the maximum of {MAX_SEARCH_LIMIT}")));
        }
        Ok(Self {
            filter: SearchFilter { project: project.to_owned(), ..SearchFilter::default() },
            text,
            limit: limit as usize,
            min_similarity: None,
            mode,
            category: None,
        })
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    pub entry: Entry,
    pub score: f64,
    pub parts: ScoreParts,
    pub relevance: Relevance,
    pub reasons: Vec<Reason>,
    pub applied_before: Vec<Application>,
    pub snippet: String,
    pub recommendation: String,
    pub line: String,
}

impl Hit {
    pub fn best_solution(&self) -> Option<&Solution> {
        self.entry.best_solution()
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct SearchOutcome {
    pub hits: Vec<Hit>,
    /// Why the semantic signal was left out, when the provider failed.
    pub degraded: Option<String>,
    /// Time spent embedding the query.
    pub embedding_time: Duration,
}

/// Trigram word similarity a fuzzy match needs.
const FUZZY_THRESHOLD: f64 = 0.4;
/// Shorter words have too few trigrams to be told apart.
const FUZZY_MIN_CHARS: usize = 4;
/// Applications shown per hit.
const APPLIED_BEFORE: i64 = 3;
const SNIPPET_CHARS: usize = 240;
/// A solution recommended preemptively has worked this often, this many times.
const PREEMPTIVE_RATE: f64 = 0.8;
const PREEMPTIVE_APPLICATIONS: i64 = 3;

fn first_line(text: &str, max_chars: usize) -> String {
    let line = text.lines().map(str::trim).find(|line| !line.is_empty()).unwrap_or_default();
    if line.chars().count() <= max_chars {
        line.to_owned()
    } else {
        format!("{}...", line.chars().take(max_chars).collect::<String>())
    }
}

fn recommendation(entry: &Entry) -> String {
    match entry.best_solution() {
        Some(best) if best.times_applied >= PREEMPTIVE_APPLICATIONS && best.success_rate() >= PREEMPTIVE_RATE => {
            format!(
                "apply preemptively: {} (succeeded {} of {} times, ~{:.0} min)",
                first_line(&best.description, 120),
                best.times_successful,
                best.times_applied,
                best.avg_resolution_minutes()
            )
        }
        Some(best) if best.times_applied > 0 => format!(
            "consider: {} (succeeded {} of {} times)",
            first_line(&best.description, 120),
            best.times_successful,
            best.times_applied
        ),
        Some(best) => format!("untested fix: {}", first_line(&best.description, 120)),
        None if entry.kind == EntryKind::Gotcha => "watch out before acting".into(),
        None => "read before acting".into(),
    }
}

fn line(entry: &Entry) -> String {
    let name = entry.key.clone().unwrap_or_else(|| format!("{:?}", entry.kind).to_lowercase());
    match entry.best_solution() {
        Some(best) if best.times_applied > 0 => format!(
            "{name}: {} -> {} ({:.0}% of {}, ~{:.0} min)",
            entry.title,
            first_line(&best.description, 80),
            best.success_rate() * 100.0,
            best.times_applied,
            best.avg_resolution_minutes()
        ),
        Some(best) => format!("{name}: {} -> {}", entry.title, first_line(&best.description, 80)),
        None => format!("{name}: {}", entry.title),
    }
}

fn snippet(entry: &Entry) -> String {
    let source = if entry.summary.trim().is_empty() { &entry.body } else { &entry.summary };
    first_line(source, SNIPPET_CHARS)
}

/// What the word signals found: keywords, typos of the words keywords did
/// not find, and symptoms.
#[derive(Debug, Default)]
struct WordSignals {
    keyword: KeywordMatches,
    fuzzy: Vec<Candidate>,
    symptom: Vec<Candidate>,
}

impl KnowledgeBase {
    /// One query. Bad filters are refused with the field they name
    /// (`category`); a failing embedding provider degrades to keyword search.
    pub async fn search(&self, scope: &ProjectScope, query: &SearchQuery) -> Result<SearchOutcome, Error> {
        let pool = &self.read_pool().await;
        let related = match &query.category {
            Some(category) => self.related_categories(pool, scope, &query.filter.project, category).await?,
            None => Vec::new(),
        };
        let candidates = (query.limit * 4).max(40) as i64;
        // The signals are independent queries: run side by side, a search
        // costs its slowest signal rather than their sum.
        let (semantic, keyword) = tokio::join!(
            async {
                match query.mode {
                    SearchMode::Keyword => Ok(None),
                    _ => self.semantic_signal(pool, scope, query, candidates).await.map(Some),
                }
            },
            async {
                match query.mode {
                    SearchMode::Semantic => Ok(None),
                    _ => self.keyword_signals(pool, scope, query, candidates).await.map(Some),
                }
            },
        );
        let (mut degraded, mut embedding_time, mut semantic_list) = (None, Duration::ZERO, None);
        match semantic? {
            Some(Ok((list, took))) => (semantic_list, embedding_time) = (Some(list), took),
            Some(Err(reason)) => {
                tracing::warn!(reason, "query embedding failed; searching by keyword only");
                degraded = Some(reason);
            }
            None => {}
        }
        let keyword = match keyword? {
            Some(keyword) => Some(keyword),
            None if degraded.is_some() => Some(self.keyword_signals(pool, scope, query, candidates).await?),
            None => None,
        };
        let mut lists: Vec<SignalList> = Vec::new();
        if let Some(WordSignals { keyword, fuzzy, symptom }) = keyword {
            // Beside the semantic signal, keyword counts as much as its best
            // hit matched the query; alone, it leads whatever it matched.
            let confidence = if semantic_list.is_none() { 1.0 } else { keyword.confidence };
            let keyword_weight = self.ranking.signal_weight(Signal::Keyword) * confidence;
            lists.push(SignalList { signal: Signal::Keyword, weight: keyword_weight, candidates: keyword.candidates });
            for (signal, candidates) in [(Signal::Fuzzy, fuzzy), (Signal::Symptom, symptom)] {
                lists.push(SignalList { signal, weight: self.ranking.signal_weight(signal), candidates });
            }
        }
        lists.extend(semantic_list);
        let hits = self.rank(pool, scope, query, &related, &lists).await?;
        Ok(SearchOutcome { hits, degraded, embedding_time })
    }

    /// The semantic list and the time the query embedding took, or why the
    /// provider could not embed the query.
    async fn semantic_signal(
        &self,
        pool: &PgPool,
        scope: &ProjectScope,
        query: &SearchQuery,
        candidates: i64,
    ) -> Result<Result<(SignalList, Duration), String>, Error> {
        let started = Instant::now();
        let vector = match self.embed_query(&query.text).await {
            Ok(vector) => vector,
            Err(reason) => return Ok(Err(reason)),
        };
        let embedding_time = started.elapsed();
        let embedder = self.embedder.as_ref().expect("embedded above");
        let found = store::semantic(
            pool,
            scope,
            &query.filter,
            embedder.model(),
            embedder.dimensions(),
            &vector,
            candidates,
            VectorScan::Index,
        )
        .await?;
        let weight = self.ranking.signal_weight(Signal::Semantic);
        Ok(Ok((SignalList { signal: Signal::Semantic, weight, candidates: found }, embedding_time)))
    }

    /// The categories related to `category`, once it is known to be one of
    /// the project's (of its entries or of its relations).
    async fn related_categories(
        &self,
        pool: &PgPool,
        scope: &ProjectScope,
        project: &str,
        category: &str,
    ) -> Result<Vec<String>, Error> {
        match store::related_categories(pool, scope, project, category).await? {
            Some(related) => Ok(related),
            None => {
                let known = store::categories(pool, scope, project).await?;
                Err(Error::invalid(
                    "category",
                    format!("{category:?} is not a category of project {project} (known: {known:?})"),
                ))
            }
        }
    }

    /// The keyword matches (synonyms expanded), the typo matches of the
    /// words they did not find, and the symptoms the query holds.
    async fn keyword_signals(
        &self,
        pool: &PgPool,
        scope: &ProjectScope,
        query: &SearchQuery,
        candidates: i64,
    ) -> Result<WordSignals, Error> {
        let synonyms: Vec<(String, String)> =
            lore_store::knowledge::vocabulary::synonyms(pool, scope, &query.filter.project)
                .await?
                .into_iter()
                .map(|synonym| (synonym.term, synonym.expansion))
                .collect();
        let expansion = expand(&query.text, &synonyms);
        if let Some(index) = self.keyword_index() {
            if !scope.allows(&query.filter.project) {
                return Ok(WordSignals::default());
            }
            let (index, filter, limit) = (Arc::clone(index), query.filter.clone(), candidates as usize);
            let message = symptoms::tokens(&query.text);
            return tokio::task::spawn_blocking(move || {
                let keyword = index.keyword(&filter, &expansion, limit)?;
                let unknown: Vec<String> =
                    keyword.unmatched.iter().filter(|word| word.chars().count() >= FUZZY_MIN_CHARS).cloned().collect();
                let fuzzy = if unknown.is_empty() { Vec::new() } else { index.fuzzy(&filter, &unknown, limit)? };
                let symptom = index.symptoms(&filter, &message, limit)?;
                Ok(WordSignals { keyword, fuzzy, symptom })
            })
            .await
            .map_err(|error| Error::Unavailable(format!("keyword search failed: {error}")))?;
        }
        let keyword =
            store::keyword(pool, scope, &query.filter, &expansion.words, &expansion.phrases, candidates).await?;
        // Trigrams only for the words full text did not find (usually none):
        // a word it found is better matched by it.
        let unknown: Vec<String> =
            keyword.unmatched.iter().filter(|word| word.chars().count() >= FUZZY_MIN_CHARS).cloned().collect();
        let fuzzy = if unknown.is_empty() {
            Vec::new()
        } else {
            store::fuzzy(pool, scope, &query.filter, &unknown, FUZZY_THRESHOLD, candidates).await?
        };
        Ok(WordSignals { keyword, fuzzy, symptom: Vec::new() })
    }

    /// Embeds in one call the queries whose vectors are not kept yet (a
    /// SearchMany's); a failure is left to each query's own search.
    pub(crate) async fn warm_query_vectors(&self, texts: &[String]) {
        let Some(embedder) = &self.embedder else { return };
        let mut missing: Vec<String> =
            texts.iter().filter(|text| self.query_vectors.get(embedder.model(), text).is_none()).cloned().collect();
        missing.sort_unstable();
        missing.dedup();
        if missing.len() < 2 {
            return;
        }
        if let Ok(Ok(vectors)) = tokio::time::timeout(self.query_embedding_timeout, embedder.embed(&missing)).await {
            for (text, vector) in missing.iter().zip(vectors) {
                self.query_vectors.put(embedder.model(), text, vector.into());
            }
        }
    }

    /// The query's vector, from the cache when it was asked before.
    async fn embed_query(&self, text: &str) -> Result<Arc<[f32]>, String> {
        let embedder = self.embedder.as_ref().ok_or("no embedding provider is configured")?;
        if let Some(vector) = self.query_vectors.get(embedder.model(), text) {
            return Ok(vector);
        }
        let texts = [text.to_owned()];
        match tokio::time::timeout(self.query_embedding_timeout, embedder.embed(&texts)).await {
            Ok(Ok(mut vectors)) if vectors.len() == 1 => {
                let vector: Arc<[f32]> = vectors.remove(0).into();
                self.query_vectors.put(embedder.model(), text, Arc::clone(&vector));
                Ok(vector)
            }
            Ok(Ok(_)) => Err("the provider returned no vector".into()),
            Ok(Err(error)) => Err(error.to_string()),
            Err(_) => Err(format!("the provider did not answer within {:?}", self.query_embedding_timeout)),
        }
    }

    async fn rank(
        &self,
        pool: &PgPool,
        scope: &ProjectScope,
        query: &SearchQuery,
        related: &[String],
        lists: &[SignalList],
    ) -> Result<Vec<Hit>, Error> {
        let fused = rank::fuse(lists, self.ranking.rrf_k);
        let min_similarity = query.min_similarity.unwrap_or(self.ranking.min_similarity);
        let fused: Vec<_> = fused.into_iter().filter(|(_, similarity, _)| *similarity >= min_similarity).collect();
        let ids: Vec<uuid::Uuid> = fused.iter().map(|(id, _, _)| *id).collect();
        let mut entries: HashMap<uuid::Uuid, Entry> =
            store::entries(pool, scope, &ids).await?.into_iter().map(|entry| (entry.entry_id, entry)).collect();
        let applications = store::application_counts(pool, &ids).await?;
        let now = Utc::now();
        let mut hits: Vec<Hit> = fused
            .into_iter()
            .filter_map(|(entry_id, similarity, reasons)| {
                let entry = entries.remove(&entry_id)?;
                // Pooled over every solution, as a pattern's record is; an
                // entry without applied solutions by its own applications.
                let success_rate = entry.pooled_success_rate().unwrap_or_else(|| match applications.get(&entry_id) {
                    Some(&(applied, succeeded)) if applied > 0 => succeeded as f64 / applied as f64,
                    _ => 0.0,
                });
                let parts = ScoreParts {
                    similarity,
                    success_rate,
                    recency: rank::recency(entry.last_touched(), now, self.ranking.recency_days),
                    specificity: rank::specificity(entry.occurrence_count),
                    category: query
                        .category
                        .as_deref()
                        .map(|wanted| rank::category_match(&entry.category, wanted, related)),
                };
                Some(Hit {
                    score: parts.score(&self.ranking),
                    parts,
                    relevance: rank::relevance(similarity),
                    reasons,
                    applied_before: Vec::new(),
                    snippet: snippet(&entry),
                    recommendation: recommendation(&entry),
                    line: line(&entry),
                    entry,
                })
            })
            .collect();
        hits.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.entry.entry_id.cmp(&b.entry.entry_id)));
        hits.truncate(query.limit);
        let shown: Vec<uuid::Uuid> = hits.iter().map(|hit| hit.entry.entry_id).collect();
        let mut recent = lore_store::knowledge::recent_applications(pool, &shown, APPLIED_BEFORE).await?;
        for hit in &mut hits {
            hit.applied_before = recent.remove(&hit.entry.entry_id).unwrap_or_default();
        }
        Ok(hits)
    }
}
