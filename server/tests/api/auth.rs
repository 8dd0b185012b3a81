//! Auth over real gRPC: every Lore method refuses a call without a valid
//! token, each role reaches exactly its methods, a token of project alpha
//! can neither read nor write project beta through any RPC (streams and
//! exports included), and a revoked token stops working on every replica.

use std::str::FromStr as _;
use std::time::Duration;

use lore_proto::auth::Bearer;
use lore_proto::v1 as proto;
use lore_proto::v1::action_service_client::ActionServiceClient;
use lore_proto::v1::agent_service_client::AgentServiceClient;
use lore_proto::v1::knowledge_service_client::KnowledgeServiceClient;
use lore_proto::v1::qa_learning_service_client::QaLearningServiceClient;
use lore_server::auth::{self, Role, method_access, served_methods};
use lore_server::testing::TestServer;
use lore_store::tokens::{self, NewToken};
use tonic::Code;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::Channel;

pub(crate) type Authed = InterceptedService<Channel, Bearer>;

pub(crate) async fn server_with_auth(cache_ttl_secs: u64) -> TestServer {
    let mut config = TestServer::config();
    config.auth.enabled = true;
    config.auth.cache_ttl_secs = cache_ttl_secs;
    TestServer::start_with(config).await
}

pub(crate) async fn token(server: &TestServer, name: &str, role: Role, projects: Option<&[&str]>) -> String {
    let token = NewToken {
        name: name.into(),
        role,
        projects: projects.map(|projects| projects.iter().map(|project| project.to_string()).collect()),
        expires_at: None,
    };
    auth::create_token(server.pool(), &token).await.expect("create token").1
}

pub(crate) async fn authed(server: &TestServer, token: &str) -> Authed {
    InterceptedService::new(server.channel().await, Bearer::new(Some(token)).unwrap())
}

/// Calls `path` with one empty message (any method accepts the shape on the
/// wire) and returns how it ended: the status of the call, or of the first
/// failing message of its response stream, or OK.
async fn call(server: &TestServer, path: &str, token: Option<&str>) -> tonic::Status {
    let mut grpc = tonic::client::Grpc::new(server.channel().await);
    grpc.ready().await.expect("channel ready");
    let mut request = tonic::Request::new(tokio_stream::iter([()]));
    if let Some(token) = token {
        request.metadata_mut().insert("authorization", format!("Bearer {token}").parse().unwrap());
    }
    let codec = tonic_prost::ProstCodec::<(), ()>::default();
    let path = http::uri::PathAndQuery::from_str(path).unwrap();
    match grpc.streaming(request, path, codec).await {
        Err(status) => status,
        Ok(response) => {
            let mut messages = response.into_inner();
            loop {
                match messages.message().await {
                    Ok(Some(_)) => continue,
                    Ok(None) => return tonic::Status::ok(""),
                    Err(status) => return status,
                }
            }
        }
    }
}

#[tokio::test]
async fn every_lore_method_refuses_a_call_without_a_valid_token_and_health_and_reflection_stay_open() {
    let server = server_with_auth(60).await;
    let methods = served_methods();
    assert!(methods.len() > 40);
    for method in &methods {
        let status = call(&server, method, None).await;
        assert_eq!(status.code(), Code::Unauthenticated, "{method} without a token: {status:?}");
        assert!(status.message().contains("missing token"), "{method}: {status:?}");
        let forged = "lore_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
        let status = call(&server, method, Some(forged)).await;
        assert_eq!(status.code(), Code::Unauthenticated, "{method} with an unknown token: {status:?}");
    }
    let status = call(&server, "/lore.v1.ActionService/LogAction", Some("not a bearer")).await;
    assert_eq!(status.code(), Code::Unauthenticated);

    let mut health = tonic_health::pb::health_client::HealthClient::new(server.channel().await);
    let check = tonic_health::pb::HealthCheckRequest { service: "lore.v1.ActionService".into() };
    assert_eq!(health.check(check).await.unwrap().into_inner().status, 1, "SERVING without a token");
}

/// Every method of every service, called with each role's token: refused
/// exactly when the role may not call it, and never UNIMPLEMENTED.
#[tokio::test]
async fn each_role_reaches_exactly_the_methods_of_its_access() {
    let server = server_with_auth(60).await;
    for role in [Role::Reader, Role::Sidecar, Role::Agent, Role::Admin] {
        let secret = token(&server, &format!("{role}-token"), role, Some(&["alpha"])).await;
        for method in served_methods() {
            let access = method_access(&method).unwrap();
            let status = call(&server, &method, Some(&secret)).await;
            let refused_for_role =
                status.code() == Code::PermissionDenied && status.message().contains("token may not call");
            assert_eq!(
                refused_for_role,
                !role.permits(access),
                "{role} calling {method} ({access}): {:?} {}",
                status.code(),
                status.message()
            );
            assert_ne!(status.code(), Code::Unauthenticated, "{role} {method}: {status:?}");
            // A method without a handler compiles (the generated default)
            // and answers UNIMPLEMENTED: every one is served.
            assert_ne!(status.code(), Code::Unimplemented, "{method} is not served: {status:?}");
        }
    }
}

fn action(project: &str, session_id: &str, text: &str) -> proto::Action {
    proto::Action {
        action_id: uuid::Uuid::now_v7().to_string(),
        session_id: session_id.into(),
        project: project.into(),
        action_type: "plan".into(),
        outcome: proto::Outcome::Success as i32,
        error: text.into(),
        occurred_at: Some(prost_types::Timestamp { seconds: chrono::Utc::now().timestamp(), nanos: 0 }),
        ..Default::default()
    }
}

fn failure(project: &str) -> proto::CaptureFailureRequest {
    proto::CaptureFailureRequest {
        failure_id: uuid::Uuid::now_v7().to_string(),
        project: project.into(),
        task: Some(proto::Task { task_id: "T-1".into(), title: "Rotate keys".into(), ..Default::default() }),
        error_messages: vec![format!("{project}: signing key rotation failed at step 3")],
        ..Default::default()
    }
}

/// Seeds one project through `token`: a session with an action, a lesson
/// and a captured failure. Returns the session and the entry id.
async fn seed(server: &TestServer, token: &str, project: &str) -> (proto::Session, String) {
    let mut actions = ActionServiceClient::new(authed(server, token).await);
    let start = proto::StartSessionRequest { project: project.into(), agent_id: "agent".into(), ..Default::default() };
    let session = actions.start_session(start).await.unwrap().into_inner().session.unwrap();
    let logged = action(project, &session.session_id, &format!("{project} rotates the signing key"));
    actions.log_action(proto::LogActionRequest { action: Some(logged) }).await.unwrap();
    let mut knowledge = KnowledgeServiceClient::new(authed(server, token).await);
    let entry = proto::Entry {
        key: format!("{project}-signing-key"),
        project: project.into(),
        kind: proto::EntryKind::Gotcha as i32,
        title: format!("Rotate the {project} signing key before deploys"),
        summary: "The signing key expires; rotate it first.".into(),
        category: "deploy".into(),
        ..Default::default()
    };
    let stored = knowledge.upsert_entry(proto::UpsertEntryRequest { entry: Some(entry) }).await.unwrap();
    let mut qa = QaLearningServiceClient::new(authed(server, token).await);
    qa.capture_failure(failure(project)).await.unwrap();
    (session, stored.into_inner().entry.unwrap().entry_id)
}

fn refused<T: std::fmt::Debug>(what: &str, result: Result<T, tonic::Status>) {
    match result {
        Err(status) if matches!(status.code(), Code::PermissionDenied | Code::NotFound) => {}
        other => panic!("{what}: expected PERMISSION_DENIED or NOT_FOUND, got {other:?}"),
    }
}

fn export_of(project: &str) -> proto::ExportRequest {
    proto::ExportRequest { project: project.into(), format: proto::ExportFormat::Jsonl as i32, ..Default::default() }
}

async fn export_text(client: &mut ActionServiceClient<Authed>, request: proto::ExportRequest) -> String {
    let mut chunks = client.export(request).await.unwrap().into_inner();
    let mut text = String::new();
    while let Some(chunk) = chunks.message().await.unwrap() {
        text.push_str(&String::from_utf8_lossy(&chunk.data));
    }
    text
}

#[tokio::test]
async fn a_token_of_project_alpha_neither_reads_nor_writes_project_beta_through_any_rpc() {
    let server = server_with_auth(60).await;
    let admin = token(&server, "admin", Role::Admin, None).await;
    let alpha = token(&server, "alpha-agent", Role::Agent, Some(&["alpha"])).await;
    let (beta_session, beta_entry) = seed(&server, &admin, "beta").await;
    seed(&server, &alpha, "alpha").await;

    let mut actions = ActionServiceClient::new(authed(&server, &alpha).await);
    let mut knowledge = KnowledgeServiceClient::new(authed(&server, &alpha).await);
    let mut qa = QaLearningServiceClient::new(authed(&server, &alpha).await);
    let mut admin_actions = ActionServiceClient::new(authed(&server, &admin).await);

    // Writes into beta are refused.
    let into_beta = action("beta", &beta_session.session_id, "alpha writes into beta");
    refused("LogAction", actions.log_action(proto::LogActionRequest { action: Some(into_beta.clone()) }).await);
    let start = proto::StartSessionRequest { project: "beta".into(), agent_id: "a".into(), ..Default::default() };
    refused("StartSession", actions.start_session(start).await);
    refused(
        "Heartbeat",
        actions.heartbeat(proto::HeartbeatRequest { session_id: beta_session.session_id.clone() }).await,
    );
    let batch = proto::IngestRequest { sequence: 0, actions: vec![into_beta] };
    let mut acks = actions.ingest(tokio_stream::iter([batch])).await.unwrap().into_inner();
    let ack = acks.message().await.unwrap().unwrap();
    assert_eq!((ack.stored, ack.rejected.len()), (0, 1), "{ack:?}");
    refused("CaptureFailure", qa.capture_failure(failure("beta")).await);
    let warnings = proto::GetWarningsRequest {
        project: "beta".into(),
        task: Some(proto::Task { task_id: "T-2".into(), title: "Rotate keys".into(), ..Default::default() }),
        ..Default::default()
    };
    refused("GetWarnings", qa.get_warnings(warnings).await);
    let mut agent = AgentServiceClient::new(authed(&server, &alpha).await);
    let brief = proto::BriefRequest { project: "beta".into(), agent_id: "a".into(), ..Default::default() };
    refused("Brief", agent.brief(brief).await);
    // Naming beta's session from alpha's project reveals nothing of it.
    // The agent id is the same in both projects.
    let brief = proto::BriefRequest {
        project: "alpha".into(),
        agent_id: "agent".into(),
        session_id: beta_session.session_id.clone(),
        ..Default::default()
    };
    let briefing = agent.brief(brief).await.expect("alpha is briefed in alpha").into_inner();
    let last = briefing.last_session.and_then(|summary| summary.session).expect("alpha's own last session");
    assert_eq!(last.project, "alpha", "beta's session leaked into alpha's briefing");
    assert!(!briefing.markdown.contains("beta"), "{}", briefing.markdown);
    let mut beta_lesson = proto::Entry {
        key: "beta-signing-key".into(),
        project: "beta".into(),
        kind: proto::EntryKind::Gotcha as i32,
        title: "Overwritten by alpha".into(),
        ..Default::default()
    };
    refused(
        "UpsertEntry",
        knowledge.upsert_entry(proto::UpsertEntryRequest { entry: Some(beta_lesson.clone()) }).await,
    );
    beta_lesson.entry_id = beta_entry.clone();
    beta_lesson.project = "alpha".into();
    let taken_over = knowledge.upsert_entry(proto::UpsertEntryRequest { entry: Some(beta_lesson) }).await;
    assert!(taken_over.is_err(), "beta's entry id is not taken over from alpha: {taken_over:?}");

    // Reads of beta return beta's rows to nobody but beta.
    let last = proto::GetLastSessionRequest { project: "beta".into(), ..Default::default() };
    refused("GetLastSession", actions.get_last_session(last).await);
    let recent = proto::GetRecentActionsRequest { session_id: beta_session.session_id.clone(), ..Default::default() };
    refused("GetRecentActions", actions.get_recent_actions(recent).await);
    refused(
        "VerifyChain",
        actions.verify_chain(proto::VerifyChainRequest { session_id: beta_session.session_id.clone() }).await,
    );
    let own = proto::SearchActionsRequest { project: "alpha".into(), ..Default::default() };
    let own = actions.search_actions(own).await.unwrap().into_inner();
    assert!(!own.actions.is_empty(), "alpha sees its own actions");
    assert!(own.actions.iter().all(|action| action.project == "alpha"), "{own:?}");
    let beta_only = proto::SearchActionsRequest { project: "beta".into(), ..Default::default() };
    match actions.search_actions(beta_only).await {
        Ok(found) => assert!(found.into_inner().actions.is_empty()),
        Err(status) => assert_eq!(status.code(), Code::PermissionDenied),
    }
    let report = proto::ActivityReportRequest { project: "beta".into(), ..Default::default() };
    match actions.activity_report(report).await {
        Ok(report) => assert_eq!(report.into_inner().totals.map(|totals| totals.total), Some(0)),
        Err(status) => assert_eq!(status.code(), Code::PermissionDenied),
    }

    // Resume with follow, by session and by project.
    for resume in [
        proto::ResumeRequest { session_id: beta_session.session_id.clone(), follow: true, ..Default::default() },
        proto::ResumeRequest { project: "beta".into(), follow: true, ..Default::default() },
    ] {
        match actions.resume(resume.clone()).await {
            Err(status) => assert!(matches!(status.code(), Code::PermissionDenied | Code::NotFound), "{status:?}"),
            Ok(stream) => {
                let first = stream.into_inner().message().await;
                refused(&format!("Resume {resume:?}"), first);
            }
        }
    }

    // Export: alpha's own export holds no beta row, beta's gives alpha
    // nothing; admin's export of beta holds beta's rows.
    let alpha_export = export_text(&mut actions, export_of("alpha")).await;
    assert!(alpha_export.contains("alpha rotates the signing key"), "{alpha_export}");
    assert!(!alpha_export.contains("beta"), "{alpha_export}");
    match actions.export(export_of("beta")).await {
        Ok(stream) => {
            let mut chunks = stream.into_inner();
            while let Ok(Some(chunk)) = chunks.message().await {
                assert!(!String::from_utf8_lossy(&chunk.data).contains("beta"));
            }
        }
        Err(status) => assert_eq!(status.code(), Code::PermissionDenied),
    }
    let admin_export = export_text(&mut admin_actions, export_of("beta")).await;
    assert!(admin_export.contains("beta rotates the signing key"), "the test's beta rows exist: {admin_export}");

    // Knowledge: Search, SearchMany, List, Get.
    let query = proto::SearchQuery { text: "rotate the signing key".into(), limit: 10, ..Default::default() };
    let hits = knowledge
        .search(proto::SearchRequest { project: "alpha".into(), query: Some(query.clone()), ..Default::default() })
        .await
        .unwrap()
        .into_inner();
    assert!(!hits.hits.is_empty());
    assert!(hits.hits.iter().all(|hit| hit.entry.as_ref().unwrap().project == "alpha"), "{hits:?}");
    match knowledge
        .search(proto::SearchRequest { project: "beta".into(), query: Some(query.clone()), ..Default::default() })
        .await
    {
        Ok(found) => assert!(found.into_inner().hits.is_empty()),
        Err(status) => assert_eq!(status.code(), Code::PermissionDenied),
    }
    let many = |project: &str| proto::SearchManyRequest {
        project: project.into(),
        queries: vec![query.clone(), proto::SearchQuery { query_id: "second".into(), ..query.clone() }],
        ..Default::default()
    };
    match knowledge.search_many(many("beta")).await {
        Ok(found) => assert!(found.into_inner().results.iter().all(|result| result.hits.is_empty())),
        Err(status) => assert_eq!(status.code(), Code::PermissionDenied),
    }
    let many = knowledge.search_many(many("alpha")).await.unwrap().into_inner();
    let projects: Vec<&str> = many
        .results
        .iter()
        .flat_map(|result| &result.hits)
        .map(|hit| hit.entry.as_ref().unwrap().project.as_str())
        .collect();
    assert!(!projects.is_empty() && projects.iter().all(|project| *project == "alpha"), "{projects:?}");
    let listed = knowledge.list_entries(proto::ListEntriesRequest::default()).await.map(|listed| listed.into_inner());
    match listed {
        Ok(listed) => assert!(listed.entries.iter().all(|entry| entry.project == "alpha"), "{listed:?}"),
        Err(status) => assert_eq!(status.code(), Code::InvalidArgument, "a project is required: {status:?}"),
    }
    let beta_entries = proto::ListEntriesRequest { project: "beta".into(), ..Default::default() };
    match knowledge.list_entries(beta_entries).await {
        Ok(listed) => assert!(listed.into_inner().entries.is_empty()),
        Err(status) => assert_eq!(status.code(), Code::PermissionDenied),
    }
    let get = proto::GetEntryRequest { entry_id: beta_entry.clone(), ..Default::default() };
    refused("GetEntry", knowledge.get_entry(get).await);

    // QA: patterns and the dashboard.
    let own = proto::ListPatternsRequest { project: "alpha".into(), ..Default::default() };
    let patterns = qa.list_patterns(own).await.unwrap().into_inner();
    assert!(!patterns.patterns.is_empty());
    assert!(patterns.patterns.iter().all(|pattern| pattern.project == "alpha"), "{patterns:?}");
    let beta_patterns = proto::ListPatternsRequest { project: "beta".into(), ..Default::default() };
    match qa.list_patterns(beta_patterns).await {
        Ok(listed) => assert!(listed.into_inner().patterns.is_empty()),
        Err(status) => assert_eq!(status.code(), Code::PermissionDenied),
    }
    refused("Dashboard", qa.dashboard(proto::DashboardRequest { project: "beta".into(), ..Default::default() }).await);

    // A reader of alpha reads alpha but writes nothing, even there.
    let reader = token(&server, "alpha-reader", Role::Reader, Some(&["alpha"])).await;
    let mut reader_actions = ActionServiceClient::new(authed(&server, &reader).await);
    let own = proto::SearchActionsRequest { project: "alpha".into(), ..Default::default() };
    assert!(reader_actions.search_actions(own).await.is_ok());
    let own = action("alpha", "", "a reader writes");
    let status = reader_actions.log_action(proto::LogActionRequest { action: Some(own) }).await.unwrap_err();
    assert_eq!(status.code(), Code::PermissionDenied, "{status:?}");
}

/// Calls until the token is refused, for up to `patience`.
async fn refused_within(server: &TestServer, token: &str, patience: Duration) -> bool {
    let deadline = tokio::time::Instant::now() + patience;
    let method = "/lore.v1.ActionService/GetRetentionStatus";
    loop {
        let status = call(server, method, Some(token)).await;
        if status.code() == Code::Unauthenticated {
            return true;
        }
        assert_eq!(status.code(), Code::Ok, "{status:?}");
        if tokio::time::Instant::now() > deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn a_revoked_token_stops_working_on_every_replica_and_an_expired_one_with_it() {
    // A day of cache: only the change notification can make the replicas
    // forget in time.
    let first = server_with_auth(86_400).await;
    let mut config = TestServer::config();
    config.auth.enabled = true;
    config.auth.cache_ttl_secs = 86_400;
    let second = first.sibling(config).await;
    let secret = token(&first, "short-lived", Role::Reader, None).await;
    let method = "/lore.v1.ActionService/GetRetentionStatus";
    for replica in [&first, &second] {
        assert_eq!(call(replica, method, Some(&secret)).await.code(), Code::Ok, "cached on both replicas");
    }
    // A stream opened before the revocation ends with it.
    let admin = token(&first, "admin", Role::Admin, None).await;
    let mut admin_actions = ActionServiceClient::new(authed(&first, &admin).await);
    let start = proto::StartSessionRequest { project: "alpha".into(), agent_id: "a".into(), ..Default::default() };
    let session = admin_actions.start_session(start).await.unwrap().into_inner().session.unwrap();
    let mut follower = ActionServiceClient::new(authed(&second, &secret).await);
    let follow = proto::ResumeRequest { session_id: session.session_id, follow: true, ..Default::default() };
    let mut events = follower.resume(follow).await.unwrap().into_inner();
    assert!(events.message().await.unwrap().is_some(), "the summary comes first");

    tokens::revoke(first.pool(), "short-lived").await.unwrap();
    for replica in [&first, &second] {
        assert!(refused_within(replica, &secret, Duration::from_secs(20)).await, "revocation reached the replica");
    }
    let ended = tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            match events.message().await {
                Ok(Some(_)) => continue,
                other => return other,
            }
        }
    })
    .await
    .expect("the open stream ends");
    assert_eq!(ended.unwrap_err().code(), Code::Unauthenticated);

    // An expired token never works; one that expires is forgotten then,
    // whatever the cache TTL.
    let expiring = |name: &str, seconds: i64| NewToken {
        name: name.into(),
        role: Role::Reader,
        projects: None,
        expires_at: Some(chrono::Utc::now() + chrono::Duration::seconds(seconds)),
    };
    let (_, expired) = auth::create_token(first.pool(), &expiring("expired", -1)).await.unwrap();
    assert_eq!(call(&first, method, Some(&expired)).await.code(), Code::Unauthenticated);
    let (_, soon) = auth::create_token(first.pool(), &expiring("soon", 2)).await.unwrap();
    assert_eq!(call(&first, method, Some(&soon)).await.code(), Code::Ok);
    assert!(refused_within(&first, &soon, Duration::from_secs(20)).await, "expiry ends the cached token");

    let listed = tokens::list(first.pool(), true).await.unwrap();
    let revoked = listed.iter().find(|token| token.name == "short-lived").unwrap();
    assert!(revoked.revoked_at.is_some() && revoked.last_used_at.is_some(), "{revoked:?}");
    let names: Vec<String> =
        tokens::list(first.pool(), false).await.unwrap().into_iter().map(|token| token.name).collect();
    assert_eq!(names, ["soon", "expired", "admin"], "not revoked, newest first");
}
