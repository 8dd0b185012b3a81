//! What an agent records about what it learned, taken like its actions:
//! the QA failures it hit and its fixes (QaLearningService), the lessons it
//! applied and proposed (KnowledgeService). Each is spooled, answered once
//! durable and shipped in order behind the actions before it, so a
//! failure captured while the VM is cut off reaches the server when it is
//! back, exactly once (its id is fixed here, before the spool).
//!
//! The answers carry what the sidecar knows: the ids, not what only the
//! server can say (a failure's category and pattern, a fix's gotcha). They
//! carry the metadata `x-lore-spooled: true`, so a client can tell a
//! queued write from a processed one. Every other method of the two
//! services belongs to the server and answers UNIMPLEMENTED here.

use std::sync::Arc;

use tonic::{Request, Response, Status};
use uuid::Uuid;

use lore_proto::v1 as proto;
use lore_proto::v1::knowledge_service_server::KnowledgeService;
use lore_proto::v1::qa_learning_service_server::QaLearningService;
use lore_sanitize::Sanitizer;

use crate::entry::Write;
use crate::spool::Spool;

/// Response metadata of a write the sidecar spooled.
pub const SPOOLED_HEADER: &str = "x-lore-spooled";

/// The sidecar's QaLearningService and KnowledgeService writes.
#[derive(Clone)]
pub struct LearningApi {
    spool: Arc<Spool>,
    sanitizer: Sanitizer,
}

impl LearningApi {
    pub fn new(spool: Arc<Spool>, sanitizer: Sanitizer) -> Self {
        Self { spool, sanitizer }
    }

    fn clean(&self, text: &mut String) {
        *text = self.sanitizer.sanitize_text(text).0;
    }

    async fn spool<T>(&self, write: Write, answer: T) -> Result<Response<T>, Status> {
        crate::api::spool_writes(&self.spool, vec![write]).await?;
        let mut response = Response::new(answer);
        response.metadata_mut().insert(SPOOLED_HEADER, tonic::metadata::MetadataValue::from_static("true"));
        Ok(response)
    }
}

/// The idempotency id a write is replayed under: the client's, or one
/// chosen now, before the write reaches the disk.
fn fix_id(field: &str, id: &mut String) -> Result<(), Status> {
    if id.is_empty() {
        *id = Uuid::now_v7().to_string();
        return Ok(());
    }
    Uuid::parse_str(id).map(drop).map_err(|_| Status::invalid_argument(format!("{field}: {id:?} is not a UUID")))
}

fn required(field: &str, value: &str) -> Result<(), Status> {
    if value.trim().is_empty() { Err(Status::invalid_argument(format!("{field}: required"))) } else { Ok(()) }
}

fn ack(id: &str) -> Option<proto::WriteAck> {
    Some(proto::WriteAck { id: id.to_owned(), duplicate: false })
}

#[tonic::async_trait]
impl QaLearningService for LearningApi {
    async fn capture_failure(
        &self,
        request: Request<proto::CaptureFailureRequest>,
    ) -> Result<Response<proto::CaptureFailureResponse>, Status> {
        let mut failure = request.into_inner();
        required("project", &failure.project)?;
        required("task.task_id", failure.task.as_ref().map(|task| task.task_id.as_str()).unwrap_or_default())?;
        if failure.failed_checks.is_empty() && failure.error_messages.is_empty() {
            return Err(Status::invalid_argument("failed_checks: at least one check or error message is required"));
        }
        fix_id("failure_id", &mut failure.failure_id)?;
        // When it failed, not when the server got to hear of it.
        failure.occurred_at.get_or_insert_with(crate::api::now);
        for check in &mut failure.failed_checks {
            self.clean(&mut check.output);
        }
        for message in &mut failure.error_messages {
            self.clean(message);
        }
        self.clean(&mut failure.diff_summary);
        if let Some(task) = &mut failure.task {
            self.clean(&mut task.description);
        }
        let answer = proto::CaptureFailureResponse { ack: ack(&failure.failure_id), ..Default::default() };
        self.spool(Write::CaptureFailure(failure), answer).await
    }

    async fn record_fix_attempt(
        &self,
        request: Request<proto::RecordFixAttemptRequest>,
    ) -> Result<Response<proto::RecordFixAttemptResponse>, Status> {
        let mut attempt = request.into_inner();
        Uuid::parse_str(&attempt.failure_id)
            .map_err(|_| Status::invalid_argument(format!("failure_id: {:?} is not a UUID", attempt.failure_id)))?;
        if attempt.attempt_number == 0 {
            return Err(Status::invalid_argument("attempt_number: required, 1-based"));
        }
        if attempt.outcome == 0 || proto::FixOutcome::try_from(attempt.outcome).is_err() {
            return Err(Status::invalid_argument(format!("outcome: {} is not a fix outcome", attempt.outcome)));
        }
        fix_id("attempt_id", &mut attempt.attempt_id)?;
        self.clean(&mut attempt.approach);
        self.clean(&mut attempt.summary);
        self.clean(&mut attempt.qa_result);
        let answer = proto::RecordFixAttemptResponse {
            ack: ack(&attempt.attempt_id),
            attempts: attempt.attempt_number,
            ..Default::default()
        };
        self.spool(Write::RecordFixAttempt(attempt), answer).await
    }
}

#[tonic::async_trait]
impl KnowledgeService for LearningApi {
    async fn record_application(
        &self,
        request: Request<proto::RecordApplicationRequest>,
    ) -> Result<Response<proto::RecordApplicationResponse>, Status> {
        let mut application = request.into_inner();
        for (field, id) in [("entry_id", &application.entry_id), ("session_id", &application.session_id)] {
            Uuid::parse_str(id).map_err(|_| Status::invalid_argument(format!("{field}: {id:?} is not a UUID")))?;
        }
        fix_id("application_id", &mut application.application_id)?;
        self.clean(&mut application.note);
        let answer = proto::RecordApplicationResponse { ack: ack(&application.application_id), effectiveness: None };
        self.spool(Write::RecordApplication(application), answer).await
    }

    async fn create_draft(
        &self,
        request: Request<proto::CreateDraftRequest>,
    ) -> Result<Response<proto::Draft>, Status> {
        let mut draft = request.into_inner();
        required("project", &draft.project)?;
        if draft.epic_id.is_empty() == draft.session_id.is_empty() {
            return Err(Status::invalid_argument("epic_id: give exactly one of epic_id and session_id"));
        }
        fix_id("draft_id", &mut draft.draft_id)?;
        if let Some(proposal) = &mut draft.proposal {
            required("proposal.title", &proposal.title)?;
            self.clean(&mut proposal.problem);
            self.clean(&mut proposal.solution);
        }
        let answer = proto::Draft {
            draft_id: draft.draft_id.clone(),
            project: draft.project.clone(),
            epic_id: draft.epic_id.clone(),
            session_id: draft.session_id.clone(),
            title: draft.proposal.as_ref().map(|proposal| proposal.title.clone()).unwrap_or_default(),
            status: proto::DraftStatus::Pending as i32,
            ..Default::default()
        };
        self.spool(Write::CreateDraft(draft), answer).await
    }
}
