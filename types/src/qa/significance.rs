//! Whether warnings change anything: the failure rate of tasks that saw a
//! warning against tasks it was held out from, each with its Wilson score
//! interval, and a one-sided Fisher exact test of the difference.
//!
//! Fisher's test, not a z-test: a pattern's groups are small (a handful of
//! held-out tasks), where the normal approximation claims significance it
//! does not have.

use statrs::distribution::{ContinuousCDF as _, DiscreteCDF as _, Hypergeometric, Normal};

/// How many tasks of a group failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Counts {
    pub tasks: u64,
    pub failed: u64,
}

/// A group's rate and its interval.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct GroupRate {
    pub counts: Counts,
    pub rate: f64,
    pub low: f64,
    pub high: f64,
}

/// Shown against held out.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Comparison {
    pub shown: GroupRate,
    pub held_out: GroupRate,
    pub p_value: f64,
    pub significant: bool,
    pub significance: f64,
    /// Tasks still to come (both groups, in today's proportion) before a
    /// difference of today's size would be found at `significance` with
    /// 80% power; `None` while there is no difference in the right
    /// direction to size (or no group yet), and 0 once significant.
    pub tasks_needed: Option<u64>,
}

impl Comparison {
    /// `significance` is the level the effect must reach (0.05: 95%); the
    /// intervals are at 1 - significance.
    pub fn new(shown: Counts, held_out: Counts, significance: f64) -> Self {
        let p_value = fewer_failures_p_value(shown, held_out);
        Self {
            shown: GroupRate::new(shown, significance),
            held_out: GroupRate::new(held_out, significance),
            p_value,
            significant: p_value <= significance,
            significance,
            tasks_needed: if p_value <= significance { Some(0) } else { tasks_needed(shown, held_out, significance) },
        }
    }
}

impl GroupRate {
    pub fn new(counts: Counts, significance: f64) -> Self {
        let (low, high) = wilson_interval(counts, significance);
        let rate = if counts.tasks == 0 { 0.0 } else { counts.failed as f64 / counts.tasks as f64 };
        Self { counts, rate, low, high }
    }
}

/// The Wilson score interval of failed / tasks at confidence
/// 1 - `significance`; (0, 1) with no tasks, since nothing is known.
pub fn wilson_interval(counts: Counts, significance: f64) -> (f64, f64) {
    if counts.tasks == 0 {
        return (0.0, 1.0);
    }
    let z = Normal::standard().inverse_cdf(1.0 - significance.clamp(1e-9, 1.0) / 2.0).max(0.0);
    let n = counts.tasks as f64;
    let p = counts.failed.min(counts.tasks) as f64 / n;
    let z2 = z * z;
    let centre = (p + z2 / (2.0 * n)) / (1.0 + z2 / n);
    let spread = z / (1.0 + z2 / n) * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    ((centre - spread).max(0.0), (centre + spread).min(1.0))
}

/// One-sided Fisher exact test: the probability, if warnings changed
/// nothing, that the held-out group would hold at least as many of all the
/// failures as it does. Small means shown tasks fail less. 1 when either
/// group is empty.
pub fn fewer_failures_p_value(shown: Counts, held_out: Counts) -> f64 {
    let (shown, held_out) = (clamp(shown), clamp(held_out));
    if shown.tasks == 0 || held_out.tasks == 0 {
        return 1.0;
    }
    let population = shown.tasks + held_out.tasks;
    let failures = shown.failed + held_out.failed;
    if held_out.failed == 0 {
        return 1.0;
    }
    match Hypergeometric::new(population, failures, held_out.tasks) {
        // P(X >= observed) = P(X > observed - 1).
        Ok(distribution) => distribution.sf(held_out.failed - 1).clamp(0.0, 1.0),
        Err(_) => 1.0,
    }
}

/// Power of the estimate in [`tasks_needed`].
const POWER: f64 = 0.8;

/// How many more tasks the comparison needs: the sample size of a
/// one-sided test of two proportions with unequal groups (Fleiss, Levin and
/// Paik, *Statistical Methods for Rates and Proportions*, 3rd ed., eq.
/// 4.19), taking today's rates as the true ones and today's ratio of shown
/// to held-out tasks, less the tasks already in. An estimate to plan by:
/// the rates themselves move as tasks come.
pub fn tasks_needed(shown: Counts, held_out: Counts, significance: f64) -> Option<u64> {
    let (shown, held_out) = (clamp(shown), clamp(held_out));
    if shown.tasks == 0 || held_out.tasks == 0 {
        return None;
    }
    let p_shown = shown.failed as f64 / shown.tasks as f64;
    let p_held = held_out.failed as f64 / held_out.tasks as f64;
    if p_held <= p_shown {
        return None;
    }
    let ratio = shown.tasks as f64 / held_out.tasks as f64;
    let normal = Normal::standard();
    let z_alpha = normal.inverse_cdf(1.0 - significance.clamp(1e-9, 0.5));
    let z_beta = normal.inverse_cdf(POWER);
    let pooled = (p_held + ratio * p_shown) / (1.0 + ratio);
    let spread = z_alpha * (pooled * (1.0 - pooled) * (1.0 + 1.0 / ratio)).sqrt()
        + z_beta * (p_held * (1.0 - p_held) + p_shown * (1.0 - p_shown) / ratio).sqrt();
    let held_needed = (spread / (p_held - p_shown)).powi(2);
    let total = (held_needed * (1.0 + ratio)).ceil();
    Some((total as u64).saturating_sub(shown.tasks + held_out.tasks))
}

fn clamp(counts: Counts) -> Counts {
    Counts { tasks: counts.tasks, failed: counts.failed.min(counts.tasks) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(failed: u64, tasks: u64) -> Counts {
        Counts { tasks, failed }
    }

    #[test]
    fn tasks_needed_matches_the_textbook_sample_size_and_shrinks_as_tasks_come() {
        // Equal groups, 30% against 15% failing, one-sided 5%, 80% power:
        // (1.645 sqrt(2 x .225 x .775) + .842 sqrt(.21 + .1275))^2 / .15^2
        // = 94.8 per group, by hand.
        let needed = tasks_needed(counts(3, 20), counts(6, 20), 0.05).unwrap();
        assert_eq!(needed, 190 - 40, "two groups of 95, less the 40 tasks in");
        assert_eq!(tasks_needed(counts(15, 100), counts(30, 100), 0.05), Some(0), "enough are in");
        // A held-out group a tenth the size (holdout 0.1) needs more tasks
        // in all than equal groups would.
        let unequal = tasks_needed(counts(27, 180), counts(6, 20), 0.05).unwrap();
        assert!(unequal > 190, "{unequal}");
        assert_eq!(tasks_needed(counts(6, 20), counts(3, 20), 0.05), None, "shown tasks fail more: nothing to size");
        assert_eq!(tasks_needed(counts(0, 0), counts(3, 20), 0.05), None);
        assert_eq!(Comparison::new(counts(0, 30), counts(12, 30), 0.05).tasks_needed, Some(0), "significant already");
    }

    #[test]
    fn wilson_matches_the_published_values() {
        // Newcombe (1998), table I: 81/263 gives 0.2553 to 0.3662 at 95%.
        let (low, high) = wilson_interval(counts(81, 263), 0.05);
        assert!((low - 0.2553).abs() < 5e-4 && (high - 0.3662).abs() < 5e-4, "{low} {high}");
        // 0 of 10: the lower bound is 0 and the upper 0.2775.
        let (low, high) = wilson_interval(counts(0, 10), 0.05);
        assert!(low.abs() < 1e-12, "{low}");
        assert!((high - 0.2775).abs() < 5e-4, "{high}");
        assert_eq!(wilson_interval(counts(0, 0), 0.05), (0.0, 1.0));
    }

    #[test]
    fn fisher_matches_a_hand_computed_table() {
        // Shown 0 of 5 failed, held out 3 of 3: only one table of the
        // C(8, 3) = 56 with these margins is as extreme.
        assert!((fewer_failures_p_value(counts(0, 5), counts(3, 3)) - 1.0 / 56.0).abs() < 1e-12);
        // Shown 0 of 3, held out 2 of 2: 1 / C(5, 2) = 0.1, not significant.
        assert!((fewer_failures_p_value(counts(0, 3), counts(2, 2)) - 0.1).abs() < 1e-12);
        // The lady tasting tea: 3 of 4 against 1 of 4, one-sided p = 17/70.
        assert!((fewer_failures_p_value(counts(1, 4), counts(3, 4)) - 17.0 / 70.0).abs() < 1e-12);
    }

    #[test]
    fn no_data_or_the_wrong_direction_is_not_significant() {
        assert_eq!(fewer_failures_p_value(counts(0, 0), counts(3, 3)), 1.0);
        assert_eq!(fewer_failures_p_value(counts(0, 4), counts(0, 0)), 1.0);
        assert_eq!(fewer_failures_p_value(counts(4, 4), counts(0, 4)), 1.0);
        let comparison = Comparison::new(counts(3, 3), counts(0, 3), 0.05);
        assert!(!comparison.significant);
        assert_eq!(comparison.shown.rate, 1.0);
        // Bad counts (more failed than tasks) do not panic.
        assert!(fewer_failures_p_value(counts(9, 2), counts(9, 2)) <= 1.0);
    }
}
