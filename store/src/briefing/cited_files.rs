//! The repository files a project's injectable items cite: active entries'
//! `cited_files`, and the files the attempt behind each live pattern's fix
//! changed.

use sqlx::PgPool;

use lore_types::Error;
use lore_types::scope::ProjectScope;

/// Each path once, those of the most recently written items first.
pub async fn list(pool: &PgPool, scope: &ProjectScope, project: &str, limit: i64) -> Result<Vec<String>, Error> {
    Ok(sqlx::query_scalar(
        "SELECT path FROM (
             SELECT path, max(written) AS written FROM (
                 SELECT unnest(cited_files) AS path, updated_at AS written FROM knowledge_entries
                 WHERE project = $1 AND status = 'active' AND cardinality(cited_files) > 0
                 UNION ALL
                 SELECT unnest(a.files_changed), p.updated_at FROM qa_patterns p
                 JOIN qa_fix_attempts a ON a.attempt_id = p.fix_attempt_id
                 WHERE p.project = $1 AND p.status IN ('active', 'promoted') AND NOT p.held
             ) AS cited
             WHERE $1 = ANY(COALESCE($2::text[], ARRAY[$1]))
             GROUP BY path
         ) AS paths
         ORDER BY written DESC, path
         LIMIT $3",
    )
    .bind(project)
    .bind(scope.sql_filter())
    .bind(limit)
    .fetch_all(pool)
    .await?)
}
