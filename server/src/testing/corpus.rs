//! The retrieval corpus (the Python standard library's functions, which the
//! set-up builds in the cache: `scripts/data/retrieval_corpus.py`) as
//! knowledge entries for the benchmarks: real texts, every one embedded for
//! real.
//!
//! Entry i is function i mod N of the set (its first line the title, its
//! code the body) with one of the set's real queries (the first lines of
//! docstrings) as summary, chosen so that no (function, question) pair
//! repeats below N × 300 entries (2.5 million): 100,000 entries are
//! 100,000 distinct texts with 100,000 distinct vectors. Embedding them takes the local model about a quarter
//! of an hour on 2 cores, once: vectors are cached under
//! `<cache>/bench/` by the hash of the text they are for, and a later run
//! embeds only texts it has not seen.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use sqlx::{PgPool, Row as _};
use uuid::Uuid;

use lore_domain::knowledge::embed::Embedder;
use lore_store::knowledge::embeddings::EMBEDDED_TEXT;

/// Texts given to the model per call: large enough for its length-sorted
/// batches, small enough to report progress often.
const EMBED_CHUNK: usize = 1024;
/// Entries per COPY statement.
const COPY_CHUNK: usize = 10_000;

pub struct Corpus {
    /// Function source texts.
    pub documents: Vec<String>,
    /// Real questions of the set.
    pub questions: Vec<String>,
    /// How far each round over the functions shifts the questions: the
    /// least shift that makes `documents + shift` prime to the number of
    /// questions, so a function meets every question before any again.
    shift: usize,
}

/// Where the set-up writes the corpus: `<cache>/data/retrieval/python-stdlib`.
pub fn folder() -> PathBuf {
    lore_pgtest::default_cache_dir().join("data/retrieval/python-stdlib")
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 { a } else { gcd(b, a % b) }
}

pub fn read_jsonl_texts(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|error| {
        panic!("{}: {error}; `make tools` builds it (python3 scripts/data/retrieval_corpus.py)", path.display())
    });
    text.lines()
        .map(|line| {
            let value: serde_json::Value = serde_json::from_str(line).expect("JSON line");
            value["text"].as_str().expect("text").to_owned()
        })
        .collect()
}

impl Corpus {
    /// The corpus in the cache, built by `make tools`.
    pub fn load() -> Self {
        let root = folder();
        let documents = read_jsonl_texts(&root.join("corpus.jsonl"));
        let questions = read_jsonl_texts(&root.join("queries.jsonl"));
        let shift = (1..).find(|shift| gcd(documents.len() + shift, questions.len()) == 1).expect("some shift");
        Self { documents, questions, shift }
    }

    pub fn title(&self, index: usize) -> String {
        let first = self.documents[index % self.documents.len()].lines().next().unwrap_or("function").trim();
        first.chars().take(200).collect()
    }

    /// The question entry `index` carries: round r over the N functions
    /// shifts by s r, so function f meets question (f + (N + s) r) mod Q,
    /// the same one again only after Q rounds, N + s being prime to Q.
    pub fn question(&self, index: usize) -> &str {
        let round = index / self.documents.len();
        &self.questions[(round * self.shift + index) % self.questions.len()]
    }
}

/// Escapes a value for COPY's text format.
fn copy_text(value: &str) -> String {
    value.replace('\\', "\\\\").replace('\t', "\\t").replace('\n', "\\n").replace('\r', "\\r")
}

pub fn vector_text(vector: &[f32]) -> String {
    let parts: Vec<String> = vector.iter().map(|value| format!("{value:.6}")).collect();
    format!("[{}]", parts.join(","))
}

async fn copy(pool: &PgPool, statement: &str, data: &[u8]) {
    let mut connection = pool.acquire().await.unwrap();
    let mut copy = connection.copy_in_raw(statement).await.unwrap();
    copy.send(data).await.unwrap();
    copy.finish().await.unwrap();
}

/// Vectors of one model by the BLAKE3 hash of their text, kept in an
/// append-only file of (hash, little-endian f32s) records.
pub struct VectorCache {
    dimensions: usize,
    vectors: HashMap<[u8; 32], Vec<f32>>,
    file: BufWriter<File>,
    path: PathBuf,
}

impl VectorCache {
    pub fn open(cache_dir: &Path, model: &str, dimensions: usize) -> Self {
        let directory = cache_dir.join("bench");
        std::fs::create_dir_all(&directory).unwrap();
        let safe: String = model.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect();
        let path = directory.join(format!("vectors-{safe}-{dimensions}.bin"));
        let record = 32 + 4 * dimensions;
        let mut vectors = HashMap::new();
        if let Ok(file) = File::open(&path) {
            let mut reader = BufReader::new(file);
            let mut buffer = vec![0u8; record];
            // A torn last record (a run killed mid-write) is dropped.
            while reader.read_exact(&mut buffer).is_ok() {
                let hash: [u8; 32] = buffer[..32].try_into().expect("32 bytes");
                let vector = buffer[32..]
                    .chunks_exact(4)
                    .map(|bytes| f32::from_le_bytes(bytes.try_into().expect("4 bytes")))
                    .collect();
                vectors.insert(hash, vector);
            }
        }
        let valid = (vectors.len() * record) as u64;
        let file = OpenOptions::new().create(true).append(true).open(&path).unwrap();
        file.set_len(valid).unwrap();
        Self { dimensions, vectors, file: BufWriter::new(file), path }
    }

    fn key(text: &str) -> [u8; 32] {
        *blake3::hash(text.as_bytes()).as_bytes()
    }

    pub fn get(&self, text: &str) -> Option<&[f32]> {
        self.vectors.get(&Self::key(text)).map(Vec::as_slice)
    }

    fn put(&mut self, text: &str, vector: Vec<f32>) {
        assert_eq!(vector.len(), self.dimensions, "the model's dimensions");
        let key = Self::key(text);
        self.file.write_all(&key).unwrap();
        for value in &vector {
            self.file.write_all(&value.to_le_bytes()).unwrap();
        }
        self.vectors.insert(key, vector);
    }

    /// Embeds the texts not cached yet, showing progress, and saves them.
    pub async fn embed_missing(&mut self, embedder: &Arc<dyn Embedder>, texts: &[String]) {
        let mut missing: Vec<String> = texts.iter().filter(|text| self.get(text).is_none()).cloned().collect();
        missing.sort_unstable();
        missing.dedup();
        if missing.is_empty() {
            return;
        }
        let started = Instant::now();
        for (round, chunk) in missing.chunks(EMBED_CHUNK).enumerate() {
            let vectors = embedder.embed(chunk).await.expect("the bench texts embed");
            for (text, vector) in chunk.iter().zip(vectors) {
                self.put(text, vector);
            }
            self.file.flush().unwrap();
            let done = (round * EMBED_CHUNK + chunk.len()) as f64;
            let elapsed = started.elapsed().as_secs_f64();
            eprint!(
                "\rembedding bench texts: {done:.0} / {} ({:.0} texts/s, {:.0} s left; cached in {})   ",
                missing.len(),
                done / elapsed,
                (missing.len() as f64 - done) * elapsed / done,
                self.path.display()
            );
        }
        eprintln!();
    }
}

/// Grows the project (created when missing) to `target` entries, each with
/// its real vector, with COPY. The model's HNSW index is dropped for the
/// load and built again afterwards, as one would for any bulk load.
pub async fn fill(
    pool: &PgPool,
    project: &str,
    corpus: &Corpus,
    embedder: &Arc<dyn Embedder>,
    cache_dir: &Path,
    from: usize,
    target: usize,
) {
    let model = embedder.model();
    let started = Instant::now();
    sqlx::query("INSERT INTO projects (name) VALUES ($1) ON CONFLICT DO NOTHING")
        .bind(project)
        .execute(pool)
        .await
        .unwrap();
    copy_entries(pool, project, corpus, from, target).await;
    let loaded = started.elapsed();

    let texts = texts_without_vector(pool, project, model).await;
    let mut cache = VectorCache::open(cache_dir, model, embedder.dimensions());
    let all: Vec<String> = texts.iter().map(|(_, text)| text.clone()).collect();
    cache.embed_missing(embedder, &all).await;

    let index: String =
        sqlx::query_scalar("SELECT lore_ensure_embedding_index($1)").bind(model).fetch_one(pool).await.unwrap();
    sqlx::query(sqlx::AssertSqlSafe(format!("DROP INDEX {index}"))).execute(pool).await.unwrap();
    let started = Instant::now();
    copy_vectors(pool, project, model, &cache, &texts).await;
    let vectors_loaded = started.elapsed();
    let started = Instant::now();
    let mut connection = pool.acquire().await.unwrap();
    sqlx::query("SET maintenance_work_mem = '1GB'").execute(&mut *connection).await.unwrap();
    sqlx::query("SELECT lore_ensure_embedding_index($1)").bind(model).execute(&mut *connection).await.unwrap();
    sqlx::query("ANALYZE knowledge_entries").execute(&mut *connection).await.unwrap();
    sqlx::query("ANALYZE knowledge_embeddings").execute(&mut *connection).await.unwrap();
    eprintln!(
        "filled to {target} entries: COPY {:.1} s + {:.1} s, HNSW build + ANALYZE {:.1} s",
        loaded.as_secs_f64(),
        vectors_loaded.as_secs_f64(),
        started.elapsed().as_secs_f64()
    );
}

/// Entries `from..target` of the corpus (cycling through its functions),
/// with COPY.
async fn copy_entries(pool: &PgPool, project: &str, corpus: &Corpus, from: usize, target: usize) {
    for chunk_start in (from..target).step_by(COPY_CHUNK) {
        let mut entries = Vec::new();
        for index in chunk_start..(chunk_start + COPY_CHUNK).min(target) {
            let function = index % corpus.documents.len();
            let category = ["python", "io", "strings", "data", "web"][index % 5];
            entries.extend_from_slice(
                format!(
                    "{}\t{project}\tlearning\t{}\t{category}\t{}\t{}\t{{bench,t{}}}\t\\\\x00\n",
                    Uuid::now_v7(),
                    copy_text(&corpus.title(function)),
                    copy_text(corpus.question(index)),
                    copy_text(&corpus.documents[function]),
                    index % 50,
                )
                .as_bytes(),
            );
        }
        copy(
            pool,
            "COPY knowledge_entries (entry_id, project, kind, title, category, summary, body, tags, content_hash) \
             FROM STDIN",
            &entries,
        )
        .await;
    }
}

/// The texts as the server embeds them, of the entries without a vector of
/// `model`, read back so the vectors are exactly what its embedding queue
/// would have stored. Entry and vector carry the same content hash, so no
/// server queues the entry again.
async fn texts_without_vector(pool: &PgPool, project: &str, model: &str) -> Vec<(Uuid, String)> {
    let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT e.entry_id, {EMBEDDED_TEXT} AS text FROM knowledge_entries e
         WHERE e.project = $1 AND NOT EXISTS (SELECT 1 FROM knowledge_embeddings k
                                              WHERE k.entry_id = e.entry_id AND k.model = $2)"
    )))
    .bind(project)
    .bind(model)
    .fetch_all(pool)
    .await
    .unwrap();
    rows.iter().map(|row| (row.get("entry_id"), row.get("text"))).collect()
}

/// Each text's vector from the cache, with COPY.
async fn copy_vectors(pool: &PgPool, project: &str, model: &str, cache: &VectorCache, texts: &[(Uuid, String)]) {
    for chunk in texts.chunks(COPY_CHUNK) {
        let mut vectors = Vec::new();
        for (entry_id, text) in chunk {
            let vector = cache.get(text).expect("embedded above");
            vectors.extend_from_slice(
                format!("{entry_id}\t{model}\t0\t{project}\t\\\\x00\t{}\n", vector_text(vector)).as_bytes(),
            );
        }
        copy(
            pool,
            "COPY knowledge_embeddings (entry_id, model, chunk, project, content_hash, embedding) FROM STDIN",
            &vectors,
        )
        .await;
    }
}
