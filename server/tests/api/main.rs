//! Integration tests of the gRPC API: the real server stack in process, real
//! gRPC over TCP, a real PostgreSQL with pgvector. One binary, one module per
//! service.

mod actions;
mod auth;
mod brief;
mod documents;
mod drafts;
mod erasure;
mod grouping_masks;
mod guards;
mod hotspots;
mod injections;
mod knowledge;
mod lifecycle;
mod limits;
mod literal_reading;
mod mask_proposals;
mod qa;
mod remining;
mod replicas;
mod reports;
mod scope;
mod search;
mod switches;
mod task_results;
mod tool_calls;
mod triage;
mod trust;
mod vocabulary;
mod watch;

use lore_proto::v1::knowledge_service_client::KnowledgeServiceClient;
use lore_server::testing::TestServer;
use tonic::transport::Channel;

pub type KnowledgeClient = KnowledgeServiceClient<Channel>;

/// Text an agent is shown with its datamarks (lore_screen::fence) read
/// as spaces: a phrase that must not reach an agent is looked for here, so
/// the marks cannot hide it from the test.
pub fn unmarked(text: &str) -> String {
    text.replace('\u{02C6}', " ")
}

/// A KnowledgeService client that takes the large messages the bad-input
/// tests send (1 MB queries and documents).
pub async fn knowledge_client(server: &TestServer) -> KnowledgeClient {
    KnowledgeServiceClient::new(server.channel().await)
        .max_decoding_message_size(16 * 1024 * 1024)
        .max_encoding_message_size(16 * 1024 * 1024)
}

/// A learning with nothing but its key and title.
pub fn learning(project: &str, key: &str, title: &str) -> lore_proto::v1::Entry {
    lore_proto::v1::Entry {
        key: key.into(),
        project: project.into(),
        kind: lore_proto::v1::EntryKind::Learning as i32,
        title: title.into(),
        ..Default::default()
    }
}

/// A passing result of `task`, with nothing else: what a check's run reports.
pub fn passed(project: &str, task: &str) -> lore_proto::v1::RecordTaskResultRequest {
    lore_proto::v1::RecordTaskResultRequest {
        result_id: uuid::Uuid::now_v7().to_string(),
        project: project.into(),
        task: Some(lore_proto::v1::Task { task_id: task.into(), ..Default::default() }),
        verdict: lore_proto::v1::TaskVerdict::Passed as i32,
        ..Default::default()
    }
}

/// Asks `condition` every 50 ms until it holds; panics, naming `what`, when
/// it has not within `within`.
pub async fn wait_for<F, Fut>(what: &str, within: std::time::Duration, condition: F)
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = tokio::time::Instant::now() + within;
    while !condition().await {
        assert!(tokio::time::Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}
