//! HotSpots: where a project's work fails QA more than the rest of it (see
//! `lore_types::qa::hotspots` for the rule), and the hot areas a task's
//! files fall in, for its briefing.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};

use super::QaLearning;
use crate::Error;
use lore_store::qa::hotspots::{self as store, Window};
use lore_types::qa::hotspots::{self, HotSpot, HotSpots};
use lore_types::scope::ProjectScope;

/// The window a briefing's hot areas look back over.
pub const BRIEFING_WINDOW_DAYS: i64 = 30;
/// How long a project's hot areas serve briefings before they are read
/// again: they move with days of work, and a briefing must not pay for a
/// scan of the window.
const CACHE_FOR: Duration = Duration::from_secs(60);

/// A HotSpots request.
#[derive(Debug, Clone, PartialEq)]
pub struct HotSpotQuery {
    pub project: String,
    pub from: DateTime<Utc>,
    pub until: DateTime<Utc>,
    /// Areas with fewer sessions (action kinds with fewer actions) are not
    /// listed.
    pub min_count: u64,
    /// Areas and action kinds listed, each.
    pub limit: usize,
}

/// Each project's hot spots of the briefing window, as last read.
#[derive(Debug, Default)]
pub struct HotSpotCache(Mutex<HashMap<String, (Instant, Arc<HotSpots>)>>);

impl QaLearning {
    pub async fn hot_spots(&self, scope: &ProjectScope, query: &HotSpotQuery) -> Result<HotSpots, Error> {
        scope.require(&query.project)?;
        let pool = self.reads.bounded();
        if !store::project_exists(&pool, scope, &query.project).await? {
            return Err(Error::NotFound(format!("project {}", query.project)));
        }
        let window = Window { project: &query.project, from: query.from, until: query.until };
        let (touches, kinds) =
            tokio::try_join!(store::touches(&pool, scope, window), store::action_kinds(&pool, scope, window))?;
        let significance = self.config.promotion.significance;
        let (sessions, mut areas) = hotspots::area_rates(&touches, query.min_count, significance);
        let (actions, mut action_kinds) = hotspots::kind_rates(&kinds, query.min_count, significance);
        areas.truncate(query.limit);
        action_kinds.truncate(query.limit);
        Ok(HotSpots { sessions, areas, actions, action_kinds, significance })
    }

    /// The hot areas among a task's files over the last
    /// [`BRIEFING_WINDOW_DAYS`], hottest first; read at most once a minute
    /// per project and replica.
    pub async fn hot_areas_of(
        &self,
        scope: &ProjectScope,
        project: &str,
        files: &[String],
    ) -> Result<Vec<HotSpot>, Error> {
        if files.is_empty() || !scope.allows(project) {
            return Ok(Vec::new());
        }
        let cached = {
            let cache = self.hot_spots.0.lock().expect("hot spot cache");
            cache.get(project).filter(|(read, _)| read.elapsed() < CACHE_FOR).map(|(_, spots)| Arc::clone(spots))
        };
        let spots = match cached {
            Some(spots) => spots,
            None => {
                let until = Utc::now();
                let query = HotSpotQuery {
                    project: project.to_owned(),
                    from: until - chrono::Duration::days(BRIEFING_WINDOW_DAYS),
                    until,
                    min_count: 1,
                    limit: usize::MAX,
                };
                let spots = match self.hot_spots(&ProjectScope::All, &query).await {
                    Ok(spots) => Arc::new(spots),
                    // A project with no work yet has no hot spot.
                    Err(Error::NotFound(_)) => Arc::new(HotSpots::default()),
                    Err(error) => return Err(error),
                };
                let mut cache = self.hot_spots.0.lock().expect("hot spot cache");
                cache.insert(project.to_owned(), (Instant::now(), Arc::clone(&spots)));
                spots
            }
        };
        Ok(spots.hot_areas_of(files).into_iter().cloned().collect())
    }
}
