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
//! queued write from a processed one.
//!
//! The reads an agent makes before it works (AgentService.Brief, lesson
//! search and lookup, QA warnings) are proxied to the server like the
//! action log's, with the caller's token when it sent one, else the
//! sidecar's: an agent's machine then holds its token in one place. The
//! curation methods belong to the server and answer UNIMPLEMENTED here.

use std::sync::Arc;

use tonic::{Request, Response, Status};
use uuid::Uuid;

use lore_proto::auth::AuthChannel;
use lore_proto::v1 as proto;
use lore_proto::v1::agent_service_server::AgentService;
use lore_proto::v1::knowledge_service_client::KnowledgeServiceClient;
use lore_proto::v1::knowledge_service_server::KnowledgeService;
use lore_proto::v1::qa_learning_service_client::QaLearningServiceClient;
use lore_proto::v1::qa_learning_service_server::QaLearningService;
use lore_sanitize::Sanitizer;

use crate::api::forward;
use lore_spool::Spool;
use lore_spool::entry::Write;

/// The sidecar's QaLearningService, KnowledgeService and AgentService.
#[derive(Clone)]
pub struct LearningApi {
    spool: Arc<Spool>,
    sanitizer: Sanitizer,
    server: AuthChannel,
}

impl LearningApi {
    pub fn new(spool: Arc<Spool>, sanitizer: Sanitizer, server: AuthChannel) -> Self {
        Self { spool, sanitizer, server }
    }

    fn knowledge(&self) -> KnowledgeServiceClient<AuthChannel> {
        lore_proto::client::knowledge(self.server.clone())
    }

    fn qa(&self) -> QaLearningServiceClient<AuthChannel> {
        lore_proto::client::qa(self.server.clone())
    }

    fn clean(&self, text: &mut String) {
        *text = self.sanitizer.sanitize_text(text).0;
    }

    async fn spool<T>(&self, write: Write, client: &str, answer: T) -> Result<Response<T>, Status> {
        crate::api::spool_writes_from(&self.spool, vec![write], client).await?;
        Ok(crate::api::spooled(answer))
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
        let client = crate::api::client_of(&request);
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
        self.spool(Write::CaptureFailure(failure), &client, answer).await
    }

    async fn record_fix_attempt(
        &self,
        request: Request<proto::RecordFixAttemptRequest>,
    ) -> Result<Response<proto::RecordFixAttemptResponse>, Status> {
        let client = crate::api::client_of(&request);
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
        self.spool(Write::RecordFixAttempt(attempt), &client, answer).await
    }

    async fn record_task_result(
        &self,
        request: Request<proto::RecordTaskResultRequest>,
    ) -> Result<Response<proto::RecordTaskResultResponse>, Status> {
        let client = crate::api::client_of(&request);
        let mut result = request.into_inner();
        required("project", &result.project)?;
        required("task.task_id", result.task.as_ref().map(|task| task.task_id.as_str()).unwrap_or_default())?;
        if result.verdict == 0 || proto::TaskVerdict::try_from(result.verdict).is_err() {
            return Err(Status::invalid_argument(format!("verdict: {} is not passed or failed", result.verdict)));
        }
        fix_id("result_id", &mut result.result_id)?;
        // The deliveries it scores are the ones made before QA answered,
        // not before the server heard of it.
        result.occurred_at.get_or_insert_with(crate::api::now);
        for check in &mut result.checks {
            self.clean(&mut check.output);
        }
        let answer = proto::RecordTaskResultResponse { ack: ack(&result.result_id), ..Default::default() };
        self.spool(Write::RecordTaskResult(result), &client, answer).await
    }

    async fn get_warnings(
        &self,
        request: Request<proto::GetWarningsRequest>,
    ) -> Result<Response<proto::GetWarningsResponse>, Status> {
        self.qa().get_warnings(forward(request)).await
    }

    async fn acknowledge_warning(
        &self,
        request: Request<proto::AcknowledgeWarningRequest>,
    ) -> Result<Response<proto::AcknowledgeWarningResponse>, Status> {
        let client = crate::api::client_of(&request);
        let mut acknowledged = request.into_inner();
        if acknowledged.delivery_ids.is_empty() || acknowledged.delivery_ids.len() > 100 {
            return Err(Status::invalid_argument("delivery_ids: 1 to 100 warning deliveries"));
        }
        if let Some(bad) = acknowledged.delivery_ids.iter().find(|id| Uuid::parse_str(id).is_err()) {
            return Err(Status::invalid_argument(format!("delivery_ids: {bad:?} is not a UUID")));
        }
        self.clean(&mut acknowledged.note);
        let answer = proto::AcknowledgeWarningResponse { acknowledged: acknowledged.delivery_ids.len() as u32 };
        self.spool(Write::AcknowledgeWarning(acknowledged), &client, answer).await
    }

    async fn hot_spots(
        &self,
        request: Request<proto::HotSpotsRequest>,
    ) -> Result<Response<proto::HotSpotsResponse>, Status> {
        self.qa().hot_spots(forward(request)).await
    }

    async fn get_switches(
        &self,
        request: Request<proto::GetSwitchesRequest>,
    ) -> Result<Response<proto::Switches>, Status> {
        self.qa().get_switches(forward(request)).await
    }

    async fn standing_instructions(
        &self,
        request: Request<proto::StandingInstructionsRequest>,
    ) -> Result<Response<proto::StandingInstructionsResponse>, Status> {
        self.qa().standing_instructions(forward(request)).await
    }

    async fn list_patterns(
        &self,
        request: Request<proto::ListPatternsRequest>,
    ) -> Result<Response<proto::ListPatternsResponse>, Status> {
        self.qa().list_patterns(forward(request)).await
    }

    async fn get_pattern(
        &self,
        request: Request<proto::GetPatternRequest>,
    ) -> Result<Response<proto::GetPatternResponse>, Status> {
        self.qa().get_pattern(forward(request)).await
    }

    async fn list_guards(
        &self,
        request: Request<proto::ListGuardsRequest>,
    ) -> Result<Response<proto::ListGuardsResponse>, Status> {
        self.qa().list_guards(forward(request)).await
    }
}

#[tonic::async_trait]
impl AgentService for LearningApi {
    async fn brief(&self, request: Request<proto::BriefRequest>) -> Result<Response<proto::BriefResponse>, Status> {
        lore_proto::client::agent(self.server.clone()).brief(forward(request)).await
    }

    async fn list_cited_files(
        &self,
        request: Request<proto::ListCitedFilesRequest>,
    ) -> Result<Response<proto::ListCitedFilesResponse>, Status> {
        lore_proto::client::agent(self.server.clone()).list_cited_files(forward(request)).await
    }

    async fn list_injections(
        &self,
        request: Request<proto::ListInjectionsRequest>,
    ) -> Result<Response<proto::ListInjectionsResponse>, Status> {
        lore_proto::client::agent(self.server.clone()).list_injections(forward(request)).await
    }

    async fn record_call_injection(
        &self,
        request: Request<proto::RecordCallInjectionRequest>,
    ) -> Result<Response<proto::RecordCallInjectionResponse>, Status> {
        let client = crate::api::client_of(&request);
        let mut given = request.into_inner();
        required("project", &given.project)?;
        required("shape", &given.shape)?;
        let kinds = [proto::InjectedKind::CallWarning as i32, proto::InjectedKind::Guard as i32];
        if !kinds.contains(&given.kind) {
            return Err(Status::invalid_argument(format!(
                "kind: {} is not INJECTED_KIND_CALL_WARNING or INJECTED_KIND_GUARD",
                given.kind
            )));
        }
        for (field, id) in [("injection_id", &given.injection_id), ("session_id", &given.session_id)] {
            Uuid::parse_str(id).map_err(|_| Status::invalid_argument(format!("{field}: {id:?} is not a UUID")))?;
        }
        given.given_at.get_or_insert_with(crate::api::now);
        self.clean(&mut given.label);
        self.clean(&mut given.shape);
        let answer = proto::RecordCallInjectionResponse { recorded: true };
        self.spool(Write::RecordCallInjection(given), &client, answer).await
    }
}

#[tonic::async_trait]
impl KnowledgeService for LearningApi {
    async fn record_application(
        &self,
        request: Request<proto::RecordApplicationRequest>,
    ) -> Result<Response<proto::RecordApplicationResponse>, Status> {
        let client = crate::api::client_of(&request);
        let mut application = request.into_inner();
        for (field, id) in [("entry_id", &application.entry_id), ("session_id", &application.session_id)] {
            Uuid::parse_str(id).map_err(|_| Status::invalid_argument(format!("{field}: {id:?} is not a UUID")))?;
        }
        fix_id("application_id", &mut application.application_id)?;
        self.clean(&mut application.note);
        let answer = proto::RecordApplicationResponse { ack: ack(&application.application_id), effectiveness: None };
        self.spool(Write::RecordApplication(application), &client, answer).await
    }

    async fn create_draft(
        &self,
        request: Request<proto::CreateDraftRequest>,
    ) -> Result<Response<proto::Draft>, Status> {
        let client = crate::api::client_of(&request);
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
        self.spool(Write::CreateDraft(draft), &client, answer).await
    }

    async fn search(&self, request: Request<proto::SearchRequest>) -> Result<Response<proto::SearchResponse>, Status> {
        self.knowledge().search(forward(request)).await
    }

    async fn search_many(
        &self,
        request: Request<proto::SearchManyRequest>,
    ) -> Result<Response<proto::SearchManyResponse>, Status> {
        self.knowledge().search_many(forward(request)).await
    }

    async fn get_entry(
        &self,
        request: Request<proto::GetEntryRequest>,
    ) -> Result<Response<proto::GetEntryResponse>, Status> {
        self.knowledge().get_entry(forward(request)).await
    }

    async fn list_entries(
        &self,
        request: Request<proto::ListEntriesRequest>,
    ) -> Result<Response<proto::ListEntriesResponse>, Status> {
        self.knowledge().list_entries(forward(request)).await
    }

    async fn get_draft(&self, request: Request<proto::GetDraftRequest>) -> Result<Response<proto::Draft>, Status> {
        self.knowledge().get_draft(forward(request)).await
    }
}
