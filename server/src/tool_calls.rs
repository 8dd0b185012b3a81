//! Automatic tool-call logging: every KnowledgeService, QaLearningService
//! and AgentService call that carries a session id (metadata `x-lore-session-id`) becomes a
//! `tool_call` action in that session: the method, its parameters
//! (sanitized: secrets redacted, long strings cut), a summary of the result,
//! the outcome and the duration.
//!
//! The call itself does not wait for any of it. The layer only keeps
//! references to the request and response bytes as they pass; when the call
//! ends, the record goes into a bounded queue and a background task decodes
//! it (through the descriptor set, so every method is covered without a
//! line per method) and stores it. When the queue is full, the record is
//! dropped and counted: under overload the calls come first.

use std::sync::{Arc, LazyLock, Mutex};
use std::time::Instant;

use bytes::{Buf as _, Bytes, BytesMut};
use chrono::{DateTime, SubsecRound as _, Utc};
use prost_reflect::{DescriptorPool, DynamicMessage, MessageDescriptor, ReflectMessage as _, SerializeOptions};
use serde_json::{Map, Value, json};
use tokio::sync::mpsc;
use tonic::body::Body;
use uuid::Uuid;

use crate::gate::{Answer, CallObserver, Gate, GateLayer, Inner, observe, observe_body, refuse};
use lore_domain::actions::ActionLog;
use lore_types::actions::{NewAction, Outcome};
use lore_types::scope::ProjectScope;

/// The metadata key that names the caller's session.
const SESSION_HEADER: &str = lore_proto::metadata::SESSION_ID;

/// The services whose calls are tool calls, and the category their actions
/// get.
const TOOL_SERVICES: [(&str, &str); 3] = [
    ("lore.v1.KnowledgeService/", "knowledge"),
    ("lore.v1.QaLearningService/", "qa"),
    ("lore.v1.AgentService/", "agent"),
];

/// The category of a tool call's action, when `method`
/// (`lore.v1.KnowledgeService/Search`) is a tool: Knowledge, QA and Agent
/// calls.
pub fn tool_category(method: &str) -> Option<&'static str> {
    TOOL_SERVICES.iter().find(|(service, _)| method.starts_with(service)).map(|(_, category)| *category)
}

/// How much of a request or response is kept for decoding. Larger messages
/// (a SearchMany of many queries) are logged without their body.
const MAX_CAPTURED_BYTES: usize = 256 * 1024;

/// Records taken from the queue and stored in one batch.
const BATCH: usize = 256;

/// Array elements whose ids a result summary lists.
const SUMMARY_IDS: usize = 10;

/// The queue and its background writer.
#[derive(Debug)]
pub struct ToolCalls {
    sender: mpsc::Sender<ToolCall>,
    stop: Arc<tokio::sync::Notify>,
    writer: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

impl ToolCalls {
    /// Starts the writer; must run inside the Tokio runtime.
    pub fn start(actions: ActionLog, capacity: usize) -> Arc<Self> {
        let (sender, receiver) = mpsc::channel(capacity.max(1));
        let stop = Arc::new(tokio::sync::Notify::new());
        let writer = tokio::spawn(write(actions, receiver, Arc::clone(&stop)));
        Arc::new(Self { sender, stop, writer: Mutex::new(Some(writer)) })
    }

    /// Stores what is queued, then stops the writer: at shutdown, once the
    /// calls have drained, so the last calls are logged too.
    pub async fn drain(&self) {
        self.stop.notify_one();
        let writer = self.writer.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take();
        if let Some(writer) = writer {
            let _ = writer.await;
        }
    }

    fn enqueue(&self, call: ToolCall) {
        if self.sender.try_send(call).is_err() {
            dropped_calls().add(1, &[]);
        }
    }
}

/// One finished call, as the layer saw it.
#[derive(Debug)]
struct ToolCall {
    /// `lore.v1.KnowledgeService/Search`.
    method: String,
    category: &'static str,
    session_id: Uuid,
    scope: ProjectScope,
    occurred_at: DateTime<Utc>,
    duration_ms: i64,
    request: Captured,
    response: Captured,
    code: tonic::Code,
    message: String,
}

/// The bytes of one direction of a call, up to [`MAX_CAPTURED_BYTES`]
/// (clones of the frames' `Bytes`: no copy while the call runs).
#[derive(Debug, Default)]
struct Captured {
    chunks: Vec<Bytes>,
    len: usize,
    overflowed: bool,
}

impl Captured {
    fn push(&mut self, chunk: &Bytes) {
        if self.overflowed || self.len + chunk.len() > MAX_CAPTURED_BYTES {
            self.overflowed = true;
            self.chunks.clear();
            return;
        }
        self.len += chunk.len();
        self.chunks.push(chunk.clone());
    }

    /// The first gRPC message, decoded; `Err` says why there is none.
    fn message(&self, descriptor: Option<MessageDescriptor>) -> Result<DynamicMessage, Value> {
        if self.overflowed {
            return Err(json!({ "_omitted": format!("larger than {MAX_CAPTURED_BYTES} bytes") }));
        }
        let not_decodable = || json!({ "_omitted": "not decodable" });
        let mut buffer = BytesMut::with_capacity(self.len);
        for chunk in &self.chunks {
            buffer.extend_from_slice(chunk);
        }
        let mut bytes = buffer.freeze();
        // A frame: compressed flag, big-endian length, message.
        if bytes.len() < 5 {
            return Err(Value::Null);
        }
        let compressed = bytes.get_u8() != 0;
        let len = bytes.get_u32() as usize;
        let (Some(descriptor), false, true) = (descriptor, compressed, bytes.len() >= len) else {
            return Err(not_decodable());
        };
        DynamicMessage::decode(descriptor, bytes.slice(..len)).map_err(|_| not_decodable())
    }

    /// The first message as JSON (proto field names).
    fn to_json(&self, descriptor: Option<MessageDescriptor>) -> Value {
        let options = SerializeOptions::new().use_proto_field_name(true);
        self.message(descriptor)
            .and_then(|message| {
                message
                    .serialize_with_options(serde_json::value::Serializer, &options)
                    .map_err(|_| json!({ "_omitted": "not decodable" }))
            })
            .unwrap_or_else(|reason| reason)
    }

    /// The first message, summarized.
    fn summary(&self, descriptor: Option<MessageDescriptor>) -> Value {
        self.message(descriptor).map(|message| summarize(&message)).unwrap_or_else(|reason| reason)
    }
}

pub type ToolCallLayer = GateLayer<ToolCallGate>;

impl ToolCallLayer {
    /// `None` switches tool-call logging off.
    pub fn recording(calls: Option<Arc<ToolCalls>>) -> Self {
        GateLayer::new(ToolCallGate { calls })
    }
}

#[derive(Debug, Clone)]
pub struct ToolCallGate {
    calls: Option<Arc<ToolCalls>>,
}

impl Gate for ToolCallGate {
    fn around<S: Inner>(&self, request: http::Request<Body>, mut inner: S) -> Answer<S> {
        let method = request.uri().path().trim_start_matches('/');
        let (Some(calls), Some(category), Some(header)) =
            (self.calls.clone(), tool_category(method), request.headers().get(SESSION_HEADER))
        else {
            return Box::pin(inner.call(request));
        };
        let Some(session_id) = header.to_str().ok().and_then(|value| Uuid::try_parse(value.trim()).ok()) else {
            return refuse::<S>(tonic::Status::invalid_argument(format!(
                "metadata {SESSION_HEADER}: must be a session UUID"
            )));
        };
        let scope = crate::auth::scope_of(request.extensions());
        let method = method.to_owned();
        let requested = Arc::new(Mutex::new(Captured::default()));
        let request = request.map({
            let requested = Arc::clone(&requested);
            |body| observe_body(body, RequestTap(requested))
        });
        let recording = Recording {
            call: Some(ToolCall {
                method,
                category,
                session_id,
                scope,
                occurred_at: Utc::now().trunc_subsecs(6),
                duration_ms: 0,
                request: Captured::default(),
                response: Captured::default(),
                code: tonic::Code::Cancelled,
                message: String::new(),
            }),
            requested,
            started: Instant::now(),
            calls,
        };
        Box::pin(async move {
            let response = inner.call(request).await?;
            Ok(observe(response, recording))
        })
    }
}

/// Keeps what passes through a request body.
struct RequestTap(Arc<Mutex<Captured>>);

impl CallObserver for RequestTap {
    fn data(&mut self, chunk: &Bytes) {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(chunk);
    }

    fn end(self, _code: tonic::Code, _message: &str) {}
}

/// The call being recorded. Queued when the call ends, or when it is
/// dropped unanswered (a deadline, a client that went away).
struct Recording {
    call: Option<ToolCall>,
    requested: Arc<Mutex<Captured>>,
    started: Instant,
    calls: Arc<ToolCalls>,
}

impl Recording {
    fn finish(&mut self, code: tonic::Code, message: &str) {
        let Some(mut call) = self.call.take() else { return };
        call.duration_ms = i64::try_from(self.started.elapsed().as_millis()).unwrap_or(i64::MAX);
        call.request = std::mem::take(&mut *self.requested.lock().unwrap_or_else(std::sync::PoisonError::into_inner));
        call.code = code;
        message.clone_into(&mut call.message);
        self.calls.enqueue(call);
    }
}

impl CallObserver for Recording {
    fn data(&mut self, chunk: &Bytes) {
        if let Some(call) = &mut self.call {
            call.response.push(chunk);
        }
    }

    fn end(mut self, code: tonic::Code, message: &str) {
        self.finish(code, message);
    }
}

impl Drop for Recording {
    fn drop(&mut self) {
        self.finish(tonic::Code::Cancelled, "the call was dropped before it answered");
    }
}

/// The background writer: takes what is queued, in batches, and stores it.
/// It waits up to [`LINGER`] for a batch to fill: one transaction for many
/// records costs the database (and the calls running beside it) less than
/// one each.
async fn write(actions: ActionLog, mut receiver: mpsc::Receiver<ToolCall>, stop: Arc<tokio::sync::Notify>) {
    let mut sessions = SessionCache::new(SESSION_CACHE);
    let mut calls = Vec::with_capacity(BATCH);
    loop {
        let received = tokio::select! {
            received = receiver.recv_many(&mut calls, BATCH) => received,
            // Closed, the queue still hands out what it holds, then 0.
            () = stop.notified() => { receiver.close(); continue; }
        };
        if received == 0 {
            break;
        }
        let deadline = tokio::time::Instant::now() + LINGER;
        while calls.len() < BATCH {
            let room = BATCH - calls.len();
            match tokio::time::timeout_at(deadline, receiver.recv_many(&mut calls, room)).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
        }
        let mut batch = Vec::with_capacity(calls.len());
        for call in calls.drain(..) {
            match sessions.resolve(&actions, &call).await {
                Ok((project, agent_id)) => batch.push(Ok(to_action(call, project, agent_id))),
                Err(error) => tracing::debug!(session_id = %call.session_id, %error, "tool call not logged"),
            }
        }
        if batch.is_empty() {
            continue;
        }
        let size = batch.len();
        // Every project here came from a session in its caller's scope.
        match actions.ingest(&ProjectScope::All, batch).await {
            Ok(outcome) => {
                for rejection in &outcome.rejected {
                    tracing::warn!(reason = %rejection.message(), "tool call not logged");
                }
            }
            Err(error) => tracing::warn!(%error, calls = size, "tool calls not logged"),
        }
    }
}

/// How long the writer waits for more records before storing a batch.
const LINGER: std::time::Duration = std::time::Duration::from_millis(50);

/// Sessions whose project and agent the writer knows.
const SESSION_CACHE: usize = 4096;

/// The project and agent of recently seen sessions (neither ever changes).
struct SessionCache {
    known: hashlink::LruCache<Uuid, (String, String)>,
}

impl SessionCache {
    fn new(capacity: usize) -> Self {
        Self { known: hashlink::LruCache::new(capacity) }
    }

    /// The session's project and agent, if the caller may see the session.
    /// A first lookup asks the database with the caller's projects; later
    /// callers must have the project in their scope too.
    async fn resolve(&mut self, actions: &ActionLog, call: &ToolCall) -> Result<(String, String), crate::Error> {
        if let Some((project, agent_id)) = self.known.get(&call.session_id) {
            return match call.scope.allows(project) {
                true => Ok((project.clone(), agent_id.clone())),
                false => Err(crate::Error::NotFound(format!("session {}", call.session_id))),
            };
        }
        let session = actions.session(&call.scope, call.session_id).await?;
        self.known.insert(call.session_id, (session.project.clone(), session.agent_id.clone()));
        Ok((session.project, session.agent_id))
    }
}

fn to_action(call: ToolCall, project: String, agent_id: String) -> NewAction {
    let (service, method) = call.method.split_once('/').unwrap_or((&call.method, ""));
    let descriptor = DESCRIPTORS
        .get_service_by_name(service)
        .and_then(|service| service.methods().find(|candidate| candidate.name() == method));
    let ok = call.code == tonic::Code::Ok;
    let mut context = Map::new();
    context.insert("tool".into(), Value::String(call.method.clone()));
    context
        .insert("params".into(), call.request.to_json(descriptor.as_ref().map(prost_reflect::MethodDescriptor::input)));
    context.insert("status".into(), Value::String(format!("{:?}", call.code)));
    if ok {
        let output = descriptor.as_ref().map(prost_reflect::MethodDescriptor::output);
        context.insert("result".into(), call.response.summary(output));
    }
    NewAction {
        action_id: Uuid::now_v7(),
        occurred_at: call.occurred_at,
        project,
        session_id: Some(call.session_id),
        agent_id,
        action_type: "tool_call".to_owned(),
        category: call.category.to_owned(),
        context: Value::Object(context),
        outcome: if ok { Outcome::Success } else { Outcome::Failure },
        error: if ok { String::new() } else { format!("{:?}: {}", call.code, call.message) },
        duration_ms: call.duration_ms,
        parent_action_id: None,
        epic_id: String::new(),
        issue_id: String::new(),
        redaction_count: 0,
        truncated: false,
    }
}

static DESCRIPTORS: LazyLock<DescriptorPool> = LazyLock::new(|| {
    DescriptorPool::decode(lore_proto::FILE_DESCRIPTOR_SET).expect("the built-in descriptor set decodes")
});

/// What a result says, without all of it: scalars as they are, lists as
/// their length and the ids of their first elements, nested messages one
/// level down. A search result's summary names what the agent was shown.
/// Built from the decoded message, not its JSON: a search response carries
/// whole entries that the summary leaves out.
pub fn summarize(message: &DynamicMessage) -> Value {
    summarize_message(message, 0)
}

fn summarize_message(message: &DynamicMessage, depth: usize) -> Value {
    if message.descriptor().full_name() == "google.protobuf.Timestamp" {
        return timestamp(message);
    }
    Value::Object(
        message
            .fields()
            .map(|(field, value)| (field.name().to_owned(), summarize_value(&field, value, depth)))
            .collect(),
    )
}

fn summarize_value(field: &prost_reflect::FieldDescriptor, value: &prost_reflect::Value, depth: usize) -> Value {
    use prost_reflect::Value as Proto;
    match value {
        Proto::List(items) => {
            let ids: Vec<Value> =
                items.iter().filter_map(Proto::as_message).filter_map(message_id).take(SUMMARY_IDS).collect();
            match ids.is_empty() {
                true => json!({ "count": items.len() }),
                false => json!({ "count": items.len(), "ids": ids }),
            }
        }
        Proto::Map(entries) => json!({ "count": entries.len() }),
        Proto::Message(message) if depth < 1 => summarize_message(message, depth + 1),
        Proto::Message(message) => match message_id(message) {
            Some(id) => json!({ "id": id }),
            None => json!({ "fields": message.fields().count() }),
        },
        Proto::Bool(flag) => Value::Bool(*flag),
        Proto::I32(number) => json!(number),
        Proto::I64(number) => json!(number),
        Proto::U32(number) => json!(number),
        Proto::U64(number) => json!(number),
        Proto::F32(number) => json!(number),
        Proto::F64(number) => json!(number),
        Proto::String(text) => Value::String(text.clone()),
        Proto::Bytes(bytes) => json!({ "bytes": bytes.len() }),
        Proto::EnumNumber(number) => field
            .kind()
            .as_enum()
            .and_then(|kind| kind.get_value(*number))
            .map_or_else(|| json!(number), |value| Value::String(value.name().to_owned())),
    }
}

/// The id of a list element: a string field named `id` or `…_id`, in the
/// element or in one of its messages (a search hit's entry).
fn message_id(message: &DynamicMessage) -> Option<Value> {
    let own = |message: &DynamicMessage| {
        message.fields().find_map(|(field, value)| {
            let name = field.name();
            let text = value.as_str().filter(|text| !text.is_empty())?;
            (name == "id" || name.ends_with("_id")).then(|| Value::String(text.to_owned()))
        })
    };
    own(message).or_else(|| message.fields().find_map(|(_, value)| value.as_message().and_then(&own)))
}

fn timestamp(message: &DynamicMessage) -> Value {
    let number =
        |name: &str| message.get_field_by_name(name).and_then(|value| value.as_i64().or(value.as_i32().map(i64::from)));
    let (seconds, nanos) = (number("seconds").unwrap_or(0), number("nanos").unwrap_or(0));
    DateTime::from_timestamp(seconds, u32::try_from(nanos).unwrap_or(0))
        .map_or(Value::Null, |time| Value::String(time.to_rfc3339()))
}

/// Counts the calls that could not be logged because the queue was full.
fn dropped_calls() -> &'static opentelemetry::metrics::Counter<u64> {
    static DROPPED: std::sync::OnceLock<opentelemetry::metrics::Counter<u64>> = std::sync::OnceLock::new();
    DROPPED.get_or_init(|| {
        opentelemetry::global::meter("lore-server")
            .u64_counter("lore.tool_calls.dropped")
            .with_unit("{call}")
            .with_description("Tool calls not logged because the queue was full")
            .build()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn framed(message: &impl prost::Message) -> Captured {
        let mut frame = vec![0u8];
        frame.extend_from_slice(&(message.encoded_len() as u32).to_be_bytes());
        frame.extend_from_slice(&message.encode_to_vec());
        let bytes = Bytes::from(frame);
        let mut captured = Captured::default();
        // In two chunks, as frames arrive.
        captured.push(&bytes.slice(..3));
        captured.push(&bytes.slice(3..));
        captured
    }

    #[test]
    fn a_summary_keeps_scalars_counts_lists_and_names_their_ids() {
        use lore_proto::v1 as proto;
        let hit = |id: &str| proto::SearchHit {
            entry: Some(proto::Entry { entry_id: id.into(), body: "a long body".repeat(100), ..Default::default() }),
            score: 0.5,
            relevance: proto::Relevance::High as i32,
            ..Default::default()
        };
        let response = proto::SearchResponse {
            hits: vec![hit("a"), hit("b")],
            degraded: true,
            degraded_reason: "model down".into(),
        };
        let output = DESCRIPTORS.get_message_by_name("lore.v1.SearchResponse");
        assert_eq!(
            framed(&response).summary(output),
            json!({"hits": {"count": 2, "ids": ["a", "b"]}, "degraded": true, "degraded_reason": "model down"})
        );
        let warning = proto::Warning { delivery_id: "d-1".into(), ..Default::default() };
        let warnings = proto::GetWarningsResponse { warnings: vec![warning], ..Default::default() };
        let output = DESCRIPTORS.get_message_by_name("lore.v1.GetWarningsResponse");
        assert_eq!(framed(&warnings).summary(output)["warnings"], json!({"count": 1, "ids": ["d-1"]}));
    }

    #[test]
    fn a_request_decodes_to_json_with_proto_field_names() {
        let query = lore_proto::v1::SearchQuery { text: "flaky".into(), include_obsolete: true, ..Default::default() };
        let request = lore_proto::v1::SearchRequest { project: "p".into(), query: Some(query), ..Default::default() };
        let input = DESCRIPTORS.get_message_by_name("lore.v1.SearchRequest");
        let value = framed(&request).to_json(input);
        assert_eq!(value["project"], "p");
        assert_eq!(value["query"]["text"], "flaky");
        assert_eq!(value["query"]["include_obsolete"], true);
        let mut oversized = Captured::default();
        oversized.push(&Bytes::from(vec![0u8; MAX_CAPTURED_BYTES + 1]));
        assert!(oversized.to_json(None)["_omitted"].as_str().unwrap().starts_with("larger than"));
    }
}
