//! A project's own grouping masks, as data: people add them where the
//! generic masks leave a variable in view (Brain's per-system settings),
//! and a change re-mines the project at once, so what was captured before
//! the mask is grouped as if it had been there.
//!
//! Captures read the project's masks in their own transaction; the compiled
//! masks are kept per project and compiled again only when the stored text
//! changes, so every replica follows a change at its next capture.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use lore_grouping::masks::{MaskSpec, Masks};
use sqlx::PgConnection;

use super::QaLearning;
use super::remining::Remined;
use crate::Error;
use lore_store::qa::masks::{self as store, Reading};
use lore_types::qa::GroupingMask;
use lore_types::scope::ProjectScope;

/// A project's masks as stored, and compiled with its reading.
type Compiled = (Vec<MaskSpec>, Arc<Masks>);

/// Compiled masks by project, with the specs they were compiled from.
#[derive(Debug, Clone, Default)]
pub struct MaskCache {
    compiled: Arc<Mutex<HashMap<String, Compiled>>>,
}

impl MaskCache {
    /// The compiled form of a project's reading, compiled only when it
    /// differs from what the project had. A stored mask that no longer
    /// compiles (the limits were lowered) is left out rather than failing
    /// every capture.
    fn compiled(&self, project: &str, reading: Reading) -> Arc<Masks> {
        let specs: Vec<MaskSpec> = reading.masks.iter().map(spec).collect();
        let mut compiled = self.compiled.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some((kept, masks)) = compiled.get(project)
            && *kept == specs
            && masks.reads_literally() == reading.literal
        {
            return masks.clone();
        }
        let usable: Vec<MaskSpec> = specs
            .iter()
            .filter(|spec| match spec.compile() {
                Ok(_) => true,
                Err(error) => {
                    tracing::warn!(project, mask = %spec.name, %error, "a stored grouping mask is not used");
                    false
                }
            })
            .cloned()
            .collect();
        let masks = Arc::new(Masks::compile(&usable).unwrap_or_default().reading_literally(reading.literal));
        compiled.insert(project.to_owned(), (specs, masks.clone()));
        masks
    }
}

fn spec(mask: &GroupingMask) -> MaskSpec {
    MaskSpec { name: mask.name.clone(), pattern: mask.pattern.clone() }
}

/// Whether a project may hold `after`: every mask compiles, and there are
/// not too many. What the store asks with the masks locked.
pub(super) fn all_compile(after: &[GroupingMask]) -> Result<(), Error> {
    Masks::compile(&after.iter().map(spec).collect::<Vec<_>>()).map(drop).map_err(Error::from)
}

impl QaLearning {
    /// How grouping reads `project`'s messages now: its masks, and whether
    /// it is read literally.
    pub(crate) async fn masks_of(&self, connection: &mut PgConnection, project: &str) -> Result<Arc<Masks>, Error> {
        let reading = store::reading(connection, project).await?;
        Ok(self.masks.compiled(project, reading))
    }

    /// What a capture does first, in its transaction: makes sure of its
    /// project and reads how its messages are read, in one round trip.
    pub(crate) async fn ensure_project_with_masks(
        &self,
        connection: &mut PgConnection,
        project: &str,
    ) -> Result<Arc<Masks>, Error> {
        let reading = store::ensure_project_with_reading(connection, project).await?;
        Ok(self.masks.compiled(project, reading))
    }

    pub async fn grouping_masks(&self, scope: &ProjectScope, project: &str) -> Result<Vec<GroupingMask>, Error> {
        scope.require(project)?;
        let mut connection = self.pool.acquire().await?;
        store::masks(&mut connection, project).await
    }

    /// Adds or replaces a mask, then re-mines the project. True when the
    /// mask is new.
    pub async fn put_grouping_mask(
        &self,
        scope: &ProjectScope,
        mask: &GroupingMask,
    ) -> Result<(GroupingMask, bool, Remined), Error> {
        scope.require(&mask.project)?;
        spec(mask).compile()?;
        let (stored, created) = store::put_mask(&self.pool, mask, all_compile).await?;
        let remined = self.remine(scope, &mask.project, self.config.remine_window).await?;
        Ok((stored, created, remined))
    }

    /// Removes a mask and re-mines the project; false when there was none
    /// (and nothing is re-mined).
    pub async fn delete_grouping_mask(
        &self,
        scope: &ProjectScope,
        project: &str,
        name: &str,
    ) -> Result<(bool, Remined), Error> {
        scope.require(project)?;
        if !store::delete_mask(&self.pool, project, name).await? {
            return Ok((false, Remined::default()));
        }
        Ok((true, self.remine(scope, project, self.config.remine_window).await?))
    }
}
