//! Daily and weekly reports a supervisor reads each morning: per project,
//! deployments, failures, top actions, active agents, the QA summary and
//! the drafts waiting for review; and one fleet-wide report over every
//! project, for admins.
//!
//! The leader writes the last complete day's and week's reports into
//! `reports.folder` (`projects/<project>/daily/2026-11-23.md`,
//! `projects/<project>/weekly/2026-W47.md`, `fleet/...`), for the projects
//! that had actions then, keeping the newest `reports.keep` of each kind.
//! The same markdown is rendered on request by `ActionService.PeriodicReport`.
//! This module reads what a report shows; `render` writes it as markdown.

mod render;

use std::path::{Path, PathBuf};

use chrono::{DateTime, Datelike as _, Duration, NaiveDate, TimeZone as _, Utc};
use serde::{Deserialize, Serialize};

use crate::Error;
use crate::actions::ActionLog;
use crate::actions::report::ActivityReport;
use crate::knowledge::KnowledgeBase;
use crate::qa::QaLearning;
use lore_model::actions::Action;
use lore_model::actions::query::ActionFilter;
use lore_model::knowledge::drafts::{Draft, DraftStatus};
use lore_model::qa::{Dashboard, DashboardQuery};
use lore_model::scope::ProjectScope;
use lore_store as store;
use lore_store::replicas::ReadPools;
use lore_store::reports::ActiveAgent;

/// `[reports]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ReportsConfig {
    /// Where the scheduled reports are written; none are written without it.
    pub folder: Option<PathBuf>,
    /// Reports of each kind kept per project (and for the fleet).
    pub keep: usize,
    /// How often the leader looks for a report that is due.
    pub interval_secs: u64,
}

impl Default for ReportsConfig {
    fn default() -> Self {
        Self { folder: None, keep: 30, interval_secs: 300 }
    }
}

/// A report's period.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Period {
    Daily,
    Weekly,
}

impl Period {
    fn folder(self) -> &'static str {
        match self {
            Self::Daily => "daily",
            Self::Weekly => "weekly",
        }
    }

    /// The period that holds `day`: the day itself, or its ISO week from
    /// Monday.
    pub fn containing(self, day: NaiveDate) -> (NaiveDate, NaiveDate) {
        match self {
            Self::Daily => (day, day + Duration::days(1)),
            Self::Weekly => {
                let monday = day - Duration::days(i64::from(day.weekday().num_days_from_monday()));
                (monday, monday + Duration::days(7))
            }
        }
    }

    /// The last complete period before `now`.
    pub fn last_complete(self, now: DateTime<Utc>) -> (NaiveDate, NaiveDate) {
        let today = now.date_naive();
        let (start, _) = self.containing(today);
        self.containing(start - Duration::days(1))
    }

    /// The period's name in file names and titles.
    pub fn name_of(self, start: NaiveDate) -> String {
        match self {
            Self::Daily => start.format("%Y-%m-%d").to_string(),
            Self::Weekly => {
                let week = start.iso_week();
                format!("{}-W{:02}", week.year(), week.week())
            }
        }
    }
}

/// Renders and writes the reports.
#[derive(Debug, Clone)]
pub struct Reports {
    /// Reports read from a replica when one is fresh enough.
    reads: ReadPools,
    actions: ActionLog,
    knowledge: KnowledgeBase,
    qa: QaLearning,
    config: ReportsConfig,
}

/// A rendered report.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    pub title: String,
    pub from: DateTime<Utc>,
    pub until: DateTime<Utc>,
    pub markdown: String,
}

fn midnight(day: NaiveDate) -> DateTime<Utc> {
    Utc.from_utc_datetime(&day.and_hms_opt(0, 0, 0).expect("midnight exists"))
}

impl Reports {
    pub fn new(
        reads: ReadPools,
        actions: ActionLog,
        knowledge: KnowledgeBase,
        qa: QaLearning,
        config: ReportsConfig,
    ) -> Self {
        Self { reads, actions, knowledge, qa, config }
    }

    /// One project's report of the period that holds `day`.
    pub async fn project_report(
        &self,
        scope: &ProjectScope,
        project: &str,
        period: Period,
        day: NaiveDate,
    ) -> Result<Report, Error> {
        if !scope.allows(project) {
            return Err(Error::PermissionDenied(format!("project {project} is outside your scope")));
        }
        let (start, end) = period.containing(day);
        let (from, until) = (midnight(start), midnight(end));
        let title = format!("{} report of {project}: {}", capitalized(period), period.name_of(start));
        let figures = self.project_figures(scope, project, from, until).await?;
        let markdown = render::project(&title, from, until, &figures);
        Ok(Report { title, from, until, markdown })
    }

    /// What a project's report shows of the window from `from` to `until`.
    async fn project_figures(
        &self,
        scope: &ProjectScope,
        project: &str,
        from: DateTime<Utc>,
        until: DateTime<Utc>,
    ) -> Result<ProjectWindow, Error> {
        let filter =
            ActionFilter { project: project.to_owned(), from: Some(from), until: Some(until), ..Default::default() };
        let deployments = ActionFilter { action_types: DEPLOY_TYPES.map(str::to_owned).to_vec(), ..filter.clone() };
        let query = DashboardQuery {
            project: project.to_owned(),
            from,
            until,
            category: None,
            agent_id: None,
            top_patterns: 5,
        };
        let reads = self.reads.bounded();
        let (activity, deployments, dashboard, agents, drafts) = tokio::try_join!(
            self.actions.activity_report(scope, &filter, 10),
            store::actions::page(&reads, scope, &deployments, None, store::actions::Direction::Ascending, MAX_ROWS),
            self.qa.dashboard(scope, &query),
            store::reports::active_agents(&reads, project, from, until, MAX_ROWS),
            self.knowledge.list_drafts(scope, project, DraftStatus::Pending, MAX_ROWS, None),
        )?;
        Ok(ProjectWindow { activity, deployments, dashboard, agents, drafts })
    }

    /// Every project's figures of the period that holds `day`, one row each.
    pub async fn fleet_report(&self, scope: &ProjectScope, period: Period, day: NaiveDate) -> Result<Report, Error> {
        if !matches!(scope, ProjectScope::All) {
            return Err(Error::PermissionDenied("the fleet report is for tokens of every project (admin)".into()));
        }
        let (start, end) = period.containing(day);
        let (from, until) = (midnight(start), midnight(end));
        let rows = store::reports::fleet_figures(&self.reads.bounded(), from, until).await?;
        let title = format!("{} fleet report: {}", capitalized(period), period.name_of(start));
        let markdown = render::fleet(&title, from, until, &rows);
        Ok(Report { title, from, until, markdown })
    }

    /// Writes the reports of the last complete day and week that are not
    /// written yet, for the projects with actions then and for the fleet,
    /// and keeps the newest `keep` of each kind. Returns the files written.
    pub async fn write_due(&self, now: DateTime<Utc>) -> Result<Vec<PathBuf>, Error> {
        let Some(folder) = &self.config.folder else { return Ok(Vec::new()) };
        let mut written = Vec::new();
        for period in [Period::Daily, Period::Weekly] {
            let (start, end) = period.last_complete(now);
            let name = format!("{}.md", period.name_of(start));
            let active = store::reports::active_projects(&self.reads.bounded(), midnight(start), midnight(end)).await?;
            let mut targets: Vec<(Option<&str>, PathBuf)> = active
                .iter()
                .map(|project| (Some(project.as_str()), folder.join("projects").join(project).join(period.folder())))
                .collect();
            if !active.is_empty() {
                targets.push((None, folder.join("fleet").join(period.folder())));
            }
            for (project, directory) in targets {
                let path = directory.join(&name);
                if path.exists() {
                    continue;
                }
                let report = match project {
                    Some(project) => self.project_report(&ProjectScope::All, project, period, start).await?,
                    None => self.fleet_report(&ProjectScope::All, period, start).await?,
                };
                write_atomically(&path, &report.markdown)
                    .map_err(|error| Error::Unavailable(format!("cannot write {}: {error}", path.display())))?;
                prune(&directory, self.config.keep);
                written.push(path);
            }
        }
        Ok(written)
    }
}

/// What a project's report shows of its window.
pub struct ProjectWindow {
    pub activity: ActivityReport,
    pub deployments: Vec<Action>,
    pub dashboard: Dashboard,
    pub agents: Vec<ActiveAgent>,
    pub drafts: Vec<Draft>,
}

/// Action types that are deployments.
const DEPLOY_TYPES: [&str; 3] = ["deploy", "deployment", "release"];
/// Rows a section lists at most.
const MAX_ROWS: i64 = 50;

fn capitalized(period: Period) -> &'static str {
    match period {
        Period::Daily => "Daily",
        Period::Weekly => "Weekly",
    }
}

fn write_atomically(path: &Path, text: &str) -> std::io::Result<()> {
    let folder = path.parent().expect("a report is in a folder");
    std::fs::create_dir_all(folder)?;
    let mut temporary = tempfile::NamedTempFile::new_in(folder)?;
    std::io::Write::write_all(&mut temporary, text.as_bytes())?;
    temporary.persist(path).map_err(|error| error.error)?;
    Ok(())
}

/// Keeps the newest `keep` reports of a folder (their names sort by date).
fn prune(folder: &Path, keep: usize) {
    let Ok(entries) = std::fs::read_dir(folder) else { return };
    let mut reports: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|extension| extension == "md"))
        .collect();
    reports.sort();
    let excess = reports.len().saturating_sub(keep.max(1));
    for old in &reports[..excess] {
        if let Err(error) = std::fs::remove_file(old) {
            tracing::warn!(%error, path = %old.display(), "cannot remove an old report");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day(text: &str) -> NaiveDate {
        NaiveDate::parse_from_str(text, "%Y-%m-%d").unwrap()
    }

    #[test]
    fn periods_are_the_last_complete_day_and_iso_week() {
        let now = Utc.with_ymd_and_hms(2026, 11, 24, 6, 0, 0).unwrap(); // a Tuesday
        assert_eq!(Period::Daily.last_complete(now), (day("2026-11-23"), day("2026-11-24")));
        assert_eq!(Period::Weekly.last_complete(now), (day("2026-11-16"), day("2026-11-23")));
        assert_eq!(Period::Weekly.name_of(day("2026-11-16")), "2026-W47");
        assert_eq!(Period::Weekly.name_of(day("2024-12-30")), "2025-W01", "the ISO year of a week");
        assert_eq!(Period::Daily.name_of(day("2026-11-23")), "2026-11-23");
    }

    #[test]
    fn only_the_newest_reports_are_kept() {
        let folder = tempfile::tempdir().unwrap();
        for name in ["2026-11-20.md", "2026-11-21.md", "2026-11-22.md", "notes.txt"] {
            std::fs::write(folder.path().join(name), "x").unwrap();
        }
        prune(folder.path(), 2);
        let mut left: Vec<String> = std::fs::read_dir(folder.path())
            .unwrap()
            .map(|entry| entry.unwrap().file_name().into_string().unwrap())
            .collect();
        left.sort();
        assert_eq!(left, ["2026-11-21.md", "2026-11-22.md", "notes.txt"]);
    }
}
