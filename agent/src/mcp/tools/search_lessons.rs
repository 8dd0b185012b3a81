//! `search_lessons`: the lessons of the project for an error or a question.

use lore_proto::v1 as proto;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::lessons::{best_fix_of, shown_words, solution_json, speaks, title_of, trust_label, trust_name, why_found};
use super::{ToolContext, ToolOutput, ToolSpec, parse, required_text, schema};
use crate::AgentError;

pub const TOOL: ToolSpec = ToolSpec {
    name: "search_lessons",
    description: "Search the lessons learned by every agent of this project: paste an error message as it is, \
     or describe a problem or a how-to in a few words. Each hit says why it matched and gives its \
     best fix with its success record. Call get_lesson for one in full.",
    read_only: true,
    schema: schema::<SearchArgs>,
    call: |arguments, context| Box::pin(async move { run(parse(arguments)?, context).await }),
};

#[derive(Debug, Deserialize, JsonSchema, Clone, Copy, Default)]
#[serde(rename_all = "snake_case")]
pub enum SearchMode {
    /// Words and meaning together (the default, and the best for most
    /// questions).
    #[default]
    Hybrid,
    /// Exact words only: error codes, identifiers.
    Keyword,
    /// Meaning only: a problem described in other words.
    Semantic,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchArgs {
    /// An error message as it is, or a problem or how-to in a few words.
    #[schemars(length(min = 1, max = 4096))]
    pub query: String,
    /// How many lessons to return (1 to 20; default 5).
    #[serde(default)]
    #[schemars(range(min = 1, max = 20))]
    pub limit: Option<u32>,
    /// How to match.
    #[serde(default)]
    pub mode: SearchMode,
    /// The category of your problem (e.g. "testing"), when you know it:
    /// lessons of it come first, of related categories next.
    #[serde(default)]
    pub category: Option<String>,
}

async fn run(args: SearchArgs, context: &ToolContext<'_>) -> Result<ToolOutput, AgentError> {
    let query = required_text("query", &args.query, 4096)?;
    let limit = args.limit.unwrap_or(5);
    if !(1..=20).contains(&limit) {
        return Err(AgentError::invalid("limit", format!("{limit} is outside 1 to 20")));
    }
    let mode = match args.mode {
        SearchMode::Hybrid => proto::SearchMode::Hybrid,
        SearchMode::Keyword => proto::SearchMode::Keyword,
        SearchMode::Semantic => proto::SearchMode::Semantic,
    };
    let request = proto::SearchRequest {
        project: context.identity.project.clone(),
        query: Some(proto::SearchQuery {
            text: query.clone(),
            limit,
            mode: mode as i32,
            category: args.category.unwrap_or_default(),
            ..Default::default()
        }),
        session_id: context.session_id.to_string(),
    };
    let found = context.lore()?.knowledge().search(request).await?.into_inner();
    let mut text = if found.hits.is_empty() {
        format!("No lesson matches \"{query}\" yet. If you solve it, propose_lesson helps the next agent.")
    } else {
        format!("{} lesson(s) for \"{query}\":\n", found.hits.len())
    };
    let mut hits = Vec::new();
    for (rank, hit) in found.hits.iter().enumerate() {
        let entry = hit.entry.clone().unwrap_or_default();
        let handle = if entry.key.is_empty() { entry.entry_id.clone() } else { entry.key.clone() };
        text.push_str(&format!(
            "{}. [{handle}; {}] {}.{} Why: {}. Expand: get_lesson {{\"entry\": \"{handle}\"}}\n",
            rank + 1,
            trust_label(&entry),
            title_of(&entry),
            best_fix_of(&entry, hit.best_solution.as_ref()),
            why_found(hit)
        ));
        hits.push(json!({
            "entry_id": entry.entry_id,
            "key": entry.key,
            "title": shown_words(&entry).0,
            "summary": shown_words(&entry).1,
            "trust": trust_name(entry.trust),
            "origin": entry.origin.as_ref().map(|origin| origin.description.clone()),
            "score": hit.score,
            "why": why_found(hit),
            "best_fix": hit.best_solution.as_ref().filter(|_| speaks(&entry)).map(solution_json),
        }));
    }
    if found.degraded {
        text.push_str("(Searched by words only: the meaning search is unavailable right now.)\n");
    }
    let ids: Vec<String> =
        found.hits.iter().filter_map(|hit| hit.entry.as_ref().map(|entry| entry.entry_id.clone())).collect();
    Ok(ToolOutput {
        text,
        structured: json!({ "hits": hits, "degraded": found.degraded }),
        summary: json!({ "hits": ids }),
    })
}
