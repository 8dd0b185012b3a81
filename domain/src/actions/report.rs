//! Activity reports: what a project's agents did over a window.

use std::fmt::Write as _;

use chrono::{DateTime, Utc};

use lore_types::actions::Action;
use lore_types::actions::{ActivityCounts, Counts};

/// Width of the longest bar in the markdown chart.
const CHART_WIDTH: usize = 30;

/// An activity report.
#[derive(Debug, Clone, PartialEq)]
pub struct ActivityReport {
    pub project: String,
    pub from: DateTime<Utc>,
    pub until: DateTime<Utc>,
    pub counts: ActivityCounts,
    pub recent_failures: Vec<Action>,
}

impl ActivityReport {
    /// The most frequent action type; ties go to the alphabetically first.
    pub fn most_common_action_type(&self) -> Option<&str> {
        self.counts.by_action_type.first().map(|counts| counts.key.as_str())
    }

    /// The day with the most actions; ties go to the earliest.
    pub fn busiest_day(&self) -> Option<&str> {
        let mut busiest: Option<&Counts> = None;
        for day in &self.counts.by_day {
            if busiest.is_none_or(|best| day.total > best.total) {
                busiest = Some(day);
            }
        }
        busiest.map(|counts| counts.key.as_str())
    }

    /// The report as markdown, with a bar chart of actions per day.
    pub fn to_markdown(&self) -> String {
        let mut out = String::new();
        let totals = &self.counts.totals;
        let _ = writeln!(out, "# Activity of {}\n", self.project);
        let _ =
            writeln!(out, "{} to {} (UTC)\n", self.from.format("%Y-%m-%d %H:%M"), self.until.format("%Y-%m-%d %H:%M"));
        let _ = writeln!(out, "- **Actions:** {}", totals.total);
        let _ = writeln!(out, "- **Success rate:** {:.1}%", totals.success_rate() * 100.0);
        let _ = writeln!(out, "- **Failures:** {} (blocked: {})", totals.failed, totals.blocked);
        let _ = writeln!(out, "- **Most common action:** {}", self.most_common_action_type().unwrap_or("-"));
        let _ = writeln!(out, "- **Busiest day:** {}", self.busiest_day().unwrap_or("-"));

        if !self.counts.by_day.is_empty() {
            let _ = writeln!(out, "\n## Actions per day\n\n```text");
            let max = self.counts.by_day.iter().map(|day| day.total).max().unwrap_or(1).max(1);
            for day in &self.counts.by_day {
                let width = ((day.total as f64 / max as f64) * CHART_WIDTH as f64).round() as usize;
                let _ = writeln!(
                    out,
                    "{} {:<CHART_WIDTH$} {:>6}  {:>5.1}% ok",
                    day.key,
                    "█".repeat(width.max(usize::from(day.total > 0))),
                    day.total,
                    day.success_rate() * 100.0
                );
            }
            let _ = writeln!(out, "```");
        }
        if !self.counts.by_action_type.is_empty() {
            let _ = writeln!(
                out,
                "\n## By action type\n\n| type | actions | success rate | failed |\n|---|---:|---:|---:|"
            );
            for counts in &self.counts.by_action_type {
                let _ = writeln!(
                    out,
                    "| {} | {} | {:.1}% | {} |",
                    counts.key,
                    counts.total,
                    counts.success_rate() * 100.0,
                    counts.failed
                );
            }
        }
        if !self.counts.by_outcome.is_empty() {
            let _ = writeln!(out, "\n## By outcome\n\n| outcome | actions |\n|---|---:|");
            for counts in &self.counts.by_outcome {
                let _ = writeln!(out, "| {} | {} |", counts.key, counts.total);
            }
        }
        if !self.recent_failures.is_empty() {
            let _ = writeln!(out, "\n## Recent failures\n");
            for failure in &self.recent_failures {
                let action = &failure.action;
                let error = action.error.lines().next().unwrap_or_default();
                let _ = writeln!(
                    out,
                    "- {} `{}` {}{}",
                    action.occurred_at.format("%Y-%m-%d %H:%M:%S"),
                    action.action_type,
                    if action.epic_id.is_empty() { String::new() } else { format!("({}) ", action.epic_id) },
                    error.replace('|', "\\|")
                );
            }
        }
        out
    }
}
