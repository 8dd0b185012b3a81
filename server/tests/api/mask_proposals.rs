//! Masks proposed from a person's merges, over real gRPC and a real
//! PostgreSQL: merging two services' patterns proposes the mask for the
//! service name and adds nothing; accepting adds it and re-mines, and the
//! next service joins at once; rejecting keeps the expression from coming
//! back; re-mining's own merges propose nothing; bad decisions are refused
//! naming the field and change nothing.

use lore_proto::v1 as proto;
use lore_proto::v1::qa_learning_service_client::QaLearningServiceClient;
use lore_server::testing::TestServer;
use tonic::Code;
use tonic::transport::Channel;

use crate::grouping_masks::{capture, live, masks};

type Qa = QaLearningServiceClient<Channel>;

async fn merge(qa: &mut Qa, into: &str, source: &str) {
    let request = proto::MergePatternsRequest {
        into_pattern_id: into.into(),
        pattern_ids: vec![source.into()],
        reason: "the same lease, another service".into(),
    };
    qa.merge_patterns(request).await.unwrap();
}

async fn proposals(qa: &mut Qa, project: &str, include_decided: bool) -> Vec<proto::MaskProposal> {
    let request = proto::ListMaskProposalsRequest { project: project.into(), include_decided };
    qa.list_mask_proposals(request).await.unwrap().into_inner().proposals
}

fn decide(
    project: &str,
    proposal_id: &str,
    decision: proto::MaskDecision,
    name: &str,
) -> proto::DecideMaskProposalRequest {
    proto::DecideMaskProposalRequest {
        project: project.into(),
        proposal_id: proposal_id.into(),
        decision: decision.into(),
        name: name.into(),
    }
}

#[tokio::test]
async fn a_merge_proposes_the_mask_and_a_person_makes_it_one() {
    const PROJECT: &str = "proposals";
    let server = TestServer::start().await;
    let mut qa = QaLearningServiceClient::new(server.channel().await);
    let billing = capture(&mut qa, PROJECT, "worker svc-billing lost its lease after 30s").await.pattern_id;
    let search = capture(&mut qa, PROJECT, "worker svc-search lost its lease after 12s").await.pattern_id;
    assert_ne!(billing, search);
    assert!(proposals(&mut qa, PROJECT, true).await.is_empty());

    merge(&mut qa, &billing, &search).await;
    let open = proposals(&mut qa, PROJECT, false).await;
    assert_eq!(open.len(), 1, "{open:#?}");
    let proposal = &open[0];
    assert_eq!(proposal.pattern, r"\bsvc-[a-z]+\b");
    assert_eq!(proposal.name, "svc-values");
    assert_eq!(proposal.examples, ["svc-billing", "svc-search"]);
    assert_eq!(proposal.pattern_ids, [billing.clone(), search.clone()]);
    assert_eq!(proposal.state, "open");
    assert!(proposal.proposed_at.is_some() && proposal.decided_at.is_none());
    assert!(masks(&mut qa, PROJECT).await.is_empty(), "nothing becomes a mask without a person");
    // A third service is still a pattern of its own, and merging it in
    // proposes nothing new: the open proposal already says it.
    let queue = capture(&mut qa, PROJECT, "worker svc-queue lost its lease after 9s").await;
    assert!(queue.new_pattern);
    merge(&mut qa, &billing, &queue.pattern_id).await;
    assert_eq!(proposals(&mut qa, PROJECT, true).await.len(), 1);

    // Bad decisions are refused naming the field, and decide nothing.
    let id = proposal.proposal_id.clone();
    for (request, field) in [
        (decide(PROJECT, &id, proto::MaskDecision::Unspecified, ""), "decision"),
        (decide(PROJECT, "not-a-uuid", proto::MaskDecision::Accept, ""), "proposal_id"),
        (decide(PROJECT, &id, proto::MaskDecision::Accept, "has space"), "name"),
        (decide(PROJECT, &id, proto::MaskDecision::Reject, "a-name"), "name"),
        (decide("no spaces", &id, proto::MaskDecision::Accept, ""), "project"),
    ] {
        let status = qa.decide_mask_proposal(request).await.unwrap_err();
        assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
        assert!(status.message().starts_with(field), "{field}: {status:?}");
    }
    let elsewhere = qa.decide_mask_proposal(decide("other", &id, proto::MaskDecision::Accept, "")).await.unwrap_err();
    assert_eq!(elsewhere.code(), Code::NotFound, "a proposal is its project's own: {elsewhere:?}");
    // A name the project's masks hold is refused, not replaced.
    let put = proto::GroupingMask {
        project: PROJECT.into(),
        name: "taken".into(),
        pattern: "lease#[a-z]+".into(),
        ..Default::default()
    };
    qa.put_grouping_mask(proto::PutGroupingMaskRequest { mask: Some(put) }).await.unwrap();
    let taken = qa.decide_mask_proposal(decide(PROJECT, &id, proto::MaskDecision::Accept, "taken")).await.unwrap_err();
    assert_eq!(taken.code(), Code::AlreadyExists, "{taken:?}");
    assert!(taken.message().contains("taken"), "{taken:?}");
    assert_eq!(masks(&mut qa, PROJECT).await.len(), 1);
    assert_eq!(proposals(&mut qa, PROJECT, false).await.len(), 1, "still open");

    let accepted =
        qa.decide_mask_proposal(decide(PROJECT, &id, proto::MaskDecision::Accept, "")).await.unwrap().into_inner();
    let mask = accepted.mask.unwrap();
    assert_eq!((mask.name.as_str(), mask.pattern.as_str()), ("svc-values", r"\bsvc-[a-z]+\b"));
    assert!(mask.description.contains("svc-billing, svc-search"), "{mask:?}");
    let decided = accepted.proposal.unwrap();
    assert_eq!((decided.state.as_str(), decided.mask_name.as_str()), ("accepted", "svc-values"));
    assert!(decided.decided_at.is_some());
    assert_eq!(accepted.remined.unwrap().occurrences, 3);
    // The survivor takes the masked template, so a service never seen
    // joins it directly.
    let ledger = capture(&mut qa, PROJECT, "worker svc-ledger lost its lease after 5s").await;
    assert_eq!(ledger.pattern_id, billing);
    assert_eq!(ledger.template, "worker <*> lost its lease after <*>");
    assert_eq!(live(&mut qa, PROJECT).await.len(), 1);

    assert!(proposals(&mut qa, PROJECT, false).await.is_empty());
    assert_eq!(proposals(&mut qa, PROJECT, true).await[0].state, "accepted");
    let again = qa.decide_mask_proposal(decide(PROJECT, &id, proto::MaskDecision::Reject, "")).await.unwrap_err();
    assert_eq!(again.code(), Code::FailedPrecondition);
    assert!(again.message().contains("already accepted"), "{again:?}");
}

#[tokio::test]
async fn a_rejected_expression_is_not_proposed_again() {
    const PROJECT: &str = "proposals-rejected";
    let server = TestServer::start().await;
    let mut qa = QaLearningServiceClient::new(server.channel().await);
    let alpha = capture(&mut qa, PROJECT, "queue alpha-x is full").await.pattern_id;
    let beta = capture(&mut qa, PROJECT, "queue beta-y is full").await.pattern_id;
    merge(&mut qa, &alpha, &beta).await;
    let proposal = proposals(&mut qa, PROJECT, false).await.remove(0);
    assert_eq!(proposal.pattern, r"\b[a-z]+-[a-z]+\b");
    let rejected = qa
        .decide_mask_proposal(decide(PROJECT, &proposal.proposal_id, proto::MaskDecision::Reject, ""))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(rejected.proposal.unwrap().state, "rejected");
    assert!(rejected.mask.is_none());
    assert!(masks(&mut qa, PROJECT).await.is_empty());

    let gamma = capture(&mut qa, PROJECT, "queue gamma-z is full").await.pattern_id;
    merge(&mut qa, &alpha, &gamma).await;
    assert!(proposals(&mut qa, PROJECT, false).await.is_empty(), "rejected once, not proposed again");
    assert_eq!(proposals(&mut qa, PROJECT, true).await.len(), 1);
}

#[tokio::test]
async fn re_mining_by_itself_proposes_no_mask_and_a_person_accepting_its_merge_does() {
    const PROJECT: &str = "proposals-remined";
    let server = TestServer::start().await;
    let mut qa = QaLearningServiceClient::new(server.channel().await);
    for (service, seconds) in [("billing", 30), ("search", 12), ("queue", 7), ("ledger", 45), ("mail", 3)] {
        capture(&mut qa, PROJECT, &format!("worker svc-{service} lost its lease after {seconds}s")).await;
    }
    let done = qa
        .remine_project(proto::RemineProjectRequest { project: PROJECT.into(), window: 0 })
        .await
        .unwrap()
        .into_inner();
    assert!(done.proposed >= 1, "Brain calls five services a variable: {done:?}");
    assert!(proposals(&mut qa, PROJECT, true).await.is_empty());
    let regrouping = qa
        .list_regrouping_proposals(proto::ListRegroupingProposalsRequest {
            project: PROJECT.into(),
            include_decided: false,
        })
        .await
        .unwrap()
        .into_inner()
        .proposals
        .remove(0);
    qa.decide_regrouping_proposal(proto::DecideRegroupingProposalRequest {
        project: PROJECT.into(),
        proposal_id: regrouping.proposal_id,
        decision: proto::RegroupingDecision::Accept.into(),
    })
    .await
    .unwrap();
    let masks = proposals(&mut qa, PROJECT, false).await;
    assert_eq!(masks.len(), 1, "the person's merge implies the mask: {masks:#?}");
    assert_eq!(masks[0].pattern, r"\bsvc-[a-z]+\b");
}
