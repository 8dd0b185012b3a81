//! What one spool record holds: one write an agent made, in the order it was
//! made. Encoded with protobuf (the contract's own messages), so a spool
//! written by one sidecar version is read by the next.

use lore_proto::auth::AuthChannel;
use lore_proto::v1 as proto;
use prost::Message as _;
use tonic::{Code, Status};

/// One spooled write.
#[derive(Clone, PartialEq, prost::Message)]
pub struct SpoolEntry {
    #[prost(oneof = "Write", tags = "1, 2, 3, 4, 6, 7, 8, 9, 10, 12, 13, 14, 15")]
    pub write: Option<Write>,
    /// For a write read from the inbox file: where the inbox stands after
    /// its line (see the sidecar's inbox).
    #[prost(message, optional, tag = "5")]
    pub inbox: Option<InboxPosition>,
    /// What the writing client named itself (`hook`, `mcp`; see
    /// `x-lore-client`): the server records where a write came from, and
    /// the shipper sends it on. Empty for records of older sidecars.
    #[prost(string, tag = "11")]
    pub client: String,
}

/// A byte offset in one file, the file named by its identity rather than its
/// path, so a renamed (rotated) file is still the same file.
#[derive(Clone, Copy, PartialEq, Eq, prost::Message, serde::Serialize, serde::Deserialize)]
pub struct InboxPosition {
    #[prost(uint64, tag = "1")]
    pub device: u64,
    #[prost(uint64, tag = "2")]
    pub inode: u64,
    /// Bytes of the file consumed: the start of the next line to read.
    #[prost(uint64, tag = "3")]
    pub offset: u64,
}

/// Only the inbox position of a [`SpoolEntry`]: decoding it skips the write,
/// so scanning a large spool for the last position stays cheap.
#[derive(Clone, PartialEq, prost::Message)]
pub struct InboxMark {
    #[prost(message, optional, tag = "5")]
    pub inbox: Option<InboxPosition>,
}

/// The writes a sidecar accepts while the server may be away: the action
/// log's, what an agent records about what it learned (see
/// the sidecar's learning API), and the documents of the folders it watches.
// Records are decoded one at a time, so the variants' size difference costs
// nothing worth boxing for.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, PartialEq, prost::Oneof)]
pub enum Write {
    #[prost(message, tag = "1")]
    Action(proto::Action),
    #[prost(message, tag = "2")]
    StartSession(proto::StartSessionRequest),
    #[prost(message, tag = "3")]
    Heartbeat(proto::HeartbeatRequest),
    #[prost(message, tag = "4")]
    EndSession(proto::EndSessionRequest),
    // Tag 5 is the entry's inbox position.
    #[prost(message, tag = "6")]
    CaptureFailure(proto::CaptureFailureRequest),
    #[prost(message, tag = "7")]
    RecordFixAttempt(proto::RecordFixAttemptRequest),
    #[prost(message, tag = "8")]
    RecordApplication(proto::RecordApplicationRequest),
    #[prost(message, tag = "9")]
    CreateDraft(proto::CreateDraftRequest),
    #[prost(message, tag = "10")]
    RecordTaskResult(proto::RecordTaskResultRequest),
    // Tag 11 is the entry's client.
    /// A markdown file of a watched folder, new or changed
    /// (the sidecar's folders).
    #[prost(message, tag = "12")]
    IndexDocument(proto::IndexDocumentRequest),
    /// A markdown file gone from a watched folder.
    #[prost(message, tag = "13")]
    RemoveDocument(proto::RemoveDocumentRequest),
    /// An agent acknowledged warnings it was shown.
    #[prost(message, tag = "14")]
    AcknowledgeWarning(proto::AcknowledgeWarningRequest),
    /// A hook gave a warning or a guard's refusal with a call.
    #[prost(message, tag = "15")]
    RecordCallInjection(proto::RecordCallInjectionRequest),
}

impl SpoolEntry {
    pub fn new(write: Write) -> Self {
        Self { write: Some(write), inbox: None, client: String::new() }
    }

    pub fn encode(&self) -> Vec<u8> {
        self.encode_to_vec()
    }

    pub fn decode(bytes: &[u8]) -> Result<Self, prost::DecodeError> {
        <Self as prost::Message>::decode(bytes)
    }
}

impl InboxMark {
    pub fn decode(bytes: &[u8]) -> Result<Self, prost::DecodeError> {
        <Self as prost::Message>::decode(bytes)
    }
}

impl Write {
    /// What the write is, for logs and for the reason of a refusal.
    pub fn what(&self) -> &'static str {
        match self {
            Self::Action(_) => "action",
            Self::StartSession(_) => "session start",
            Self::Heartbeat(_) => "heartbeat",
            Self::EndSession(_) => "session end",
            Self::CaptureFailure(_) => "captured failure",
            Self::RecordFixAttempt(_) => "fix attempt",
            Self::RecordApplication(_) => "lesson application",
            Self::CreateDraft(_) => "proposed lesson",
            Self::RecordTaskResult(_) => "task result",
            Self::IndexDocument(_) => "indexed document",
            Self::RemoveDocument(_) => "removed document",
            Self::AcknowledgeWarning(_) => "acknowledged warning",
            Self::RecordCallInjection(_) => "warning at the call",
        }
    }

    /// Sends the write as its own call, saying which client made it. Every
    /// write carries its id (action, session, failure, attempt...), so
    /// sending one again after an answer was lost stores it once.
    pub async fn deliver(self, channel: AuthChannel, client: &str) -> Result<(), Status> {
        match self {
            Self::Action(action) => {
                let request = proto::LogActionRequest { action: Some(action) };
                lore_proto::client::actions(channel).log_action(named(request, client)).await.map(drop)
            }
            Self::StartSession(start) => {
                lore_proto::client::actions(channel).start_session(named(start, client)).await.map(drop)
            }
            Self::Heartbeat(beat) => {
                lore_proto::client::actions(channel).heartbeat(named(beat, client)).await.map(drop)
            }
            Self::EndSession(end) => {
                lore_proto::client::actions(channel).end_session(named(end, client)).await.map(drop)
            }
            Self::CaptureFailure(failure) => {
                lore_proto::client::qa(channel).capture_failure(named(failure, client)).await.map(drop)
            }
            Self::RecordFixAttempt(attempt) => {
                lore_proto::client::qa(channel).record_fix_attempt(named(attempt, client)).await.map(drop)
            }
            Self::RecordTaskResult(result) => {
                lore_proto::client::qa(channel).record_task_result(named(result, client)).await.map(drop)
            }
            Self::AcknowledgeWarning(acknowledged) => {
                lore_proto::client::qa(channel).acknowledge_warning(named(acknowledged, client)).await.map(drop)
            }
            Self::RecordCallInjection(given) => {
                lore_proto::client::agent(channel).record_call_injection(named(given, client)).await.map(drop)
            }
            Self::RecordApplication(application) => {
                lore_proto::client::knowledge(channel).record_application(named(application, client)).await.map(drop)
            }
            Self::CreateDraft(draft) => {
                lore_proto::client::knowledge(channel).create_draft(named(draft, client)).await.map(drop)
            }
            Self::IndexDocument(document) => {
                lore_proto::client::knowledge(channel).index_document(named(document, client)).await.map(drop)
            }
            Self::RemoveDocument(document) => {
                lore_proto::client::knowledge(channel).remove_document(named(document, client)).await.map(drop)
            }
        }
    }
}

/// A request that says which client made the write (`x-lore-client`).
fn named<T>(message: T, client: &str) -> tonic::Request<T> {
    let mut request = tonic::Request::new(message);
    if !client.is_empty()
        && let Ok(value) = client.parse()
    {
        request.metadata_mut().insert(lore_proto::metadata::CLIENT, value);
    }
    request
}

/// True when the write may not have reached the server, or may be taken
/// later: keep it and send it again.
pub fn is_transient(status: &Status) -> bool {
    matches!(
        status.code(),
        Code::Unavailable
            // A revoked or mistyped token: keep the write until one works.
            | Code::Unauthenticated
            | Code::DeadlineExceeded
            | Code::Aborted
            | Code::ResourceExhausted
            | Code::Unknown
            | Code::Internal
            | Code::Cancelled
    )
}
