//! Draft learnings from the action log and their review, over real gRPC and
//! a real PostgreSQL: drafts built from an epic's and a session's actions,
//! approval with edits (published to a folder when one is configured),
//! rejection, replays, and bad input.

use chrono::Utc;
use lore_domain::knowledge::drafts::entry_key;
use lore_domain::knowledge::watch::WatchedFolder;
use lore_proto::v1 as proto;
use lore_proto::v1::action_service_client::ActionServiceClient;
use lore_proto::v1::knowledge_service_client::KnowledgeServiceClient;
use lore_server::config::Config;
use lore_server::testing::TestServer;
use prost_types::Timestamp;
use tonic::Code;
use tonic::transport::Channel;
use uuid::Uuid;

type Knowledge = KnowledgeServiceClient<Channel>;
/// An action of the fixture's epic: type, category, outcome, error and one
/// context field.
type Step = (&'static str, &'static str, proto::Outcome, &'static str, Option<(&'static str, &'static str)>);

struct Fixture {
    server: TestServer,
    knowledge: Knowledge,
    session: proto::Session,
}

async fn start_session(actions: &mut ActionServiceClient<Channel>, project: &str, agent: &str) -> proto::Session {
    let request = proto::StartSessionRequest { project: project.into(), agent_id: agent.into(), ..Default::default() };
    actions.start_session(request).await.unwrap().into_inner().session.unwrap()
}

impl Fixture {
    async fn new(config: Config) -> Self {
        let server = TestServer::start_with(config).await;
        let mut actions = ActionServiceClient::new(server.channel().await);
        let session = start_session(&mut actions, "lore", "agent-7").await;
        // Epic E-42: a plan, a failing validation, a fix, a passing
        // validation, and a deploy that still fails; one minute apart.
        let start = Utc::now() - chrono::Duration::minutes(10);
        let steps: [Step; 5] = [
            ("plan", "", proto::Outcome::Success, "", Some(("decision", "split the parser out"))),
            ("validate", "tests", proto::Outcome::Failure, "assertion failed: empty input", None),
            ("commit", "", proto::Outcome::Success, "", Some(("message", "fix: handle empty input"))),
            ("validate", "tests", proto::Outcome::Success, "", None),
            ("deploy", "staging", proto::Outcome::Failure, "rollout timed out", None),
        ];
        for (index, (action_type, category, outcome, error, context)) in steps.into_iter().enumerate() {
            let at = start + chrono::Duration::minutes(index as i64);
            let action = proto::Action {
                action_id: Uuid::now_v7().to_string(),
                session_id: session.session_id.clone(),
                project: "lore".into(),
                action_type: action_type.into(),
                category: category.into(),
                outcome: outcome as i32,
                error: error.into(),
                epic_id: "E-42".into(),
                context: context.map(|(key, value)| lore_proto::json::to_struct(&serde_json::json!({ key: value }))),
                occurred_at: Some(Timestamp { seconds: at.timestamp(), nanos: 0 }),
                ..Default::default()
            };
            actions.log_action(proto::LogActionRequest { action: Some(action) }).await.unwrap();
        }
        let knowledge = KnowledgeServiceClient::new(server.channel().await);
        Self { server, knowledge, session }
    }

    async fn create(&mut self, draft_id: &str, epic_id: &str, session_id: &str) -> Result<proto::Draft, tonic::Status> {
        let request = proto::CreateDraftRequest {
            draft_id: draft_id.into(),
            project: "lore".into(),
            epic_id: epic_id.into(),
            session_id: session_id.into(),
            proposal: None,
        };
        self.knowledge.create_draft(request).await.map(tonic::Response::into_inner)
    }

    async fn review(
        &mut self,
        request: proto::ReviewDraftRequest,
    ) -> Result<proto::ReviewDraftResponse, tonic::Status> {
        self.knowledge.review_draft(request).await.map(tonic::Response::into_inner)
    }

    async fn list(&mut self, status: proto::DraftStatus) -> Vec<String> {
        let request = proto::ListDraftsRequest { project: "lore".into(), status: status as i32, page: None };
        let drafts = self.knowledge.list_drafts(request).await.unwrap().into_inner().drafts;
        drafts.into_iter().map(|draft| draft.draft_id).collect()
    }
}

fn approve(draft_id: &str, reviewer: &str) -> proto::ReviewDraftRequest {
    proto::ReviewDraftRequest {
        draft_id: draft_id.into(),
        decision: proto::ReviewDecision::Approve as i32,
        reviewer: reviewer.into(),
        ..Default::default()
    }
}

#[tokio::test]
async fn a_draft_from_an_epic_tells_what_failed_and_what_fixed_it_and_becomes_a_learning_on_approval() {
    let mut fixture = Fixture::new(TestServer::config()).await;
    let draft_id = Uuid::now_v7().to_string();
    let draft = fixture.create(&draft_id, "E-42", "").await.unwrap();
    assert_eq!(draft.status, proto::DraftStatus::Pending as i32);
    assert_eq!(draft.epic_id, "E-42");
    assert_eq!(draft.title, "Epic E-42: `assertion failed: empty input`");
    assert_eq!(draft.category, "tests");
    for expected in [
        "## What failed",
        "`validate` (tests) failed at",
        "with 1 × `commit` in between): `fix: handle empty input`",
        "## Still failing",
        "`deploy` (staging) failed 1 time",
        "## Decisions",
        "`split the parser out`",
        "## Time taken",
    ] {
        assert!(draft.body.contains(expected), "{expected:?} missing from\n{}", draft.body);
    }
    // A replay of the same request is the same draft; the id for another
    // source is refused.
    let replay = fixture.create(&draft_id, "E-42", "").await.unwrap();
    assert_eq!(replay, draft);
    let reused = fixture.create(&draft_id, "E-43", "").await.unwrap_err();
    assert_eq!(reused.code(), Code::AlreadyExists, "{reused:?}");
    assert_eq!(
        fixture.list(proto::DraftStatus::Unspecified).await,
        std::slice::from_ref(&draft_id),
        "pending by default"
    );

    let mut request = approve(&draft_id, "ada");
    request.title = "Empty input breaks the parser".into();
    request.tags = vec!["parser".into()];
    request.note = "good catch".into();
    let approved = fixture.review(request.clone()).await.unwrap();
    let (reviewed, entry) = (approved.draft.unwrap(), approved.entry.unwrap());
    assert_eq!(reviewed.status, proto::DraftStatus::Approved as i32);
    assert_eq!(reviewed.reviewer, "ada");
    assert_eq!(reviewed.review_note, "good catch");
    assert!(reviewed.reviewed_at.is_some());
    assert_eq!(reviewed.entry_id, entry.entry_id);
    assert_eq!(entry.kind, proto::EntryKind::Learning as i32);
    assert_eq!(entry.key, entry_key(draft_id.parse().unwrap()));
    assert_eq!(entry.title, "Empty input breaks the parser");
    assert_eq!(entry.tags, ["parser"]);
    assert!(entry.body.contains("fix: handle empty input"));

    // Approving again is a replay; rejecting now is refused.
    let again = fixture.review(request).await.unwrap();
    assert_eq!(again.entry.unwrap().entry_id, entry.entry_id);
    let mut reject = approve(&draft_id, "bob");
    reject.decision = proto::ReviewDecision::Reject as i32;
    let refused = fixture.review(reject).await.unwrap_err();
    assert_eq!(refused.code(), Code::FailedPrecondition);
    assert!(refused.message().contains("already approved by ada"), "{refused:?}");
    assert_eq!(fixture.list(proto::DraftStatus::Approved).await, [draft_id]);

    // The learning is searchable.
    let query = proto::SearchQuery { text: "parser empty input".into(), limit: 3, ..Default::default() };
    let hits = fixture
        .knowledge
        .search(proto::SearchRequest { project: "lore".into(), query: Some(query), ..Default::default() })
        .await
        .unwrap()
        .into_inner()
        .hits;
    assert_eq!(hits[0].entry.as_ref().unwrap().entry_id, entry.entry_id);
}

#[tokio::test]
async fn a_rejected_draft_of_a_session_makes_no_entry() {
    let mut fixture = Fixture::new(TestServer::config()).await;
    let session_id = fixture.session.session_id.clone();
    let draft = fixture.create("", "", &session_id).await.unwrap();
    assert_eq!(draft.session_id, session_id);
    assert!(draft.title.starts_with("Session "), "{}", draft.title);
    let mut request = approve(&draft.draft_id, "ada");
    request.decision = proto::ReviewDecision::Reject as i32;
    request.note = "not a lesson".into();
    let rejected = fixture.review(request).await.unwrap();
    assert_eq!(rejected.draft.unwrap().status, proto::DraftStatus::Rejected as i32);
    assert!(rejected.entry.is_none());
    let entries: i64 =
        sqlx::query_scalar("SELECT count(*) FROM knowledge_entries").fetch_one(fixture.server.pool()).await.unwrap();
    assert_eq!(entries, 0);
    assert_eq!(fixture.list(proto::DraftStatus::Rejected).await, [draft.draft_id]);
}

#[tokio::test]
async fn an_approved_draft_is_written_to_the_projects_publish_folder() {
    let folder = tempfile::tempdir().unwrap();
    let mut config = TestServer::config();
    config.knowledge.watch.folders =
        vec![WatchedFolder { path: folder.path().to_owned(), project: "lore".into(), publish: true }];
    let mut fixture = Fixture::new(config).await;
    let draft = fixture.create("", "E-42", "").await.unwrap();
    let entry = fixture.review(approve(&draft.draft_id, "ada")).await.unwrap().entry.unwrap();
    let file_name = format!("{}.md", entry.key);
    let written = std::fs::read_to_string(folder.path().join(&file_name)).unwrap();
    assert!(
        written
            .starts_with(&format!("---\napproved_by: \"ada\"\ncategory: \"tests\"\ndraft_id: \"{}\"", draft.draft_id)),
        "{written}"
    );
    assert!(written.contains(&format!("id: \"{}\"", entry.key)), "{written}");
    assert!(written.ends_with(&draft.body), "{written}");
    match entry.details.unwrap() {
        proto::entry::Details::Learning(learning) => assert_eq!(learning.source_path, file_name),
        other => panic!("not a learning: {other:?}"),
    }
    // Indexing the published file (as the watcher will) changes nothing.
    let request = proto::IndexDocumentRequest { project: "lore".into(), path: file_name, content: written };
    let indexed = fixture.knowledge.index_document(request).await.unwrap().into_inner();
    assert_eq!(indexed.entry.unwrap().entry_id, entry.entry_id);
}

#[tokio::test]
async fn bad_draft_requests_get_a_clear_status_naming_the_field() {
    let mut fixture = Fixture::new(TestServer::config()).await;
    let session_id = fixture.session.session_id.clone();
    for (draft_id, epic_id, session, code, expected) in [
        ("", "", "", Code::InvalidArgument, "epic_id: give exactly one of epic_id and session_id"),
        ("", "E-42", session_id.as_str(), Code::InvalidArgument, "epic_id: give exactly one"),
        ("not-a-uuid", "E-42", "", Code::InvalidArgument, "draft_id: \"not-a-uuid\" is not a UUID"),
        ("", "", "nope", Code::InvalidArgument, "session_id: \"nope\" is not a UUID"),
        ("", "E\0", "", Code::InvalidArgument, "epic_id: must not contain control characters"),
        ("", "E-404", "", Code::NotFound, "actions of epic E-404 in project lore not found"),
    ] {
        let status = fixture.create(draft_id, epic_id, session).await.unwrap_err();
        assert_eq!(status.code(), code, "{status:?}");
        assert!(status.message().starts_with(expected), "{}", status.message());
    }
    let draft = fixture.create("", "E-42", "").await.unwrap();
    let cases = [
        (proto::ReviewDraftRequest { decision: 1, reviewer: "ada".into(), ..Default::default() }, "draft_id: required"),
        (approve(&draft.draft_id, ""), "reviewer: required"),
        (proto::ReviewDraftRequest { decision: 0, ..approve(&draft.draft_id, "ada") }, "decision: required"),
        (proto::ReviewDraftRequest { decision: 7, ..approve(&draft.draft_id, "ada") }, "decision: unknown value 7"),
        (
            proto::ReviewDraftRequest { decision: 2, title: "x".into(), ..approve(&draft.draft_id, "ada") },
            "decision: edits (title, category, body, tags) only go with APPROVE",
        ),
        (
            proto::ReviewDraftRequest { body: "a\0b".into(), ..approve(&draft.draft_id, "ada") },
            "body: must not contain NUL",
        ),
        (
            proto::ReviewDraftRequest { title: "t".repeat(600), ..approve(&draft.draft_id, "ada") },
            "title: longer than 512",
        ),
    ];
    for (request, expected) in cases {
        let status = fixture.review(request).await.unwrap_err();
        assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
        assert!(status.message().starts_with(expected), "{}", status.message());
    }
    let missing = fixture.review(approve(&Uuid::now_v7().to_string(), "ada")).await.unwrap_err();
    assert_eq!(missing.code(), Code::NotFound);
    let request = proto::ListDraftsRequest { project: "lore".into(), status: 9, page: None };
    let status = fixture.knowledge.list_drafts(request).await.unwrap_err();
    assert!(status.message().starts_with("status: unknown value 9"), "{status:?}");
    // Nothing was reviewed by the refused requests.
    assert_eq!(fixture.list(proto::DraftStatus::Pending).await, [draft.draft_id]);
}

#[tokio::test]
async fn an_agents_proposal_leads_its_draft_with_the_log_as_evidence_even_before_the_log_arrives() {
    let mut fixture = Fixture::new(TestServer::config()).await;
    let proposal = proto::DraftProposal {
        title: "Empty input breaks the parser".into(),
        problem: "The parser indexes the first token without checking there is one.".into(),
        solution: "Return an empty document for empty input before tokenizing.".into(),
        category: "Parsing".into(),
        tags: vec!["parser".into()],
    };
    let request = proto::CreateDraftRequest {
        draft_id: Uuid::now_v7().to_string(),
        project: "lore".into(),
        session_id: fixture.session.session_id.clone(),
        proposal: Some(proposal.clone()),
        ..Default::default()
    };
    let draft = fixture.knowledge.create_draft(request).await.unwrap().into_inner();
    assert_eq!(draft.title, "Empty input breaks the parser");
    assert_eq!(draft.category, "parsing");
    assert!(
        draft.tags.contains(&"parser".to_owned()) && draft.tags.contains(&"validate".to_owned()),
        "{:?}",
        draft.tags
    );
    let problem = draft.body.find("## Problem").unwrap();
    let solution = draft.body.find("## Solution").unwrap();
    let evidence = draft.body.find("## Evidence from the log").unwrap();
    assert!(problem < solution && solution < evidence, "{}", draft.body);
    assert!(draft.body.contains("### What failed"), "{}", draft.body);
    assert!(draft.body.contains("assertion failed: empty input"), "{}", draft.body);

    // A session whose actions a sidecar has not shipped yet: the proposal alone.
    let unseen = proto::CreateDraftRequest {
        draft_id: Uuid::now_v7().to_string(),
        project: "lore".into(),
        session_id: Uuid::now_v7().to_string(),
        proposal: Some(proposal.clone()),
        ..Default::default()
    };
    let alone = fixture.knowledge.create_draft(unseen).await.unwrap().into_inner();
    assert!(alone.body.contains("## Solution") && !alone.body.contains("Evidence"), "{}", alone.body);

    let untitled = proto::CreateDraftRequest {
        draft_id: Uuid::now_v7().to_string(),
        project: "lore".into(),
        session_id: fixture.session.session_id.clone(),
        proposal: Some(proto::DraftProposal { title: " ".into(), ..proposal }),
        ..Default::default()
    };
    let status = fixture.knowledge.create_draft(untitled).await.unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument);
    assert!(status.message().starts_with("proposal.title"), "{}", status.message());
}

/// An epic marked complete, an epic whose validations keep failing and a
/// session whose failures were fixed are drafted without anyone asking,
/// each once: a second look, and a new leader after a restart, draft
/// nothing more.
#[tokio::test]
async fn lessons_are_drafted_without_being_asked_once_per_cause() {
    use lore_domain::knowledge::KnowledgeBase;
    use lore_domain::knowledge::auto_drafts::AutoDraftsConfig;

    // The test drives each look itself: the leader's scheduled look (every
    // minute) would draft the same causes first on a slow run.
    let mut server_config = TestServer::config();
    server_config.knowledge.auto_drafts.enabled = false;
    let server = TestServer::start_with(server_config).await;
    let mut actions = ActionServiceClient::new(server.channel().await);
    let session = start_session(&mut actions, "auto", "agent-1").await;
    let log = |action_type: &str, epic: &str, outcome: proto::Outcome| proto::Action {
        action_id: Uuid::now_v7().to_string(),
        session_id: session.session_id.clone(),
        project: "auto".into(),
        action_type: action_type.into(),
        epic_id: epic.into(),
        outcome: outcome.into(),
        error: if outcome == proto::Outcome::Failure { "check failed".into() } else { String::new() },
        occurred_at: Some(Timestamp::from(std::time::SystemTime::now())),
        ..Default::default()
    };
    let mut steps = vec![
        log("plan", "E-1", proto::Outcome::Success),
        log("commit", "E-1", proto::Outcome::Success),
        log("epic_complete", "E-1", proto::Outcome::Success),
    ];
    // Three failed validations are not yet "more than 3".
    steps.extend((0..3).map(|_| log("validate", "E-2", proto::Outcome::Failure)));
    for action in steps {
        actions.log_action(proto::LogActionRequest { action: Some(action) }).await.unwrap();
    }
    let knowledge = KnowledgeBase::new(server.pool().clone(), None, Default::default());
    let config = AutoDraftsConfig::default();
    let first = knowledge.draft_what_happened(&config, Utc::now()).await.unwrap();
    let tags: Vec<&str> = first.iter().map(|(cause, _)| cause.tag()).collect();
    assert_eq!(tags, ["epic-complete"], "{first:?}");

    // The fourth failed validation, and a QA failure of the session fixed
    // before it ended.
    actions
        .log_action(proto::LogActionRequest { action: Some(log("validate", "E-2", proto::Outcome::Failure)) })
        .await
        .unwrap();
    let mut qa = lore_proto::v1::qa_learning_service_client::QaLearningServiceClient::new(server.channel().await);
    let failure_id = Uuid::now_v7().to_string();
    qa.capture_failure(proto::CaptureFailureRequest {
        failure_id: failure_id.clone(),
        project: "auto".into(),
        task: Some(proto::Task { task_id: "T-1".into(), ..Default::default() }),
        session_id: session.session_id.clone(),
        error_messages: vec!["error[E0308]: mismatched types".into()],
        ..Default::default()
    })
    .await
    .unwrap();
    let again = knowledge.draft_what_happened(&config, Utc::now()).await.unwrap();
    assert_eq!(again.iter().map(|(cause, _)| cause.tag()).collect::<Vec<_>>(), ["validations-failing"]);
    qa.record_fix_attempt(proto::RecordFixAttemptRequest {
        attempt_id: Uuid::now_v7().to_string(),
        failure_id,
        attempt_number: 1,
        approach: "convert the id to i64".into(),
        outcome: proto::FixOutcome::Success.into(),
        ..Default::default()
    })
    .await
    .unwrap();
    assert!(knowledge.draft_what_happened(&config, Utc::now()).await.unwrap().is_empty(), "the session is not over");
    actions
        .end_session(proto::EndSessionRequest {
            session_id: session.session_id.clone(),
            reason: proto::EndReason::Normal.into(),
            summary: String::new(),
        })
        .await
        .unwrap();
    let fixed = knowledge.draft_what_happened(&config, Utc::now()).await.unwrap();
    assert_eq!(fixed.iter().map(|(cause, _)| cause.tag()).collect::<Vec<_>>(), ["failures-fixed"]);

    // A new leader after a restart (a fresh knowledge base, no memory)
    // drafts nothing again.
    let restarted = KnowledgeBase::new(server.pool().clone(), None, Default::default());
    assert!(restarted.draft_what_happened(&config, Utc::now()).await.unwrap().is_empty());
    let mut client = KnowledgeServiceClient::new(server.channel().await);
    let drafts = client
        .list_drafts(proto::ListDraftsRequest { project: "auto".into(), ..Default::default() })
        .await
        .unwrap()
        .into_inner()
        .drafts;
    assert_eq!(drafts.len(), 3, "{drafts:?}");
    for draft in &drafts {
        assert_eq!(draft.status, proto::DraftStatus::Pending as i32);
        assert!(draft.tags.contains(&"auto-draft".to_owned()), "{:?}", draft.tags);
        assert!(
            draft.body.contains(&session.session_id[..8]) || draft.body.contains("E-"),
            "links its source: {}",
            draft.body
        );
    }
}
