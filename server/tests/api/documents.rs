//! IndexDocument and RemoveDocument over real gRPC, with the real local
//! model and a real PostgreSQL: identity, idempotence, removal and revival,
//! solution statistics across re-indexing, and bad input.

use lore_proto::v1 as proto;
use lore_server::testing::TestServer;
use tonic::Code;
use uuid::Uuid;

type Client = crate::KnowledgeClient;

async fn fixture() -> (TestServer, Client) {
    let server = TestServer::start().await;
    let client = crate::knowledge_client(&server).await;
    (server, client)
}

const RLS: &str = "---
id: LRN-7
category: Database
tags: [postgres]
solutions:
  - Add a WITH CHECK clause to the policy
---
# Row level security blocks inserts

The app role cannot INSERT: the policy has a USING clause only.
";

async fn index(client: &mut Client, path: &str, content: &str) -> proto::IndexDocumentResponse {
    client
        .index_document(proto::IndexDocumentRequest {
            project: "lore".into(),
            path: path.into(),
            content: content.into(),
        })
        .await
        .unwrap()
        .into_inner()
}

async fn remove(client: &mut Client, path: &str) -> bool {
    client
        .remove_document(proto::RemoveDocumentRequest { project: "lore".into(), path: path.into() })
        .await
        .unwrap()
        .into_inner()
        .removed
}

async fn search_keys(client: &mut Client, text: &str) -> Vec<String> {
    let query = proto::SearchQuery { text: text.into(), limit: 5, ..Default::default() };
    let response = client
        .search(proto::SearchRequest { project: "lore".into(), query: Some(query), ..Default::default() })
        .await
        .unwrap()
        .into_inner();
    response.hits.into_iter().map(|hit| hit.entry.unwrap().title).collect()
}

fn learning(entry: &proto::Entry) -> &proto::LearningDetails {
    match entry.details.as_ref().unwrap() {
        proto::entry::Details::Learning(details) => details,
        other => panic!("not a learning: {other:?}"),
    }
}

async fn get(client: &mut Client, entry_id: &str) -> proto::Entry {
    let request = proto::GetEntryRequest { entry_id: entry_id.into(), ..Default::default() };
    client.get_entry(request).await.unwrap().into_inner().entry.unwrap()
}

#[tokio::test]
async fn a_document_becomes_a_searchable_learning_and_indexing_it_again_unchanged_is_a_no_op() {
    let (_server, mut client) = fixture().await;
    let first = index(&mut client, "db/rls.md", RLS).await;
    assert!(first.changed);
    let entry = first.entry.unwrap();
    assert_eq!(entry.key, "LRN-7");
    assert_eq!(entry.kind, proto::EntryKind::Learning as i32);
    assert_eq!(entry.title, "Row level security blocks inserts");
    assert_eq!(entry.category, "database");
    assert_eq!(entry.tags, ["postgres"]);
    assert_eq!(entry.summary, "The app role cannot INSERT: the policy has a USING clause only.");
    let details = learning(&entry);
    assert_eq!(details.source_path, "db/rls.md");
    assert_eq!(details.solutions[0].description, "Add a WITH CHECK clause to the policy");
    assert_eq!(lore_proto::json::struct_to_json(details.front_matter.as_ref().unwrap())["id"], "LRN-7");
    assert_eq!(search_keys(&mut client, "rls insert").await.first().map(String::as_str), Some(entry.title.as_str()));

    let again = index(&mut client, "db/rls.md", RLS).await;
    assert!(!again.changed);
    let same = again.entry.unwrap();
    assert_eq!(same.entry_id, entry.entry_id);
    assert_eq!(same.updated_at, entry.updated_at, "an unchanged document is not written again");

    let edited =
        index(&mut client, "db/rls.md", &RLS.replace("USING clause only", "USING clause and no WITH CHECK")).await;
    assert!(edited.changed);
    assert_eq!(edited.entry.unwrap().entry_id, entry.entry_id);
}

#[tokio::test]
async fn a_renamed_document_with_an_id_keeps_its_entry_and_its_solution_statistics() {
    let (_server, mut client) = fixture().await;
    let entry = index(&mut client, "db/rls.md", RLS).await.entry.unwrap();
    let solution_id = learning(&entry).solutions[0].solution_id.clone();
    client
        .record_application(proto::RecordApplicationRequest {
            application_id: Uuid::now_v7().to_string(),
            entry_id: entry.entry_id.clone(),
            session_id: Uuid::now_v7().to_string(),
            solution_id: solution_id.clone(),
            success: true,
            resolution_minutes: 12.0,
            ..Default::default()
        })
        .await
        .unwrap();

    // Moved to another folder, with a second solution added.
    let moved = RLS.replace(
        "  - Add a WITH CHECK clause to the policy\n",
        "  - Add a WITH CHECK clause to the policy\n  - Insert through a SECURITY DEFINER function\n",
    );
    let renamed = index(&mut client, "postgres/rls.md", &moved).await.entry.unwrap();
    assert_eq!(renamed.entry_id, entry.entry_id, "the id in the front matter is the identity");
    let details = learning(&renamed);
    assert_eq!(details.source_path, "postgres/rls.md");
    assert_eq!(details.solutions.len(), 2);
    let kept = details.solutions.iter().find(|solution| solution.solution_id == solution_id).unwrap();
    assert_eq!((kept.times_applied, kept.times_successful), (1, 1), "statistics survive re-indexing");
    assert!(!remove(&mut client, "db/rls.md").await, "nothing is left at the old path");
    assert_eq!(get(&mut client, &entry.entry_id).await.status, proto::EntryStatus::Active as i32);
}

#[tokio::test]
async fn a_removed_document_leaves_search_and_the_same_file_coming_back_is_the_same_entry() {
    let (_server, mut client) = fixture().await;
    let text = "# Flaky CI runners\n\nRetry the job when the runner loses its network.\n";
    let entry = index(&mut client, "ci/flaky.md", text).await.entry.unwrap();
    assert_eq!(entry.key, "", "no id: the path is the identity");
    index(&mut client, "ci/other.md", "# Cache keys\n\nKey caches by the lock file hash.\n").await;

    assert!(remove(&mut client, "ci/flaky.md").await);
    assert!(!remove(&mut client, "ci/flaky.md").await, "removing twice removes nothing more");
    assert_eq!(get(&mut client, &entry.entry_id).await.status, proto::EntryStatus::Obsolete as i32);
    assert!(!search_keys(&mut client, "flaky runner network").await.contains(&"Flaky CI runners".to_owned()));

    let back = index(&mut client, "ci/flaky.md", text).await;
    assert!(back.changed, "a removed document indexed again is a change");
    let back = back.entry.unwrap();
    assert_eq!(back.entry_id, entry.entry_id);
    assert_eq!(back.status, proto::EntryStatus::Active as i32);

    // A folder path removes every document under it.
    assert!(remove(&mut client, "ci").await);
    for path in ["ci/flaky.md", "ci/other.md"] {
        assert!(index(&mut client, path, "# changed\n").await.changed);
    }
}

#[tokio::test]
async fn a_path_whose_document_now_carries_another_id_becomes_that_entry() {
    let (_server, mut client) = fixture().await;
    let old = index(&mut client, "notes.md", "---\nid: A-1\n---\n# First\n").await.entry.unwrap();
    let new = index(&mut client, "notes.md", "---\nid: B-2\n---\n# Second\n").await.entry.unwrap();
    assert_ne!(new.entry_id, old.entry_id);
    let old = get(&mut client, &old.entry_id).await;
    assert_eq!(old.status, proto::EntryStatus::Obsolete as i32, "the old id's document is gone");
    assert_eq!(learning(&old).source_path, "", "and it no longer claims the path");
    // A document that gains an id keeps its entry.
    let plain = index(&mut client, "plain.md", "# Plain\n").await.entry.unwrap();
    let with_id = index(&mut client, "plain.md", "---\nid: C-3\n---\n# Plain\n").await.entry.unwrap();
    assert_eq!(with_id.entry_id, plain.entry_id);
    assert_eq!(with_id.key, "C-3");
}

#[tokio::test]
async fn bad_documents_and_paths_get_invalid_argument_naming_the_field() {
    let (server, mut client) = fixture().await;
    let cases: Vec<(&str, &str, String, &str)> = vec![
        ("lore", "", "# x".into(), "path: required"),
        ("lore", "/etc/passwd.md", "# x".into(), "path: must be a relative path"),
        ("lore", "a/../b.md", "# x".into(), "path: must not have empty, '.' or '..' parts"),
        ("lore", "a//b.md", "# x".into(), "path: must not have empty"),
        ("lore", "a\0.md", "# x".into(), "path: must not contain control characters"),
        ("bad project!", "a.md", "# x".into(), "project: "),
        ("lore", "a.md", "# x\0y".into(), "content: a binary file (NUL byte at offset 3)"),
        ("lore", "a.md", "---\ntitle: [\n---\n".into(), "content: front matter: "),
        ("lore", "a.md", "---\nstatus: [gone]\n---\n".into(), "content: front matter: status must be a string"),
        ("lore", "a.md", "---\nusage_count: many\n---\n".into(), "content: front matter: usage_count must be a whole"),
        ("lore", "a.md", "---\nsymptoms: [{a: 1}]\n---\n".into(), "content: front matter: symptoms must be a string"),
        ("lore", "a.md", "x".repeat(1024 * 1024 + 1), "content: 1048577 bytes, over the limit of 1048576"),
        ("lore", "a.md", format!("---\ntitle: {}\n---\n", "t".repeat(600)), "content: front matter title: longer"),
    ];
    for (project, path, content, expected) in cases {
        let request = proto::IndexDocumentRequest { project: project.into(), path: path.into(), content };
        let status = client.index_document(request).await.unwrap_err();
        assert_eq!(status.code(), Code::InvalidArgument, "{path:?}: {status:?}");
        assert!(status.message().starts_with(expected), "{path:?}: {}", status.message());
    }
    let status = client
        .remove_document(proto::RemoveDocumentRequest { project: "lore".into(), path: "../x".into() })
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument);
    let stored: i64 =
        sqlx::query_scalar("SELECT count(*) FROM knowledge_entries").fetch_one(server.pool()).await.unwrap();
    assert_eq!(stored, 0, "nothing was stored by refused documents");
}

#[tokio::test]
async fn a_debugger_knowledge_base_document_marked_verified_is_indexed_and_found_by_its_error() {
    let (server, mut client) = fixture().await;
    let document = "---
kb_id: KB-build-001
title: Path alias not resolved
category: missing_dependency
severity: medium
status: verified
symptoms:
  - \"TS2307: Cannot find module '@/components/Button' or its corresponding type declarations.\"
root_causes:
  - The alias is in vite.config.ts but not in tsconfig.json
usage_count: 12
last_used: 2026-10-02
---
# Path alias not resolved

## Solution
Add the alias to `compilerOptions.paths` in tsconfig.json.
";
    let indexed = index(&mut client, "kb/KB-build-001.md", document).await;
    assert!(indexed.changed);
    let entry = indexed.entry.unwrap();
    assert_eq!(entry.key, "KB-build-001");
    assert_eq!(entry.status, proto::EntryStatus::Active as i32, "verified is in search");
    assert_eq!(entry.symptoms.len(), 1);
    assert_eq!(entry.root_causes, ["The alias is in vite.config.ts but not in tsconfig.json"]);
    assert_eq!(entry.usage_count, 12);
    let status = learning(&entry).front_matter.as_ref().unwrap().fields["status"].clone();
    assert_eq!(status.kind, Some(prost_types::value::Kind::StringValue("verified".into())));
    lore_server::testing::embedded(server.pool()).await;
    let found = search_keys(
        &mut client,
        "src/App.tsx(3,20): error TS2307: Cannot find module '@/components/Modal' or its corresponding type \
         declarations.",
    )
    .await;
    assert_eq!(found.first().map(String::as_str), Some("Path alias not resolved"), "{found:?}");

    // A retired one leaves search.
    let retired = document.replace("status: verified", "status: deprecated");
    let entry = index(&mut client, "kb/KB-build-001.md", &retired).await.entry.unwrap();
    assert_eq!(entry.status, proto::EntryStatus::Obsolete as i32);
    assert!(search_keys(&mut client, "TS2307 Cannot find module").await.is_empty());
}
