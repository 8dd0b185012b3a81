//! KnowledgeService entries, occurrences and applications over real gRPC
//! and a real PostgreSQL.

use chrono::Utc;
use lore_proto::v1 as proto;
use lore_server::testing::TestServer;
use prost_types::Timestamp;
use tonic::Code;
use uuid::Uuid;

type Client = crate::KnowledgeClient;

async fn fixture() -> (TestServer, Client) {
    let server = TestServer::start().await;
    let client = crate::knowledge_client(&server).await;
    (server, client)
}

fn pattern(key: &str, solutions: &[&str]) -> proto::Entry {
    proto::Entry {
        key: key.into(),
        project: "lore".into(),
        kind: proto::EntryKind::IssuePattern as i32,
        title: "RLS policy blocks INSERT".into(),
        category: "Database".into(),
        summary: "Row level security refuses inserts by the app role".into(),
        body: "The policy lacks a WITH CHECK clause.".into(),
        tags: vec!["Postgres".into(), "rls".into(), "postgres".into()],
        details: Some(proto::entry::Details::IssuePattern(proto::IssuePatternDetails {
            severity: proto::Severity::High as i32,
            solutions: solutions
                .iter()
                .map(|description| proto::Solution { description: (*description).into(), ..Default::default() })
                .collect(),
            prevention_checklist: vec!["Test policies with the app role".into()],
            ..Default::default()
        })),
        ..Default::default()
    }
}

async fn upsert(client: &mut Client, entry: proto::Entry) -> proto::UpsertEntryResponse {
    client.upsert_entry(proto::UpsertEntryRequest { entry: Some(entry) }).await.unwrap().into_inner()
}

fn pattern_details(entry: &proto::Entry) -> &proto::IssuePatternDetails {
    match entry.details.as_ref().unwrap() {
        proto::entry::Details::IssuePattern(details) => details,
        other => panic!("not an issue pattern: {other:?}"),
    }
}

fn timestamp_days_ago(days: i64) -> Timestamp {
    let at = Utc::now() - chrono::Duration::days(days);
    Timestamp { seconds: at.timestamp(), nanos: 0 }
}

#[tokio::test]
async fn an_entry_is_created_read_by_id_and_key_replaced_by_key_and_listed() {
    let (_server, mut client) = fixture().await;
    let created = upsert(&mut client, pattern("PAT-004", &["Add WITH CHECK", "Use a SECURITY DEFINER function"])).await;
    assert!(created.created);
    let entry = created.entry.unwrap();
    assert_eq!(entry.category, "database", "categories are lowercased");
    assert_eq!(entry.tags, ["postgres", "rls"], "tags are lowercased and deduplicated");
    let details = pattern_details(&entry);
    assert_eq!(details.severity, proto::Severity::High as i32);
    assert_eq!(details.solutions.len(), 2);

    let by_key = client
        .get_entry(proto::GetEntryRequest { project: "lore".into(), key: "PAT-004".into(), ..Default::default() })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(by_key.entry.as_ref().unwrap().entry_id, entry.entry_id);

    // The same key again replaces the entry; a solution sent back with its
    // id is kept, one left out is removed.
    let kept = details.solutions[0].clone();
    let mut replacement = pattern("PAT-004", &[]);
    replacement.title = "RLS policy blocks INSERT and UPDATE".into();
    if let Some(proto::entry::Details::IssuePattern(details)) = replacement.details.as_mut() {
        details.solutions =
            vec![kept.clone(), proto::Solution { description: "Grant the role".into(), ..Default::default() }];
    }
    let replaced = upsert(&mut client, replacement).await;
    assert!(!replaced.created);
    let replaced = replaced.entry.unwrap();
    assert_eq!(replaced.entry_id, entry.entry_id);
    assert_eq!(replaced.title, "RLS policy blocks INSERT and UPDATE");
    let solutions = &pattern_details(&replaced).solutions;
    assert_eq!(solutions.len(), 2);
    assert!(solutions.iter().any(|solution| solution.solution_id == kept.solution_id));

    upsert(&mut client, proto::Entry { key: "PAT-005".into(), title: "Flaky CI cache".into(), ..pattern("", &[]) })
        .await;
    let learning = proto::Entry {
        project: "lore".into(),
        kind: proto::EntryKind::Learning as i32,
        title: "Prefer COPY for bulk loads".into(),
        category: "database".into(),
        ..Default::default()
    };
    upsert(&mut client, learning).await;
    let page = |kinds: Vec<i32>, size: u32, cursor: String| proto::ListEntriesRequest {
        project: "lore".into(),
        kinds,
        page: Some(proto::PageRequest { page_size: size, cursor }),
        ..Default::default()
    };
    let patterns = client
        .list_entries(page(vec![proto::EntryKind::IssuePattern as i32], 10, String::new()))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(patterns.entries.len(), 2);
    let first = client.list_entries(page(vec![], 2, String::new())).await.unwrap().into_inner();
    assert_eq!(first.entries.len(), 2);
    assert!(!first.next_cursor.is_empty());
    let second = client.list_entries(page(vec![], 2, first.next_cursor)).await.unwrap().into_inner();
    assert_eq!(second.entries.len(), 1);
    let mut seen: Vec<String> =
        first.entries.iter().chain(&second.entries).map(|entry| entry.entry_id.clone()).collect();
    seen.sort();
    seen.dedup();
    assert_eq!(seen.len(), 3, "paging returns every entry once");
}

#[tokio::test]
async fn deleting_marks_obsolete_and_purging_removes() {
    let (_server, mut client) = fixture().await;
    let entry = upsert(&mut client, pattern("PAT-001", &["Fix"])).await.entry.unwrap();
    let deleted = client
        .delete_entry(proto::DeleteEntryRequest { entry_id: entry.entry_id.clone(), purge: false })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(deleted.entry.unwrap().status, proto::EntryStatus::Obsolete as i32);
    let active = client
        .list_entries(proto::ListEntriesRequest { project: "lore".into(), ..Default::default() })
        .await
        .unwrap()
        .into_inner();
    assert!(active.entries.is_empty(), "obsolete entries are not listed as active");
    client.delete_entry(proto::DeleteEntryRequest { entry_id: entry.entry_id.clone(), purge: true }).await.unwrap();
    let gone = client
        .get_entry(proto::GetEntryRequest { entry_id: entry.entry_id.clone(), ..Default::default() })
        .await
        .unwrap_err();
    assert_eq!(gone.code(), Code::NotFound);
}

#[tokio::test]
async fn occurrences_update_counts_solution_rates_averages_trend_and_replays_count_once() {
    let (_server, mut client) = fixture().await;
    let entry = upsert(&mut client, pattern("PAT-010", &["Add WITH CHECK", "Disable RLS"])).await.entry.unwrap();
    let solutions = pattern_details(&entry).solutions.clone();
    let (good, bad) = (&solutions[0], &solutions[1]);
    let record =
        |solution: &proto::Solution, success: bool, minutes: f64, days_ago: i64| proto::RecordOccurrenceRequest {
            occurrence_id: Uuid::now_v7().to_string(),
            entry_id: entry.entry_id.clone(),
            solution_id: solution.solution_id.clone(),
            success,
            resolution_minutes: minutes,
            occurred_at: Some(timestamp_days_ago(days_ago)),
            ..Default::default()
        };
    let first = record(good, true, 10.0, 0);
    client.record_occurrence(first.clone()).await.unwrap();
    client.record_occurrence(record(good, true, 20.0, 1)).await.unwrap();
    client.record_occurrence(record(good, false, 99.0, 2)).await.unwrap();
    let last = client.record_occurrence(record(bad, false, 5.0, 3)).await.unwrap().into_inner();
    let details = pattern_details(last.entry.as_ref().unwrap());
    assert_eq!(details.occurrence_count, 4);
    assert_eq!(details.trend, proto::Trend::Increasing as i32, "four this fortnight, none before");
    let good_after = details.solutions.iter().find(|solution| solution.solution_id == good.solution_id).unwrap();
    assert_eq!((good_after.times_applied, good_after.times_successful), (3, 2));
    assert!((good_after.success_rate - 2.0 / 3.0).abs() < 1e-9);
    assert!((good_after.avg_resolution_minutes - 15.0).abs() < 1e-9, "average over successes only");
    assert_eq!(details.solutions[0].solution_id, good.solution_id, "best success rate first");

    let replay = client.record_occurrence(first).await.unwrap().into_inner();
    assert!(replay.ack.unwrap().duplicate);
    assert_eq!(pattern_details(replay.entry.as_ref().unwrap()).occurrence_count, 4, "a replay counts once");

    // A solution of another entry is refused and changes nothing.
    let other = upsert(&mut client, pattern("PAT-011", &["Other"])).await.entry.unwrap();
    let foreign = pattern_details(&other).solutions[0].clone();
    let refused = client.record_occurrence(record(&foreign, true, 1.0, 0)).await.unwrap_err();
    assert_eq!(refused.code(), Code::InvalidArgument);
    assert!(refused.message().starts_with("solution_id:"), "{}", refused.message());
    let after = client
        .get_entry(proto::GetEntryRequest { entry_id: entry.entry_id.clone(), ..Default::default() })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(pattern_details(after.entry.as_ref().unwrap()).occurrence_count, 4, "the refused call rolled back");
}

#[tokio::test]
async fn a_pattern_seen_less_often_than_before_is_decreasing() {
    let (_server, mut client) = fixture().await;
    let entry = upsert(&mut client, pattern("PAT-020", &[])).await.entry.unwrap();
    let mut last = None;
    for days_ago in [15, 16, 18, 20, 22, 25, 2] {
        let request = proto::RecordOccurrenceRequest {
            entry_id: entry.entry_id.clone(),
            occurred_at: Some(timestamp_days_ago(days_ago)),
            ..Default::default()
        };
        last = Some(client.record_occurrence(request).await.unwrap().into_inner());
    }
    let details = pattern_details(last.as_ref().unwrap().entry.as_ref().unwrap()).clone();
    assert_eq!(details.trend, proto::Trend::Decreasing as i32, "1 in the last 14 days against 6 before");
}

#[tokio::test]
async fn applications_give_history_and_effectiveness() {
    let (_server, mut client) = fixture().await;
    let entry = upsert(&mut client, pattern("PAT-030", &["Add WITH CHECK"])).await.entry.unwrap();
    let solution_id = pattern_details(&entry).solutions[0].solution_id.clone();
    let session = Uuid::now_v7().to_string();
    for (success, minutes, found) in [(true, 12.0, true), (true, 8.0, false), (false, 30.0, true)] {
        let request = proto::RecordApplicationRequest {
            application_id: Uuid::now_v7().to_string(),
            entry_id: entry.entry_id.clone(),
            session_id: session.clone(),
            solution_id: solution_id.clone(),
            success,
            resolution_minutes: minutes,
            found_via_search: found,
            note: "applied".into(),
        };
        client.record_application(request).await.unwrap();
    }
    let report = client
        .get_entry(proto::GetEntryRequest { entry_id: entry.entry_id.clone(), history_limit: 2, ..Default::default() })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(report.history.len(), 2, "the history limit holds");
    assert!(!report.history[0].success, "newest first");
    let effectiveness = report.effectiveness.unwrap();
    assert_eq!((effectiveness.applications, effectiveness.successes), (3, 2));
    assert!((effectiveness.avg_resolution_minutes - 10.0).abs() < 1e-9);
    assert!((effectiveness.found_via_search_rate - 2.0 / 3.0).abs() < 1e-9);
    let solution = &pattern_details(report.entry.as_ref().unwrap()).solutions[0];
    assert_eq!((solution.times_applied, solution.times_successful), (3, 2));
}

#[tokio::test]
async fn bad_input_gets_a_clear_status_naming_the_field() {
    let (_server, mut client) = fixture().await;
    let cases: Vec<(proto::Entry, &str)> = vec![
        (proto::Entry { kind: 0, ..pattern("K", &[]) }, "entry.kind: required"),
        (proto::Entry { kind: 99, ..pattern("K", &[]) }, "entry.kind: unknown value 99"),
        (proto::Entry { title: String::new(), ..pattern("K", &[]) }, "entry.title: required"),
        (proto::Entry { title: "a\0b".into(), ..pattern("K", &[]) }, "entry.title: must not contain control"),
        (proto::Entry { body: "x\0y".into(), ..pattern("K", &[]) }, "entry.body: must not contain NUL"),
        (proto::Entry { body: "x".repeat(2 * 1024 * 1024), ..pattern("K", &[]) }, "entry.body: 2097152 bytes"),
        (proto::Entry { project: String::new(), ..pattern("K", &[]) }, "entry.project: required"),
        (proto::Entry { entry_id: "nope".into(), ..pattern("K", &[]) }, "entry.entry_id: \"nope\" is not a UUID"),
        (proto::Entry { tags: vec!["a\nb".into()], ..pattern("K", &[]) }, "entry.tags[0]: must not contain"),
        (
            proto::Entry { kind: proto::EntryKind::Learning as i32, ..pattern("K", &[]) },
            "entry.details: IssuePattern details on a Learning entry",
        ),
        (pattern("K", &[""]), "entry.issue_pattern.solutions[0].description: required"),
    ];
    for (entry, expected) in cases {
        let status = client.upsert_entry(proto::UpsertEntryRequest { entry: Some(entry) }).await.unwrap_err();
        assert_eq!(status.code(), Code::InvalidArgument, "{expected}: {status:?}");
        assert!(status.message().starts_with(expected), "{:?} does not start with {expected:?}", status.message());
    }
    let missing = client.upsert_entry(proto::UpsertEntryRequest { entry: None }).await.unwrap_err();
    assert_eq!(missing.message(), "entry: required");

    let entry = upsert(&mut client, pattern("PAT-040", &[])).await.entry.unwrap();
    let negative = proto::RecordOccurrenceRequest {
        entry_id: entry.entry_id.clone(),
        resolution_minutes: -1.0,
        ..Default::default()
    };
    let status = client.record_occurrence(negative).await.unwrap_err();
    assert!(status.message().starts_with("resolution_minutes:"), "{}", status.message());
    let nan = proto::RecordOccurrenceRequest {
        entry_id: entry.entry_id.clone(),
        resolution_minutes: f64::NAN,
        ..Default::default()
    };
    assert_eq!(client.record_occurrence(nan).await.unwrap_err().code(), Code::InvalidArgument);
    let no_session = proto::RecordApplicationRequest { entry_id: entry.entry_id.clone(), ..Default::default() };
    let status = client.record_application(no_session).await.unwrap_err();
    assert_eq!(status.message(), "session_id: required");
    let unknown = proto::GetEntryRequest { entry_id: Uuid::now_v7().to_string(), ..Default::default() };
    assert_eq!(client.get_entry(unknown).await.unwrap_err().code(), Code::NotFound);
    let nothing = client.get_entry(proto::GetEntryRequest::default()).await.unwrap_err();
    assert!(nothing.message().starts_with("entry_id: required"), "{}", nothing.message());
    let bad_kind = proto::ListEntriesRequest { project: "lore".into(), kinds: vec![42], ..Default::default() };
    let status = client.list_entries(bad_kind).await.unwrap_err();
    assert_eq!(status.message(), "kinds[0]: unknown value 42");
    let learning = proto::Entry { kind: proto::EntryKind::Learning as i32, details: None, ..pattern("PAT-040", &[]) };
    let occurrence_on_learning = upsert(&mut client, proto::Entry { key: "L-1".into(), ..learning }).await;
    let request = proto::RecordOccurrenceRequest {
        entry_id: occurrence_on_learning.entry.unwrap().entry_id,
        ..Default::default()
    };
    assert_eq!(client.record_occurrence(request).await.unwrap_err().code(), Code::FailedPrecondition);
}

#[tokio::test]
async fn ids_and_keys_of_other_entries_are_not_taken_over() {
    let (_server, mut client) = fixture().await;
    let first = upsert(&mut client, pattern("PAT-050", &[])).await.entry.unwrap();
    // An entry id of project "lore" cannot be replaced from project "other".
    let hijack = proto::Entry { entry_id: first.entry_id.clone(), project: "other".into(), ..pattern("X", &[]) };
    let status = client.upsert_entry(proto::UpsertEntryRequest { entry: Some(hijack) }).await.unwrap_err();
    assert_eq!(status.code(), Code::AlreadyExists);
    // A second entry cannot take the first one's key.
    let second = upsert(&mut client, pattern("PAT-051", &[])).await.entry.unwrap();
    let clash = proto::Entry { entry_id: second.entry_id.clone(), ..pattern("PAT-050", &[]) };
    let status = client.upsert_entry(proto::UpsertEntryRequest { entry: Some(clash) }).await.unwrap_err();
    assert_eq!(status.code(), Code::AlreadyExists);
    assert!(status.message().contains("PAT-050"), "{}", status.message());
    let unchanged = client
        .get_entry(proto::GetEntryRequest { entry_id: first.entry_id.clone(), ..Default::default() })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(unchanged.entry.unwrap().project, "lore");
}

#[tokio::test]
async fn the_success_rate_is_pooled_over_every_solution_and_the_best_solution_is_still_shown() {
    let (server, mut client) = fixture().await;
    let entry = upsert(&mut client, pattern("PAT-040", &["Add WITH CHECK", "Disable RLS"])).await.entry.unwrap();
    let solutions = pattern_details(&entry).solutions.clone();
    // The first solution worked 9 of 10 times, the second 1 of 10.
    for (solution, successes) in [(&solutions[0], 9), (&solutions[1], 1)] {
        for index in 0..10 {
            let request = proto::RecordOccurrenceRequest {
                entry_id: entry.entry_id.clone(),
                solution_id: solution.solution_id.clone(),
                success: index < successes,
                found_via_search: index % 2 == 0,
                ..Default::default()
            };
            client.record_occurrence(request).await.unwrap();
        }
    }
    lore_server::testing::embedded(server.pool()).await;
    let query = proto::SearchQuery { text: "RLS blocks INSERT".into(), limit: 1, ..Default::default() };
    let hit = client
        .search(proto::SearchRequest { project: "lore".into(), query: Some(query), ..Default::default() })
        .await
        .unwrap()
        .into_inner()
        .hits
        .remove(0);
    assert!((hit.parts.unwrap().success_rate - 0.5).abs() < 1e-9, "10 of 20: {:?}", hit.parts);
    let best = hit.best_solution.unwrap();
    assert_eq!((best.description.as_str(), best.times_successful), ("Add WITH CHECK", 9));

    // Whether each occurrence was found by searching is kept.
    let report = client
        .get_entry(proto::GetEntryRequest { entry_id: entry.entry_id.clone(), ..Default::default() })
        .await
        .unwrap()
        .into_inner();
    let effectiveness = report.effectiveness.unwrap();
    assert_eq!(effectiveness.occurrences, 20);
    assert!((effectiveness.occurrences_found_via_search_rate - 0.5).abs() < 1e-9, "{effectiveness:?}");
    assert_eq!(effectiveness.applications, 0, "occurrences are not applications");
}

#[tokio::test]
async fn symptoms_root_causes_and_earlier_use_are_kept_and_checked() {
    let (_server, mut client) = fixture().await;
    let used = Utc::now() - chrono::Duration::days(3);
    let mut entry = pattern("PAT-050", &[]);
    entry.symptoms = vec!["  permission denied for table orders ".into(), "permission denied for table orders".into()];
    entry.root_causes = vec!["The app role lost its grant in the last migration".into()];
    entry.usage_count = 7;
    entry.last_used_at = Some(Timestamp { seconds: used.timestamp(), nanos: 0 });
    let stored = upsert(&mut client, entry.clone()).await.entry.unwrap();
    assert_eq!(stored.symptoms, ["permission denied for table orders"], "trimmed, once");
    assert_eq!(stored.root_causes, entry.root_causes);
    assert_eq!((stored.usage_count, stored.last_used_at), (7, entry.last_used_at));
    for (change, message) in [
        (proto::Entry { symptoms: vec![String::new()], ..entry.clone() }, "entry.symptoms[0]: required"),
        (proto::Entry { symptoms: vec!["a\0b".into()], ..entry.clone() }, "entry.symptoms[0]: must not contain NUL"),
        (proto::Entry { symptoms: vec!["x".repeat(4097)], ..entry.clone() }, "entry.symptoms[0]: longer than 4096"),
        (proto::Entry { symptoms: vec!["x".into(); 101], ..entry.clone() }, "entry.symptoms: 101 items"),
        (proto::Entry { root_causes: vec![" ".into()], ..entry.clone() }, "entry.root_causes[0]: required"),
        (proto::Entry { usage_count: u64::MAX, ..entry.clone() }, "entry.usage_count:"),
        (
            proto::Entry { last_used_at: Some(Timestamp { seconds: 0, nanos: -1 }), ..entry.clone() },
            "entry.last_used_at:",
        ),
    ] {
        let status = client.upsert_entry(proto::UpsertEntryRequest { entry: Some(change) }).await.unwrap_err();
        assert_eq!(status.code(), Code::InvalidArgument, "{message}");
        assert!(status.message().starts_with(message), "{}", status.message());
    }
}
