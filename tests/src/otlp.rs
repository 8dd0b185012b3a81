//! An OTLP/gRPC collector for tests and benchmarks, built from the
//! opentelemetry-proto definitions: it accepts trace and metric exports on
//! a local port and hands every request over as it arrives.

use opentelemetry_proto::tonic::collector::metrics::v1::metrics_service_server::{
    MetricsService, MetricsServiceServer,
};
use opentelemetry_proto::tonic::collector::metrics::v1::{ExportMetricsServiceRequest, ExportMetricsServiceResponse};
use opentelemetry_proto::tonic::collector::trace::v1::trace_service_server::{TraceService, TraceServiceServer};
use opentelemetry_proto::tonic::collector::trace::v1::{ExportTraceServiceRequest, ExportTraceServiceResponse};
use tokio::sync::mpsc;

/// A running collector: where to export, and what was exported.
pub struct Collector {
    /// `http://127.0.0.1:<port>`.
    pub endpoint: String,
    pub spans: mpsc::UnboundedReceiver<ExportTraceServiceRequest>,
    pub metrics: mpsc::UnboundedReceiver<ExportMetricsServiceRequest>,
}

impl Collector {
    /// Serves until the runtime ends.
    pub async fn start() -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind the collector");
        let endpoint = format!("http://{}", listener.local_addr().expect("collector address"));
        let (spans_tx, spans) = mpsc::unbounded_channel();
        let (metrics_tx, metrics) = mpsc::unbounded_channel();
        tokio::spawn(
            tonic::transport::Server::builder()
                .add_service(TraceServiceServer::new(Forward(spans_tx)))
                .add_service(MetricsServiceServer::new(Forward(metrics_tx)))
                .serve_with_incoming(tonic::transport::server::TcpIncoming::from(listener)),
        );
        Self { endpoint, spans, metrics }
    }
}

/// Hands each export request to the receiver and answers at once.
struct Forward<T>(mpsc::UnboundedSender<T>);

#[tonic::async_trait]
impl TraceService for Forward<ExportTraceServiceRequest> {
    async fn export(
        &self,
        request: tonic::Request<ExportTraceServiceRequest>,
    ) -> Result<tonic::Response<ExportTraceServiceResponse>, tonic::Status> {
        let _ = self.0.send(request.into_inner());
        Ok(tonic::Response::new(ExportTraceServiceResponse { partial_success: None }))
    }
}

#[tonic::async_trait]
impl MetricsService for Forward<ExportMetricsServiceRequest> {
    async fn export(
        &self,
        request: tonic::Request<ExportMetricsServiceRequest>,
    ) -> Result<tonic::Response<ExportMetricsServiceResponse>, tonic::Status> {
        let _ = self.0.send(request.into_inner());
        Ok(tonic::Response::new(ExportMetricsServiceResponse { partial_success: None }))
    }
}
