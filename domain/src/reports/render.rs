//! Reports as markdown: a project's window in sections, and the fleet's
//! table; nothing here reads.

use std::fmt::Write as _;

use chrono::{DateTime, Utc};
use lore_store::reports::ProjectFigures;
use lore_types::actions::StoredName as _;

use super::ProjectWindow;

/// A project's report.
pub fn project(title: &str, from: DateTime<Utc>, until: DateTime<Utc>, window: &ProjectWindow) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# {title}\n");
    let _ = writeln!(out, "{} to {} (UTC)\n", from.format("%Y-%m-%d %H:%M"), until.format("%Y-%m-%d %H:%M"));
    summary(&mut out, window);
    deployments(&mut out, window);
    failures(&mut out, window);
    top_actions(&mut out, window);
    agents(&mut out, window);
    qa_summary(&mut out, window);
    drafts(&mut out, window);
    out
}

fn summary(out: &mut String, window: &ProjectWindow) {
    let totals = &window.activity.counts.totals;
    let _ = writeln!(
        out,
        "- **Actions:** {} ({:.1}% succeeded, {} failed)\n- **Active agents:** {}\n- **Deployments:** {}\n\
         - **QA failures:** {}\n- **Drafts waiting for review:** {}\n",
        totals.total,
        totals.success_rate() * 100.0,
        totals.failed,
        window.agents.len(),
        window.deployments.len(),
        window.dashboard.failures,
        window.drafts.len()
    );
}

fn deployments(out: &mut String, window: &ProjectWindow) {
    let _ = writeln!(out, "## Deployments\n");
    if window.deployments.is_empty() {
        let _ = writeln!(out, "None.\n");
        return;
    }
    let _ = writeln!(out, "| when | agent | outcome | epic | error |\n|---|---|---|---|---|");
    for deployment in &window.deployments {
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

fn failures(out: &mut String, window: &ProjectWindow) {
    let _ = writeln!(out, "## Failures\n");
    let (recent, patterns) = (&window.activity.recent_failures, &window.dashboard.top_patterns);
    if recent.is_empty() && patterns.is_empty() {
        let _ = writeln!(out, "None.\n");
    }
    for failure in recent {
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
    if !patterns.is_empty() {
        let _ = writeln!(out, "\nQA patterns that recurred most:\n");
        for pattern in patterns {
            let _ =
                writeln!(out, "- {} ({} times, {})", cell(&pattern.name), pattern.occurrence_count, pattern.category);
        }
    }
    let _ = writeln!(out);
}

fn top_actions(out: &mut String, window: &ProjectWindow) {
    let _ = writeln!(out, "## Top actions\n");
    let by_type = &window.activity.counts.by_action_type;
    if by_type.is_empty() {
        let _ = writeln!(out, "None.\n");
        return;
    }
    let _ = writeln!(out, "| type | actions | succeeded | failed |\n|---|---:|---:|---:|");
    for counts in by_type.iter().take(10) {
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

fn agents(out: &mut String, window: &ProjectWindow) {
    let _ = writeln!(out, "## Active agents\n");
    if window.agents.is_empty() {
        let _ = writeln!(out, "None.\n");
        return;
    }
    let _ = writeln!(out, "| agent | sessions | actions | failed | last seen |\n|---|---:|---:|---:|---|");
    for agent in &window.agents {
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

fn qa_summary(out: &mut String, window: &ProjectWindow) {
    let _ = writeln!(out, "## QA summary\n");
    let dashboard = &window.dashboard;
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
}

fn drafts(out: &mut String, window: &ProjectWindow) {
    let _ = writeln!(out, "## Drafts waiting for review\n");
    if window.drafts.is_empty() {
        let _ = writeln!(out, "None.");
    }
    for draft in &window.drafts {
        let _ = writeln!(
            out,
            "- {} (`lore drafts show {}`), drafted {}",
            cell(&draft.title),
            draft.draft_id,
            draft.created_at.format("%Y-%m-%d")
        );
    }
}

/// The fleet's report: a row per project and their sum.
pub fn fleet(title: &str, from: DateTime<Utc>, until: DateTime<Utc>, rows: &[ProjectFigures]) -> String {
    let mut out = format!(
        "# {title}\n\n{} to {} (UTC)\n\n| project | actions | failed | active agents | QA failures | drafts waiting |\n\
         |---|---:|---:|---:|---:|---:|\n",
        from.format("%Y-%m-%d %H:%M"),
        until.format("%Y-%m-%d %H:%M")
    );
    let mut total = ProjectFigures::default();
    for row in rows {
        total.actions += row.actions;
        total.failed += row.failed;
        total.agents += row.agents;
        total.qa_failures += row.qa_failures;
        total.drafts += row.drafts;
        let ProjectFigures { project, actions, failed, agents, qa_failures, drafts } = row;
        let _ = writeln!(out, "| {} | {actions} | {failed} | {agents} | {qa_failures} | {drafts} |", cell(project));
    }
    let ProjectFigures { actions, failed, agents, qa_failures, drafts, .. } = total;
    let _ = writeln!(out, "| **all** | {actions} | {failed} | {agents} | {qa_failures} | {drafts} |");
    out
}

/// Cells of a markdown table: one line, no pipes.
fn cell(text: &str) -> String {
    text.lines().next().unwrap_or_default().replace('|', "\\|").chars().take(160).collect()
}
