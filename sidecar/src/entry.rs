//! What one spool record holds: one write an agent made, in the order it was
//! made. Encoded with protobuf (the contract's own messages), so a spool
//! written by one sidecar version is read by the next.

use lore_proto::v1 as proto;
use prost::Message as _;

/// One spooled write.
#[derive(Clone, PartialEq, prost::Message)]
pub struct SpoolEntry {
    #[prost(oneof = "Write", tags = "1, 2, 3, 4, 6, 7, 8, 9, 10, 12, 13")]
    pub write: Option<Write>,
    /// For a write read from the inbox file: where the inbox stands after
    /// its line (see [`crate::inbox`]).
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
/// [`crate::learning_api`]), and the documents of the folders it watches.
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
    /// ([`crate::folders`]).
    #[prost(message, tag = "12")]
    IndexDocument(proto::IndexDocumentRequest),
    /// A markdown file gone from a watched folder.
    #[prost(message, tag = "13")]
    RemoveDocument(proto::RemoveDocumentRequest),
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
