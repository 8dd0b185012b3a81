//! RemineProject over real gRPC and a real PostgreSQL: messages of one kind
//! that captures put into several patterns (two words vary, which the
//! online similarity does not allow) end in one pattern once Brain has
//! seen them all; the survivor keeps its id, later captures follow the
//! merge, other kinds stay apart, and a person's correction stands.

use lore_proto::v1 as proto;
use lore_proto::v1::qa_learning_service_client::QaLearningServiceClient;
use lore_server::testing::TestServer;
use tonic::Code;
use tonic::transport::Channel;
use uuid::Uuid;

const PROJECT: &str = "remine";
/// Users and hosts: the route (length and first words) differs by user,
/// so captures never compare two users' messages.
const PAIRS: [(&str, &str); 8] = [
    ("alpha", "north"),
    ("alpha", "south"),
    ("beta", "east"),
    ("beta", "west"),
    ("gamma", "north"),
    ("gamma", "east"),
    ("delta", "south"),
    ("delta", "west"),
];

fn failure(message: &str) -> proto::CaptureFailureRequest {
    proto::CaptureFailureRequest {
        failure_id: Uuid::now_v7().to_string(),
        project: PROJECT.into(),
        task: Some(proto::Task { task_id: format!("T-{}", Uuid::now_v7()), ..Default::default() }),
        error_messages: vec![message.into()],
        ..Default::default()
    }
}

async fn capture(qa: &mut QaLearningServiceClient<Channel>, message: &str) -> String {
    let captured = qa.capture_failure(failure(message)).await.unwrap().into_inner();
    captured.links[0].pattern_id.clone()
}

async fn live(qa: &mut QaLearningServiceClient<Channel>) -> Vec<proto::Pattern> {
    qa.list_patterns(proto::ListPatternsRequest { project: PROJECT.into(), ..Default::default() })
        .await
        .unwrap()
        .into_inner()
        .patterns
}

/// Why each of a pattern's occurrences joined it.
async fn reasons(qa: &mut QaLearningServiceClient<Channel>, pattern_id: &str) -> Vec<String> {
    let pattern = qa
        .get_pattern(proto::GetPatternRequest { pattern_id: pattern_id.to_owned(), occurrence_limit: 50 })
        .await
        .unwrap()
        .into_inner();
    pattern.occurrences.iter().map(|occurrence| occurrence.link.as_ref().unwrap().reason.clone()).collect()
}

#[tokio::test]
async fn brain_merges_what_captures_split_and_the_survivor_keeps_its_id() {
    let server = TestServer::start().await;
    let mut qa = QaLearningServiceClient::new(server.channel().await);
    let mut captured = Vec::new();
    for (user, host) in PAIRS {
        captured.push(capture(&mut qa, &format!("user {user} could not reach host {host} in time")).await);
    }
    let other = capture(&mut qa, "disk quota exceeded on the build volume").await;
    let before = live(&mut qa).await;
    assert!(before.len() > 2, "captures alone keep the kind apart: {before:#?}");
    assert!(before.iter().all(|pattern| pattern.last_change == "capture"), "{before:#?}");

    let done = qa
        .remine_project(proto::RemineProjectRequest { project: PROJECT.into(), window: 0 })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(done.occurrences as usize, captured.len() + 1);
    assert!(done.merges >= 1 && done.splits == 0, "{done:?}");

    let after = live(&mut qa).await;
    assert_eq!(after.len(), 2, "one pattern for the kind, one for the disk: {after:#?}");
    let kind = after.iter().find(|pattern| pattern.pattern_id != other).unwrap();
    assert!(captured.contains(&kind.pattern_id), "the survivor is one of the captured patterns");
    assert_eq!(kind.last_change, "re_mining", "who changed it last: {kind:?}");
    let untouched = after.iter().find(|pattern| pattern.pattern_id == other).unwrap();
    assert_eq!(untouched.last_change, "capture");
    assert_eq!(kind.occurrence_count as usize, captured.len());
    // The merged ones say where they went, with re-mining's reason.
    let merged = qa
        .get_pattern(proto::GetPatternRequest { pattern_id: captured[0].clone(), occurrence_limit: 0 })
        .await
        .unwrap()
        .into_inner();
    let merged = merged.pattern.unwrap();
    assert!(merged.pattern_id == kind.pattern_id || merged.merged_into == kind.pattern_id, "{merged:?}");
    // Why grouped: the occurrences that moved say re-mining moved them.
    let reasons = reasons(&mut qa, &kind.pattern_id).await;
    assert!(reasons.iter().any(|reason| reason.starts_with("re-mined: Brain groups them as")), "{reasons:?}");
    // A later capture of the kind follows the merge.
    let later = capture(&mut qa, "user alpha could not reach host west in time").await;
    assert_eq!(later, kind.pattern_id);

    // A second round finds nothing more to change.
    let again = qa
        .remine_project(proto::RemineProjectRequest { project: PROJECT.into(), window: 0 })
        .await
        .unwrap()
        .into_inner();
    assert_eq!((again.merges, again.splits), (0, 0), "{again:?}");

    // Bad input names its field.
    let bad = qa
        .remine_project(proto::RemineProjectRequest { project: "no spaces allowed".into(), window: 0 })
        .await
        .unwrap_err();
    assert_eq!(bad.code(), Code::InvalidArgument);
    assert!(bad.message().contains("project"), "{bad:?}");
}

#[tokio::test]
async fn a_pattern_a_person_split_is_left_as_they_left_it() {
    let server = TestServer::start().await;
    let mut qa = QaLearningServiceClient::new(server.channel().await);
    let first = capture(&mut qa, "cache miss for key north").await;
    for key in ["south", "east", "west"] {
        assert_eq!(capture(&mut qa, &format!("cache miss for key {key}")).await, first);
    }
    // A person says "west" is another failure.
    let occurrences = qa
        .get_pattern(proto::GetPatternRequest { pattern_id: first.clone(), occurrence_limit: 0 })
        .await
        .unwrap()
        .into_inner()
        .occurrences;
    let west =
        occurrences.iter().find(|occurrence| occurrence.link.as_ref().unwrap().message.ends_with("west")).unwrap();
    qa.split_pattern(proto::SplitPatternRequest {
        pattern_id: first.clone(),
        occurrence_ids: vec![west.occurrence_id.clone()],
        new_name: "cache miss in the west".into(),
        reason: "the west cache is another service".into(),
        split_id: Uuid::now_v7().to_string(),
    })
    .await
    .unwrap();
    let done = qa
        .remine_project(proto::RemineProjectRequest { project: PROJECT.into(), window: 0 })
        .await
        .unwrap()
        .into_inner();
    assert_eq!((done.merges, done.splits), (0, 0), "Brain would group them; the person's split stands: {done:?}");
    let patterns = live(&mut qa).await;
    assert_eq!(patterns.len(), 2);
    assert!(patterns.iter().all(|pattern| pattern.last_change == "person"), "{patterns:#?}");
}

/// A list of block ids whose length varies is one kind: captures keep one
/// pattern per length, re-mining merges them, and a later capture of any
/// length follows the merge. A message with words the others lack stays
/// apart.
#[tokio::test]
async fn one_kind_at_several_lengths_ends_in_one_pattern() {
    let server = TestServer::start().await;
    let mut qa = QaLearningServiceClient::new(server.channel().await);
    let mut by_length = std::collections::BTreeSet::new();
    for length in 1..=3 {
        for start in 0..3 {
            let list: Vec<String> = (0..length).map(|index| format!("blk_{length}{start}{index}")).collect();
            by_length.insert(capture(&mut qa, &format!("ask the datanode to delete {}", list.join(" "))).await);
        }
    }
    let apart = capture(&mut qa, "ask the datanode to delete blk_5 from its cache").await;
    assert_eq!(by_length.len(), 3, "captures keep each length apart: {by_length:?}");

    let done = qa
        .remine_project(proto::RemineProjectRequest { project: PROJECT.into(), window: 0 })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(done.merges, 2, "{done:?}");
    let after = live(&mut qa).await;
    assert_eq!(after.len(), 2, "one pattern for the lists, one for the cache: {after:#?}");
    let kind = after.iter().find(|pattern| pattern.pattern_id != apart).unwrap();
    assert_eq!(kind.occurrence_count, 9);
    let reasons = reasons(&mut qa, &kind.pattern_id).await;
    assert!(reasons.iter().any(|reason| reason.starts_with("re-mined: one kind at several lengths")), "{reasons:?}");
    for list in ["blk_7", "blk_7 blk_8", "blk_7 blk_8 blk_9"] {
        let later = capture(&mut qa, &format!("ask the datanode to delete {list}")).await;
        assert_eq!(later, kind.pattern_id, "{list}");
    }
}
