//! What words and categories mean to search, edited through the API:
//! synonyms, and category relations (an exact category counts 1 in the
//! blend, a related one 0.5; the hard filter stays available).

use lore_proto::v1 as proto;
use lore_server::testing::TestServer;
use tonic::Code;

use crate::knowledge_client as client;

type Client = crate::KnowledgeClient;

async fn upsert(client: &mut Client, key: &str, title: &str, category: &str) {
    let entry = proto::Entry {
        key: key.into(),
        project: "shop".into(),
        kind: proto::EntryKind::Learning as i32,
        title: title.into(),
        category: category.into(),
        ..Default::default()
    };
    client.upsert_entry(proto::UpsertEntryRequest { entry: Some(entry) }).await.unwrap();
}

fn query(text: &str, category: &str) -> proto::SearchQuery {
    proto::SearchQuery { text: text.into(), limit: 10, category: category.into(), ..Default::default() }
}

async fn search(client: &mut Client, query: proto::SearchQuery) -> Vec<proto::SearchHit> {
    client
        .search(proto::SearchRequest { project: "shop".into(), query: Some(query), ..Default::default() })
        .await
        .unwrap()
        .into_inner()
        .hits
}

fn relation(category: &str, related: &str) -> proto::CategoryRelation {
    proto::CategoryRelation { project: "shop".into(), category: category.into(), related: related.into() }
}

#[tokio::test]
async fn a_related_category_counts_half_as_much_as_the_query_s_own_and_the_filter_still_filters() {
    let server = TestServer::start().await;
    let mut client = client(&server).await;
    // Three entries of the same words, in three categories.
    upsert(&mut client, "DB-1", "Slow query on the orders table", "database").await;
    upsert(&mut client, "PG-1", "Slow query on the orders table", "postgres").await;
    upsert(&mut client, "UI-1", "Slow query on the orders table", "frontend").await;
    lore_server::testing::embedded(server.pool()).await;
    let put = client
        .put_category_relation(proto::PutCategoryRelationRequest { relation: Some(relation("Postgres", "database")) })
        .await
        .unwrap()
        .into_inner();
    assert!(put.created);
    assert_eq!(put.relation.unwrap(), relation("database", "postgres"), "stored once, lowercased, ordered");
    let again = client
        .put_category_relation(proto::PutCategoryRelationRequest { relation: Some(relation("database", "postgres")) })
        .await
        .unwrap()
        .into_inner();
    assert!(!again.created, "relating two related categories changes nothing");
    let listed = client
        .list_category_relations(proto::ListCategoryRelationsRequest { project: "shop".into() })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(listed.relations, [relation("database", "postgres")]);

    let hits = search(&mut client, query("slow query orders", "database")).await;
    let keys: Vec<&str> = hits.iter().map(|hit| hit.entry.as_ref().unwrap().key.as_str()).collect();
    assert_eq!(keys, ["DB-1", "PG-1", "UI-1"]);
    let parts: Vec<f64> = hits.iter().map(|hit| hit.parts.unwrap().category).collect();
    assert_eq!(parts, [1.0, 0.5, 0.0]);
    for hit in &hits {
        let parts = hit.parts.unwrap();
        let blend = (0.4 * parts.similarity
            + 0.3 * parts.success_rate
            + 0.2 * parts.recency
            + 0.1 * parts.specificity
            + 0.2 * parts.category)
            / 1.2;
        assert!((hit.score - blend).abs() < 1e-9, "{} != {blend}", hit.score);
    }
    // From the other side of the relation too.
    let hits = search(&mut client, query("slow query orders", "postgres")).await;
    let categories: Vec<f64> = hits.iter().map(|hit| hit.parts.unwrap().category).collect();
    assert_eq!(categories, [1.0, 0.5, 0.0]);
    assert_eq!(hits[1].entry.as_ref().unwrap().key, "DB-1");

    // The hard filter.
    let only = search(&mut client, proto::SearchQuery { category_only: true, ..query("slow query", "database") }).await;
    let keys: Vec<&str> = only.iter().map(|hit| hit.entry.as_ref().unwrap().key.as_str()).collect();
    assert_eq!(keys, ["DB-1"]);

    // Unrelated again: the related one counts nothing.
    let deleted = client
        .delete_category_relation(proto::DeleteCategoryRelationRequest {
            relation: Some(relation("postgres", "database")),
        })
        .await
        .unwrap()
        .into_inner();
    assert!(deleted.deleted);
    let hits = search(&mut client, query("slow query orders", "database")).await;
    let categories: Vec<f64> = hits.iter().map(|hit| hit.parts.unwrap().category).collect();
    assert_eq!(categories, [1.0, 0.0, 0.0]);

    // Bad relations and categories name their field.
    for (relation, message) in [
        (None, "relation: required"),
        (Some(relation("database", "Database")), "relation.related: is the category itself"),
        (Some(relation("", "x")), "relation.category: required"),
        (Some(relation("a\0b", "x")), "relation.category: must not contain control characters"),
        (Some(relation("x", &"y".repeat(129))), "relation.related: longer than 128 characters"),
        (
            Some(proto::CategoryRelation { project: "no such/project".into(), ..relation("a", "b") }),
            "relation.project:",
        ),
    ] {
        let status = client.put_category_relation(proto::PutCategoryRelationRequest { relation }).await.unwrap_err();
        assert_eq!(status.code(), Code::InvalidArgument, "{message}");
        assert!(status.message().starts_with(message), "{}", status.message());
    }
    let status = client
        .search(proto::SearchRequest {
            project: "shop".into(),
            query: Some(query("slow", "astrology")),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert!(status.message().starts_with("query.category: \"astrology\" is not a category"), "{}", status.message());
    let status = client
        .search(proto::SearchRequest {
            project: "shop".into(),
            query: Some(proto::SearchQuery { category_only: true, ..query("slow", "") }),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert!(status.message().starts_with("query.category_only: needs a category"), "{}", status.message());
}

#[tokio::test]
async fn synonyms_are_edited_through_the_api_and_change_what_a_query_finds() {
    let server = TestServer::start().await;
    let mut client = client(&server).await;
    upsert(&mut client, "KB-1", "Knowledge base pages load slowly", "docs").await;
    upsert(&mut client, "KB-2", "Checkout button misaligned", "frontend").await;
    let keyword = |text: &str| proto::SearchQuery { mode: proto::SearchMode::Keyword as i32, ..query(text, "") };
    assert!(search(&mut client, keyword("zettel")).await.is_empty());

    let synonym = |project: &str, term: &str, expansion: &str| proto::Synonym {
        project: project.into(),
        term: term.into(),
        expansion: expansion.into(),
    };
    let put = client
        .put_synonym(proto::PutSynonymRequest { synonym: Some(synonym("shop", "Zettel", "knowledge base")) })
        .await
        .unwrap()
        .into_inner();
    assert!(put.created);
    assert_eq!(put.synonym.unwrap().term, "zettel", "lowercased");
    let hits = search(&mut client, keyword("zettel")).await;
    assert_eq!(hits[0].entry.as_ref().unwrap().key, "KB-1", "the synonym is used at once");
    assert!(hits[0].reasons[0].matched_terms.contains(&"knowledge base".to_owned()), "{:?}", hits[0].reasons);

    let listed =
        client.list_synonyms(proto::ListSynonymsRequest { project: "shop".into() }).await.unwrap().into_inner();
    assert_eq!(listed.synonyms[0], synonym("shop", "zettel", "knowledge base"), "the project's own first");
    assert!(
        listed.synonyms.iter().any(|known| known == &synonym("", "rls", "row level security")),
        "then the global ones"
    );
    let other = client.list_synonyms(proto::ListSynonymsRequest { project: "bank".into() }).await.unwrap().into_inner();
    assert!(other.synonyms.iter().all(|known| known.project.is_empty()), "another project's are not shown");

    let deleted = client
        .delete_synonym(proto::DeleteSynonymRequest { synonym: Some(synonym("shop", "zettel", "knowledge base")) })
        .await
        .unwrap()
        .into_inner();
    assert!(deleted.deleted);
    assert!(search(&mut client, keyword("zettel")).await.is_empty());

    for (synonym, message) in [
        (None, "synonym: required"),
        (Some(synonym("shop", "", "x")), "synonym.term: required"),
        (Some(synonym("shop", "db", "DB")), "synonym.expansion: is the term itself"),
        (Some(synonym("shop", "!!", "x")), "synonym.term: holds no word"),
        (Some(synonym("shop", "x\0", "y")), "synonym.term: must not contain control characters"),
        (Some(synonym("shop", &"x".repeat(65), "y")), "synonym.term: longer than 64 characters"),
        (Some(synonym("shop", "x", &"y".repeat(257))), "synonym.expansion: longer than 256 characters"),
        (Some(synonym("bad project!", "x", "y")), "synonym.project:"),
    ] {
        let status = client.put_synonym(proto::PutSynonymRequest { synonym }).await.unwrap_err();
        assert_eq!(status.code(), Code::InvalidArgument, "{message}");
        assert!(status.message().starts_with(message), "{}", status.message());
    }
}
