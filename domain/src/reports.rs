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

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use chrono::{DateTime, Datelike as _, Duration, NaiveDate, TimeZone as _, Utc};
use serde::{Deserialize, Serialize};
use sqlx::{PgPool, Row as _};

use crate::Error;
use crate::actions::ActionLog;
use crate::knowledge::KnowledgeBase;
use crate::qa::QaLearning;
use lore_model::actions::StoredName as _;
use lore_model::actions::query::ActionFilter;
use lore_model::knowledge::drafts::DraftStatus;
use lore_model::qa::DashboardQuery;
use lore_model::scope::ProjectScope;
use lore_store::replicas::ReadPools;

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

/// Cells of a markdown table: one line, no pipes.
fn cell(text: &str) -> String {
    text.lines().next().unwrap_or_default().replace('|', "\\|").chars().take(160).collect()
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
        let filter =
            ActionFilter { project: project.to_owned(), from: Some(from), until: Some(until), ..Default::default() };
        let activity = self.actions.activity_report(scope, &filter, 10).await?;
        let deployments = ActionFilter { action_types: DEPLOY_TYPES.map(str::to_owned).to_vec(), ..filter.clone() };
        let deployments = lore_store::actions::page(
            &self.reads.bounded(),
            scope,
            &deployments,
            None,
            lore_store::actions::Direction::Ascending,
            MAX_ROWS,
        )
        .await?;
        let dashboard = self
            .qa
            .dashboard(
                scope,
                &DashboardQuery {
                    project: project.to_owned(),
                    from,
                    until,
                    category: None,
                    agent_id: None,
                    top_patterns: 5,
                },
            )
            .await?;
        let agents = active_agents(&self.reads.bounded(), project, from, until).await?;
        let drafts = self.knowledge.list_drafts(scope, project, DraftStatus::Pending, MAX_ROWS, None).await?;

        let title = format!("{} report of {project}: {}", capitalized(period), period.name_of(start));
        let mut out = String::new();
        let totals = &activity.counts.totals;
        let _ = writeln!(out, "# {title}\n");
        let _ = writeln!(out, "{} to {} (UTC)\n", from.format("%Y-%m-%d %H:%M"), until.format("%Y-%m-%d %H:%M"));
        let _ = writeln!(
            out,
            "- **Actions:** {} ({:.1}% succeeded, {} failed)\n- **Active agents:** {}\n- **Deployments:** {}\n\
             - **QA failures:** {}\n- **Drafts waiting for review:** {}\n",
            totals.total,
            totals.success_rate() * 100.0,
            totals.failed,
            agents.len(),
            deployments.len(),
            dashboard.failures,
            drafts.len()
        );

        let _ = writeln!(out, "## Deployments\n");
        if deployments.is_empty() {
            let _ = writeln!(out, "None.\n");
        } else {
            let _ = writeln!(out, "| when | agent | outcome | epic | error |\n|---|---|---|---|---|");
            for deployment in &deployments {
                let action = &deployment.action;
                let _ = writeln!(
                    out,
                    "| {} | {} | {} | {} | {} |",
                    action.occurred_at.format("%Y-%m-%d %H:%M"),
                    cell(&action.agent_id),
                    action.outcome.as_str(),
                    cell(&action.epic_id),
                    cell(&action.error)
                );
            }
            let _ = writeln!(out);
        }

        let _ = writeln!(out, "## Failures\n");
        if activity.recent_failures.is_empty() && dashboard.top_patterns.is_empty() {
            let _ = writeln!(out, "None.\n");
        }
        for failure in &activity.recent_failures {
            let action = &failure.action;
            let _ = writeln!(
                out,
                "- {} `{}` by {}: {}",
                action.occurred_at.format("%Y-%m-%d %H:%M"),
                cell(&action.action_type),
                cell(&action.agent_id),
                cell(&action.error)
            );
        }
        if !dashboard.top_patterns.is_empty() {
            let _ = writeln!(out, "\nQA patterns that recurred most:\n");
            for pattern in &dashboard.top_patterns {
                let _ = writeln!(
                    out,
                    "- {} ({} times, {})",
                    cell(&pattern.name),
                    pattern.occurrence_count,
                    pattern.category
                );
            }
        }
        let _ = writeln!(out);

        let _ = writeln!(out, "## Top actions\n");
        if activity.counts.by_action_type.is_empty() {
            let _ = writeln!(out, "None.\n");
        } else {
            let _ = writeln!(out, "| type | actions | succeeded | failed |\n|---|---:|---:|---:|");
            for counts in activity.counts.by_action_type.iter().take(10) {
                let _ = writeln!(
                    out,
                    "| {} | {} | {:.1}% | {} |",
                    cell(&counts.key),
                    counts.total,
                    counts.success_rate() * 100.0,
                    counts.failed
                );
            }
            let _ = writeln!(out);
        }

        let _ = writeln!(out, "## Active agents\n");
        if agents.is_empty() {
            let _ = writeln!(out, "None.\n");
        } else {
            let _ = writeln!(out, "| agent | sessions | actions | failed | last seen |\n|---|---:|---:|---:|---|");
            for agent in &agents {
                let _ = writeln!(
                    out,
                    "| {} | {} | {} | {} | {} |",
                    cell(&agent.agent_id),
                    agent.sessions,
                    agent.actions,
                    agent.failed,
                    agent.last_seen.format("%Y-%m-%d %H:%M")
                );
            }
            let _ = writeln!(out);
        }

        let _ = writeln!(out, "## QA summary\n");
        let tasks = &dashboard.tasks;
        let comparison = &dashboard.comparison;
        let _ = writeln!(
            out,
            "- **Failures captured:** {} ({} resolved)\n- **Tasks with a QA result:** {} ({} failed, {} passed the \
             first time)\n- **Warnings shown:** {}; prevention effectiveness {}\n- **Missed opportunities:** {}\n\
             - **Shown against held out:** {} of {} against {} of {} tasks failed on a warned pattern (p = {:.3})\n",
            dashboard.failures,
            dashboard.resolved,
            tasks.tasks,
            tasks.failed,
            tasks.passed_first_time,
            dashboard.warnings_delivered,
            match dashboard.prevented + dashboard.failed_anyway {
                0 => "not measured yet".to_owned(),
                judged => format!("{:.0}%", dashboard.prevented as f64 / judged as f64 * 100.0),
            },
            dashboard.missed_opportunities,
            comparison.shown.counts.failed,
            comparison.shown.counts.tasks,
            comparison.held_out.counts.failed,
            comparison.held_out.counts.tasks,
            comparison.p_value
        );

        let _ = writeln!(out, "## Drafts waiting for review\n");
        if drafts.is_empty() {
            let _ = writeln!(out, "None.");
        }
        for draft in &drafts {
            let _ = writeln!(
                out,
                "- {} (`lore drafts show {}`), drafted {}",
                cell(&draft.title),
                draft.draft_id,
                draft.created_at.format("%Y-%m-%d")
            );
        }
        Ok(Report { title, from, until, markdown: out })
    }

    /// Every project's figures of the period that holds `day`, one row each.
    pub async fn fleet_report(&self, scope: &ProjectScope, period: Period, day: NaiveDate) -> Result<Report, Error> {
        if !matches!(scope, ProjectScope::All) {
            return Err(Error::PermissionDenied("the fleet report is for tokens of every project (admin)".into()));
        }
        let (start, end) = period.containing(day);
        let (from, until) = (midnight(start), midnight(end));
        let rows = sqlx::query(
            "SELECT p.name,
                    (SELECT count(*) FROM actions a WHERE a.project = p.name AND a.occurred_at >= $1 AND a.occurred_at < $2)
                        AS actions,
                    (SELECT count(*) FROM actions a WHERE a.project = p.name AND a.occurred_at >= $1 AND a.occurred_at < $2
                        AND a.outcome = 'failure') AS failed,
                    (SELECT count(DISTINCT s.agent_id) FROM sessions s WHERE s.project = p.name AND s.started_at < $2
                        AND coalesce(s.ended_at, s.last_activity_at) >= $1) AS agents,
                    (SELECT count(*) FROM qa_failures f WHERE f.project = p.name AND f.occurred_at >= $1
                        AND f.occurred_at < $2) AS qa_failures,
                    (SELECT count(*) FROM knowledge_drafts d WHERE d.project = p.name AND d.status = 'pending') AS drafts
             FROM projects p ORDER BY p.name",
        )
        .bind(from)
        .bind(until)
        .fetch_all(&self.reads.bounded())
        .await?;
        let title = format!("{} fleet report: {}", capitalized(period), period.name_of(start));
        let mut out = format!(
            "# {title}\n\n{} to {} (UTC)\n\n| project | actions | failed | active agents | QA failures | drafts waiting |\n\
             |---|---:|---:|---:|---:|---:|\n",
            from.format("%Y-%m-%d %H:%M"),
            until.format("%Y-%m-%d %H:%M")
        );
        let mut total = [0i64; 5];
        for row in &rows {
            let figures: [i64; 5] =
                [row.get("actions"), row.get("failed"), row.get("agents"), row.get("qa_failures"), row.get("drafts")];
            for (sum, value) in total.iter_mut().zip(figures) {
                *sum += value;
            }
            let name: String = row.get("name");
            let [actions, failed, agents, qa_failures, drafts] = figures;
            let _ = writeln!(out, "| {} | {actions} | {failed} | {agents} | {qa_failures} | {drafts} |", cell(&name));
        }
        let [actions, failed, agents, qa_failures, drafts] = total;
        let _ = writeln!(out, "| **all** | {actions} | {failed} | {agents} | {qa_failures} | {drafts} |");
        Ok(Report { title, from, until, markdown: out })
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
            let active: Vec<String> = sqlx::query_scalar(
                "SELECT name FROM projects p WHERE EXISTS (SELECT 1 FROM actions a WHERE a.project = p.name
                     AND a.occurred_at >= $1 AND a.occurred_at < $2) ORDER BY name",
            )
            .bind(midnight(start))
            .bind(midnight(end))
            .fetch_all(&self.reads.bounded())
            .await?;
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

struct ActiveAgent {
    agent_id: String,
    sessions: i64,
    actions: i64,
    failed: i64,
    last_seen: DateTime<Utc>,
}

/// Agents with a session open during the window, busiest first.
async fn active_agents(
    pool: &PgPool,
    project: &str,
    from: DateTime<Utc>,
    until: DateTime<Utc>,
) -> Result<Vec<ActiveAgent>, Error> {
    let rows = sqlx::query(
        "SELECT s.agent_id, count(DISTINCT s.session_id) AS sessions,
                (SELECT count(*) FROM actions a WHERE a.project = $1 AND a.agent_id = s.agent_id
                   AND a.occurred_at >= $2 AND a.occurred_at < $3) AS actions,
                (SELECT count(*) FROM actions a WHERE a.project = $1 AND a.agent_id = s.agent_id
                   AND a.occurred_at >= $2 AND a.occurred_at < $3 AND a.outcome = 'failure') AS failed,
                max(least(s.last_activity_at, $3)) AS last_seen
         FROM sessions s
         WHERE s.project = $1 AND s.started_at < $3 AND coalesce(s.ended_at, s.last_activity_at) >= $2
         GROUP BY s.agent_id ORDER BY actions DESC, s.agent_id LIMIT $4",
    )
    .bind(project)
    .bind(from)
    .bind(until)
    .bind(MAX_ROWS)
    .fetch_all(pool)
    .await?;
    Ok(rows
        .iter()
        .map(|row| ActiveAgent {
            agent_id: row.get("agent_id"),
            sessions: row.get("sessions"),
            actions: row.get("actions"),
            failed: row.get("failed"),
            last_seen: row.get("last_seen"),
        })
        .collect())
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
