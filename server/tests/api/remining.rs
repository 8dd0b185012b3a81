//! RemineProject over real gRPC and a real PostgreSQL: messages of one kind
//! that captures put into several patterns (two words vary, which the
//! online similarity does not allow) end in one pattern once Brain has
//! seen them all, by itself only where the project's people's corrections
//! support re-mining, and as a proposal a person accepts elsewhere; the
//! survivor keeps its id, later captures follow the merge, other kinds
//! stay apart, and a person's correction stands.

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

async fn remine(qa: &mut QaLearningServiceClient<Channel>) -> proto::RemineProjectResponse {
    qa.remine_project(proto::RemineProjectRequest { project: PROJECT.into(), window: 0 }).await.unwrap().into_inner()
}

async fn open_proposals(qa: &mut QaLearningServiceClient<Channel>) -> Vec<proto::RegroupingProposal> {
    let request = proto::ListRegroupingProposalsRequest { project: PROJECT.into(), include_decided: false };
    qa.list_regrouping_proposals(request).await.unwrap().into_inner().proposals
}

async fn decide(
    qa: &mut QaLearningServiceClient<Channel>,
    proposal: &proto::RegroupingProposal,
    decision: proto::RegroupingDecision,
) -> Result<proto::DecideRegroupingProposalResponse, tonic::Status> {
    let request = proto::DecideRegroupingProposalRequest {
        project: PROJECT.into(),
        proposal_id: proposal.proposal_id.clone(),
        decision: decision.into(),
    };
    qa.decide_regrouping_proposal(request).await.map(tonic::Response::into_inner)
}

/// Every user-host message captured, then the disk one apart.
async fn capture_pairs(qa: &mut QaLearningServiceClient<Channel>) -> (Vec<String>, String) {
    let mut captured = Vec::new();
    for (user, host) in PAIRS {
        captured.push(capture(qa, &format!("user {user} could not reach host {host} in time")).await);
    }
    (captured, capture(qa, "disk quota exceeded on the build volume").await)
}

#[tokio::test]
async fn without_peoples_corrections_brains_merge_waits_for_a_person_and_accepted_keeps_the_survivors_id() {
    let server = TestServer::start().await;
    let mut qa = QaLearningServiceClient::new(server.channel().await);
    let (captured, other) = capture_pairs(&mut qa).await;
    let before = live(&mut qa).await;
    assert!(before.len() > 2, "captures alone keep the kind apart: {before:#?}");
    assert!(before.iter().all(|pattern| pattern.last_change == "capture"), "{before:#?}");

    // No person has merged or split here: nothing shows the criterion
    // groups this project as its people would, so the merge is proposed.
    let done = remine(&mut qa).await;
    assert_eq!(done.occurrences as usize, captured.len() + 1);
    assert!(!done.automatic, "{done:?}");
    assert_eq!((done.merges, done.splits, done.corrected_pairs), (0, 0, 0.0), "{done:?}");
    assert_eq!(done.proposed, 1, "{done:?}");
    assert_eq!(live(&mut qa).await, before, "the groups stay as captured");
    let proposals = open_proposals(&mut qa).await;
    assert_eq!(proposals.len(), 1, "{proposals:#?}");
    let proposal = &proposals[0];
    assert_eq!(proposal.kind, "merge");
    assert_eq!(proposal.template, "user <*> could not reach host <*> in time");
    assert_eq!(proposal.pattern_ids.len(), before.len() - 1, "every pattern of the kind: {proposal:?}");
    assert!(!proposal.pattern_ids.contains(&other));
    // Another round proposes the same move once, not twice.
    assert_eq!(remine(&mut qa).await.proposed, 1);
    let proposal = open_proposals(&mut qa).await.remove(0);

    let decided = decide(&mut qa, &proposal, proto::RegroupingDecision::Accept).await.unwrap();
    assert_eq!(decided.proposal.as_ref().unwrap().state, "accepted");
    assert_eq!(decided.made.unwrap().merges, 1);
    let after = live(&mut qa).await;
    assert_eq!(after.len(), 2, "one pattern for the kind, one for the disk: {after:#?}");
    let kind = after.iter().find(|pattern| pattern.pattern_id != other).unwrap();
    assert!(captured.contains(&kind.pattern_id), "the survivor is one of the captured patterns");
    assert_eq!(kind.last_change, "person", "the accepted move is the person's: {kind:?}");
    assert_eq!(kind.occurrence_count as usize, captured.len());
    let untouched = after.iter().find(|pattern| pattern.pattern_id == other).unwrap();
    assert_eq!(untouched.last_change, "capture");
    // A later capture of the kind follows the merge.
    let later = capture(&mut qa, "user alpha could not reach host west in time").await;
    assert_eq!(later, kind.pattern_id);
    // A decided proposal is decided once.
    let again = decide(&mut qa, &proposal, proto::RegroupingDecision::Reject).await.unwrap_err();
    assert_eq!(again.code(), Code::FailedPrecondition, "{again:?}");
    assert!(again.message().contains("already accepted"), "{again:?}");

    // The accepted merge is now a person's correction: re-mining keeps it
    // and finds nothing more to change.
    let done = remine(&mut qa).await;
    assert_eq!((done.merges, done.splits, done.proposed), (0, 0, 0), "{done:?}");
    assert!(done.corrected_pairs > 0.0 && done.automatic, "{done:?}");

    // Bad input names its field.
    let bad = qa
        .remine_project(proto::RemineProjectRequest { project: "no spaces allowed".into(), window: 0 })
        .await
        .unwrap_err();
    assert_eq!(bad.code(), Code::InvalidArgument);
    assert!(bad.message().contains("project"), "{bad:?}");
    let unspecified = decide(&mut qa, &proposal, proto::RegroupingDecision::Unspecified).await.unwrap_err();
    assert_eq!(unspecified.code(), Code::InvalidArgument);
    assert!(unspecified.message().contains("decision"), "{unspecified:?}");
}

#[tokio::test]
async fn where_people_merged_as_re_mining_would_it_regroups_by_itself() {
    let server = TestServer::start().await;
    let mut qa = QaLearningServiceClient::new(server.channel().await);
    let (captured, other) = capture_pairs(&mut qa).await;
    // A person merges two users' patterns, as Brain would.
    let users: Vec<String> = {
        let mut distinct = captured.clone();
        distinct.dedup();
        distinct
    };
    assert!(users.len() > 2, "{users:?}");
    qa.merge_patterns(proto::MergePatternsRequest {
        into_pattern_id: users[0].clone(),
        pattern_ids: vec![users[1].clone()],
        reason: "the same outage".into(),
    })
    .await
    .unwrap();

    let done = remine(&mut qa).await;
    assert!(done.automatic, "re-mining left free keeps the person's merge: {done:?}");
    assert!(done.kept_replay > done.kept_before && done.regressions == 0, "replayed, it makes the merge: {done:?}");
    assert!(done.merges >= 1 && done.proposed == 0, "{done:?}");
    let after = live(&mut qa).await;
    assert_eq!(after.len(), 3, "the person's pattern, re-mining's, the disk: {after:#?}");
    assert!(after.iter().any(|pattern| pattern.pattern_id == other));
    let remined = after.iter().find(|pattern| pattern.last_change == "re_mining").unwrap();
    let reasons = reasons(&mut qa, &remined.pattern_id).await;
    assert!(reasons.iter().any(|reason| reason.starts_with("re-mined: Brain groups them as")), "{reasons:?}");
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

    let done = remine(&mut qa).await;
    assert_eq!((done.merges, done.proposed), (0, 2), "{done:?}");
    let proposals = open_proposals(&mut qa).await;
    assert!(proposals.iter().all(|proposal| proposal.template.starts_with("ask the datanode to delete")));
    for proposal in &proposals {
        decide(&mut qa, proposal, proto::RegroupingDecision::Accept).await.unwrap();
    }
    let after = live(&mut qa).await;
    assert_eq!(after.len(), 2, "one pattern for the lists, one for the cache: {after:#?}");
    let kind = after.iter().find(|pattern| pattern.pattern_id != apart).unwrap();
    assert_eq!(kind.occurrence_count, 9);
    for list in ["blk_7", "blk_7 blk_8", "blk_7 blk_8 blk_9"] {
        let later = capture(&mut qa, &format!("ask the datanode to delete {list}")).await;
        assert_eq!(later, kind.pattern_id, "{list}");
    }
}

/// Capture keeps each service's messages in a pattern of its own, up and
/// down together, and a person merged alpha's with beta's. Brain,
/// replayed from before that merge, would part alpha's up from its down:
/// it would undo what capture and the person had right, so this project's
/// people do not support re-mining, and even the merges elsewhere that
/// the criterion keeps are only proposed.
#[tokio::test]
async fn a_re_mine_that_would_lower_agreement_with_peoples_corrections_is_not_applied() {
    let server = TestServer::start().await;
    let mut qa = QaLearningServiceClient::new(server.channel().await);
    let services = ["alpha", "beta", "gamma", "delta"];
    let mut by_service = std::collections::BTreeMap::new();
    for index in 0..12 {
        let (service, state) = (services[index % 4], if index < 6 { "up" } else { "down" });
        let pattern = capture(&mut qa, &format!("service {service} is {state}")).await;
        assert_eq!(*by_service.entry(service).or_insert_with(|| pattern.clone()), pattern, "one pattern a service");
    }
    qa.merge_patterns(proto::MergePatternsRequest {
        into_pattern_id: by_service["alpha"].clone(),
        pattern_ids: vec![by_service["beta"].clone()],
        reason: "the same rack".into(),
    })
    .await
    .unwrap();
    let merged = by_service["alpha"].clone();
    let before = live(&mut qa).await;

    let done = remine(&mut qa).await;
    assert!(done.corrected_pairs > 0.0, "{done:?}");
    assert!(done.regressions >= 1, "replayed, Brain parts what capture and the person kept together: {done:?}");
    assert!(!done.automatic, "{done:?}");
    assert_eq!((done.merges, done.splits), (0, 0), "{done:?}");
    assert!(done.proposed >= 1, "alpha's and beta's merge waits for a person: {done:?}");
    assert_eq!(live(&mut qa).await, before, "nothing regrouped");
    let proposals = open_proposals(&mut qa).await;
    assert!(
        proposals.iter().all(|proposal| !proposal.pattern_ids.contains(&merged)),
        "the person's pattern is never proposed split: {proposals:#?}"
    );

    // Rejected, a move is not proposed again.
    let rejected = decide(&mut qa, &proposals[0], proto::RegroupingDecision::Reject).await.unwrap();
    assert_eq!(rejected.proposal.unwrap().state, "rejected");
    assert_eq!(rejected.made.unwrap().merges, 0);
    remine(&mut qa).await;
    let again = open_proposals(&mut qa).await;
    assert!(again.iter().all(|proposal| proposal.pattern_ids != proposals[0].pattern_ids), "{again:#?}");
    assert_eq!(live(&mut qa).await, before);
}
