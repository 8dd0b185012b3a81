//! The web console in a real headless Chromium (Debian's, driven by
//! Playwright for Python: tests/python/console_browser.py) against the real
//! server over a seeded database: sign-in, every page with no serious axe
//! violation, search, approving a draft, merging two patterns, a session
//! followed live, the export compared with SearchActions, and the access
//! rules (a reader, another project's token, a forged post, hostile text).
//! Screenshots of every page land in target/console-screenshots/.

use std::path::PathBuf;
use std::time::Duration;

use chrono::Utc;
use lore_e2e::{ServerOptions, ServerProcess, TestDatabase};
use lore_proto::auth::Bearer;
use lore_proto::v1 as proto;
use lore_proto::v1::action_service_client::ActionServiceClient;
use lore_proto::v1::knowledge_service_client::KnowledgeServiceClient;
use lore_proto::v1::qa_learning_service_client::QaLearningServiceClient;
use lore_server::auth::Role;
use lore_store::tokens::NewToken;
use serde_json::{Value, json};
use tonic::service::interceptor::InterceptedService;
use uuid::Uuid;

type Authed = InterceptedService<tonic::transport::Channel, Bearer>;

fn timestamp(at: chrono::DateTime<Utc>) -> prost_types::Timestamp {
    prost_types::Timestamp { seconds: at.timestamp(), nanos: 0 }
}

fn screenshots_dir() -> PathBuf {
    // tests/ is a member of the workspace: its target directory is the
    // workspace's.
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/console-screenshots")
}

async fn token(database: &TestDatabase, name: &str, role: Role, projects: Option<Vec<String>>) -> String {
    let token = NewToken { name: name.into(), role, projects, expires_at: None };
    lore_server::auth::create_token(&database.pool, &token).await.unwrap().1
}

async fn log(actions: &mut ActionServiceClient<Authed>, action: proto::Action) -> String {
    let id = action.action_id.clone();
    actions.log_action(proto::LogActionRequest { action: Some(action) }).await.unwrap();
    id
}

async fn start(actions: &mut ActionServiceClient<Authed>, project: &str, agent: &str) -> String {
    let request = proto::StartSessionRequest { project: project.into(), agent_id: agent.into(), ..Default::default() };
    actions.start_session(request).await.unwrap().into_inner().session.unwrap().session_id
}

/// An action of `session` in `project`, at `at`.
fn action(project: &str, session: &str, agent: &str, action_type: &str, at: chrono::DateTime<Utc>) -> proto::Action {
    proto::Action {
        action_id: Uuid::now_v7().to_string(),
        session_id: session.into(),
        project: project.into(),
        agent_id: agent.into(),
        action_type: action_type.into(),
        outcome: proto::Outcome::Success.into(),
        occurred_at: Some(timestamp(at)),
        ..Default::default()
    }
}

struct Seeded {
    session: String,
    hostile_action: String,
    entry: String,
    entry_title: String,
    drafts: [String; 2],
    patterns: [String; 2],
    /// An agent's verified fix, waiting for a person.
    fix: String,
    /// An agent's lesson, waiting for a person.
    lesson: String,
}

/// The words of the agent's lesson the browser approves.
const LESSON_FIX: &str = "Round each line of the cart to cents before summing the total";

/// An agent's lesson: its words wait in the review queue. Returns its id.
async fn seed_lesson(agent: Authed) -> String {
    let entry = proto::Entry {
        key: "cart-rounding".into(),
        project: "shop".into(),
        kind: proto::EntryKind::IssuePattern as i32,
        title: "Cart totals drift by a cent".into(),
        details: Some(proto::entry::Details::IssuePattern(proto::IssuePatternDetails {
            solutions: vec![proto::Solution { description: LESSON_FIX.into(), ..Default::default() }],
            ..Default::default()
        })),
        ..Default::default()
    };
    let stored = KnowledgeServiceClient::new(agent)
        .upsert_entry(proto::UpsertEntryRequest { entry: Some(entry) })
        .await
        .unwrap()
        .into_inner()
        .entry
        .unwrap();
    assert_eq!(stored.status, proto::EntryStatus::Active as i32, "the screen let a plain lesson through");
    stored.entry_id
}

/// An agent's fix of a failure, verified by its task's passing result: its
/// words wait in the review queue. Returns the attempt id.
async fn seed_fix(agent: Authed) -> String {
    let mut qa = QaLearningServiceClient::new(agent);
    let task = proto::Task { task_id: "T-fix".into(), title: "cart totals".into(), ..Default::default() };
    let captured = qa
        .capture_failure(proto::CaptureFailureRequest {
            failure_id: Uuid::new_v4().to_string(),
            project: "shop".into(),
            task: Some(task.clone()),
            error_messages: vec!["TypeError: unsupported operand type(s) for +: 'int' and 'str' in cart.total".into()],
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let attempt_id = Uuid::now_v7().to_string();
    qa.record_fix_attempt(proto::RecordFixAttemptRequest {
        attempt_id: attempt_id.clone(),
        failure_id: captured.ack.unwrap().id,
        attempt_number: 1,
        approach: "Cast the quantity to int before adding it to the total".into(),
        outcome: proto::FixOutcome::Success as i32,
        ..Default::default()
    })
    .await
    .unwrap();
    qa.record_task_result(proto::RecordTaskResultRequest {
        result_id: Uuid::now_v7().to_string(),
        project: "shop".into(),
        task: Some(task),
        verdict: proto::TaskVerdict::Passed as i32,
        ..Default::default()
    })
    .await
    .unwrap();
    attempt_id
}

/// A day of a shop's agent, a lesson, two drafts and two failure patterns,
/// and a bank project beside it.
/// Project `lab`, whose person split the agent's own module out of four
/// kinds of failure, re-mined: it is read literally, which its QA page
/// says.
async fn seed_literal(channel: Authed) {
    let mut qa = QaLearningServiceClient::new(channel);
    for kind in ["ModuleNotFoundError: No module named", "no such table:", "rm: cannot remove", "KeyError: setting"] {
        let mut pattern = String::new();
        for name in ["psycopg", "reproduce_app", "reproduce_app"] {
            let captured = qa
                .capture_failure(proto::CaptureFailureRequest {
                    failure_id: Uuid::new_v4().to_string(),
                    project: "lab".into(),
                    task: Some(proto::Task { task_id: format!("T-{kind}-{name}"), ..Default::default() }),
                    error_messages: vec![format!("{kind} '{name}'")],
                    ..Default::default()
                })
                .await
                .unwrap()
                .into_inner();
            pattern = captured.links[0].pattern_id.clone();
        }
        let occurrences = qa
            .get_pattern(proto::GetPatternRequest { pattern_id: pattern.clone(), occurrence_limit: 0 })
            .await
            .unwrap()
            .into_inner()
            .occurrences;
        let own = occurrences
            .iter()
            .filter(|occurrence| occurrence.link.as_ref().unwrap().message.ends_with("'reproduce_app'"))
            .map(|occurrence| occurrence.occurrence_id.clone())
            .collect();
        qa.split_pattern(proto::SplitPatternRequest {
            pattern_id: pattern,
            occurrence_ids: own,
            reason: "the agent's own module".into(),
            split_id: Uuid::now_v7().to_string(),
            ..Default::default()
        })
        .await
        .unwrap();
    }
    let remined =
        qa.remine_project(proto::RemineProjectRequest { project: "lab".into(), window: 0 }).await.unwrap().into_inner();
    assert!(remined.read_literally, "{remined:?}");
}

async fn seed(channel: Authed) -> Seeded {
    let mut actions = ActionServiceClient::new(channel.clone());
    let session = start(&mut actions, "shop", "builder").await;
    let now = Utc::now();
    let kinds = [
        ("plan", proto::Outcome::Success, ""),
        ("tool_call", proto::Outcome::Success, ""),
        ("validate", proto::Outcome::Failure, "3 tests failed in checkout"),
        ("commit", proto::Outcome::Success, ""),
        ("deploy", proto::Outcome::Blocked, "the migration lock is held"),
        ("deploy", proto::Outcome::Success, ""),
    ];
    let mut parent = None;
    for index in 0..36_i64 {
        let (action_type, outcome, error) = kinds[index as usize % kinds.len()];
        let id = log(
            &mut actions,
            proto::Action {
                category: "checkout".into(),
                outcome: outcome.into(),
                error: error.into(),
                epic_id: "EPIC-7".into(),
                parent_action_id: parent.clone().unwrap_or_default(),
                context: Some(lore_proto::json::to_struct(&json!({ "step": index, "file": "src/checkout.rs" }))),
                ..action("shop", &session, "builder", action_type, now - chrono::Duration::minutes(30 * (36 - index)))
            },
        )
        .await;
        parent = (index % 6 == 0).then_some(id);
    }
    // Attacker-controlled text, as an agent could log it.
    let hostile_action = log(
        &mut actions,
        proto::Action {
            category: "<b>bold</b>".into(),
            outcome: proto::Outcome::Failure.into(),
            error: "<script>window.__lore_xss = 1</script>".into(),
            context: Some(lore_proto::json::to_struct(&json!({
                "note": "<script>window.__lore_xss = 2</script>",
                "html": "<img src=x onerror=\"window.__lore_xss = 3\">",
            }))),
            ..action("shop", &session, "builder", "tool_call", now)
        },
    )
    .await;
    let bank = start(&mut actions, "bank", "teller").await;
    log(&mut actions, action("bank", &bank, "teller", "deploy", now)).await;

    let mut knowledge = KnowledgeServiceClient::new(channel.clone());
    let entry_title = "Deploy stuck on the migration lock".to_owned();
    let entry = knowledge
        .upsert_entry(proto::UpsertEntryRequest {
            entry: Some(proto::Entry {
                key: "PAT-LOCK".into(),
                kind: proto::EntryKind::IssuePattern as i32,
                project: "shop".into(),
                title: entry_title.clone(),
                category: "deploy".into(),
                summary: "A deploy waits forever when a previous migration still holds the lock.".into(),
                body: "Release the lock with `make unlock`, then deploy again.\n\n<script>alert(1)</script>".into(),
                details: Some(proto::entry::Details::IssuePattern(proto::IssuePatternDetails {
                    solutions: vec![proto::Solution {
                        description: "Run make unlock, then deploy again.".into(),
                        ..Default::default()
                    }],
                    ..Default::default()
                })),
                ..Default::default()
            }),
        })
        .await
        .unwrap()
        .into_inner()
        .entry
        .unwrap()
        .entry_id;
    let mut drafts = Vec::new();
    for title in ["Unlock before deploying", "Run the checkout tests first"] {
        let draft = knowledge
            .create_draft(proto::CreateDraftRequest {
                draft_id: Uuid::new_v4().to_string(),
                project: "shop".into(),
                session_id: session.clone(),
                proposal: Some(proto::DraftProposal {
                    title: title.into(),
                    problem: "The deploy was blocked.".into(),
                    solution: "Release the lock first.".into(),
                    category: "deploy".into(),
                    ..Default::default()
                }),
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner();
        drafts.push(draft.draft_id);
    }

    let mut qa = QaLearningServiceClient::new(channel.clone());
    let mut patterns = Vec::new();
    for message in [
        "ImportError: cannot import name 'Basket' from 'shop.cart' (src/shop/cart.py)",
        "KeyError: 'currency' in price_total while rendering the invoice template",
    ] {
        let mut pattern = String::new();
        for task in 0..2 {
            let captured = qa
                .capture_failure(proto::CaptureFailureRequest {
                    failure_id: Uuid::new_v4().to_string(),
                    project: "shop".into(),
                    task: Some(proto::Task {
                        task_id: format!("T-{}-{task}", patterns.len()),
                        title: "checkout work".into(),
                        ..Default::default()
                    }),
                    error_messages: vec![message.into()],
                    ..Default::default()
                })
                .await
                .unwrap()
                .into_inner();
            pattern = captured.links[0].pattern_id.clone();
        }
        patterns.push(pattern);
    }
    assert_ne!(patterns[0], patterns[1], "two different failures make two patterns");
    // One kind captured as several patterns (the user and host vary):
    // re-mining proposes merging them, since nothing the project's people
    // did shows it groups as they would (they merge only later); the
    // browser accepts it.
    for (user, host) in [("alpha", "north"), ("beta", "east"), ("gamma", "west"), ("delta", "south")] {
        for attempt in 0..2 {
            qa.capture_failure(proto::CaptureFailureRequest {
                failure_id: Uuid::new_v4().to_string(),
                project: "shop".into(),
                task: Some(proto::Task { task_id: format!("T-{user}-{attempt}"), ..Default::default() }),
                error_messages: vec![format!("user {user} could not reach host {host} in time")],
                ..Default::default()
            })
            .await
            .unwrap();
        }
    }
    let remined = qa
        .remine_project(proto::RemineProjectRequest { project: "shop".into(), window: 0 })
        .await
        .unwrap()
        .into_inner();
    assert!(!remined.automatic && remined.proposed >= 1, "{remined:?}");
    // An admin merged two services' patterns and two queues' patterns:
    // each proposes a mask; the browser accepts the first, and a reader
    // sees the second but may not decide it.
    for pair in [
        ["worker svc-billing lost its lease", "worker svc-search lost its lease"],
        ["queue alpha-x is full", "queue beta-y is full"],
    ] {
        let mut merged = Vec::new();
        for message in pair {
            let captured = qa
                .capture_failure(proto::CaptureFailureRequest {
                    failure_id: Uuid::new_v4().to_string(),
                    project: "shop".into(),
                    task: Some(proto::Task { task_id: format!("T-{message}"), ..Default::default() }),
                    error_messages: vec![message.into()],
                    ..Default::default()
                })
                .await
                .unwrap()
                .into_inner();
            merged.push(captured.links[0].pattern_id.clone());
        }
        qa.merge_patterns(proto::MergePatternsRequest {
            into_pattern_id: merged[0].clone(),
            pattern_ids: vec![merged[1].clone()],
            reason: "one kind, another name".into(),
        })
        .await
        .unwrap();
    }
    // A hook warned an agent at its call: the guards page lists it.
    let given = proto::RecordCallInjectionRequest {
        injection_id: Uuid::now_v7().to_string(),
        project: "shop".into(),
        session_id: session.clone(),
        kind: proto::InjectedKind::CallWarning as i32,
        shape: "pytest <arg>".into(),
        label: "ERROR: file or directory not found: <*>".into(),
        chars: 160,
        ..Default::default()
    };
    lore_proto::v1::agent_service_client::AgentServiceClient::new(channel).record_call_injection(given).await.unwrap();
    Seeded {
        session,
        hostile_action,
        entry,
        entry_title,
        drafts: [drafts[0].clone(), drafts[1].clone()],
        patterns: [patterns[0].clone(), patterns[1].clone()],
        fix: String::new(),
        lesson: String::new(),
    }
}

#[tokio::test]
async fn a_supervisor_uses_the_console_in_a_real_browser_and_its_access_rules_hold() {
    let database = TestDatabase::new().await.unwrap();
    let options = ServerOptions::with_database(&database.url).with_auth().env("LORE_WEB__LISTEN", "127.0.0.1:0");
    let server = ServerProcess::start(options).await.unwrap();
    let web = lore_e2e::eventually(|| async { server.logged_addr("web console serving") })
        .await
        .expect("the console logs its address");
    let admin = token(&database, "console-admin", Role::Admin, None).await;
    let reader = token(&database, "shop-reader", Role::Reader, Some(vec!["shop".into()])).await;
    let other = token(&database, "bank-agent", Role::Agent, Some(vec!["bank".into()])).await;
    let channel = InterceptedService::new(server.channel().await, Bearer::new(Some(&admin)).unwrap());
    let mut seeded = seed(channel.clone()).await;
    seed_literal(channel.clone()).await;
    let shop_agent = token(&database, "shop-agent", Role::Agent, Some(vec!["shop".into()])).await;
    seeded.fix =
        seed_fix(InterceptedService::new(server.channel().await, Bearer::new(Some(&shop_agent)).unwrap())).await;
    seeded.lesson =
        seed_lesson(InterceptedService::new(server.channel().await, Bearer::new(Some(&shop_agent)).unwrap())).await;

    let seed_json = json!({
        "url": format!("http://{web}"),
        "grpc": server.endpoint(),
        "lore": lore_e2e::workspace_binary("lore"),
        "tokens": { "admin": admin, "reader": reader, "other_project": other },
        "session": seeded.session,
        "hostile_action": seeded.hostile_action,
        "entry": seeded.entry,
        "entry_title": seeded.entry_title,
        "approved_title": "Unlock the migrations before deploying",
        "drafts": seeded.drafts,
        "patterns": seeded.patterns,
        "fix": seeded.fix,
        "lesson": seeded.lesson,
    });
    let shots = screenshots_dir();
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("python/console_browser.py");
    let axe = lore_e2e::default_cache_dir().join("npm/node_modules/axe-core/axe.min.js");
    let mut command = tokio::process::Command::new(lore_e2e::venv_python());
    command
        .arg(script)
        .env("CONSOLE_SEED", seed_json.to_string())
        .env("CONSOLE_SCREENSHOTS", &shots)
        .env("AXE_JS", &axe)
        .kill_on_drop(true);
    let output = tokio::time::timeout(Duration::from_secs(300), command.output())
        .await
        .expect("the browser test finishes in five minutes")
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "the browser test failed:\n{}\n{stdout}\nserver log:\n{}",
        String::from_utf8_lossy(&output.stderr),
        server.log()
    );
    let results: Value = serde_json::from_str(stdout.lines().last().unwrap_or_default()).unwrap();

    // The fix the browser approved is its pattern's, reviewed, in its words.
    let patterns = QaLearningServiceClient::new(channel.clone())
        .list_patterns(proto::ListPatternsRequest { project: "shop".into(), ..Default::default() })
        .await
        .unwrap()
        .into_inner()
        .patterns;
    let fixed = patterns.iter().find(|pattern| pattern.template.contains("unsupported operand")).expect("its pattern");
    assert_eq!(
        (fixed.fix_trust, fixed.recommended_fix.as_str()),
        (proto::Trust::Reviewed as i32, "Cast the quantity to int before adding it to the total"),
        "{results}"
    );

    // The lesson the browser approved is reviewed, by the console's admin,
    // in the words the agent wrote.
    let approved = KnowledgeServiceClient::new(channel.clone())
        .get_entry(proto::GetEntryRequest { entry_id: seeded.lesson.clone(), ..Default::default() })
        .await
        .unwrap()
        .into_inner()
        .entry
        .unwrap();
    assert_eq!(approved.trust, proto::Trust::Reviewed as i32, "{results}");
    assert_eq!(approved.review.map(|review| review.reviewed_by), Some("console-admin".to_owned()));
    let Some(proto::entry::Details::IssuePattern(details)) = approved.details else { panic!("an issue pattern") };
    assert_eq!(details.solutions[0].description, LESSON_FIX);

    // The download holds exactly what SearchActions answers for the filter.
    let mut actions = ActionServiceClient::new(channel);
    let mut expected = Vec::new();
    let mut cursor = String::new();
    loop {
        let page = actions
            .search_actions(proto::SearchActionsRequest {
                project: "shop".into(),
                outcomes: vec![proto::Outcome::Failure.into()],
                page: Some(proto::PageRequest { page_size: 500, cursor: cursor.clone() }),
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner();
        expected.extend(page.actions.into_iter().map(|action| action.action_id));
        if page.next_cursor.is_empty() {
            break;
        }
        cursor = page.next_cursor;
    }
    let mut exported: Vec<String> =
        results["export"]["ids"].as_array().unwrap().iter().map(|id| id.as_str().unwrap().to_owned()).collect();
    assert!(expected.len() >= 7, "seeded failures: {expected:?}");
    expected.sort();
    exported.sort();
    assert_eq!(exported, expected, "the console's export and SearchActions agree");
    assert_eq!(
        results["export"]["csv_lines"].as_u64(),
        Some(expected.len() as u64 + 1),
        "CSV: a header and a row each"
    );

    // What the browser did is in the database.
    let (title, status): (String, String) =
        sqlx::query_as("SELECT title, status FROM knowledge_drafts WHERE draft_id = $1::uuid")
            .bind(&seeded.drafts[0])
            .fetch_one(&database.pool)
            .await
            .unwrap();
    assert_eq!((title.as_str(), status.as_str()), ("Unlock the migrations before deploying", "approved"));
    let untouched: String = sqlx::query_scalar("SELECT status FROM knowledge_drafts WHERE draft_id = $1::uuid")
        .bind(&seeded.drafts[1])
        .fetch_one(&database.pool)
        .await
        .unwrap();
    assert_eq!(untouched, "pending", "neither the reader nor the forged posts changed the second draft");
    let (merged, into): (String, Option<Uuid>) =
        sqlx::query_as("SELECT status, merged_into FROM qa_patterns WHERE pattern_id = $1::uuid")
            .bind(&seeded.patterns[1])
            .fetch_one(&database.pool)
            .await
            .unwrap();
    assert_eq!((merged.as_str(), into.map(|id| id.to_string())), ("merged", Some(seeded.patterns[0].clone())));
    // The mask added and removed in the browser left none behind.
    let masks: i64 = sqlx::query_scalar("SELECT count(*) FROM qa_grouping_masks WHERE project = 'shop'")
        .fetch_one(&database.pool)
        .await
        .unwrap();
    assert_eq!(masks, 0, "{}", results["masks"]);
    let decided: Vec<(String, String, String)> = sqlx::query_as(
        "SELECT state, mask_name, decided_by FROM qa_mask_proposals WHERE project = 'shop' ORDER BY proposed_at",
    )
    .fetch_all(&database.pool)
    .await
    .unwrap();
    let expected = [("accepted", "services", "console-admin"), ("open", "", "")]
        .map(|(state, name, by)| (state.to_owned(), name.to_owned(), by.to_owned()));
    assert_eq!(decided, expected, "the browser accepted one proposal, and the reader decided nothing");
    let regrouped: Vec<(String, String)> = sqlx::query_as(
        "SELECT state, decided_by FROM qa_regrouping_proposals
         WHERE project = 'shop' AND template = 'user <*> could not reach host <*> in time'",
    )
    .fetch_all(&database.pool)
    .await
    .unwrap();
    assert_eq!(
        regrouped,
        [("accepted".to_owned(), "console-admin".to_owned())],
        "the browser accepted the proposed merge: {}",
        results["regroupings"]
    );
    let users: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM qa_patterns WHERE project = 'shop' AND template LIKE 'user % could not reach host %'
             AND status <> 'merged'",
    )
    .fetch_one(&database.pool)
    .await
    .unwrap();
    assert_eq!(users, 1, "one pattern for the kind after the merge");
    // The guard set from the warning at the call was removed again; the
    // switch the browser turned on stays on.
    let guards: i64 = sqlx::query_scalar("SELECT count(*) FROM qa_guards WHERE project = 'shop'")
        .fetch_one(&database.pool)
        .await
        .unwrap();
    assert_eq!(guards, 0, "{}", results["guards"]);
    let on: bool = sqlx::query_scalar("SELECT enabled FROM qa_guard_switches WHERE project = 'shop'")
        .fetch_one(&database.pool)
        .await
        .unwrap();
    assert!(on, "{}", results["guards"]);
    // The lesson erased from its page is gone, and the audit log says so.
    let left: i64 = sqlx::query_scalar("SELECT count(*) FROM knowledge_entries WHERE entry_id = $1::uuid")
        .bind(&seeded.entry)
        .fetch_one(&database.pool)
        .await
        .unwrap();
    assert_eq!(left, 0, "{}", results["erased"]);
    let logged: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM actions WHERE action_type = 'erasure' AND context->>'entry_id' = $1 AND context->>'by' = 'console-admin'",
    )
    .bind(&seeded.entry)
    .fetch_one(&database.pool)
    .await
    .unwrap();
    assert_eq!(logged, 1, "the erasure is in the audit log");
    let live = results["live_seconds"].as_f64().unwrap();
    assert!(live < 2.0, "the live action took {live:.2} s to show");
    for page in [
        "fleet",
        "activity",
        "action",
        "session",
        "knowledge",
        "entry",
        "drafts",
        "qa",
        "masks",
        "guards",
        "pattern",
        "promotions",
        "fixes",
        "lessons",
        "quarantine",
        "injected",
        "session-injections",
        "reports",
    ] {
        assert!(shots.join(format!("{page}.png")).is_file(), "no screenshot of {page}");
    }
}
