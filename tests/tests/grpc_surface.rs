//! What a client sees of the server: reflection, health, the contract.

use lore_e2e::{ServerOptions, ServerProcess, TestDatabase, grpcurl};
use lore_proto::v1::DashboardRequest;
use lore_proto::v1::qa_learning_service_client::QaLearningServiceClient;
use tokio_stream::StreamExt as _;
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;
use tonic_reflection::pb::v1::ServerReflectionRequest;
use tonic_reflection::pb::v1::server_reflection_client::ServerReflectionClient;
use tonic_reflection::pb::v1::server_reflection_request::MessageRequest;
use tonic_reflection::pb::v1::server_reflection_response::MessageResponse;

async fn server() -> (TestDatabase, ServerProcess) {
    let database = TestDatabase::new().await.unwrap();
    let server = ServerProcess::start(ServerOptions::with_database(&database.url)).await.unwrap();
    (database, server)
}

#[tokio::test]
async fn grpcurl_lists_the_three_services_health_and_reflection() {
    let (_database, server) = server().await;
    let output = grpcurl(&[], server.addr(), &["list"]).await;
    assert!(output.success, "{output:?}");
    let services: Vec<&str> = output.stdout.lines().collect();
    for expected in [
        "lore.v1.ActionService",
        "lore.v1.KnowledgeService",
        "lore.v1.QaLearningService",
        "grpc.health.v1.Health",
        "grpc.reflection.v1.ServerReflection",
        "grpc.reflection.v1alpha.ServerReflection",
    ] {
        assert!(services.contains(&expected), "{expected} missing from {services:?}");
    }
    assert!(!services.contains(&"lore.v1.SidecarService"), "the server does not serve it: {services:?}");
}

#[tokio::test]
async fn grpcurl_lists_the_rpcs_of_a_service() {
    let (_database, server) = server().await;
    let output = grpcurl(&[], server.addr(), &["list", "lore.v1.ActionService"]).await;
    assert!(output.success, "{output:?}");
    for rpc in ["StartSession", "LogAction", "Ingest", "Resume", "Export", "VerifyChain"] {
        assert!(output.stdout.contains(&format!("lore.v1.ActionService.{rpc}")), "{rpc}: {}", output.stdout);
    }
}

#[tokio::test]
async fn grpcurl_describes_a_message_with_its_doc_comments() {
    let (_database, server) = server().await;
    let output = grpcurl(&[], server.addr(), &["describe", "lore.v1.Action"]).await;
    assert!(output.success, "{output:?}");
    assert!(output.stdout.contains("lore.v1.Action is a message"), "{}", output.stdout);
    assert!(output.stdout.contains(".google.protobuf.Timestamp occurred_at = 14;"), "{}", output.stdout);
    assert!(output.stdout.contains("partition key of the log"), "doc comment missing: {}", output.stdout);
}

#[tokio::test]
async fn reflection_v1_serves_the_lore_files_too() {
    let (_database, server) = server().await;
    let mut client = ServerReflectionClient::new(server.channel().await);
    let request = ServerReflectionRequest {
        host: String::new(),
        message_request: Some(MessageRequest::FileContainingSymbol("lore.v1.KnowledgeService".into())),
    };
    let mut responses = client.server_reflection_info(tokio_stream::iter([request])).await.unwrap().into_inner();
    let response = responses.next().await.unwrap().unwrap();
    let Some(MessageResponse::FileDescriptorResponse(files)) = response.message_response else {
        panic!("unexpected reflection response {response:?}");
    };
    assert!(!files.file_descriptor_proto.is_empty());
}

#[tokio::test]
async fn health_answers_serving_for_the_server_and_each_service() {
    let (_database, server) = server().await;
    let output = grpcurl(&[], server.addr(), &["grpc.health.v1.Health/Check"]).await;
    assert!(output.success, "{output:?}");
    assert!(output.stdout.contains("\"status\": \"SERVING\""), "{}", output.stdout);

    let mut health = HealthClient::new(server.channel().await);
    for service in lore_proto::SERVICE_NAMES {
        let status = health.check(HealthCheckRequest { service: service.into() }).await.unwrap().into_inner().status;
        assert_eq!(status, ServingStatus::Serving as i32, "{service}");
    }
    let unknown = health.check(HealthCheckRequest { service: "lore.v1.Nope".into() }).await.unwrap_err();
    assert_eq!(unknown.code(), tonic::Code::NotFound);
}

#[tokio::test]
async fn grpcurl_captures_a_failure_and_reads_the_qa_dashboard_without_proto_files() {
    let (_database, server) = server().await;
    let capture = r#"{"project": "lore", "task": {"task_id": "T-1"}, "error_messages": ["cargo test: 3 failed"]}"#;
    let output = grpcurl(&["-d", capture], server.addr(), &["lore.v1.QaLearningService/CaptureFailure"]).await;
    assert!(output.success, "{output:?}");
    assert!(output.stdout.contains(r#""newPattern": true"#), "{output:?}");

    let output =
        grpcurl(&["-d", r#"{"project": "lore"}"#], server.addr(), &["lore.v1.QaLearningService/Dashboard"]).await;
    assert!(output.success, "{output:?}");
    assert!(output.stdout.contains(r#""failures": "1""#), "{output:?}");

    let mut client = QaLearningServiceClient::new(server.channel().await);
    let status = client
        .dashboard(DashboardRequest { project: "lore".into(), category: "nope".into(), ..Default::default() })
        .await
        .unwrap_err();
    assert_eq!(status.code(), tonic::Code::InvalidArgument);
    assert!(status.message().starts_with("category:"), "{status:?}");
}

#[tokio::test]
async fn resume_follow_on_one_server_sees_actions_written_through_another() {
    use lore_proto::v1 as proto;
    use lore_proto::v1::action_service_client::ActionServiceClient;
    let database = TestDatabase::new().await.unwrap();
    let follower_server = ServerProcess::start(ServerOptions::with_database(&database.url)).await.unwrap();
    let writer_server = ServerProcess::start(ServerOptions::with_database(&database.url)).await.unwrap();
    let mut follower = ActionServiceClient::new(follower_server.channel().await);
    let mut writer = ActionServiceClient::new(writer_server.channel().await);
    let session = lore_e2e::start_session(&mut writer, "replicas", "agent-1").await;

    let request = proto::ResumeRequest { session_id: session.session_id.clone(), follow: true, ..Default::default() };
    let mut events = follower.resume(request).await.unwrap().into_inner();
    loop {
        let event = events.message().await.unwrap().unwrap();
        if matches!(event.event, Some(proto::resume_event::Event::CaughtUp(_))) {
            break;
        }
    }
    let action = proto::Action {
        action_id: uuid::Uuid::now_v7().to_string(),
        session_id: session.session_id.clone(),
        project: "replicas".into(),
        action_type: "deploy".into(),
        outcome: proto::Outcome::Success as i32,
        occurred_at: Some(prost_types::Timestamp { seconds: chrono::Utc::now().timestamp(), nanos: 0 }),
        ..Default::default()
    };
    writer.log_action(proto::LogActionRequest { action: Some(action.clone()) }).await.unwrap();
    loop {
        let event = tokio::time::timeout(std::time::Duration::from_secs(10), events.message())
            .await
            .expect("the action reached the other server's follower")
            .unwrap()
            .unwrap();
        if let Some(proto::resume_event::Event::Action(received)) = event.event {
            assert_eq!(received.action_id, action.action_id);
            break;
        }
    }
}
