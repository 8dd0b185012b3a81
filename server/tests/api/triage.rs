//! What triage relies on: a pasted error message finds the entry whose
//! symptom it is, and SearchMany answers a handful of errors at once (side
//! by side, each failing alone, capped, cached until the next write, every
//! hit with how to expand it).

use lore_proto::v1 as proto;
use lore_server::testing::TestServer;
use tonic::Code;

use crate::knowledge_client as client;

type Client = crate::KnowledgeClient;

async fn upsert(client: &mut Client, key: &str, title: &str, category: &str, symptoms: &[&str]) -> proto::Entry {
    let entry = proto::Entry {
        key: key.into(),
        project: "shop".into(),
        kind: proto::EntryKind::IssuePattern as i32,
        title: title.into(),
        category: category.into(),
        symptoms: symptoms.iter().map(|symptom| (*symptom).to_owned()).collect(),
        ..Default::default()
    };
    client.upsert_entry(proto::UpsertEntryRequest { entry: Some(entry) }).await.unwrap().into_inner().entry.unwrap()
}

/// Entries whose titles say little, so that only their symptoms can match
/// a pasted message.
async fn seed(server: &TestServer, client: &mut Client) {
    upsert(
        client,
        "KB-ts-001",
        "Alias imports break after moving the components",
        "build",
        &["TS2307: Cannot find module '@/components/Header' or its corresponding type declarations."],
    )
    .await;
    upsert(
        client,
        "KB-node-002",
        "Configuration missing in containers",
        "runtime",
        &["Error: ENOENT: no such file or directory, open '/app/config/settings.json'"],
    )
    .await;
    upsert(
        client,
        "KB-db-003",
        "The pool is too small for the workers",
        "database",
        &["FATAL: remaining connection slots are reserved for non-replication superuser connections"],
    )
    .await;
    upsert(client, "KB-css-004", "Grid collapses on phones", "frontend", &[]).await;
    lore_server::testing::embedded(server.pool()).await;
}

fn search_request(text: &str) -> proto::SearchRequest {
    proto::SearchRequest {
        project: "shop".into(),
        query: Some(proto::SearchQuery { text: text.into(), limit: 5, ..Default::default() }),
        ..Default::default()
    }
}

#[tokio::test]
async fn a_pasted_error_message_finds_the_entry_whose_symptom_it_is_whatever_its_paths_and_numbers() {
    let server = TestServer::start().await;
    let mut client = client(&server).await;
    seed(&server, &mut client).await;
    for (pasted, expected) in [
        (
            "src/pages/Checkout.tsx(14,23): error TS2307: Cannot find module '@/components/CartSummary' or its \
             corresponding type declarations.",
            "KB-ts-001",
        ),
        (
            "Error: ENOENT: no such file or directory, open '/srv/shop/releases/20261124/config/prod.json'\n    at \
          Object.openSync (node:fs:573:3)",
            "KB-node-002",
        ),
        (
            "psql: error: connection to server at \"10.4.0.12\", port 6543 failed: FATAL:  remaining connection \
             slots are reserved for non-replication superuser connections",
            "KB-db-003",
        ),
    ] {
        let response = client.search(search_request(pasted)).await.unwrap().into_inner();
        let top = response.hits.first().unwrap_or_else(|| panic!("nothing for {pasted:?}"));
        let entry = top.entry.as_ref().unwrap();
        assert_eq!(entry.key, expected, "{pasted:?}");
        let symptom = top
            .reasons
            .iter()
            .find(|reason| reason.signal == proto::MatchSignal::Symptom as i32)
            .unwrap_or_else(|| panic!("{pasted:?} matched by {:?}", top.reasons));
        assert!(symptom.score >= 0.8, "{pasted:?}: {symptom:?}");
        assert_eq!(symptom.matched_terms, entry.symptoms, "the symptom that matched is shown");
    }
    // A message of another kind matches no symptom.
    let response = client.search(search_request("Grid collapses on small phones")).await.unwrap().into_inner();
    assert!(
        response
            .hits
            .iter()
            .all(|hit| hit.reasons.iter().all(|reason| reason.signal != proto::MatchSignal::Symptom as i32)),
        "{:?}",
        response.hits
    );
}

#[tokio::test]
async fn search_many_runs_each_query_alone_caps_what_it_returns_and_keeps_answers_until_a_write() {
    let server = TestServer::start().await;
    let mut client = client(&server).await;
    seed(&server, &mut client).await;
    let query =
        |id: &str, text: &str| proto::SearchQuery { query_id: id.into(), text: text.into(), ..Default::default() };
    let request = proto::SearchManyRequest {
        project: "shop".into(),
        queries: vec![
            query(
                "ts",
                "error TS2307: Cannot find module '@/components/Footer' or its corresponding type declarations.",
            ),
            proto::SearchQuery { category: "astrology".into(), ..query("bad-category", "anything") },
            query("db", "FATAL: remaining connection slots are reserved for non-replication superuser connections"),
            proto::SearchQuery { mode: 17, ..query("bad-mode", "anything") },
            query("node", "ENOENT: no such file or directory, open '/tmp/x.json'"),
            query("css", "grid collapses on phones"),
            query("empty", ""),
        ],
        ..Default::default()
    };
    let first = client.search_many(request.clone()).await.unwrap().into_inner();
    let ids: Vec<&str> = first.results.iter().map(|result| result.query_id.as_str()).collect();
    assert_eq!(ids, ["ts", "bad-category", "db", "bad-mode", "node", "css", "empty"], "request order");

    // Bad queries fail alone, with a status that names their field.
    let error = |id: &str| first.results.iter().find(|result| result.query_id == id).unwrap().error.clone();
    let bad_category = error("bad-category").expect("the unknown category fails");
    assert_eq!(bad_category.code, Code::InvalidArgument as i32);
    assert!(
        bad_category.message.starts_with("queries[1].category: \"astrology\" is not a category"),
        "{bad_category:?}"
    );
    assert!(error("bad-mode").unwrap().message.starts_with("queries[3].mode:"), "{:?}", error("bad-mode"));
    assert!(error("empty").unwrap().message.starts_with("queries[6].text: required"), "{:?}", error("empty"));
    assert!(error("ts").is_none() && error("node").is_none());

    // Three queries keep hits, two each; the others say they were capped.
    let with_hits: Vec<&proto::SearchManyResult> =
        first.results.iter().filter(|result| !result.hits.is_empty()).collect();
    assert_eq!(with_hits.len(), 3, "{:?}", first.results);
    assert!(with_hits.iter().all(|result| result.hits.len() <= 2));
    assert!(first.results.iter().filter(|result| result.capped).all(|result| result.hits.is_empty()));
    assert_eq!(first.results.iter().filter(|result| result.capped).count(), 1, "4 had hits, 3 kept them");
    assert!(first.truncated);
    for (id, key) in [("ts", "KB-ts-001"), ("db", "KB-db-003"), ("node", "KB-node-002")] {
        let result = first.results.iter().find(|result| result.query_id == id).unwrap();
        let top = result.hits[0].entry.as_ref().unwrap();
        assert_eq!(top.key, key, "the error messages are the best queries, so they keep their hits");
        let expand = result.hits[0].expand.as_ref().unwrap();
        assert_eq!(expand.cli, format!("lore entry show {key} --project shop"));
        assert_eq!(
            (expand.tool.as_str(), expand.arguments.clone()),
            ("get_lesson", format!("{{\"entry\":\"{key}\"}}"))
        );
        assert!(!result.cached);
    }

    // Asked again: kept. A write to another project changes nothing...
    let again = client.search_many(request.clone()).await.unwrap().into_inner();
    assert!(again.results.iter().filter(|result| result.error.is_none()).all(|result| result.cached), "{again:?}");
    assert_eq!(
        again.results,
        first
            .results
            .iter()
            .map(|result| proto::SearchManyResult { cached: result.error.is_none(), ..result.clone() })
            .collect::<Vec<_>>()
    );
    let other = crate::learning("bank", "X-1", "Elsewhere");
    client.upsert_entry(proto::UpsertEntryRequest { entry: Some(other) }).await.unwrap();
    let still = client.search_many(request.clone()).await.unwrap().into_inner();
    assert!(still.results.iter().filter(|result| result.error.is_none()).all(|result| result.cached));

    // ...a write to this one drops what was kept, on every replica.
    let sibling = server.sibling(TestServer::config()).await;
    let mut other_replica = crate::knowledge_client(&sibling).await;
    other_replica.search_many(request.clone()).await.unwrap();
    assert!(other_replica.search_many(request.clone()).await.unwrap().into_inner().results[0].cached);
    upsert(&mut client, "KB-ts-005", "Footer import fails", "build", &["Cannot find module '@/components/Footer'"])
        .await;
    let after = client.search_many(request.clone()).await.unwrap().into_inner();
    assert!(after.results.iter().all(|result| !result.cached), "{after:?}");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while other_replica.search_many(request.clone()).await.unwrap().into_inner().results[0].cached {
        assert!(std::time::Instant::now() < deadline, "the other replica kept its answer after the write");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }

    // Request-level mistakes still fail the request.
    for (request, field) in [
        (proto::SearchManyRequest { project: "shop".into(), ..Default::default() }, "queries"),
        (proto::SearchManyRequest { queries: vec![query("q", "x")], ..Default::default() }, "project"),
        (
            proto::SearchManyRequest {
                project: "shop".into(),
                queries: vec![query("q", "x"); 51],
                ..Default::default()
            },
            "queries",
        ),
    ] {
        let status = client.search_many(request).await.unwrap_err();
        assert_eq!(status.code(), Code::InvalidArgument);
        assert!(status.message().starts_with(field), "{}", status.message());
    }
}
