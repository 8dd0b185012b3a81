//! `lore eval redaction --leave-one-out`: redaction's figures per source,
//! with its setting (which catalogs of provider formats run, `Catalogs`;
//! how random a value after a secret word must look, `ContextThresholds`;
//! whether gitleaks' generic allowlist spares what Lore's keyword layers
//! find) chosen without the source it is scored on.
//! Runs lore-sanitize in this process: the same code the server and the
//! sidecar run, no server needed.

use std::collections::BTreeMap;

use indicatif::{ProgressBar, ProgressStyle};
use lore_sanitize::{Catalogs, ContextThresholds, SanitizeConfig, Sanitizer};

use super::samples::{Figures, Sample};
use crate::leave_one_out::{self, Counts};

impl Counts for Figures {
    fn add(&mut self, other: &Self) {
        Figures::add(self, other);
    }
}

/// One setting of redaction.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Setting {
    catalogs: Catalogs,
    context: ContextThresholds,
    generic_allowlist: bool,
}

impl Setting {
    fn shipped() -> Self {
        let config = SanitizeConfig::default();
        Self { catalogs: config.catalogs, context: config.context, generic_allowlist: config.generic_allowlist }
    }
}

/// The settings tried, from the most cautious (fewest redactions): fewer
/// catalogs first, then the bits a value must show after a strong word and
/// after a weak one, which asks for more, then the generic allowlist on
/// before off. Running no catalog is not a choice (the question is which
/// catalog runs: on sources whose secrets the other layers catch as well,
/// a tie would pick none); its settings are weighed only for the table of
/// catalogs, which shows what each gives beside the other layers.
fn settings() -> Vec<Setting> {
    let mut settings = Vec::new();
    for catalogs in std::iter::once(Catalogs::NONE).chain(Catalogs::CHOICES) {
        for strong_bits in [64.0, 56.0, 48.0, 40.0, 32.0] {
            for weak_bits in [96.0, 80.0, 64.0, 48.0] {
                for generic_allowlist in [true, false] {
                    if weak_bits > strong_bits {
                        let context = ContextThresholds { strong_bits, weak_bits };
                        settings.push(Setting { catalogs, context, generic_allowlist });
                    }
                }
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

fn describe(setting: &Setting) -> String {
    let allowlist = if setting.generic_allowlist { ", allowlist" } else { "" };
    format!("{} {:.0}/{:.0} bits{allowlist}", setting.catalogs, setting.context.strong_bits, setting.context.weak_bits)
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
    let samples: Vec<(&Sample, bool)> =
        positives.iter().map(|sample| (sample, true)).chain(negatives.iter().map(|sample| (sample, false))).collect();
    for (at, setting) in settings.iter().enumerate() {
        redact_all(
            setting,
            &samples,
            |sample, source, outcome| {
                figures[source][at].add(outcome);
                by_family
                    .entry((sample.family.as_str(), source))
                    .or_insert_with(|| vec![Figures::default(); settings.len()])[at]
                    .add(outcome);
            },
            &index,
        );
        progress.inc(samples.len() as u64);
    }
    progress.finish_and_clear();

    // The choice is among settings that run a catalog; the others are for
    // the table of catalogs.
    let (choices, choice_figures) = restrict(&settings, &figures, |setting| setting.catalogs != Catalogs::NONE);
    let folds: Vec<_> = leave_one_out::folds(&sources, &choice_figures, score)
        .into_iter()
        .map(|fold| leave_one_out::Fold { chosen: choices[fold.chosen], ..fold })
        .collect();
    let shipped = settings.iter().position(|setting| *setting == Setting::shipped());
    let (recalls, overs) = print_folds(&folds, &settings, &figures, shipped);
    let mean = |values: &[f64]| values.iter().sum::<f64>() / values.len().max(1) as f64;
    println!(
        "mean over sources, left out: recall {:.3} over {} sources, over-redaction {:.3} over {} sources",
        mean(&recalls),
        recalls.len(),
        mean(&overs),
        overs.len()
    );
    let on_all = choices[leave_one_out::chosen_on_all(&choice_figures, score)];
    print_catalogs(&sources, &settings, &figures);
    print_families(&by_family, &folds, shipped);
    // Recall less over-redaction pooled over every source, for the setting
    // chosen and the one shipped: equal scores mean the data cannot tell
    // them apart.
    let pooled = |setting: usize| {
        let mut total = Figures::default();
        for row in &figures {
            total.add(&row[setting]);
        }
        score(&total)
    };
    let shipped_score = shipped.map_or("-".into(), |setting| format!("{:.4}", pooled(setting)));
    println!(
        "chosen on every source: {} (pooled recall - over-redaction {:.4}; shipped: {}, {shipped_score})",
        describe(&settings[on_all]),
        pooled(on_all),
        describe(&Setting::shipped())
    );
    println!("left_out_recall={:.3} left_out_over_redaction={:.3}", mean(&recalls), mean(&overs));
    Ok(())
}

/// One line per source left out: the setting chosen without it and its
/// figures under that setting, beside the shipped setting's; returns the
/// left-out recalls and over-redactions.
fn print_folds(
    folds: &[leave_one_out::Fold<Figures>],
    settings: &[Setting],
    figures: &[Vec<Figures>],
    shipped: Option<usize>,
) -> (Vec<f64>, Vec<f64>) {
    println!("Each source left out: the setting is chosen on the other sources, then the source is scored under it.");
    println!(
        "{:<14} {:>30}  {:>20} {:>20}  {:>20} {:>20}",
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
            "{:<14} {:>30}  {:>20} {:>20}  {:>20} {:>20}",
            fold.left_out,
            describe(&settings[fold.chosen]),
            rate(figures.caught, figures.positives),
            rate(figures.altered, figures.negatives),
            seen.map_or("-".into(), |seen| rate(seen.caught, seen.positives)),
            seen.map_or("-".into(), |seen| rate(seen.altered, seen.negatives)),
        );
    }
    (recalls, overs)
}

/// Redacts every sample under `setting` and reports each one's outcome,
/// with the index of its source.
fn redact_all<'a>(
    setting: &Setting,
    samples: &[(&'a Sample, bool)],
    mut outcome: impl FnMut(&'a Sample, usize, &Figures),
    index: &BTreeMap<&str, usize>,
) {
    let sanitizer = Sanitizer::new(SanitizeConfig {
        max_string_chars: usize::MAX,
        context: setting.context,
        catalogs: setting.catalogs,
        generic_allowlist: setting.generic_allowlist,
        ..SanitizeConfig::default()
    });
    for (sample, secret) in samples {
        let (stored, _) = sanitizer.sanitize_text(&sample.text);
        let figures = if *secret {
            Figures { positives: 1, caught: usize::from(sample.redacted_in(&stored)), ..Figures::default() }
        } else {
            Figures { negatives: 1, altered: usize::from(stored != sample.text), ..Figures::default() }
        };
        outcome(sample, index[sample.source.as_str()], &figures);
    }
}

/// The settings `keep` accepts (their indices into `settings`) and the
/// figures under them alone.
fn restrict(
    settings: &[Setting],
    figures: &[Vec<Figures>],
    keep: impl Fn(&Setting) -> bool,
) -> (Vec<usize>, Vec<Vec<Figures>>) {
    let kept: Vec<usize> = (0..settings.len()).filter(|at| keep(&settings[*at])).collect();
    let rows = figures.iter().map(|row| kept.iter().map(|at| row[*at]).collect()).collect();
    (kept, rows)
}

/// Which sources a catalog was written or tested against: its own rules'
/// examples, and betterleaks' rule tests for the catalogs of its lineage
/// (gitleaks, its ancestor; Kingfisher, which imports its rules).
const SEEN: &[(&str, &str)] =
    &[("kingfisher", "kingfisher"), ("kingfisher", "betterleaks"), ("gitleaks", "betterleaks")];

/// Each source under each choice of catalogs, and under none, each source
/// left out of the choice of the other settings (bits, allowlist): what
/// each catalog adds to the other layers, source by source. `*` marks a
/// source the catalog has seen.
fn print_catalogs(sources: &[String], settings: &[Setting], figures: &[Vec<Figures>]) {
    let columns: Vec<Catalogs> = std::iter::once(Catalogs::NONE).chain(Catalogs::CHOICES).collect();
    let folds: Vec<Vec<leave_one_out::Fold<Figures>>> = columns
        .iter()
        .map(|catalogs| {
            let (_, figures) = restrict(settings, figures, |setting| setting.catalogs == *catalogs);
            leave_one_out::folds(sources, &figures, score)
        })
        .collect();
    println!();
    println!(
        "Recall / over-redaction by the catalogs that run, each source left out (* the catalog has seen the source):"
    );
    print!("{:<14}", "source");
    for catalogs in &columns {
        print!(" {:>24}", catalogs.to_string());
    }
    println!();
    for (row, source) in sources.iter().enumerate() {
        print!("{source:<14}");
        for (column, catalogs) in columns.iter().enumerate() {
            let figures = &folds[column][row].figures;
            let recall = if figures.positives > 0 { format!("{:.3}", figures.recall()) } else { "-".into() };
            let over = if figures.negatives > 0 { format!("{:.3}", figures.over_redaction()) } else { "-".into() };
            let name = catalogs.to_string();
            let seen =
                SEEN.iter().any(|(catalog, seen)| *seen == source && name.split('+').any(|part| part == *catalog));
            print!(" {:>24}", format!("{recall} / {over}{}", if seen { "*" } else { "" }));
        }
        println!();
    }
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
        let bar = if left_out.positives > 0 { crate::bars::bar(left_out.recall(), 40) } else { String::new() };
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
