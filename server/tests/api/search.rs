//! KnowledgeService search with the real local model, a real PostgreSQL
//! with pgvector, over real gRPC.

use lore_domain::knowledge::embed::{EmbeddingConfig, ProviderKind};
use lore_proto::v1 as proto;
use lore_server::testing::TestServer;
use tonic::Code;
use uuid::Uuid;

use crate::knowledge_client as client;

type Client = crate::KnowledgeClient;

fn entry(key: &str, title: &str, summary: &str, category: &str) -> proto::Entry {
    proto::Entry {
        key: key.into(),
        project: "lore".into(),
        kind: proto::EntryKind::IssuePattern as i32,
        title: title.into(),
        summary: summary.into(),
        category: category.into(),
        ..Default::default()
    }
}

async fn upsert(client: &mut Client, entry: proto::Entry) -> proto::Entry {
    client.upsert_entry(proto::UpsertEntryRequest { entry: Some(entry) }).await.unwrap().into_inner().entry.unwrap()
}

fn query(text: &str) -> proto::SearchQuery {
    proto::SearchQuery { text: text.into(), limit: 5, ..Default::default() }
}

async fn search(client: &mut Client, query: proto::SearchQuery) -> proto::SearchResponse {
    client
        .search(proto::SearchRequest { project: "lore".into(), query: Some(query), ..Default::default() })
        .await
        .unwrap()
        .into_inner()
}

fn keys(response: &proto::SearchResponse) -> Vec<String> {
    response.hits.iter().map(|hit| hit.entry.as_ref().unwrap().key.clone()).collect()
}

/// A small knowledge base of unrelated lessons.
async fn seed(client: &mut Client) {
    let lessons = [
        (
            "PAT-001",
            "RLS policy blocks writes",
            "Postgres refuses the app role's INSERT: the policy has no WITH CHECK",
            "database",
        ),
        (
            "PAT-002",
            "Authentication token expired",
            "Login fails after an hour because the session token is not refreshed",
            "auth",
        ),
        ("PAT-003", "Flaky CSS grid on small screens", "The layout collapses under 400px wide", "frontend"),
        (
            "PAT-004",
            "Docker build cache misses",
            "Every CI build reinstalls dependencies because the lock file is copied late",
            "ci",
        ),
        ("PAT-005", "Timezone bug in reports", "Daily report boundaries use UTC instead of the user's zone", "backend"),
    ];
    for (key, title, summary, category) in lessons {
        upsert(client, entry(key, title, summary, category)).await;
    }
}

/// [`seed`], then waits for every lesson's vector.
async fn seed_embedded(server: &TestServer, client: &mut Client) {
    seed(client).await;
    lore_server::testing::embedded(server.pool()).await;
}

#[tokio::test]
async fn words_agents_use_find_the_lesson_they_need() {
    let server = TestServer::start().await;
    let mut client = client(&server).await;
    seed_embedded(&server, &mut client).await;
    for (text, expected) in [
        ("row level security", "PAT-001"),
        ("inserting rows is denied", "PAT-001"),
        ("auth broken", "PAT-002"),
        ("authetication", "PAT-002"),
        ("docker layer caching in CI", "PAT-004"),
        ("wrong day boundaries for users in other zones", "PAT-005"),
    ] {
        let response = search(&mut client, query(text)).await;
        assert!(!response.degraded, "{response:?}");
        assert_eq!(keys(&response).first().map(String::as_str), Some(expected), "{text:?}: {:?}", keys(&response));
    }

    // Each hit says why it matched.
    let response = search(&mut client, query("row level security blocks INSERT")).await;
    let top = &response.hits[0];
    let signals: Vec<i32> = top.reasons.iter().map(|reason| reason.signal).collect();
    assert!(signals.contains(&(proto::MatchSignal::Keyword as i32)), "{:?}", top.reasons);
    assert!(signals.contains(&(proto::MatchSignal::Semantic as i32)), "{:?}", top.reasons);
    let keyword = top.reasons.iter().find(|reason| reason.signal == proto::MatchSignal::Keyword as i32).unwrap();
    assert!(keyword.matched_terms.contains(&"rls".to_owned()), "the synonym matched: {:?}", keyword.matched_terms);
    assert!(keyword.matched_terms.contains(&"insert".to_owned()), "{:?}", keyword.matched_terms);

    // The modes can be forced.
    let keyword_only =
        search(&mut client, proto::SearchQuery { mode: proto::SearchMode::Keyword as i32, ..query("RLS") }).await;
    assert!(
        keyword_only
            .hits
            .iter()
            .all(|hit| hit.reasons.iter().all(|reason| reason.signal != proto::MatchSignal::Semantic as i32))
    );
    let semantic_only = search(
        &mut client,
        proto::SearchQuery { mode: proto::SearchMode::Semantic as i32, ..query("the login session ran out") },
    )
    .await;
    assert_eq!(keys(&semantic_only)[0], "PAT-002");
    assert!(
        semantic_only
            .hits
            .iter()
            .all(|hit| hit.reasons.iter().all(|reason| reason.signal == proto::MatchSignal::Semantic as i32))
    );

    // Filters hold in every signal.
    let filtered = search(
        &mut client,
        proto::SearchQuery { category: "frontend".into(), category_only: true, ..query("RLS policy INSERT") },
    )
    .await;
    assert!(filtered.hits.iter().all(|hit| hit.entry.as_ref().unwrap().category == "frontend"), "{filtered:?}");
    assert!(!filtered.hits.is_empty());
}

/// Records `applied` uses of the entry's only solution, `succeeded` of
/// them successful.
async fn prove(client: &mut Client, entry: &proto::Entry, applied: usize, succeeded: usize) {
    let Some(proto::entry::Details::IssuePattern(details)) = &entry.details else { panic!("not a pattern") };
    for index in 0..applied {
        let request = proto::RecordApplicationRequest {
            entry_id: entry.entry_id.clone(),
            session_id: Uuid::now_v7().to_string(),
            solution_id: details.solutions[0].solution_id.clone(),
            success: index < succeeded,
            resolution_minutes: 10.0,
            ..Default::default()
        };
        client.record_application(request).await.unwrap();
    }
}

fn with_solution(mut entry: proto::Entry, solution: &str) -> proto::Entry {
    entry.details = Some(proto::entry::Details::IssuePattern(proto::IssuePatternDetails {
        solutions: vec![proto::Solution { description: solution.into(), ..Default::default() }],
        ..Default::default()
    }));
    entry
}

#[tokio::test]
async fn a_proven_fix_outranks_a_slightly_more_similar_unproven_one_and_the_blend_is_as_specified() {
    let server = TestServer::start().await;
    let mut client = client(&server).await;
    let similar = upsert(
        &mut client,
        with_solution(
            entry("PAT-100", "Connection pool exhausted", "The pool runs out of connections", "database"),
            "Raise max_connections",
        ),
    )
    .await;
    let proven = upsert(
        &mut client,
        with_solution(
            entry(
                "PAT-101",
                "Connection pool exhausted under load",
                "Requests wait for a pooled connection",
                "database",
            ),
            "Release connections before awaiting other services",
        ),
    )
    .await;
    prove(&mut client, &similar, 20, 4).await;
    prove(&mut client, &proven, 20, 19).await;

    let response = search(&mut client, query("connection pool exhausted")).await;
    let hit = |key: &str| response.hits.iter().find(|hit| hit.entry.as_ref().unwrap().key == key).unwrap();
    let (similar_hit, proven_hit) = (hit("PAT-100"), hit("PAT-101"));
    let (similar_parts, proven_parts) = (similar_hit.parts.unwrap(), proven_hit.parts.unwrap());
    assert!(similar_parts.similarity >= proven_parts.similarity, "{similar_parts:?} vs {proven_parts:?}");
    assert_eq!(keys(&response)[0], "PAT-101", "the 95% fix first: {:?}", keys(&response));
    assert!((proven_parts.success_rate - 0.95).abs() < 1e-9);
    assert!((similar_parts.success_rate - 0.2).abs() < 1e-9);
    for hit in &response.hits {
        let parts = hit.parts.unwrap();
        let blend = 0.4 * parts.similarity + 0.3 * parts.success_rate + 0.2 * parts.recency + 0.1 * parts.specificity;
        assert!((hit.score - blend).abs() < 1e-9, "{} != {blend}", hit.score);
        assert!(parts.recency > 0.99, "updated just now: {}", parts.recency);
    }
    assert!(proven_hit.recommendation.starts_with("apply preemptively"), "{}", proven_hit.recommendation);
    assert!(proven_hit.line.contains("95% of 20"), "{}", proven_hit.line);
    assert_eq!(proven_hit.best_solution.as_ref().unwrap().times_successful, 19);
    assert_eq!(proven_hit.applied_before.len(), 3);
}

#[tokio::test]
async fn search_many_caps_per_query_and_in_total() {
    let server = TestServer::start().await;
    let mut client = client(&server).await;
    seed_embedded(&server, &mut client).await;
    let queries: Vec<proto::SearchQuery> = ["RLS insert", "auth token", "docker cache", "timezone report"]
        .iter()
        .enumerate()
        .map(|(index, text)| proto::SearchQuery {
            query_id: format!("q{index}"),
            text: (*text).into(),
            ..Default::default()
        })
        .collect();
    let response = client
        .search_many(proto::SearchManyRequest { project: "lore".into(), queries, ..Default::default() })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(response.results.len(), 4);
    assert!(response.results.iter().all(|result| result.hits.len() <= 2), "2 per query by default");
    let total: usize = response.results.iter().map(|result| result.hits.len()).sum();
    assert_eq!(total, 6, "6 in total by default");
    assert!(response.truncated);
    assert_eq!(response.results[1].query_id, "q1");
    assert!(response.results.iter().all(|result| result.hits.iter().all(|hit| !hit.line.is_empty())));
}

#[tokio::test]
async fn a_failing_embedding_provider_degrades_to_keyword_search_without_an_error() {
    // An OpenAI-compatible endpoint that is not there.
    let dead = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let mut config = TestServer::config();
    config.knowledge.embedding = EmbeddingConfig {
        provider: ProviderKind::Openai,
        url: format!("http://{dead}/v1"),
        dimensions: 8,
        timeout_ms: 500,
        max_retries: 0,
        ..EmbeddingConfig::default()
    };
    let server = TestServer::start_with(config).await;
    let mut client = client(&server).await;
    seed(&mut client).await;
    // Failed embedding stays queued for the retry, and the status says why.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let status = loop {
        let status = client
            .get_index_status(proto::GetIndexStatusRequest { project: "lore".into() })
            .await
            .unwrap()
            .into_inner();
        if status.embeddings_failing == 5 {
            break status;
        }
        assert!(std::time::Instant::now() < deadline, "the attempts never failed: {status:?}");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    };
    assert_eq!(status.embeddings_pending, 5);
    assert!(status.last_embedding_error.contains("unavailable"), "{status:?}");
    let response = search(&mut client, query("row level security")).await;
    assert!(response.degraded);
    assert!(response.degraded_reason.contains("embedding provider unavailable"), "{}", response.degraded_reason);
    assert_eq!(keys(&response)[0], "PAT-001");
    // A briefing found its lessons the same way, and says so.
    let mut agent = lore_proto::v1::agent_service_client::AgentServiceClient::new(server.channel().await);
    let briefing = agent
        .brief(proto::BriefRequest {
            project: "lore".into(),
            agent_id: "agent-1".into(),
            task: Some(proto::BriefTask { title: "row level security".into(), ..Default::default() }),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert!(briefing.markdown.contains("## Left out"), "{}", briefing.markdown);
    assert!(briefing.markdown.contains("Lessons were found by keyword alone"), "{}", briefing.markdown);
}

#[tokio::test]
async fn bad_queries_get_a_clear_status_naming_the_field() {
    let server = TestServer::start().await;
    let mut client = client(&server).await;
    seed_embedded(&server, &mut client).await;
    let cases = [
        (query(""), "query.text: required"),
        (query(&"x".repeat(1024 * 1024)), "query.text: longer than 4096 characters"),
        (query("a\0b"), "query.text: must not contain NUL bytes"),
        (proto::SearchQuery { limit: 0, ..query("rls") }, "query.limit: required, 1 to 100"),
        (proto::SearchQuery { limit: 10_000, ..query("rls") }, "query.limit: 10000 is over the maximum of 100"),
        (proto::SearchQuery { category: "astrology".into(), ..query("rls") }, "query.category: \"astrology\" is not"),
        (proto::SearchQuery { mode: 9, ..query("rls") }, "query.mode: unknown value 9"),
        (proto::SearchQuery { kinds: vec![0], ..query("rls") }, "query.kinds[0]: required"),
        (proto::SearchQuery { min_score: 2.0, ..query("rls") }, "query.min_score: 2 is outside"),
    ];
    for (bad, expected) in cases {
        let status = client
            .search(proto::SearchRequest { project: "lore".into(), query: Some(bad), ..Default::default() })
            .await
            .unwrap_err();
        assert_eq!(status.code(), Code::InvalidArgument, "{expected}: {status:?}");
        assert!(status.message().starts_with(expected), "{:?} does not start with {expected:?}", status.message());
    }
    let status = client
        .search(proto::SearchRequest { project: "lore".into(), query: None, ..Default::default() })
        .await
        .unwrap_err();
    assert_eq!(status.message(), "query: required");
    let status = client
        .search_many(proto::SearchManyRequest { project: "lore".into(), ..Default::default() })
        .await
        .unwrap_err();
    assert!(status.message().starts_with("queries: 1 to 50 queries"), "{}", status.message());
}

/// pgvector applies filters after the HNSW scan; with iterative scans the
/// filtered top 10 must still match an exact scan.
#[tokio::test]
async fn filtered_vector_search_keeps_recall_at_ten_against_an_exact_scan() {
    use lore_pgtest::TestDatabase;
    use lore_store::knowledge::{embeddings, search as knowledge_search};
    use lore_types::scope::ProjectScope;

    const DIMENSIONS: usize = 32;
    const MODEL: &str = "test/random-32";
    let database = TestDatabase::new().await.unwrap();
    let pool = &database.pool;
    embeddings::register_model(pool, MODEL, "hash", DIMENSIONS).await.unwrap();
    sqlx::query("INSERT INTO projects (name) VALUES ('p')").execute(pool).await.unwrap();
    // 4% of the entries are in the filtered category.
    let ids: Vec<Uuid> = sqlx::query_scalar(
        "INSERT INTO knowledge_entries (entry_id, project, kind, title, category)
         SELECT gen_random_uuid(), 'p', 'learning', 'entry ' || i, CASE WHEN i % 25 = 0 THEN 'rare' ELSE 'common' END
         FROM generate_series(1, 5000) AS i
         RETURNING entry_id",
    )
    .fetch_all(pool)
    .await
    .unwrap();
    let random_vector = || -> Vec<f32> { (0..DIMENSIONS).map(|_| fastrand::f32() - 0.5).collect() };
    let literals: Vec<String> = ids.iter().map(|_| embeddings::vector_literal(&random_vector())).collect();
    sqlx::query(
        "INSERT INTO knowledge_embeddings (entry_id, model, chunk, project, content_hash, embedding)
         SELECT id, $1, 0, 'p', '\\x00', literal::vector FROM unnest($2::uuid[], $3::text[]) AS given (id, literal)",
    )
    .bind(MODEL)
    .bind(&ids)
    .bind(&literals)
    .execute(pool)
    .await
    .unwrap();
    sqlx::query("ANALYZE knowledge_embeddings").execute(pool).await.unwrap();
    sqlx::query("ANALYZE knowledge_entries").execute(pool).await.unwrap();

    let filter =
        knowledge_search::SearchFilter { project: "p".into(), category: Some("rare".into()), ..Default::default() };
    let mut found = 0;
    let mut expected = 0;
    for _ in 0..20 {
        let query = random_vector();
        let search =
            |scan| knowledge_search::semantic(pool, &ProjectScope::All, &filter, MODEL, DIMENSIONS, &query, 10, scan);
        let exact = search(knowledge_search::VectorScan::Exact).await.unwrap();
        let indexed = search(knowledge_search::VectorScan::Index).await.unwrap();
        assert_eq!(exact.len(), 10, "the filter leaves 200 entries");
        assert_eq!(indexed.len(), 10, "filters never make results short");
        expected += exact.len();
        found += indexed.iter().filter(|hit| exact.iter().any(|truth| truth.entry_id == hit.entry_id)).count();
    }
    let recall = found as f64 / expected as f64;
    println!("filtered recall@10 = {recall:.3}");
    assert!(recall >= 0.95, "filtered recall@10 {recall:.3} is under 0.95");
}

#[tokio::test]
async fn writes_return_at_once_and_the_replica_embeds_what_waits_in_batches() {
    let server = TestServer::start().await;
    let mut client = client(&server).await;
    seed_embedded(&server, &mut client).await;
    let status = |client: &mut Client| {
        let mut client = client.clone();
        async move {
            client.get_index_status(proto::GetIndexStatusRequest { project: "lore".into() }).await.unwrap().into_inner()
        }
    };
    let settled = status(&mut client).await;
    assert_eq!((settled.entries, settled.embeddings_pending), (5, 0), "{settled:?}");
    assert_eq!(settled.embedding_model, "local/all-MiniLM-L6-v2");

    // A backlog, as after a model change: an entry waits for its vector
    // with nobody writing; the drainer finds it on its own round.
    sqlx::query(
        "WITH waiting AS (SELECT entry_id, project FROM knowledge_entries WHERE key = 'PAT-003')
         INSERT INTO knowledge_embedding_jobs (entry_id, model, project)
         SELECT entry_id, 'local/all-MiniLM-L6-v2', project FROM waiting",
    )
    .execute(server.pool())
    .await
    .unwrap();
    // Many writes at once: each returns without waiting for the model.
    let writes = (0..12).map(|index| {
        let mut client = client.clone();
        async move {
            upsert(
                &mut client,
                entry(
                    &format!("MIG-{index}"),
                    &format!("Migration {index} locks the table"),
                    "ALTER TABLE waits",
                    "database",
                ),
            )
            .await
        }
    });
    let written = futures_util::future::join_all(writes).await;
    lore_server::testing::embedded(server.pool()).await;
    let vectors: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM knowledge_embeddings k JOIN knowledge_entries e USING (entry_id)
         WHERE k.content_hash = e.content_hash AND (e.key LIKE 'MIG-%' OR e.key = 'PAT-003')",
    )
    .fetch_one(server.pool())
    .await
    .unwrap();
    assert_eq!(vectors, 13, "every write and the backlog got a vector of its current text");
    let settled = status(&mut client).await;
    assert_eq!((settled.entries, settled.embeddings_pending), (17, 0), "{settled:?}");
    let found = search(
        &mut client,
        proto::SearchQuery { mode: proto::SearchMode::Semantic as i32, ..query("schema change blocks writers") },
    )
    .await;
    let migrations: Vec<String> = written.iter().map(|entry| entry.key.clone()).collect();
    assert!(migrations.contains(&keys(&found)[0]), "found by meaning: {:?}", keys(&found));

    // Another project's status is not this caller's business.
    let refused = client.get_index_status(proto::GetIndexStatusRequest { project: String::new() }).await.unwrap_err();
    assert_eq!(refused.code(), Code::InvalidArgument);
}

#[tokio::test]
async fn identifiers_in_code_are_found_by_their_parts() {
    let server = TestServer::start().await;
    let mut client = client(&server).await;
    let mut code = entry("GOT-1", "Check before reading", "", "python");
    code.body = "if not os.path.isfile(configPath): raise MissingConfig(configPath)".into();
    upsert(&mut client, code).await;
    upsert(&mut client, entry("GOT-2", "Unrelated", "Tabs versus spaces in the editor", "misc")).await;
    for text in ["isfile", "config path missing", "configPath", "MissingConfig"] {
        let response =
            search(&mut client, proto::SearchQuery { mode: proto::SearchMode::Keyword as i32, ..query(text) }).await;
        assert_eq!(keys(&response).first().map(String::as_str), Some("GOT-1"), "{text:?}: {:?}", keys(&response));
    }
}

#[tokio::test]
async fn every_replica_answers_from_its_own_keyword_index_kept_in_step_by_the_feed() {
    let first = TestServer::start().await;
    let second = first.sibling(TestServer::config()).await;
    let mut writer = client(&first).await;
    let mut reader = client(&second).await;
    seed(&mut writer).await;
    let status = |client: &Client| {
        let mut client = client.clone();
        async move {
            client.get_index_status(proto::GetIndexStatusRequest { project: "lore".into() }).await.unwrap().into_inner()
        }
    };
    // The writing replica has the writes when they return.
    let written = status(&writer).await;
    assert!(written.keyword_index_ready);
    assert_eq!((written.entries, written.keyword_index_entries), (5, 5));
    let keyword = |text: &str| proto::SearchQuery { mode: proto::SearchMode::Keyword as i32, ..query(text) };
    assert_eq!(keys(&search(&mut writer, keyword("docker layer caching")).await)[0], "PAT-004");

    // The other one within a notification; then both answer the same.
    crate::wait_for("the second replica to follow", std::time::Duration::from_secs(10), || async {
        status(&reader).await.keyword_index_entries == 5
    })
    .await;
    for text in ["docker layer caching", "token expired", "row level security", "authetication"] {
        let from_writer = search(&mut writer, keyword(text)).await;
        let from_reader = search(&mut reader, keyword(text)).await;
        assert_eq!(keys(&from_writer), keys(&from_reader), "{text:?}");
        assert!(!keys(&from_reader).is_empty(), "{text:?}");
    }

    // An edit and a removal reach the other replica too.
    let mut edited = entry("PAT-003", "Sticky header hides the form", "Fixed header over inputs", "frontend");
    edited.entry_id = search(&mut writer, keyword("css grid")).await.hits[0].entry.as_ref().unwrap().entry_id.clone();
    upsert(&mut writer, edited).await;
    let removed = search(&mut writer, keyword("timezone")).await.hits[0].entry.as_ref().unwrap().entry_id.clone();
    writer.delete_entry(proto::DeleteEntryRequest { entry_id: removed, purge: false }).await.unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let header = keys(&search(&mut reader, keyword("sticky header")).await);
        let timezone = keys(&search(&mut reader, keyword("timezone")).await);
        if header == ["PAT-003"] && timezone.is_empty() {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "the second replica still answers {header:?} {timezone:?}");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(keys(&search(&mut reader, keyword("css grid")).await).is_empty(), "the old text left the index");
}
