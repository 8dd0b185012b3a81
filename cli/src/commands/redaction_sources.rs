//! `lore eval redaction --leave-one-out`: redaction's figures per source,
//! with the setting it has (how random a value after a secret word must
//! look, `ContextThresholds`) chosen without the source it is scored on.
//! Runs lore-sanitize in this process: the same code the server and the
//! sidecar run, no server needed.

use std::collections::BTreeMap;

use indicatif::{ProgressBar, ProgressStyle};
use lore_sanitize::{ContextThresholds, SanitizeConfig, Sanitizer};

use super::leave_one_out::{self, Counts};
use super::redaction_samples::{Figures, Sample};

impl Counts for Figures {
    fn add(&mut self, other: &Self) {
        Figures::add(self, other);
    }
}

/// The settings tried, from the most cautious (fewest redactions): bits a
/// value must show after a strong word, then after a weak one, which asks
/// for more.
fn settings() -> Vec<ContextThresholds> {
    let mut settings = Vec::new();
    for strong_bits in [64.0, 56.0, 48.0, 40.0, 32.0] {
        for weak_bits in [96.0, 80.0, 64.0, 48.0] {
            if weak_bits > strong_bits {
                settings.push(ContextThresholds { strong_bits, weak_bits });
            }
        }
    }
    settings
}

/// What a setting is rated by on pooled sources: recall less
/// over-redaction (Youden's J), so neither can be bought with the other.
fn score(figures: &Figures) -> f64 {
    let recall = if figures.positives > 0 { figures.recall() } else { 0.0 };
    recall - figures.over_redaction()
}

fn describe(setting: &ContextThresholds) -> String {
    format!("{:.0}/{:.0} bits", setting.strong_bits, setting.weak_bits)
}

fn rate(part: usize, whole: usize) -> String {
    if whole == 0 { "-".into() } else { format!("{:.3} ({part}/{whole})", part as f64 / whole as f64) }
}

pub fn run(positives: Vec<Sample>, negatives: Vec<Sample>) -> anyhow::Result<()> {
    let mut sources: Vec<String> = positives.iter().chain(&negatives).map(|sample| sample.source.clone()).collect();
    sources.sort();
    sources.dedup();
    anyhow::ensure!(
        sources.len() >= 2,
        "leaving one source out needs at least two sources; the samples have {sources:?}"
    );
    let settings = settings();
    let progress = ProgressBar::new((settings.len() * (positives.len() + negatives.len())) as u64).with_style(
        ProgressStyle::with_template("{msg} {bar:40} {pos}/{len} [{elapsed_precise}, {per_sec}]")
            .expect("valid template"),
    );
    progress.set_message("redacting under each setting");
    let index: BTreeMap<&str, usize> = sources.iter().enumerate().map(|(at, name)| (name.as_str(), at)).collect();
    let mut figures = vec![vec![Figures::default(); settings.len()]; sources.len()];
    // Per family and source, under each setting: a family is scored under
    // the setting chosen without the source each of its samples came from.
    let mut by_family: BTreeMap<(&str, usize), Vec<Figures>> = BTreeMap::new();
    for (at, setting) in settings.iter().enumerate() {
        let sanitizer = Sanitizer::new(SanitizeConfig {
            max_string_chars: usize::MAX,
            context: *setting,
            ..SanitizeConfig::default()
        });
        for (sample, secret) in
            positives.iter().map(|sample| (sample, true)).chain(negatives.iter().map(|sample| (sample, false)))
        {
            let (stored, _) = sanitizer.sanitize_text(&sample.text);
            let source = index[sample.source.as_str()];
            let outcome = if secret {
                Figures { positives: 1, caught: usize::from(sample.redacted_in(&stored)), ..Figures::default() }
            } else {
                Figures { negatives: 1, altered: usize::from(stored != sample.text), ..Figures::default() }
            };
            figures[source][at].add(&outcome);
            by_family
                .entry((sample.family.as_str(), source))
                .or_insert_with(|| vec![Figures::default(); settings.len()])[at]
                .add(&outcome);
        }
        progress.inc((positives.len() + negatives.len()) as u64);
    }
    progress.finish_and_clear();

    let folds = leave_one_out::folds(&sources, &figures, score);
    let shipped = settings.iter().position(|setting| *setting == ContextThresholds::default());
    println!("Each source left out: the setting is chosen on the other sources, then the source is scored under it.");
    println!(
        "{:<14} {:>14}  {:>20} {:>20}  {:>20} {:>20}",
        "source", "chosen", "recall (left out)", "over-red. (left out)", "recall (seen)", "over-red. (seen)"
    );
    let (mut recalls, mut overs) = (Vec::new(), Vec::new());
    for (row, fold) in folds.iter().enumerate() {
        let seen = shipped.map(|setting| &figures[row][setting]);
        let figures = &fold.figures;
        if figures.positives > 0 {
            recalls.push(figures.recall());
        }
        if figures.negatives > 0 {
            overs.push(figures.over_redaction());
        }
        println!(
            "{:<14} {:>14}  {:>20} {:>20}  {:>20} {:>20}",
            fold.left_out,
            describe(&settings[fold.chosen]),
            rate(figures.caught, figures.positives),
            rate(figures.altered, figures.negatives),
            seen.map_or("-".into(), |seen| rate(seen.caught, seen.positives)),
            seen.map_or("-".into(), |seen| rate(seen.altered, seen.negatives)),
        );
    }
    let mean = |values: &[f64]| values.iter().sum::<f64>() / values.len().max(1) as f64;
    println!(
        "mean over sources, left out: recall {:.3} over {} sources, over-redaction {:.3} over {} sources",
        mean(&recalls),
        recalls.len(),
        mean(&overs),
        overs.len()
    );
    print_families(&by_family, &folds, shipped);
    let on_all = leave_one_out::chosen_on_all(&figures, score);
    println!(
        "chosen on every source: {} (shipped: {})",
        describe(&settings[on_all]),
        describe(&ContextThresholds::default())
    );
    println!("left_out_recall={:.3} left_out_over_redaction={:.3}", mean(&recalls), mean(&overs));
    Ok(())
}

/// Each family's figures, its samples scored under the setting chosen
/// without their source (left out), and under the shipped one (seen).
fn print_families(
    by_family: &BTreeMap<(&str, usize), Vec<Figures>>,
    folds: &[leave_one_out::Fold<Figures>],
    shipped: Option<usize>,
) {
    let mut families: BTreeMap<&str, (Figures, Figures)> = BTreeMap::new();
    for ((family, source), per_setting) in by_family {
        // `np:aws`, `token:github`: one row per kind, not per rule.
        let kind = family.split_once(':').map_or(*family, |(kind, _)| kind);
        let (left_out, seen) = families.entry(kind).or_default();
        left_out.add(&per_setting[folds[*source].chosen]);
        if let Some(shipped) = shipped {
            seen.add(&per_setting[shipped]);
        }
    }
    println!();
    println!(
        "By family (`kind:rule` counted under its kind), each sample under the setting chosen without its source:"
    );
    println!(
        "{:<22} {:>20} {:>20}  {:>20} {:>20}  recall (left out)",
        "family", "recall (left out)", "over-red. (left out)", "recall (seen)", "over-red. (seen)"
    );
    for (family, (left_out, seen)) in &families {
        let bar = if left_out.positives > 0 { super::display::bar(left_out.recall()) } else { String::new() };
        println!(
            "{:<22} {:>20} {:>20}  {:>20} {:>20}  {bar}",
            family,
            rate(left_out.caught, left_out.positives),
            rate(left_out.altered, left_out.negatives),
            rate(seen.caught, seen.positives),
            rate(seen.altered, seen.negatives),
        );
    }
    println!();
}
