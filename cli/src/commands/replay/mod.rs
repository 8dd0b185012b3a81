//! `lore eval replay`: would Lore have warned real agent runs before they
//! hit a failure earlier runs of the same repository had hit?
//!
//! Each repository is a project; its runs are replayed in time order, and
//! only runs that finished before a run started teach it (see
//! [`simulate`]). When to speak, the [`Strength`] of evidence, is chosen
//! with one repository left out: each repository is scored under the
//! setting the others prefer, so no figure is fitted to the runs it
//! reports on. The naive baseline briefs each run, at its start, on the
//! three failures most earlier runs hit.
//!
//! This replays through Lore's call memory (`lore-calls`), in this process;
//! the hooks and the server that will hold the memory are not in the loop.

mod chart;
mod runs;
mod simulate;

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

use anyhow::Context as _;
use indicatif::{ProgressBar, ProgressStyle};
use lore_calls::Strength;

use super::leave_one_out::{self, Counts as _};
use simulate::{Figures, RunPoint};

#[derive(clap::Args)]
pub struct Args {
    /// Runs, one JSON object a line (traj_id, repo, start_ts, end_ts).
    #[arg(long)]
    runs: PathBuf,
    /// Steps, one JSON object a line (traj_id, step, command, output,
    /// exit_code_or_status, is_failure, error_sig, sig_in_task_text).
    #[arg(long)]
    steps: PathBuf,
    /// Where the SVG chart of coverage as runs accumulate is written.
    #[arg(long, default_value = "replay-coverage.svg")]
    chart: PathBuf,
    /// Replay under this one setting instead of choosing it with each
    /// repository left out (both flags together).
    #[arg(long, requires = "min_rate")]
    min_sessions: Option<u32>,
    #[arg(long, requires = "min_sessions")]
    min_rate: Option<f64>,
}

/// The settings tried, the most cautious first (a tie goes to it).
fn settings() -> Vec<Strength> {
    let mut settings = Vec::new();
    for min_rate in [0.4, 0.3, 0.2, 0.15, 0.1, 0.05, 0.02, 0.0] {
        for min_sessions in [5, 3, 2, 1] {
            settings.push(Strength { min_sessions, min_rate });
        }
    }
    settings
}

fn describe(strength: &Strength) -> String {
    format!("≥{} sessions, rate ≥{:.2}", strength.min_sessions, strength.min_rate)
}

pub fn run(args: Args) -> anyhow::Result<()> {
    if let Some(min_rate) = args.min_rate
        && !(0.0..=1.0).contains(&min_rate)
    {
        anyhow::bail!("--min-rate must be between 0 and 1; {min_rate} is not");
    }
    let all = runs::read(&args.runs, &args.steps)?;
    let mut repos: BTreeMap<&str, Vec<&runs::Run>> = BTreeMap::new();
    for run in &all {
        repos.entry(run.repo.as_str()).or_default().push(run);
    }
    if repos.is_empty() {
        anyhow::bail!("{} holds no runs", args.runs.display());
    }
    let calls: HashMap<&str, Vec<Option<lore_calls::Call>>> =
        all.iter().map(|run| (run.id.as_str(), simulate::calls_of(run))).collect();
    let settings = match (args.min_sessions, args.min_rate) {
        (Some(min_sessions), Some(min_rate)) => vec![Strength { min_sessions, min_rate }],
        _ => settings(),
    };
    let bar = ProgressBar::new((settings.len() * repos.len()) as u64).with_style(
        ProgressStyle::with_template("replaying {bar:40} {pos}/{len} repository × setting, {elapsed}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    // figures[repository][setting], and each one's run points.
    let mut figures: Vec<Vec<Figures>> = Vec::new();
    let mut points: Vec<Vec<Vec<RunPoint>>> = Vec::new();
    for runs in repos.values() {
        let (row, row_points): (Vec<_>, Vec<_>) = settings
            .iter()
            .map(|strength| {
                bar.inc(1);
                simulate::replay(runs, &calls, *strength)
            })
            .unzip();
        figures.push(row);
        points.push(row_points);
    }
    bar.finish_and_clear();
    let sources: Vec<String> = repos.keys().map(|repo| (*repo).to_owned()).collect();

    if settings.len() > 1 {
        print_trade_off(&settings, &figures);
    }
    let folds = leave_one_out::folds(&sources, &figures, Figures::f1);
    println!("\nEach repository under the setting chosen on the others (F1 of coverage and precision):");
    println!(
        "{:<22} {:<26} {:>5} {:>9} {:>8} {:>9} {:>8} {:>7} | {:>13} {:>9} {:>7}",
        "repository",
        "setting",
        "runs",
        "recurring",
        "coverage",
        "precision",
        "recovery",
        "tokens",
        "naive cover",
        "precision",
        "tokens"
    );
    let mut pooled = Figures::default();
    let mut held_points = Vec::new();
    for (index, fold) in folds.iter().enumerate() {
        let figures = &fold.figures;
        print_row(&fold.left_out, &describe(&settings[fold.chosen]), figures);
        pooled.add(figures);
        held_points.extend_from_slice(&points[index][fold.chosen]);
    }
    print_row("all, held out", "", &pooled);
    let shipped = leave_one_out::chosen_on_all(&figures, Figures::f1);
    println!("chosen on every repository: {}", describe(&settings[shipped]));

    let svg = chart::svg(&held_points, "Recurring failures warned of before they happened (each repository held out)");
    std::fs::write(&args.chart, svg).with_context(|| format!("cannot write the chart to {}", args.chart.display()))?;
    println!("chart: {}", args.chart.display());
    println!(
        "replay runs={} recurring={} coverage={:.3} precision={:.3} tokens_per_run={:.1}",
        pooled.runs,
        pooled.recurring,
        pooled.coverage(),
        pooled.precision(),
        pooled.tokens_per_run()
    );
    Ok(())
}

/// Every setting on every repository together: what speaking more costs.
fn print_trade_off(settings: &[Strength], figures: &[Vec<Figures>]) {
    println!("The trade-off, every repository together (seen: for reading, not for choosing):");
    println!(
        "{:<26} {:>8} {:>9} {:>8} {:>8} {:>7}",
        "setting", "coverage", "precision", "warnings", "recovery", "tokens"
    );
    for (index, strength) in settings.iter().enumerate() {
        let mut pooled = Figures::default();
        for row in figures {
            pooled.add(&row[index]);
        }
        println!(
            "{:<26} {:>8.3} {:>9.3} {:>8} {:>8.3} {:>7.1}",
            describe(strength),
            pooled.coverage(),
            pooled.precision(),
            pooled.warnings,
            pooled.recovery_rate(),
            pooled.tokens_per_run()
        );
    }
}

fn print_row(name: &str, setting: &str, figures: &Figures) {
    println!(
        "{:<22} {:<26} {:>5} {:>9} {:>8.3} {:>9.3} {:>8.3} {:>7.1} | {:>13.3} {:>9.3} {:>7.1}",
        name,
        setting,
        figures.runs,
        figures.recurring,
        figures.coverage(),
        figures.precision(),
        figures.recovery_rate(),
        figures.tokens_per_run(),
        figures.naive_coverage(),
        figures.naive_precision(),
        figures.naive_tokens_per_run()
    );
}

#[cfg(test)]
mod tests;
