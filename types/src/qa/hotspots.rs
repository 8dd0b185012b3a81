//! Hot spots: where a project's work fails QA more often than the rest of
//! its work. Two views over a window:
//! - **areas**: the folders (`db/*`, every ancestor of an edited file) and
//!   globs (`db/migrations/*.sql`) sessions edited, each with how many of
//!   those sessions failed QA (a failed task result or a captured failure);
//! - **action kinds**: each action type's share of failed actions.
//!
//! Each rate carries its Wilson interval. A rate is *hot* when the lower
//! end of its interval is above the project's own rate over the same
//! window: the area fails more than the project's work does, beyond what
//! its number of sessions can explain. The rule has no threshold of its
//! own to tune; its one parameter is the significance level the QA
//! dashboard already uses.

use std::collections::{BTreeMap, BTreeSet};

use uuid::Uuid;

use super::files::glob_of;
use super::significance::{Counts, GroupRate};

/// Folders below this depth are counted under their ancestor at it: deep
/// trees would otherwise spread a handful of sessions over many areas.
pub const MAX_AREA_DEPTH: usize = 4;

/// One session's edit of one file, and whether the session failed QA.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Touch {
    pub session_id: Uuid,
    pub file: String,
    pub failed: bool,
}

/// One area's or action kind's failure rate.
#[derive(Debug, Clone, PartialEq)]
pub struct HotSpot {
    /// `db/*`, `db/migrations/*.sql`, or an action type.
    pub name: String,
    pub rate: GroupRate,
    /// The interval's lower end is above the project's rate.
    pub hot: bool,
}

/// What HotSpots answers.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct HotSpots {
    /// Sessions that edited a file, and how many failed QA.
    pub sessions: GroupRate,
    pub areas: Vec<HotSpot>,
    /// Actions, and how many failed.
    pub actions: GroupRate,
    pub action_kinds: Vec<HotSpot>,
    pub significance: f64,
}

impl HotSpots {
    /// The hot areas a task's files fall in, hottest first.
    pub fn hot_areas_of<'a>(&'a self, files: &[String]) -> Vec<&'a HotSpot> {
        let mut touched = BTreeSet::new();
        for file in files {
            touched.extend(areas_of(file));
        }
        self.areas.iter().filter(|area| area.hot && touched.contains(&area.name)).collect()
    }
}

/// The areas a file is in: each ancestor folder as `folder/*` (up to
/// [`MAX_AREA_DEPTH`]) and its glob (`folder/*.ext`). A file at the root has
/// only its glob (`*.toml`).
pub fn areas_of(file: &str) -> Vec<String> {
    let path = file.trim().replace('\\', "/");
    let path = path.trim_start_matches("./").trim_start_matches('/');
    let mut areas = Vec::new();
    if path.is_empty() {
        return areas;
    }
    let folders: Vec<&str> = path.split('/').collect();
    for depth in 1..folders.len().min(MAX_AREA_DEPTH + 1) {
        areas.push(format!("{}/*", folders[..depth].join("/")));
    }
    let glob = glob_of(path);
    if !areas.contains(&glob) {
        areas.push(glob);
    }
    areas
}

/// Each area's sessions and failed sessions (a session counts once per
/// area), the areas with at least `min_sessions`, hot ones first, then by
/// the lower end of the interval.
pub fn area_rates(touches: &[Touch], min_sessions: u64, significance: f64) -> (GroupRate, Vec<HotSpot>) {
    let mut sessions: BTreeMap<Uuid, bool> = BTreeMap::new();
    let mut areas: BTreeMap<String, BTreeMap<Uuid, bool>> = BTreeMap::new();
    for touch in touches {
        *sessions.entry(touch.session_id).or_default() |= touch.failed;
        for area in areas_of(&touch.file) {
            *areas.entry(area).or_default().entry(touch.session_id).or_default() |= touch.failed;
        }
    }
    let count = |members: &BTreeMap<Uuid, bool>| Counts {
        tasks: members.len() as u64,
        failed: members.values().filter(|failed| **failed).count() as u64,
    };
    let base = GroupRate::new(count(&sessions), significance);
    let spots = areas.iter().map(|(name, members)| (name.clone(), count(members))).collect();
    (base, ranked(spots, base.rate, min_sessions, significance))
}

/// Each action type's actions and failed actions, as [`area_rates`] ranks
/// areas.
pub fn kind_rates(kinds: &[(String, Counts)], min_actions: u64, significance: f64) -> (GroupRate, Vec<HotSpot>) {
    let total = kinds.iter().fold(Counts::default(), |total, (_, counts)| Counts {
        tasks: total.tasks + counts.tasks,
        failed: total.failed + counts.failed,
    });
    let base = GroupRate::new(total, significance);
    (base, ranked(kinds.to_vec(), base.rate, min_actions, significance))
}

fn ranked(spots: Vec<(String, Counts)>, base_rate: f64, min: u64, significance: f64) -> Vec<HotSpot> {
    let mut spots: Vec<HotSpot> = spots
        .into_iter()
        .filter(|(_, counts)| counts.tasks >= min.max(1))
        .map(|(name, counts)| {
            let rate = GroupRate::new(counts, significance);
            HotSpot { name, hot: rate.low > base_rate, rate }
        })
        .collect();
    spots.sort_by(|a, b| {
        b.hot
            .cmp(&a.hot)
            .then(b.rate.low.total_cmp(&a.rate.low))
            .then(b.rate.counts.tasks.cmp(&a.rate.counts.tasks))
            .then(a.name.cmp(&b.name))
    });
    spots
}

#[cfg(test)]
mod tests {
    use super::*;

    fn touch(session: u128, file: &str, failed: bool) -> Touch {
        Touch { session_id: Uuid::from_u128(session), file: file.into(), failed }
    }

    #[test]
    fn a_file_is_in_each_of_its_folders_and_its_glob() {
        assert_eq!(areas_of("db/migrations/0001.sql"), ["db/*", "db/migrations/*", "db/migrations/*.sql"]);
        assert_eq!(areas_of("./Cargo.toml"), ["*.toml"]);
        assert_eq!(areas_of("a/b/c/d/e/f.rs"), ["a/*", "a/b/*", "a/b/c/*", "a/b/c/d/*", "a/b/c/d/e/*.rs"]);
        assert!(areas_of("  ").is_empty());
    }

    #[test]
    fn an_area_is_hot_when_its_interval_is_above_the_projects_rate() {
        let mut touches = Vec::new();
        // 10 sessions in db/: 8 fail. 30 sessions in web/: 3 fail.
        for session in 0..10 {
            touches.push(touch(session, "db/schema.sql", session < 8));
            touches.push(touch(session, "db/seed.sql", session < 8));
        }
        for session in 10..40 {
            touches.push(touch(session, "web/app.ts", session < 13));
        }
        let (base, areas) = area_rates(&touches, 3, 0.05);
        assert_eq!((base.counts.tasks, base.counts.failed), (40, 11), "each session once");
        let db = &areas[0];
        assert_eq!((db.name.as_str(), db.hot), ("db/*", true));
        assert_eq!((db.rate.counts.tasks, db.rate.counts.failed), (10, 8), "a session counts once per area");
        let web = areas.iter().find(|area| area.name == "web/*").unwrap();
        assert!(!web.hot, "below the project's rate");
        let hot: Vec<&str> = areas.iter().filter(|area| area.hot).map(|area| area.name.as_str()).collect();
        assert_eq!(hot, ["db/*", "db/*.sql"]);
        let spots = HotSpots { sessions: base, areas: areas.clone(), ..HotSpots::default() };
        let named: Vec<&str> =
            spots.hot_areas_of(&["db/views.sql".into(), "README.md".into()]).iter().map(|a| a.name.as_str()).collect();
        assert_eq!(named, ["db/*", "db/*.sql"]);
    }

    #[test]
    fn few_sessions_are_listed_only_past_the_minimum_and_are_not_hot_by_chance() {
        let touches =
            vec![touch(1, "ops/deploy.sh", true), touch(2, "src/lib.rs", false), touch(3, "src/main.rs", false)];
        let (_, areas) = area_rates(&touches, 1, 0.05);
        let ops = areas.iter().find(|area| area.name == "ops/*").unwrap();
        assert!(!ops.hot, "1 of 1 failing is no evidence: its interval reaches down past the base rate");
        let (_, listed) = area_rates(&touches, 2, 0.05);
        assert!(listed.iter().all(|area| area.rate.counts.tasks >= 2));
        let (base, none) = area_rates(&[], 3, 0.05);
        assert_eq!((base.counts.tasks, none.len()), (0, 0));
    }

    #[test]
    fn action_kinds_are_ranked_the_same_way() {
        let kinds = vec![
            ("deploy".to_owned(), Counts { tasks: 20, failed: 12 }),
            ("tool_call".to_owned(), Counts { tasks: 400, failed: 20 }),
            ("commit".to_owned(), Counts { tasks: 2, failed: 2 }),
        ];
        let (base, ranked) = kind_rates(&kinds, 5, 0.05);
        assert_eq!(base.counts.tasks, 422);
        assert_eq!(
            ranked.iter().map(|kind| (kind.name.as_str(), kind.hot)).collect::<Vec<_>>(),
            [("deploy", true), ("tool_call", false)]
        );
    }
}
