//! The CoSQA corpus (tests/data/retrieval/cosqa) as knowledge entries for
//! the benchmarks: real texts
//! (Python functions; the first line is the title, the code the body) with
//! a real question of the set as summary, loaded into a project with COPY.
//! Embedding 100,000 texts with the local model would take over an hour
//! here, so the first [`BASE_VECTORS`] bodies are embedded for real and
//! entry i gets the vector of body i mod [`BASE_VECTORS`] plus a little
//! noise: real clusters for HNSW, at a cost of minutes.

use std::path::Path;
use std::time::Instant;

use std::sync::Arc;

use sqlx::PgPool;
use uuid::Uuid;

use crate::knowledge::embed::Embedder;

/// Bodies embedded for real; the rest reuse their vectors with noise.
pub const BASE_VECTORS: usize = 1000;
/// Standard deviation of the noise added to each component of a reused
/// vector (before normalizing): neighbours stay neighbours, ties are broken.
const NOISE: f32 = 0.02;

pub struct Corpus {
    /// Function source texts.
    pub documents: Vec<String>,
    /// Real questions of the set.
    pub questions: Vec<String>,
}

pub fn read_jsonl_texts(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    text.lines()
        .map(|line| {
            let value: serde_json::Value = serde_json::from_str(line).expect("JSON line");
            value["text"].as_str().expect("text").to_owned()
        })
        .collect()
}

impl Corpus {
    pub fn load() -> Self {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data/retrieval/cosqa");
        Self {
            documents: read_jsonl_texts(&root.join("corpus.jsonl")),
            questions: read_jsonl_texts(&root.join("queries.jsonl")),
        }
    }

    pub fn title(&self, index: usize) -> String {
        let first = self.documents[index % self.documents.len()].lines().next().unwrap_or("function").trim();
        first.chars().take(200).collect()
    }
}

/// The vectors of the first [`BASE_VECTORS`] bodies, embedded for real by
/// `embedder`: what [`fill`] gives every entry, with noise.
pub async fn base_vectors(corpus: &Corpus, embedder: &Arc<dyn Embedder>) -> Vec<Vec<f32>> {
    let started = Instant::now();
    let bases = embedder.embed(&corpus.documents[..BASE_VECTORS]).await.expect("the base texts embed");
    eprintln!("embedded {BASE_VECTORS} base texts in {:.1} s", started.elapsed().as_secs_f64());
    bases
}

/// Escapes a value for COPY's text format.
fn copy_text(value: &str) -> String {
    value.replace('\\', "\\\\").replace('\t', "\\t").replace('\n', "\\n").replace('\r', "\\r")
}

pub fn vector_text(vector: &[f32]) -> String {
    let parts: Vec<String> = vector.iter().map(|value| format!("{value:.6}")).collect();
    format!("[{}]", parts.join(","))
}

fn noisy(base: &[f32], rng: &mut fastrand::Rng) -> Vec<f32> {
    let mut vector: Vec<f32> = base.iter().map(|value| value + NOISE * (rng.f32() * 2.0 - 1.0)).collect();
    let norm = vector.iter().map(|value| value * value).sum::<f32>().sqrt();
    vector.iter_mut().for_each(|value| *value /= norm);
    vector
}

async fn copy(pool: &PgPool, statement: &str, data: &[u8]) {
    let mut connection = pool.acquire().await.unwrap();
    let mut copy = connection.copy_in_raw(statement).await.unwrap();
    copy.send(data).await.unwrap();
    copy.finish().await.unwrap();
}

/// Grows the project (created when missing) to `target` entries (and their
/// vectors) with COPY. The
/// model's HNSW index is dropped for the load and built again afterwards,
/// as one would for any bulk load.
pub async fn fill(
    pool: &PgPool,
    project: &str,
    corpus: &Corpus,
    model: &str,
    bases: &[Vec<f32>],
    from: usize,
    target: usize,
) {
    let started = Instant::now();
    sqlx::query("INSERT INTO projects (name) VALUES ($1) ON CONFLICT DO NOTHING")
        .bind(project)
        .execute(pool)
        .await
        .unwrap();
    let index: String =
        sqlx::query_scalar("SELECT lore_ensure_embedding_index($1)").bind(model).fetch_one(pool).await.unwrap();
    sqlx::query(sqlx::AssertSqlSafe(format!("DROP INDEX {index}"))).execute(pool).await.unwrap();
    let mut rng = fastrand::Rng::with_seed(from as u64);
    for chunk_start in (from..target).step_by(10_000) {
        let chunk = chunk_start..(chunk_start + 10_000).min(target);
        let mut entries = Vec::new();
        let mut vectors = Vec::new();
        for index in chunk {
            let entry_id = Uuid::now_v7();
            let body = &corpus.documents[index % BASE_VECTORS];
            let summary = &corpus.questions[index % corpus.questions.len()];
            let category = ["python", "io", "strings", "data", "web"][index % 5];
            entries.extend_from_slice(
                format!(
                    "{entry_id}\t{project}\tlearning\t{}\t{category}\t{}\t{}\t{{bench,t{}}}\n",
                    copy_text(&corpus.title(index % BASE_VECTORS)),
                    copy_text(summary),
                    copy_text(body),
                    index % 50,
                )
                .as_bytes(),
            );
            let vector = noisy(&bases[index % BASE_VECTORS], &mut rng);
            vectors.extend_from_slice(
                format!("{entry_id}\t{model}\t0\t{project}\t\\\\x00\t{}\n", vector_text(&vector)).as_bytes(),
            );
        }
        copy(
            pool,
            "COPY knowledge_entries (entry_id, project, kind, title, category, summary, body, tags) FROM STDIN",
            &entries,
        )
        .await;
        copy(
            pool,
            "COPY knowledge_embeddings (entry_id, model, chunk, project, content_hash, embedding) FROM STDIN",
            &vectors,
        )
        .await;
    }
    let loaded = started.elapsed();
    let started = Instant::now();
    let mut connection = pool.acquire().await.unwrap();
    sqlx::query("SET maintenance_work_mem = '1GB'").execute(&mut *connection).await.unwrap();
    sqlx::query("SELECT lore_ensure_embedding_index($1)").bind(model).execute(&mut *connection).await.unwrap();
    sqlx::query("ANALYZE knowledge_entries").execute(&mut *connection).await.unwrap();
    sqlx::query("ANALYZE knowledge_embeddings").execute(&mut *connection).await.unwrap();
    eprintln!(
        "filled to {target} entries: COPY {:.1} s, HNSW build + ANALYZE {:.1} s",
        loaded.as_secs_f64(),
        started.elapsed().as_secs_f64()
    );
}
