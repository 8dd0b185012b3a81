//! Hot spots and similar past sessions over real gRPC and a real
//! PostgreSQL, on seeded history: sessions that edited `db/` mostly failed
//! QA, sessions in `web/` mostly passed. HotSpots names `db/*` hot and
//! `web/*` not; a briefing for a task in `db/` says so and tells of the
//! most similar past sessions with their outcome and id; bad input names
//! its field.

use lore_proto::v1 as proto;
use lore_proto::v1::agent_service_client::AgentServiceClient;
use lore_proto::v1::qa_learning_service_client::QaLearningServiceClient;
use lore_server::testing::TestServer;
use tonic::Code;
use tonic::transport::Channel;
use uuid::Uuid;

const PROJECT: &str = "shop";

/// One past session (see `lore_server::testing::seed_past_session`).
async fn session(channel: &Channel, files: &[&str], failed: bool, summary: &str) -> Uuid {
    lore_server::testing::seed_past_session(channel.clone(), PROJECT, files, failed, summary).await
}

async fn seed(server: &TestServer) -> Uuid {
    let channel = server.channel().await;
    let mut invoices = Uuid::nil();
    for index in 0..8 {
        let failed = index < 6;
        let summary = if index == 0 {
            "Added the invoices table migration; it failed until the migrations ran in order"
        } else {
            "Changed the orders schema"
        };
        let id = session(&channel, &["db/migrations/0007_orders.sql", "db/schema.rs"], failed, summary).await;
        if index == 0 {
            invoices = id;
        }
    }
    for index in 0..20 {
        session(&channel, &["web/cart.ts"], index < 2, "Styled the cart button").await;
    }
    invoices
}

#[tokio::test]
async fn the_folders_that_fail_qa_are_hot_and_a_briefing_in_them_says_so_with_similar_sessions() {
    let server = TestServer::start().await;
    let invoices = seed(&server).await;
    let mut qa = QaLearningServiceClient::new(server.channel().await);
    let spots = qa
        .hot_spots(proto::HotSpotsRequest { project: PROJECT.into(), ..Default::default() })
        .await
        .unwrap()
        .into_inner();
    let sessions = spots.sessions.unwrap();
    assert_eq!((sessions.tasks, sessions.failed), (28, 8));
    let area =
        |name: &str| spots.areas.iter().find(|area| area.name == name).unwrap_or_else(|| panic!("{name}: {spots:?}"));
    let db = area("db/*");
    assert!(db.hot, "{db:?}");
    assert_eq!((db.rate.unwrap().tasks, db.rate.unwrap().failed), (8, 6));
    assert!(!area("web/*").hot);
    assert!(spots.areas[0].hot, "hot areas first");
    assert!(spots.action_kinds.iter().any(|kind| kind.name == "file_edit"), "{:?}", spots.action_kinds);

    let mut agent = AgentServiceClient::new(server.channel().await);
    let briefing = agent
        .brief(proto::BriefRequest {
            project: PROJECT.into(),
            agent_id: "claude@vm2".into(),
            task: Some(proto::BriefTask {
                title: "Add the invoices table migration".into(),
                files: vec!["db/migrations/0008_invoices.sql".into()],
                ..Default::default()
            }),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let markdown = &briefing.markdown;
    assert!(markdown.contains("## Your files that fail QA more than the rest"), "{markdown}");
    assert!(markdown.contains("`db/*`: 6 of 8 sessions"), "{markdown}");
    let hot: Vec<&str> = briefing.hot_spots.iter().map(|spot| spot.name.as_str()).collect();
    assert!(hot.contains(&"db/*") && !hot.iter().any(|name| name.starts_with("web")), "{hot:?}");
    assert_eq!(briefing.similar_sessions.len(), 3, "the three most similar");
    let first = &briefing.similar_sessions[0];
    assert_eq!(
        first.session_id,
        invoices.to_string(),
        "same folders and the closest text: {:?}",
        briefing.similar_sessions
    );
    assert_eq!(first.outcome, "failed QA and stopped unfixed");
    // Told by what it did, never by what its agent wrote.
    assert_eq!(first.what_happened, "1 action, 2 files changed");
    assert!(!crate::unmarked(markdown).contains("invoices table"), "{markdown}");
    assert!(markdown.contains(&format!("(`resume` session `{invoices}`)")), "{markdown}");
    assert!(
        briefing.similar_sessions.iter().all(|similar| similar.what_happened.ends_with("2 files changed")),
        "a web session (one file) shares neither folders nor words: {:?}",
        briefing.similar_sessions
    );
    // The ledger records the similar sessions the briefing told of.
    let told: i64 = sqlx::query_scalar("SELECT count(*) FROM injection_items WHERE kind = 'similar_session'")
        .fetch_one(server.pool())
        .await
        .unwrap();
    assert_eq!(told, 3);

    // A prompt's briefing does not repeat them; a task elsewhere has no hot spot.
    let prompt = agent
        .brief(proto::BriefRequest {
            project: PROJECT.into(),
            agent_id: "claude@vm2".into(),
            omit_last_session: true,
            task: Some(proto::BriefTask {
                title: "Move the cart button".into(),
                files: vec!["web/cart.ts".into()],
                ..Default::default()
            }),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert!(prompt.similar_sessions.is_empty() && prompt.hot_spots.is_empty(), "{}", prompt.markdown);
}

#[tokio::test]
async fn bad_input_names_its_field_and_nothing_is_hot_without_history() {
    let server = TestServer::start().await;
    let mut qa = QaLearningServiceClient::new(server.channel().await);
    let unknown =
        qa.hot_spots(proto::HotSpotsRequest { project: "nowhere".into(), ..Default::default() }).await.unwrap_err();
    assert_eq!(unknown.code(), Code::NotFound);
    assert!(unknown.message().contains("nowhere"), "{}", unknown.message());
    let instant = lore_server::grpc::convert::to_timestamp(chrono::Utc::now());
    let empty_window = proto::HotSpotsRequest {
        project: PROJECT.into(),
        window: Some(proto::TimeRange { start: Some(instant), end: Some(instant) }),
        ..Default::default()
    };
    let refused = qa.hot_spots(empty_window).await.unwrap_err();
    assert_eq!(refused.code(), Code::InvalidArgument);
    assert!(refused.message().starts_with("window"), "{}", refused.message());
    for (request, field) in [
        (proto::HotSpotsRequest { project: PROJECT.into(), limit: 201, ..Default::default() }, "limit"),
        (proto::HotSpotsRequest { project: "no spaces allowed".into(), ..Default::default() }, "project"),
    ] {
        let refused = qa.hot_spots(request).await.unwrap_err();
        assert_eq!(refused.code(), Code::InvalidArgument, "{field}");
        assert!(refused.message().starts_with(field), "{}", refused.message());
    }

    // A project with one quiet session: nothing hot, nothing similar.
    session(&server.channel().await, &["src/lib.rs"], false, "Renamed a function").await;
    let spots = qa
        .hot_spots(proto::HotSpotsRequest { project: PROJECT.into(), min_count: 1, ..Default::default() })
        .await
        .unwrap()
        .into_inner();
    assert!(spots.areas.iter().all(|area| !area.hot), "{:?}", spots.areas);
    let mut agent = AgentServiceClient::new(server.channel().await);
    let many_files: Vec<String> = (0..10_000).map(|index| format!("src/generated/file_{index}.rs")).collect();
    let too_many = agent
        .brief(proto::BriefRequest {
            project: PROJECT.into(),
            agent_id: "a".into(),
            task: Some(proto::BriefTask { title: "t".into(), files: many_files, ..Default::default() }),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(too_many.code(), Code::InvalidArgument);
    assert!(too_many.message().starts_with("task.files"), "{}", too_many.message());
    let within: Vec<String> = (0..200).map(|index| format!("src/generated/file_{index}.rs")).collect();
    let briefing = agent
        .brief(proto::BriefRequest {
            project: PROJECT.into(),
            agent_id: "a".into(),
            task: Some(proto::BriefTask {
                title: "Regenerate the bindings".into(),
                files: within,
                ..Default::default()
            }),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert!(briefing.hot_spots.is_empty(), "{:?}", briefing.hot_spots);
}
