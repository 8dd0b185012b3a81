//! `triage`: several errors at once, each with its best lessons side by side.

use lore_proto::v1 as proto;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::lessons::{
    best_fix_of, one_line, shown_words, solution_json, speaks, title_of, trust_label, trust_name, why_found,
};
use super::{ToolContext, ToolOutput, ToolSpec, parse, required_text, schema};
use crate::AgentError;

pub const TOOL: ToolSpec = ToolSpec {
    name: "triage",
    description: "Several errors at once (a failing build or test run): paste each error message as it is. \
     Lore looks for the lesson of each side by side and answers for the few errors with the best \
     matches, two lessons each, with their proven fixes and how to read one in full (get_lesson). \
     An error that holds a lesson's known symptom finds it whatever its paths and numbers.",
    read_only: true,
    schema: schema::<TriageArgs>,
    call: |arguments, context| Box::pin(async move { run(parse(arguments)?, context).await }),
};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TriageArgs {
    /// The error messages, each as it is (1 to 10).
    #[schemars(length(min = 1, max = 10))]
    pub errors: Vec<String>,
}

async fn run(args: TriageArgs, context: &ToolContext<'_>) -> Result<ToolOutput, AgentError> {
    if args.errors.is_empty() || args.errors.len() > 10 {
        return Err(AgentError::invalid("errors", format!("{} errors, give 1 to 10", args.errors.len())));
    }
    let errors: Vec<String> = args
        .errors
        .iter()
        .enumerate()
        .map(|(index, error)| required_text(&format!("errors[{index}]"), error, 4096))
        .collect::<Result<_, _>>()?;
    let request = proto::SearchManyRequest {
        project: context.identity.project.clone(),
        queries: errors
            .iter()
            .enumerate()
            .map(|(index, error)| proto::SearchQuery {
                query_id: index.to_string(),
                text: error.clone(),
                ..Default::default()
            })
            .collect(),
        // What the agent is given is recorded in the injection ledger.
        session_id: context.session_id.to_string(),
        ..Default::default()
    };
    let found = context.lore()?.knowledge().search_many(request).await?.into_inner();
    let answered = found.results.iter().filter(|result| !result.hits.is_empty()).count();
    let mut text = format!("Lessons for {answered} of {} errors:\n", errors.len());
    let mut results = Vec::new();
    let mut unanswered = Vec::new();
    for (error, result) in errors.iter().zip(&found.results) {
        if result.hits.is_empty() {
            unanswered.push(quoted_error(error));
        } else {
            text.push_str(&format!("- {}\n", quoted_error(error)));
        }
        let hits: Vec<Value> = result.hits.iter().map(|hit| hit_shown(hit, &mut text)).collect();
        results.push(json!({
            "error": error,
            "hits": hits,
            "failed": result.error.as_ref().map(|status| status.message.clone()),
        }));
    }
    if !unanswered.is_empty() {
        text.push_str(&format!("No lesson shown for: {}.\n", unanswered.join(", ")));
    }
    if found.degraded {
        text.push_str("(Searched by words only: the meaning search is unavailable right now.)\n");
    }
    let ids: Vec<String> = found
        .results
        .iter()
        .flat_map(|result| result.hits.iter().filter_map(|hit| hit.entry.as_ref().map(|entry| entry.entry_id.clone())))
        .collect();
    Ok(ToolOutput {
        text,
        structured: json!({ "results": results, "degraded": found.degraded }),
        summary: json!({ "hits": ids }),
    })
}

/// One lesson found for an error: its line of the tool's text, appended
/// to `text`, and its structured form.
fn hit_shown(hit: &proto::SearchHit, text: &mut String) -> Value {
    let entry = hit.entry.clone().unwrap_or_default();
    let handle = if entry.key.is_empty() { entry.entry_id.clone() } else { entry.key.clone() };
    let expand = hit.expand.clone().unwrap_or_default();
    text.push_str(&format!(
        "  [{handle}; {}] {}.{} Why: {}. Expand: {} {}\n",
        trust_label(&entry),
        title_of(&entry),
        best_fix_of(&entry, hit.best_solution.as_ref()),
        why_found(hit),
        expand.tool,
        expand.arguments
    ));
    json!({
        "entry_id": entry.entry_id,
        "key": entry.key,
        "title": shown_words(&entry).0,
        "trust": trust_name(entry.trust),
        "origin": entry.origin.as_ref().map(|origin| origin.description.clone()),
        "why": why_found(hit),
        "best_fix": hit.best_solution.as_ref().filter(|_| speaks(&entry)).map(solution_json),
        "expand": { "tool": expand.tool, "arguments": expand.arguments, "cli": expand.cli },
    })
}

/// One triaged error, as the tool's text shows it.
fn quoted_error(error: &str) -> String {
    format!("\"{}\"", one_line(error.lines().find(|line| !line.trim().is_empty()).unwrap_or(error), 160))
}
