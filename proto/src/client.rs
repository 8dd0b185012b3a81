//! How every Lore client builds its service clients, so the CLI, the agent
//! crate and the sidecar (whose proxy forwards what agents send) accept the
//! same messages: exports and resumes can be large.

use tonic::codegen::{Body, Bytes, StdError};

use crate::v1::action_service_client::ActionServiceClient;
use crate::v1::agent_service_client::AgentServiceClient;
use crate::v1::knowledge_service_client::KnowledgeServiceClient;
use crate::v1::qa_learning_service_client::QaLearningServiceClient;
use crate::v1::sidecar_service_client::SidecarServiceClient;

/// Messages up to this size, in either direction.
pub const MAX_MESSAGE_BYTES: usize = 64 * 1024 * 1024;

macro_rules! service_client {
    ($(#[$doc:meta])* $name:ident, $client:ident) => {
        $(#[$doc])*
        pub fn $name<T>(channel: T) -> $client<T>
        where
            T: tonic::client::GrpcService<tonic::body::Body>,
            T::Error: Into<StdError>,
            T::ResponseBody: Body<Data = Bytes> + Send + 'static,
            <T::ResponseBody as Body>::Error: Into<StdError> + Send,
        {
            $client::new(channel)
                .max_decoding_message_size(MAX_MESSAGE_BYTES)
                .max_encoding_message_size(MAX_MESSAGE_BYTES)
        }
    };
}

service_client!(
    /// `lore.v1.ActionService` over `channel`.
    actions,
    ActionServiceClient
);
service_client!(
    /// `lore.v1.KnowledgeService` over `channel`.
    knowledge,
    KnowledgeServiceClient
);
service_client!(
    /// `lore.v1.QaLearningService` over `channel`.
    qa,
    QaLearningServiceClient
);
service_client!(
    /// `lore.v1.AgentService` over `channel`.
    agent,
    AgentServiceClient
);
service_client!(
    /// `lore.v1.SidecarService` (a sidecar's own status) over `channel`.
    sidecar,
    SidecarServiceClient
);
