//! The projects a caller may touch.
//!
//! Every store function takes a `ProjectScope` and applies it in SQL, as
//! `($n::text[] IS NULL OR project = ANY($n))`, so a query can never return
//! or change rows of another project whatever its other filters say. Until
//! authentication exists every caller has `ProjectScope::All`; the auth layer
//! will hand each request the scope of its token.

use std::sync::Arc;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProjectScope {
    /// Every project (admin, or no authentication configured).
    All,
    /// Only these projects.
    Only(Arc<[String]>),
}

impl ProjectScope {
    pub fn only(projects: impl IntoIterator<Item = impl Into<String>>) -> Self {
        Self::Only(projects.into_iter().map(Into::into).collect())
    }

    pub fn allows(&self, project: &str) -> bool {
        match self {
            ProjectScope::All => true,
            ProjectScope::Only(projects) => projects.iter().any(|allowed| allowed == project),
        }
    }

    /// `Ok` when the scope allows `project`, else the error that says so.
    pub fn require(&self, project: &str) -> Result<(), crate::Error> {
        if self.allows(project) {
            Ok(())
        } else {
            Err(crate::Error::PermissionDenied(format!("project {project} is outside your scope")))
        }
    }

    /// The bind value for `($n::text[] IS NULL OR project = ANY($n))`.
    pub fn sql_filter(&self) -> Option<Vec<String>> {
        match self {
            ProjectScope::All => None,
            ProjectScope::Only(projects) => Some(projects.to_vec()),
        }
    }
}
