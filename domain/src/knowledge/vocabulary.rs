//! What words and categories mean to search, editable through the API:
//! synonyms (a query holding a term also looks for its expansion, and the
//! other way round) and category relations (a query's category ranks
//! entries of a related category next after its own).

use super::KnowledgeBase;
use crate::Error;
use lore_store::knowledge::vocabulary as store;
use lore_types::knowledge::vocabulary::{CategoryRelation, Synonym};
use lore_types::scope::ProjectScope;

fn allowed(scope: &ProjectScope, project: Option<&str>) -> Result<(), Error> {
    match project {
        Some(project) => scope.require(project),
        None if !matches!(scope, ProjectScope::All) => Err(Error::PermissionDenied(
            "a synonym of every project needs a token for every project; give a project".into(),
        )),
        _ => Ok(()),
    }
}

impl KnowledgeBase {
    pub async fn synonyms(&self, scope: &ProjectScope, project: &str) -> Result<Vec<Synonym>, Error> {
        allowed(scope, Some(project))?;
        store::synonyms(&self.pool, scope, project).await
    }

    /// Adds a synonym; false when it was there already.
    pub async fn put_synonym(&self, scope: &ProjectScope, synonym: &Synonym) -> Result<bool, Error> {
        allowed(scope, synonym.project.as_deref())?;
        let created = store::put_synonym(&self.pool, synonym).await?;
        self.written().await;
        Ok(created)
    }

    /// Removes a synonym; false when there was none.
    pub async fn delete_synonym(&self, scope: &ProjectScope, synonym: &Synonym) -> Result<bool, Error> {
        allowed(scope, synonym.project.as_deref())?;
        let deleted = store::delete_synonym(&self.pool, synonym).await?;
        self.written().await;
        Ok(deleted)
    }

    pub async fn category_relations(
        &self,
        scope: &ProjectScope,
        project: &str,
    ) -> Result<Vec<CategoryRelation>, Error> {
        allowed(scope, Some(project))?;
        store::category_relations(&self.pool, scope, project).await
    }

    /// Relates two categories; false when they were.
    pub async fn put_category_relation(
        &self,
        scope: &ProjectScope,
        relation: &CategoryRelation,
    ) -> Result<bool, Error> {
        allowed(scope, Some(&relation.project))?;
        let created = store::put_category_relation(&self.pool, relation).await?;
        self.written().await;
        Ok(created)
    }

    /// Unrelates two categories; false when they were not related.
    pub async fn delete_category_relation(
        &self,
        scope: &ProjectScope,
        relation: &CategoryRelation,
    ) -> Result<bool, Error> {
        allowed(scope, Some(&relation.project))?;
        let deleted = store::delete_category_relation(&self.pool, relation).await?;
        self.written().await;
        Ok(deleted)
    }
}
