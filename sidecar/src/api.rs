//! The sidecar's local ActionService: the same contract as the server, so an
//! agent only changes the address. Writes go to the spool and are answered
//! once durable; reads are proxied to the server (UNAVAILABLE while it is
//! unreachable).

use std::sync::Arc;

use lore_proto::auth::AuthChannel;
use tokio_stream::StreamExt as _;
use tonic::codegen::BoxStream;
use tonic::{Request, Response, Status, Streaming};

use lore_proto::limits::MAX_BATCH_ACTIONS;
use lore_proto::v1 as proto;
use lore_proto::v1::action_service_client::ActionServiceClient;
use lore_proto::v1::action_service_server::ActionService;
use lore_sanitize::Sanitizer;

use lore_spool::entry::{SpoolEntry, Write};
use lore_spool::{Spool, SpoolError};

#[derive(Clone)]
pub struct LocalApi {
    spool: Arc<Spool>,
    sanitizer: Sanitizer,
    server: ActionServiceClient<AuthChannel>,
}

impl LocalApi {
    pub fn new(spool: Arc<Spool>, sanitizer: Sanitizer, server: AuthChannel) -> Self {
        Self { spool, sanitizer, server: lore_proto::client::actions(server) }
    }

    async fn spool(&self, writes: Vec<Write>) -> Result<Vec<u64>, Status> {
        spool_writes(&self.spool, writes).await
    }
}

/// The answer to a write the sidecar spooled: it says so in its metadata
/// (`x-lore-spooled: true`), so a client can tell a queued write from one
/// the server processed.
pub(crate) fn spooled<T>(answer: T) -> Response<T> {
    let mut response = Response::new(answer);
    response.metadata_mut().insert(lore_proto::metadata::SPOOLED, tonic::metadata::MetadataValue::from_static("true"));
    response
}

/// Appends writes to the spool and returns their record ids once durable.
pub(crate) async fn spool_writes(spool: &Spool, writes: Vec<Write>) -> Result<Vec<u64>, Status> {
    spool_writes_from(spool, writes, "").await
}

/// [`spool_writes`], keeping what the writing client named itself.
pub(crate) async fn spool_writes_from(spool: &Spool, writes: Vec<Write>, client: &str) -> Result<Vec<u64>, Status> {
    let payloads = writes
        .into_iter()
        .map(|write| SpoolEntry { client: client.to_owned(), ..SpoolEntry::new(write) }.encode())
        .collect();
    spool.append(payloads).await.map_err(spool_status)
}

/// What a request's client named itself, when it is a short plain name.
pub(crate) fn client_of<T>(request: &Request<T>) -> String {
    request
        .metadata()
        .get(lore_proto::metadata::CLIENT)
        .and_then(|value| value.to_str().ok())
        .filter(|client| client.len() <= 32 && client.bytes().all(|byte| byte.is_ascii_alphanumeric() || byte == b'-'))
        .unwrap_or_default()
        .to_owned()
}

/// What a proxied read keeps of the caller's metadata: its token, and its
/// W3C trace context so the server's span joins the agent's trace.
const FORWARDED_METADATA: [&str; 3] = ["authorization", "traceparent", "tracestate"];

/// The request for the server: the message and the caller's
/// [`FORWARDED_METADATA`].
pub(crate) fn forward<T>(request: Request<T>) -> Request<T> {
    let (metadata, _, message) = request.into_parts();
    let mut forwarded = Request::new(message);
    for key in FORWARDED_METADATA {
        if let Some(value) = metadata.get(key) {
            forwarded.metadata_mut().insert(key, value.clone());
        }
    }
    forwarded
}

/// Checks what the server would refuse outright, fills what the sidecar
/// must choose (ids, time) and redacts secrets before anything touches
/// the disk. Returns the redaction count.
pub(crate) fn prepare_action(sanitizer: &Sanitizer, action: &mut proto::Action) -> Result<u32, String> {
    if action.project.is_empty() {
        return Err("project: required".into());
    }
    if action.action_type.trim().is_empty() {
        return Err("action_type: required".into());
    }
    if proto::Outcome::try_from(action.outcome).is_err() || action.outcome == 0 {
        return Err(format!("outcome: {} is not a valid outcome", action.outcome));
    }
    if action.action_id.is_empty() {
        action.action_id = uuid::Uuid::now_v7().to_string();
    }
    if action.occurred_at.is_none() {
        action.occurred_at = Some(now());
    }
    let mut redactions = 0;
    if let Some(context) = &action.context {
        let mut value = lore_proto::json::struct_to_json(context);
        redactions += sanitizer.sanitize_value(&mut value).redactions;
        action.context = Some(lore_proto::json::to_struct(&value));
    }
    let (error, report) = sanitizer.sanitize_text(&action.error);
    action.error = error;
    Ok(redactions + report.redactions)
}

pub(crate) fn now() -> prost_types::Timestamp {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    prost_types::Timestamp { seconds: now.as_secs() as i64, nanos: now.subsec_nanos() as i32 }
}

fn spool_status(error: SpoolError) -> Status {
    match error {
        SpoolError::Full { .. } => Status::resource_exhausted(format!("{error}; retry when the server is back")),
        SpoolError::TooLarge(_) => Status::invalid_argument(error.to_string()),
        SpoolError::Io(_) | SpoolError::Closed => Status::unavailable(error.to_string()),
    }
}

#[tonic::async_trait]
impl ActionService for LocalApi {
    async fn log_action(
        &self,
        request: Request<proto::LogActionRequest>,
    ) -> Result<Response<proto::LogActionResponse>, Status> {
        let mut action = request.into_inner().action.ok_or_else(|| Status::invalid_argument("action: required"))?;
        let redaction_count = prepare_action(&self.sanitizer, &mut action)
            .map_err(|reason| Status::invalid_argument(format!("action.{reason}")))?;
        let id = action.action_id.clone();
        self.spool(vec![Write::Action(action)]).await?;
        Ok(spooled(proto::LogActionResponse { ack: Some(proto::WriteAck { id, duplicate: false }), redaction_count }))
    }

    async fn ingest(
        &self,
        request: Request<Streaming<proto::IngestRequest>>,
    ) -> Result<Response<BoxStream<proto::IngestAck>>, Status> {
        let mut batches = request.into_inner();
        let this = self.clone();
        let acks = async_stream::try_stream! {
            while let Some(batch) = batches.next().await {
                let batch = batch?;
                if batch.actions.len() > MAX_BATCH_ACTIONS {
                    Err(Status::invalid_argument(format!("actions: {} actions, over the limit of {MAX_BATCH_ACTIONS} per batch", batch.actions.len())))?;
                }
                let mut writes = Vec::with_capacity(batch.actions.len());
                let mut rejected = Vec::new();
                for (index, mut action) in batch.actions.into_iter().enumerate() {
                    match prepare_action(&this.sanitizer, &mut action) {
                        Ok(_) => writes.push(Write::Action(action)),
                        Err(reason) => rejected.push(proto::RejectedAction { index: index as u32, action_id: action.action_id, reason }),
                    }
                }
                let stored = writes.len() as u32;
                this.spool(writes).await?;
                yield proto::IngestAck { sequence: batch.sequence, stored, duplicates: 0, rejected };
            }
        };
        Ok(Response::new(Box::pin(acks) as BoxStream<proto::IngestAck>))
    }

    async fn start_session(
        &self,
        request: Request<proto::StartSessionRequest>,
    ) -> Result<Response<proto::StartSessionResponse>, Status> {
        let mut start = request.into_inner();
        if start.project.is_empty() || start.agent_id.is_empty() {
            return Err(Status::invalid_argument("project and agent_id: required"));
        }
        if start.session_id.is_empty() {
            start.session_id = uuid::Uuid::now_v7().to_string();
        }
        let started_at = *start.started_at.get_or_insert_with(now);
        if let Some(metadata) = &start.metadata {
            let mut value = lore_proto::json::struct_to_json(metadata);
            self.sanitizer.sanitize_value(&mut value);
            start.metadata = Some(lore_proto::json::to_struct(&value));
        }
        let session = proto::Session {
            session_id: start.session_id.clone(),
            project: start.project.clone(),
            agent_id: start.agent_id.clone(),
            supervisor_type: start.supervisor_type.clone(),
            kind: start.kind,
            metadata: start.metadata.clone(),
            status: proto::SessionStatus::Active as i32,
            started_at: Some(started_at),
            last_activity_at: Some(started_at),
            ..Default::default()
        };
        self.spool(vec![Write::StartSession(start)]).await?;
        Ok(spooled(proto::StartSessionResponse { session: Some(session), duplicate: false }))
    }

    async fn heartbeat(
        &self,
        request: Request<proto::HeartbeatRequest>,
    ) -> Result<Response<proto::HeartbeatResponse>, Status> {
        let heartbeat = request.into_inner();
        if heartbeat.session_id.is_empty() {
            return Err(Status::invalid_argument("session_id: required"));
        }
        self.spool(vec![Write::Heartbeat(heartbeat)]).await?;
        Ok(spooled(proto::HeartbeatResponse {
            last_activity_at: Some(now()),
            status: proto::SessionStatus::Active as i32,
        }))
    }

    async fn end_session(
        &self,
        request: Request<proto::EndSessionRequest>,
    ) -> Result<Response<proto::EndSessionResponse>, Status> {
        let end = request.into_inner();
        if end.session_id.is_empty() {
            return Err(Status::invalid_argument("session_id: required"));
        }
        if end.reason == 0 || proto::EndReason::try_from(end.reason).is_err() {
            return Err(Status::invalid_argument(format!("reason: {} is not a valid end reason", end.reason)));
        }
        let session = proto::Session {
            session_id: end.session_id.clone(),
            status: proto::SessionStatus::Ended as i32,
            end_reason: end.reason,
            ended_at: Some(now()),
            summary: end.summary.clone(),
            ..Default::default()
        };
        self.spool(vec![Write::EndSession(end)]).await?;
        Ok(spooled(proto::EndSessionResponse { session: Some(session) }))
    }

    // Reads go to the server as they are, with the caller's token when it
    // sent one (else the sidecar's).

    async fn get_last_session(
        &self,
        request: Request<proto::GetLastSessionRequest>,
    ) -> Result<Response<proto::GetLastSessionResponse>, Status> {
        self.server.clone().get_last_session(forward(request)).await
    }

    async fn get_recent_actions(
        &self,
        request: Request<proto::GetRecentActionsRequest>,
    ) -> Result<Response<proto::GetRecentActionsResponse>, Status> {
        self.server.clone().get_recent_actions(forward(request)).await
    }

    async fn search_actions(
        &self,
        request: Request<proto::SearchActionsRequest>,
    ) -> Result<Response<proto::SearchActionsResponse>, Status> {
        self.server.clone().search_actions(forward(request)).await
    }

    async fn activity_report(
        &self,
        request: Request<proto::ActivityReportRequest>,
    ) -> Result<Response<proto::ActivityReportResponse>, Status> {
        self.server.clone().activity_report(forward(request)).await
    }

    async fn periodic_report(
        &self,
        request: Request<proto::PeriodicReportRequest>,
    ) -> Result<Response<proto::PeriodicReportResponse>, Status> {
        self.server.clone().periodic_report(forward(request)).await
    }

    async fn list_periodic_reports(
        &self,
        request: Request<proto::ListPeriodicReportsRequest>,
    ) -> Result<Response<proto::ListPeriodicReportsResponse>, Status> {
        self.server.clone().list_periodic_reports(forward(request)).await
    }

    async fn verify_chain(
        &self,
        request: Request<proto::VerifyChainRequest>,
    ) -> Result<Response<proto::VerifyChainResponse>, Status> {
        self.server.clone().verify_chain(forward(request)).await
    }

    async fn get_retention_status(
        &self,
        request: Request<proto::GetRetentionStatusRequest>,
    ) -> Result<Response<proto::RetentionStatus>, Status> {
        self.server.clone().get_retention_status(forward(request)).await
    }

    async fn run_retention(
        &self,
        request: Request<proto::RunRetentionRequest>,
    ) -> Result<Response<proto::RetentionStatus>, Status> {
        self.server.clone().run_retention(forward(request)).await
    }

    async fn resume(
        &self,
        request: Request<proto::ResumeRequest>,
    ) -> Result<Response<BoxStream<proto::ResumeEvent>>, Status> {
        let events = self.server.clone().resume(forward(request)).await?.into_inner();
        Ok(Response::new(Box::pin(events) as BoxStream<proto::ResumeEvent>))
    }

    async fn export(
        &self,
        request: Request<proto::ExportRequest>,
    ) -> Result<Response<BoxStream<proto::ExportChunk>>, Status> {
        let chunks = self.server.clone().export(forward(request)).await?.into_inner();
        Ok(Response::new(Box::pin(chunks) as BoxStream<proto::ExportChunk>))
    }
}
