//! The patterns of each route, kept in memory between captures.
//!
//! Grouping compares a message with every pattern of its route, and reading
//! a route of several hundred patterns from `qa_patterns` cost more than the
//! rest of a capture together. Each server keeps the routes it has read,
//! with the generation they were read at; a trigger bumps a route's
//! generation on every change that can alter a grouping decision (see
//! migration 0012), so a kept route is used only while nothing has changed
//! it, whichever server or code path made the change.
//!
//! A capture holds the advisory locks of its routes (`store::routes::lock_routes`)
//! before it reads their generations, so no other capture changes them
//! until it commits. It then knows how many bumps its own changes made; when
//! a route's generation at commit is the one it read plus exactly those,
//! nothing else touched the route and the capture's copy is the route's
//! state, which it keeps. Otherwise the kept copy is dropped.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use hashlink::LruCache;
use sqlx::PgConnection;
use uuid::Uuid;

use super::template::Template;
use crate::Error;
use lore_store::qa::{self as store, routes::RouteCandidate};

/// Routes kept per server; one is a few hundred short templates at most.
const CAPACITY: usize = 4096;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct RouteKey {
    project: String,
    category: String,
    route: String,
}

#[derive(Debug, Clone)]
struct KeptRoute {
    generation: i64,
    candidates: Arc<Vec<RouteCandidate>>,
}

/// The routes this server has read, by project, category and route.
#[derive(Debug, Clone)]
pub struct RouteCache {
    kept: Arc<Mutex<LruCache<RouteKey, KeptRoute>>>,
}

impl Default for RouteCache {
    fn default() -> Self {
        Self { kept: Arc::new(Mutex::new(LruCache::new(CAPACITY))) }
    }
}

/// One route as a capture sees it: the patterns at the generation it read,
/// plus the capture's own changes.
#[derive(Debug)]
pub struct CheckedOutRoute {
    read_at: i64,
    candidates: Arc<Vec<RouteCandidate>>,
    /// Generation bumps the capture's own changes make.
    bumps: i64,
    /// The generation its copy is the state of, once the capture settled.
    settled_at: Option<i64>,
}

impl CheckedOutRoute {
    /// The generation to keep the copy under, if it may be kept: patterns
    /// read after the generation are never older than it.
    fn keep_at(&self) -> Option<i64> {
        if self.bumps == 0 { Some(self.read_at) } else { self.settled_at }
    }

    pub fn candidates(&self) -> &[RouteCandidate] {
        &self.candidates
    }

    /// A pattern the capture started.
    pub fn added(&mut self, pattern_id: Uuid, template: Template) {
        Arc::make_mut(&mut self.candidates).push(RouteCandidate { pattern_id, template, merged_into: None });
        self.bumps += 1;
    }

    /// A pattern whose template the capture widened.
    pub fn widened(&mut self, pattern_id: Uuid, template: &Template) {
        if let Some(candidate) =
            Arc::make_mut(&mut self.candidates).iter_mut().find(|candidate| candidate.pattern_id == pattern_id)
        {
            candidate.template = template.clone();
        }
        self.bumps += 1;
    }
}

/// The routes of one capture, by route.
#[derive(Debug)]
pub struct CheckedOut {
    project: String,
    category: String,
    routes: HashMap<String, CheckedOutRoute>,
}

impl CheckedOut {
    pub fn route(&mut self, route: &str) -> &mut CheckedOutRoute {
        self.routes.get_mut(route).expect("every route of the capture is checked out")
    }
}

impl RouteCache {
    /// The patterns of `routes`, from memory when their generation has not
    /// moved. The caller holds the routes' advisory locks.
    pub async fn check_out(
        &self,
        connection: &mut PgConnection,
        project: &str,
        category: &str,
        routes: &[String],
    ) -> Result<CheckedOut, Error> {
        let generations = store::routes::route_generations(connection, project, category, routes).await?;
        let mut checked_out = HashMap::with_capacity(routes.len());
        for (route, generation) in generations {
            let key = key(project, category, &route);
            let kept = self.lock().get(&key).filter(|kept| kept.generation == generation).cloned();
            let candidates = match kept {
                Some(kept) => kept.candidates,
                None => Arc::new(store::routes::route_candidates(connection, project, category, &route).await?),
            };
            checked_out.insert(route, CheckedOutRoute { read_at: generation, candidates, bumps: 0, settled_at: None });
        }
        Ok(CheckedOut { project: project.to_owned(), category: category.to_owned(), routes: checked_out })
    }

    /// Before the capture commits: the routes' generations now, which say
    /// whether anything but the capture changed them.
    pub async fn settle(&self, connection: &mut PgConnection, checked_out: &mut CheckedOut) -> Result<(), Error> {
        let changed: Vec<String> =
            checked_out.routes.iter().filter(|(_, route)| route.bumps > 0).map(|(name, _)| name.clone()).collect();
        if changed.is_empty() {
            return Ok(());
        }
        let now =
            store::routes::route_generations(connection, &checked_out.project, &checked_out.category, &changed).await?;
        for (name, generation) in now {
            // Any other change that slipped in means the copy may not be the
            // route's state.
            let route = checked_out.route(&name);
            route.settled_at = (generation == route.read_at + route.bumps).then_some(generation);
        }
        Ok(())
    }

    /// After the capture committed: keeps its routes for the next one.
    pub fn keep(&self, checked_out: CheckedOut) {
        let mut kept = self.lock();
        for (route, checked) in checked_out.routes {
            let key = key(&checked_out.project, &checked_out.category, &route);
            match checked.keep_at() {
                Some(generation) => kept.insert(key, KeptRoute { generation, candidates: checked.candidates }),
                None => kept.remove(&key),
            };
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, LruCache<RouteKey, KeptRoute>> {
        self.kept.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

fn key(project: &str, category: &str, route: &str) -> RouteKey {
    RouteKey { project: project.to_owned(), category: category.to_owned(), route: route.to_owned() }
}
