//! OTLP trace and metric export, received by a real OTLP/gRPC collector
//! endpoint.

use std::time::Duration;

use lore_e2e::{ServerOptions, ServerProcess, TestDatabase};
use lore_proto::v1 as proto;
use lore_proto::v1::action_service_client::ActionServiceClient;
use opentelemetry_proto::tonic::collector::metrics::v1::metrics_service_server::{
    MetricsService, MetricsServiceServer,
};
use opentelemetry_proto::tonic::collector::metrics::v1::{ExportMetricsServiceRequest, ExportMetricsServiceResponse};
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

/// A metrics collector that forwards every export request to the test.
struct MetricsCollector {
    exports: mpsc::UnboundedSender<ExportMetricsServiceRequest>,
}

#[tonic::async_trait]
impl MetricsService for MetricsCollector {
    async fn export(
        &self,
        request: tonic::Request<ExportMetricsServiceRequest>,
    ) -> Result<tonic::Response<ExportMetricsServiceResponse>, tonic::Status> {
        let _ = self.exports.send(request.into_inner());
        Ok(tonic::Response::new(ExportMetricsServiceResponse { partial_success: None }))
    }
}

/// The last value of every number data point in an export, by metric name.
fn metric_values(export: &ExportMetricsServiceRequest) -> std::collections::BTreeMap<String, f64> {
    use opentelemetry_proto::tonic::metrics::v1::metric::Data;
    use opentelemetry_proto::tonic::metrics::v1::number_data_point::Value as Number;
    let mut values = std::collections::BTreeMap::new();
    for metric in
        export.resource_metrics.iter().flat_map(|resource| &resource.scope_metrics).flat_map(|scope| &scope.metrics)
    {
        let points = match &metric.data {
            Some(Data::Gauge(gauge)) => &gauge.data_points,
            Some(Data::Sum(sum)) => &sum.data_points,
            _ => continue,
        };
        for point in points {
            let value = match point.value {
                Some(Number::AsInt(value)) => value as f64,
                Some(Number::AsDouble(value)) => value,
                None => continue,
            };
            values.insert(metric.name.clone(), value);
        }
    }
    values
}

#[tokio::test]
async fn the_sidecar_exports_its_status_figures_as_otlp_metrics() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let collector_addr = listener.local_addr().unwrap();
    let (exports_tx, mut exports_rx) = mpsc::unbounded_channel();
    tokio::spawn(
        tonic::transport::Server::builder()
            .add_service(MetricsServiceServer::new(MetricsCollector { exports: exports_tx }))
            .serve_with_incoming(tonic::transport::server::TcpIncoming::from(listener)),
    );
    // No server: what the agent logs stays spooled.
    let spool = tempfile::tempdir_in(lore_e2e::default_cache_dir()).unwrap();
    let otlp = format!("http://{collector_addr}");
    let sidecar = ServerProcess::start_sidecar(
        &format!("http://127.0.0.1:{}", lore_e2e::free_port()),
        spool.path(),
        &["--otlp-endpoint", &otlp, "--metrics-interval-secs", "1"],
    )
    .await
    .unwrap();
    let mut agent = ActionServiceClient::new(sidecar.channel().await);
    for step in 0..5 {
        let action = proto::Action {
            project: "metrics".into(),
            action_type: "shell".into(),
            outcome: proto::Outcome::Success as i32,
            category: format!("step-{step}"),
            ..Default::default()
        };
        agent.log_action(proto::LogActionRequest { action: Some(action) }).await.unwrap();
    }

    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    let values = loop {
        let export = tokio::time::timeout_at(deadline, exports_rx.recv()).await.expect("metrics in time").unwrap();
        let values = metric_values(&export);
        if values.get("lore.sidecar.spool.records") == Some(&5.0) {
            break values;
        }
    };
    assert_eq!(values["lore.sidecar.connected"], 0.0, "{values:?}");
    assert!(values["lore.sidecar.spool.size"] > 0.0, "{values:?}");
    assert!(values["lore.sidecar.spool.oldest_unacked_age"] >= 0.0, "{values:?}");
    for counter in ["lore.sidecar.shipped", "lore.sidecar.duplicates", "lore.sidecar.rejected", "lore.sidecar.dropped"]
    {
        assert_eq!(values[counter], 0.0, "{counter}: {values:?}");
    }
    assert_eq!(values["lore.sidecar.inbox.accepted"], 0.0, "{values:?}");
}
