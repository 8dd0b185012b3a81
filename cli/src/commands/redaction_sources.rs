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
    for (at, setting) in settings.iter().enumerate() {
        let sanitizer = Sanitizer::new(SanitizeConfig {
            max_string_chars: usize::MAX,
            context: *setting,
            ..SanitizeConfig::default()
        });
        for sample in &positives {
            let (stored, _) = sanitizer.sanitize_text(&sample.text);
            let cell = &mut figures[index[sample.source.as_str()]][at];
            cell.positives += 1;
            cell.caught += usize::from(sample.redacted_in(&stored));
        }
        for sample in &negatives {
            let (stored, _) = sanitizer.sanitize_text(&sample.text);
            let cell = &mut figures[index[sample.source.as_str()]][at];
            cell.negatives += 1;
            cell.altered += usize::from(stored != sample.text);
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
    let on_all = leave_one_out::chosen_on_all(&figures, score);
    println!(
        "chosen on every source: {} (shipped: {})",
        describe(&settings[on_all]),
        describe(&ContextThresholds::default())
    );
    println!("left_out_recall={:.3} left_out_over_redaction={:.3}", mean(&recalls), mean(&overs));
    Ok(())
}
