//! The candidate lists of hybrid search, one query per signal, each with the
//! same filters applied in SQL (tenancy included).

use std::collections::HashMap;

use sqlx::{PgPool, Row as _};
use uuid::Uuid;

use crate::knowledge::embeddings::vector_literal;
use crate::knowledge::{ENTRY_COLUMNS, entries_with_solutions};
use lore_types::Error;
use lore_types::actions::StoredName as _;
use lore_types::knowledge::rank::Candidate;
use lore_types::knowledge::{Entry, EntryKind, Severity};
use lore_types::scope::ProjectScope;

/// What every signal's list is restricted to.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SearchFilter {
    pub project: String,
    pub kinds: Vec<EntryKind>,
    pub category: Option<String>,
    pub severities: Vec<Severity>,
    pub tags: Vec<String>,
    pub include_obsolete: bool,
}

/// The filter as SQL over `e` (knowledge_entries), binding $1..$7.
const FILTER: &str = "e.project = $1 AND ($2::text[] IS NULL OR e.project = ANY($2))
     AND (($3 AND e.status <> 'quarantined') OR e.status = 'active')
     AND (cardinality($4::text[]) = 0 OR e.kind = ANY($4))
     AND ($5::text IS NULL OR e.category = $5)
     AND (cardinality($6::text[]) = 0 OR e.severity = ANY($6))
     AND e.tags @> $7::text[]";

/// Binds the filter. The statement is not kept prepared: PostgreSQL would
/// switch to a generic plan after five runs, and for these optional filters
/// a generic plan is a disaster (docs/BENCHMARKS.md, "Knowledge"; 6 s on
/// the sixth call); planning each time costs far less.
fn bind_filter<'q>(
    query: sqlx::query::Query<'q, sqlx::Postgres, sqlx::postgres::PgArguments>,
    scope: &ProjectScope,
    filter: &'q SearchFilter,
) -> sqlx::query::Query<'q, sqlx::Postgres, sqlx::postgres::PgArguments> {
    let kinds: Vec<&'static str> = filter.kinds.iter().map(|kind| kind.as_str()).collect();
    let severities: Vec<&'static str> = filter.severities.iter().map(|severity| severity.as_str()).collect();
    query
        .persistent(false)
        .bind(&filter.project)
        .bind(scope.sql_filter())
        .bind(filter.include_obsolete)
        .bind(kinds)
        .bind(&filter.category)
        .bind(severities)
        .bind(&filter.tags)
}

fn candidates(rows: Vec<sqlx::postgres::PgRow>) -> Result<Vec<Candidate>, Error> {
    rows.iter()
        .map(|row| {
            Ok(Candidate {
                entry_id: row.try_get("entry_id")?,
                score: row.try_get::<f64, _>("score")?,
                matched_terms: row.try_get::<Option<Vec<String>>, _>("matched")?.unwrap_or_default(),
            })
        })
        .collect::<Result<_, sqlx::Error>>()
        .map_err(Error::from)
}

/// The keyword signal's list, and how far it can be trusted for the query.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct KeywordMatches {
    pub candidates: Vec<Candidate>,
    /// How much of the query's information (the summed IDF of its words)
    /// the best hit matched, in 0..=1: an exact error message matches most
    /// of it; a loose description in other words a little, and semantic
    /// similarity should lead.
    pub confidence: f64,
    /// The query's words (stop words aside) that no entry contains: typos,
    /// or parts of identifiers, for the trigram signal.
    pub unmatched: Vec<String>,
}

/// How many matching entries of one term are read: the term's document
/// frequency is counted up to this cap and its candidates are that many.
/// Reading every match of a word found in half of 100,000 entries took the
/// keyword query to hundreds of milliseconds; a capped word's IDF is that of
/// a word in this many entries, low beside the rare words that decide the
/// ranking, and entries matching all the query's words are still read
/// (capped the same way), so a query of common words finds them.
pub const TERM_MATCH_CAP: i64 = 1000;
/// The filtered set is counted up to this many entries for IDF.
pub const ENTRY_COUNT_CAP: i64 = 10_000;

/// Full-text matches of the query's words (each stemmed on its own) and
/// synonym phrases, scored like BM25: each matching term adds its inverse
/// document frequency in the filtered set, saturated by how strongly it
/// occurs (ts_rank / (ts_rank + 0.05)). Plain ts_rank knows no IDF, so a
/// word found everywhere weighed as much as a rare identifier; on the
/// CoSQA dev set this scoring doubled MRR@10 over ts_rank_cd (0.09 -> 0.27).
/// Candidates are read per term up to [`TERM_MATCH_CAP`], then scored
/// against every term by primary key.
pub async fn keyword(
    pool: &PgPool,
    scope: &ProjectScope,
    filter: &SearchFilter,
    words: &[String],
    phrases: &[String],
    limit: i64,
) -> Result<KeywordMatches, Error> {
    let query = sqlx::query(sqlx::AssertSqlSafe(format!(
        "WITH terms AS (
                  SELECT term, q FROM unnest($8::text[]) AS term, plainto_tsquery('english', term) AS q
                  UNION ALL
                  SELECT term, q FROM unnest($9::text[]) AS term, phraseto_tsquery('english', term) AS q),
              total AS (SELECT count(*)::float8 AS n
                        FROM (SELECT 1 FROM knowledge_entries e WHERE {FILTER} LIMIT $11) AS counted),
              matches AS MATERIALIZED (
                  SELECT terms.term, m.entry_id
                  FROM terms CROSS JOIN LATERAL (
                      SELECT e.entry_id FROM knowledge_entries e
                      WHERE {FILTER} AND e.search_document @@ terms.q LIMIT $12) AS m
                  WHERE numnode(terms.q) > 0),
              everything AS (
                  SELECT e.entry_id FROM knowledge_entries e
                  WHERE {FILTER} AND cardinality($8) > 1
                    AND e.search_document @@ plainto_tsquery('english', array_to_string($8, ' '))
                  LIMIT $12),
              frequencies AS (SELECT term, count(*)::float8 AS n FROM matches GROUP BY term),
              weighted AS (
                  SELECT terms.term, terms.q,
                         ln(1 + (greatest(total.n - coalesce(df.n, 0), 0) + 0.5) / (coalesce(df.n, 0) + 0.5)) AS idf
                  FROM terms CROSS JOIN total LEFT JOIN frequencies df USING (term)
                  WHERE numnode(terms.q) > 0),
              candidates AS (SELECT entry_id FROM matches UNION SELECT entry_id FROM everything),
              scored AS (
                  SELECT c.entry_id, w.term, w.idf * r.rank / (r.rank + 0.05) AS part
                  FROM candidates c
                       -- OFFSET 0 keeps this a lookup by key: flattened, the planner
                       -- joined every match of every term instead.
                       CROSS JOIN LATERAL (SELECT e.search_document FROM knowledge_entries e
                                           WHERE e.entry_id = c.entry_id OFFSET 0) AS d
                       JOIN weighted w ON d.search_document @@ w.q
                       CROSS JOIN LATERAL (SELECT ts_rank(d.search_document, w.q, 1) AS rank) AS r)
         SELECT entry_id, sum(part)::float8 AS score, array_agg(term) AS matched,
                (SELECT coalesce(sum(idf), 0) FROM weighted WHERE term = ANY($8))::float8 AS information,
                array(SELECT term FROM terms LEFT JOIN frequencies USING (term)
                      WHERE term = ANY($8) AND numnode(q) > 0 AND frequencies.n IS NULL) AS unmatched
         FROM scored
         GROUP BY entry_id
         ORDER BY score DESC, entry_id
         LIMIT $10"
    )));
    let rows = bind_filter(query, scope, filter)
        .bind(words)
        .bind(phrases)
        .bind(limit)
        .bind(ENTRY_COUNT_CAP)
        .bind(TERM_MATCH_CAP)
        .fetch_all(pool)
        .await?;
    let (information, unmatched) = match rows.first() {
        Some(row) => (row.try_get::<f64, _>("information")?, row.try_get("unmatched")?),
        // Nothing matched any word: every word that is not a stop word.
        None => (
            0.0,
            sqlx::query_scalar(
                "SELECT array(SELECT w FROM unnest($1::text[]) AS w WHERE numnode(plainto_tsquery('english', w)) > 0)",
            )
            .bind(words)
            .fetch_one(pool)
            .await?,
        ),
    };
    let candidates = candidates(rows)?;
    let confidence =
        lore_types::knowledge::rank::keyword_confidence(candidates.first().map_or(0.0, |best| best.score), information);
    Ok(KeywordMatches { candidates, confidence, unmatched })
}

/// Trigram word similarity of `words` (the query's words that full text did
/// not find: typos, partial identifiers) to the title and summary, summed
/// over the words, best first. Comparing the whole query read thousands of
/// rows where summaries share common words; one unknown word reads a few.
pub async fn fuzzy(
    pool: &PgPool,
    scope: &ProjectScope,
    filter: &SearchFilter,
    words: &[String],
    threshold: f64,
    limit: i64,
) -> Result<Vec<Candidate>, Error> {
    let mut transaction = pool.begin().await?;
    sqlx::query("SELECT set_config('pg_trgm.word_similarity_threshold', $1, true)")
        .bind(threshold.to_string())
        .execute(&mut *transaction)
        .await?;
    let query = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT e.entry_id, sum(word_similarity(w, e.title || ' ' || e.summary))::float8 AS score,
                array_agg(w) AS matched
         FROM unnest($8::text[]) AS w
              JOIN knowledge_entries e ON w <% (e.title || ' ' || e.summary)
         WHERE {FILTER}
         GROUP BY e.entry_id
         ORDER BY score DESC, e.entry_id
         LIMIT $9"
    )));
    let rows = bind_filter(query, scope, filter).bind(words).bind(limit).fetch_all(&mut *transaction).await?;
    transaction.commit().await?;
    candidates(rows)
}

/// How the nearest vectors are found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VectorScan {
    /// The HNSW index with pgvector's iterative scan, which keeps scanning
    /// until enough rows pass the filters.
    Index,
    /// Every vector of the project compared (the recall reference).
    Exact,
}

/// Nearest entries by cosine similarity to `vector`, best first.
#[allow(clippy::too_many_arguments)]
pub async fn semantic(
    pool: &PgPool,
    scope: &ProjectScope,
    filter: &SearchFilter,
    model: &str,
    dimensions: usize,
    vector: &[f32],
    limit: i64,
    scan: VectorScan,
) -> Result<Vec<Candidate>, Error> {
    let mut transaction = pool.begin().await?;
    let settings: &[&str] = match scan {
        VectorScan::Index => &["SET LOCAL hnsw.iterative_scan = relaxed_order", "SET LOCAL hnsw.ef_search = 100"],
        VectorScan::Exact => &["SET LOCAL enable_indexscan = off", "SET LOCAL enable_bitmapscan = off"],
    };
    for setting in settings {
        sqlx::query(sqlx::AssertSqlSafe(*setting)).execute(&mut *transaction).await?;
    }
    // The dimension is part of the cast that the model's partial index is
    // built on, so it is written into the statement (a trusted integer).
    let query = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT k.entry_id, (1 - (k.embedding::vector({dimensions}) <=> $9::vector({dimensions})))::float8 AS score,
                NULL::text[] AS matched
         FROM knowledge_embeddings k JOIN knowledge_entries e USING (entry_id)
         WHERE k.model = $8 AND k.chunk = 0 AND k.project = $1 AND {FILTER}
         ORDER BY k.embedding::vector({dimensions}) <=> $9::vector({dimensions})
         LIMIT $10"
    )));
    let rows = bind_filter(query, scope, filter)
        .bind(model)
        .bind(vector_literal(vector))
        .bind(limit)
        .fetch_all(&mut *transaction)
        .await?;
    transaction.commit().await?;
    let mut found = candidates(rows)?;
    // relaxed_order may return neighbours slightly out of order.
    found.sort_by(|a, b| b.score.total_cmp(&a.score));
    Ok(found)
}

/// The entries (with solutions) of `ids`, in scope.
pub async fn entries(pool: &PgPool, scope: &ProjectScope, ids: &[Uuid]) -> Result<Vec<Entry>, Error> {
    let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {ENTRY_COLUMNS} FROM knowledge_entries e
         WHERE e.entry_id = ANY($1) AND ($2::text[] IS NULL OR e.project = ANY($2))"
    )))
    .bind(ids)
    .bind(scope.sql_filter())
    .fetch_all(pool)
    .await?;
    entries_with_solutions(pool, &rows).await
}

/// (applications, successes) per entry.
pub async fn application_counts(pool: &PgPool, ids: &[Uuid]) -> Result<HashMap<Uuid, (i64, i64)>, Error> {
    let rows = sqlx::query(
        "SELECT entry_id, count(*) AS applications, count(*) FILTER (WHERE success) AS successes
         FROM knowledge_applications WHERE entry_id = ANY($1) GROUP BY entry_id",
    )
    .bind(ids)
    .fetch_all(pool)
    .await?;
    rows.iter()
        .map(|row| Ok((row.try_get("entry_id")?, (row.try_get("applications")?, row.try_get("successes")?))))
        .collect::<Result<_, sqlx::Error>>()
        .map_err(Error::from)
}

/// The categories related to `category` in `project`; `None` when it is
/// no category of the project's (neither of an entry nor of a relation).
pub async fn related_categories(
    pool: &PgPool,
    scope: &ProjectScope,
    project: &str,
    category: &str,
) -> Result<Option<Vec<String>>, Error> {
    let row = sqlx::query(
        "SELECT EXISTS (SELECT 1 FROM knowledge_entries
                        WHERE project = $1 AND category = $2 AND ($3::text[] IS NULL OR project = ANY($3)))
                OR EXISTS (SELECT 1 FROM knowledge_category_relations
                           WHERE project = $1 AND $2 IN (category, related)) AS known,
                array(SELECT CASE WHEN category = $2 THEN related ELSE category END
                      FROM knowledge_category_relations
                      WHERE project = $1 AND $2 IN (category, related) AND ($3::text[] IS NULL OR project = ANY($3))
                      ORDER BY 1) AS related",
    )
    .bind(project)
    .bind(category)
    .bind(scope.sql_filter())
    .fetch_one(pool)
    .await?;
    let known: bool = row.try_get("known")?;
    Ok(known.then(|| row.try_get("related")).transpose()?)
}

/// The categories the project's entries use.
pub async fn categories(pool: &PgPool, scope: &ProjectScope, project: &str) -> Result<Vec<String>, Error> {
    Ok(sqlx::query_scalar(
        "SELECT DISTINCT category FROM knowledge_entries
         WHERE project = $1 AND ($2::text[] IS NULL OR project = ANY($2)) AND category <> ''
         ORDER BY category",
    )
    .bind(project)
    .bind(scope.sql_filter())
    .fetch_all(pool)
    .await?)
}
