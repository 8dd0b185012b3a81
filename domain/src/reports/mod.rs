//! Daily and weekly reports a supervisor reads each morning: per project,
//! deployments, failures, top actions, active agents, the QA summary and
//! the drafts waiting for review; and one fleet-wide report over every
//! project, for admins.
//!
//! The leader writes the last complete day's and week's reports into
//! PostgreSQL (`periodic_reports`), for the projects that had actions then
//! and for the fleet, keeping the newest `reports.keep` of each kind: every
//! replica reads them, and none needs a disk of its own. A report is
//! written once and read as it was written; a period without a stored
//! report (the one in progress, or one from before the leader ran) is
//! rendered on request. With `reports.folder` set, each stored report is
//! also exported as a file (`projects/<project>/daily/2026-11-23.md`,
//! `projects/<project>/weekly/2026-W47.md`, `fleet/...`), for a single
//! host whose people read a folder.
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
use lore_store as store;
use lore_store::replicas::ReadPools;
use lore_store::reports::{ActiveAgent, StoredReport};
use lore_types::actions::Action;
use lore_types::actions::query::ActionFilter;
use lore_types::knowledge::drafts::{Draft, DraftStatus};
use lore_types::qa::{Dashboard, DashboardQuery};
use lore_types::scope::ProjectScope;

/// `[reports]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ReportsConfig {
    /// A folder the stored reports are also exported to, as files.
    pub folder: Option<PathBuf>,
    /// Reports of each kind kept per project (and for the fleet), in the
    /// database and in the folder.
    pub keep: usize,
    /// How often the leader looks for a report that is due.
    pub interval_secs: u64,
}

impl Default for ReportsConfig {
    fn default() -> Self {
        Self { folder: None, keep: 90, interval_secs: 300 }
    }
}

/// A report's period.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Period {
    Daily,
    Weekly,
}

impl Period {
    /// Its name in the database, in folders and on the wire.
    pub fn as_str(self) -> &'static str {
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

/// A report, as stored or rendered now.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    pub title: String,
    pub from: DateTime<Utc>,
    pub until: DateTime<Utc>,
    pub markdown: String,
    /// When the leader stored it; `None` when rendered for this request.
    pub written_at: Option<DateTime<Utc>>,
}

impl Report {
    fn stored(stored: StoredReport) -> Self {
        Self {
            title: stored.title,
            from: midnight(stored.period_start),
            until: midnight(stored.period_end),
            markdown: stored.markdown,
            written_at: Some(stored.written_at),
        }
    }
}

/// What the leader's look at the reports came to.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Written {
    /// Titles of the reports stored.
    pub stored: Vec<String>,
    /// Files exported.
    pub exported: Vec<PathBuf>,
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

    /// A project's report of the period that holds `day` (the fleet's,
    /// one row per project, for `None`): the stored one, else one rendered
    /// now.
    pub async fn report(
        &self,
        scope: &ProjectScope,
        project: Option<&str>,
        period: Period,
        day: NaiveDate,
    ) -> Result<Report, Error> {
        readable(scope, project)?;
        let (start, _) = period.containing(day);
        match store::reports::report(&self.reads.bounded(), period.as_str(), project.unwrap_or(FLEET), start).await? {
            Some(stored) => Ok(Report::stored(stored)),
            None => self.render(project, period, day).await,
        }
    }

    async fn render(&self, project: Option<&str>, period: Period, day: NaiveDate) -> Result<Report, Error> {
        match project {
            Some(project) => self.render_project(project, period, day).await,
            None => self.render_fleet(period, day).await,
        }
    }

    async fn render_project(&self, project: &str, period: Period, day: NaiveDate) -> Result<Report, Error> {
        let (start, end) = period.containing(day);
        let (from, until) = (midnight(start), midnight(end));
        let title = format!("{} report of {project}: {}", capitalized(period), period.name_of(start));
        let figures = self.project_figures(&ProjectScope::All, project, from, until).await?;
        let markdown = render::project(&title, from, until, &figures);
        Ok(Report { title, from, until, markdown, written_at: None })
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

    async fn render_fleet(&self, period: Period, day: NaiveDate) -> Result<Report, Error> {
        let (start, end) = period.containing(day);
        let (from, until) = (midnight(start), midnight(end));
        let rows = store::reports::fleet_figures(&self.reads.bounded(), from, until).await?;
        let title = format!("{} fleet report: {}", capitalized(period), period.name_of(start));
        let markdown = render::fleet(&title, from, until, &rows);
        Ok(Report { title, from, until, markdown, written_at: None })
    }

    /// The stored reports of a project (the fleet's for `None`), newest
    /// first, from before `before` when given; without their text.
    pub async fn history(
        &self,
        scope: &ProjectScope,
        project: Option<&str>,
        period: Period,
        before: Option<NaiveDate>,
        limit: i64,
    ) -> Result<Vec<Report>, Error> {
        readable(scope, project)?;
        let stored = store::reports::report_history(
            &self.reads.bounded(),
            period.as_str(),
            project.unwrap_or(FLEET),
            before,
            limit,
        )
        .await?;
        Ok(stored.into_iter().map(Report::stored).collect())
    }

    /// Stores the reports of the last complete day and week that are not
    /// stored yet, for the projects with actions then and for the fleet,
    /// exports them to the folder when one is set, and keeps the newest
    /// `keep` of each kind. Only the leader calls it; a second caller
    /// stores nothing twice.
    pub async fn write_due(&self, now: DateTime<Utc>) -> Result<Written, Error> {
        let primary = self.reads.primary();
        let mut written = Written::default();
        for period in [Period::Daily, Period::Weekly] {
            let (start, end) = period.last_complete(now);
            let active = store::reports::active_projects(primary, midnight(start), midnight(end)).await?;
            let mut projects: Vec<Option<&str>> = active.iter().map(|project| Some(project.as_str())).collect();
            if !active.is_empty() {
                projects.push(None);
            }
            for project in projects {
                let name = project.unwrap_or(FLEET);
                let report = match store::reports::report(primary, period.as_str(), name, start).await? {
                    Some(stored) => Report::stored(stored),
                    None => {
                        let report = self.render(project, period, start).await?;
                        let stored = StoredReport {
                            period: period.as_str().to_owned(),
                            project: name.to_owned(),
                            period_start: start,
                            period_end: end,
                            title: report.title.clone(),
                            markdown: report.markdown.clone(),
                            written_at: now,
                        };
                        if store::reports::store_report(primary, &stored).await? {
                            written.stored.push(report.title.clone());
                        }
                        report
                    }
                };
                if let Some(path) = self.export(project, period, start, &report)? {
                    written.exported.push(path);
                }
            }
        }
        store::reports::prune_reports(primary, self.config.keep.max(1) as i64).await?;
        Ok(written)
    }

    /// Writes a stored report into the folder, unless there is no folder or
    /// the file is there already.
    fn export(
        &self,
        project: Option<&str>,
        period: Period,
        start: NaiveDate,
        report: &Report,
    ) -> Result<Option<PathBuf>, Error> {
        let Some(folder) = &self.config.folder else { return Ok(None) };
        let directory = match project {
            Some(project) => folder.join("projects").join(project).join(period.as_str()),
            None => folder.join("fleet").join(period.as_str()),
        };
        let path = directory.join(format!("{}.md", period.name_of(start)));
        if path.exists() {
            return Ok(None);
        }
        write_atomically(&path, &report.markdown)
            .map_err(|error| Error::Unavailable(format!("cannot export the report to {}: {error}", path.display())))?;
        prune(&directory, self.config.keep);
        Ok(Some(path))
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

/// Whether `scope` may read the reports of `project` (the fleet's for
/// `None`: tokens of every project only).
fn readable(scope: &ProjectScope, project: Option<&str>) -> Result<(), Error> {
    match project {
        Some(project) => scope.require(project),
        None if !matches!(scope, ProjectScope::All) => {
            Err(Error::PermissionDenied("the fleet report is for tokens of every project (admin)".into()))
        }
        _ => Ok(()),
    }
}

/// The project name of the fleet's reports.
const FLEET: &str = "";

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
