//! `lore eval grouping --people N FILES` (or `--runs STEPS.jsonl`): whether re-mining, gated by a
//! project's people's corrections (`lore_grouping::evidence`), ever leaves
//! a set worse than capture and those corrections did. In this process,
//! each set (a LogHub-format file, or each repository of `--runs`) is
//! captured online; an ideal person then corrects the `N` largest true
//! groups the captures got wrong (splits out what does not belong, merges
//! the rest into one pattern); re-mining runs with the patterns they
//! touched pinned, and its changes count only where the evidence test
//! supports them, as the server decides. Last, the project is read
//! literally (`lore_grouping::convention`) where its corrections ask for
//! it. Neither gate has a setting, so each set's figure is one no choice
//! saw.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use lore_grouping::accuracy::group_accuracy;
use lore_grouping::brain::BrainSettings;
use lore_grouping::convention::{LiteralEvidence, literal_evidence, split_by_literal};
use lore_grouping::evidence::{Correction, verdict};
use lore_grouping::masks::Masks;
use lore_grouping::rehearsal::rehearse_pinned;
use lore_grouping::remine::Occurrence;
use lore_grouping::template::Template;

use super::runs::LabelledSet;
use super::sources::{online, read_structured, set_name};

pub fn run(files: &[PathBuf], runs: Option<&Path>, people: usize) -> anyhow::Result<()> {
    let mut sets: Vec<LabelledSet> = Vec::new();
    for file in files {
        sets.push((set_name(file), read_structured(file)?));
    }
    if let Some(runs) = runs {
        sets.extend(super::runs::messages(runs)?);
    }
    println!(
        "An ideal person corrects the {people} largest true groups captures got wrong; re-mining leaves their \
         patterns as they are and regroups by itself only where the evidence test supports it; the project is read \
         literally (names quoted kept, one group per template) only where enough of the person's corrections ask for it."
    );
    println!(
        "| set | lines | corrections | as captured | after the person | re-mined anyway | pairs kept by capture / replay | \
         supported | read literally anyway | read literally (corrections made / undone) | by itself |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|:---:|---:|---:|---:|");
    let (mut below, mut supported, mut literal) = (Vec::new(), 0, 0);
    for (name, lines) in &sets {
        let row = score(lines, people);
        println!(
            "| {name} | {} | {} | {:.3} | {:.3} | {:.3} | {:.0} / {:.0} | {} | {:.3} | {} ({} / {}) | {:.3} |",
            lines.len(),
            row.corrections,
            row.captured,
            row.corrected,
            row.remined,
            row.kept.0,
            row.kept.1,
            if row.supported { "yes" } else { "no" },
            row.literal_anyway,
            if row.literal.supports() { "yes" } else { "no" },
            row.literal.agreeing,
            row.literal.against,
            row.automatic
        );
        supported += usize::from(row.supported);
        literal += usize::from(row.literal.supports());
        if row.automatic < row.corrected - 1e-9 {
            below.push(name.clone());
        }
    }
    println!(
        "\npeople={people} sets={} supported={supported} literal={literal} below_the_person={}",
        sets.len(),
        if below.is_empty() { "none".to_owned() } else { below.join(",") }
    );
    Ok(())
}

/// One set's figures.
struct Row {
    corrections: usize,
    captured: f64,
    corrected: f64,
    remined: f64,
    kept: (f64, f64),
    supported: bool,
    /// What the corrections say of reading the project literally
    /// (`lore_grouping::convention`).
    literal: LiteralEvidence,
    /// What reading the project literally would leave without the test.
    literal_anyway: f64,
    automatic: f64,
}

fn score(lines: &[(String, String)], people: usize) -> Row {
    let templates: Vec<Template> = lines.iter().map(|(message, _)| Template::of(message)).collect();
    let truth: Vec<&str> = lines.iter().map(|(_, event)| event.as_str()).collect();
    let captured = online(&templates);
    let person = ideal_person(&captured, &truth, people);
    let occurrences: Vec<Occurrence<usize, usize>> = templates
        .iter()
        .zip(&person.patterns)
        .enumerate()
        .map(|(id, (template, pattern))| Occurrence { id, pattern: *pattern, template: template.clone() })
        .collect();
    let settings = BrainSettings::default();
    let evidence = verdict(&occurrences, &captured, &person.corrections, &settings);
    let remined = rehearse_pinned(&templates, &person.patterns, &person.pinned, &settings).judged;
    let supported = evidence.supports();
    let literally = Masks::none().reading_literally(true);
    let literal_templates: Vec<Template> =
        lines.iter().map(|(message, _)| Template::of_masked(message, &literally)).collect();
    let literal = literal_evidence(&occurrences, &literal_templates, &captured, &person.corrections);
    let corrected = group_accuracy(&person.patterns, &truth);
    let remined_accuracy = group_accuracy(&remined, &truth);
    let automatic = if supported { &remined } else { &person.patterns };
    let literal_anyway = group_accuracy(&split_by_literal(automatic, &literal_templates, &person.pinned), &truth);
    let automatic = if literal.supports() { literal_anyway } else { group_accuracy(automatic, &truth) };
    Row {
        corrections: person.corrections.len(),
        captured: group_accuracy(&captured, &truth),
        corrected,
        remined: remined_accuracy,
        kept: (evidence.before.kept, evidence.replay.kept),
        supported,
        literal,
        literal_anyway,
        automatic,
    }
}

/// The patterns after an ideal person's corrections, the corrections, and
/// the patterns they touched.
struct Corrected {
    patterns: Vec<usize>,
    corrections: Vec<Correction<usize>>,
    pinned: BTreeSet<usize>,
}

/// An ideal person corrects the `groups` largest true groups that the
/// patterns do not hold exactly: whatever else shares a pattern with the
/// group is split out (one new pattern per other true group), and every
/// part of the group is merged into one pattern.
fn ideal_person(captured: &[usize], truth: &[&str], groups: usize) -> Corrected {
    let mut patterns = captured.to_vec();
    let mut next = patterns.iter().max().map_or(0, |largest| largest + 1);
    let mut corrections = Vec::new();
    for group in wrong_groups(captured, truth).into_iter().take(groups) {
        let mut parts: BTreeMap<usize, usize> = BTreeMap::new();
        for (pattern, line) in patterns.iter().zip(truth) {
            if *line == group {
                *parts.entry(*pattern).or_default() += 1;
            }
        }
        let mut survivor = None;
        for pattern in parts.keys().copied() {
            // Each other true group in the pattern moves to one of its own;
            // what is left is this group's part.
            let others: BTreeSet<&str> = patterns
                .iter()
                .zip(truth)
                .filter(|(held, line)| **held == pattern && **line != group)
                .map(|(_, line)| *line)
                .collect();
            for other in others {
                for (held, line) in patterns.iter_mut().zip(truth) {
                    if *held == pattern && *line == other {
                        *held = next;
                    }
                }
                corrections.push(Correction::Split { from: pattern, new: next });
                next += 1;
            }
            match survivor {
                None => survivor = Some(pattern),
                Some(into) => {
                    for held in patterns.iter_mut().filter(|held| **held == pattern) {
                        *held = into;
                    }
                    corrections.push(Correction::Merge { from: pattern, into });
                }
            }
        }
    }
    let pinned = corrections
        .iter()
        .flat_map(|correction| match correction {
            Correction::Merge { from, into } => [*from, *into],
            Correction::Split { from, new } => [*from, *new],
        })
        .collect();
    Corrected { patterns, corrections, pinned }
}

/// True groups the patterns do not hold exactly, the largest first.
fn wrong_groups<'a>(patterns: &[usize], truth: &[&'a str]) -> Vec<&'a str> {
    let mut holders: BTreeMap<&str, BTreeSet<usize>> = BTreeMap::new();
    let mut sizes: BTreeMap<usize, usize> = BTreeMap::new();
    let mut group_sizes: BTreeMap<&str, usize> = BTreeMap::new();
    for (pattern, line) in patterns.iter().zip(truth) {
        holders.entry(line).or_default().insert(*pattern);
        *sizes.entry(*pattern).or_default() += 1;
        *group_sizes.entry(line).or_default() += 1;
    }
    let mut wrong: Vec<&str> = holders
        .iter()
        .filter(|(group, held)| held.len() > 1 || held.iter().any(|pattern| sizes[pattern] != group_sizes[*group]))
        .map(|(group, _)| *group)
        .collect();
    wrong.sort_by_key(|group| (std::cmp::Reverse(group_sizes[group]), *group));
    wrong
}
