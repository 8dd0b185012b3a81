use chrono::TimeZone as _;
use serde_json::json;

use super::*;
use lore_types::actions::{Action, NewAction, Outcome};
use lore_types::knowledge::drafts::short_id;

/// Builds an epic's actions one minute apart from 09:00.
struct Log {
    actions: Vec<Action>,
    session: Uuid,
}

impl Log {
    fn new() -> Self {
        Self { actions: Vec::new(), session: Uuid::now_v7() }
    }

    fn push(&mut self, action_type: &str, category: &str, outcome: Outcome, error: &str, context: serde_json::Value) {
        let minute = self.actions.len() as i64;
        let occurred_at = Utc.with_ymd_and_hms(2026, 11, 20, 9, 0, 0).unwrap() + chrono::Duration::minutes(minute);
        self.actions.push(Action {
            action: NewAction {
                action_id: Uuid::now_v7(),
                occurred_at,
                project: "lore".into(),
                session_id: Some(self.session),
                agent_id: "agent-7".into(),
                action_type: action_type.into(),
                category: category.into(),
                context,
                outcome,
                error: error.into(),
                duration_ms: 30_000,
                parent_action_id: None,
                epic_id: "E-42".into(),
                issue_id: String::new(),
                redaction_count: 0,
                truncated: false,
            },
            received_at: occurred_at,
            chain_seq: None,
            prev_hash: None,
            chain_hash: Vec::new(),
        });
    }
}

fn epic() -> Log {
    let mut log = Log::new();
    log.push("plan", "", Outcome::Success, "", json!({"decision": "split the parser out of the handler"}));
    log.push("validate", "tests", Outcome::Failure, "assertion failed: left == right\nat src/parse.rs:10", json!({}));
    log.push("commit", "", Outcome::Success, "", json!({"message": "try: trim input"}));
    log.push("validate", "tests", Outcome::Failure, "assertion failed: left == right", json!({}));
    log.push("commit", "", Outcome::Success, "", json!({"message": "fix: handle empty input"}));
    log.push("validate", "tests", Outcome::Success, "", json!({}));
    log.push("deploy", "staging", Outcome::Failure, "timeout waiting for `rollout`", json!({}));
    log
}

#[test]
fn a_draft_says_what_failed_what_fixed_it_what_still_fails_and_the_decisions() {
    let log = epic();
    let draft = compose(&DraftSource::Epic("E-42".into()), &log.actions);
    assert_eq!(draft.title, "Epic E-42: `assertion failed: left == right`");
    assert_eq!(draft.category, "tests", "the most common category of the failures");
    assert_eq!(draft.tags, ["validate", "deploy"]);
    let body = &draft.body;
    let id = |index: usize| short_id(&log.actions[index].action.action_id);
    assert!(body.starts_with("# Epic E-42: `assertion failed: left == right`\n\n"), "{body}");
    assert!(
        body.contains(
            "Epic E-42: 7 actions by 1 agent over 1 session, 6m from 2026-11-20 09:00 to 2026-11-20 09:06 UTC. \
             3 failures, 1 of 2 failing kinds of action resolved."
        ),
        "{body}"
    );
    assert!(
        body.contains(&format!(
            "## What failed\n\n- 09:01 `validate` (tests): `assertion failed: left == right` [{}]",
            id(1)
        )),
        "{body}"
    );
    assert!(
        body.contains(&format!(
            "## What fixed it\n\n- `validate` (tests) failed at 09:01 and succeeded at 09:05 after 2 failures \
             (4 min, with 2 × `commit` in between): `fix: handle empty input` [{} -> {}]",
            id(1),
            id(5)
        )),
        "{body}"
    );
    assert!(
        body.contains(&format!(
            "## Still failing\n\n- `deploy` (staging) failed 1 time (last at 09:06): `timeout waiting for 'rollout'`, \
             with no later success [{}]",
            id(6)
        )),
        "{body}"
    );
    assert!(
        body.contains(&format!("## Decisions\n\n- 09:00 `plan`: `split the parser out of the handler` [{}]", id(0))),
        "{body}"
    );
    assert!(body.contains("## Time taken\n\n- 6m from the first action to the last; 3m of it inside actions.\n- 7 actions, 57% successful."), "{body}");
    for action in &log.actions {
        assert!(body.contains(&action.action.action_id.to_string()), "every action is linked");
    }
}

#[test]
fn a_draft_of_work_without_failures_says_so_and_parses_as_a_document() {
    let mut log = Log::new();
    log.push("commit", "docs", Outcome::Success, "", json!({"message": "docs"}));
    let draft = compose(&DraftSource::Session(log.session), &log.actions);
    assert_eq!(draft.title, format!("Session {}: 1 action without a failure", short_id(&log.session)));
    assert_eq!(draft.category, "docs");
    assert!(!draft.body.contains("## What failed"));
    let stored = Draft {
        origin: lore_types::trust::Origin::lore(),
        draft_id: Uuid::now_v7(),
        project: "lore".into(),
        source: DraftSource::Session(log.session),
        title: draft.title.clone(),
        category: draft.category,
        body: draft.body,
        tags: vec!["a".into(), "b: c".into()],
        status: DraftStatus::Approved,
        reviewer: Some("ada \"the reviewer\"".into()),
        review_note: String::new(),
        entry_id: None,
        created_at: Utc::now(),
        reviewed_at: None,
    };
    let markdown = published_markdown(&stored);
    let parsed = document::parse("x.md", &markdown).unwrap();
    assert_eq!(parsed.key, Some(entry_key(stored.draft_id)));
    assert_eq!(parsed.title, draft.title);
    assert_eq!(parsed.tags, ["a", "b: c"]);
    assert_eq!(parsed.front_matter["approved_by"], "ada \"the reviewer\"");
    assert_eq!(parsed.front_matter["session_id"], log.session.to_string());
}

#[test]
fn long_errors_are_cut_to_one_line() {
    let mut log = Log::new();
    log.push("build", "", Outcome::Failure, &format!("{}\nsecond line", "e".repeat(500)), json!({}));
    let draft = compose(&DraftSource::Epic("E-1".into()), &log.actions);
    assert!(draft.title.chars().count() < 140, "{}", draft.title);
    assert!(!draft.body.contains("second line"));
    assert!(draft.body.contains(&format!("`{}...`", "e".repeat(197))), "{}", draft.body);
}

#[test]
fn entry_keys_are_short_and_differ_between_drafts() {
    let (one, two) = (Uuid::now_v7(), Uuid::now_v7());
    assert_eq!(entry_key(one).len(), 16);
    assert_ne!(entry_key(one), entry_key(two));
}
