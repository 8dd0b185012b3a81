//! One repository's runs replayed in time order under one [`Strength`].
//!
//! What Lore knows at a run's start comes from one of two places:
//! - **the server** ([`Source::Server`]): what the real hooks learned into a
//!   real server from the runs that had finished, the briefings they were
//!   given at session start and with the task, and the call index the
//!   session-start hook wrote (see [`super::through_server`]);
//! - **this process** ([`Source::InProcess`]): the call memory learns each
//!   finished run as the hook's call index learns it
//!   (`lore_agent::call_index::call_of`), with no briefing.
//!
//! At every command of a run Lore is asked what it would say with that
//! call. The data set's labels judge what it said and never feed it: a
//! warning stands for the failure label most often behind its template
//! among the runs Lore learned, so grouping more coarsely cannot raise the
//! figures.

use std::collections::{BTreeMap, HashMap, HashSet};

use lore_agent::call_index::{self, CallIndex};
use lore_agent::checks;
use lore_calls::memory::tokens;
use lore_calls::{Call, CallMemory, Outcome, Shape, Strength};
use lore_grouping::template::Template;

use super::runs::{Ended, Event, Run, timeline};
use crate::commands::leave_one_out::Counts;

/// Briefed at the start by the naive baseline: the most frequent failures.
const NAIVE_BRIEFING: usize = 3;

/// What a replay counts; rates are computed from pooled counts.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Figures {
    pub runs: u64,
    /// A run's failure that an earlier finished run of the repository hit
    /// too, not the reported bug (once per run and label).
    pub recurring: u64,
    /// Recurring failures a call warning named before they happened.
    pub covered: u64,
    /// Covered failures whose warning said what later worked.
    pub recovery_named: u64,
    /// Warnings given at a call (once per run and warning).
    pub warnings: u64,
    /// Warnings followed by that very failure at that call.
    pub followed: u64,
    /// Tokens of the call warnings.
    pub tokens: u64,
    /// Warnings the briefings at the start gave (QA patterns and failures
    /// named from the call index), and every token the briefings injected
    /// (lessons and the rest included).
    pub briefed: u64,
    pub briefing_tokens: u64,
    pub naive_covered: u64,
    pub naive_briefed: u64,
    /// Failures the naive briefing named that the run then hit.
    pub naive_followed: u64,
    pub naive_tokens: u64,
}

impl Counts for Figures {
    fn add(&mut self, other: &Self) {
        self.runs += other.runs;
        self.recurring += other.recurring;
        self.covered += other.covered;
        self.recovery_named += other.recovery_named;
        self.warnings += other.warnings;
        self.followed += other.followed;
        self.tokens += other.tokens;
        self.briefed += other.briefed;
        self.briefing_tokens += other.briefing_tokens;
        self.naive_covered += other.naive_covered;
        self.naive_briefed += other.naive_briefed;
        self.naive_followed += other.naive_followed;
        self.naive_tokens += other.naive_tokens;
    }
}

fn rate(part: u64, whole: u64) -> f64 {
    if whole == 0 { 0.0 } else { part as f64 / whole as f64 }
}

impl Figures {
    pub fn coverage(&self) -> f64 {
        rate(self.covered, self.recurring)
    }
    pub fn precision(&self) -> f64 {
        rate(self.followed, self.warnings)
    }
    pub fn recovery_rate(&self) -> f64 {
        rate(self.recovery_named, self.covered)
    }
    /// Everything Lore injected, at the start and at the calls.
    pub fn tokens_per_run(&self) -> f64 {
        rate(self.tokens + self.briefing_tokens, self.runs)
    }
    pub fn naive_coverage(&self) -> f64 {
        rate(self.naive_covered, self.recurring)
    }
    pub fn naive_precision(&self) -> f64 {
        rate(self.naive_followed, self.naive_briefed)
    }
    pub fn naive_tokens_per_run(&self) -> f64 {
        rate(self.naive_tokens, self.runs)
    }
    /// What a setting is chosen by: the harmonic mean of coverage and
    /// precision, so neither silence nor noise wins.
    pub fn f1(&self) -> f64 {
        let (coverage, precision) = (self.coverage(), self.precision());
        if coverage + precision == 0.0 { 0.0 } else { 2.0 * coverage * precision / (coverage + precision) }
    }
}

/// One run's counts, for the chart of coverage as runs accumulate.
#[derive(Debug, Clone, Copy)]
pub struct RunPoint {
    pub start: i64,
    pub recurring: u64,
    pub covered: u64,
    pub naive_covered: u64,
}

/// What Lore knew at one run's start, read from the server through the
/// hooks: the call index the session-start hook wrote, and what the
/// briefings at the start warned of (the ledger's QA warnings, by their
/// patterns' templates, and the failures named from the call index).
pub struct Known {
    pub index: CallIndex,
    /// The QA patterns the briefings warned of, by template.
    pub patterns: Vec<String>,
    /// The failures they named from the call index, by Lore's names.
    pub failures: Vec<String>,
    /// Tokens of everything the briefings injected.
    pub briefing_tokens: u64,
    /// Items the injection screen withheld from the briefings (held for a
    /// person's review): shown to no one, so they warn of nothing, and
    /// counted so that a screen that holds too much shows.
    pub withheld: u64,
}

/// Where what Lore knows at a run's start comes from.
#[derive(Clone, Copy)]
pub enum Source<'a> {
    /// The call memory, learned in this process; no briefing.
    InProcess,
    /// What the real hooks and server knew, by run id.
    Server(&'a HashMap<String, Known>),
}

/// What the replay learns from a finished run: the in-process call memory,
/// and, for judging only, which labels stand behind each failure name and
/// each error line.
struct Learner {
    memory: CallMemory,
    labels: HashMap<String, BTreeMap<String, u32>>,
    /// Earlier finished runs that hit each labelled failure.
    runs_hit: BTreeMap<String, u32>,
    /// Each labelled failure's error lines, normalized, with its label:
    /// what a briefing's pattern template is judged against.
    failed_lines: Vec<(Vec<Template>, String)>,
}

impl Learner {
    fn learn(&mut self, run: &Run, calls: &[Option<Call>], source: Source) {
        if matches!(source, Source::InProcess) {
            let learned: Vec<Call> = calls.iter().flatten().cloned().collect();
            self.memory.learn(&learned);
        }
        let mut hit = HashSet::new();
        for (step, call) in run.steps.iter().zip(calls) {
            if let (Some(Call { outcome: Outcome::Failed(name), .. }), Some(label)) = (call, step.label.failure()) {
                *self.labels.entry(name.clone()).or_default().entry(label.to_owned()).or_default() += 1;
            }
            if let Some(label) = step.label.failure() {
                hit.insert(label);
                if matches!(source, Source::Server(_)) {
                    let lines = checks::error_lines(&step.output).iter().map(|line| Template::of(line)).collect();
                    self.failed_lines.push((lines, label.to_owned()));
                }
            }
        }
        for label in hit {
            *self.runs_hit.entry(label.to_owned()).or_default() += 1;
        }
    }

    /// The label a failure name stands for: the most frequent behind it.
    fn label_of(&self, name: &str) -> Option<&str> {
        most_frequent(self.labels.get(name)?)
    }

    /// The label a QA pattern's template stands for: the most frequent
    /// among the learned failures with an error line it fits.
    fn label_of_template(&self, template: &str) -> Option<String> {
        let template = Template::from_tokens(template.split(' ').map(str::to_owned).collect());
        let mut labels: BTreeMap<String, u32> = BTreeMap::new();
        for (lines, label) in &self.failed_lines {
            if lines.iter().any(|line| template.similarity(line) == 1.0) {
                *labels.entry(label.clone()).or_default() += 1;
            }
        }
        most_frequent(&labels).map(str::to_owned)
    }

    /// The naive briefing: the failures most runs hit so far.
    fn most_frequent(&self) -> Vec<&str> {
        let mut ranked: Vec<(&String, &u32)> = self.runs_hit.iter().collect();
        ranked.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        ranked.into_iter().take(NAIVE_BRIEFING).map(|(label, _)| label.as_str()).collect()
    }
}

/// The most frequent label, the first by name on a tie.
fn most_frequent(labels: &BTreeMap<String, u32>) -> Option<&str> {
    labels.iter().max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0))).map(|(label, _)| label.as_str())
}

/// Each step as the hook's call index learns it (`None`: no command, or
/// held by the screen), computed once per run.
pub fn calls_of(run: &Run) -> Vec<Option<Call>> {
    run.steps
        .iter()
        .map(|step| {
            let exit_code = match step.ended {
                Ended::Exit(code) => Some(code),
                Ended::Timeout | Ended::NoCommand => None,
            };
            (step.ended != Ended::NoCommand)
                .then(|| call_index::call_of(&step.command, step.ended.failed(), exit_code, &step.output))
                .flatten()
        })
        .collect()
}

/// Replays one repository's runs (any order) under `strength`.
pub fn replay(
    runs: &[&Run],
    calls: &HashMap<&str, Vec<Option<Call>>>,
    strength: Strength,
    source: Source,
) -> (Figures, Vec<RunPoint>) {
    let mut learner = Learner {
        memory: CallMemory::new(),
        labels: HashMap::new(),
        runs_hit: BTreeMap::new(),
        failed_lines: Vec::new(),
    };
    let mut figures = Figures::default();
    let mut points = Vec::with_capacity(runs.len());
    for event in timeline(runs) {
        // Only runs that finished before this one started may teach it.
        let run = match event {
            Event::Finished(done) => {
                learner.learn(done, &calls[done.id.as_str()], source);
                continue;
            }
            Event::Started(run) => run,
        };
        let known = match source {
            Source::Server(known) => known.get(&run.id),
            Source::InProcess => None,
        };
        let before = figures.clone();
        figures.runs += 1;
        let naive = learner.most_frequent();
        figures.naive_briefed += naive.len() as u64;
        figures.naive_tokens +=
            naive.iter().map(|label| tokens(&format!("- Earlier runs failed with: {label}\n"))).sum::<usize>() as u64;
        let mut given: HashSet<(String, String)> = HashSet::new();
        // Labels warned of, and whether the warning named what worked.
        let mut warned: HashMap<String, bool> = HashMap::new();
        if let Some(known) = known {
            figures.briefed += (known.patterns.len() + known.failures.len()) as u64;
            figures.briefing_tokens += known.briefing_tokens;
            let labels = known
                .patterns
                .iter()
                .filter_map(|template| learner.label_of_template(template))
                .chain(known.failures.iter().filter_map(|failure| learner.label_of(failure).map(str::to_owned)));
            for label in labels {
                warned.entry(label).or_default();
            }
        }
        let mut seen: HashSet<&str> = HashSet::new();
        let mut hit: HashSet<&str> = HashSet::new();
        for step in run.steps.iter().filter(|step| step.ended != Ended::NoCommand) {
            let warning = match known {
                Some(known) => known.index.warning_at(&step.command, &Shape::of(&step.command), strength),
                None => learner.memory.warning(&step.command, strength),
            };
            if let Some(warning) = warning
                && given.insert((warning.command.clone(), warning.failure.clone()))
            {
                figures.warnings += 1;
                figures.tokens += tokens(&warning.text()) as u64;
                if let Some(label) = learner.label_of(&warning.failure) {
                    if step.label.failure() == Some(label) {
                        figures.followed += 1;
                    }
                    let named = warned.entry(label.to_owned()).or_default();
                    *named |= warning.recovery.is_some() || warning.fix.is_some();
                }
            }
            let Some(label) = step.label.failure() else { continue };
            hit.insert(label);
            if step.label.sig_in_task_text || !seen.insert(label) || !learner.runs_hit.contains_key(label) {
                continue;
            }
            figures.recurring += 1;
            if let Some(named) = warned.get(label) {
                figures.covered += 1;
                figures.recovery_named += u64::from(*named);
            }
            figures.naive_covered += u64::from(naive.contains(&label));
        }
        figures.naive_followed += naive.iter().filter(|label| hit.contains(*label)).count() as u64;
        points.push(RunPoint {
            start: run.start,
            recurring: figures.recurring - before.recurring,
            covered: figures.covered - before.covered,
            naive_covered: figures.naive_covered - before.naive_covered,
        });
    }
    (figures, points)
}
