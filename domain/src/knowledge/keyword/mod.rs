//! The keyword index each replica keeps in memory: BM25 over the entries'
//! text with tantivy, whose term dictionary and block-max WAND answer a
//! query without reading every posting of a common word, and whose
//! document frequencies are kept as entries come and go rather than counted
//! per query (PostgreSQL's full text did both; docs/BENCHMARKS.md).
//!
//! PostgreSQL stays the only source of truth: [`feed`] rebuilds the index
//! from `knowledge_entries` at start and follows the change feed, so every
//! replica answers the same. Until the first rebuild is done the index is
//! not ready and search reads PostgreSQL's full text instead.
//!
//! # Fields
//! - `heading`: title and tags; `summary`: summary, category; `body`: the
//!   markdown. Stemmed ([`analysis::TEXT`]), with positions for phrases,
//!   scored per field (each normalized by its own length, so a word in a
//!   short title already counts more than one in a long body); a word
//!   counts by its best field plus a tenth of the others. Fields weigh the
//!   same: PostgreSQL's `setweight` ranks (1, 0.4, 0.2) cost 0.07 nDCG@10
//!   on CoSQA, whose bodies hold most of what matches.
//! - `words`: the title's and summary's words as written, for typos.
//! - `symptom`: each symptom as normalized tokens ([`crate::knowledge::symptoms`]),
//!   indexed to find candidates and stored to compare them; `symptom_text`:
//!   each symptom as written, in the same order, to show which matched.
//!   Symptoms and root causes are also words of `summary`.
//! - `id` (the entry id, for deletes) and `id_high`/`id_low` (the same as
//!   two fast u64 columns, read for each hit); `project`, `status`, `kind`,
//!   `category`, `severity`, `tag`: raw terms the filters match exactly.

pub mod analysis;
pub mod feed;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Mutex;

use tantivy::collector::{Count, TopDocs};
use tantivy::directory::RamDirectory;
use tantivy::query::{
    BooleanQuery, BoostQuery, ConstScoreQuery, DisjunctionMaxQuery, EnableScoring, FuzzyTermQuery, Occur, PhraseQuery,
    Query, TermQuery,
};
use tantivy::schema::{
    FAST, Field, IndexRecordOption, STORED, STRING, Schema, TextFieldIndexing, TextOptions, Value as _,
};
use tantivy::tokenizer::TextAnalyzer;
use tantivy::{
    DocAddress, DocId, DocSet as _, Index, IndexReader, IndexWriter, ReloadPolicy, Searcher, TantivyDocument, Term,
};
use uuid::Uuid;

use crate::Error;
use crate::knowledge::symptoms;
use analysis::Expansion;
use lore_store::knowledge::changes::IndexedEntry;
use lore_store::knowledge::search::{KeywordMatches, SearchFilter};
use lore_types::actions::StoredName as _;
use lore_types::knowledge::rank::Candidate;

/// Memory the writer buffers before it flushes a segment (tantivy's least).
const WRITER_MEMORY: usize = 15_000_000;
/// BM25's k1, tantivy's default: a term's weight saturates by (k1 + 1).
const K1: f64 = 1.2;

/// Each text field and its weight.
const TEXT_FIELDS: [(&str, f32); 3] = [("heading", 1.0), ("summary", 1.0), ("body", 1.0)];
/// A word scores by the field where it matches best, plus this share of
/// its other fields (Lucene's best-fields `tie_breaker`): a word repeated in
/// title, summary and body is one word, not three.
const FIELD_TIE_BREAKER: f32 = 0.1;

#[derive(Debug, Clone, Copy)]
struct Fields {
    id: Field,
    id_high: Field,
    id_low: Field,
    project: Field,
    status: Field,
    kind: Field,
    category: Field,
    severity: Field,
    tag: Field,
    /// In [`TEXT_FIELDS`] order.
    text: [Field; 3],
    words: Field,
    symptom: Field,
    symptom_text: Field,
}

fn schema() -> (Schema, Fields) {
    let mut builder = Schema::builder();
    let text = TextOptions::default().set_indexing_options(
        TextFieldIndexing::default()
            .set_tokenizer(analysis::TEXT)
            .set_index_option(IndexRecordOption::WithFreqsAndPositions),
    );
    let words = TextOptions::default().set_indexing_options(
        TextFieldIndexing::default().set_tokenizer(analysis::WORDS).set_index_option(IndexRecordOption::Basic),
    );
    let fields = Fields {
        id: builder.add_text_field("id", STRING),
        id_high: builder.add_u64_field("id_high", FAST),
        id_low: builder.add_u64_field("id_low", FAST),
        project: builder.add_text_field("project", STRING),
        status: builder.add_text_field("status", STRING),
        kind: builder.add_text_field("kind", STRING),
        category: builder.add_text_field("category", STRING),
        severity: builder.add_text_field("severity", STRING),
        tag: builder.add_text_field("tag", STRING),
        text: TEXT_FIELDS.map(|(name, _)| builder.add_text_field(name, text.clone())),
        words: builder.add_text_field("words", words),
        symptom: builder.add_text_field(
            "symptom",
            TextOptions::default()
                .set_indexing_options(
                    TextFieldIndexing::default()
                        .set_tokenizer(analysis::TOKENS)
                        .set_index_option(IndexRecordOption::WithFreqs),
                )
                .set_stored(),
        ),
        symptom_text: builder.add_text_field("symptom_text", STORED),
    };
    (builder.build(), fields)
}

/// One replica's keyword index.
pub struct KeywordIndex {
    index: Index,
    /// The index's files, shared with `index`: what it holds in memory.
    directory: RamDirectory,
    reader: IndexReader,
    writer: Mutex<IndexWriter>,
    fields: Fields,
    ready: std::sync::atomic::AtomicBool,
}

impl std::fmt::Debug for KeywordIndex {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("KeywordIndex").field("ready", &self.is_ready()).finish_non_exhaustive()
    }
}

fn index_error(error: tantivy::TantivyError) -> Error {
    Error::Unavailable(format!("the keyword index failed: {error}"))
}

/// A query word or synonym phrase, and its terms in the text fields.
#[derive(Debug, Clone)]
struct Clause {
    /// As the caller gave it (reported as a matched term).
    text: String,
    terms: Vec<String>,
    /// A word of the query, not a synonym phrase: it counts in the query's
    /// information and may be looked for with typos.
    word: bool,
    /// For a synonym of one query word: that word's clause. The two are
    /// alternatives, so a document scores the better of them, never both.
    alternative_to: Option<usize>,
}

impl KeywordIndex {
    /// An empty index, not ready until [`Self::ready`] (the first rebuild).
    pub fn new() -> Result<Self, Error> {
        let (schema, fields) = schema();
        let directory = RamDirectory::create();
        let index = Index::create(directory.clone(), schema, Default::default()).map_err(index_error)?;
        for (name, analyzer) in analysis::analyzers() {
            index.tokenizers().register(name, analyzer);
        }
        let writer = index.writer_with_num_threads(1, WRITER_MEMORY).map_err(index_error)?;
        let reader = index.reader_builder().reload_policy(ReloadPolicy::Manual).try_into().map_err(index_error)?;
        Ok(Self { index, directory, reader, writer: Mutex::new(writer), fields, ready: Default::default() })
    }

    pub fn is_ready(&self) -> bool {
        self.ready.load(std::sync::atomic::Ordering::Acquire)
    }

    /// Searches may use the index from now on.
    pub fn ready(&self) {
        self.ready.store(true, std::sync::atomic::Ordering::Release);
    }

    /// Entries currently in the index.
    pub fn len(&self) -> u64 {
        self.reader.searcher().num_docs()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The memory the index holds: its files (segments not yet merged
    /// away included) and what the writer has buffered.
    pub fn bytes(&self) -> u64 {
        self.directory.total_mem_usage() as u64
    }

    /// The entries of `project` in the index.
    pub fn project_len(&self, project: &str) -> Result<u64, Error> {
        let query = TermQuery::new(Term::from_field_text(self.fields.project, project), IndexRecordOption::Basic);
        Ok(self.reader.searcher().search(&query, &Count).map_err(index_error)? as u64)
    }

    fn analyzer(&self, name: &str) -> TextAnalyzer {
        self.index.tokenizers().get(name).expect("registered in new()")
    }

    fn document(&self, entry: &IndexedEntry) -> TantivyDocument {
        let fields = &self.fields;
        let (high, low) = entry.entry_id.as_u64_pair();
        let mut document = TantivyDocument::default();
        document.add_text(fields.id, entry.entry_id.to_string());
        document.add_u64(fields.id_high, high);
        document.add_u64(fields.id_low, low);
        document.add_text(fields.project, &entry.project);
        document.add_text(fields.status, &entry.status);
        document.add_text(fields.kind, &entry.kind);
        document.add_text(fields.category, &entry.category);
        if let Some(severity) = &entry.severity {
            document.add_text(fields.severity, severity);
        }
        for tag in &entry.tags {
            document.add_text(fields.tag, tag);
        }
        let [heading, summary, body] = fields.text;
        document.add_text(heading, &entry.title);
        document.add_text(heading, entry.tags.join(" "));
        document.add_text(summary, &entry.summary);
        document.add_text(summary, &entry.category);
        for text in entry.symptoms.iter().chain(&entry.root_causes) {
            document.add_text(summary, text);
        }
        for symptom in &entry.symptoms {
            document.add_text(fields.symptom, symptoms::tokens(symptom).join(" "));
            document.add_text(fields.symptom_text, symptom);
        }
        document.add_text(body, &entry.body);
        document.add_text(fields.words, &entry.title);
        document.add_text(fields.words, &entry.summary);
        document
    }

    /// Replaces the documents of `ids` with `entries` (the ones of them that
    /// still exist) and makes the change visible to searches. Blocking:
    /// call off the async workers.
    pub fn apply(&self, ids: &[Uuid], entries: &[IndexedEntry]) -> Result<(), Error> {
        let mut writer = self.writer.lock().expect("keyword writer lock");
        for id in ids {
            writer.delete_term(Term::from_field_text(self.fields.id, &id.to_string()));
        }
        for entry in entries {
            writer.add_document(self.document(entry)).map_err(index_error)?;
        }
        writer.commit().map_err(index_error)?;
        drop(writer);
        self.reader.reload().map_err(index_error)
    }

    /// Empties the index (before a rebuild). Blocking.
    pub fn clear(&self) -> Result<(), Error> {
        self.ready.store(false, std::sync::atomic::Ordering::Release);
        let mut writer = self.writer.lock().expect("keyword writer lock");
        writer.delete_all_documents().map_err(index_error)?;
        writer.commit().map_err(index_error)?;
        drop(writer);
        self.reader.reload().map_err(index_error)
    }

    /// The filter as required clauses that add nothing to the score.
    fn filter_clauses(&self, filter: &SearchFilter) -> Vec<(Occur, Box<dyn Query>)> {
        let fields = &self.fields;
        let exact = |field: Field, value: &str| -> Box<dyn Query> {
            Box::new(TermQuery::new(Term::from_field_text(field, value), IndexRecordOption::Basic))
        };
        let any_of = |field: Field, values: Vec<&str>| -> Box<dyn Query> {
            Box::new(BooleanQuery::new(values.into_iter().map(|value| (Occur::Should, exact(field, value))).collect()))
        };
        let mut required: Vec<Box<dyn Query>> = vec![exact(fields.project, &filter.project)];
        if !filter.include_obsolete {
            required.push(exact(fields.status, "active"));
        } else {
            // Obsolete entries may be asked for; quarantined ones never.
            required.push(any_of(fields.status, vec!["active", "obsolete"]));
        }
        if !filter.kinds.is_empty() {
            required.push(any_of(fields.kind, filter.kinds.iter().map(|kind| kind.as_str()).collect()));
        }
        if let Some(category) = &filter.category {
            required.push(exact(fields.category, category));
        }
        if !filter.severities.is_empty() {
            required
                .push(any_of(fields.severity, filter.severities.iter().map(|severity| severity.as_str()).collect()));
        }
        for tag in &filter.tags {
            required.push(exact(fields.tag, tag));
        }
        required
            .into_iter()
            .map(|query| (Occur::Must, Box::new(ConstScoreQuery::new(query, 0.0)) as Box<dyn Query>))
            .collect()
    }

    /// The query's words and synonym phrases as terms of the text fields.
    fn clauses(&self, expansion: &Expansion) -> Vec<Clause> {
        let mut analyzer = self.analyzer(analysis::TEXT);
        let mut seen = HashSet::new();
        let mut clauses: Vec<Clause> = Vec::new();
        for word in &expansion.words {
            let terms = analysis::terms(&mut analyzer, word);
            if !terms.is_empty() && seen.insert(terms.clone()) {
                clauses.push(Clause { text: word.clone(), terms, word: true, alternative_to: None });
            }
        }
        for (phrase, source) in expansion.phrases.iter().zip(&expansion.sources) {
            let terms = analysis::terms(&mut analyzer, phrase);
            if terms.is_empty() || !seen.insert(terms.clone()) {
                continue;
            }
            let source = analysis::terms(&mut analyzer, source);
            let alternative_to = clauses.iter().position(|clause| clause.word && clause.terms == source);
            clauses.push(Clause { text: phrase.clone(), terms, word: false, alternative_to });
        }
        clauses
    }

    /// The largest IDF `term` has in any text field (0 when no entry has it).
    fn idf(&self, searcher: &Searcher, term: &str) -> Result<f64, Error> {
        let documents = searcher.num_docs() as f64;
        let mut idf: f64 = 0.0;
        for field in self.fields.text {
            let frequency = searcher.doc_freq(&Term::from_field_text(field, term)).map_err(index_error)?;
            if frequency > 0 {
                let frequency = frequency as f64;
                idf = idf.max((1.0 + (documents - frequency + 0.5) / (frequency + 0.5)).ln());
            }
        }
        Ok(idf)
    }

    /// The text part of the query: each word with its synonyms as one
    /// disjunction scored by its best member, a synonym weighted down so a
    /// rare alternative ("py" for "python") never outweighs the word the
    /// user wrote; synonyms of several words stand alone.
    fn text_query(&self, searcher: &Searcher, clauses: &[Clause]) -> Result<Box<dyn Query>, Error> {
        let clause_query = |clause: &Clause, boost: f32| -> Box<dyn Query> {
            let fields = self.clause_query(clause).into_iter().map(|(_, query)| query).collect();
            let best_field = DisjunctionMaxQuery::with_tie_breaker(fields, FIELD_TIE_BREAKER);
            Box::new(BoostQuery::new(Box::new(best_field), boost))
        };
        let mut groups: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        for (index, clause) in clauses.iter().enumerate() {
            if clause.alternative_to.is_some() {
                continue;
            }
            let alternatives: Vec<&Clause> =
                clauses.iter().filter(|alternative| alternative.alternative_to == Some(index)).collect();
            if alternatives.is_empty() {
                groups.push((Occur::Should, clause_query(clause, 1.0)));
                continue;
            }
            let own = self.idf(searcher, &clause.terms[0])?;
            let mut members = vec![clause_query(clause, 1.0)];
            for alternative in alternatives {
                let mut information = 0.0;
                for term in &alternative.terms {
                    information += self.idf(searcher, term)?;
                }
                let boost = if information > own { own / information } else { 1.0 };
                members.push(clause_query(alternative, boost as f32));
            }
            groups.push((Occur::Should, Box::new(DisjunctionMaxQuery::new(members))));
        }
        Ok(Box::new(BooleanQuery::new(groups)))
    }

    /// One clause in every text field, each weighted.
    fn clause_query(&self, clause: &Clause) -> Vec<(Occur, Box<dyn Query>)> {
        TEXT_FIELDS
            .iter()
            .zip(self.fields.text)
            .map(|(&(_, weight), field)| {
                let query: Box<dyn Query> = match clause.terms.as_slice() {
                    [term] => {
                        Box::new(TermQuery::new(Term::from_field_text(field, term), IndexRecordOption::WithFreqs))
                    }
                    terms => Box::new(PhraseQuery::new(
                        terms.iter().map(|term| Term::from_field_text(field, term)).collect(),
                    )),
                };
                (Occur::Should, Box::new(BoostQuery::new(query, weight)) as Box<dyn Query>)
            })
            .collect()
    }

    /// How far the keyword signal can be trusted when its best hit matched
    /// `matched`: the square of the share of the query's information (the
    /// IDF of its words, in the field where each is rarest) those words
    /// hold. Squared because a partial match is what a loose description in
    /// other words gets, where semantic similarity should lead: a hit with
    /// half of the query counts a quarter (on CoSQA, 0.5906 nDCG@10 hybrid
    /// against 0.5892 for the plain share).
    fn confidence(&self, searcher: &Searcher, clauses: &[Clause], matched: &[String]) -> Result<f64, Error> {
        let (mut information, mut found) = (0.0, 0.0);
        for (index, clause) in clauses.iter().enumerate().filter(|(_, clause)| clause.word) {
            let idf = self.idf(searcher, &clause.terms[0])?;
            information += idf;
            let alternatives = clauses.iter().filter(|alternative| alternative.alternative_to == Some(index));
            if matched.contains(&clause.text)
                || alternatives.into_iter().any(|alternative| matched.contains(&alternative.text))
            {
                found += idf;
            }
        }
        Ok(if information > 0.0 { (found / information).powi(2) } else { 0.0 })
    }

    /// The keyword signal: BM25 matches of the query's words and synonym
    /// phrases within the filter, best first, with the terms each matched.
    pub fn keyword(&self, filter: &SearchFilter, expansion: &Expansion, limit: usize) -> Result<KeywordMatches, Error> {
        let searcher = self.reader.searcher();
        let clauses = self.clauses(expansion);
        let unmatched = self.unmatched(&searcher, filter, &expansion.words)?;
        if clauses.is_empty() {
            return Ok(KeywordMatches { candidates: Vec::new(), confidence: 0.0, unmatched });
        }
        let mut query = self.filter_clauses(filter);
        query.push((Occur::Must, self.text_query(&searcher, &clauses)?));
        let top = searcher
            .search(&BooleanQuery::new(query), &TopDocs::with_limit(limit.max(1)).order_by_score())
            .map_err(index_error)?;
        let matched = self.matched_clauses(&searcher, &clauses, &top)?;
        let candidates: Vec<Candidate> = top
            .iter()
            .zip(matched)
            .map(|(&(score, address), matched)| {
                Ok(Candidate {
                    entry_id: self.entry_id(&searcher, address)?,
                    score: f64::from(score) / (K1 + 1.0),
                    matched_terms: matched,
                })
            })
            .collect::<Result<_, Error>>()?;
        let best: &[String] = candidates.first().map_or(&[], |best| &best.matched_terms);
        let confidence = self.confidence(&searcher, &clauses, best)?;
        Ok(KeywordMatches { candidates, confidence, unmatched })
    }

    /// The clauses each of `top` contains, by seeking every clause's
    /// matches to the hits in document order.
    fn matched_clauses(
        &self,
        searcher: &Searcher,
        clauses: &[Clause],
        top: &[(tantivy::Score, DocAddress)],
    ) -> Result<Vec<Vec<String>>, Error> {
        let mut matched = vec![Vec::new(); top.len()];
        let mut by_segment: BTreeMap<u32, Vec<(DocId, usize)>> = BTreeMap::new();
        for (index, (_, address)) in top.iter().enumerate() {
            by_segment.entry(address.segment_ord).or_default().push((address.doc_id, index));
        }
        for clause in clauses {
            let query = BooleanQuery::new(self.clause_query(clause));
            let weight = query.weight(EnableScoring::disabled_from_searcher(searcher)).map_err(index_error)?;
            for (&segment, hits) in &mut by_segment {
                hits.sort_unstable();
                let mut scorer = weight.scorer(searcher.segment_reader(segment), 1.0).map_err(index_error)?;
                for &(doc, index) in hits.iter() {
                    if scorer.doc() < doc {
                        scorer.seek(doc);
                    }
                    if scorer.doc() == doc {
                        matched[index].push(clause.text.clone());
                    }
                }
            }
        }
        Ok(matched)
    }

    /// The query's words (stop words aside) that no entry within the filter
    /// holds: typos or parts of identifiers, for the fuzzy signal.
    fn unmatched(&self, searcher: &Searcher, filter: &SearchFilter, words: &[String]) -> Result<Vec<String>, Error> {
        let mut analyzer = self.analyzer(analysis::TEXT);
        let mut unmatched = Vec::new();
        for word in words {
            let Some(term) = analysis::terms(&mut analyzer, word).into_iter().next() else { continue };
            let clause = Clause { text: word.clone(), terms: vec![term], word: true, alternative_to: None };
            let mut query = self.filter_clauses(filter);
            query.push((Occur::Must, Box::new(BooleanQuery::new(self.clause_query(&clause)))));
            if searcher.search(&BooleanQuery::new(query), &Count).map_err(index_error)? == 0 {
                unmatched.push(word.clone());
            }
        }
        Ok(unmatched)
    }

    /// The fuzzy signal: entries whose title or summary has a word within
    /// one edit (two for words of 6 letters and more) of each of `words`;
    /// a word one edit away counts 1, two edits 0.5.
    pub fn fuzzy(&self, filter: &SearchFilter, words: &[String], limit: usize) -> Result<Vec<Candidate>, Error> {
        let searcher = self.reader.searcher();
        let mut found: HashMap<DocAddress, (f64, Vec<String>)> = HashMap::new();
        for word in words {
            let word = word.to_lowercase();
            let mut seen = HashSet::new();
            let distances: &[(u8, f64)] = if word.chars().count() >= 6 { &[(1, 1.0), (2, 0.5)] } else { &[(1, 1.0)] };
            for &(distance, value) in distances {
                let fuzzy = FuzzyTermQuery::new(Term::from_field_text(self.fields.words, &word), distance, true);
                let mut query = self.filter_clauses(filter);
                query.push((Occur::Must, Box::new(fuzzy)));
                let hits = searcher
                    .search(&BooleanQuery::new(query), &TopDocs::with_limit(limit.max(1) * 4).order_by_score())
                    .map_err(index_error)?;
                for (_, address) in hits {
                    if seen.insert(address) {
                        let slot = found.entry(address).or_default();
                        slot.0 += value;
                        slot.1.push(word.clone());
                    }
                }
            }
        }
        let mut candidates = found
            .into_iter()
            .map(|(address, (score, matched_terms))| {
                Ok(Candidate { entry_id: self.entry_id(&searcher, address)?, score, matched_terms })
            })
            .collect::<Result<Vec<_>, Error>>()?;
        candidates.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.entry_id.cmp(&b.entry_id)));
        candidates.truncate(limit);
        Ok(candidates)
    }

    /// The symptom signal: entries with a symptom that `message` (as
    /// [`symptoms::tokens`]) holds at least [`symptoms::MIN_SIMILARITY`] of,
    /// most similar first; each with the symptom that matched.
    pub fn symptoms(&self, filter: &SearchFilter, message: &[String], limit: usize) -> Result<Vec<Candidate>, Error> {
        let mut words: Vec<&str> = symptoms::words(message).collect();
        words.sort_unstable();
        words.dedup();
        if words.is_empty() {
            return Ok(Vec::new());
        }
        let searcher = self.reader.searcher();
        let any_word: Vec<(Occur, Box<dyn Query>)> = words
            .iter()
            .map(|word| {
                let term = Term::from_field_text(self.fields.symptom, word);
                (Occur::Should, Box::new(TermQuery::new(term, IndexRecordOption::WithFreqs)) as Box<dyn Query>)
            })
            .collect();
        let mut query = self.filter_clauses(filter);
        query.push((Occur::Must, Box::new(BooleanQuery::new(any_word))));
        // The words say which symptoms may match; edit distance says how
        // well. A few times more candidates than hits wanted is plenty.
        let top = searcher
            .search(&BooleanQuery::new(query), &TopDocs::with_limit(limit.max(1) * 5).order_by_score())
            .map_err(index_error)?;
        let mut candidates = Vec::new();
        for (_, address) in top {
            let document: TantivyDocument = searcher.doc(address).map_err(index_error)?;
            let normalized: Vec<Vec<String>> = document
                .get_all(self.fields.symptom)
                .filter_map(|value| value.as_str())
                .map(|tokens| tokens.split(' ').filter(|token| !token.is_empty()).map(str::to_owned).collect())
                .collect();
            let Some((best, similarity)) = symptoms::best(&normalized, message) else { continue };
            if similarity < symptoms::MIN_SIMILARITY {
                continue;
            }
            let shown = document.get_all(self.fields.symptom_text).nth(best).and_then(|value| value.as_str());
            candidates.push(Candidate {
                entry_id: self.entry_id(&searcher, address)?,
                score: similarity,
                matched_terms: shown.map(str::to_owned).into_iter().collect(),
            });
        }
        candidates.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.entry_id.cmp(&b.entry_id)));
        candidates.truncate(limit);
        Ok(candidates)
    }

    fn entry_id(&self, searcher: &Searcher, address: DocAddress) -> Result<Uuid, Error> {
        let fast = searcher.segment_reader(address.segment_ord).fast_fields();
        let part = |name: &str| -> Result<u64, Error> {
            fast.u64(name)
                .map_err(index_error)?
                .first(address.doc_id)
                .ok_or_else(|| Error::Unavailable(format!("the keyword index has a document without its {name}")))
        };
        Ok(Uuid::from_u64_pair(part("id_high")?, part("id_low")?))
    }

    /// Whether the entry is in the index.
    #[cfg(test)]
    fn contains(&self, entry_id: Uuid) -> bool {
        let searcher = self.reader.searcher();
        let query =
            TermQuery::new(Term::from_field_text(self.fields.id, &entry_id.to_string()), IndexRecordOption::Basic);
        searcher.search(&query, &Count).unwrap_or(0) > 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lore_types::knowledge::EntryKind;

    fn entry(title: &str, summary: &str, body: &str) -> IndexedEntry {
        IndexedEntry {
            entry_id: Uuid::now_v7(),
            project: "shop".into(),
            kind: "issue_pattern".into(),
            status: "active".into(),
            category: "database".into(),
            severity: Some("high".into()),
            tags: vec!["postgres".into()],
            title: title.into(),
            summary: summary.into(),
            body: body.into(),
            symptoms: Vec::new(),
            root_causes: Vec::new(),
        }
    }

    fn filter() -> SearchFilter {
        SearchFilter { project: "shop".into(), ..SearchFilter::default() }
    }

    fn words(text: &str) -> Expansion {
        analysis::expand(text, &[])
    }

    fn phrase(text: &str) -> Expansion {
        Expansion { phrases: vec![text.into()], sources: vec![String::new()], ..Expansion::default() }
    }

    #[test]
    fn words_find_their_entries_with_the_terms_they_matched_and_filters_hold() {
        let index = KeywordIndex::new().unwrap();
        let rls = entry("RLS policy blocks writes", "Postgres refuses the app role's INSERT", "Add WITH CHECK.");
        let grid = entry("Flaky CSS grid", "The layout collapses on small screens", "");
        let mut elsewhere = entry("RLS policy blocks writes", "the same words in another project", "");
        elsewhere.project = "bank".into();
        let mut obsolete = entry("Old RLS workaround", "inserting as superuser", "");
        obsolete.status = "obsolete".into();
        index.apply(&[], &[rls.clone(), grid.clone(), elsewhere.clone(), obsolete.clone()]).unwrap();
        assert_eq!(index.len(), 4);

        let found = index
            .keyword(
                &filter(),
                &Expansion {
                    phrases: vec!["row level security".into()],
                    sources: vec!["rls".into()],
                    ..words("inserting rows blocked")
                },
                10,
            )
            .unwrap();
        let ids: Vec<Uuid> = found.candidates.iter().map(|candidate| candidate.entry_id).collect();
        assert_eq!(ids, [rls.entry_id], "stemmed, in this project, active only");
        assert_eq!(found.candidates[0].matched_terms, ["inserting", "blocked"]);
        assert!(found.confidence > 0.99, "no entry has \"rows\", so it takes nothing from it: {found:?}");
        let half = index.keyword(&filter(), &words("blocked layout"), 10).unwrap();
        assert!(half.confidence > 0.05 && half.confidence < 0.6, "the best hit has one of two words: {half:?}");
        assert!(found.candidates[0].score > 0.0, "{found:?}");
        assert_eq!(found.unmatched, ["rows"], "no entry of the project has that word");

        let with_obsolete = SearchFilter { include_obsolete: true, ..filter() };
        let found = index.keyword(&with_obsolete, &words("workaround"), 10).unwrap();
        assert_eq!(found.candidates[0].entry_id, obsolete.entry_id);
        let patterns = SearchFilter { kinds: vec![EntryKind::Learning], ..filter() };
        assert!(index.keyword(&patterns, &words("grid"), 10).unwrap().candidates.is_empty());
        let tagged = SearchFilter { tags: vec!["postgres".into()], ..filter() };
        assert_eq!(index.keyword(&tagged, &words("grid"), 10).unwrap().candidates.len(), 1);
        let untagged = SearchFilter { tags: vec!["redis".into()], ..filter() };
        assert!(index.keyword(&untagged, &words("grid"), 10).unwrap().candidates.is_empty());

        // A phrase matches as a phrase.
        let found = index.keyword(&filter(), &phrase("small screens"), 10).unwrap();
        assert_eq!(found.candidates[0].entry_id, grid.entry_id);
        assert_eq!(found.candidates[0].matched_terms, ["small screens"]);
        assert!(index.keyword(&filter(), &phrase("screens small"), 10).unwrap().candidates.is_empty());

        // Replaced and removed documents go.
        let mut edited = grid.clone();
        edited.title = "Sticky header".into();
        index.apply(&[grid.entry_id, rls.entry_id], &[edited]).unwrap();
        assert!(index.keyword(&filter(), &words("RLS"), 10).unwrap().candidates.is_empty());
        assert_eq!(index.keyword(&filter(), &words("sticky"), 10).unwrap().candidates[0].entry_id, grid.entry_id);
        assert!(index.contains(grid.entry_id) && !index.contains(rls.entry_id));
    }

    #[test]
    fn the_index_reports_the_memory_its_entries_take() {
        let index = KeywordIndex::new().unwrap();
        let empty = index.bytes();
        let long = "connection refused while the pool was exhausted ".repeat(2_000);
        index.apply(&[], &[entry("Pool exhausted", "too many clients", &long)]).unwrap();
        assert!(index.bytes() > empty + 1_000, "{} bytes, {empty} empty", index.bytes());
    }

    #[test]
    fn a_synonym_is_an_alternative_to_its_word_and_never_outweighs_it() {
        let index = KeywordIndex::new().unwrap();
        let written = entry("Sort a list in python", "sorted() returns a new list", "");
        let synonym = entry("Sort a list in py", "sorted() returns a new list", "");
        let both = entry("python py", "", "");
        let others: Vec<IndexedEntry> = (0..20).map(|n| entry(&format!("python note {n}"), "unrelated", "")).collect();
        index.apply(&[], &[vec![written.clone(), synonym.clone(), both.clone()], others].concat()).unwrap();

        let expansion = analysis::expand("python sort", &[("py".into(), "python".into())]);
        assert_eq!(expansion.phrases, ["py"]);
        let found = index.keyword(&filter(), &expansion, 10).unwrap();
        let rank = |id: Uuid| found.candidates.iter().position(|candidate| candidate.entry_id == id);
        assert_eq!(rank(written.entry_id), Some(0), "{found:?}");
        assert_eq!(rank(synonym.entry_id), Some(1), "the rarer synonym counts as much as the word, no more");
        let score = |id: Uuid| found.candidates[rank(id).unwrap()].score;
        assert!(score(written.entry_id) >= score(synonym.entry_id) - 1e-6);
        assert_eq!(found.candidates[rank(synonym.entry_id).unwrap()].matched_terms, ["sort", "py"]);
        assert!(found.confidence > 0.99, "the best hit matched every word of the query: {found:?}");
        let alone = index.keyword(&filter(), &words("python"), 30).unwrap();
        let both_alone = alone.candidates.iter().find(|candidate| candidate.entry_id == both.entry_id).unwrap().score;
        let both_expanded = found.candidates[rank(both.entry_id).unwrap()].score;
        assert!((both_alone - both_expanded).abs() < 1e-4, "a word and its synonym in one entry count once");
    }

    #[test]
    fn typos_are_found_by_the_words_as_written() {
        let index = KeywordIndex::new().unwrap();
        let auth = entry("Authentication token expired", "Login fails after an hour", "");
        index.apply(&[], &[auth.clone(), entry("Docker build cache misses", "", "")]).unwrap();
        let found = index.fuzzy(&filter(), &["authetication".into()], 10).unwrap();
        assert_eq!(found.len(), 1);
        assert_eq!((found[0].entry_id, found[0].score), (auth.entry_id, 1.0));
        let two_edits = index.fuzzy(&filter(), &["authenticatoin".into(), "dokcer".into()], 10).unwrap();
        assert_eq!(two_edits.len(), 2, "{two_edits:?}");
        assert!(index.fuzzy(&filter(), &["kubernetes".into()], 10).unwrap().is_empty());
    }
}
