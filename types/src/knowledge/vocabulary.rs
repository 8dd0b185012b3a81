//! What words and categories mean to search: synonyms and related
//! categories.

/// A synonym; `project` None: every project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Synonym {
    pub project: Option<String>,
    pub term: String,
    pub expansion: String,
}

/// Two related categories of a project, stored the smaller first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CategoryRelation {
    pub project: String,
    pub category: String,
    pub related: String,
}

impl CategoryRelation {
    /// The relation between `one` and `other`, whichever order they come
    /// in: how it is stored.
    pub fn between(project: String, one: String, other: String) -> Self {
        let (category, related) = if one <= other { (one, other) } else { (other, one) };
        Self { project, category, related }
    }
}
