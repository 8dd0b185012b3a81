//! The gRPC server: the three Lore services, the standard health service and
//! server reflection (v1 and v1alpha, so any grpcurl works without proto
//! files), with graceful shutdown.

mod actions;
mod agent;
pub mod convert;
pub(crate) mod knowledge;
pub(crate) mod qa;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tonic::transport::Server;
use tonic::transport::server::Router;
use tonic::transport::server::TcpIncoming;
use tonic_health::ServingStatus;
use tonic_health::server::HealthReporter;

use lore_proto::v1::action_service_server::ActionServiceServer;
use lore_proto::v1::agent_service_server::AgentServiceServer;
use lore_proto::v1::knowledge_service_server::KnowledgeServiceServer;
use lore_proto::v1::qa_learning_service_server::QaLearningServiceServer;

pub use actions::ActionsApi;
pub use agent::AgentApi;
pub use knowledge::KnowledgeApi;
pub use qa::QaLearningApi;

pub use crate::services::Services;
use lore_types::scope::ProjectScope;

/// The projects the caller may touch: its token's, set by the auth layer
/// before any handler runs; every project when auth is switched off.
pub(crate) fn request_scope<T>(request: &tonic::Request<T>) -> ProjectScope {
    crate::auth::scope_of(request.extensions())
}

/// Whether the caller holds an admin's token (with auth off nobody does:
/// what is held for review is then shown to no client).
pub(crate) fn is_admin<T>(request: &tonic::Request<T>) -> bool {
    request
        .extensions()
        .get::<std::sync::Arc<crate::auth::Caller>>()
        .is_some_and(|caller| caller.role == crate::auth::Role::Admin)
}

/// Who is writing: the caller's token (set by the auth layer), what the
/// client says it is, and the agent and session it speaks for.
pub(crate) fn request_origin<T>(request: &tonic::Request<T>) -> lore_types::trust::Origin {
    let metadata = request.metadata();
    let header = |name: &str| metadata.get(name).and_then(|value| value.to_str().ok());
    let caller = request.extensions().get::<std::sync::Arc<crate::auth::Caller>>();
    let session = header(lore_proto::metadata::SESSION_ID).and_then(|value| uuid::Uuid::parse_str(value).ok());
    lore_types::trust::Origin::caller(
        caller.map(|caller| (caller.name.as_str(), <&str>::from(caller.role))),
        header(lore_proto::metadata::CLIENT),
    )
    .in_session(header(lore_proto::metadata::AGENT_ID), session)
}

pub use lore_proto::SERVICE_NAMES;

#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("cannot build the reflection service: {0}")]
    Reflection(#[from] tonic_reflection::server::Error),
    #[error("gRPC server failed: {0}")]
    Transport(#[from] tonic::transport::Error),
}

/// Serves until `shutdown` resolves, then drains: health turns NOT_SERVING
/// (so load balancers stop sending), no new connections are accepted, and
/// in-flight calls get up to `grace` to finish before their connections are
/// closed.
pub async fn serve(
    services: Services,
    listener: TcpListener,
    grace: Duration,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    let (health_reporter, health_service) = tonic_health::server::health_reporter();
    set_lore_status(&health_reporter, ServingStatus::Serving).await;

    let reflection_v1 = reflection().build_v1()?;
    let reflection_v1alpha = reflection().build_v1alpha()?;

    // Turns true when the drain starts: endless streams end, the grace
    // period starts.
    let (draining_tx, draining) = tokio::sync::watch::channel(false);
    let signal = async move {
        shutdown.await;
        tracing::info!(grace_secs = grace.as_secs(), "shutting down: draining in-flight calls");
        set_lore_status(&health_reporter, ServingStatus::NotServing).await;
        draining_tx.send_replace(true);
    };
    let mut drain_started = draining.clone();

    let incoming = TcpIncoming::from(listener).with_nodelay(Some(true));
    let mut builder = Server::builder();
    if let Some(tls) = services.tls.clone() {
        builder = builder.tls_config(tls)?;
    }
    let server = builder
        .trace_fn(crate::telemetry::rpc_span)
        // Outermost first: telemetry sees every call, even those refused;
        // the limits know the caller auth found; a tool call is logged only
        // once it is let in.
        .layer(crate::telemetry::RpcTelemetryLayer::from_global())
        .layer(crate::auth::AuthLayer::authenticating(services.auth.clone()))
        .layer(crate::limits::LimitsLayer::new(Arc::clone(&services.limits)))
        .layer(crate::tool_calls::ToolCallLayer::recording(services.tool_calls.clone()))
        .layer(crate::gate::DrainLayer::watching(draining))
        .add_service(health_service)
        .add_service(reflection_v1)
        .add_service(reflection_v1alpha);
    let server = lore_services(server, &services).serve_with_incoming_shutdown(incoming, signal);

    tokio::select! {
        result = server => result?,
        () = async {
            // The sender goes only with the server, which then ends first.
            if drain_started.wait_for(|draining| *draining).await.is_err() {
                std::future::pending::<()>().await;
            }
            tokio::time::sleep(grace).await;
        } => {
            tracing::warn!("grace period over: closing connections with calls still in flight");
        }
    }
    if let Some(tool_calls) = &services.tool_calls {
        tool_calls.drain().await;
    }
    Ok(())
}

/// Server reflection of every service, each other included, so `list`
/// shows the same through either version. Services are named one by one:
/// the descriptor set also holds lore.v1.SidecarService, which only
/// lore-sidecar serves.
fn reflection() -> tonic_reflection::server::Builder<'static> {
    let builder = tonic_reflection::server::Builder::configure()
        .register_encoded_file_descriptor_set(lore_proto::FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(tonic_reflection::pb::v1::FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(tonic_reflection::pb::v1alpha::FILE_DESCRIPTOR_SET);
    SERVICE_NAMES
        .into_iter()
        .chain([
            "grpc.health.v1.Health",
            "grpc.reflection.v1.ServerReflection",
            "grpc.reflection.v1alpha.ServerReflection",
        ])
        .fold(builder, |builder, name| builder.with_service_name(name))
}

/// The four Lore services on `router`, each taking messages up to the
/// configured size.
fn lore_services<L>(router: Router<L>, services: &Services) -> Router<L> {
    let limit = services.max_message_bytes;
    let actions = ActionsApi::new(services.actions.clone(), services.briefer.clone(), services.reports.clone());
    let knowledge =
        KnowledgeApi::new(services.knowledge.clone(), services.briefer.ledger().clone(), services.erasure.clone());
    let qa = QaLearningApi::new(services.qa.clone(), services.briefer.ledger().clone(), services.settings.clone());
    let agent = AgentApi::new(services.briefer.clone(), services.quarantine.clone());
    router
        .add_service(
            ActionServiceServer::new(actions).max_decoding_message_size(limit).max_encoding_message_size(limit),
        )
        .add_service(
            KnowledgeServiceServer::new(knowledge).max_decoding_message_size(limit).max_encoding_message_size(limit),
        )
        .add_service(QaLearningServiceServer::new(qa).max_decoding_message_size(limit).max_encoding_message_size(limit))
        .add_service(AgentServiceServer::new(agent).max_decoding_message_size(limit).max_encoding_message_size(limit))
}

/// Sets the status of the whole server ("") and of each Lore service.
async fn set_lore_status(reporter: &HealthReporter, status: ServingStatus) {
    reporter.set_service_status("", status).await;
    for service in SERVICE_NAMES {
        reporter.set_service_status(service, status).await;
    }
}
