//! KnowledgeService benchmarks (`make bench`): search latency at 10,000 and
//! 100,000 entries per mode with the query embedding timed on its own, and
//! searches per second with concurrent clients at 100,000,
//! indexing throughput with the local model, and how long a saved markdown
//! file takes to become searchable through the folder watcher. Baselines are
//! measured in the same run on the same database: a bare HNSW kNN query and a
//! bare full-text query for search, the embedder alone for indexing.
//!
//! The entries are the retrieval corpus (the Python standard library's functions), every one embedded for real (see
//! `lore_server::testing::corpus`).

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{histogram, latencies, millis, record};
use hdrhistogram::Histogram;
use lore_domain::knowledge::KnowledgeBase;
use lore_domain::knowledge::embed::{self, Embedder, LocalEmbedder};
use lore_domain::knowledge::watch::{self, WatchConfig, WatchStats, WatchedFolder};
use lore_proto::v1 as proto;
use lore_proto::v1::knowledge_service_client::KnowledgeServiceClient;
use lore_server::config::Config;
use lore_server::testing::corpus::{Corpus, fill, vector_text};
use lore_server::testing::{Replicated, TestServer};
use lore_types::knowledge::DocumentSource;
use lore_types::scope::ProjectScope;
use sqlx::Connection as _;
use sqlx::PgPool;
use tonic::transport::Channel;

/// The project searched: exactly the entries of [`SIZES`].
const PROJECT: &str = "bench-knowledge";
/// The project of the indexing and watcher sections.
const INDEXING_PROJECT: &str = "bench-indexing";
const SIZES: [usize; 2] = [10_000, 100_000];
const SEARCHES: usize = 300;
/// Concurrent clients of the throughput rows.
const CLIENTS: usize = 8;
const WARMUP: usize = 30;
const INDEXED_DOCUMENTS: usize = 200;
const SAVES: usize = 40;

type Client = KnowledgeServiceClient<Channel>;

fn search_request(project: &str, text: &str, mode: proto::SearchMode) -> proto::SearchRequest {
    proto::SearchRequest {
        project: project.into(),
        query: Some(proto::SearchQuery { text: text.into(), limit: 10, mode: mode as i32, ..Default::default() }),
        ..Default::default()
    }
}

/// What `clients` concurrent clients saw searching the questions.
struct Load {
    latencies: Histogram<u64>,
    per_second: f64,
    /// Searches answered with an error (timed too: a client waited for it).
    errors: Vec<tonic::Status>,
}

/// The questions searched by `clients` concurrent clients of one server,
/// each question once, after warming up with other texts (the functions'
/// titles) so that no question's vector is in the server's cache: hybrid
/// and semantic searches include the query embedding.
async fn concurrent_searches(channel: Channel, corpus: &Corpus, mode: proto::SearchMode, clients: usize) -> Load {
    let mut client = Client::new(channel.clone());
    for index in 0..WARMUP {
        client.search(search_request(PROJECT, &corpus.title(index), mode)).await.unwrap();
    }
    let questions: Arc<Vec<String>> = Arc::new(corpus.questions.iter().take(SEARCHES).cloned().collect());
    let errors = Arc::new(std::sync::Mutex::new(Vec::new()));
    let failed = Arc::clone(&errors);
    let (latencies, elapsed) = latencies(clients, SEARCHES, move |client, index| {
        let (channel, questions, failed) = (channel.clone(), Arc::clone(&questions), Arc::clone(&failed));
        async move {
            let question = &questions[index * clients + client];
            match Client::new(channel).search(search_request(PROJECT, question, mode)).await {
                Ok(response) => {
                    let response = response.into_inner();
                    assert!(!response.degraded, "{}", response.degraded_reason);
                    assert!(!response.hits.is_empty(), "{question}: nothing found");
                }
                Err(status) => failed.lock().unwrap().push(status),
            }
        }
    })
    .await;
    let per_second = latencies.len() as f64 / elapsed.as_secs_f64();
    let errors = std::mem::take(&mut *errors.lock().unwrap());
    Load { latencies, per_second, errors }
}

async fn timed_sql(pool: &PgPool, statements: &[(String, Option<String>)]) -> Histogram<u64> {
    let mut latencies = histogram();
    let mut connection = pool.acquire().await.unwrap();
    sqlx::query("SET hnsw.ef_search = 100").execute(&mut *connection).await.unwrap();
    for (round, (sql, parameter)) in statements.iter().cycle().take(SEARCHES + WARMUP).enumerate() {
        let begin = Instant::now();
        let query = sqlx::query(sqlx::AssertSqlSafe(sql.as_str()));
        let query = match parameter {
            Some(parameter) => query.bind(parameter),
            None => query,
        };
        query.fetch_all(&mut *connection).await.unwrap();
        if round >= WARMUP {
            record(&mut latencies, begin);
        }
    }
    latencies
}

/// The question's words OR-ed, as a bare full-text query would take them.
fn or_query(question: &str) -> String {
    let words: Vec<&str> = question.split(|c: char| !c.is_alphanumeric()).filter(|word| !word.is_empty()).collect();
    words.join(" | ")
}

/// Each question embedded alone, timed, and its vector as SQL text.
async fn embed_questions(corpus: &Corpus, embedder: &Arc<dyn Embedder>) -> (Histogram<u64>, Vec<String>) {
    let mut embedding = histogram();
    let mut vectors = Vec::new();
    for question in &corpus.questions {
        let begin = Instant::now();
        let vector = embedder.embed(std::slice::from_ref(question)).await.unwrap();
        record(&mut embedding, begin);
        vectors.push(vector_text(&vector[0]));
    }
    (embedding, vectors)
}

async fn bench_query_embedding(corpus: &Corpus, embedder: &Arc<dyn Embedder>) {
    embed_questions(corpus, embedder).await;
    let (embedding, _) = embed_questions(corpus, embedder).await;
    println!(
        "\n## Query embedding alone ({} questions, second pass): p50 {:.2} ms, p99 {:.2} ms",
        corpus.questions.len(),
        millis(&embedding, 0.5),
        millis(&embedding, 0.99)
    );
}

/// A new replica of the deployment (nothing cached), once its keyword
/// index holds all `entries` (when it has one); and how long that took.
async fn fresh_replica(server: &TestServer, config: Config, entries: usize) -> (TestServer, Duration) {
    let started = Instant::now();
    let keyword_index = config.knowledge.keyword_index.enabled;
    let replica = server.sibling(config).await;
    let mut client = KnowledgeServiceClient::new(replica.channel().await);
    if keyword_index {
        loop {
            let status = client
                .get_index_status(proto::GetIndexStatusRequest { project: PROJECT.into() })
                .await
                .unwrap()
                .into_inner();
            if status.keyword_index_ready && status.keyword_index_entries == entries as u64 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    (replica, started.elapsed())
}

async fn bench_search(corpus: &Corpus, embedder: &Arc<dyn Embedder>) {
    let cache_dir = lore_pgtest::default_cache_dir();
    let replicated = Replicated::start().await;
    let standby_url = replicated.standby_url();
    let Replicated { primary, standby, database } = replicated;
    let mut standby_watch = sqlx::PgConnection::connect(&standby_url).await.unwrap();
    let server = TestServer::start_on(TestServer::config(), database).await;
    let pool = server.pool();

    let (embedding, query_vectors) = embed_questions(corpus, embedder).await;
    println!("\n## Search latency over gRPC, 10 hits, {SEARCHES} real questions per row, one client\n");
    println!(
        "Each row asks a replica started for it (nothing cached): hybrid and semantic include the query \
         embedding. Query embedding alone (fused encoder, in process): p50 {:.2} ms, p99 {:.2} ms.\n",
        millis(&embedding, 0.5),
        millis(&embedding, 0.99)
    );
    let now = TestServer::config();
    let mut old = TestServer::config();
    old.knowledge.keyword_index.enabled = false;
    let mut on_replica = TestServer::config();
    on_replica.database.read_urls = vec![standby_url.clone()];
    let rows = [
        ("hybrid", &now, proto::SearchMode::Hybrid),
        ("keyword", &now, proto::SearchMode::Keyword),
        ("semantic", &now, proto::SearchMode::Semantic),
        ("before: hybrid (PostgreSQL full text)", &old, proto::SearchMode::Hybrid),
        ("before: keyword (PostgreSQL full text)", &old, proto::SearchMode::Keyword),
        ("hybrid, reads on a streaming replica", &on_replica, proto::SearchMode::Hybrid),
        ("keyword, reads on a streaming replica", &on_replica, proto::SearchMode::Keyword),
        ("semantic, reads on a streaming replica", &on_replica, proto::SearchMode::Semantic),
    ];
    let mut table = vec!["| entries | measure | p50 | p99 |".to_owned(), "|---:|---|---:|---:|".to_owned()];
    let mut memory = Vec::new();
    let mut filled = 0;
    for size in SIZES {
        fill(pool, PROJECT, corpus, embedder, &cache_dir, filled, size).await;
        filled = size;
        lore_server::testing::caught_up(pool, &mut standby_watch, Duration::from_secs(600)).await;
        for (name, config, mode) in &rows {
            let (replica, ready) = fresh_replica(&server, (*config).clone(), size).await;
            if *name == "hybrid" {
                memory.push(keyword_index_memory(pool, size, ready, &replica).await);
            }
            let Load { latencies, errors, .. } = concurrent_searches(replica.channel().await, corpus, *mode, 1).await;
            assert!(errors.is_empty(), "{name}: {errors:?}");
            let name = if name.starts_with("before") { name.to_string() } else { format!("**{name}**") };
            table.push(format!(
                "| {size} | {name} | {:.2} ms | {:.2} ms |",
                millis(&latencies, 0.5),
                millis(&latencies, 0.99)
            ));
            println!("{}", table.last().unwrap());
            replica.stop().await;
        }
        let dimensions = embedder.dimensions();
        let knn: Vec<(String, Option<String>)> = query_vectors
            .iter()
            .map(|vector| {
                let sql = format!(
                    "SELECT entry_id FROM knowledge_embeddings WHERE model = '{}'
                     ORDER BY embedding::vector({dimensions}) <=> '{vector}'::vector({dimensions}) LIMIT 10",
                    embedder.model()
                );
                (sql, None)
            })
            .collect();
        let latencies = timed_sql(pool, &knn).await;
        table.push(format!(
            "| {size} | baseline: bare HNSW kNN (SQL, vector given) | {:.2} ms | {:.2} ms |",
            millis(&latencies, 0.5),
            millis(&latencies, 0.99)
        ));
        println!("{}", table.last().unwrap());
        let full_text: Vec<(String, Option<String>)> = corpus
            .questions
            .iter()
            .map(|question| {
                let sql = format!(
                    "SELECT entry_id FROM knowledge_entries, to_tsquery('english', $1) AS q
                     WHERE project = '{PROJECT}' AND search_document @@ q
                     ORDER BY ts_rank(search_document, q) DESC LIMIT 10"
                );
                (sql, Some(or_query(question)))
            })
            .collect();
        let latencies = timed_sql(pool, &full_text).await;
        table.push(format!(
            "| {size} | baseline: bare full text, words OR-ed, ts_rank (SQL) | {:.2} ms | {:.2} ms |",
            millis(&latencies, 0.5),
            millis(&latencies, 0.99)
        ));
        println!("{}", table.last().unwrap());
    }
    println!("\n{}", table.join("\n"));
    println!("\n{}", memory.join("\n"));

    println!(
        "\n## Throughput at {filled} entries: {SEARCHES} questions over 1 and {CLIENTS} concurrent clients of one \
         new replica\n"
    );
    println!("| measure | clients | searches/s | p50 | p99 | errors |\n|---|---:|---:|---:|---:|---:|");
    let mut failures = Vec::new();
    for (name, config, mode) in rows.iter().take(5) {
        for clients in [1, CLIENTS] {
            let (replica, _) = fresh_replica(&server, (*config).clone(), filled).await;
            let load = concurrent_searches(replica.channel().await, corpus, *mode, clients).await;
            println!(
                "| {name} | {clients} | {:.1} | {:.2} ms | {:.2} ms | {} |",
                load.per_second,
                millis(&load.latencies, 0.5),
                millis(&load.latencies, 0.99),
                load.errors.len()
            );
            failures.extend(load.errors.first().map(|status| format!("{name}, {clients} clients: {status:?}")));
            replica.stop().await;
        }
    }
    if !failures.is_empty() {
        println!("\nFirst error of each row that had some:\n{}", failures.join("\n"));
    }
    server.stop().await;
    drop((standby, primary));
}

/// What a new replica's keyword index cost to build and holds in memory,
/// next to the entries' text and PostgreSQL's full-text index of it.
async fn keyword_index_memory(pool: &PgPool, size: usize, built_in: Duration, replica: &TestServer) -> String {
    let (text, gin): (i64, i64) = sqlx::query_as(
        "SELECT sum(octet_length(title) + octet_length(summary) + octet_length(body))::bigint,
                pg_relation_size('knowledge_entries_search_idx')
         FROM knowledge_entries",
    )
    .fetch_one(pool)
    .await
    .unwrap();
    let mib = |bytes: u64| bytes as f64 / (1024.0 * 1024.0);
    format!(
        "{size} entries: a new replica built its keyword index in {:.1} s; it holds {:.1} MiB, \
         for {:.1} MiB of entry text (PostgreSQL's full-text GIN index: {:.1} MiB).",
        built_in.as_secs_f64(),
        mib(replica.knowledge.keyword_index_bytes().unwrap_or(0)),
        mib(text as u64),
        mib(gin as u64),
    )
}

fn markdown(title: &str, body: &str) -> String {
    format!("---\ncategory: python\ntags: [bench]\n---\n# {title}\n\n```python\n{body}\n```\n")
}

/// The texts the server embeds of a project's entries (the models alone
/// are timed on exactly those).
async fn embedded_texts(pool: &PgPool, project: &str) -> Vec<String> {
    sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
        "SELECT {} FROM knowledge_entries e WHERE project = $1",
        lore_store::knowledge::embeddings::EMBEDDED_TEXT
    )))
    .bind(project)
    .fetch_all(pool)
    .await
    .unwrap()
}

async fn bench_indexing(server: &TestServer, corpus: &Corpus, embedder: &Arc<dyn Embedder>) {
    let documents: Vec<(String, String)> = (0..INDEXED_DOCUMENTS)
        .map(|index| {
            let index = 2000 + index;
            (corpus.title(index), corpus.documents[index].clone())
        })
        .collect();
    let rate = |elapsed: Duration| INDEXED_DOCUMENTS as f64 / elapsed.as_secs_f64();
    let scope = ProjectScope::All;

    // Before: candle-transformers' BERT, and each document parsed, stored and
    // embedded before the next (IndexDocument waited for its vector).
    let reference: Arc<dyn Embedder> = Arc::new(
        LocalEmbedder::load_reference(&lore_pgtest::default_cache_dir().join("models/all-MiniLM-L6-v2"))
            .expect("the local model (`make tools`)"),
    );
    // A database of its own: the server's drainer must not help.
    let before_database = lore_pgtest::TestDatabase::new().await.unwrap();
    let before = KnowledgeBase::new(before_database.pool.clone(), Some(Arc::clone(&reference)), Default::default());
    let started = Instant::now();
    for (index, (title, body)) in documents.iter().enumerate() {
        let source = DocumentSource {
            project: format!("{INDEXING_PROJECT}-before"),
            path: format!("bench/indexed-{index}.md"),
            root: None,
        };
        let (_, changed) = before.index_document(&scope, &source, &markdown(title, body)).await.unwrap();
        assert!(changed);
        before.index_pending().await.unwrap();
    }
    let old_path = started.elapsed();
    let started = Instant::now();
    for text in &embedded_texts(&before_database.pool, &format!("{INDEXING_PROJECT}-before")).await {
        reference.embed(std::slice::from_ref(text)).await.unwrap();
    }
    let reference_alone = started.elapsed();

    // Now: IndexDocument returns once stored; the server's drainer embeds in
    // batches of similar length on every core while the next are stored.
    let mut client = KnowledgeServiceClient::new(server.channel().await);
    let started = Instant::now();
    for (index, (title, body)) in documents.iter().enumerate() {
        let request = proto::IndexDocumentRequest {
            project: INDEXING_PROJECT.into(),
            path: format!("bench/indexed-{index}.md"),
            content: markdown(title, body),
        };
        let response = client.index_document(request).await.unwrap().into_inner();
        assert!(response.changed);
    }
    let stored = started.elapsed();
    lore_server::testing::embedded(server.pool()).await;
    let new_path = started.elapsed();
    let started = Instant::now();
    embedder.embed(&embedded_texts(server.pool(), INDEXING_PROJECT).await).await.unwrap();
    let fused_alone = started.elapsed();

    println!(
        "\n## Indexing throughput, {INDEXED_DOCUMENTS} markdown documents (standard-library functions), one client\n"
    );
    println!("| measure | docs/s |\n|---|---:|");
    println!(
        "| before: parse, store, embed each document before the next (candle-transformers BERT) | {:.1} |",
        rate(old_path)
    );
    println!("| baseline: candle-transformers BERT alone, one text per call | {:.1} |", rate(reference_alone));
    println!(
        "| **now: IndexDocument over gRPC until every vector is stored** (stored in {:.1} s) | **{:.1}** ({:.1}x before) |",
        stored.as_secs_f64(),
        rate(new_path),
        old_path.as_secs_f64() / new_path.as_secs_f64()
    );
    println!("| baseline: the fused encoder alone, all texts in one call | {:.1} |", rate(fused_alone));
}

async fn bench_watcher(server: &TestServer, corpus: &Corpus, embedder: &Arc<dyn Embedder>) {
    let folder = tempfile::tempdir().unwrap();
    let knowledge = KnowledgeBase::new(server.pool().clone(), Some(Arc::clone(embedder)), Default::default());
    let config = WatchConfig {
        folders: vec![WatchedFolder {
            path: folder.path().to_owned(),
            project: INDEXING_PROJECT.into(),
            publish: false,
        }],
        ..WatchConfig::default()
    };
    let debounce = config.debounce_ms;
    let stats = Arc::new(WatchStats::default());
    let watcher = {
        let stats = Arc::clone(&stats);
        tokio::spawn(async move { watch::watch(knowledge, config, stats).await.unwrap() })
    };
    while stats.reconciled.load(std::sync::atomic::Ordering::Relaxed) == 0 {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let mut client = KnowledgeServiceClient::new(server.channel().await);
    let mut searchable = histogram();
    for save in 0..SAVES {
        let marker = format!("zebrafinch{save}");
        let content = markdown(&format!("{} {marker}", corpus.title(3000 + save)), &corpus.documents[3000 + save]);
        let begin = Instant::now();
        std::fs::write(folder.path().join(format!("saved-{save}.md")), content).unwrap();
        loop {
            let request = search_request(INDEXING_PROJECT, &marker, proto::SearchMode::Keyword);
            let hits = client.search(request).await.unwrap().into_inner().hits;
            // Only this save's entry counts: trigram similarity also finds
            // the earlier saves' near-identical markers.
            if hits.iter().any(|hit| hit.entry.as_ref().is_some_and(|entry| entry.title.ends_with(&marker))) {
                break;
            }
            assert!(begin.elapsed() < Duration::from_secs(30), "save {save} never became searchable");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        record(&mut searchable, begin);
    }
    watcher.abort();
    println!("\n## File save to searchable through the folder watcher ({SAVES} saves, debounce {debounce} ms)\n");
    println!("| measure | p50 | p95 |\n|---|---:|---:|");
    println!(
        "| write() to the first Search that finds it | {:.0} ms | {:.0} ms |",
        millis(&searchable, 0.5),
        millis(&searchable, 0.95)
    );
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let server = TestServer::start().await;
        let embedder = embed::from_config(&Config::default().knowledge.embedding, &lore_pgtest::default_cache_dir())
            .expect("the local model (`make tools`)");
        let corpus = Corpus::load();
        println!("# KnowledgeService benchmarks ({} cores)", common::cores());
        // `cargo bench --bench knowledge -- watch` runs only that section.
        let run = common::wanted_sections();
        if run("embed") {
            bench_query_embedding(&corpus, &embedder).await;
        }
        if run("indexing") {
            bench_indexing(&server, &corpus, &embedder).await;
        }
        if run("watch") {
            bench_watcher(&server, &corpus, &embedder).await;
        }
        if run("search") {
            bench_search(&corpus, &embedder).await;
        }
        server.stop().await;
    });
}
