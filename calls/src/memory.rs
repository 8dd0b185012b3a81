//! What a project's finished sessions say about a command about to run.
//!
//! Every call is counted under two keys: the command word for word (folded
//! whitespace) and its [`Shape`]. For each key Lore counts the sessions that
//! ran it and, per failure, the sessions in which it failed that way; for
//! each such failure, the command of the same [`Kind`] that passed later in
//! the same session (a test run after a failed test run) is what worked
//! after, counted the same way. Counting sessions rather than calls keeps
//! one session that retries forty times from speaking for forty.
//!
//! A warning is given when the failure is frequent enough to be likely,
//! judged by the lower bound of its rate's Wilson interval, so two failures
//! out of two sessions do not weigh as much as twenty out of twenty.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde::{Deserialize, Serialize};

use crate::policy;
use crate::shape::{self, Shape};

/// z for a 95 % two-sided interval.
const Z: f64 = 1.959_963_984_540_054;
/// A trusted fix is said up to this many characters.
const FIX_CHARS: usize = 200;
/// A command or failure is quoted up to this many characters.
const QUOTE_CHARS: usize = 160;
/// Failures kept in an index by how many sessions hit them: the most
/// frequent, enough for any briefing.
const FREQUENT_KEPT: usize = 100;

/// The failure name of a call that printed nothing, and of one whose
/// output has no line that explains its failure (only a summary or an exit
/// code): a warning names no line for them.
pub const NO_OUTPUT: &str = "(no output)";
pub const NO_ERROR_LINE: &str = "(no error line)";

/// How a template marks a variable (`lore_grouping::template::WILDCARD`).
const VARIABLE: &str = "<*>";

/// Whether a failure has no line to name it by, or a name that keeps no
/// word of its line once its variables are masked (`<*>`, `<*> <*> in
/// <*>`): said, it would take a line and tell the agent nothing. A word is
/// a run of three letters, so that `in` or `at` alone do not count.
///
/// A line that does not read as an error, or only reports on the run
/// ([`crate::failure_lines`]), names no failure either: it is what a tool
/// printed around one, written text that no person
/// reviewed (issue 56), and said as a failure's name it would carry a
/// planted sentence to every later agent. Such a failure is told by what
/// was observed: the command, and how often it failed.
pub fn is_nameless(failure: &str) -> bool {
    let keeps_a_word = failure.split(VARIABLE).any(|constant| {
        let mut letters = 0;
        constant.chars().any(|c| {
            letters = if c.is_alphabetic() { letters + 1 } else { 0 };
            letters >= 3
        })
    });
    failure == NO_OUTPUT
        || failure == NO_ERROR_LINE
        || !keeps_a_word
        || !crate::failure_lines::is_error_line(failure)
        || crate::failure_lines::is_report(failure)
        || crate::prose::is_prose(failure)
}

/// How a call ended, as Lore names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Passed,
    /// Its failure: the template of the pattern it joined.
    Failed(String),
}

/// One call of a session, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    pub command: String,
    pub outcome: Outcome,
}

/// When evidence is strong enough to speak.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Strength {
    /// Sessions in which the call failed that way, at least.
    pub min_sessions: u32,
    /// The lower bound of the 95 % Wilson interval of the share of
    /// sessions that ran the call and failed that way, at least.
    pub min_rate: f64,
}

impl Default for Strength {
    /// What `lore eval replay` chose on every repository of the real agent
    /// runs we develop on (docs/EVALUATION.md, "Warnings at the call").
    fn default() -> Self {
        Self { min_sessions: 1, min_rate: 0.15 }
    }
}

/// What Lore tells the agent with the call.
#[derive(Debug, Clone, PartialEq)]
pub struct CallWarning {
    /// The command as Lore matched it: word for word, or its shape.
    pub command: String,
    pub failure: String,
    /// Earlier sessions in which the call failed that way.
    pub failed_in: u32,
    /// Earlier sessions that made the call.
    pub ran_in: u32,
    pub recovery: Option<Recovery>,
    /// A fix of this failure a person reviewed or a passing task verified
    /// (the project's QA pattern of the same template); set by whoever
    /// knows the project's patterns, never learned from calls.
    pub fix: Option<KnownFix>,
}

/// A trusted fix of a failure: how to avoid it, in the fix's words.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KnownFix {
    /// `reviewed` or `verified`: only trusted fixes speak.
    pub trust: String,
    pub text: String,
}

/// What later worked after the failure, in how many of its sessions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recovery {
    pub command: String,
    pub sessions: u32,
}

#[derive(Debug, Default, Clone, Serialize, Deserialize)]
struct KeyStats {
    sessions: u32,
    failures: BTreeMap<String, FailureStats>,
}

#[derive(Debug, Default, Clone, Serialize, Deserialize)]
struct FailureStats {
    sessions: u32,
    recoveries: BTreeMap<String, u32>,
}

impl FailureStats {
    /// What most of its sessions recovered with, when at least
    /// `min_sessions` did (the first by command on a tie).
    fn recovery(&self, min_sessions: u32) -> Option<Recovery> {
        self.recoveries
            .iter()
            .filter(|(_, sessions)| **sessions >= min_sessions)
            .max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0)))
            .map(|(command, sessions)| Recovery { command: command.clone(), sessions: *sessions })
    }
}

impl KeyStats {
    /// The warning of `failure` at calls of `key`, by these counts.
    fn warning(&self, key: &str, failure: &str, failed: &FailureStats, recovery: Option<Recovery>) -> CallWarning {
        CallWarning {
            command: key[EXACT_KEY.len()..].to_owned(),
            failure: failure.to_owned(),
            failed_in: failed.sessions,
            ran_in: self.sessions,
            recovery,
            fix: None,
        }
    }

    /// The failure a call of this key is warned of: the one whose rate's
    /// lower bound is highest, when the evidence is strong enough.
    fn warned(&self, strength: Strength) -> Option<(&String, &FailureStats)> {
        self.failures
            .iter()
            .filter(|(_, failed)| failed.sessions >= strength.min_sessions)
            .map(|(failure, failed)| (failure, failed, wilson_lower(failed.sessions, self.sessions)))
            .filter(|(_, _, rate)| *rate >= strength.min_rate)
            .max_by(|a, b| a.2.total_cmp(&b.2).then(b.0.cmp(a.0)))
            .map(|(failure, failed, _)| (failure, failed))
    }
}

/// A project's finished sessions, as counts; see the module. It is kept
/// on disk as JSON (the hook's local index).
#[derive(Debug, Default, Clone, Serialize, Deserialize)]
pub struct CallMemory {
    keys: HashMap<String, KeyStats>,
    sessions: u32,
    /// Sessions that hit each failure, whatever the command.
    #[serde(default)]
    failures: BTreeMap<String, u32>,
    /// The same counts weighted toward recent sessions.
    #[serde(default)]
    recent: Recent,
}

/// Sessions, and per failure the sessions that hit it, each weighted by
/// how recent it is: a session's weight halves every [`HALF_LIFE`]
/// sessions learned after it. A failure a project has since fixed fades
/// instead of being said for ever.
#[derive(Debug, Default, Clone, Serialize, Deserialize)]
struct Recent {
    sessions: f64,
    failures: BTreeMap<String, f64>,
}

/// Sessions after which a session counts half: a few weeks of an active
/// project's work.
pub const HALF_LIFE: f64 = 20.0;
/// How far a failure's share is shrunk toward the project's base rate: as
/// if this many more sessions had each hit it at the base rate (the
/// empirical-Bayes estimate of a rate with a prior of that weight).
pub const PRIOR_SESSIONS: f64 = 5.0;

/// A failure earlier sessions hit, as a briefing names it.
#[derive(Debug, Clone, PartialEq)]
pub struct FrequentFailure {
    pub failure: String,
    pub sessions: u32,
    /// The chance this session hits it ([`CallMemory::chance`]).
    pub chance: f64,
}

/// The heading of a briefing's failures earlier sessions hit.
pub const FREQUENT_HEADING: &str = "## Failures earlier sessions here hit\n";

/// A failure earlier sessions hit as a briefing says it: one screened line,
/// in code, and the counts.
pub fn frequent_line(failure: &str, sessions: u32, of_sessions: u32) -> String {
    format!("- {} ({sessions} of {of_sessions} sessions)\n", code(failure))
}

/// How a command's word-for-word key and its shape's key begin.
const EXACT_KEY: &str = "= ";
const SHAPE_KEY: &str = "~ ";

/// The two keys of a command: word for word, then its shape.
fn keys(command: &str, shape: &Shape) -> Option<[String; 2]> {
    (!shape.is_empty())
        .then(|| [format!("{EXACT_KEY}{}", shape::exact(command)), format!("{SHAPE_KEY}{}", shape.text())])
}

impl CallMemory {
    pub fn new() -> Self {
        Self::default()
    }

    /// Sessions learned so far.
    pub fn sessions(&self) -> u32 {
        self.sessions
    }

    /// Only the keys that ever failed: a call no session saw fail can never
    /// be warned of, so an index need not hold it.
    pub fn pruned(mut self) -> Self {
        self.keys.retain(|_, stats| !stats.failures.is_empty());
        if self.failures.len() > FREQUENT_KEPT {
            let kept: BTreeMap<String, u32> = self
                .ranked_failures()
                .into_iter()
                .take(FREQUENT_KEPT)
                .map(|(failure, sessions)| (failure.clone(), sessions))
                .collect();
            self.recent.failures.retain(|failure, _| kept.contains_key(failure));
            self.failures = kept;
        }
        self
    }

    /// Failures by the sessions that hit them, most first (then by name).
    fn ranked_failures(&self) -> Vec<(&String, u32)> {
        let mut ranked: Vec<(&String, u32)> =
            self.failures.iter().map(|(failure, sessions)| (failure, *sessions)).collect();
        ranked.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        ranked
    }

    /// The `count` failures this session most likely hits
    /// ([`Self::chance`]): one earlier session is enough to be offered,
    /// since the chance, shrunk toward the base rate, already says how
    /// little one session shows. A failure a call is warned of is among
    /// them: the same failure often comes from another command than the one
    /// warned of
    /// (on the development runs, naming them at the start too covered 0.05
    /// more of the recurring failures for 6 tokens a run). A failure with
    /// no line to name it by is not: its name says nothing.
    pub fn frequent_failures(&self, count: usize) -> Vec<FrequentFailure> {
        let base = self.base_rate();
        let mut frequent: Vec<FrequentFailure> = self
            .failures
            .iter()
            .filter(|(failure, _)| !is_nameless(failure))
            .map(|(failure, sessions)| FrequentFailure {
                failure: failure.clone(),
                sessions: *sessions,
                chance: self.chance_at(failure, base),
            })
            .collect();
        frequent.sort_by(|a, b| b.chance.total_cmp(&a.chance).then(b.sessions.cmp(&a.sessions)));
        frequent.truncate(count);
        frequent
    }

    /// The chance that the next session hits `failure`: the recency-weighted
    /// share of sessions that hit it, shrunk toward the project's base rate
    /// (the mean share of its failures) by [`PRIOR_SESSIONS`].
    pub fn chance(&self, failure: &str) -> f64 {
        self.chance_at(failure, self.base_rate())
    }

    /// [`Self::chance`] with the base rate read once for many failures.
    fn chance_at(&self, failure: &str, base: f64) -> f64 {
        let hit = self.recent.failures.get(failure).copied().unwrap_or(0.0);
        (hit + PRIOR_SESSIONS * base) / (self.recent.sessions + PRIOR_SESSIONS)
    }

    /// The mean recency-weighted share of sessions the project's failures
    /// were hit in.
    fn base_rate(&self) -> f64 {
        let recent = &self.recent;
        if recent.failures.is_empty() || recent.sessions <= 0.0 {
            return 0.0;
        }
        recent.failures.values().sum::<f64>() / (recent.sessions * recent.failures.len() as f64)
    }

    /// Every failure some call would be warned of under `strength`: what a
    /// briefing may leave to the call.
    pub fn warned_failures(&self, strength: Strength) -> BTreeSet<String> {
        self.keys.values().filter_map(|stats| stats.warned(strength)).map(|(failure, _)| failure.clone()).collect()
    }

    /// Learns one finished session's calls, in the order they ran; sessions
    /// are learned oldest first, so the recent weigh most.
    pub fn learn(&mut self, calls: &[Call]) {
        self.sessions += 1;
        let shapes: Vec<Shape> = calls.iter().map(|call| Shape::of(&call.command)).collect();
        let mut ran: BTreeSet<String> = BTreeSet::new();
        let mut failed: BTreeMap<(String, String), Option<String>> = BTreeMap::new();
        for (index, (call, shape)) in calls.iter().zip(&shapes).enumerate() {
            let Some(keys) = keys(&call.command, shape) else { continue };
            ran.extend(keys.iter().cloned());
            let Outcome::Failed(failure) = &call.outcome else { continue };
            let recovery = recovery(&calls[index + 1..], &shapes[index + 1..], shape);
            for key in keys {
                let known = failed.entry((key, failure.clone())).or_default();
                if known.is_none() {
                    known.clone_from(&recovery);
                }
            }
        }
        for key in ran {
            self.keys.entry(key).or_default().sessions += 1;
        }
        let hit: BTreeSet<&String> = calls
            .iter()
            .filter_map(|call| match &call.outcome {
                Outcome::Failed(failure) => Some(failure),
                Outcome::Passed => None,
            })
            .collect();
        let decay = 0.5_f64.powf(1.0 / HALF_LIFE);
        self.recent.sessions = self.recent.sessions * decay + 1.0;
        for weight in self.recent.failures.values_mut() {
            *weight *= decay;
        }
        for failure in hit {
            *self.failures.entry(failure.clone()).or_default() += 1;
            *self.recent.failures.entry(failure.clone()).or_default() += 1.0;
        }
        for ((key, failure), recovery) in failed {
            let stats = self.keys.entry(key).or_default().failures.entry(failure).or_default();
            stats.sessions += 1;
            if let Some(recovery) = recovery {
                *stats.recoveries.entry(recovery).or_default() += 1;
            }
        }
    }

    /// The warning for `command`, when the evidence is strong enough: the
    /// word-for-word key first, then the shape.
    pub fn warning(&self, command: &str, strength: Strength) -> Option<CallWarning> {
        self.warning_of(command, &Shape::of(command), strength)
    }

    /// [`Self::warning`] for a command whose shape was read already.
    pub fn warning_of(&self, command: &str, shape: &Shape, strength: Strength) -> Option<CallWarning> {
        keys(command, shape)?.iter().find_map(|key| {
            let stats = self.keys.get(key)?;
            let (failure, failed) = stats.warned(strength)?;
            Some(stats.warning(key, failure, failed, failed.recovery(strength.min_sessions)))
        })
    }

    /// What worked after `command` (of `shape`) failed with `failure` in
    /// earlier sessions: the recovery most of them found, at least two (one
    /// session is no pattern), by the word-for-word key, else the shape.
    /// What a hook says right after the same failure, whatever the strength
    /// of the evidence before the call: the failure has happened.
    pub fn recovery_after(&self, command: &str, shape: &Shape, failure: &str) -> Option<CallWarning> {
        keys(command, shape)?.iter().find_map(|key| {
            let stats = self.keys.get(key)?;
            let failed = stats.failures.get(failure)?;
            let recovery = failed.recovery(REFUSE.min_sessions)?;
            Some(stats.warning(key, failure, failed, Some(recovery)))
        })
    }
}

/// The first later call of the same kind that passed, by its shape, when it
/// is another command and one Lore may offer.
fn recovery(later: &[Call], shapes: &[Shape], failed: &Shape) -> Option<String> {
    let kind = failed.kind()?;
    later
        .iter()
        .zip(shapes)
        .find(|(call, shape)| {
            call.outcome == Outcome::Passed && shape.kind().as_ref() == Some(&kind) && *shape != failed
        })
        .filter(|(call, _)| policy::refusal(&call.command).is_none())
        .map(|(_, shape)| shape.text())
}

/// The lower bound of the Wilson score interval of `successes` in `trials`.
pub fn wilson_lower(successes: u32, trials: u32) -> f64 {
    if trials == 0 {
        return 0.0;
    }
    let (n, p) = (f64::from(trials), f64::from(successes) / f64::from(trials));
    let z2 = Z * Z;
    let centre = p + z2 / (2.0 * n);
    let spread = Z * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    ((centre - spread) / (1.0 + z2 / n)).max(0.0)
}

impl CallWarning {
    /// Whether the evidence is strong enough to hold the call once before
    /// it runs (see [`REFUSE`]).
    pub fn is_strong(&self) -> bool {
        self.failed_in >= REFUSE.min_sessions && wilson_lower(self.failed_in, self.ran_in) >= REFUSE.min_rate
    }

    /// The warning as the agent reads it, on one line: the command, how
    /// often it failed, the failure, and what worked after.
    ///
    /// The failure is a single error line's template that the injection
    /// screen let through ([`lore_screen`], applied where calls are
    /// learned), so it is quoted in backticks, as a command is, with no data
    /// marks: those are for free text, and would double its tokens.
    pub fn text(&self) -> String {
        let mut text = format!(
            "Lore: {} failed in {} of {} earlier sessions here",
            code(&self.command),
            self.failed_in,
            self.ran_in,
        );
        if !is_nameless(&self.failure) {
            text.push_str(&format!(" ({})", code(&self.failure)));
        }
        if let Some(recovery) = &self.recovery {
            text.push_str(&format!(
                "; what worked after: {} ({} of {})",
                code(&recovery.command),
                recovery.sessions,
                self.failed_in
            ));
        }
        if let Some(fix) = &self.fix {
            text.push_str(&format!("; how to avoid it ({} fix): {}", one_line(&fix.trust), one_line(&fix.text).trim()));
        }
        text.push('.');
        text
    }

    /// What is said right after the call failed as it did before: what
    /// worked after (the model has just read the failure).
    pub fn after_failure_text(&self) -> Option<String> {
        let recovery = self.recovery.as_ref()?;
        Some(format!(
            "Lore: {} failed this way in {} of {} earlier sessions here; what worked after: {} ({} of {}).",
            code(&self.command),
            self.failed_in,
            self.ran_in,
            code(&recovery.command),
            recovery.sessions,
            self.failed_in
        ))
    }

    /// The reason a held call is given instead of its output: the warning,
    /// and that the same call runs when made again.
    pub fn refusal_text(&self) -> String {
        format!("{} Lore held this call once, before it ran; make it again to run it.", self.text())
    }
}

/// When a call is held once before it runs rather than warned of beside
/// its result. A hold costs the agent one step when the call would have
/// passed; when it would have failed, it saves the failed step and the step
/// from the failure to what worked after (1-2 on real runs: issue 55). A
/// hold pays when the chance of the failure is over 1/3, so the lower bound
/// of its 95 % interval must be, and one session is no pattern.
pub const REFUSE: Strength = Strength { min_sessions: 2, min_rate: 1.0 / 3.0 };

/// A single-line quote in backticks, at most [`QUOTE_CHARS`].
fn code(text: &str) -> String {
    lore_screen::fence::code(text, QUOTE_CHARS)
}

/// Text on one line, without backticks, cut: a trusted fix as a warning
/// says it.
fn one_line(text: &str) -> String {
    text.chars().map(|c| if c.is_control() || c == '`' { ' ' } else { c }).take(FIX_CHARS).collect()
}

/// Tokens a text costs a model: four characters each, the injection
/// ledger's estimate (`lore_types::injections::estimate_tokens`), so both count
/// alike.
pub fn tokens(text: &str) -> usize {
    text.chars().count().div_ceil(4)
}

#[cfg(test)]
mod tests;
