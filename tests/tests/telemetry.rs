//! OTLP trace export, received by a real OTLP/gRPC collector endpoint.

use lore_e2e::{ServerOptions, ServerProcess, TestDatabase};
use opentelemetry_proto::tonic::collector::trace::v1::trace_service_server::{TraceService, TraceServiceServer};
use opentelemetry_proto::tonic::collector::trace::v1::{ExportTraceServiceRequest, ExportTraceServiceResponse};
use opentelemetry_proto::tonic::common::v1::any_value::Value;
use tokio::sync::mpsc;
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_client::HealthClient;

/// A collector that forwards every export request to the test.
struct Collector {
    exports: mpsc::UnboundedSender<ExportTraceServiceRequest>,
}

#[tonic::async_trait]
impl TraceService for Collector {
    async fn export(
        &self,
        request: tonic::Request<ExportTraceServiceRequest>,
    ) -> Result<tonic::Response<ExportTraceServiceResponse>, tonic::Status> {
        let _ = self.exports.send(request.into_inner());
        Ok(tonic::Response::new(ExportTraceServiceResponse { partial_success: None }))
    }
}

fn string_value(value: &Option<opentelemetry_proto::tonic::common::v1::AnyValue>) -> Option<&str> {
    match value.as_ref()?.value.as_ref()? {
        Value::StringValue(text) => Some(text),
        _ => None,
    }
}

#[tokio::test]
async fn spans_of_rpcs_are_exported_over_otlp_when_an_endpoint_is_configured() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let collector_addr = listener.local_addr().unwrap();
    let (exports_tx, mut exports_rx) = mpsc::unbounded_channel();
    tokio::spawn(
        tonic::transport::Server::builder()
            .add_service(TraceServiceServer::new(Collector { exports: exports_tx }))
            .serve_with_incoming(tonic::transport::server::TcpIncoming::from(listener)),
    );

    let database = TestDatabase::new().await.unwrap();
    let mut server = ServerProcess::start(
        ServerOptions::with_database(&database.url)
            .env("LORE_TELEMETRY__OTLP_ENDPOINT", &format!("http://{collector_addr}"))
            .env("LORE_TELEMETRY__SERVICE_NAME", "lore-under-test"),
    )
    .await
    .unwrap();
    let mut health = HealthClient::new(server.channel().await);
    health.check(HealthCheckRequest { service: String::new() }).await.unwrap();
    // Shutting down flushes the batch exporter.
    server.stop().await;

    let mut found_rpc_span = false;
    let mut service_names = Vec::new();
    while let Ok(export) = exports_rx.try_recv() {
        for resource_spans in export.resource_spans {
            let resource = resource_spans.resource.unwrap_or_default();
            for attribute in &resource.attributes {
                if attribute.key == "service.name" {
                    service_names.extend(string_value(&attribute.value).map(str::to_owned));
                }
            }
            for span in resource_spans.scope_spans.iter().flat_map(|scope| &scope.spans) {
                let method = span.attributes.iter().find(|attribute| attribute.key == "method");
                if span.name == "grpc"
                    && method.and_then(|attribute| string_value(&attribute.value))
                        == Some("/grpc.health.v1.Health/Check")
                {
                    found_rpc_span = true;
                }
            }
        }
    }
    assert!(found_rpc_span, "no span for the Check call was exported");
    assert!(service_names.iter().any(|name| name == "lore-under-test"), "{service_names:?}");
}
