//! `lore eval grouping --leave-one-out`: grouping's figures per development
//! set, with Brain's setting (the variable threshold) chosen without the
//! set it is scored on. Runs lore-grouping in this process, the code the
//! server runs, on every message of each set at once (what re-mining does);
//! the online assignment of each message as it comes (what a capture does
//! before any re-mining) is printed beside it, with its one setting as
//! shipped, tuned with every set but tool-failures in view.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use lore_grouping::accuracy::group_accuracy;
use lore_grouping::brain::{self, BrainSettings};
use lore_grouping::matching::OnlineGrouper;
use lore_grouping::rehearsal;
use lore_grouping::template::Template;

use crate::leave_one_out::{self, Counts};

/// Mean group accuracy over the sets pooled.
#[derive(Debug, Default, Clone)]
struct Accuracy {
    sum: f64,
    sets: usize,
}

impl Accuracy {
    fn mean(&self) -> f64 {
        if self.sets == 0 { 0.0 } else { self.sum / self.sets as f64 }
    }
}

impl Counts for Accuracy {
    fn add(&mut self, other: &Self) {
        self.sum += other.sum;
        self.sets += other.sets;
    }
}

/// The variable thresholds tried, the most cautious (fewest splits) first.
const THRESHOLDS: std::ops::RangeInclusive<usize> = 2..=8;

/// A set's name: the folder its file is in (`loghub/OpenSSH/…` is
/// OpenSSH).
pub(crate) fn set_name(path: &Path) -> String {
    path.parent()
        .and_then(Path::file_name)
        .map_or_else(|| path.display().to_string(), |name| name.to_string_lossy().into_owned())
}

/// Messages and their true groups of a LogHub-format file.
pub(crate) fn read_structured(path: &Path) -> anyhow::Result<Vec<(String, String)>> {
    let mut reader = csv::Reader::from_path(path).with_context(|| format!("cannot read {}", path.display()))?;
    let headers = reader.headers()?.clone();
    let column = |name: &str| {
        headers
            .iter()
            .position(|header| header == name)
            .with_context(|| format!("{}: no {name} column in the header", path.display()))
    };
    let (content, event) = (column("Content")?, column("EventId")?);
    let mut lines = Vec::new();
    for record in reader.records() {
        let record = record.with_context(|| path.display().to_string())?;
        lines.push((record[content].to_owned(), record[event].to_owned()));
    }
    anyhow::ensure!(!lines.is_empty(), "{} has no lines", path.display());
    Ok(lines)
}

/// Each message joins the most similar template of its route or starts a
/// new one, in order: the capture's assignment, without a database.
pub(crate) fn online(templates: &[Template]) -> Vec<usize> {
    let mut grouper = OnlineGrouper::default();
    templates.iter().map(|template| grouper.add(template)).collect()
}

pub fn run(files: &[PathBuf]) -> anyhow::Result<()> {
    let mut names = Vec::new();
    let mut sets = Vec::new();
    for file in files {
        let lines = read_structured(file)?;
        let templates: Vec<Template> = lines.iter().map(|(message, _)| Template::of(message)).collect();
        let truth: Vec<String> = lines.into_iter().map(|(_, event)| event).collect();
        names.push(set_name(file));
        sets.push((templates, truth));
    }
    anyhow::ensure!(sets.len() >= 2, "leaving one set out needs at least two files; {} given", sets.len());
    let thresholds: Vec<usize> = THRESHOLDS.collect();
    let figures: Vec<Vec<Accuracy>> = sets
        .iter()
        .map(|(templates, truth)| {
            thresholds
                .iter()
                .map(|threshold| {
                    let predicted = brain::group_of(templates, &BrainSettings { variable_threshold: *threshold });
                    Accuracy { sum: group_accuracy(&predicted, truth), sets: 1 }
                })
                .collect()
        })
        .collect();
    let folds = leave_one_out::folds(&names, &figures, Accuracy::mean);
    let shipped = thresholds.iter().position(|threshold| *threshold == BrainSettings::default().variable_threshold);
    println!(
        "Each set left out: Brain's variable threshold is chosen on the other sets, then the set is scored under it."
    );
    println!(
        "{:<16} {:>8}  {:>16} {:>12}  {:>14} {:>9} {:>8}",
        "set", "chosen", "mined (left out)", "mined (seen)", "online (as is)", "re-mined", "judged"
    );
    let mut left_out = Vec::new();
    for (row, fold) in folds.iter().enumerate() {
        let (templates, truth) = &sets[row];
        let seen = shipped.map_or(f64::NAN, |at| figures[row][at].mean());
        let captured = online(templates);
        // Re-mined with the shipped setting: Brain's whole plan, and what
        // the criterion keeps of it (what the server does).
        let rehearsal::Rehearsal { whole, judged, .. } =
            rehearsal::rehearse(templates, &captured, &BrainSettings::default());
        let [as_is, whole, judged] = [&captured, &whole, &judged].map(|grouping| group_accuracy(grouping, truth));
        left_out.push(fold.figures.mean());
        println!(
            "{:<16} {:>8}  {:>16.3} {:>12.3}  {:>14.3} {whole:>9.3} {judged:>8.3}",
            fold.left_out,
            thresholds[fold.chosen],
            fold.figures.mean(),
            seen,
            as_is
        );
    }
    let mean = left_out.iter().sum::<f64>() / left_out.len() as f64;
    let on_all = thresholds[leave_one_out::chosen_on_all(&figures, Accuracy::mean)];
    println!("chosen on every set: {on_all} (shipped: {})", BrainSettings::default().variable_threshold);
    println!("left_out_group_accuracy={mean:.3}");
    Ok(())
}
