//! `lore eval grouping --corrections`: what masks proposed from a person's
//! merges (`lore_grouping::mask_proposals`) do to messages they were not
//! drawn from. Each set is cut in two, in file order. On the first half a
//! simulated person merges, one by one into the largest, the captured
//! patterns whose lines mostly share a true group, and accepts every mask
//! those merges propose (up to a project's 32). The second half, never
//! looked at, is then captured with and without those masks and scored, as
//! captured and re-mined. The person here is ideal (they merge exactly the
//! true groups), so the figure is what proposals give at best; a mask that
//! fits its examples but is too broad for the system shows as a loss.

use std::collections::HashMap;
use std::path::PathBuf;

use lore_grouping::accuracy::group_accuracy;
use lore_grouping::brain::BrainSettings;
use lore_grouping::mask_proposals::{Proposal, propose};
use lore_grouping::masks::{MAX_MASKS, MaskSpec, Masks};
use lore_grouping::matching::OnlineGrouper;
use lore_grouping::rehearsal;
use lore_grouping::template::Template;

use super::sources::{online, read_structured, set_name};

pub fn run(files: &[PathBuf]) -> anyhow::Result<()> {
    println!(
        "First half: an ideal person merges each true group's patterns and accepts every mask proposed. \
         Second half, held out: scored without and with those masks."
    );
    println!(
        "{:<16} {:>7} {:>9}  {:>13} {:>13}  {:>12} {:>12}",
        "set", "merges", "proposed", "captured w/o", "captured with", "re-mined w/o", "re-mined with"
    );
    for file in files {
        let lines = read_structured(file)?;
        let half = lines.len() / 2;
        let (seen, held_out) = lines.split_at(half);
        let (merges, proposals) = corrections(seen);
        let specs: Vec<MaskSpec> = proposals
            .iter()
            .take(MAX_MASKS)
            .enumerate()
            .map(|(index, proposal)| MaskSpec { name: format!("p{index}"), pattern: proposal.pattern.clone() })
            .collect();
        let masks = Masks::compile(&specs)?;
        let truth: Vec<&str> = held_out.iter().map(|(_, event)| event.as_str()).collect();
        let [(captured_without, remined_without), (captured_with, remined_with)] =
            [Masks::none(), masks].map(|masks| scored(held_out, &truth, &masks));
        println!(
            "{:<16} {merges:>7} {:>9}  {captured_without:>13.3} {captured_with:>13.3}  {remined_without:>12.3} {remined_with:>12.3}",
            set_name(file),
            proposals.len()
        );
        for proposal in &proposals {
            println!("    {:<40} from {}", proposal.pattern, proposal.examples.join(", "));
        }
    }
    Ok(())
}

/// The merges an ideal person makes on `lines` as captured, and the
/// distinct masks they propose, in the order proposed.
fn corrections(lines: &[(String, String)]) -> (usize, Vec<Proposal>) {
    let mut grouper = OnlineGrouper::default();
    let groups: Vec<usize> = lines.iter().map(|(message, _)| grouper.add(&Template::of(message))).collect();
    let templates = grouper.templates();
    // Each pattern's size and the true group most of its lines are in.
    let mut counts: HashMap<usize, HashMap<&str, usize>> = HashMap::new();
    for (group, (_, event)) in groups.iter().zip(lines) {
        *counts.entry(*group).or_default().entry(event.as_str()).or_default() += 1;
    }
    let mut by_truth: HashMap<&str, Vec<(usize, usize)>> = HashMap::new();
    for (group, events) in &counts {
        let (event, _) =
            events.iter().max_by_key(|(event, count)| (**count, std::cmp::Reverse(**event))).expect("a line");
        by_truth.entry(event).or_default().push((events.values().sum(), *group));
    }
    let mut truths: Vec<&str> = by_truth.keys().copied().collect();
    truths.sort_unstable();
    let (mut merges, mut proposals) = (0, Vec::<Proposal>::new());
    for truth in truths {
        let patterns = by_truth.get_mut(truth).expect("listed");
        patterns.sort_unstable_by(|left, right| right.cmp(left));
        let survivor = templates[&patterns[0].1].text();
        for (_, source) in &patterns[1..] {
            merges += 1;
            if let Some(proposal) = propose(&survivor, &[&templates[source].text()])
                && !proposals.iter().any(|known| known.pattern == proposal.pattern)
            {
                proposals.push(proposal);
            }
        }
    }
    (merges, proposals)
}

/// Group accuracy of `lines` captured under `masks`, and after re-mining.
fn scored(lines: &[(String, String)], truth: &[&str], masks: &Masks) -> (f64, f64) {
    let templates: Vec<Template> = lines.iter().map(|(message, _)| Template::of_masked(message, masks)).collect();
    let captured = online(&templates);
    let judged = rehearsal::rehearse(&templates, &captured, &BrainSettings::default()).judged;
    (group_accuracy(&captured, truth), group_accuracy(&judged, truth))
}
