//! The book's "Querying with grpcurl" recipes (docs/guide/grpcurl.md), run
//! as written with the real grpcurl (through the chapter's alias, with a
//! real token) against a server holding a small day of work, each answer
//! checked. Recipes are read
//! from the chapter, so the two cannot drift apart: a recipe without a check
//! here, or a check without its recipe, fails the test.

use std::path::Path;

use lore_e2e::{ServerOptions, ServerProcess, TestDatabase, grpcurl_binary};
use lore_proto::auth::Bearer;
use lore_proto::v1 as proto;
use lore_proto::v1::action_service_client::ActionServiceClient;
use lore_proto::v1::knowledge_service_client::KnowledgeServiceClient;
use lore_proto::v1::qa_learning_service_client::QaLearningServiceClient;
use lore_server::auth::Role;
use lore_store::tokens::NewToken;

/// The address the chapter's recipes use.
const RECIPE_ADDRESS: &str = "127.0.0.1:50051";

/// (question, what its answer must contain, what it must not).
const CHECKS: &[(&str, &[&str], &[&str])] = &[
    (
        "which services are there",
        &["lore.v1.ActionService", "lore.v1.KnowledgeService", "lore.v1.QaLearningService", "lore.v1.AgentService"],
        &[],
    ),
    ("what an action is, with the documentation of each field", &["lore.v1.Action is a message", "occurred_at"], &[]),
    ("is the server serving", &["\"status\": \"SERVING\""], &[]),
    ("what did project lore do in the last hour", &["{build}", "{failure}", "{ticket}"], &["{old}"]),
    ("recent failures", &["{failure}", "OUTCOME_FAILURE"], &["{build}"]),
    ("an activity report of the project, as markdown", &["\"markdown\":", "\"failed\": \"1\""], &[]),
    ("where did agent-7's last session stop (resume)", &["{session}", "agent-7"], &[]),
    ("actions whose context contains {\"ticket\": \"LORE-42\"}", &["{ticket}"], &["{build}", "{failure}"]),
    ("search the lessons learned for a problem", &["Flaky test: retry the database connection"], &[]),
    (
        "the lessons for several errors at once (triage), each hit with how to expand it",
        &["Flaky test: retry the database connection", "\"cli\": \"lore entry show ", "\"tool\": \"get_lesson\""],
        &[],
    ),
    (
        "how far the knowledge of lore is indexed (vectors still to compute, this replica's keyword index)",
        &["\"entries\": \"1\"", "\"keywordIndexReady\": true", "\"keywordIndexEntries\": \"1\""],
        &[],
    ),
    ("the QA dashboard: failures, top patterns, whether warnings worked", &["\"failures\": \"1\""], &[]),
    ("the recurring failure patterns", &["database connection refused", "\"occurrenceCount\": \"1\""], &[]),
    (
        "what agent-7 should know before it fixes the flaky test (a briefing, as markdown too)",
        &["\"markdown\": \"", "## Lessons", "Flaky test: retry the database connection", "{session}"],
        &[],
    ),
];

/// The recipes of the chapter: each `# question` comment and the
/// command under it (continuation lines joined).
fn readme_recipes() -> Vec<(String, String)> {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/guide/grpcurl.md")).unwrap();
    let start = readme.find("# Querying with grpcurl").expect("the chapter has its title");
    let section = &readme[start..];
    let section = &section[..section[3..].find("\n## ").map_or(section.len(), |end| end + 3)];
    let mut recipes: Vec<(String, String)> = Vec::new();
    let mut in_block = false;
    for line in section.lines() {
        if line.starts_with("```") {
            in_block = !in_block;
            continue;
        }
        if !in_block {
            continue;
        }
        if let Some(question) = line.strip_prefix("# ") {
            recipes.push((question.to_owned(), String::new()));
        } else if let Some((_, command)) = recipes.last_mut() {
            let line = line.trim();
            command.push_str(line.strip_suffix('\\').unwrap_or(line).trim_end());
            command.push(' ');
        }
    }
    recipes.into_iter().filter(|(_, command)| !command.trim().is_empty()).collect()
}

/// Runs `command` as a shell would after the chapter's set-up lines.
async fn run(command: &str, address: &str, token: &str) -> (bool, String) {
    let script = format!(
        "grpcurl() {{ \"$LORE_GRPCURL\" -H \"authorization: Bearer $LORE_TOKEN\" \"$@\"; }}\n{}",
        command.replace(RECIPE_ADDRESS, address)
    );
    let output = tokio::process::Command::new("bash")
        .args(["-c", &script])
        .env("LORE_GRPCURL", grpcurl_binary())
        .env("LORE_TOKEN", token)
        .output()
        .await
        .expect("bash runs");
    let text = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    (output.status.success(), text)
}

struct Seeded {
    session: String,
    build: String,
    failure: String,
    ticket: String,
    old: String,
}

fn action(
    session: &proto::Session,
    action_type: &str,
    outcome: proto::Outcome,
    context: serde_json::Value,
    age_minutes: i64,
) -> proto::Action {
    let when = chrono::Utc::now() - chrono::Duration::minutes(age_minutes);
    proto::Action {
        action_id: uuid::Uuid::now_v7().to_string(),
        session_id: session.session_id.clone(),
        project: session.project.clone(),
        agent_id: session.agent_id.clone(),
        action_type: action_type.into(),
        outcome: outcome as i32,
        context: Some(lore_proto::json::to_struct(&context)),
        occurred_at: Some(prost_types::Timestamp { seconds: when.timestamp(), nanos: 0 }),
        ..Default::default()
    }
}

/// A morning of agent-7 on project lore: an old action, a build, a failing
/// test, a ticket's commit; a lesson learned; a captured QA failure.
async fn seed(server: &ServerProcess, token: &str) -> Seeded {
    let bearer = Bearer::new(Some(token)).unwrap();
    let mut actions = ActionServiceClient::with_interceptor(server.channel().await, bearer.clone());
    let start = proto::StartSessionRequest { project: "lore".into(), agent_id: "agent-7".into(), ..Default::default() };
    let session = actions.start_session(start).await.unwrap().into_inner().session.unwrap();
    let mut log = async |action: proto::Action| {
        let id = action.action_id.clone();
        actions.log_action(proto::LogActionRequest { action: Some(action) }).await.unwrap();
        id
    };
    let old = log(action(&session, "plan", proto::Outcome::Success, serde_json::json!({"step": "plan"}), 180)).await;
    let build =
        log(action(&session, "build", proto::Outcome::Success, serde_json::json!({"cmd": "cargo build"}), 30)).await;
    let failure =
        log(action(&session, "test", proto::Outcome::Failure, serde_json::json!({"cmd": "cargo test"}), 20)).await;
    let ticket =
        log(action(&session, "commit", proto::Outcome::Success, serde_json::json!({"ticket": "LORE-42"}), 10)).await;

    let mut knowledge = KnowledgeServiceClient::with_interceptor(server.channel().await, bearer.clone());
    let entry = proto::Entry {
        project: "lore".into(),
        kind: proto::EntryKind::Learning as i32,
        title: "Flaky test: retry the database connection".into(),
        body: "Tests that connect before PostgreSQL is ready fail at random; retry the connection with backoff.".into(),
        ..Default::default()
    };
    knowledge.upsert_entry(proto::UpsertEntryRequest { entry: Some(entry) }).await.unwrap();

    let mut qa = QaLearningServiceClient::with_interceptor(server.channel().await, bearer);
    let capture = proto::CaptureFailureRequest {
        project: "lore".into(),
        task: Some(proto::Task { task_id: "T-7".into(), title: "fix the login form".into(), ..Default::default() }),
        session_id: session.session_id.clone(),
        error_messages: vec!["cargo test: 3 failed (database connection refused)".into()],
        ..Default::default()
    };
    qa.capture_failure(capture).await.unwrap();
    Seeded { session: session.session_id, build, failure, ticket, old }
}

#[tokio::test]
async fn every_grpcurl_recipe_of_the_book_answers_its_question() {
    let recipes = readme_recipes();
    let questions: Vec<&str> = recipes.iter().map(|(question, _)| question.as_str()).collect();
    let checked: Vec<&str> = CHECKS.iter().map(|(question, _, _)| *question).collect();
    assert_eq!(questions, checked, "the chapter's recipes and this test's checks must match one to one");

    let database = TestDatabase::new().await.unwrap();
    let server = ServerProcess::start(ServerOptions::with_database(&database.url).with_auth()).await.unwrap();
    let token = NewToken { name: "readme".into(), role: Role::Admin, projects: None, expires_at: None };
    let (_, token) = lore_server::auth::create_token(&database.pool, &token).await.unwrap();
    let seeded = seed(&server, &token).await;
    let expand = |text: &str| {
        text.replace("{session}", &seeded.session)
            .replace("{build}", &seeded.build)
            .replace("{failure}", &seeded.failure)
            .replace("{ticket}", &seeded.ticket)
            .replace("{old}", &seeded.old)
    };

    for ((question, command), (_, present, absent)) in recipes.iter().zip(CHECKS) {
        let (ok, output) = run(command, server.addr(), &token).await;
        assert!(ok, "{question}: `{command}` failed:\n{output}");
        for expected in *present {
            let expected = expand(expected);
            assert!(output.contains(&expected), "{question}: `{command}` lacks {expected}:\n{output}");
        }
        for unexpected in *absent {
            let unexpected = expand(unexpected);
            assert!(!output.contains(&unexpected), "{question}: `{command}` shows {unexpected}:\n{output}");
        }
    }
}
