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
use lore_agent::failure_lines;
use lore_agent::hooks::record;
use lore_calls::memory::{self, tokens};
use lore_calls::select::{self, Candidate, MIN_WORTH, VALUE_SEEN};
use lore_calls::{Call, CallMemory, Outcome, Shape, Strength, shape};
use lore_grouping::template::Template;

use super::runs::{Ended, Event, Run, timeline};
use crate::leave_one_out::Counts;

/// Briefed at the start by the naive baselines: the three, and the five,
/// most frequent failures.
const NAIVE_BRIEFING: usize = 3;
const NAIVE_BRIEFING_LONGER: usize = 5;

/// What a replay varies: when a call is warned of, and (in process only:
/// through the server, its own settings and the hook's budget decide) what
/// a briefing item must be worth to be said and the session-start budget.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Setting {
    pub strength: Strength,
    pub min_worth: f64,
    pub start_tokens: usize,
}

impl Setting {
    /// `strength` at the call, with the bar and the start budget Lore
    /// ships with.
    pub fn shipped(strength: Strength) -> Self {
        Self { strength, min_worth: MIN_WORTH, start_tokens: lore_agent::hooks::START_TOKENS as usize }
    }
}

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
    /// What was said right after a failure earlier sessions recovered from
    /// (when nothing was said of it before the call), and its tokens.
    pub after_failure: u64,
    pub after_failure_tokens: u64,
    /// Of those, how many named a command the run later passed with, and
    /// the steps the run took from the failure to it (what the message
    /// could have saved).
    pub after_failure_right: u64,
    pub after_failure_steps: u64,
    /// Warnings strong enough to hold the call once before it runs (the
    /// default mode, `CallWarning::is_strong`), and those of them whose
    /// call then passed: each such hold cost the agent a step.
    pub held: u64,
    pub held_would_pass: u64,
    /// Failures (by label) the briefings at the start named, and of them
    /// those the run then hit: the briefings' own precision.
    pub start_labels: u64,
    pub start_labels_hit: u64,
    /// Warnings the briefings at the start gave (QA patterns and failures
    /// named from the call index), and every token the briefings injected
    /// (lessons and the rest included), at session start and with the
    /// task's prompt.
    pub briefed: u64,
    pub start_tokens: u64,
    pub prompt_tokens: u64,
    /// Steps at stake: for each recurring failure that the run recovered
    /// from, the steps from the failure to what worked after (the next
    /// passing command of the same kind) and the tokens of their output;
    /// and those of covered failures, which a warning could have saved.
    pub stake_steps: u64,
    pub stake_steps_covered: u64,
    pub stake_output_tokens: u64,
    pub stake_output_tokens_covered: u64,
    /// What every token costs: it stays in the context and is read again
    /// at every later step. Spent: each injected token times the steps left
    /// in its run; saved: the output of each covered failure's steps at
    /// stake times the steps left after it (what a warning that prevents
    /// the failure keeps out of the context).
    pub context_spent: u64,
    pub context_saved: u64,
    /// The same for the naive briefing of three failures.
    pub naive_context_spent: u64,
    pub naive_context_saved: u64,
    pub naive_covered: u64,
    pub naive_briefed: u64,
    /// Failures the naive briefing named that the run then hit.
    pub naive_followed: u64,
    pub naive_tokens: u64,
    /// The naive briefing of five failures.
    pub naive5_covered: u64,
    pub naive5_tokens: u64,
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
        self.after_failure += other.after_failure;
        self.after_failure_tokens += other.after_failure_tokens;
        self.after_failure_right += other.after_failure_right;
        self.after_failure_steps += other.after_failure_steps;
        self.held += other.held;
        self.held_would_pass += other.held_would_pass;
        self.briefed += other.briefed;
        self.start_labels += other.start_labels;
        self.start_labels_hit += other.start_labels_hit;
        self.start_tokens += other.start_tokens;
        self.prompt_tokens += other.prompt_tokens;
        self.stake_steps += other.stake_steps;
        self.stake_steps_covered += other.stake_steps_covered;
        self.stake_output_tokens += other.stake_output_tokens;
        self.stake_output_tokens_covered += other.stake_output_tokens_covered;
        self.context_spent += other.context_spent;
        self.context_saved += other.context_saved;
        self.naive_context_spent += other.naive_context_spent;
        self.naive_context_saved += other.naive_context_saved;
        self.naive5_covered += other.naive5_covered;
        self.naive5_tokens += other.naive5_tokens;
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
        rate(self.tokens + self.after_failure_tokens + self.start_tokens + self.prompt_tokens, self.runs)
    }
    /// The share of the steps at stake whose failure was warned of before.
    pub fn stake_covered(&self) -> f64 {
        rate(self.stake_steps_covered, self.stake_steps)
    }
    pub fn naive5_coverage(&self) -> f64 {
        rate(self.naive5_covered, self.recurring)
    }
    pub fn naive5_tokens_per_run(&self) -> f64 {
        rate(self.naive5_tokens, self.runs)
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
    /// Context tokens a run saved, net of what Lore's tokens cost it.
    pub fn net_context_per_run(&self) -> f64 {
        (self.context_saved as f64 - self.context_spent as f64) / self.runs.max(1) as f64
    }
    pub fn naive_net_context_per_run(&self) -> f64 {
        (self.naive_context_saved as f64 - self.naive_context_spent as f64) / self.runs.max(1) as f64
    }
    /// Of everything Lore warned of, at the start and at the calls, the
    /// share the run then hit.
    pub fn precision_overall(&self) -> f64 {
        rate(self.followed + self.start_labels_hit, self.warnings + self.start_labels)
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
    /// Tokens of everything the briefings injected, at session start and
    /// with the task's prompt.
    pub start_tokens: u64,
    pub prompt_tokens: u64,
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
                    let lines =
                        failure_lines::error_lines(&step.output).iter().map(|line| Template::of(line)).collect();
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

    /// The naive briefing: the `count` failures most runs hit so far.
    fn most_frequent(&self, count: usize) -> Vec<&str> {
        let mut ranked: Vec<(&String, &u32)> = self.runs_hit.iter().collect();
        ranked.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        ranked.into_iter().take(count).map(|(label, _)| label.as_str()).collect()
    }
}

/// The most frequent label, the first by name on a tie.
fn most_frequent(labels: &BTreeMap<String, u32>) -> Option<&str> {
    labels.iter().max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0))).map(|(label, _)| label.as_str())
}

/// The steps from the failure at `failed` to what worked after (the next
/// command of the same kind that passed), and the tokens of their output:
/// what the run paid for the failure. `None` when nothing of its kind
/// passed later in the run.
fn at_stake(steps: &[super::runs::Step], failed: usize) -> Option<(u64, u64)> {
    let kind = Shape::of(&steps[failed].command).kind()?;
    let recovered = steps[failed + 1..]
        .iter()
        .position(|step| step.ended == Ended::Exit(0) && Shape::of(&step.command).kind().as_ref() == Some(&kind))?;
    let paid = &steps[failed..=failed + recovered];
    Some((paid.len() as u64, paid.iter().map(|step| tokens(&step.output) as u64).sum()))
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
            // What the action log keeps of a failed call, as the hook
            // records it, is what the index learns from.
            let error = if step.ended.failed() { record::kept_error(&step.output) } else { String::new() };
            (step.ended != Ended::NoCommand)
                .then(|| call_index::call_of(&step.command, step.ended.failed(), exit_code, &error))
                .flatten()
        })
        .collect()
}

/// What the session-start briefing says in process, as the hook offers
/// the call index's failures and the server's selector keeps those worth
/// their tokens: the failures said, and the tokens.
fn start_briefing(memory: &CallMemory, setting: Setting) -> (Vec<String>, u64) {
    let offered = memory.frequent_failures(call_index::FREQUENT_AT_START);
    let lines: Vec<String> = offered
        .iter()
        .map(|failure| memory::frequent_line(&failure.failure, failure.sessions, memory.sessions()))
        .collect();
    let candidates: Vec<Candidate> = offered
        .iter()
        .zip(&lines)
        .map(|(failure, line)| Candidate { chance: failure.chance, value: VALUE_SEEN, tokens: tokens(line) })
        .collect();
    let budget = setting.start_tokens.saturating_sub(tokens(memory::FREQUENT_HEADING));
    let chosen = select::fill(&candidates, budget, setting.min_worth);
    if chosen.is_empty() {
        return (Vec::new(), 0);
    }
    let said = chosen.iter().map(|&index| offered[index].failure.clone()).collect();
    let spent = tokens(memory::FREQUENT_HEADING) + chosen.iter().map(|&index| candidates[index].tokens).sum::<usize>();
    (said, spent as u64)
}

/// What the run's briefings warned of before its first call (the server's,
/// or the call memory's start briefing in process), counted in `figures`:
/// each label with whether a warning named what worked (none yet).
fn warned_at_start(
    learner: &Learner,
    known: Option<&Known>,
    setting: Setting,
    source: Source,
    run: &Run,
    figures: &mut Figures,
) -> HashMap<String, bool> {
    let mut warned: HashMap<String, bool> = HashMap::new();
    if let Some(known) = known {
        figures.briefed += (known.patterns.len() + known.failures.len()) as u64;
        figures.start_tokens += known.start_tokens;
        figures.prompt_tokens += known.prompt_tokens;
        figures.context_spent += (known.start_tokens + known.prompt_tokens) * run.steps.len() as u64;
        let labels = known
            .patterns
            .iter()
            .filter_map(|template| learner.label_of_template(template))
            .chain(known.failures.iter().filter_map(|failure| learner.label_of(failure).map(str::to_owned)));
        for label in labels {
            warned.entry(label).or_default();
        }
    } else if matches!(source, Source::InProcess) {
        let (said, spent) = start_briefing(&learner.memory, setting);
        figures.briefed += said.len() as u64;
        figures.start_tokens += spent;
        figures.context_spent += spent * run.steps.len() as u64;
        for failure in said {
            if let Some(label) = learner.label_of(&failure) {
                warned.entry(label.to_owned()).or_default();
            }
        }
    }
    warned
}

/// Right after a failed call, what the post-tool-use hook would say: the
/// call that worked after the same failure before, when not told already;
/// counted in `figures` with whether the run reached it.
fn after_failure(
    memory: &CallMemory,
    known: Option<&Known>,
    (run, at, step): (&Run, usize, &super::runs::Step),
    calls: &[Option<Call>],
    given: &mut HashSet<(String, String)>,
    figures: &mut Figures,
) {
    if let Some(Some(Call { outcome: Outcome::Failed(failure), .. })) = calls.get(at) {
        let shape = Shape::of(&step.command);
        let memory = known.map_or(memory, |known| &known.index.memory);
        let told =
            [shape::exact(&step.command), shape.text()].into_iter().any(|key| given.contains(&(key, failure.clone())));
        if let Some(after) = memory.recovery_after(&step.command, &shape, failure)
            && !told
            && given.insert((after.command.clone(), failure.clone()))
            && let Some(text) = after.after_failure_text()
        {
            figures.after_failure += 1;
            figures.after_failure_tokens += tokens(&text) as u64;
            figures.context_spent += (tokens(&text) * (run.steps.len() - at)) as u64;
            let named = after.recovery.as_ref().map(|recovery| recovery.command.as_str());
            let reached = run.steps[at + 1..].iter().position(|later| {
                later.ended == Ended::Exit(0) && Some(Shape::of(&later.command).text().as_str()) == named
            });
            if let Some(steps) = reached {
                figures.after_failure_right += 1;
                figures.after_failure_steps += steps as u64 + 1;
            }
        }
    }
}

/// The naive briefings (the three and the five most frequent failures of
/// earlier runs), counted in `figures` as if each run had been given them.
fn naive_briefings<'a>(learner: &'a Learner, run: &Run, figures: &mut Figures) -> (Vec<&'a str>, Vec<&'a str>) {
    let naive = learner.most_frequent(NAIVE_BRIEFING);
    let naive5 = learner.most_frequent(NAIVE_BRIEFING_LONGER);
    let naive_tokens = |labels: &[&str]| {
        labels.iter().map(|label| tokens(&format!("- Earlier runs failed with: {label}\n"))).sum::<usize>() as u64
    };
    figures.naive_briefed += naive.len() as u64;
    let naive_spent = naive_tokens(&naive);
    figures.naive_tokens += naive_spent;
    figures.naive_context_spent += naive_spent * run.steps.len() as u64;
    figures.naive5_tokens += naive_tokens(&naive5);
    (naive, naive5)
}

/// A failure earlier runs hit, hit again at step `at`: covered when it was
/// warned of (`named`: with what worked), and what was at stake, for Lore
/// and for the naive briefings.
fn score_recurring(
    figures: &mut Figures,
    (run, at): (&Run, usize),
    named: Option<bool>,
    (naive, naive5): (&[&str], &[&str]),
    label: &str,
) {
    figures.recurring += 1;
    let stake = at_stake(&run.steps, at);
    if let Some(named) = named {
        figures.covered += 1;
        figures.recovery_named += u64::from(named);
        if let Some((steps, output_tokens)) = stake {
            figures.stake_steps_covered += steps;
            figures.stake_output_tokens_covered += output_tokens;
            figures.context_saved += output_tokens * (run.steps.len() - at) as u64;
        }
    }
    if let Some((steps, output_tokens)) = stake {
        figures.stake_steps += steps;
        figures.stake_output_tokens += output_tokens;
    }
    figures.naive_covered += u64::from(naive.contains(&label));
    if let Some((_, output_tokens)) = stake.filter(|_| naive.contains(&label)) {
        figures.naive_context_saved += output_tokens * (run.steps.len() - at) as u64;
    }
    figures.naive5_covered += u64::from(naive5.contains(&label));
}

/// A warning the pre-tool-use hook gave before step `at` (held when it is
/// strong), counted in `figures`; its failure's label is marked warned of.
fn warned_at_call(
    learner: &Learner,
    warning: &lore_calls::memory::CallWarning,
    (run, at, step): (&Run, usize, &super::runs::Step),
    warned: &mut HashMap<String, bool>,
    figures: &mut Figures,
) {
    figures.warnings += 1;
    let text = if warning.is_strong() {
        figures.held += 1;
        figures.held_would_pass += u64::from(!step.ended.failed());
        warning.refusal_text()
    } else {
        warning.text()
    };
    figures.tokens += tokens(&text) as u64;
    figures.context_spent += (tokens(&text) * (run.steps.len() - at)) as u64;
    if let Some(label) = learner.label_of(&warning.failure) {
        if step.label.failure() == Some(label) {
            figures.followed += 1;
        }
        let named = warned.entry(label.to_owned()).or_default();
        *named |= warning.recovery.is_some() || warning.fix.is_some();
    }
}

/// Replays one repository's runs (any order) under `setting`.
pub fn replay(
    runs: &[&Run],
    calls: &HashMap<&str, Vec<Option<Call>>>,
    setting: Setting,
    source: Source,
) -> (Figures, Vec<RunPoint>) {
    let strength = setting.strength;
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
        let (naive, naive5) = naive_briefings(&learner, run, &mut figures);
        let mut given: HashSet<(String, String)> = HashSet::new();
        // Labels warned of, and whether the warning named what worked.
        let mut warned = warned_at_start(&learner, known, setting, source, run, &mut figures);
        let at_start: Vec<String> = warned.keys().cloned().collect();
        let mut seen: HashSet<&str> = HashSet::new();
        let mut hit: HashSet<&str> = HashSet::new();
        for (at, step) in run.steps.iter().enumerate().filter(|(_, step)| step.ended != Ended::NoCommand) {
            let warning = match known {
                Some(known) => known.index.warning_at(&step.command, &Shape::of(&step.command), strength),
                None => learner.memory.warning(&step.command, strength),
            };
            if let Some(warning) = warning
                && given.insert((warning.command.clone(), warning.failure.clone()))
            {
                warned_at_call(&learner, &warning, (run, at, step), &mut warned, &mut figures);
            }
            // Right after a failure, as the post-tool-use hook answers.
            after_failure(&learner.memory, known, (run, at, step), &calls[run.id.as_str()], &mut given, &mut figures);
            let Some(label) = step.label.failure() else { continue };
            hit.insert(label);
            if step.label.sig_in_task_text || !seen.insert(label) || !learner.runs_hit.contains_key(label) {
                continue;
            }
            score_recurring(&mut figures, (run, at), warned.get(label).copied(), (&naive, &naive5), label);
        }
        figures.naive_followed += naive.iter().filter(|label| hit.contains(*label)).count() as u64;
        figures.start_labels += at_start.len() as u64;
        figures.start_labels_hit += at_start.iter().filter(|label| hit.contains(label.as_str())).count() as u64;
        points.push(RunPoint {
            start: run.start,
            recurring: figures.recurring - before.recurring,
            covered: figures.covered - before.covered,
            naive_covered: figures.naive_covered - before.naive_covered,
        });
    }
    (figures, points)
}
