//! Knowledge entries and solutions as text and as JSON, shared by the
//! knowledge commands.

use lore_proto::v1 as proto;

use crate::convert;

pub fn kind_name(value: i32) -> &'static str {
    match proto::EntryKind::try_from(value) {
        Ok(proto::EntryKind::IssuePattern) => "issue pattern",
        Ok(proto::EntryKind::Learning) => "learning",
        Ok(proto::EntryKind::Retrospective) => "retrospective",
        Ok(proto::EntryKind::Gotcha) => "gotcha",
        _ => "?",
    }
}

fn status_name(value: i32) -> &'static str {
    match proto::EntryStatus::try_from(value) {
        Ok(proto::EntryStatus::Obsolete) => "obsolete",
        Ok(proto::EntryStatus::Quarantined) => "quarantined",
        Ok(proto::EntryStatus::Superseded) => "superseded",
        _ => "active",
    }
}

pub fn trust_name(value: i32) -> &'static str {
    match proto::Trust::try_from(value) {
        Ok(proto::Trust::Reviewed) => "reviewed",
        Ok(proto::Trust::Verified) => "verified",
        _ => "observed",
    }
}

/// "reviewed, from a person (token ops) through console".
pub fn provenance(entry: &proto::Entry) -> String {
    match entry.origin.as_ref().filter(|origin| !origin.description.is_empty()) {
        Some(origin) => format!("{}, from {}", trust_name(entry.trust), origin.description),
        None => trust_name(entry.trust).to_owned(),
    }
}

fn trend_name(value: i32) -> &'static str {
    match proto::Trend::try_from(value) {
        Ok(proto::Trend::Increasing) => "increasing",
        Ok(proto::Trend::Stable) => "stable",
        Ok(proto::Trend::Decreasing) => "decreasing",
        _ => "",
    }
}

/// The key when there is one, else the start of the id.
pub fn entry_name(entry: &proto::Entry) -> String {
    if entry.key.is_empty() { entry.entry_id.chars().take(8).collect() } else { entry.key.clone() }
}

/// "Add WITH CHECK (19/20 succeeded, ~12 min)".
pub fn solution_line(solution: &proto::Solution) -> String {
    let description = solution.description.lines().next().unwrap_or_default();
    if solution.times_applied == 0 {
        return format!("{description} (not applied yet)");
    }
    format!(
        "{description} ({}/{} succeeded, {:.0}%, ~{:.0} min)",
        solution.times_successful,
        solution.times_applied,
        solution.success_rate * 100.0,
        solution.avg_resolution_minutes
    )
}

pub use lore_agent::mcp::tools::solution_json;

/// An entry's solutions, whatever its kind.
pub fn solutions(entry: &proto::Entry) -> &[proto::Solution] {
    match &entry.details {
        Some(proto::entry::Details::IssuePattern(pattern)) => &pattern.solutions,
        Some(proto::entry::Details::Learning(learning)) => &learning.solutions,
        _ => &[],
    }
}

pub fn entry_json(entry: &proto::Entry) -> serde_json::Value {
    let mut json = serde_json::json!({
        "entry_id": entry.entry_id,
        "key": entry.key,
        "project": entry.project,
        "kind": kind_name(entry.kind),
        "title": entry.title,
        "category": entry.category,
        "summary": entry.summary,
        "tags": entry.tags,
        "status": status_name(entry.status),
        "trust": trust_name(entry.trust),
        "origin": entry.origin.as_ref().map(|origin| origin.description.clone()),
        "solutions": solutions(entry).iter().map(solution_json).collect::<Vec<_>>(),
        "symptoms": entry.symptoms,
        "root_causes": entry.root_causes,
        "usage_count": entry.usage_count,
        "updated_at": convert::time(entry.updated_at.as_ref()),
        "cited_files": entry.cited_files,
        "superseded_by": entry.superseded_by,
        "supersedes": entry.superseded,
    });
    match &entry.details {
        Some(proto::entry::Details::IssuePattern(pattern)) => {
            json["trend"] = trend_name(pattern.trend).into();
            json["occurrence_count"] = pattern.occurrence_count.into();
            json["prevention_checklist"] = pattern.prevention_checklist.clone().into();
        }
        Some(proto::entry::Details::Learning(learning)) => {
            json["source_path"] = learning.source_path.clone().into();
        }
        _ => {}
    }
    json
}

/// An entry in full, for reading.
pub fn entry_text(entry: &proto::Entry) -> String {
    let mut text = format!("{}  {}\n", entry_name(entry), entry.title);
    let mut facts = vec![kind_name(entry.kind).to_owned(), status_name(entry.status).to_owned()];
    if !entry.category.is_empty() {
        facts.push(entry.category.clone());
    }
    if !entry.tags.is_empty() {
        facts.push(format!("tags: {}", entry.tags.join(", ")));
    }
    text.push_str(&format!(
        "{}\nid {}  updated {}\n{}\n",
        facts.join(" · "),
        entry.entry_id,
        convert::time(entry.updated_at.as_ref()),
        provenance(entry)
    ));
    match &entry.details {
        Some(proto::entry::Details::IssuePattern(pattern)) => {
            text.push_str(&format!(
                "seen {} times, last {}, trend {}\n",
                pattern.occurrence_count,
                convert::time(pattern.last_seen_at.as_ref()),
                trend_name(pattern.trend)
            ));
        }
        Some(proto::entry::Details::Learning(learning)) if !learning.source_path.is_empty() => {
            text.push_str(&format!("from {}\n", learning.source_path));
        }
        _ => {}
    }
    if !entry.superseded_by.is_empty() {
        text.push_str(&format!("superseded by {} (no longer injected)\n", entry.superseded_by));
    }
    if !entry.superseded.is_empty() {
        text.push_str(&format!("supersedes {}\n", entry.superseded.join(", ")));
    }
    if !entry.cited_files.is_empty() {
        text.push_str(&format!("cites {}\n", entry.cited_files.join(", ")));
    }
    if entry.usage_count > 0 || entry.last_used_at.is_some() {
        text.push_str(&format!(
            "used {} times before Lore, last {}\n",
            entry.usage_count,
            convert::time(entry.last_used_at.as_ref())
        ));
    }
    if !entry.summary.is_empty() {
        text.push_str(&format!("\n{}\n", entry.summary));
    }
    for (heading, items) in [("Symptoms", &entry.symptoms), ("Root causes", &entry.root_causes)] {
        if !items.is_empty() {
            text.push_str(&format!("\n{heading}:\n"));
            for item in items {
                text.push_str(&format!("- {item}\n"));
            }
        }
    }
    let solutions = solutions(entry);
    if !solutions.is_empty() {
        text.push_str("\nSolutions, best first:\n");
        for solution in solutions {
            text.push_str(&format!("- {}\n", solution_line(solution)));
        }
    }
    if let Some(proto::entry::Details::IssuePattern(pattern)) = &entry.details
        && !pattern.prevention_checklist.is_empty()
    {
        text.push_str("\nPrevention checklist:\n");
        for item in &pattern.prevention_checklist {
            text.push_str(&format!("- [ ] {item}\n"));
        }
    }
    if !entry.body.is_empty() {
        text.push_str(&format!("\n{}\n", entry.body.trim_end()));
    }
    text
}
