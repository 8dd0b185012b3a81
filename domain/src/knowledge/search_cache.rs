//! Answers kept per project for a while, dropped by any write to the
//! project.
//!
//! Every knowledge write, on any replica, reaches every replica through the
//! change feed ([`super::keyword::feed`]), which bumps the project's
//! generation here (a global synonym bumps every project). An answer is
//! kept with the generation it was computed under and served only while
//! that is still the project's generation; one computed while a write landed
//! is not kept at all.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use hashlink::LruCache;

use super::keyword::feed::ChangeObserver;

/// Answers kept per replica.
const CAPACITY: usize = 2048;

/// Where an answer is kept: its project, then its key.
type Slot = (String, String);

#[derive(Debug, Default)]
struct Generations {
    /// Bumped by a change to every project.
    global: u64,
    projects: HashMap<String, u64>,
}

/// A cache of answers of type `T` by project and key.
#[derive(Debug)]
pub struct SearchCache<T> {
    time_to_live: Duration,
    generations: Mutex<Generations>,
    answers: Mutex<LruCache<Slot, Kept<T>>>,
}

#[derive(Debug, Clone)]
struct Kept<T> {
    generation: (u64, u64),
    until: Instant,
    answer: T,
}

impl<T: Clone> SearchCache<T> {
    pub fn new(time_to_live: Duration) -> Self {
        Self { time_to_live, generations: Default::default(), answers: Mutex::new(LruCache::new(CAPACITY)) }
    }

    /// The generation of `project`'s knowledge: take it before computing an
    /// answer, and give it back to [`Self::put`].
    pub fn generation(&self, project: &str) -> (u64, u64) {
        let generations = self.generations.lock().expect("generations lock");
        (generations.global, generations.projects.get(project).copied().unwrap_or(0))
    }

    /// The answer kept for `key`, if nothing changed in `project` since.
    pub fn get(&self, project: &str, key: &str) -> Option<T> {
        let current = self.generation(project);
        let mut answers = self.answers.lock().expect("answers lock");
        let slot = (project.to_owned(), key.to_owned());
        match answers.get(&slot) {
            Some(kept) if kept.generation == current && kept.until > Instant::now() => Some(kept.answer.clone()),
            Some(_) => {
                answers.remove(&slot);
                None
            }
            None => None,
        }
    }

    /// Keeps an answer computed under `generation`, unless the project
    /// changed meanwhile.
    pub fn put(&self, project: &str, key: &str, generation: (u64, u64), answer: T) {
        if self.generation(project) != generation || self.time_to_live.is_zero() {
            return;
        }
        let kept = Kept { generation, until: Instant::now() + self.time_to_live, answer };
        self.answers.lock().expect("answers lock").insert((project.to_owned(), key.to_owned()), kept);
    }

    /// Forgets what is kept for `project` (every project when `None`).
    pub fn invalidate(&self, project: Option<&str>) {
        let mut generations = self.generations.lock().expect("generations lock");
        match project {
            Some(project) => *generations.projects.entry(project.to_owned()).or_default() += 1,
            None => generations.global += 1,
        }
    }
}

impl<T: Clone + Send + std::fmt::Debug> ChangeObserver for SearchCache<T> {
    fn changed(&self, project: Option<&str>) {
        self.invalidate(project);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_lives_until_its_project_changes_or_it_expires() {
        let cache: SearchCache<u32> = SearchCache::new(Duration::from_secs(60));
        let generation = cache.generation("shop");
        cache.put("shop", "q", generation, 7);
        assert_eq!(cache.get("shop", "q"), Some(7));
        cache.invalidate(Some("bank"));
        assert_eq!(cache.get("shop", "q"), Some(7), "another project's write changes nothing here");
        cache.invalidate(Some("shop"));
        assert_eq!(cache.get("shop", "q"), None);

        // Computed while a write landed: not kept.
        let generation = cache.generation("shop");
        cache.invalidate(Some("shop"));
        cache.put("shop", "q", generation, 8);
        assert_eq!(cache.get("shop", "q"), None);

        // A change to every project reaches this one.
        let generation = cache.generation("shop");
        cache.put("shop", "q", generation, 9);
        cache.invalidate(None);
        assert_eq!(cache.get("shop", "q"), None);

        let expired: SearchCache<u32> = SearchCache::new(Duration::ZERO);
        let generation = expired.generation("shop");
        expired.put("shop", "q", generation, 1);
        assert_eq!(expired.get("shop", "q"), None);
    }
}
