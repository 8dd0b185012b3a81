//! Embedding models, vectors and the queue of entries waiting for one.

use sqlx::{PgPool, Row as _};
use uuid::Uuid;

use crate::Error;

/// pgvector's text form: `[0.1,0.2,...]`, cast to `vector` in SQL.
pub fn vector_literal(vector: &[f32]) -> String {
    let mut text = String::with_capacity(vector.len() * 10 + 2);
    text.push('[');
    for (index, value) in vector.iter().enumerate() {
        if index > 0 {
            text.push(',');
        }
        text.push_str(&value.to_string());
    }
    text.push(']');
    text
}

/// Registers the model (and its HNSW index), and queues every entry that
/// has no current vector of it: a model change re-embeds in the background.
pub async fn register_model(pool: &PgPool, model: &str, provider: &str, dimensions: usize) -> Result<u64, Error> {
    let known: Option<i32> = sqlx::query_scalar("SELECT dimensions FROM embedding_models WHERE model = $1")
        .bind(model)
        .fetch_optional(pool)
        .await?;
    match known {
        Some(stored) if stored as usize != dimensions => {
            return Err(Error::FailedPrecondition(format!(
                "embedding model {model} is registered with {stored} dimensions, the provider gives {dimensions}"
            )));
        }
        Some(_) => {}
        None => {
            sqlx::query(
                "INSERT INTO embedding_models (model, provider, dimensions) VALUES ($1, $2, $3)
                 ON CONFLICT (model) DO NOTHING",
            )
            .bind(model)
            .bind(provider)
            .bind(dimensions as i32)
            .execute(pool)
            .await?;
        }
    }
    sqlx::query("SELECT lore_ensure_embedding_index($1)").bind(model).execute(pool).await?;
    let queued = sqlx::query(
        "INSERT INTO knowledge_embedding_jobs (entry_id, model, project)
         SELECT e.entry_id, $1, e.project FROM knowledge_entries e
         WHERE NOT EXISTS (SELECT 1 FROM knowledge_embeddings k
                           WHERE k.entry_id = e.entry_id AND k.model = $1 AND k.chunk = 0
                             AND k.content_hash = e.content_hash)
         ON CONFLICT (entry_id, model) DO NOTHING",
    )
    .bind(model)
    .execute(pool)
    .await?
    .rows_affected();
    Ok(queued)
}

/// Queues an entry for (re-)embedding unless its vector already matches
/// its content.
pub async fn queue(connection: &mut sqlx::PgConnection, entry_id: Uuid, model: &str) -> Result<(), Error> {
    sqlx::query(
        "INSERT INTO knowledge_embedding_jobs (entry_id, model, project)
         SELECT e.entry_id, $2, e.project FROM knowledge_entries e
         WHERE e.entry_id = $1
           AND NOT EXISTS (SELECT 1 FROM knowledge_embeddings k
                           WHERE k.entry_id = e.entry_id AND k.model = $2 AND k.chunk = 0
                             AND k.content_hash = e.content_hash)
         ON CONFLICT (entry_id, model) DO UPDATE SET not_before = now(), attempts = 0, last_error = ''",
    )
    .bind(entry_id)
    .bind(model)
    .execute(connection)
    .await?;
    Ok(())
}

/// An entry to embed: its text and the content hash the vector is for.
#[derive(Debug, Clone)]
pub struct Job {
    pub entry_id: Uuid,
    pub project: String,
    pub content_hash: Vec<u8>,
    pub text: String,
}

/// Due jobs of `model` (only the one of `entry_id` when given), locked for
/// this transaction (other replicas skip them).
pub async fn claim(
    connection: &mut sqlx::PgConnection,
    model: &str,
    entry_id: Option<Uuid>,
    limit: i64,
) -> Result<Vec<Job>, Error> {
    let rows = sqlx::query(
        "SELECT j.entry_id, e.project, e.content_hash,
                concat_ws(E'\\n', e.title, e.summary, array_to_string(e.tags, ', '), e.category, e.body) AS text
         FROM knowledge_embedding_jobs j JOIN knowledge_entries e USING (entry_id)
         WHERE j.model = $1 AND j.not_before <= now() AND ($3::uuid IS NULL OR j.entry_id = $3)
         ORDER BY j.not_before
         LIMIT $2
         FOR UPDATE OF j SKIP LOCKED",
    )
    .bind(model)
    .bind(limit)
    .bind(entry_id)
    .fetch_all(&mut *connection)
    .await?;
    rows.iter()
        .map(|row| {
            Ok(Job {
                entry_id: row.try_get("entry_id")?,
                project: row.try_get("project")?,
                content_hash: row.try_get::<Option<Vec<u8>>, _>("content_hash")?.unwrap_or_default(),
                text: row.try_get("text")?,
            })
        })
        .collect::<Result<_, sqlx::Error>>()
        .map_err(Error::from)
}

/// Stores the vectors of claimed jobs and removes the jobs.
pub async fn store(
    connection: &mut sqlx::PgConnection,
    model: &str,
    jobs: &[Job],
    vectors: &[Vec<f32>],
) -> Result<(), Error> {
    let ids: Vec<Uuid> = jobs.iter().map(|job| job.entry_id).collect();
    let projects: Vec<&str> = jobs.iter().map(|job| job.project.as_str()).collect();
    let hashes: Vec<&[u8]> = jobs.iter().map(|job| job.content_hash.as_slice()).collect();
    let literals: Vec<String> = vectors.iter().map(|vector| vector_literal(vector)).collect();
    sqlx::query(
        "INSERT INTO knowledge_embeddings (entry_id, model, chunk, project, content_hash, embedding)
         SELECT id, $1, 0, project, hash, literal::vector
         FROM unnest($2::uuid[], $3::text[], $4::bytea[], $5::text[]) AS given (id, project, hash, literal)
         ON CONFLICT (entry_id, model, chunk) DO UPDATE
         SET content_hash = EXCLUDED.content_hash, embedding = EXCLUDED.embedding, created_at = now()",
    )
    .bind(model)
    .bind(&ids)
    .bind(&projects)
    .bind(&hashes)
    .bind(&literals)
    .execute(&mut *connection)
    .await?;
    sqlx::query("DELETE FROM knowledge_embedding_jobs WHERE model = $1 AND entry_id = ANY($2)")
        .bind(model)
        .bind(&ids)
        .execute(&mut *connection)
        .await?;
    Ok(())
}

/// Puts claimed jobs back with a growing delay (30 s, 1 min, 2 min, ... up
/// to an hour) and the reason.
pub async fn fail(connection: &mut sqlx::PgConnection, model: &str, jobs: &[Job], error: &str) -> Result<(), Error> {
    let ids: Vec<Uuid> = jobs.iter().map(|job| job.entry_id).collect();
    sqlx::query(
        "UPDATE knowledge_embedding_jobs
         SET attempts = attempts + 1, last_error = $3,
             not_before = now() + least(interval '1 hour', interval '30 seconds' * power(2, attempts))
         WHERE model = $1 AND entry_id = ANY($2)",
    )
    .bind(model)
    .bind(&ids)
    .bind(error)
    .execute(connection)
    .await?;
    Ok(())
}

/// Jobs waiting for `model` (due or not).
pub async fn pending(pool: &PgPool, model: &str) -> Result<i64, Error> {
    Ok(sqlx::query_scalar("SELECT count(*) FROM knowledge_embedding_jobs WHERE model = $1")
        .bind(model)
        .fetch_one(pool)
        .await?)
}
