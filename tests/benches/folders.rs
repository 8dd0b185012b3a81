//! From save to searchable through a sidecar's watched folder (`make
//! bench`), with the real release binaries: a markdown file is written into
//! a folder `lore-sidecar --index` watches (its default debounce), and the
//! clock stops when the server's Search finds it by a word only it holds.
//! Half the saves are new files, half edits of a file already indexed.
//!
//! Baseline in the same run: the same documents sent straight to the
//! server's IndexDocument by the bench itself, timed the same way (call to
//! first hit), which bounds what any watcher can reach here. The difference
//! is the sidecar's part: the debounce, the spool's fsync and the shipping.
//!
//! `cargo build --release --workspace --bins` first (make bench does).

use std::path::Path;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use lore_e2e::{ServerOptions, ServerProcess, TestDatabase};
use lore_proto::v1 as proto;
use lore_proto::v1::knowledge_service_client::KnowledgeServiceClient;
use tonic::transport::Channel;

const PROJECT: &str = "bench";

fn saves() -> usize {
    std::env::var("LORE_BENCH_FOLDER_SAVES").ok().and_then(|value| value.parse().ok()).unwrap_or(40)
}

/// A note only `word` finds.
fn note(title: &str, word: &str) -> String {
    format!("# {title}\n\nWhen the deploy stalls, look for {word} in the rollout log and restart the canary.\n")
}

/// Waits until Search finds the entry titled `title` by `word`.
async fn until_found(knowledge: &mut KnowledgeServiceClient<Channel>, title: &str, word: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let query = proto::SearchQuery {
            text: word.into(),
            limit: 3,
            mode: proto::SearchMode::Keyword.into(),
            ..Default::default()
        };
        let request = proto::SearchRequest { project: PROJECT.into(), query: Some(query), ..Default::default() };
        let hits = knowledge.search(request).await.expect("search").into_inner().hits;
        if hits.iter().any(|hit| hit.entry.as_ref().is_some_and(|entry| entry.title == title)) {
            return;
        }
        assert!(Instant::now() < deadline, "{title} never became searchable by {word}");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

fn record(histogram: &mut Histogram<u64>, begin: Instant) {
    histogram.record(begin.elapsed().as_micros() as u64).expect("in range");
}

fn line(name: &str, histogram: &Histogram<u64>) {
    let millis = |quantile: f64| histogram.value_at_quantile(quantile) as f64 / 1000.0;
    println!(
        "{name:<44} n={:<4} p50 {:>7.1} ms   p95 {:>7.1} ms   max {:>7.1} ms",
        histogram.len(),
        millis(0.5),
        millis(0.95),
        histogram.max() as f64 / 1000.0
    );
}

/// The `index`th save: a new file for even ones, an edit of the file of
/// the save before for odd ones (a word of its own either way).
fn save(docs: &Path, index: usize) -> (String, String) {
    let file = index - index % 2;
    let title = format!("Stalled deploy {file}");
    let word = format!("quokka{index}x");
    std::fs::write(docs.join(format!("stalled-{file}.md")), note(&title, &word)).unwrap();
    (title, word)
}

#[tokio::main]
async fn main() {
    let database = TestDatabase::new().await.unwrap();
    let server = ServerProcess::start(ServerOptions::with_database(&database.url)).await.unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let docs = workspace.path().join("docs");
    std::fs::create_dir_all(&docs).unwrap();
    let sidecar = ServerProcess::start_sidecar(
        &server.endpoint(),
        &workspace.path().join("spool"),
        &["--index", docs.to_str().unwrap(), "--index-project", PROJECT],
    )
    .await
    .unwrap();
    let mut knowledge = KnowledgeServiceClient::new(server.channel().await);
    let (mut watched, mut direct) = (Histogram::<u64>::new(3).unwrap(), Histogram::<u64>::new(3).unwrap());
    let count = saves();
    println!("save to searchable, {count} saves each way (half new files, half edits):");
    for index in 0..count {
        // Alternate, so both see the same machine noise.
        let begin = Instant::now();
        let (title, word) = save(&docs, index);
        until_found(&mut knowledge, &title, &word).await;
        record(&mut watched, begin);

        let file = index - index % 2;
        let title = format!("Direct deploy {file}");
        let word = format!("wombat{index}x");
        let begin = Instant::now();
        let request = proto::IndexDocumentRequest {
            project: PROJECT.into(),
            path: format!("direct/stalled-{file}.md"),
            content: note(&title, &word),
        };
        knowledge.index_document(request).await.expect("index");
        until_found(&mut knowledge, &title, &word).await;
        record(&mut direct, begin);
    }
    line("through the sidecar's watcher (--index)", &watched);
    line("baseline: IndexDocument straight to the server", &direct);
    println!(
        "ratio p95: {:.1}x; the sidecar's part at p95: {:.0} ms (debounce 200 ms, spool fsync, shipping)",
        watched.value_at_quantile(0.95) as f64 / direct.value_at_quantile(0.95).max(1) as f64,
        (watched.value_at_quantile(0.95) as f64 - direct.value_at_quantile(0.95) as f64) / 1000.0
    );
    drop(sidecar);
    drop(server);
}
