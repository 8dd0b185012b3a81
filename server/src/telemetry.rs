//! Logging and tracing: `tracing` to stderr as text or JSON, plus OTLP trace
//! export when an endpoint is configured. With no endpoint no exporter is
//! built, so telemetry costs nothing beyond the log lines.

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::WithExportConfig as _;
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing_subscriber::EnvFilter;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;

use crate::config::{LogConfig, LogFormat, TelemetryConfig};

/// Flushes and stops the trace exporter when dropped.
#[must_use = "dropping the guard stops trace export"]
pub struct TelemetryGuard {
    tracer_provider: Option<SdkTracerProvider>,
}

impl Drop for TelemetryGuard {
    fn drop(&mut self) {
        if let Some(provider) = self.tracer_provider.take()
            && let Err(error) = provider.shutdown()
        {
            eprintln!("lore-server: flushing traces failed: {error}");
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum TelemetryError {
    #[error("invalid log.filter: {0}")]
    Filter(#[from] tracing_subscriber::filter::ParseError),
    #[error("cannot build the OTLP exporter for {endpoint}: {source}")]
    Exporter { endpoint: String, source: opentelemetry_otlp::ExporterBuildError },
    #[error("a global tracing subscriber is already set")]
    AlreadySet,
}

/// Installs the global subscriber. Must run inside the Tokio runtime (the
/// OTLP exporter's channel is built on it).
pub fn init(log: &LogConfig, telemetry: &TelemetryConfig) -> Result<TelemetryGuard, TelemetryError> {
    let filter = match std::env::var("RUST_LOG") {
        Ok(filter) if !filter.is_empty() => EnvFilter::try_new(filter)?,
        _ => EnvFilter::try_new(&log.filter)?,
    };
    let (text, json) = match log.format {
        LogFormat::Text => (Some(tracing_subscriber::fmt::layer().with_writer(std::io::stderr)), None),
        LogFormat::Json => {
            (None, Some(tracing_subscriber::fmt::layer().json().flatten_event(true).with_writer(std::io::stderr)))
        }
    };

    let tracer_provider = match &telemetry.otlp_endpoint {
        Some(endpoint) => Some(otlp_tracer_provider(endpoint, &telemetry.service_name)?),
        None => None,
    };
    let otel = tracer_provider
        .as_ref()
        .map(|provider| tracing_opentelemetry::layer().with_tracer(provider.tracer("lore-server")));

    tracing_subscriber::registry()
        .with(filter)
        .with(text)
        .with(json)
        .with(otel)
        .try_init()
        .map_err(|_| TelemetryError::AlreadySet)?;
    Ok(TelemetryGuard { tracer_provider })
}

fn otlp_tracer_provider(endpoint: &str, service_name: &str) -> Result<SdkTracerProvider, TelemetryError> {
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_tonic()
        .with_endpoint(endpoint)
        .build()
        .map_err(|source| TelemetryError::Exporter { endpoint: endpoint.to_owned(), source })?;
    Ok(SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .with_resource(Resource::builder().with_service_name(service_name.to_owned()).build())
        .build())
}
