//! Logs, traces and metrics. `tracing` writes to stderr as text or JSON;
//! when an OTLP endpoint is configured, spans and metrics are exported to it
//! as well. With no endpoint no exporter is built, the RPC layer passes
//! calls straight through and every instrument is OpenTelemetry's no-op: the
//! cost is the log lines.
//!
//! Names follow the OpenTelemetry semantic conventions of the
//! `opentelemetry-semantic-conventions` crate in Cargo.lock (0.33: semconv
//! 1.42.0, [`SEMCONV_SCHEMA_URL`]): one span per RPC named after its method
//! (`rpc.system.name`, `rpc.method`, `rpc.response.status_code`), with the
//! GenAI attributes where they fit — `gen_ai.conversation.id` is the
//! session of `x-lore-session-id`, `gen_ai.agent.id` the agent of
//! `x-lore-agent-id`, `gen_ai.tool.name` the method of a Knowledge or QA
//! call — plus `lore.project` and `lore.db_time_ms` (time spent in SQL
//! statements run within the call). `traceparent` from the client is the
//! parent of the span.
//!
//! Metrics: `rpc.server.call.duration` (s, by method and status: rate,
//! latency and errors in one histogram), `db.client.connection.count` (by
//! state), `lore.actions.stored`, `lore.actions.duplicates`,
//! `lore.tool_calls.dropped` and `lore.knowledge.watch.lag` (s from a file's
//! change to its indexing).

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use opentelemetry::KeyValue;
use opentelemetry::metrics::{Histogram, Meter, ObservableGauge};
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::WithExportConfig as _;
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::metrics::{PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::SdkTracerProvider;
use opentelemetry_semantic_conventions::attribute as semconv;
use opentelemetry_semantic_conventions::metric as semconv_metric;
use tonic::body::Body;
use tracing::field::Empty;
use tracing_opentelemetry::OpenTelemetrySpanExt as _;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::util::SubscriberInitExt as _;
use tracing_subscriber::{EnvFilter, Layer as _};

use crate::config::{LogConfig, LogFormat, TelemetryConfig};
use crate::gate::{Answer, CallObserver, Gate, GateLayer, Inner, observe};

pub use opentelemetry_semantic_conventions::SCHEMA_URL as SEMCONV_SCHEMA_URL;

/// The name of the per-RPC span (its OpenTelemetry name is the method).
const RPC_SPAN: &str = "grpc";

/// Flushes and stops the exporters when dropped.
#[must_use = "dropping the guard stops export"]
pub struct TelemetryGuard {
    tracer_provider: Option<SdkTracerProvider>,
    meter_provider: Option<SdkMeterProvider>,
}

impl TelemetryGuard {
    /// Whether spans and metrics go anywhere.
    pub fn exporting(&self) -> bool {
        self.tracer_provider.is_some()
    }
}

impl Drop for TelemetryGuard {
    fn drop(&mut self) {
        if let Some(provider) = self.meter_provider.take()
            && let Err(error) = provider.shutdown()
        {
            eprintln!("lore-server: flushing metrics failed: {error}");
        }
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

/// Installs the global subscriber, meter provider and propagator. Must run
/// inside the Tokio runtime (the OTLP exporters' channels are built on it)
/// and before anything records a metric.
pub fn init(log: &LogConfig, telemetry: &TelemetryConfig) -> Result<TelemetryGuard, TelemetryError> {
    let filter = || match std::env::var("RUST_LOG") {
        Ok(filter) if !filter.is_empty() => EnvFilter::try_new(filter),
        _ => EnvFilter::try_new(&log.filter),
    };
    let logs = match log.format {
        LogFormat::Text => tracing_subscriber::fmt::layer().with_writer(std::io::stderr).boxed(),
        LogFormat::Json => {
            tracing_subscriber::fmt::layer().json().flatten_event(true).with_writer(std::io::stderr).boxed()
        }
    }
    .with_filter(filter()?);

    let (tracer_provider, meter_provider) = match &telemetry.otlp_endpoint {
        Some(endpoint) => {
            let resource = Resource::builder()
                .with_service_name(telemetry.service_name.clone())
                .with_schema_url([], SEMCONV_SCHEMA_URL)
                .build();
            let interval = Duration::from_secs(telemetry.metrics_interval_secs);
            (
                Some(otlp_tracer_provider(endpoint, resource.clone())?),
                Some(otlp_meter_provider(endpoint, resource, interval)?),
            )
        }
        None => (None, None),
    };
    // Spans go out at the log filter's level; the DB clock also needs
    // sqlx's per-statement events, which the logs leave out.
    let otel = match &tracer_provider {
        Some(provider) => {
            Some(tracing_opentelemetry::layer().with_tracer(provider.tracer("lore-server")).with_filter(filter()?))
        }
        None => None,
    };
    let db_clock = tracer_provider.as_ref().map(|_| {
        DbClock.with_filter(tracing_subscriber::filter::filter_fn(|metadata| {
            metadata.target() == "sqlx::query" || (metadata.is_span() && metadata.name() == RPC_SPAN)
        }))
    });

    tracing_subscriber::registry()
        .with(logs)
        .with(otel)
        .with(db_clock)
        .try_init()
        .map_err(|_| TelemetryError::AlreadySet)?;
    if let Some(provider) = &meter_provider {
        opentelemetry::global::set_meter_provider(provider.clone());
        opentelemetry::global::set_text_map_propagator(TraceContextPropagator::new());
        EXPORTING.get_or_init(|| true);
    }
    Ok(TelemetryGuard { tracer_provider, meter_provider })
}

fn otlp_tracer_provider(endpoint: &str, resource: Resource) -> Result<SdkTracerProvider, TelemetryError> {
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_tonic()
        .with_endpoint(endpoint)
        .build()
        .map_err(|source| TelemetryError::Exporter { endpoint: endpoint.to_owned(), source })?;
    Ok(SdkTracerProvider::builder().with_batch_exporter(exporter).with_resource(resource).build())
}

fn otlp_meter_provider(
    endpoint: &str,
    resource: Resource,
    interval: Duration,
) -> Result<SdkMeterProvider, TelemetryError> {
    let exporter = opentelemetry_otlp::MetricExporter::builder()
        .with_tonic()
        .with_endpoint(endpoint)
        .build()
        .map_err(|source| TelemetryError::Exporter { endpoint: endpoint.to_owned(), source })?;
    let reader = PeriodicReader::builder(exporter).with_interval(interval).build();
    Ok(SdkMeterProvider::builder().with_reader(reader).with_resource(resource).build())
}

/// Set once [`init`] configured an exporter.
static EXPORTING: OnceLock<bool> = OnceLock::new();

fn exporting() -> bool {
    EXPORTING.get().copied().unwrap_or(false)
}

/// The server's instruments. No-ops until [`init`] sets a meter provider
/// (and for ever when it sets none).
#[derive(Debug)]
pub struct Metrics {
    pub rpc_duration: Histogram<f64>,
}

/// The instruments, built from the global meter provider on first use.
pub fn metrics() -> &'static Metrics {
    static METRICS: OnceLock<Metrics> = OnceLock::new();
    METRICS.get_or_init(|| {
        let meter = meter();
        Metrics {
            rpc_duration: meter
                .f64_histogram(semconv_metric::RPC_SERVER_CALL_DURATION)
                .with_unit("s")
                .with_description("Duration of gRPC calls, by method and status")
                .with_boundaries(vec![
                    0.000_5, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
                ])
                .build(),
        }
    })
}

fn meter() -> Meter {
    opentelemetry::global::meter("lore-server")
}

/// Reports the connection pool's use while the returned gauge lives.
pub fn observe_pool(pool: sqlx::PgPool) -> ObservableGauge<i64> {
    meter()
        .i64_observable_gauge(semconv_metric::DB_CLIENT_CONNECTION_COUNT)
        .with_unit("{connection}")
        .with_description("Connections of the pool, by state")
        .with_callback(move |observer| {
            let (size, idle) = (i64::from(pool.size()), pool.num_idle() as i64);
            let pool_name = KeyValue::new(semconv::DB_CLIENT_CONNECTION_POOL_NAME, "lore");
            let state = |state: &'static str| KeyValue::new(semconv::DB_CLIENT_CONNECTION_STATE, state);
            observer.observe(idle, &[pool_name.clone(), state("idle")]);
            observer.observe(size - idle, &[pool_name, state("used")]);
        })
        .build()
}

/// Reports the memory of this replica's keyword index while the returned
/// gauge lives; none when the index is switched off.
pub fn observe_keyword_index(knowledge: lore_domain::knowledge::KnowledgeBase) -> Option<ObservableGauge<u64>> {
    knowledge.keyword_index_bytes()?;
    let gauge = meter()
        .u64_observable_gauge("lore.knowledge.keyword_index.memory")
        .with_unit("By")
        .with_description("Memory held by this replica's in-memory keyword index")
        .with_callback(move |observer| observer.observe(knowledge.keyword_index_bytes().unwrap_or(0), &[]))
        .build();
    Some(gauge)
}

/// The span of one call, for tonic's `trace_fn`: named after the method,
/// child of the client's `traceparent` when telemetry exports.
pub fn rpc_span(request: &http::Request<()>) -> tracing::Span {
    let method = request.uri().path().trim_start_matches('/');
    let header = |name: &str| request.headers().get(name).and_then(|value| value.to_str().ok());
    let tool = crate::tool_calls::tool_category(method).map(|_| method);
    let span = tracing::info_span!(
        RPC_SPAN,
        otel.name = method,
        otel.kind = "server",
        otel.status_code = Empty,
        rpc.system.name = "grpc",
        rpc.method = method,
        rpc.response.status_code = Empty,
        gen_ai.conversation.id = header(lore_proto::metadata::SESSION_ID),
        gen_ai.agent.id = header(lore_proto::metadata::AGENT_ID),
        gen_ai.tool.name = tool,
        lore.project = Empty,
        lore.db_time_ms = Empty,
    );
    if exporting() {
        let parent = opentelemetry::global::get_text_map_propagator(|propagator| {
            propagator.extract(&opentelemetry_http_headers::Extractor(request.headers()))
        });
        // Only fails when the span is disabled; it then has no parent to set.
        let _ = span.set_parent(parent);
    }
    span
}

/// Records the project a call is about on its span.
pub fn record_project(project: &str) {
    tracing::Span::current().record("lore.project", project);
}

mod opentelemetry_http_headers {
    /// Reads W3C trace context from request headers.
    pub struct Extractor<'a>(pub &'a http::HeaderMap);

    impl opentelemetry::propagation::Extractor for Extractor<'_> {
        fn get(&self, key: &str) -> Option<&str> {
            self.0.get(key).and_then(|value| value.to_str().ok())
        }

        fn keys(&self) -> Vec<&str> {
            self.0.keys().map(http::HeaderName::as_str).collect()
        }
    }
}

/// Times each call and records how it ended on its span and in
/// `rpc.server.call.duration`. Passes calls straight through when nothing
/// is exported.
pub type RpcTelemetryLayer = GateLayer<RpcTelemetry>;

impl RpcTelemetryLayer {
    pub fn from_global() -> Self {
        GateLayer::new(RpcTelemetry { enabled: exporting() })
    }
}

#[derive(Debug, Clone)]
pub struct RpcTelemetry {
    enabled: bool,
}

impl Gate for RpcTelemetry {
    fn around<S: Inner>(&self, request: http::Request<Body>, mut inner: S) -> Answer<S> {
        if !self.enabled {
            return Box::pin(inner.call(request));
        }
        let method = request.uri().path().trim_start_matches('/').to_owned();
        let started = Instant::now();
        Box::pin(async move {
            // Polled inside the call's span (tonic enters it around the
            // whole stack).
            let span = tracing::Span::current();
            let response = inner.call(request).await?;
            Ok(observe(response, CallEnd { span, method, started }))
        })
    }
}

struct CallEnd {
    span: tracing::Span,
    method: String,
    started: Instant,
}

impl CallObserver for CallEnd {
    fn end(self, code: tonic::Code, _message: &str) {
        let status = status_name(code);
        metrics().rpc_duration.record(
            self.started.elapsed().as_secs_f64(),
            &[
                KeyValue::new(semconv::RPC_SYSTEM_NAME, "grpc"),
                KeyValue::new(semconv::RPC_METHOD, self.method),
                KeyValue::new(semconv::RPC_RESPONSE_STATUS_CODE, status),
            ],
        );
        self.span.record("rpc.response.status_code", status);
        if is_server_error(code) {
            self.span.record("otel.status_code", "ERROR");
        }
        if let Some(seconds) = db_time(&self.span) {
            self.span.record("lore.db_time_ms", seconds * 1e3);
        }
    }
}

/// Server spans are errors only for codes that mean the server failed
/// (the RPC conventions' list), not for a client's bad request.
fn is_server_error(code: tonic::Code) -> bool {
    use tonic::Code;
    matches!(
        code,
        Code::Unknown
            | Code::DeadlineExceeded
            | Code::Unimplemented
            | Code::Internal
            | Code::Unavailable
            | Code::DataLoss
    )
}

/// The status as the conventions spell it: `OK`, `NOT_FOUND`, ...
fn status_name(code: tonic::Code) -> &'static str {
    use tonic::Code;
    match code {
        Code::Ok => "OK",
        Code::Cancelled => "CANCELLED",
        Code::Unknown => "UNKNOWN",
        Code::InvalidArgument => "INVALID_ARGUMENT",
        Code::DeadlineExceeded => "DEADLINE_EXCEEDED",
        Code::NotFound => "NOT_FOUND",
        Code::AlreadyExists => "ALREADY_EXISTS",
        Code::PermissionDenied => "PERMISSION_DENIED",
        Code::ResourceExhausted => "RESOURCE_EXHAUSTED",
        Code::FailedPrecondition => "FAILED_PRECONDITION",
        Code::Aborted => "ABORTED",
        Code::OutOfRange => "OUT_OF_RANGE",
        Code::Unimplemented => "UNIMPLEMENTED",
        Code::Internal => "INTERNAL",
        Code::Unavailable => "UNAVAILABLE",
        Code::DataLoss => "DATA_LOSS",
        Code::Unauthenticated => "UNAUTHENTICATED",
    }
}

/// Seconds the call's statements took, summed by [`DbClock`] on its span.
fn db_time(span: &tracing::Span) -> Option<f64> {
    span.with_subscriber(|(id, dispatch)| {
        let registry = dispatch.downcast_ref::<tracing_subscriber::Registry>()?;
        let span = registry.span(id)?;
        span.extensions().get::<DbTime>().map(|time| time.0)
    })
    .flatten()
}

/// Seconds of SQL within one RPC span.
struct DbTime(f64);

/// Adds the duration of every statement sqlx runs (its `sqlx::query`
/// events carry `elapsed_secs`) to the RPC span it ran in. Statements a
/// background task runs for a call (LogAction's group commit) are not in
/// the call's span and not counted.
struct DbClock;

impl<S> tracing_subscriber::Layer<S> for DbClock
where
    S: tracing::Subscriber + for<'lookup> LookupSpan<'lookup>,
{
    fn on_event(&self, event: &tracing::Event<'_>, context: tracing_subscriber::layer::Context<'_, S>) {
        let mut elapsed = Elapsed(None);
        event.record(&mut elapsed);
        let Some(seconds) = elapsed.0 else { return };
        let Some(rpc) = context.event_scope(event).and_then(|mut scope| scope.find(|span| span.name() == RPC_SPAN))
        else {
            return;
        };
        let mut extensions = rpc.extensions_mut();
        match extensions.get_mut::<DbTime>() {
            Some(total) => total.0 += seconds,
            None => extensions.insert(DbTime(seconds)),
        }
    }
}

struct Elapsed(Option<f64>);

impl tracing::field::Visit for Elapsed {
    fn record_f64(&mut self, field: &tracing::field::Field, value: f64) {
        if field.name() == "elapsed_secs" {
            self.0 = Some(value);
        }
    }

    fn record_debug(&mut self, _field: &tracing::field::Field, _value: &dyn std::fmt::Debug) {}
}
