//! The category rule table: which check or message makes a failure which
//! category.

use sqlx::postgres::PgRow;
use sqlx::{PgConnection, PgPool, Row as _};

use super::ensure_project;
use lore_types::Error;
use lore_types::qa::CategoryRule;
use lore_types::scope::ProjectScope;

fn rule_from_row(row: &PgRow) -> Result<CategoryRule, sqlx::Error> {
    Ok(CategoryRule {
        rule_id: row.try_get("rule_id")?,
        project: row.try_get("project")?,
        priority: row.try_get("priority")?,
        category: row.try_get("category")?,
        check_name_regex: row.try_get("check_name_regex")?,
        message_regex: row.try_get("message_regex")?,
        enabled: row.try_get("enabled")?,
    })
}

const RULE_COLUMNS: &str = "rule_id, project, priority, category, check_name_regex, message_regex, enabled";

/// The global rules and the project's, unordered (see `category::in_force`).
pub async fn category_rules(connection: &mut PgConnection, project: &str) -> Result<Vec<CategoryRule>, Error> {
    let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {RULE_COLUMNS} FROM qa_category_rules WHERE project IS NULL OR project = $1"
    )))
    .bind(project)
    .fetch_all(connection)
    .await?;
    Ok(rows.iter().map(rule_from_row).collect::<Result<_, _>>()?)
}

/// Adds or replaces a rule. A global rule (no project) needs the scope of
/// every project.
pub async fn upsert_rule(pool: &PgPool, scope: &ProjectScope, rule: &CategoryRule) -> Result<CategoryRule, Error> {
    match &rule.project {
        Some(project) => scope.require(project)?,
        None if *scope != ProjectScope::All => {
            return Err(Error::PermissionDenied("global rules need a token for every project".into()));
        }
        _ => {}
    }
    let mut transaction = pool.begin().await?;
    if let Some(project) = &rule.project {
        ensure_project(&mut transaction, project).await?;
    }
    let row = sqlx::query(sqlx::AssertSqlSafe(format!(
        "INSERT INTO qa_category_rules ({RULE_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7)
         ON CONFLICT (coalesce(project, ''), rule_id) DO UPDATE SET
             priority = excluded.priority, category = excluded.category,
             check_name_regex = excluded.check_name_regex, message_regex = excluded.message_regex,
             enabled = excluded.enabled, updated_at = now()
         RETURNING {RULE_COLUMNS}"
    )))
    .bind(&rule.rule_id)
    .bind(&rule.project)
    .bind(rule.priority)
    .bind(&rule.category)
    .bind(&rule.check_name_regex)
    .bind(&rule.message_regex)
    .bind(rule.enabled)
    .fetch_one(&mut *transaction)
    .await?;
    transaction.commit().await?;
    Ok(rule_from_row(&row)?)
}
