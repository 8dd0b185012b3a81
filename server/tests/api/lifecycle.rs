//! A server stopped inside a process that goes on (the tests, the benches,
//! an embedding application) leaves nothing behind: every listener and
//! follower it started ends with it, and so do its connections.

use std::time::Duration;

use lore_proto::v1 as proto;
use lore_proto::v1::action_service_client::ActionServiceClient;
use lore_server::testing::{self, TestServer};
use lore_store::APPLICATION_NAME;
use uuid::Uuid;

/// The server's connections to `database`, as `pg_stat_activity` shows them.
async fn connections(pool: &sqlx::PgPool, database: &str) -> Vec<String> {
    sqlx::query_scalar(
        "SELECT coalesce(state, '') || ': ' || left(query, 80) FROM pg_stat_activity
         WHERE datname = $1 AND application_name = $2",
    )
    .bind(database)
    .bind(APPLICATION_NAME)
    .fetch_all(pool)
    .await
    .unwrap()
}

#[tokio::test]
async fn a_stopped_server_leaves_no_task_or_connection_behind() {
    // The database itself as a read replica too: its pool and its watcher
    // must end with the server as well.
    let database = lore_pgtest::TestDatabase::new().await.unwrap();
    let mut config = TestServer::config();
    config.database.read_urls = vec![database.url.clone()];
    let server = TestServer::start_on(config, database).await;
    // Kept past the server, which would drop the database with it.
    let database = std::sync::Arc::clone(&server.database);
    let pool = &database.pool;

    // Wake what runs in the background: the action feed, the group commit,
    // the keyword index's feed and the embedding queue's drainer.
    let mut actions = ActionServiceClient::new(server.channel().await);
    let start = proto::StartSessionRequest { project: "lore".into(), agent_id: "agent-1".into(), ..Default::default() };
    let session = actions.start_session(start).await.unwrap().into_inner().session.unwrap();
    let action = proto::Action {
        action_id: Uuid::now_v7().to_string(),
        session_id: session.session_id.clone(),
        project: "lore".into(),
        action_type: "plan".into(),
        outcome: proto::Outcome::Success as i32,
        occurred_at: Some(prost_types::Timestamp::from(std::time::SystemTime::now())),
        ..Default::default()
    };
    actions.log_action(proto::LogActionRequest { action: Some(action) }).await.unwrap();
    let mut knowledge = crate::knowledge_client(&server).await;
    let entry = crate::learning("lore", "KB-1", "Migrations lock the table");
    knowledge.upsert_entry(proto::UpsertEntryRequest { entry: Some(entry) }).await.unwrap();
    testing::embedded(pool).await;
    let query = proto::SearchQuery { text: "table lock".into(), limit: 5, ..Default::default() };
    let found = knowledge
        .search(proto::SearchRequest { project: "lore".into(), query: Some(query), ..Default::default() })
        .await
        .unwrap();
    assert_eq!(found.into_inner().hits.len(), 1);
    let open = connections(pool, database.name()).await;
    assert!(open.iter().any(|connection| connection.contains("LISTEN")), "the feeds listen: {open:#?}");
    crate::wait_for("the replica's watcher", Duration::from_secs(20), || async {
        let open = connections(pool, database.name()).await;
        open.iter().any(|connection| connection.contains("pg_last_wal_replay_lsn"))
    })
    .await;

    drop((actions, knowledge));
    server.stop().await;
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let left = connections(pool, database.name()).await;
        if left.is_empty() {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "connections outlived the server: {left:#?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
