//! What words and categories mean to search: synonyms and category
//! relations. Both tables notify the knowledge change feed (migrations
//! 0016 and 0017), so every replica drops the project's cached answers.

use sqlx::{PgPool, Row as _};

use lore_types::Error;
use lore_types::knowledge::vocabulary::{CategoryRelation, Synonym};
use lore_types::scope::ProjectScope;

fn synonym(row: &sqlx::postgres::PgRow) -> Result<Synonym, sqlx::Error> {
    Ok(Synonym { project: row.try_get("project")?, term: row.try_get("term")?, expansion: row.try_get("expansion")? })
}

/// The project's own synonyms, then the global ones, each by term.
pub async fn synonyms(pool: &PgPool, scope: &ProjectScope, project: &str) -> Result<Vec<Synonym>, Error> {
    let rows = sqlx::query(
        "SELECT project, term, expansion FROM knowledge_synonyms
         WHERE (project = $1 AND ($2::text[] IS NULL OR project = ANY($2))) OR project IS NULL
         ORDER BY project IS NULL, term, expansion",
    )
    .bind(project)
    .bind(scope.sql_filter())
    .fetch_all(pool)
    .await?;
    rows.iter().map(synonym).collect::<Result<_, _>>().map_err(Error::from)
}

/// Adds a synonym; false when it was there already.
pub async fn put_synonym(pool: &PgPool, synonym: &Synonym) -> Result<bool, Error> {
    let mut transaction = pool.begin().await?;
    if let Some(project) = &synonym.project {
        ensure_project(&mut transaction, project).await?;
    }
    let inserted = sqlx::query(
        "INSERT INTO knowledge_synonyms (project, term, expansion) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
    )
    .bind(&synonym.project)
    .bind(&synonym.term)
    .bind(&synonym.expansion)
    .execute(&mut *transaction)
    .await?
    .rows_affected();
    transaction.commit().await?;
    Ok(inserted == 1)
}

/// Removes a synonym; false when there was none.
pub async fn delete_synonym(pool: &PgPool, synonym: &Synonym) -> Result<bool, Error> {
    let deleted = sqlx::query(
        "DELETE FROM knowledge_synonyms
         WHERE project IS NOT DISTINCT FROM $1 AND term = $2 AND expansion = $3",
    )
    .bind(&synonym.project)
    .bind(&synonym.term)
    .bind(&synonym.expansion)
    .execute(pool)
    .await?
    .rows_affected();
    Ok(deleted > 0)
}

/// The project's category relations, each once.
pub async fn category_relations(
    pool: &PgPool,
    scope: &ProjectScope,
    project: &str,
) -> Result<Vec<CategoryRelation>, Error> {
    let rows = sqlx::query(
        "SELECT project, category, related FROM knowledge_category_relations
         WHERE project = $1 AND ($2::text[] IS NULL OR project = ANY($2))
         ORDER BY category, related",
    )
    .bind(project)
    .bind(scope.sql_filter())
    .fetch_all(pool)
    .await?;
    rows.iter()
        .map(|row| {
            Ok(CategoryRelation {
                project: row.try_get("project")?,
                category: row.try_get("category")?,
                related: row.try_get("related")?,
            })
        })
        .collect::<Result<_, sqlx::Error>>()
        .map_err(Error::from)
}

/// Relates two categories (given in stored order); false when they were.
pub async fn put_category_relation(pool: &PgPool, relation: &CategoryRelation) -> Result<bool, Error> {
    let mut transaction = pool.begin().await?;
    ensure_project(&mut transaction, &relation.project).await?;
    let inserted = sqlx::query(
        "INSERT INTO knowledge_category_relations (project, category, related) VALUES ($1, $2, $3)
         ON CONFLICT DO NOTHING",
    )
    .bind(&relation.project)
    .bind(&relation.category)
    .bind(&relation.related)
    .execute(&mut *transaction)
    .await?
    .rows_affected();
    transaction.commit().await?;
    Ok(inserted == 1)
}

/// Unrelates two categories (given in stored order); false when they were
/// not related.
pub async fn delete_category_relation(pool: &PgPool, relation: &CategoryRelation) -> Result<bool, Error> {
    let deleted =
        sqlx::query("DELETE FROM knowledge_category_relations WHERE project = $1 AND category = $2 AND related = $3")
            .bind(&relation.project)
            .bind(&relation.category)
            .bind(&relation.related)
            .execute(pool)
            .await?
            .rows_affected();
    Ok(deleted > 0)
}

async fn ensure_project(connection: &mut sqlx::PgConnection, project: &str) -> Result<(), Error> {
    sqlx::query("INSERT INTO projects (name) VALUES ($1) ON CONFLICT DO NOTHING")
        .bind(project)
        .execute(connection)
        .await?;
    Ok(())
}
