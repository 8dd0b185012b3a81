//! Supersession and erasure over real gRPC with auth on: a newer lesson
//! replaces an older one when it says so or when it is a newer verified fix
//! of the same QA pattern, and an agent's lesson cannot push out a
//! reviewed one; erasing an entry removes it and what derives from it on
//! every replica, and the audit log records the erasure with its hash
//! chains intact.

use std::time::{Duration, Instant};

use lore_proto::v1 as proto;
use lore_proto::v1::action_service_client::ActionServiceClient;
use lore_proto::v1::knowledge_service_client::KnowledgeServiceClient;
use lore_proto::v1::qa_learning_service_client::QaLearningServiceClient;
use lore_server::auth::Role;
use lore_server::testing::TestServer;
use tonic::Code;
use uuid::Uuid;

use crate::auth::{Authed, authed, server_with_auth, token};

const PROJECT: &str = "erasure";

fn lesson(key: &str, title: &str, supersedes: &[&str]) -> proto::UpsertEntryRequest {
    proto::UpsertEntryRequest {
        entry: Some(proto::Entry {
            key: key.into(),
            project: PROJECT.into(),
            kind: proto::EntryKind::Learning as i32,
            title: title.into(),
            summary: format!("{title}, and what to do about it."),
            supersedes: supersedes.iter().map(|handle| (*handle).to_owned()).collect(),
            ..Default::default()
        }),
    }
}

async fn keys_found(knowledge: &mut KnowledgeServiceClient<Authed>, text: &str) -> Vec<String> {
    let query = proto::SearchQuery {
        text: text.into(),
        limit: 20,
        mode: proto::SearchMode::Keyword as i32,
        ..Default::default()
    };
    let request = proto::SearchRequest { project: PROJECT.into(), query: Some(query), ..Default::default() };
    let hits = knowledge.search(request).await.unwrap().into_inner().hits;
    hits.into_iter().filter_map(|hit| hit.entry).map(|entry| entry.key).collect()
}

async fn entry(knowledge: &mut KnowledgeServiceClient<Authed>, key: &str) -> Result<proto::Entry, tonic::Status> {
    let request = proto::GetEntryRequest { project: PROJECT.into(), key: key.into(), ..Default::default() };
    knowledge.get_entry(request).await.map(|response| response.into_inner().entry.unwrap())
}

#[tokio::test]
async fn a_newer_lesson_supersedes_what_it_names_and_erasing_it_brings_the_older_back() {
    let server = server_with_auth(60).await;
    let admin_token = token(&server, "ops", Role::Admin, None).await;
    let agent_token = token(&server, "vm-5", Role::Agent, Some(&[PROJECT])).await;
    let mut admin = KnowledgeServiceClient::new(authed(&server, &admin_token).await);
    let mut agent = KnowledgeServiceClient::new(authed(&server, &agent_token).await);

    admin.upsert_entry(lesson("CACHE-1", "Warm the build cache before the release build", &[])).await.unwrap();
    let newer = admin
        .upsert_entry(lesson(
            "CACHE-2",
            "Warm the build cache with the new cache key before the release build",
            &["CACHE-1"],
        ))
        .await
        .unwrap()
        .into_inner()
        .entry
        .unwrap();
    let older = entry(&mut admin, "CACHE-1").await.unwrap();
    assert_eq!(older.status, proto::EntryStatus::Superseded as i32);
    assert_eq!(older.superseded_by, newer.entry_id);
    assert_eq!(entry(&mut admin, "CACHE-2").await.unwrap().superseded, vec![older.entry_id.clone()]);
    assert_eq!(keys_found(&mut agent, "warm build cache release").await, vec!["CACHE-2".to_owned()]);

    // An agent's lesson cannot push out a reviewed one; unknown and
    // self-references name their field.
    let refused = agent.upsert_entry(lesson("AG-CACHE", "Skip the cache warmup", &["CACHE-2"])).await.unwrap_err();
    assert_eq!(refused.code(), Code::PermissionDenied, "{refused:?}");
    assert!(
        refused.message().starts_with("entry.supersedes[0]") || refused.message().starts_with("supersedes[0]"),
        "{refused:?}"
    );
    assert_eq!(entry(&mut admin, "CACHE-2").await.unwrap().status, proto::EntryStatus::Active as i32);
    let unknown = admin.upsert_entry(lesson("CACHE-3", "Cache notes", &["NO-SUCH"])).await.unwrap_err();
    assert_eq!(unknown.code(), Code::NotFound);
    assert!(unknown.message().contains("supersedes[0]"), "{unknown:?}");
    assert!(entry(&mut admin, "CACHE-3").await.is_err(), "a refused write stores nothing");
    let mut status = lesson("CACHE-4", "Cache notes", &[]);
    status.entry.as_mut().unwrap().status = proto::EntryStatus::Superseded as i32;
    let bad = admin.upsert_entry(status).await.unwrap_err();
    assert!(bad.message().starts_with("entry.status"), "{bad:?}");

    // Erasing the newer one: it is gone, the older is active again, an
    // agent may not erase, and the note is required.
    let denied = agent
        .erase_entry(proto::EraseEntryRequest {
            entry_id: newer.entry_id.clone(),
            note: "mine".into(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(denied.code(), Code::PermissionDenied);
    let no_note = admin
        .erase_entry(proto::EraseEntryRequest { entry_id: newer.entry_id.clone(), ..Default::default() })
        .await
        .unwrap_err();
    assert!(no_note.message().starts_with("note"), "{no_note:?}");
    let erased = admin
        .erase_entry(proto::EraseEntryRequest {
            project: PROJECT.into(),
            key: "CACHE-2".into(),
            note: "the new cache key was rolled back".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!((erased.entry_id.as_str(), erased.entries_revived), (newer.entry_id.as_str(), 1));
    assert_eq!(entry(&mut admin, "CACHE-2").await.unwrap_err().code(), Code::NotFound);
    assert_eq!(entry(&mut admin, "CACHE-1").await.unwrap().status, proto::EntryStatus::Active as i32);
    assert_eq!(keys_found(&mut agent, "warm build cache release").await, vec!["CACHE-1".to_owned()]);
}

fn failure(task: &str) -> proto::CaptureFailureRequest {
    proto::CaptureFailureRequest {
        failure_id: Uuid::now_v7().to_string(),
        project: PROJECT.into(),
        task: Some(proto::Task { task_id: task.into(), title: "Fix the parser".into(), ..Default::default() }),
        failed_checks: vec![proto::FailedCheck { name: "pytest".into(), exit_code: 1, ..Default::default() }],
        error_messages: vec!["KeyError: 'version' in parser.load at src/parser.py:41".into()],
        ..Default::default()
    }
}

async fn fix_and_pass(qa: &mut QaLearningServiceClient<Authed>, task: &str, approach: &str, files: &[&str]) -> String {
    let failure_id = qa.capture_failure(failure(task)).await.unwrap().into_inner().ack.unwrap().id;
    qa.record_fix_attempt(proto::RecordFixAttemptRequest {
        attempt_id: Uuid::now_v7().to_string(),
        failure_id: failure_id.clone(),
        attempt_number: 1,
        approach: approach.into(),
        files_changed: files.iter().map(|file| (*file).to_owned()).collect(),
        outcome: proto::FixOutcome::Success as i32,
        ..Default::default()
    })
    .await
    .unwrap();
    qa.record_task_result(crate::passed(PROJECT, task)).await.unwrap();
    failure_id
}

/// The project's gotchas, active and superseded.
async fn gotchas(knowledge: &mut KnowledgeServiceClient<Authed>) -> Vec<proto::Entry> {
    let mut found = Vec::new();
    for status in [proto::EntryStatus::Active, proto::EntryStatus::Superseded] {
        let request = proto::ListEntriesRequest {
            project: PROJECT.into(),
            kinds: vec![proto::EntryKind::Gotcha as i32],
            status: status as i32,
            ..Default::default()
        };
        found.extend(knowledge.list_entries(request).await.unwrap().into_inner().entries);
    }
    found
}

#[tokio::test]
async fn a_newer_verified_fix_supersedes_the_older_and_erasing_it_reaches_every_replica() {
    let server = server_with_auth(60).await;
    let mut config = TestServer::config();
    config.auth.enabled = true;
    let replica = server.sibling(config).await;
    let admin_token = token(&server, "ops", Role::Admin, None).await;
    let agent_token = token(&server, "vm-6", Role::Agent, Some(&[PROJECT])).await;
    let mut admin = KnowledgeServiceClient::new(authed(&server, &admin_token).await);
    let mut on_replica = KnowledgeServiceClient::new(authed(&replica, &agent_token).await);
    let mut qa = QaLearningServiceClient::new(authed(&server, &agent_token).await);

    fix_and_pass(&mut qa, "T-1", "Default the version to 1 when the file has none", &["src/parser.py"]).await;
    let first = gotchas(&mut admin).await;
    assert_eq!(first.len(), 1);
    assert_eq!(first[0].trust, proto::Trust::Verified as i32);
    assert_eq!(first[0].cited_files, vec!["src/parser.py".to_owned()]);

    // An unverified newer fix does not overwrite the verified gotcha...
    let failure_id = qa.capture_failure(failure("T-2")).await.unwrap().into_inner().ack.unwrap().id;
    qa.record_fix_attempt(proto::RecordFixAttemptRequest {
        attempt_id: Uuid::now_v7().to_string(),
        failure_id,
        attempt_number: 1,
        approach: "Read the version from the header instead".into(),
        files_changed: vec!["src/header.py".into()],
        outcome: proto::FixOutcome::Success as i32,
        ..Default::default()
    })
    .await
    .unwrap();
    let unchanged = gotchas(&mut admin).await;
    assert_eq!(unchanged.len(), 1);
    assert!(unchanged[0].body.contains("Default the version to 1"), "{:?}", unchanged[0]);
    // ...its passing result makes it the newer verified fix: it supersedes
    // the older gotcha, which is kept and points at it.
    qa.record_task_result(crate::passed(PROJECT, "T-2")).await.unwrap();
    let both = gotchas(&mut admin).await;
    assert_eq!(both.len(), 2, "{both:#?}");
    let older = both.iter().find(|gotcha| gotcha.entry_id == first[0].entry_id).unwrap();
    let newer = both.iter().find(|gotcha| gotcha.entry_id != first[0].entry_id).unwrap();
    assert_eq!(older.status, proto::EntryStatus::Superseded as i32);
    assert_eq!(older.superseded_by, newer.entry_id);
    assert!(newer.body.contains("Read the version from the header"), "{newer:?}");
    assert_eq!(newer.trust, proto::Trust::Verified as i32);
    // (A person reads the fix's words; an agent, once a person approved them.)
    let mut admin_qa = QaLearningServiceClient::new(authed(&server, &admin_token).await);
    let pattern = admin_qa.list_patterns(proto::ListPatternsRequest { project: PROJECT.into(), ..Default::default() });
    let pattern = pattern.await.unwrap().into_inner().patterns.remove(0);
    assert_eq!(pattern.recommended_fix, "Read the version from the header instead");

    // Both replicas find the newer gotcha by its words; erase it.
    let words = "version header parser KeyError";
    let deadline = Instant::now() + Duration::from_secs(20);
    while !keys_found(&mut on_replica, words).await.contains(&newer.key) {
        assert!(Instant::now() < deadline, "the replica never indexed the gotcha");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let erased = admin
        .erase_entry(proto::EraseEntryRequest {
            entry_id: newer.entry_id.clone(),
            note: "the header fix broke older files".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!((erased.pattern_fixes_cleared, erased.fix_attempts_blocked, erased.entries_revived), (1, 1, 1));
    assert!(!keys_found(&mut admin, words).await.contains(&newer.key));
    while keys_found(&mut on_replica, words).await.contains(&newer.key) {
        assert!(Instant::now() < deadline, "the replica still finds the erased gotcha");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let pattern =
        qa.get_pattern(proto::GetPatternRequest { pattern_id: pattern.pattern_id.clone(), ..Default::default() });
    let pattern = pattern.await.unwrap().into_inner().pattern.unwrap();
    assert_eq!(pattern.recommended_fix, "", "the warning no longer repeats the erased fix");

    // The audit log holds the erasure, and its chains verify.
    let mut actions = ActionServiceClient::new(authed(&server, &admin_token).await);
    let found = actions
        .search_actions(proto::SearchActionsRequest {
            project: PROJECT.into(),
            action_types: vec!["erasure".into()],
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .actions;
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].action_id, erased.audit_action_id);
    let context = lore_proto::json::to_json(&prost_types::Value {
        kind: Some(prost_types::value::Kind::StructValue(found[0].context.clone().unwrap())),
    })
    .to_string();
    assert!(context.contains(&newer.entry_id) && !context.contains("Read the version"), "{context}");
    let chain = actions
        .verify_chain(proto::VerifyChainRequest { session_id: erased.audit_session_id.clone() })
        .await
        .unwrap()
        .into_inner();
    assert!(chain.intact && chain.checked >= 1, "{chain:?}");
    replica.stop().await;
}
