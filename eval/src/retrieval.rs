//! `lore eval retrieval`: retrieval quality of KnowledgeService on a
//! BEIR-format set, through the real RPCs. The corpus is indexed with
//! UpsertEntry into a fresh project; every query then runs through Search in
//! each mode, and nDCG@10, Recall@10 and MRR@10 are printed per mode.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::Channel;
use anyhow::{Context as _, bail};
use futures_util::{StreamExt as _, stream};
use indicatif::{ProgressBar, ProgressStyle};
use lore_proto::v1 as proto;
use lore_proto::v1::knowledge_service_client::KnowledgeServiceClient;
use serde::Deserialize;

#[derive(clap::Args)]
pub struct Args {
    /// corpus.jsonl: {"_id", "title", "text"} per line.
    #[arg(long)]
    corpus: PathBuf,
    /// queries.jsonl: {"_id", "text"} per line.
    #[arg(long)]
    queries: PathBuf,
    /// qrels.tsv: query-id, corpus-id, score (with a header line).
    #[arg(long)]
    qrels: PathBuf,
    /// keyword, semantic, hybrid or all.
    #[arg(long, default_value = "all", value_parser = ["keyword", "semantic", "hybrid", "all"])]
    mode: String,
    /// Project to index into; a fresh one by default.
    #[arg(long)]
    project: Option<String>,
    /// Query an already indexed --project instead of indexing the corpus.
    #[arg(long, requires = "project")]
    skip_indexing: bool,
    /// Index and query this many at once.
    #[arg(long, default_value_t = 8)]
    concurrency: usize,
}

#[derive(Deserialize)]
struct Document {
    #[serde(rename = "_id")]
    id: String,
    #[serde(default)]
    title: String,
    text: String,
}

#[derive(Deserialize)]
struct Query {
    #[serde(rename = "_id")]
    id: String,
    text: String,
}

/// The figures of one mode.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct Figures {
    pub ndcg_at_10: f64,
    pub recall_at_10: f64,
    pub mrr_at_10: f64,
}

fn read_jsonl<T: for<'de> Deserialize<'de>>(path: &PathBuf) -> anyhow::Result<Vec<T>> {
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    text.lines()
        .filter(|line| !line.trim().is_empty())
        .enumerate()
        .map(|(index, line)| {
            serde_json::from_str(line).with_context(|| format!("{}:{}: not a valid line", path.display(), index + 1))
        })
        .collect()
}

/// query id -> (corpus id -> relevance).
fn read_qrels(path: &PathBuf) -> anyhow::Result<HashMap<String, HashMap<String, f64>>> {
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut qrels: HashMap<String, HashMap<String, f64>> = HashMap::new();
    for (index, line) in text.lines().enumerate() {
        let fields: Vec<&str> = line.split('\t').collect();
        if index == 0 && fields.first() == Some(&"query-id") || line.trim().is_empty() {
            continue;
        }
        let [query, document, score] = fields[..] else {
            bail!("{}:{}: expected 3 tab-separated fields", path.display(), index + 1);
        };
        let score: f64 =
            score.trim().parse().with_context(|| format!("{}:{}: bad score", path.display(), index + 1))?;
        qrels.entry(query.to_owned()).or_default().insert(document.to_owned(), score);
    }
    Ok(qrels)
}

/// nDCG@10, Recall@10 and MRR@10 of one ranking against its judgments.
pub fn score(ranking: &[String], relevant: &HashMap<String, f64>) -> Figures {
    let top: Vec<&String> = ranking.iter().take(10).collect();
    let gain = |document: &String| relevant.get(document).copied().unwrap_or(0.0).max(0.0);
    let dcg: f64 = top.iter().enumerate().map(|(index, document)| gain(document) / (index as f64 + 2.0).log2()).sum();
    let mut ideal: Vec<f64> = relevant.values().copied().filter(|value| *value > 0.0).collect();
    ideal.sort_by(|a, b| b.total_cmp(a));
    let idcg: f64 = ideal.iter().take(10).enumerate().map(|(index, value)| value / (index as f64 + 2.0).log2()).sum();
    let relevant_count = ideal.len();
    let found = top.iter().filter(|document| gain(document) > 0.0).count();
    let first = top.iter().position(|document| gain(document) > 0.0);
    Figures {
        ndcg_at_10: if idcg > 0.0 { dcg / idcg } else { 0.0 },
        recall_at_10: if relevant_count > 0 { found as f64 / relevant_count as f64 } else { 0.0 },
        mrr_at_10: first.map_or(0.0, |rank| 1.0 / (rank as f64 + 1.0)),
    }
}

fn bar(length: usize, message: &str) -> ProgressBar {
    let bar = ProgressBar::new(length as u64);
    bar.set_style(
        ProgressStyle::with_template("{msg:>18} [{bar:40}] {pos}/{len} {per_sec} eta {eta}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    bar.set_message(message.to_owned());
    bar
}

fn title_of(document: &Document) -> String {
    let title = if document.title.trim().is_empty() {
        document.text.lines().map(str::trim).find(|line| !line.is_empty()).unwrap_or(&document.id)
    } else {
        document.title.trim()
    };
    title.chars().filter(|c| !c.is_control()).take(512).collect()
}

pub async fn run(channel: Channel, args: Args) -> anyhow::Result<()> {
    let corpus: Vec<Document> = read_jsonl(&args.corpus)?;
    let queries: Vec<Query> = read_jsonl(&args.queries)?;
    let qrels = read_qrels(&args.qrels)?;
    let queries: Vec<Query> = queries.into_iter().filter(|query| qrels.contains_key(&query.id)).collect();
    if queries.is_empty() {
        bail!("no query of {} has judgments in {}", args.queries.display(), args.qrels.display());
    }
    let project = args.project.clone().unwrap_or_else(|| format!("eval-{}", chrono::Utc::now().format("%Y%m%d%H%M%S")));
    let client = lore_proto::client::knowledge(channel);
    let concurrency = args.concurrency.max(1);

    if !args.skip_indexing {
        index(&client, &corpus, &project, concurrency).await?;
    }
    evaluate(&client, &args, &project, &queries, &qrels, concurrency).await
}

async fn index(
    client: &KnowledgeServiceClient<Channel>,
    corpus: &[Document],
    project: &str,
    concurrency: usize,
) -> anyhow::Result<()> {
    let indexing = bar(corpus.len(), "indexing");
    let started = Instant::now();
    let results: Vec<anyhow::Result<()>> = stream::iter(corpus.iter())
        .map(|document| {
            let mut client = client.clone();
            let entry = proto::Entry {
                key: document.id.clone(),
                project: project.to_owned(),
                kind: proto::EntryKind::Learning as i32,
                title: title_of(document),
                body: document.text.replace('\0', ""),
                ..Default::default()
            };
            let indexing = indexing.clone();
            async move {
                client
                    .upsert_entry(proto::UpsertEntryRequest { entry: Some(entry) })
                    .await
                    .with_context(|| format!("indexing document {}", document.id))?;
                indexing.inc(1);
                Ok(())
            }
        })
        .buffer_unordered(concurrency)
        .collect()
        .await;
    results.into_iter().collect::<anyhow::Result<()>>()?;
    indexing.finish_and_clear();
    let stored_in = started.elapsed();
    // Searching by meaning needs every vector: wait for the server's
    // embedding of what was just stored.
    if let crate::embedding_progress::Embedded::Stalled { pending, reason } =
        crate::embedding_progress::wait(client, project).await?
    {
        bail!("{pending} documents could not be embedded ({reason}); the semantic figures would be wrong");
    }
    let indexed_in = started.elapsed();
    println!(
        "indexed {} documents into project {project} in {:.1} s ({:.1} docs/s; stored in {:.1} s, then embedded)",
        corpus.len(),
        indexed_in.as_secs_f64(),
        corpus.len() as f64 / indexed_in.as_secs_f64(),
        stored_in.as_secs_f64()
    );
    Ok(())
}

async fn evaluate(
    client: &KnowledgeServiceClient<Channel>,
    args: &Args,
    project: &str,
    queries: &[Query],
    qrels: &HashMap<String, HashMap<String, f64>>,
    concurrency: usize,
) -> anyhow::Result<()> {
    let modes: Vec<(&str, proto::SearchMode)> = [
        ("keyword", proto::SearchMode::Keyword),
        ("semantic", proto::SearchMode::Semantic),
        ("hybrid", proto::SearchMode::Hybrid),
    ]
    .into_iter()
    .filter(|(name, _)| args.mode == "all" || args.mode == *name)
    .collect();
    println!(
        "{:<9} {:>8} {:>10} {:>8} {:>8} {:>11}",
        "mode", "nDCG@10", "Recall@10", "MRR@10", "queries", "p50 latency"
    );
    for (name, mode) in modes {
        let progress = bar(queries.len(), name);
        let outcomes: Vec<anyhow::Result<(Figures, Duration, bool)>> = stream::iter(queries.iter())
            .map(|query| {
                let mut client = client.clone();
                let request = proto::SearchRequest {
                    project: project.to_owned(),
                    query: Some(proto::SearchQuery {
                        text: query.text.clone(),
                        limit: 10,
                        mode: mode as i32,
                        ..Default::default()
                    }),
                    ..Default::default()
                };
                let relevant = &qrels[&query.id];
                let progress = progress.clone();
                async move {
                    let started = Instant::now();
                    let response = client.search(request).await.with_context(|| format!("query {}", query.id))?;
                    let took = started.elapsed();
                    let response = response.into_inner();
                    let ranking: Vec<String> = response
                        .hits
                        .iter()
                        .filter_map(|hit| hit.entry.as_ref().map(|entry| entry.key.clone()))
                        .collect();
                    progress.inc(1);
                    Ok((score(&ranking, relevant), took, response.degraded))
                }
            })
            .buffered(concurrency)
            .collect()
            .await;
        progress.finish_and_clear();
        let outcomes = outcomes.into_iter().collect::<anyhow::Result<Vec<_>>>()?;
        let count = outcomes.len() as f64;
        let mean =
            |pick: fn(&Figures) -> f64| outcomes.iter().map(|(figures, _, _)| pick(figures)).sum::<f64>() / count;
        let mut latencies: Vec<Duration> = outcomes.iter().map(|(_, took, _)| *took).collect();
        latencies.sort();
        let degraded = outcomes.iter().filter(|(_, _, degraded)| *degraded).count();
        println!(
            "{name:<9} {:>8.4} {:>10.4} {:>8.4} {:>8} {:>8.1} ms{}",
            mean(|figures| figures.ndcg_at_10),
            mean(|figures| figures.recall_at_10),
            mean(|figures| figures.mrr_at_10),
            outcomes.len(),
            latencies[latencies.len() / 2].as_secs_f64() * 1000.0,
            if degraded > 0 { format!("  ({degraded} degraded to keyword-only)") } else { String::new() }
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_follow_their_definitions() {
        let relevant: HashMap<String, f64> = [("b".to_owned(), 1.0)].into();
        let ranking: Vec<String> = ["a", "b", "c"].map(String::from).to_vec();
        let figures = score(&ranking, &relevant);
        assert!((figures.mrr_at_10 - 0.5).abs() < 1e-12);
        assert!((figures.recall_at_10 - 1.0).abs() < 1e-12);
        assert!((figures.ndcg_at_10 - 1.0 / 3f64.log2()).abs() < 1e-12);
        let missed = score(&["x".to_owned()], &relevant);
        assert_eq!(missed, Figures::default());
    }
}
