//! `lore eval naming`: is a failure named by the line that explains it?
//!
//! Two kinds of data, each figure per source (a repository, a tool's kind
//! of failure), so a rule that holds on one and not another shows:
//!
//! - **Real agent runs** (`--runs`, `--steps`, the format of `lore eval
//!   replay`): each failed step whose label quotes a line of its output
//!   (not a label the data set made up, `exit 1 (python3)`, `timeout
//!   (...)`, `pytest: ...`) is named as the hooks name it
//!   (`lore_agent::call_index::failure_name`). It is **named right** when
//!   the name's template holds the label's; **named by a report** when the
//!   line it names is a summary, markup, progress or a bare exit code
//!   (`lore_agent::failure_lines::is_report`).
//! - **Tool failures** (`--tool-failures`, LogHub's structured CSV): every
//!   line is one a real tool printed to report its failure, found by the
//!   tool's own markers: the share read as an error line, and the share
//!   read as explaining (an error line that is not a report).
//!
//! The runs' figures are given before (the last line that reads as an
//! error, as the hooks named failures until issue 55) and after. The rule
//! has no
//! parameter fitted to either set, so each source's figure is already a
//! held-out one.

use std::collections::BTreeMap;
use std::path::PathBuf;

use lore_agent::call_index::failure_name;
use lore_agent::failure_lines::{is_error_line, is_report};
use lore_grouping::template::Template;

use crate::grouping::sources::read_structured;
use crate::replay::runs;

#[derive(clap::Args)]
pub struct Args {
    /// Runs, one JSON object a line (as `lore eval replay` reads them).
    #[arg(long, requires = "steps")]
    runs: Option<PathBuf>,
    /// Steps, one JSON object a line.
    #[arg(long, requires = "runs")]
    steps: Option<PathBuf>,
    /// LogHub-format structured CSV files of tool failure lines.
    #[arg(long)]
    tool_failures: Vec<PathBuf>,
}

/// A label the data set made up rather than quoted from the output.
fn quotes_a_line(label: &str) -> bool {
    !(label.starts_with("exit ") || label.starts_with("timeout ") || label.starts_with("pytest: "))
}

/// A label's placeholders (`<N>`, `<HEX>`) as a value Lore's template
/// masks alike.
fn as_output(label: &str) -> String {
    label.replace("<N>", "7").replace("<HEX>", "0x7f")
}

/// The hooks' name before issue 55: the last line that reads as an error,
/// summaries and exit codes included, else the last line.
fn name_before(output: &str) -> Option<String> {
    let lines: Vec<&str> = output.lines().map(str::trim).filter(|line| !line.is_empty()).collect();
    lines.iter().rev().find(|line| is_error_line(line)).or(lines.last()).map(|line| (*line).to_owned())
}

#[derive(Default)]
struct RunCounts {
    labelled: u64,
    right_before: u64,
    right: u64,
    report_before: u64,
    report: u64,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    anyhow::ensure!(
        args.runs.is_some() || !args.tool_failures.is_empty(),
        "give --runs and --steps, or --tool-failures, or both"
    );
    if let (Some(runs), Some(steps)) = (&args.runs, &args.steps) {
        runs_table(&runs::read(runs, steps)?);
    }
    for file in &args.tool_failures {
        tool_failures_table(file)?;
    }
    Ok(())
}

fn runs_table(all: &[runs::Run]) {
    let mut by_repo: BTreeMap<&str, RunCounts> = BTreeMap::new();
    for run in all {
        for step in &run.steps {
            let Some(label) = step.label.failure().filter(|label| quotes_a_line(label)) else { continue };
            let counts = by_repo.entry(run.repo.as_str()).or_default();
            let label = Template::of(&as_output(label)).text();
            let named = failure_name(&step.output);
            let before = name_before(&step.output);
            counts.labelled += 1;
            counts.right += u64::from(named.contains(&label));
            counts.right_before +=
                u64::from(before.as_deref().is_some_and(|line| Template::of(line).text().contains(&label)));
            counts.report_before += u64::from(before.as_deref().is_some_and(is_report));
            let named_line = lore_agent::failure_lines::error_lines(&step.output).pop();
            counts.report += u64::from(named_line.as_deref().is_some_and(is_report));
        }
    }
    println!("Real agent runs: failures whose label quotes a line of the output, by repository");
    println!(
        "{:<22} {:>9} | {:>12} {:>12} | {:>16} {:>16}",
        "repository", "labelled", "right before", "right", "by a report bef.", "by a report"
    );
    let mut all = RunCounts::default();
    for (repo, counts) in &by_repo {
        print_runs_row(repo, counts);
        all.labelled += counts.labelled;
        all.right_before += counts.right_before;
        all.right += counts.right;
        all.report_before += counts.report_before;
        all.report += counts.report;
    }
    print_runs_row("all", &all);
    println!(
        "naming runs labelled={} right_before={:.3} right={:.3} report_before={:.3} report={:.3}",
        all.labelled,
        share(all.right_before, all.labelled),
        share(all.right, all.labelled),
        share(all.report_before, all.labelled),
        share(all.report, all.labelled)
    );
}

fn share(part: u64, whole: u64) -> f64 {
    if whole == 0 { 0.0 } else { part as f64 / whole as f64 }
}

fn print_runs_row(name: &str, counts: &RunCounts) {
    println!(
        "{:<22} {:>9} | {:>12.3} {:>12.3} | {:>16.3} {:>16.3}",
        name,
        counts.labelled,
        share(counts.right_before, counts.labelled),
        share(counts.right, counts.labelled),
        share(counts.report_before, counts.labelled),
        share(counts.report, counts.labelled)
    );
}

fn tool_failures_table(file: &std::path::Path) -> anyhow::Result<()> {
    let lines = read_structured(file)?;
    // kind -> (lines, read as errors, read as explaining)
    let mut by_kind: BTreeMap<String, (u64, u64, u64)> = BTreeMap::new();
    for (content, group) in &lines {
        let kind = group.split('/').next().unwrap_or(group).to_owned();
        let counts = by_kind.entry(kind).or_default();
        let error = is_error_line(content.trim());
        counts.0 += 1;
        counts.1 += u64::from(error);
        counts.2 += u64::from(error && !is_report(content));
    }
    println!("\nTool failures ({}): lines read as explaining, by kind", file.display());
    println!("{:<22} {:>6} {:>8} {:>10}", "kind", "lines", "errors", "explaining");
    let mut total = (0, 0, 0);
    for (kind, (lines, before, after)) in &by_kind {
        println!("{:<22} {:>6} {:>8.3} {:>10.3}", kind, lines, share(*before, *lines), share(*after, *lines));
        total = (total.0 + lines, total.1 + before, total.2 + after);
    }
    println!("{:<22} {:>6} {:>8.3} {:>10.3}", "all", total.0, share(total.1, total.0), share(total.2, total.0));
    println!(
        "naming tool_failures lines={} errors={:.3} explaining={:.3}",
        total.0,
        share(total.1, total.0),
        share(total.2, total.0)
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_made_up_label_is_not_judged_and_placeholders_read_as_values() {
        assert!(!quotes_a_line("exit 16 (python3)") && !quotes_a_line("pytest: Fai..."));
        assert!(quotes_a_line("SyntaxError: invalid syntax"));
        let label = Template::of(&as_output("Error binding parameter <N> - probably unsupported type.")).text();
        let named = failure_name("sqlite3.InterfaceError: Error binding parameter 1 - probably unsupported type.");
        assert!(named.contains(&label), "{named} holds {label}");
    }

    #[test]
    fn before_issue_55_a_summary_named_the_failure() {
        let output = "E   AssertionError: 1 != 2\n===== 1 failed, 3 passed in 0.1s =====";
        assert_eq!(name_before(output).as_deref(), Some("===== 1 failed, 3 passed in 0.1s ====="));
        assert_eq!(failure_name(output), Template::of("E   AssertionError: 1 != 2").text());
    }
}
