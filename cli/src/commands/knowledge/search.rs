//! `lore search`: find the lesson for a problem, best first, with why each
//! hit matched and what to do with it.

use crate::commands::Channel;
use anyhow::bail;
use lore_proto::v1 as proto;

use crate::commands::knowledge::display::{entry_json, entry_name, kind_name, solution_line};

#[derive(clap::Args)]
pub struct Args {
    /// What you are about to do or what went wrong, in your own words.
    query: String,
    #[arg(long, env = "LORE_PROJECT")]
    project: String,
    /// At most this many hits.
    #[arg(long, default_value_t = 5)]
    limit: u32,
    /// hybrid (default), keyword or semantic.
    #[arg(long, default_value = "hybrid", value_parser = ["hybrid", "keyword", "semantic"])]
    mode: String,
    /// Entries of this category first, of related categories next.
    #[arg(long)]
    category: Option<String>,
    /// Only entries of --category.
    #[arg(long, requires = "category")]
    category_only: bool,
    /// Only these kinds: pattern, learning, retrospective, gotcha (repeat or
    /// comma-separate).
    #[arg(long = "kind", value_delimiter = ',')]
    kinds: Vec<String>,
    /// Only entries with all of these tags.
    #[arg(long = "tag", value_delimiter = ',')]
    tags: Vec<String>,
    /// Include obsolete entries.
    #[arg(long)]
    include_obsolete: bool,
    /// The response as one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

pub fn kind(text: &str) -> anyhow::Result<proto::EntryKind> {
    Ok(match text {
        "pattern" | "issue_pattern" | "issue-pattern" => proto::EntryKind::IssuePattern,
        "learning" => proto::EntryKind::Learning,
        "retrospective" | "retro" => proto::EntryKind::Retrospective,
        "gotcha" => proto::EntryKind::Gotcha,
        other => bail!("unknown kind {other:?} (pattern, learning, retrospective, gotcha)"),
    })
}

pub async fn run(channel: Channel, args: Args) -> anyhow::Result<()> {
    let mut client = crate::commands::knowledge_client(channel);
    let mode = match args.mode.as_str() {
        "keyword" => proto::SearchMode::Keyword,
        "semantic" => proto::SearchMode::Semantic,
        _ => proto::SearchMode::Hybrid,
    };
    let query = proto::SearchQuery {
        text: args.query.clone(),
        kinds: args.kinds.iter().map(|text| kind(text).map(|kind| kind as i32)).collect::<Result<_, _>>()?,
        category: args.category.unwrap_or_default(),
        category_only: args.category_only,
        include_obsolete: args.include_obsolete,
        limit: args.limit,
        mode: mode as i32,
        tags: args.tags,
        ..Default::default()
    };
    let response = client
        .search(proto::SearchRequest { project: args.project, query: Some(query), ..Default::default() })
        .await?
        .into_inner();
    if args.json {
        println!("{}", response_json(&response));
        return Ok(());
    }
    if response.degraded {
        eprintln!("degraded: keyword search only ({})", response.degraded_reason);
    }
    if response.hits.is_empty() {
        eprintln!("no lesson matches {:?}", args.query);
    }
    for (index, hit) in response.hits.iter().enumerate() {
        print!("{}", hit_text(index + 1, hit));
    }
    Ok(())
}

fn relevance_name(value: i32) -> &'static str {
    match proto::Relevance::try_from(value) {
        Ok(proto::Relevance::High) => "high",
        Ok(proto::Relevance::Medium) => "medium",
        Ok(proto::Relevance::Low) => "low",
        _ => "weak",
    }
}

fn signal_name(value: i32) -> &'static str {
    match proto::MatchSignal::try_from(value) {
        Ok(proto::MatchSignal::Keyword) => "keyword",
        Ok(proto::MatchSignal::Fuzzy) => "fuzzy",
        Ok(proto::MatchSignal::Semantic) => "semantic",
        Ok(proto::MatchSignal::Symptom) => "symptom",
        _ => "?",
    }
}

/// One hit as a few readable lines.
pub fn hit_text(rank: usize, hit: &proto::SearchHit) -> String {
    let Some(entry) = &hit.entry else { return String::new() };
    let mut text = format!(
        "{rank}. {}  {}  ({} relevance, score {:.2})\n",
        entry_name(entry),
        entry.title,
        relevance_name(hit.relevance),
        hit.score
    );
    let mut facts = vec![kind_name(entry.kind).to_owned()];
    if !entry.category.is_empty() {
        facts.push(entry.category.clone());
    }
    if let Some(proto::entry::Details::IssuePattern(pattern)) = &entry.details
        && pattern.occurrence_count > 0
    {
        facts.push(format!("seen {}x", pattern.occurrence_count));
    }
    facts.push(crate::commands::knowledge::display::provenance(entry));
    text.push_str(&format!("   {}\n", facts.join(" · ")));
    let reasons: Vec<String> = hit
        .reasons
        .iter()
        .map(|reason| {
            let terms = if reason.matched_terms.is_empty() {
                String::new()
            } else {
                format!(": {}", reason.matched_terms.join(", "))
            };
            format!("{} #{} ({:.2}{terms})", signal_name(reason.signal), reason.rank, reason.score)
        })
        .collect();
    if !reasons.is_empty() {
        text.push_str(&format!("   matched by {}\n", reasons.join("; ")));
    }
    if let Some(parts) = &hit.parts {
        text.push_str(&format!(
            "   score parts: similarity {:.2}, success {:.2}, recency {:.2}, specificity {:.2}{}\n",
            parts.similarity,
            parts.success_rate,
            parts.recency,
            parts.specificity,
            if parts.category > 0.0 { format!(", category {:.1}", parts.category) } else { String::new() }
        ));
    }
    if let Some(best) = &hit.best_solution {
        text.push_str(&format!("   best fix: {}\n", solution_line(best)));
    }
    if !hit.recommendation.is_empty() {
        text.push_str(&format!("   -> {}\n", hit.recommendation));
    }
    if let Some(proto::entry::Details::IssuePattern(pattern)) = &entry.details
        && !pattern.prevention_checklist.is_empty()
    {
        text.push_str(&format!("   checklist: {}\n", pattern.prevention_checklist.join("; ")));
    }
    if !hit.snippet.is_empty() {
        text.push_str(&format!("   {}\n", hit.snippet));
    }
    text
}

fn response_json(response: &proto::SearchResponse) -> serde_json::Value {
    let hits: Vec<serde_json::Value> = response
        .hits
        .iter()
        .map(|hit| {
            serde_json::json!({
                "entry": hit.entry.as_ref().map(entry_json),
                "score": hit.score,
                "relevance": relevance_name(hit.relevance),
                "reasons": hit.reasons.iter().map(|reason| serde_json::json!({
                    "signal": signal_name(reason.signal),
                    "score": reason.score,
                    "rank": reason.rank,
                    "matched_terms": reason.matched_terms,
                })).collect::<Vec<_>>(),
                "parts": hit.parts.as_ref().map(|parts| serde_json::json!({
                    "similarity": parts.similarity,
                    "success_rate": parts.success_rate,
                    "recency": parts.recency,
                    "specificity": parts.specificity,
                    "category": parts.category,
                })),
                "best_solution": hit.best_solution.as_ref().map(crate::commands::knowledge::display::solution_json),
                "recommendation": hit.recommendation,
                "line": hit.line,
                "snippet": hit.snippet,
            })
        })
        .collect();
    serde_json::json!({
        "hits": hits,
        "degraded": response.degraded,
        "degraded_reason": response.degraded_reason,
    })
}
