//! Embedding models, vectors and the queue of entries waiting for one.

use sqlx::{PgPool, Row as _};
use uuid::Uuid;

use lore_types::Error;

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

/// What is embedded of an entry `e`: its title, summary, symptoms, root
/// causes, tags, category and body, a line apart.
pub const EMBEDDED_TEXT: &str = "concat_ws(E'\\n', e.title, e.summary, array_to_string(e.symptoms, E'\\n'), \
     array_to_string(e.root_causes, E'\\n'), array_to_string(e.tags, ', '), e.category, e.body)";

/// An entry to embed: its text and the content hash the vector is for.
#[derive(Debug, Clone)]
pub struct Job {
    pub entry_id: Uuid,
    pub project: String,
    pub content_hash: Vec<u8>,
    pub text: String,
}

/// Claims up to `limit` due jobs of `model` for `lease`: they are not due
/// again until then, so other replicas leave them alone, and no transaction
/// stays open while they are embedded.
pub async fn claim(pool: &PgPool, model: &str, limit: i64, lease: std::time::Duration) -> Result<Vec<Job>, Error> {
    let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
        "WITH due AS (
             SELECT entry_id FROM knowledge_embedding_jobs
             WHERE model = $1 AND not_before <= now()
             ORDER BY not_before
             LIMIT $2
             FOR UPDATE SKIP LOCKED)
         UPDATE knowledge_embedding_jobs j
         SET not_before = now() + make_interval(secs => $3)
         FROM due, knowledge_entries e
         WHERE j.model = $1 AND j.entry_id = due.entry_id AND e.entry_id = j.entry_id
         RETURNING j.entry_id, e.project, e.content_hash, {EMBEDDED_TEXT} AS text"
    )))
    .bind(model)
    .bind(limit)
    .bind(lease.as_secs_f64())
    .fetch_all(pool)
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

/// Stores the vectors of claimed jobs and removes the jobs whose entry still
/// has the text that was embedded; an entry edited since keeps its job. An
/// entry removed since gets no vector.
pub async fn store(pool: &PgPool, model: &str, jobs: &[Job], vectors: &[Vec<f32>]) -> Result<(), Error> {
    let ids: Vec<Uuid> = jobs.iter().map(|job| job.entry_id).collect();
    let projects: Vec<&str> = jobs.iter().map(|job| job.project.as_str()).collect();
    let hashes: Vec<&[u8]> = jobs.iter().map(|job| job.content_hash.as_slice()).collect();
    let literals: Vec<String> = vectors.iter().map(|vector| vector_literal(vector)).collect();
    let mut transaction = pool.begin().await?;
    sqlx::query(
        "INSERT INTO knowledge_embeddings (entry_id, model, chunk, project, content_hash, embedding)
         SELECT id, $1, 0, project, hash, literal::vector
         FROM unnest($2::uuid[], $3::text[], $4::bytea[], $5::text[]) AS given (id, project, hash, literal)
         WHERE EXISTS (SELECT 1 FROM knowledge_entries e WHERE e.entry_id = given.id)
         ON CONFLICT (entry_id, model, chunk) DO UPDATE
         SET content_hash = EXCLUDED.content_hash, embedding = EXCLUDED.embedding, created_at = now()",
    )
    .bind(model)
    .bind(&ids)
    .bind(&projects)
    .bind(&hashes)
    .bind(&literals)
    .execute(&mut *transaction)
    .await?;
    sqlx::query(
        "DELETE FROM knowledge_embedding_jobs j
         USING unnest($2::uuid[], $3::bytea[]) AS done (id, hash), knowledge_entries e
         WHERE j.model = $1 AND j.entry_id = done.id AND e.entry_id = done.id
           AND coalesce(e.content_hash, ''::bytea) = done.hash",
    )
    .bind(model)
    .bind(&ids)
    .bind(&hashes)
    .execute(&mut *transaction)
    .await?;
    transaction.commit().await?;
    Ok(())
}

/// Puts claimed jobs back with a growing delay (30 s, 1 min, 2 min, ... up
/// to an hour) and the reason.
pub async fn fail(pool: &PgPool, model: &str, jobs: &[Job], error: &str) -> Result<(), Error> {
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
    .execute(pool)
    .await?;
    Ok(())
}

/// A project's entries and where their vectors of `model` stand.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProjectStatus {
    pub entries: i64,
    pub pending: i64,
    pub failing: i64,
    pub last_error: Option<String>,
}

/// [`ProjectStatus`] of `project`, in scope.
pub async fn project_status(
    pool: &PgPool,
    scope: &lore_types::scope::ProjectScope,
    project: &str,
    model: &str,
) -> Result<ProjectStatus, Error> {
    let row = sqlx::query(
        "SELECT (SELECT count(*) FROM knowledge_entries WHERE project = $1) AS entries,
                count(j.entry_id) AS pending,
                count(j.entry_id) FILTER (WHERE j.attempts > 0) AS failing,
                (array_agg(j.last_error ORDER BY j.not_before DESC) FILTER (WHERE j.attempts > 0))[1] AS last_error
         FROM knowledge_embedding_jobs j
         WHERE j.project = $1 AND j.model = $2 AND ($3::text[] IS NULL OR $1 = ANY($3))",
    )
    .bind(project)
    .bind(model)
    .bind(scope.sql_filter())
    .fetch_one(pool)
    .await?;
    Ok(ProjectStatus {
        entries: row.try_get("entries")?,
        pending: row.try_get("pending")?,
        failing: row.try_get("failing")?,
        last_error: row.try_get("last_error")?,
    })
}
