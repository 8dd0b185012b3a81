//! Tenancy in the store: a narrowed ProjectScope hides and refuses other
//! projects' rows in SQL, whatever the other filters say. (The auth issue
//! will hand each request its token's scope; these tests pin the store's
//! side of that contract.)

use chrono::Utc;
use lore_pgtest::TestDatabase;
use lore_store as store;
use lore_store::actions::Direction;
use lore_types::actions::query::ActionFilter;
use lore_types::actions::{NewAction, NewSession, Outcome, RejectionKind, SessionKind};
use lore_types::scope::ProjectScope;
use uuid::Uuid;

fn session(project: &str) -> NewSession {
    NewSession {
        session_id: Uuid::now_v7(),
        project: project.into(),
        agent_id: "agent-1".into(),
        supervisor_type: String::new(),
        kind: SessionKind::Work,
        metadata: serde_json::json!({}),
        started_at: Utc::now(),
        reopen: false,
    }
}

fn action(project: &str, session_id: Option<Uuid>) -> NewAction {
    NewAction {
        action_id: Uuid::now_v7(),
        occurred_at: chrono::DateTime::from_timestamp_micros(Utc::now().timestamp_micros()).unwrap(),
        project: project.into(),
        session_id,
        agent_id: "agent-1".into(),
        action_type: "commit".into(),
        category: String::new(),
        context: serde_json::json!({}),
        outcome: Outcome::Success,
        error: String::new(),
        duration_ms: 1,
        parent_action_id: None,
        epic_id: String::new(),
        issue_id: String::new(),
        redaction_count: 0,
        truncated: false,
    }
}

#[tokio::test]
async fn a_scope_of_project_a_can_neither_read_nor_write_project_b() {
    let database = TestDatabase::new().await.unwrap();
    let pool = &database.pool;
    let everything = ProjectScope::All;
    let only_a = ProjectScope::only(["a"]);

    let (session_b, _) = store::actions::sessions::start(pool, &everything, &session("b")).await.unwrap();
    store::actions::insert_batch(pool, &everything, &[action("b", Some(session_b.session_id))]).await.unwrap();

    // Reads: b's session and actions do not exist for a scope of a.
    let hidden = store::actions::sessions::get(pool, &only_a, session_b.session_id).await.unwrap_err();
    assert!(matches!(hidden, lore_server::Error::NotFound(_)), "{hidden:?}");
    let filter = ActionFilter { project: "b".into(), ..ActionFilter::default() };
    assert!(store::actions::page(pool, &only_a, &filter, None, Direction::Descending, 10).await.unwrap().is_empty());
    assert_eq!(
        store::actions::page(pool, &everything, &filter, None, Direction::Descending, 10).await.unwrap().len(),
        1
    );
    assert!(store::actions::recent_in_session(pool, &only_a, session_b.session_id, 10).await.unwrap().is_empty());
    assert!(store::actions::sessions::heartbeat(pool, &only_a, session_b.session_id).await.is_err());

    // Writes: into b directly, or into b's session while claiming a.
    let refused = store::actions::sessions::start(pool, &only_a, &session("b")).await.unwrap_err();
    assert!(matches!(refused, lore_server::Error::PermissionDenied(_)), "{refused:?}");
    let outcome = store::actions::insert_batch(
        pool,
        &only_a,
        &[action("b", None), action("a", Some(session_b.session_id)), action("a", None)],
    )
    .await
    .unwrap();
    assert_eq!(outcome.stored, 1);
    let kinds: Vec<RejectionKind> = outcome.rejected.iter().map(|rejection| rejection.kind).collect();
    assert_eq!(kinds, vec![RejectionKind::OutOfScope, RejectionKind::NotFound]);
    let count_b: i64 =
        sqlx::query_scalar("SELECT count(*) FROM actions WHERE project = 'b'").fetch_one(pool).await.unwrap();
    assert_eq!(count_b, 1, "nothing was written into b");
}

#[tokio::test]
async fn a_scope_of_project_a_sees_and_changes_no_knowledge_of_project_b() {
    use lore_domain::knowledge::KnowledgeBase;
    use lore_types::knowledge::{EntryFilter, EntryKind, EntryStatus, NewEntry, NewOccurrence};
    let database = TestDatabase::new().await.unwrap();
    let knowledge = KnowledgeBase::new(database.pool.clone(), None, Default::default());
    let only_a = ProjectScope::only(["a"]);
    let entry = |project: &str| NewEntry {
        entry_id: None,
        key: Some("PAT-1".into()),
        project: project.into(),
        kind: EntryKind::IssuePattern,
        title: "Secret of b".into(),
        category: String::new(),
        summary: String::new(),
        body: String::new(),
        tags: Vec::new(),
        status: EntryStatus::Active,
        severity: None,
        prevention_checklist: Vec::new(),
        solutions: Vec::new(),
        details: serde_json::json!({}),
        source_path: None,
        front_matter: None,
        document: None,
        symptoms: Vec::new(),
        root_causes: Vec::new(),
        usage_count: 0,
        last_used_at: None,
        origin: Default::default(),
        trust: lore_types::trust::Trust::Observed,
        cited_files: Vec::new(),
        supersedes: Vec::new(),
    };
    let (of_b, _) = knowledge.upsert(&ProjectScope::All, &entry("b")).await.unwrap();

    let refused = knowledge.upsert(&only_a, &entry("b")).await.unwrap_err();
    assert!(matches!(refused, lore_server::Error::PermissionDenied(_)), "{refused:?}");
    for result in [
        knowledge.get(&only_a, of_b.entry_id, 10).await.map(drop),
        knowledge.get_by_key(&only_a, "b", "PAT-1", 10).await.map(drop),
        knowledge.delete(&only_a, of_b.entry_id, true).await.map(drop),
        knowledge
            .record_occurrence(
                &only_a,
                &NewOccurrence {
                    occurrence_id: Uuid::now_v7(),
                    entry_id: of_b.entry_id,
                    session_id: None,
                    solution_id: None,
                    success: true,
                    resolution_minutes: 1.0,
                    occurred_at: Utc::now(),
                    note: String::new(),
                    found_via_search: false,
                },
            )
            .await
            .map(drop),
    ] {
        assert!(matches!(result, Err(lore_server::Error::NotFound(_))), "{result:?}");
    }
    let filter =
        EntryFilter { project: "b".into(), kinds: Vec::new(), category: None, status: EntryStatus::Active, tag: None };
    assert!(knowledge.list(&only_a, &filter, 10, None).await.unwrap().is_empty());
    let untouched = knowledge.get(&ProjectScope::All, of_b.entry_id, 10).await.unwrap();
    assert_eq!(untouched.entry.occurrence_count, 0);
}
