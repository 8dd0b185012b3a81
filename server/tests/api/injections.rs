//! The injection ledger over real gRPC with auth on: every briefing and
//! every read of a session is listed with each item it gave (size, trust,
//! why) and each it withheld (stale, already given, over the session's
//! budget); stale items are those whose cited files the hook says are gone.

use lore_proto::v1 as proto;
use lore_proto::v1::agent_service_client::AgentServiceClient;
use lore_proto::v1::knowledge_service_client::KnowledgeServiceClient;
use lore_server::auth::Role;
use lore_server::testing::TestServer;
use tonic::Code;
use uuid::Uuid;

use crate::auth::{Authed, authed, token};

const PROJECT: &str = "ledger";

struct Clients {
    knowledge: KnowledgeServiceClient<Authed>,
    agent: AgentServiceClient<Authed>,
}

async fn clients(server: &TestServer, token: &str) -> Clients {
    Clients {
        knowledge: KnowledgeServiceClient::new(authed(server, token).await),
        agent: AgentServiceClient::new(authed(server, token).await),
    }
}

async fn server(session_budget_chars: usize) -> TestServer {
    let mut config = TestServer::config();
    config.auth.enabled = true;
    config.briefing.session_budget_chars = session_budget_chars;
    TestServer::start_with(config).await
}

fn lesson(key: &str, title: &str, cited: &[&str]) -> proto::UpsertEntryRequest {
    proto::UpsertEntryRequest {
        entry: Some(proto::Entry {
            key: key.into(),
            project: PROJECT.into(),
            kind: proto::EntryKind::IssuePattern as i32,
            title: title.into(),
            summary: format!("{title}: what went wrong and how it was fixed."),
            cited_files: cited.iter().map(|path| (*path).to_owned()).collect(),
            details: Some(proto::entry::Details::IssuePattern(proto::IssuePatternDetails {
                solutions: vec![proto::Solution {
                    description: "Check the divisor before dividing.".into(),
                    ..Default::default()
                }],
                ..Default::default()
            })),
            ..Default::default()
        }),
    }
}

fn brief(session: Uuid, title: &str, surface: proto::InjectionSurface, missing: &[&str]) -> proto::BriefRequest {
    proto::BriefRequest {
        project: PROJECT.into(),
        agent_id: "claude-ledger".into(),
        session_id: session.to_string(),
        task: Some(proto::BriefTask { title: title.into(), ..Default::default() }),
        omit_given: surface == proto::InjectionSurface::Prompt,
        omit_last_session: surface == proto::InjectionSurface::Prompt,
        surface: surface as i32,
        missing_files: missing.iter().map(|path| (*path).to_owned()).collect(),
        ..Default::default()
    }
}

async fn ledger(agent: &mut AgentServiceClient<Authed>, session: Uuid) -> proto::ListInjectionsResponse {
    agent
        .list_injections(proto::ListInjectionsRequest {
            project: PROJECT.into(),
            session_id: session.to_string(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
}

fn item<'a>(injection: &'a proto::Injection, item_id: &str) -> Option<&'a proto::InjectedItem> {
    injection.items.iter().find(|item| item.item_id == item_id)
}

const SHOWN: i32 = proto::Withheld::Unspecified as i32;

#[tokio::test]
async fn every_briefing_and_read_of_a_session_is_listed_with_what_it_gave_and_withheld() {
    let server = server(40_000).await;
    let admin_token = token(&server, "ops", Role::Admin, None).await;
    let agent_token = token(&server, "vm-3", Role::Agent, Some(&[PROJECT])).await;
    let mut admin = clients(&server, &admin_token).await;
    let mut agent = clients(&server, &agent_token).await;

    let entry_of = |response: tonic::Response<proto::UpsertEntryResponse>| response.into_inner().entry.unwrap();
    let stale = entry_of(
        admin
            .knowledge
            .upsert_entry(lesson("LED-1", "Division by zero in calc divide of the old module", &["src/calc_old.py"]))
            .await
            .unwrap(),
    );
    let current = entry_of(
        admin
            .knowledge
            .upsert_entry(lesson("LED-2", "Division by zero in calc divide", &["src/calc.py"]))
            .await
            .unwrap(),
    );
    assert_eq!(stale.cited_files, vec!["src/calc_old.py".to_owned()]);

    // The hook asks which files the project's items cite.
    let cited = agent
        .agent
        .list_cited_files(proto::ListCitedFilesRequest { project: PROJECT.into() })
        .await
        .unwrap()
        .into_inner()
        .paths;
    assert!(cited.contains(&"src/calc_old.py".to_owned()) && cited.contains(&"src/calc.py".to_owned()), "{cited:?}");

    // Session start in a checkout where the old module is gone: its lesson
    // is left out as stale, the other shown.
    let session = Uuid::now_v7();
    let title = "Fix the division by zero in calc divide";
    let first = agent
        .agent
        .brief(brief(session, title, proto::InjectionSurface::SessionStart, &["src/calc_old.py"]))
        .await
        .unwrap()
        .into_inner();
    let shown: Vec<&str> = first.lessons.iter().map(|lesson| lesson.key.as_str()).collect();
    assert!(shown.contains(&"LED-2") && !shown.contains(&"LED-1"), "{shown:?}");
    assert_eq!(first.omitted_as_stale, 1);
    assert!(!crate::unmarked(&first.markdown).contains("old module"), "{}", first.markdown);
    assert_eq!(first.session_chars_before, 0);

    // The same lesson in a checkout that still has the file is shown.
    let elsewhere = agent
        .agent
        .brief(brief(Uuid::now_v7(), title, proto::InjectionSurface::SessionStart, &[]))
        .await
        .unwrap()
        .into_inner();
    assert!(elsewhere.lessons.iter().any(|lesson| lesson.key == "LED-1"), "{elsewhere:?}");

    let listed = ledger(&mut agent.agent, session).await;
    assert_eq!(listed.injections.len(), 1);
    let injection = &listed.injections[0];
    assert_eq!(injection.injection_id, first.briefing_id);
    assert_eq!(injection.surface, proto::InjectionSurface::SessionStart as i32);
    assert_eq!(injection.agent_id, "claude-ledger");
    assert_eq!(injection.chars as usize, first.markdown.chars().count());
    let withheld = item(injection, &stale.entry_id).expect("the stale lesson is in the ledger");
    assert_eq!(withheld.withheld, proto::Withheld::Stale as i32);
    assert!(withheld.withheld_reason.contains("gone"), "{withheld:?}");
    let given = item(injection, &current.entry_id).expect("the lesson shown");
    assert_eq!(given.withheld, SHOWN);
    assert_eq!(given.trust, proto::Trust::Reviewed as i32);
    assert!(given.chars > 0 && given.tokens == given.chars.div_ceil(4), "{given:?}");
    assert!(given.score_parts.contains_key("similarity") && given.why.contains("shares"), "{given:?}");

    // Reads an agent makes in the session (MCP search_lessons, get_lesson)
    // are injections too.
    agent
        .knowledge
        .search(proto::SearchRequest {
            project: PROJECT.into(),
            query: Some(proto::SearchQuery { text: "division by zero".into(), limit: 5, ..Default::default() }),
            session_id: session.to_string(),
        })
        .await
        .unwrap();
    agent
        .knowledge
        .get_entry(proto::GetEntryRequest {
            project: PROJECT.into(),
            key: "LED-2".into(),
            session_id: session.to_string(),
            ..Default::default()
        })
        .await
        .unwrap();
    // A read without a session gives nothing to a known agent: not listed.
    agent
        .knowledge
        .get_entry(proto::GetEntryRequest { project: PROJECT.into(), key: "LED-1".into(), ..Default::default() })
        .await
        .unwrap();

    // The next prompt's briefing leaves out what the session was given.
    let prompt = agent
        .agent
        .brief(brief(session, title, proto::InjectionSurface::Prompt, &["src/calc_old.py"]))
        .await
        .unwrap()
        .into_inner();
    assert!(prompt.lessons.iter().all(|lesson| lesson.key != "LED-2"), "{prompt:?}");
    assert!(prompt.omitted_as_given >= 1);

    let listed = ledger(&mut agent.agent, session).await;
    let surfaces: Vec<i32> = listed.injections.iter().map(|injection| injection.surface).collect();
    assert_eq!(
        surfaces,
        [
            proto::InjectionSurface::Prompt,
            proto::InjectionSurface::GetEntry,
            proto::InjectionSurface::Search,
            proto::InjectionSurface::SessionStart
        ]
        .map(|surface| surface as i32),
        "newest first"
    );
    let again = item(&listed.injections[0], &current.entry_id).expect("the given lesson is listed as withheld");
    assert_eq!(again.withheld, proto::Withheld::AlreadyGiven as i32);
    let before: u64 = listed.injections[1..].iter().map(|injection| u64::from(injection.chars)).sum();
    assert_eq!(prompt.session_chars_before, before, "what the session was given before the prompt");
    let totals = listed.totals.unwrap();
    assert_eq!(totals.injections, 4);
    assert_eq!(totals.chars, listed.injections.iter().map(|injection| u64::from(injection.chars)).sum::<u64>());
    assert!(totals.items_withheld >= 2 && totals.items_shown >= 3, "{totals:?}");

    // Filters: by agent, by time; paging.
    let none = agent
        .agent
        .list_injections(proto::ListInjectionsRequest {
            project: PROJECT.into(),
            agent_id: "someone-else".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert!(none.injections.is_empty());
    let page = agent
        .agent
        .list_injections(proto::ListInjectionsRequest {
            project: PROJECT.into(),
            session_id: session.to_string(),
            page: Some(proto::PageRequest { page_size: 3, cursor: String::new() }),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(page.injections.len(), 3);
    let rest = agent
        .agent
        .list_injections(proto::ListInjectionsRequest {
            project: PROJECT.into(),
            session_id: session.to_string(),
            page: Some(proto::PageRequest { page_size: 3, cursor: page.next_cursor.clone() }),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(rest.injections.len(), 1);
    assert_eq!(rest.injections[0].surface, proto::InjectionSurface::SessionStart as i32);

    // Bad input names its field; another project's token is refused.
    let bad = agent
        .agent
        .list_injections(proto::ListInjectionsRequest {
            project: PROJECT.into(),
            session_id: "nope".into(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(bad.code(), Code::InvalidArgument);
    assert!(bad.message().starts_with("session_id"), "{bad:?}");
    let mut resume = brief(session, title, proto::InjectionSurface::Resume, &[]);
    let bad = agent.agent.brief(resume.clone()).await.unwrap_err();
    assert!(bad.message().starts_with("surface"), "{bad:?}");
    resume.surface = proto::InjectionSurface::Prompt as i32;
    resume.missing_files = (0..5_001).map(|index| format!("src/{index}.py")).collect();
    let bad = agent.agent.brief(resume).await.unwrap_err();
    assert!(bad.message().starts_with("missing_files"), "{bad:?}");
    let outsider = token(&server, "vm-9", Role::Agent, Some(&["elsewhere"])).await;
    let refused = AgentServiceClient::new(authed(&server, &outsider).await)
        .list_injections(proto::ListInjectionsRequest { project: PROJECT.into(), ..Default::default() })
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Code::PermissionDenied);
}

#[tokio::test]
async fn past_the_session_budget_only_new_trusted_and_highly_relevant_items_are_shown() {
    let server = server(1_000).await;
    let admin_token = token(&server, "ops", Role::Admin, None).await;
    let agent_token = token(&server, "vm-4", Role::Agent, Some(&[PROJECT])).await;
    let mut admin = clients(&server, &admin_token).await;
    let mut agent = clients(&server, &agent_token).await;
    // Long titles: a few of them fill the session's budget, as briefings
    // of one line an item would not otherwise.
    for index in 0..6 {
        let title = format!(
            "Division by zero in calc divide, case {index}: the divisor comes from the parsed form field and \
             is empty when the user leaves it blank, so the handler divides by zero and returns a 500"
        );
        admin.knowledge.upsert_entry(lesson(&format!("DIV-{index}"), &title, &[])).await.unwrap();
    }
    agent.knowledge.upsert_entry(lesson("AG-1", "Storage client uploads are flaky", &[])).await.unwrap();
    admin.knowledge.upsert_entry(lesson("LOW-1", "Storage client uploads are flaky", &[])).await.unwrap();
    // Ranked by both signals, not by whichever entry the embedder reached
    // first: a fresh entry has only its words, and is never "high" alone.
    lore_server::testing::embedded(server.pool()).await;

    let session = Uuid::now_v7();
    let first = agent
        .agent
        .brief(brief(session, "Fix the division by zero in calc divide", proto::InjectionSurface::SessionStart, &[]))
        .await
        .unwrap()
        .into_inner();
    assert!(first.markdown.chars().count() <= 1_000, "the session's budget caps the first briefing too");
    assert!(!first.lessons.is_empty());

    // Spent: a reviewed lesson written since, that matches the task
    // closely, still gets through; an agent's (observed) lesson never does,
    // budget or not: it waits for a person.
    admin
        .knowledge
        .upsert_entry(lesson("REV-1", "Flaky upload retries in the storage client time out", &[]))
        .await
        .unwrap();
    lore_server::testing::embedded(server.pool()).await;
    let second = agent
        .agent
        .brief(brief(
            session,
            "Flaky upload retries in the storage client time out",
            proto::InjectionSurface::Prompt,
            &[],
        ))
        .await
        .unwrap()
        .into_inner();
    let shown: Vec<&str> = second.lessons.iter().map(|lesson| lesson.key.as_str()).collect();
    assert!(!shown.contains(&"AG-1"), "{shown:?}");
    assert!(shown.contains(&"REV-1"), "{second:?}");
    assert!(second.omitted_for_session_budget >= 1, "{second:?}");
    let listed = ledger(&mut agent.agent, session).await;
    let withheld: Vec<&proto::InjectedItem> = listed.injections[0]
        .items
        .iter()
        .filter(|item| item.withheld == proto::Withheld::SessionBudget as i32)
        .collect();
    assert!(withheld.iter().any(|item| item.label == "LOW-1"), "{withheld:?}");
    assert!(withheld.iter().all(|item| item.withheld_reason.contains("budget")), "{withheld:?}");
    let unreviewed = listed.injections[0].items.iter().find(|item| item.label == "AG-1").expect("AG-1 considered");
    assert_eq!(unreviewed.withheld, proto::Withheld::Unreviewed as i32, "{unreviewed:?}");
}
