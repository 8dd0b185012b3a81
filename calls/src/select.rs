//! What Lore says, chosen: every item it could inject (a failure many
//! sessions hit, a QA warning, a lesson, a hot spot) is a [`Candidate`]
//! with the chance that this run hits what it tells of, what knowing it
//! is worth, and what it costs in tokens. [`fill`] takes the candidates
//! whose expected worth clears the bar, most worth per token first, until
//! the budget is spent; when none clears it, Lore says nothing.
//!
//! Every token injected is paid again at every later step of the run, so
//! the bar is on the worth of an item, not on its rank: the tenth-best item
//! of a project that knows little is not said because nine were.
//!
//! The chance of a failure is the share of the project's finished
//! sessions that hit it, weighted toward recent sessions and shrunk toward
//! the project's base rate ([`crate::memory::CallMemory::chance`]): an
//! empirical-Bayes estimate, so two sessions of two do not outweigh
//! twenty of a hundred.

/// What knowing of a failure is worth, in steps an agent saves: the step
/// it would fail; and, when what worked after (or a trusted fix) is known,
/// the step it would spend finding that too (1–2 steps a recurring failure
/// on real runs, issue 55).
pub const VALUE_SEEN: f64 = 1.0;
pub const VALUE_WITH_REMEDY: f64 = 2.0;

/// The expected worth an item must reach to be said at all, by default.
/// On the development runs (docs/EVALUATION.md, "In this process") every
/// bar up to 0.03 says the same, and 0.10 and up say less and keep less
/// context a run; the replay shows the bars for reading and does not
/// choose among them, since the net figure that would choose swings on a
/// few failures.
pub const MIN_WORTH: f64 = 0.02;

/// One item Lore could inject.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Candidate {
    /// The chance, 0 to 1, that this run hits what the item tells of.
    pub chance: f64,
    /// What knowing it is worth when it does ([`VALUE_SEEN`],
    /// [`VALUE_WITH_REMEDY`]).
    pub value: f64,
    /// What saying it costs.
    pub tokens: usize,
}

impl Candidate {
    /// Its expected worth: chance times value.
    pub fn worth(&self) -> f64 {
        self.chance.clamp(0.0, 1.0) * self.value.max(0.0)
    }
}

/// The candidates to say (indices), most worth per token first: those
/// worth at least `min_worth`, while they fit in `budget` tokens. A
/// candidate that does not fit is skipped and a smaller one after it may
/// still fit.
pub fn fill(candidates: &[Candidate], budget: usize, min_worth: f64) -> Vec<usize> {
    let mut spent = 0;
    fill_while(candidates, min_worth, |_, next| {
        let fits = spent + candidates[next].tokens <= budget;
        if fits {
            spent += candidates[next].tokens;
        }
        fits
    })
}

/// [`fill`] where what fits is decided by `fits(chosen, next)`: whether
/// `next` fits beside the candidates already `chosen`. For a caller whose
/// cost is more than the sum of the items' tokens (a section's heading is
/// paid by its first item, a note by the first item that needs it).
pub fn fill_while(
    candidates: &[Candidate],
    min_worth: f64,
    mut fits: impl FnMut(&[usize], usize) -> bool,
) -> Vec<usize> {
    let mut ranked: Vec<usize> =
        (0..candidates.len()).filter(|&index| candidates[index].worth() >= min_worth).collect();
    let per_token = |index: usize| candidates[index].worth() / candidates[index].tokens.max(1) as f64;
    // Most worth per token first; a tie goes to the earlier candidate.
    ranked.sort_by(|&a, &b| per_token(b).total_cmp(&per_token(a)).then(a.cmp(&b)));
    let mut chosen = Vec::new();
    for index in ranked {
        if fits(&chosen, index) {
            chosen.push(index);
        }
    }
    chosen
}

#[cfg(test)]
mod tests {
    use super::*;

    fn candidate(chance: f64, value: f64, tokens: usize) -> Candidate {
        Candidate { chance, value, tokens }
    }

    #[test]
    fn nothing_is_said_when_nothing_clears_the_bar() {
        let candidates = [candidate(0.01, VALUE_SEEN, 10), candidate(0.02, VALUE_WITH_REMEDY, 10)];
        assert!(fill(&candidates, 1_000, 0.05).is_empty());
        assert_eq!(fill(&candidates, 1_000, 0.04), vec![1], "0.02 × 2 clears 0.04, 0.01 × 1 does not");
    }

    #[test]
    fn the_budget_is_filled_by_worth_per_token() {
        // Worth per token: 0.02, 0.03, 0.01, 0.025.
        let candidates = [
            candidate(0.4, VALUE_SEEN, 20),
            candidate(0.3, VALUE_SEEN, 10),
            candidate(0.5, VALUE_WITH_REMEDY, 100),
            candidate(0.25, VALUE_WITH_REMEDY, 20),
        ];
        assert_eq!(fill(&candidates, 50, 0.05), vec![1, 3, 0]);
        // The long one does not fit beside them; alone it would.
        assert_eq!(fill(&candidates, 100, 0.05), vec![1, 3, 0]);
        assert_eq!(fill(&candidates[2..3], 100, 0.05), vec![0]);
        assert!(fill(&candidates, 5, 0.05).is_empty(), "nothing fits in 5 tokens");
    }

    #[test]
    fn a_chance_out_of_range_counts_as_its_bound() {
        assert_eq!(candidate(3.0, VALUE_SEEN, 1).worth(), 1.0);
        assert_eq!(candidate(-1.0, VALUE_SEEN, 1).worth(), 0.0);
        assert_eq!(candidate(0.5, -2.0, 1).worth(), 0.0);
    }
}
