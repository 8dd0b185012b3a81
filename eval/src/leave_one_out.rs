//! Leave-one-source-out: how a setting chosen on data holds on data it was
//! not chosen on. For each source, the setting that scores best on every
//! other source together is chosen, and the source left out is scored
//! under it. The mean of those left-out figures is what a change must not
//! lower (docs/EVALUATION.md); a figure of a source under a setting chosen
//! with it in view is "seen".

/// Figures that add up over sources (counts, not rates).
pub trait Counts: Default + Clone {
    fn add(&mut self, other: &Self);
}

/// One source left out: the setting chosen without it, and its figures
/// under that setting.
#[derive(Debug, Clone)]
pub struct Fold<C> {
    pub left_out: String,
    pub chosen: usize,
    pub figures: C,
}

/// `figures[source][setting]`: each source's counts under each setting.
/// `score` rates pooled counts (higher is better); ties go to the earlier
/// setting, so list settings from the most cautious.
pub fn folds<C: Counts>(sources: &[String], figures: &[Vec<C>], score: impl Fn(&C) -> f64) -> Vec<Fold<C>> {
    (0..sources.len())
        .map(|left_out| {
            let chosen = best_setting(figures, Some(left_out), &score);
            Fold { left_out: sources[left_out].clone(), chosen, figures: figures[left_out][chosen].clone() }
        })
        .collect()
}

/// The setting that scores best on every source together: what ships.
pub fn chosen_on_all<C: Counts>(figures: &[Vec<C>], score: impl Fn(&C) -> f64) -> usize {
    best_setting(figures, None, &score)
}

/// The setting whose counts, pooled over every source but `left_out`,
/// score best; the earliest on a tie.
fn best_setting<C: Counts>(figures: &[Vec<C>], left_out: Option<usize>, score: &impl Fn(&C) -> f64) -> usize {
    let settings = figures.first().map_or(0, Vec::len);
    let mut chosen = 0;
    let mut best = f64::NEG_INFINITY;
    for setting in 0..settings {
        let mut pooled = C::default();
        for (_, row) in figures.iter().enumerate().filter(|(source, _)| Some(*source) != left_out) {
            pooled.add(&row[setting]);
        }
        let rated = score(&pooled);
        if rated > best {
            best = rated;
            chosen = setting;
        }
    }
    chosen
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Default, Clone, PartialEq)]
    struct Hits(u32, u32);

    impl Counts for Hits {
        fn add(&mut self, other: &Self) {
            self.0 += other.0;
            self.1 += other.1;
        }
    }

    #[test]
    fn each_source_is_scored_under_the_setting_the_others_prefer() {
        let sources = vec!["a".to_owned(), "b".to_owned(), "c".to_owned()];
        // c is unlike the others: with it in the pool, setting 0 wins.
        let figures =
            vec![vec![Hits(1, 10), Hits(9, 10)], vec![Hits(2, 10), Hits(8, 10)], vec![Hits(10, 10), Hits(0, 10)]];
        let rate = |hits: &Hits| f64::from(hits.0) / f64::from(hits.1);
        let folds = folds(&sources, &figures, rate);
        assert_eq!(folds.iter().map(|fold| fold.chosen).collect::<Vec<_>>(), [0, 0, 1]);
        assert_eq!(folds[2].figures, Hits(0, 10), "c left out is scored under the others' choice");
        assert_eq!(chosen_on_all(&figures, rate), 1);
    }
}
