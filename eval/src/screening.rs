//! `lore eval screening`: how well the screen tells instructions from data,
//! with one source left out at a time (see lore-screen's `training`).
//!
//! For each source of the development set, the model is fitted on every
//! other source and scored on the one left out: a payload source gives a
//! recall (payloads held), a benign source a false-quarantine rate (benign
//! texts held). The means over sources are the figures a change must not
//! lower. The model fitted on everything is what ships
//! (`--write-classifier screen/classifier.json`); its figures on the same data are
//! printed too, marked as seen.

use std::collections::BTreeMap;
use std::path::PathBuf;

use anyhow::Context as _;
use indicatif::{ProgressBar, ProgressStyle};
use lore_screen::training::{self, LeftOut, Prepared, Tally};

use crate::bars::bar;

#[derive(clap::Args)]
pub struct Args {
    /// Text that must be held (.jsonl: "text", "source", "obfuscation").
    #[arg(long, default_value = "tests/data/injection/payloads.jsonl")]
    payloads: PathBuf,
    /// Text that must pass (.jsonl: "text", "source", "kind").
    #[arg(long, default_value = "tests/data/injection/benign.jsonl")]
    benign: PathBuf,
    /// Fit on every sample and write the model here (what ships is
    /// screen/classifier.json).
    #[arg(long)]
    write_classifier: Option<PathBuf>,
    /// Print every sample the left-out fits got wrong.
    #[arg(long)]
    verbose: bool,
    /// Only explain the shipped screen's verdict on this text: its
    /// canonical form and every feature with its weight.
    #[arg(long, conflicts_with = "write_classifier")]
    explain: Option<String>,
    /// Score the files with the shipped model as it is, fitting nothing:
    /// the figure for data kept apart from development.
    #[arg(long, conflicts_with = "write_classifier")]
    shipped: bool,
}

/// The mean of the left-out figures (0 when there are none).
fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len().max(1) as f64
}

fn ratio(part: usize, whole: usize) -> String {
    if whole == 0 { "-".into() } else { format!("{:.3} ({part}/{whole})", part as f64 / whole as f64) }
}

pub fn run(args: Args) -> anyhow::Result<()> {
    if let Some(text) = &args.explain {
        explain(text);
        return Ok(());
    }
    let mut samples = lore_screen::corpus::read(&args.payloads, true)?;
    samples.extend(lore_screen::corpus::read(&args.benign, false)?);
    anyhow::ensure!(
        samples.iter().any(|sample| sample.payload) && samples.iter().any(|sample| !sample.payload),
        "the evaluation needs payloads and benign samples"
    );
    let progress = ProgressBar::new(samples.len() as u64).with_style(
        ProgressStyle::with_template("{msg} {bar:40} {pos}/{len} [{elapsed_precise}]").expect("valid template"),
    );
    progress.set_message("reading the samples' cues");
    let prepared: Vec<Prepared> = samples
        .into_iter()
        .map(|sample| {
            progress.inc(1);
            training::prepare(vec![sample]).remove(0)
        })
        .collect();
    progress.finish_and_clear();

    if args.shipped {
        score_shipped(&prepared, args.verbose);
        return Ok(());
    }

    let report = training::leave_one_source_out(&prepared);
    print_left_out(&report);
    println!();
    print_by_style(&training::leave_one_style_out(&prepared));
    println!();
    print_by_language(&training::leave_one_language_out(&prepared));

    let (model, payloads, benign) = fit_on_all(&prepared);
    if args.verbose {
        print_mistakes(&prepared, &report);
    }
    if let Some(path) = &args.write_classifier {
        let file = model.to_file(payloads.payloads, benign.benign);
        let json = serde_json::to_string_pretty(&file)?;
        std::fs::write(path, format!("{json}\n")).with_context(|| format!("cannot write {}", path.display()))?;
        println!("model written to {}", path.display());
    }
    Ok(())
}

/// `--shipped`: the shipped model scored as it is, per source.
fn score_shipped(prepared: &[Prepared], verbose: bool) {
    let screen = lore_screen::Screen::shipped();
    println!("The shipped model, fitted on the development set, scored as it is (no refit):");
    for ((is_payload, source), tally) in training::seen(screen.classifier(), prepared) {
        let figure = if is_payload {
            format!("recall {}", ratio(tally.caught, tally.payloads))
        } else {
            format!("held {}", ratio(tally.held, tally.benign))
        };
        println!("  {source:<16} {:<8} {figure}", if is_payload { "payloads" } else { "benign" });
    }
    if verbose {
        for sample in prepared {
            let verdict = screen.check_for(&sample.sample.text, &sample.sample.hosts);
            if verdict.held != sample.sample.payload {
                let what = if sample.sample.payload { "missed" } else { "held" };
                let text: String = sample.sample.text.chars().take(300).collect();
                println!("{what} ({}, {:.3}, {}): {text:?}", sample.sample.source, verdict.score, verdict.reason());
            }
        }
    }
}

/// The model fitted on every sample (what ships), its figures on its own
/// training data and its weights printed; returns it with the payload and
/// benign tallies it saw.
fn fit_on_all(prepared: &[Prepared]) -> (lore_screen::classifier::Classifier, Tally, Tally) {
    let all: Vec<&Prepared> = prepared.iter().collect();
    let model = training::fit(&all);
    let seen = training::seen(&model, prepared);
    let (mut payloads, mut benign) = (Tally::default(), Tally::default());
    for ((is_payload, _), tally) in &seen {
        let total = if *is_payload { &mut payloads } else { &mut benign };
        total.payloads += tally.payloads;
        total.caught += tally.caught;
        total.benign += tally.benign;
        total.held += tally.held;
    }
    println!();
    println!(
        "seen (the shipped fit, scored on its own training data): recall {}, false quarantine {}",
        ratio(payloads.caught, payloads.payloads),
        ratio(benign.held, benign.benign)
    );
    println!("threshold {:.4}; weights:", model.threshold);
    let mut weights: Vec<(lore_screen::cues::Feature, f64)> =
        lore_screen::cues::Feature::ALL.iter().map(|feature| (*feature, model.weights[feature.index()])).collect();
    weights.sort_by(|a, b| b.1.total_cmp(&a.1));
    for (feature, weight) in weights {
        println!("  {:<22} {weight:>8.3}", feature.name());
    }
    println!("  {:<22} {:>8.3}", "(bias)", model.bias);

    (model, payloads, benign)
}

fn print_left_out(report: &[LeftOut]) {
    println!("Leave one source out: fitted on every other source, scored on the one named.");
    println!("{:<12} {:<8} {:>22}  {:<20}", "left out", "holds", "figure", "");
    let mut recalls = Vec::new();
    let mut false_quarantines = Vec::new();
    let mut by_obfuscation: BTreeMap<String, Tally> = BTreeMap::new();
    let mut pooled = Tally::default();
    for left_out in report {
        let tally = &left_out.tally;
        let (label, figure, share) = if left_out.payload {
            let recall = tally.recall().unwrap_or(0.0);
            recalls.push(recall);
            ("payloads", format!("recall {}", ratio(tally.caught, tally.payloads)), recall)
        } else {
            let rate = tally.false_quarantine().unwrap_or(0.0);
            false_quarantines.push(rate);
            ("benign", format!("held {}", ratio(tally.held, tally.benign)), rate)
        };
        println!("{:<12} {label:<8} {figure:>22}  {}", left_out.source, bar(share, 20));
        if left_out.payload {
            for (group, group_tally) in &left_out.groups {
                let entry = by_obfuscation.entry(group.clone()).or_default();
                entry.payloads += group_tally.payloads;
                entry.caught += group_tally.caught;
            }
        }
        pooled.payloads += tally.payloads;
        pooled.caught += tally.caught;
        pooled.benign += tally.benign;
        pooled.held += tally.held;
    }
    println!("payloads by obfuscation, each with its source left out:");
    for (group, tally) in &by_obfuscation {
        println!("  {group:<16} recall {}", ratio(tally.caught, tally.payloads));
    }
    println!(
        "left-out mean over sources: recall {:.3}, false quarantine {:.4}",
        mean(&recalls),
        mean(&false_quarantines)
    );
    println!(
        "left-out pooled: recall {}, false quarantine {}",
        ratio(pooled.caught, pooled.payloads),
        ratio(pooled.held, pooled.benign)
    );
    println!(
        "screening_loso_recall={:.3} screening_loso_false_quarantine={:.4}",
        mean(&recalls),
        mean(&false_quarantines)
    );
}

/// Recall on each style of payload with that style left out of the fit:
/// the figure for an attacker who writes as no development payload does.
fn print_by_style(report: &[LeftOut]) {
    println!("Leave one style out: fitted on every sample but the payloads of the style named, scored on them.");
    println!("{:<28} {:>20}  {:<20}", "style left out", "recall", "");
    let mut recalls = Vec::new();
    for left_out in report {
        let recall = left_out.tally.recall().unwrap_or(0.0);
        recalls.push(recall);
        let figure = ratio(left_out.tally.caught, left_out.tally.payloads);
        println!("{:<28} {figure:>20}  {}", left_out.source, bar(recall, 20));
    }
    let mean = mean(&recalls);
    let worst = recalls.iter().copied().fold(f64::INFINITY, f64::min);
    println!("left-out mean over styles: recall {mean:.3}, lowest {worst:.3}");
    println!("screening_style_recall={mean:.3} screening_style_lowest={worst:.3}");
}

/// Each language's payloads and benign texts with every text in it left
/// out of the fit.
fn print_by_language(report: &[LeftOut]) {
    println!("Leave one language out: fitted on every text in the other languages, scored on the one named.");
    println!("{:<10} {:>20} {:>20}", "language", "payload recall", "benign held");
    let (mut recalls, mut held) = (Vec::new(), Vec::new());
    for left_out in report {
        let tally = &left_out.tally;
        recalls.extend(tally.recall());
        held.extend(tally.false_quarantine());
        println!(
            "{:<10} {:>20} {:>20}",
            left_out.source,
            ratio(tally.caught, tally.payloads),
            ratio(tally.held, tally.benign)
        );
    }
    println!("left-out mean over languages: recall {:.3}, false quarantine {:.4}", mean(&recalls), mean(&held));
}

/// What each left-out fit got wrong, by source.
/// Every sample the fit without its source got wrong, scored by that fit.
fn print_mistakes(prepared: &[Prepared], report: &[LeftOut]) {
    for left_out in report {
        let (payload, source) = (left_out.payload, &left_out.source);
        let screen = lore_screen::Screen::new(left_out.classifier.clone());
        for sample in
            prepared.iter().filter(|sample| sample.sample.payload == payload && &sample.sample.source == source)
        {
            let verdict = screen.check_for(&sample.sample.text, &sample.sample.hosts);
            if verdict.held != payload {
                let what = if payload { "missed" } else { "held" };
                let text: String = sample.sample.text.chars().take(300).collect();
                println!("{what} ({source}, {:.3}, {}): {text:?}", verdict.score, verdict.reason());
            }
        }
    }
}

fn explain(text: &str) {
    let screen = lore_screen::Screen::shipped();
    let (canonical, features, verdict) = screen.explain(text);
    println!("canonical: {:?}", canonical.text);
    if canonical.hidden.any() {
        println!("hidden: {:?}", canonical.hidden);
    }
    let classifier = screen.classifier();
    for feature in lore_screen::cues::Feature::ALL {
        let value = features[feature.index()];
        if value > 0.0 {
            let weight = classifier.weights[feature.index()];
            println!("  {:<22} {value:.2} x {weight:>7.3} = {:>7.3}", feature.name(), value * weight);
        }
    }
    println!("  {:<22} {:>24.3}", "(bias)", classifier.bias);
    let verdict_word = if verdict.held { "held" } else { "passes" };
    println!(
        "score {:.3} (threshold {:.3}): {verdict_word}; {}",
        verdict.score,
        classifier.threshold,
        verdict.reason()
    );
}
