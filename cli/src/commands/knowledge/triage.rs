//! `lore triage`: several errors at once (SearchMany), each with at most
//! two lessons and how to read one in full. Errors come as arguments, or
//! one per line on stdin.

use std::io::BufRead as _;

use anyhow::{Context as _, bail};
use lore_proto::v1 as proto;

use crate::commands::Channel;
use crate::commands::knowledge::search::hit_text;

#[derive(clap::Args)]
pub struct Args {
    /// The error messages; one per line on stdin when none is given.
    errors: Vec<String>,
    #[arg(long, env = "LORE_PROJECT")]
    project: String,
    /// Lessons per error.
    #[arg(long, default_value_t = 2)]
    per_error: u32,
    /// Errors that keep their lessons (those with the best matches).
    #[arg(long, default_value_t = 3)]
    errors_with_lessons: u32,
    /// The response as one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

pub async fn run(channel: Channel, args: Args) -> anyhow::Result<()> {
    let errors = if args.errors.is_empty() {
        std::io::stdin()
            .lock()
            .lines()
            .collect::<Result<Vec<_>, _>>()
            .context("cannot read the errors from stdin")?
            .into_iter()
            .filter(|line| !line.trim().is_empty())
            .collect()
    } else {
        args.errors.clone()
    };
    if errors.is_empty() {
        bail!("no error to triage: give them as arguments or one per line on stdin");
    }
    let request = proto::SearchManyRequest {
        project: args.project,
        queries: errors
            .iter()
            .enumerate()
            .map(|(index, error)| proto::SearchQuery {
                query_id: (index + 1).to_string(),
                text: error.clone(),
                ..Default::default()
            })
            .collect(),
        per_query_limit: args.per_error,
        max_queries_with_hits: args.errors_with_lessons,
        ..Default::default()
    };
    let response = crate::commands::knowledge_client(channel).search_many(request).await?.into_inner();
    if args.json {
        println!("{}", response_json(&errors, &response));
        return Ok(());
    }
    if response.degraded {
        eprintln!("degraded: keyword search only ({})", response.degraded_reason);
    }
    for (error, result) in errors.iter().zip(&response.results) {
        println!("{}. {}", result.query_id, error.trim());
        match (&result.error, result.hits.is_empty(), result.capped) {
            (Some(failed), _, _) => println!("   could not search: {}", failed.message),
            (None, true, true) => println!("   (lessons left out: other errors matched better)"),
            (None, true, false) => println!("   no lesson yet"),
            (None, false, _) => {
                for (rank, hit) in result.hits.iter().enumerate() {
                    print!("{}", indented(&hit_text(rank + 1, hit)));
                    if let Some(expand) = &hit.expand {
                        println!("      expand: {}", expand.cli);
                    }
                }
            }
        }
    }
    Ok(())
}

fn indented(text: &str) -> String {
    text.lines().map(|line| format!("   {line}\n")).collect()
}

fn response_json(errors: &[String], response: &proto::SearchManyResponse) -> serde_json::Value {
    serde_json::json!({
        "results": errors.iter().zip(&response.results).map(|(error, result)| serde_json::json!({
            "error": error,
            "failed": result.error.as_ref().map(|status| status.message.clone()),
            "cached": result.cached,
            "capped": result.capped,
            "hits": result.hits.iter().map(|hit| serde_json::json!({
                "key": hit.entry.as_ref().map(|entry| entry.key.clone()),
                "title": hit.entry.as_ref().map(|entry| entry.title.clone()),
                "score": hit.score,
                "line": hit.line,
                "expand": hit.expand.as_ref().map(|expand| serde_json::json!({
                    "cli": expand.cli, "tool": expand.tool, "arguments": expand.arguments,
                })),
            })).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
        "truncated": response.truncated,
        "degraded": response.degraded,
    })
}
