//! `lore eval replay`: would Lore have warned real agent runs before they
//! hit a failure earlier runs of the same repository had hit?
//!
//! Each repository is a project; its runs are replayed in time order, and
//! only runs that finished before a run started teach it (see
//! [`simulate`]). When to speak at the call, the [`Strength`] of evidence,
//! is chosen with one repository left out: each repository is scored under
//! the setting the others prefer, so no figure is fitted to the runs it
//! reports on. In process, the bar on a briefing item's worth and the
//! start budget are replayed too, for reading (see [`settings`]).
//! The setting preferred is the one under which a run's context keeps the
//! most, net: every injected token is read again at every later step, and
//! so is the output of a failure a warning could have prevented. The naive
//! baseline briefs each run, at its start, on the three failures most
//! earlier runs hit.
//!
//! By default it replays into the real server at `--server`, through the
//! hooks' own code ([`through_server`]): the briefings at the start count,
//! and the call warnings come from the call index the session-start hook
//! wrote. `--in-process` replays through the call memory (`lore-calls`) in
//! this process, with no server and no briefing: quicker, for the calls
//! alone.

mod chart;
pub(crate) mod runs;
mod simulate;
mod through_server;

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

use anyhow::Context as _;
use indicatif::{ProgressBar, ProgressStyle};
use lore_calls::Strength;

use crate::leave_one_out::{self, Counts as _};
use simulate::{Figures, RunPoint, Setting, Source};

use crate::Channel;

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
    /// Where the SVG chart of coverage against tokens a run, per setting
    /// and for the naive briefings, is written.
    #[arg(long, default_value = "replay-trade-off.svg")]
    trade_off_chart: PathBuf,
    /// Replay under this one setting instead of choosing it with each
    /// repository left out (both flags together).
    #[arg(long, requires = "min_rate")]
    min_sessions: Option<u32>,
    #[arg(long, requires = "min_sessions")]
    min_rate: Option<f64>,
    /// Replay in this process through the call memory alone: no server, no
    /// hooks, no briefing.
    #[arg(long)]
    pub in_process: bool,
    /// Write what each run was told at its start (its briefings) into this
    /// directory, one Markdown file a run.
    #[arg(long, conflicts_with = "in_process")]
    briefings: Option<PathBuf>,
}

/// The settings replayed: first those one is chosen from with each
/// repository left out, every strength at the call (the most cautious
/// first: a tie goes to it), with the shipped bar and budget for briefings.
/// Then, in process (through the server its own setting and the hook's
/// budget decide), every bar and every start budget at the shipped
/// strength, for reading: on these runs the net context they keep swings
/// between budgets on a two-token change of a heading, so it does not
/// choose them. The bar is where a line starts to pay for its tokens
/// (`lore_calls::select`), and the budget keeps a run within 100 tokens
/// with its call warnings.
fn settings(in_process: bool) -> Grid {
    let shipped = Setting::shipped(Strength::default());
    let mut settings = Vec::new();
    for min_rate in [0.4, 0.3, 0.2, 0.15, 0.1, 0.05, 0.02, 0.0] {
        for min_sessions in [5, 3, 2, 1] {
            settings.push(Setting { strength: Strength { min_sessions, min_rate }, ..shipped });
        }
    }
    let choosable = settings.len();
    if in_process {
        for min_worth in [0.3, 0.2, 0.15, 0.1, 0.08, 0.03, 0.0] {
            settings.push(Setting { min_worth, ..shipped });
        }
        for start_tokens in [40, 80, 100, 120, 160] {
            settings.push(Setting { start_tokens, ..shipped });
        }
    }
    Grid { settings, choosable }
}

/// The settings replayed; the first `choosable` are chosen from.
struct Grid {
    settings: Vec<Setting>,
    choosable: usize,
}

fn describe(setting: &Setting) -> String {
    let Setting { strength, min_worth, start_tokens } = setting;
    format!(
        "≥{} sessions, rate ≥{:.2}, worth ≥{min_worth:.2}, start {start_tokens}",
        strength.min_sessions, strength.min_rate
    )
}

/// `--in-process`: the call memory alone, in this process.
pub fn run_in_process(args: Args) -> anyhow::Result<()> {
    let all = read(&args)?;
    evaluate(&args, &all, Source::InProcess)
}

/// Through the real server at `server` and the hooks (which are given
/// `token` too).
pub async fn run(channel: Channel, server: &str, token: Option<&str>, args: Args) -> anyhow::Result<()> {
    let all = read(&args)?;
    let repos = by_repository(&all);
    let bar = ProgressBar::new(all.len() as u64).with_style(
        ProgressStyle::with_template("replaying {bar:40} {pos}/{len} runs into {msg}, {elapsed}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let known = through_server::learn(channel, (server, token), &repos, args.briefings.as_deref(), &bar).await?;
    bar.finish_and_clear();
    evaluate(&args, &all, Source::Server(&known))
}

fn read(args: &Args) -> anyhow::Result<Vec<runs::Run>> {
    if let Some(min_rate) = args.min_rate
        && !(0.0..=1.0).contains(&min_rate)
    {
        anyhow::bail!("--min-rate must be between 0 and 1; {min_rate} is not");
    }
    let all = runs::read(&args.runs, &args.steps)?;
    if all.is_empty() {
        anyhow::bail!("{} holds no runs", args.runs.display());
    }
    Ok(all)
}

fn by_repository(all: &[runs::Run]) -> BTreeMap<&str, Vec<&runs::Run>> {
    let mut repos: BTreeMap<&str, Vec<&runs::Run>> = BTreeMap::new();
    for run in all {
        repos.entry(run.repo.as_str()).or_default().push(run);
    }
    repos
}

/// Scores every setting on every repository, and each repository under
/// the setting the others prefer.
fn evaluate(args: &Args, all: &[runs::Run], source: Source) -> anyhow::Result<()> {
    let repos = by_repository(all);
    let calls: HashMap<&str, Vec<Option<lore_calls::Call>>> =
        all.iter().map(|run| (run.id.as_str(), simulate::calls_of(run))).collect();
    let Grid { settings, choosable } = match (args.min_sessions, args.min_rate) {
        (Some(min_sessions), Some(min_rate)) => {
            Grid { settings: vec![Setting::shipped(Strength { min_sessions, min_rate })], choosable: 1 }
        }
        _ => settings(matches!(source, Source::InProcess)),
    };
    let bar = ProgressBar::new((settings.len() * repos.len()) as u64).with_style(
        ProgressStyle::with_template("scoring {bar:40} {pos}/{len} repository × setting, {elapsed}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    // figures[repository][setting], and each one's run points.
    let mut figures: Vec<Vec<Figures>> = Vec::new();
    let mut points: Vec<Vec<Vec<RunPoint>>> = Vec::new();
    for runs in repos.values() {
        let (row, row_points): (Vec<_>, Vec<_>) = settings
            .iter()
            .map(|setting| {
                bar.inc(1);
                simulate::replay(runs, &calls, *setting, source)
            })
            .unzip();
        figures.push(row);
        points.push(row_points);
    }
    bar.finish_and_clear();
    let sources: Vec<String> = repos.keys().map(|repo| (*repo).to_owned()).collect();

    let per_setting = pooled_per_setting(settings.len(), &figures);
    if settings.len() > 1 {
        print_trade_off(&settings, &per_setting);
    }
    // Chosen by what a run's context keeps, net: every injected token is
    // read again at every later step, and so is a failure's output.
    let choosing: Vec<Vec<Figures>> = figures.iter().map(|row| row[..choosable].to_vec()).collect();
    let folds = leave_one_out::folds(&sources, &choosing, Figures::net_context_per_run);
    println!("\nEach repository under the setting chosen on the others (context tokens saved a run, net);");
    println!("held: calls held once before they ran, passed: of them, calls that would have passed:");
    print_header();
    let mut pooled = Figures::default();
    let mut held_points = Vec::new();
    for (index, fold) in folds.iter().enumerate() {
        let figures = &fold.figures;
        print_row(&fold.left_out, &describe(&settings[fold.chosen]), figures);
        pooled.add(figures);
        held_points.extend_from_slice(&points[index][fold.chosen]);
    }
    print_row("all, held out", "", &pooled);
    let shipped = leave_one_out::chosen_on_all(&choosing, Figures::net_context_per_run);
    println!("chosen on every repository: {}", describe(&settings[shipped]));

    write_charts(args, &held_points, &settings, &per_setting, &pooled)?;
    if let Source::Server(known) = source {
        let withheld: u64 = known.values().map(|known| known.withheld).sum();
        println!("briefing items the injection screen withheld for review (shown to no run): {withheld}");
    }
    print_summary(&pooled);
    Ok(())
}

/// The held-out runs' chart and the trade-off chart of every setting
/// beside the naive briefings, as SVG files.
fn write_charts(
    args: &Args,
    held_points: &[RunPoint],
    settings: &[Setting],
    per_setting: &[Figures],
    pooled: &Figures,
) -> anyhow::Result<()> {
    let svg = chart::svg(held_points, "Recurring failures warned of before they happened (each repository held out)");
    std::fs::write(&args.chart, svg).with_context(|| format!("cannot write the chart to {}", args.chart.display()))?;
    println!("chart: {}", args.chart.display());
    let mut choices: Vec<chart::Choice> = settings
        .iter()
        .zip(per_setting)
        .map(|(setting, pooled)| chart::Choice {
            name: describe(setting),
            tokens: pooled.tokens_per_run(),
            coverage: pooled.coverage(),
            baseline: false,
        })
        .collect();
    for (name, tokens, coverage) in [
        ("naive: three failures", pooled.naive_tokens_per_run(), pooled.naive_coverage()),
        ("naive: five failures", pooled.naive5_tokens_per_run(), pooled.naive5_coverage()),
        ("Lore, each repository left out", pooled.tokens_per_run(), pooled.coverage()),
    ] {
        choices.push(chart::Choice { name: name.to_owned(), tokens, coverage, baseline: true });
    }
    let trade_off =
        chart::trade_off_svg(&choices, "What each setting covers for its tokens (every repository together)");
    std::fs::write(&args.trade_off_chart, trade_off)
        .with_context(|| format!("cannot write the chart to {}", args.trade_off_chart.display()))?;
    println!("trade-off chart: {}", args.trade_off_chart.display());
    Ok(())
}

/// The header of the table of repositories.
fn print_header() {
    println!(
        "{:<22} {:<40} {:>5} {:>9} {:>8} {:>9} {:>8} {:>7} {:>7} {:>5} {:>6} | {:>13} {:>9} {:>7}",
        "repository",
        "setting",
        "runs",
        "recurring",
        "coverage",
        "precision",
        "recovery",
        "briefed",
        "tokens",
        "held",
        "passed",
        "naive cover",
        "precision",
        "tokens"
    );
}

/// What the selector of what Lore says is for, every repository left out
/// in turn: tokens by surface, holds, steps at stake, the naive briefings.
fn print_summary(pooled: &Figures) {
    let per_run = |tokens: u64| if pooled.runs == 0 { 0.0 } else { tokens as f64 / pooled.runs as f64 };
    println!(
        "tokens a run by surface: start {:.1}, prompt {:.1}, call {:.1}, after a failure {:.1} ({} said)",
        per_run(pooled.start_tokens),
        per_run(pooled.prompt_tokens),
        per_run(pooled.tokens),
        per_run(pooled.after_failure_tokens),
        pooled.after_failure
    );
    println!(
        "said right after a failure: {}, of which {} named a command the run later passed with, {} steps after the failure",
        pooled.after_failure, pooled.after_failure_right, pooled.after_failure_steps
    );
    println!(
        "calls held once before they ran (strong evidence, the default mode): {}, of which {} would have passed",
        pooled.held, pooled.held_would_pass
    );
    println!(
        "steps at stake (from a recurring failure to what worked after): {} steps, {} output tokens; warned of before: {:.3} of the steps, {:.3} of the tokens",
        pooled.stake_steps,
        pooled.stake_output_tokens,
        pooled.stake_covered(),
        if pooled.stake_output_tokens == 0 {
            0.0
        } else {
            pooled.stake_output_tokens_covered as f64 / pooled.stake_output_tokens as f64
        }
    );
    println!(
        "naive briefing of three failures: coverage {:.3} at {:.1} tokens a run; of five: {:.3} at {:.1}",
        pooled.naive_coverage(),
        pooled.naive_tokens_per_run(),
        pooled.naive5_coverage(),
        pooled.naive5_tokens_per_run()
    );
    println!(
        "context tokens a run saved, net of what was injected (each token read at every later step): Lore {:.0}, \
         naive three {:.0}; of all Lore warned of, the run hit {:.3}",
        pooled.net_context_per_run(),
        pooled.naive_net_context_per_run(),
        pooled.precision_overall()
    );
    println!(
        "replay runs={} recurring={} coverage={:.3} precision={:.3} tokens_per_run={:.1} steps_at_stake_covered={:.3}",
        pooled.runs,
        pooled.recurring,
        pooled.coverage(),
        pooled.precision(),
        pooled.tokens_per_run(),
        pooled.stake_covered()
    );
}

/// Each setting's figures, every repository together.
fn pooled_per_setting(settings: usize, figures: &[Vec<Figures>]) -> Vec<Figures> {
    (0..settings)
        .map(|index| {
            let mut pooled = Figures::default();
            for row in figures {
                pooled.add(&row[index]);
            }
            pooled
        })
        .collect()
}

/// Every setting on every repository together: what speaking more costs.
fn print_trade_off(settings: &[Setting], per_setting: &[Figures]) {
    println!("The trade-off, every repository together (seen: for reading, not for choosing):");
    println!(
        "{:<40} {:>8} {:>9} {:>8} {:>8} {:>7} {:>5} {:>11} {:>10}",
        "setting", "coverage", "precision", "warnings", "recovery", "tokens", "held", "held passed", "net saved"
    );
    for (setting, pooled) in settings.iter().zip(per_setting) {
        println!(
            "{:<40} {:>8.3} {:>9.3} {:>8} {:>8.3} {:>7.1} {:>5} {:>11} {:>10.0}",
            describe(setting),
            pooled.coverage(),
            pooled.precision(),
            pooled.warnings,
            pooled.recovery_rate(),
            pooled.tokens_per_run(),
            pooled.held,
            pooled.held_would_pass,
            pooled.net_context_per_run()
        );
    }
}

fn print_row(name: &str, setting: &str, figures: &Figures) {
    println!(
        "{:<22} {:<40} {:>5} {:>9} {:>8.3} {:>9.3} {:>8.3} {:>7} {:>7.1} {:>5} {:>6} | {:>13.3} {:>9.3} {:>7.1}",
        name,
        setting,
        figures.runs,
        figures.recurring,
        figures.coverage(),
        figures.precision(),
        figures.recovery_rate(),
        figures.briefed,
        figures.tokens_per_run(),
        figures.held,
        figures.held_would_pass,
        figures.naive_coverage(),
        figures.naive_precision(),
        figures.naive_tokens_per_run()
    );
}

#[cfg(test)]
mod tests;
