//! Automatic tool-call logging over real gRPC: Knowledge and QA calls that
//! carry `x-lore-session-id` show up as `tool_call` actions of that session,
//! with their parameters (secrets redacted), a summary of the result, the
//! outcome and the duration; a malformed session id is refused; a session
//! outside the caller's projects gets nothing.

use std::time::Duration;

use lore_proto::v1 as proto;
use lore_proto::v1::action_service_client::ActionServiceClient;
use lore_proto::v1::knowledge_service_client::KnowledgeServiceClient;
use lore_proto::v1::qa_learning_service_client::QaLearningServiceClient;
use lore_server::auth::Role;
use tonic::Code;

use super::auth::{authed, server_with_auth, token};

const SECRET: &str = "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";

fn with_session<T>(message: T, session_id: &str) -> tonic::Request<T> {
    let mut request = tonic::Request::new(message);
    request.metadata_mut().insert("x-lore-session-id", session_id.parse().unwrap());
    request
}

/// The session's tool_call actions, oldest first, once there are `count`.
async fn tool_calls(
    actions: &mut ActionServiceClient<super::auth::Authed>,
    session_id: &str,
    count: usize,
) -> Vec<proto::Action> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let recent = actions
            .get_recent_actions(proto::GetRecentActionsRequest {
                session_id: session_id.into(),
                limit: 100,
                ..Default::default()
            })
            .await
            .expect("recent actions")
            .into_inner();
        let mut calls: Vec<_> = recent.actions.into_iter().filter(|action| action.action_type == "tool_call").collect();
        if calls.len() >= count || tokio::time::Instant::now() > deadline {
            calls.reverse();
            return calls;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn search_query(text: &str) -> proto::SearchQuery {
    proto::SearchQuery { text: text.into(), limit: 5, ..Default::default() }
}

fn context_json(action: &proto::Action) -> serde_json::Value {
    lore_proto::json::struct_to_json(action.context.as_ref().expect("context"))
}

#[tokio::test]
async fn calls_with_a_session_id_become_tool_call_actions_with_secrets_redacted() {
    let server = server_with_auth(60).await;
    let alpha = token(&server, "alpha-agent", Role::Agent, Some(&["alpha"])).await;
    let beta = token(&server, "beta-agent", Role::Agent, Some(&["beta"])).await;
    let mut actions = ActionServiceClient::new(authed(&server, &alpha).await);
    let mut knowledge = KnowledgeServiceClient::new(authed(&server, &alpha).await);
    let mut qa = QaLearningServiceClient::new(authed(&server, &alpha).await);

    let session = actions
        .start_session(proto::StartSessionRequest {
            project: "alpha".into(),
            agent_id: "agent-7".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .session
        .unwrap();
    let session_id = session.session_id.clone();

    knowledge
        .upsert_entry(proto::UpsertEntryRequest {
            entry: Some(proto::Entry {
                project: "alpha".into(),
                kind: proto::EntryKind::Learning as i32,
                title: "Flaky test: retry the database connection".into(),
                body: "Tests that open a connection before PostgreSQL is ready fail; retry with backoff.".into(),
                ..Default::default()
            }),
        })
        .await
        .expect("upsert without a session is not logged");
    let query = format!("flaky database connection, token {SECRET}");
    let searching = std::time::Instant::now();
    let hits = knowledge
        .search(with_session(
            proto::SearchRequest { project: "alpha".into(), query: Some(search_query(&query)), ..Default::default() },
            &session_id,
        ))
        .await
        .expect("search")
        .into_inner();
    let search_ms = searching.elapsed().as_millis();
    assert!(!hits.hits.is_empty());
    qa.get_warnings(with_session(
        proto::GetWarningsRequest {
            project: "alpha".into(),
            task: Some(proto::Task { task_id: "T-1".into(), title: "fix the login form".into(), ..Default::default() }),
            ..Default::default()
        },
        &session_id,
    ))
    .await
    .expect("warnings");
    let refused = knowledge
        .search(with_session(
            proto::SearchRequest { project: "alpha".into(), query: None, ..Default::default() },
            &session_id,
        ))
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Code::InvalidArgument);

    let calls = tool_calls(&mut actions, &session_id, 3).await;
    let tools: Vec<_> = calls.iter().map(|call| context_json(call)["tool"].as_str().unwrap().to_owned()).collect();
    assert_eq!(
        tools,
        ["lore.v1.KnowledgeService/Search", "lore.v1.QaLearningService/GetWarnings", "lore.v1.KnowledgeService/Search"],
        "one action per call with a session id, in order, and none for the upsert without one"
    );
    for call in &calls {
        assert_eq!(call.project, "alpha");
        assert_eq!(call.agent_id, "agent-7", "the session's agent");
    }

    let search = &calls[0];
    let context = context_json(search);
    assert_eq!(search.category, "knowledge");
    assert!(u128::from(search.duration_ms) <= search_ms, "the server's time is within the client's");
    assert_eq!(search.outcome, proto::Outcome::Success as i32);
    assert_eq!(context["status"], "Ok");
    let logged_query = context["params"]["query"]["text"].as_str().unwrap();
    assert!(logged_query.starts_with("flaky database connection"), "{logged_query}");
    assert!(!context.to_string().contains(SECRET), "the secret is redacted: {context}");
    assert!(search.redaction_count >= 1);
    let result = &context["result"]["hits"];
    assert_eq!(result["count"].as_f64(), Some(hits.hits.len() as f64));
    assert_eq!(result["ids"][0], hits.hits[0].entry.as_ref().unwrap().entry_id.as_str(), "{result}");

    assert_eq!(calls[1].category, "qa");
    assert_eq!(context_json(&calls[1])["params"]["task"]["task_id"], "T-1");

    let failed = &calls[2];
    assert_eq!(failed.outcome, proto::Outcome::Failure as i32);
    assert!(failed.error.starts_with("InvalidArgument: query"), "{}", failed.error);
    assert!(context_json(failed).get("result").is_none());

    // Another project's token cannot log into alpha's session: its call is
    // served (its own project), the tool call is not stored. A later call
    // of alpha's goes through the same queue, so once it is stored, beta's
    // would have been too.
    let mut beta_knowledge = KnowledgeServiceClient::new(authed(&server, &beta).await);
    beta_knowledge
        .search(with_session(
            proto::SearchRequest {
                project: "beta".into(),
                query: Some(search_query("anything")),
                ..Default::default()
            },
            &session_id,
        ))
        .await
        .expect("beta searches its own project");
    knowledge
        .get_entry(with_session(
            proto::GetEntryRequest {
                entry_id: hits.hits[0].entry.as_ref().unwrap().entry_id.clone(),
                ..Default::default()
            },
            &session_id,
        ))
        .await
        .expect("get entry");
    let calls = tool_calls(&mut actions, &session_id, 4).await;
    let tools: Vec<_> = calls.iter().map(|call| context_json(call)["tool"].as_str().unwrap().to_owned()).collect();
    assert_eq!(tools.len(), 4, "{tools:?}");
    assert_eq!(tools[3], "lore.v1.KnowledgeService/GetEntry");
    server.stop().await;
}

#[tokio::test]
async fn a_malformed_session_id_is_refused_naming_the_metadata_key() {
    let server = lore_server::testing::TestServer::start().await;
    let mut knowledge = super::knowledge_client(&server).await;
    for bad in ["not-a-uuid", "", "1234"] {
        let status = knowledge
            .search(with_session(
                proto::SearchRequest { project: "alpha".into(), query: Some(search_query("q")), ..Default::default() },
                bad,
            ))
            .await
            .unwrap_err();
        assert_eq!(status.code(), Code::InvalidArgument, "{bad:?}");
        assert!(status.message().contains("x-lore-session-id"), "{status:?}");
    }
    // ActionService calls are the action log itself: the header is ignored.
    let mut actions = ActionServiceClient::new(server.channel().await);
    let mut request = tonic::Request::new(proto::GetRetentionStatusRequest::default());
    request.metadata_mut().insert("x-lore-session-id", "not-a-uuid".parse().unwrap());
    actions.get_retention_status(request).await.expect("not a tool call");
    server.stop().await;
}
