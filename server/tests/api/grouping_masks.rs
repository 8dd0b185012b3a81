//! Grouping masks as data over real gRPC and a real PostgreSQL: two
//! services' messages that the generic masks keep apart become one pattern
//! once a person masks the service name, what was captured before is
//! re-mined at once, and a third service's message joins that pattern
//! directly. Bad masks are refused naming the field, and change nothing.

use lore_proto::v1 as proto;
use lore_proto::v1::qa_learning_service_client::QaLearningServiceClient;
use lore_server::testing::TestServer;
use tonic::Code;
use tonic::transport::Channel;
use uuid::Uuid;

pub(crate) async fn capture(
    qa: &mut QaLearningServiceClient<Channel>,
    project: &str,
    message: &str,
) -> proto::PatternLink {
    let request = proto::CaptureFailureRequest {
        failure_id: Uuid::now_v7().to_string(),
        project: project.into(),
        task: Some(proto::Task { task_id: format!("T-{}", Uuid::now_v7()), ..Default::default() }),
        error_messages: vec![message.into()],
        ..Default::default()
    };
    qa.capture_failure(request).await.unwrap().into_inner().links.remove(0)
}

pub(crate) async fn live(qa: &mut QaLearningServiceClient<Channel>, project: &str) -> Vec<proto::Pattern> {
    let request = proto::ListPatternsRequest { project: project.into(), ..Default::default() };
    qa.list_patterns(request).await.unwrap().into_inner().patterns
}

fn mask(project: &str, name: &str, pattern: &str) -> proto::PutGroupingMaskRequest {
    proto::PutGroupingMaskRequest {
        mask: Some(proto::GroupingMask {
            project: project.into(),
            name: name.into(),
            pattern: pattern.into(),
            description: "service names".into(),
            ..Default::default()
        }),
    }
}

pub(crate) async fn masks(qa: &mut QaLearningServiceClient<Channel>, project: &str) -> Vec<proto::GroupingMask> {
    let request = proto::ListGroupingMasksRequest { project: project.into() };
    qa.list_grouping_masks(request).await.unwrap().into_inner().masks
}

#[tokio::test]
async fn a_mask_regroups_what_was_captured_and_what_comes_next() {
    const PROJECT: &str = "masks";
    let server = TestServer::start().await;
    let mut qa = QaLearningServiceClient::new(server.channel().await);
    let mut before = Vec::new();
    for (service, seconds) in [("billing", 30), ("search", 12), ("billing", 7), ("search", 45)] {
        let message = format!("worker svc-{service} lost its lease after {seconds}s");
        before.push(capture(&mut qa, PROJECT, &message).await.pattern_id);
    }
    let other = capture(&mut qa, PROJECT, "disk quota exceeded on the build volume").await.pattern_id;
    assert_eq!(live(&mut qa, PROJECT).await.len(), 3, "without a mask the two services are two patterns");
    // Re-mining alone keeps them apart too: two services are too few
    // distinct words for Brain to call the position a variable.
    let done = qa
        .remine_project(proto::RemineProjectRequest { project: PROJECT.into(), window: 0 })
        .await
        .unwrap()
        .into_inner();
    assert_eq!((done.merges, done.splits, done.moves), (0, 0, 0), "{done:?}");
    assert!(masks(&mut qa, PROJECT).await.is_empty());

    let put = qa.put_grouping_mask(mask(PROJECT, "service", "svc-[a-z]+")).await.unwrap().into_inner();
    assert!(put.created);
    let stored = put.mask.unwrap();
    assert_eq!((stored.name.as_str(), stored.pattern.as_str()), ("service", "svc-[a-z]+"));
    assert!(stored.updated_at.is_some());
    let remined = put.remined.unwrap();
    assert_eq!(remined.occurrences, 5);
    assert_eq!(remined.merges, 1, "{remined:?}");
    assert!(remined.moves >= 1, "the survivor takes the masked template: {remined:?}");

    let after = live(&mut qa, PROJECT).await;
    assert_eq!(after.len(), 2, "one pattern for the lease, one for the disk: {after:#?}");
    let lease = after.iter().find(|pattern| pattern.pattern_id != other).unwrap();
    assert!(before.contains(&lease.pattern_id), "the survivor keeps one of the captured ids");
    assert_eq!(lease.occurrence_count, 4);
    assert_eq!(lease.template, "worker <*> lost its lease after <*>");

    // A service never seen joins the pattern at once, on its new route.
    let queue = capture(&mut qa, PROJECT, "worker svc-queue lost its lease after 5s").await;
    assert_eq!(queue.pattern_id, lease.pattern_id);
    assert!(!queue.new_pattern);
    assert_eq!(queue.template, "worker <*> lost its lease after <*>");
    assert_eq!(queue.reason, "exact template");

    // Replacing keeps one mask of the name; the list shows it.
    let replaced = qa.put_grouping_mask(mask(PROJECT, "service", "svc-[a-z0-9]+")).await.unwrap().into_inner();
    assert!(!replaced.created);
    let listed = masks(&mut qa, PROJECT).await;
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].pattern, "svc-[a-z0-9]+");
    assert_eq!(listed[0].description, "service names");
    assert!(masks(&mut qa, "masks-elsewhere").await.is_empty(), "masks are the project's own");

    let deleted = qa
        .delete_grouping_mask(proto::DeleteGroupingMaskRequest { project: PROJECT.into(), name: "service".into() })
        .await
        .unwrap()
        .into_inner();
    assert!(deleted.deleted);
    assert_eq!(deleted.remined.unwrap().occurrences, 6);
    assert!(masks(&mut qa, PROJECT).await.is_empty());
    // Three services are enough for Brain to call the position a variable
    // by itself: the lease stays one pattern.
    assert_eq!(live(&mut qa, PROJECT).await.len(), 2);
    let again = qa
        .delete_grouping_mask(proto::DeleteGroupingMaskRequest { project: PROJECT.into(), name: "service".into() })
        .await
        .unwrap()
        .into_inner();
    assert!(!again.deleted);
}

#[tokio::test]
async fn bad_masks_are_refused_naming_the_field_and_change_nothing() {
    const PROJECT: &str = "masks-bad";
    let server = TestServer::start().await;
    let mut qa = QaLearningServiceClient::new(server.channel().await);
    qa.put_grouping_mask(mask(PROJECT, "kept", "job#[0-9a-z]+")).await.unwrap();
    let refused = |pattern: &'static str, name: &'static str| {
        let mut qa = qa.clone();
        async move { qa.put_grouping_mask(mask(PROJECT, name, pattern)).await.unwrap_err() }
    };
    for (pattern, name, field, says) in [
        ("svc-(", "open", "mask.pattern", "not a valid regular expression"),
        ("x*", "empty", "mask.pattern", "empty text"),
        ("", "none", "mask.pattern", "required"),
        ("svc-[a-z]+", "has space", "mask.name", "letters, digits"),
        ("svc-[a-z]+", "", "mask.name", "required"),
    ] {
        let status = refused(pattern, name).await;
        assert_eq!(status.code(), Code::InvalidArgument, "{pattern:?} {name:?}: {status:?}");
        assert!(status.message().contains(field) && status.message().contains(says), "{status:?}");
    }
    let missing = qa.put_grouping_mask(proto::PutGroupingMaskRequest { mask: None }).await.unwrap_err();
    assert!(missing.message().contains("mask"), "{missing:?}");
    let bad_project = qa.put_grouping_mask(mask("no spaces", "ok", "x+")).await.unwrap_err();
    assert!(bad_project.message().contains("mask.project"), "{bad_project:?}");

    // A project holds at most 32: the 33rd is refused, a replacement is not.
    for index in 1..32 {
        qa.put_grouping_mask(mask(PROJECT, &format!("m{index:02}"), "x+")).await.unwrap();
    }
    let full = qa.put_grouping_mask(mask(PROJECT, "one-more", "y+")).await.unwrap_err();
    assert_eq!(full.code(), Code::InvalidArgument);
    assert!(full.message().contains("at most 32"), "{full:?}");
    qa.put_grouping_mask(mask(PROJECT, "m01", "z+")).await.unwrap();
    let listed = masks(&mut qa, PROJECT).await;
    assert_eq!(listed.len(), 32);
    assert_eq!(listed.iter().find(|mask| mask.name == "kept").unwrap().pattern, "job#[0-9a-z]+");
}
