//! OTLP trace and metric export, received by an OTLP/gRPC collector built
//! from the opentelemetry-proto definitions: the names and attributes the
//! server and the sidecar export.

use std::time::Duration;

use lore_e2e::otlp::Collector;
use lore_e2e::{ServerOptions, ServerProcess, TestDatabase};
use lore_proto::v1 as proto;
use lore_proto::v1::action_service_client::ActionServiceClient;
use lore_proto::v1::knowledge_service_client::KnowledgeServiceClient;
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::common::v1::KeyValue;
use opentelemetry_proto::tonic::common::v1::any_value::Value;
use opentelemetry_proto::tonic::metrics::v1::metric::Data;
use opentelemetry_proto::tonic::trace::v1::span::SpanKind;

/// An attribute of a span or data point, as text (numbers formatted).
fn attribute(attributes: &[KeyValue], key: &str) -> Option<String> {
    let value = attributes.iter().find(|attribute| attribute.key == key)?.value.as_ref()?.value.as_ref()?;
    Some(match value {
        Value::StringValue(text) => text.clone(),
        Value::DoubleValue(number) => number.to_string(),
        Value::IntValue(number) => number.to_string(),
        Value::BoolValue(flag) => flag.to_string(),
        other => format!("{other:?}"),
    })
}

const TRACE_ID: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT_SPAN_ID: &str = "00f067aa0ba902b7";

#[tokio::test]
async fn rpc_spans_and_server_metrics_reach_an_otlp_collector_with_their_attributes() {
    let Collector { endpoint, spans: mut spans_rx, metrics: mut metrics_rx } = Collector::start().await;
    let database = TestDatabase::new().await.unwrap();
    let mut server = ServerProcess::start(
        ServerOptions::with_database(&database.url)
            .env("LORE_TELEMETRY__OTLP_ENDPOINT", &endpoint)
            .env("LORE_TELEMETRY__SERVICE_NAME", "lore-under-test")
            .env("LORE_TELEMETRY__METRICS_INTERVAL_SECS", "1"),
    )
    .await
    .unwrap();
    let mut actions = ActionServiceClient::new(server.channel().await);
    let session = lore_e2e::start_session(&mut actions, "otel", "agent-otel").await;
    let action = proto::Action {
        project: "otel".into(),
        session_id: session.session_id.clone(),
        action_id: uuid::Uuid::now_v7().to_string(),
        agent_id: "agent-otel".into(),
        action_type: "shell".into(),
        outcome: proto::Outcome::Success as i32,
        occurred_at: Some(lore_e2e::now()),
        ..Default::default()
    };
    actions.log_action(proto::LogActionRequest { action: Some(action) }).await.unwrap();
    let mut knowledge = KnowledgeServiceClient::new(server.channel().await);
    let mut search = tonic::Request::new(proto::SearchRequest {
        project: "otel".into(),
        query: Some(proto::SearchQuery { text: "flaky tests".into(), limit: 3, ..Default::default() }),
        ..Default::default()
    });
    let metadata = search.metadata_mut();
    metadata.insert("x-lore-session-id", session.session_id.parse().unwrap());
    metadata.insert("x-lore-agent-id", "agent-otel".parse().unwrap());
    metadata.insert("traceparent", format!("00-{TRACE_ID}-{PARENT_SPAN_ID}-01").parse().unwrap());
    knowledge.search(search).await.unwrap();
    // At least one periodic export after the calls, then the last one at
    // shutdown, which also flushes the spans.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    server.stop().await;

    let mut spans = Vec::new();
    let mut service_names = Vec::new();
    while let Ok(export) = spans_rx.try_recv() {
        for resource_spans in export.resource_spans {
            let resource = resource_spans.resource.unwrap_or_default();
            service_names.extend(attribute(&resource.attributes, "service.name"));
            spans.extend(resource_spans.scope_spans.into_iter().flat_map(|scope| scope.spans));
        }
    }
    assert!(service_names.iter().any(|name| name == "lore-under-test"), "{service_names:?}");
    let names: Vec<_> = spans.iter().map(|span| span.name.clone()).collect();
    let search = spans
        .iter()
        .find(|span| span.name == "lore.v1.KnowledgeService/Search")
        .unwrap_or_else(|| panic!("no span for Search among {names:?}"));
    let attributes = &search.attributes;
    let text = |key: &str| attribute(attributes, key).unwrap_or_else(|| panic!("{key} missing: {attributes:?}"));
    assert_eq!(search.kind, SpanKind::Server as i32);
    assert_eq!(text("rpc.system.name"), "grpc");
    assert_eq!(text("rpc.method"), "lore.v1.KnowledgeService/Search");
    assert_eq!(text("rpc.response.status_code"), "OK");
    assert_eq!(text("lore.project"), "otel");
    assert_eq!(text("gen_ai.conversation.id"), session.session_id);
    assert_eq!(text("gen_ai.agent.id"), "agent-otel");
    assert_eq!(text("gen_ai.tool.name"), "lore.v1.KnowledgeService/Search");
    let db_time_ms: f64 = text("lore.db_time_ms").parse().unwrap();
    assert!(db_time_ms > 0.0, "a search runs SQL: {db_time_ms}");
    assert_eq!(hex(&search.trace_id), TRACE_ID, "the client's traceparent is the parent");
    assert_eq!(hex(&search.parent_span_id), PARENT_SPAN_ID);

    let log_action = spans
        .iter()
        .find(|span| span.name == "lore.v1.ActionService/LogAction")
        .unwrap_or_else(|| panic!("no span for LogAction among {names:?}"));
    assert_eq!(attribute(&log_action.attributes, "lore.project").as_deref(), Some("otel"));
    assert_eq!(attribute(&log_action.attributes, "gen_ai.tool.name"), None, "the action log is not a tool");

    let mut durations = std::collections::BTreeMap::new();
    let mut values = std::collections::BTreeMap::new();
    let mut pool_states = std::collections::BTreeSet::new();
    while let Ok(export) = metrics_rx.try_recv() {
        values.extend(metric_values(&export));
        for metric in
            export.resource_metrics.iter().flat_map(|resource| &resource.scope_metrics).flat_map(|scope| &scope.metrics)
        {
            match (&metric.name[..], &metric.data) {
                ("rpc.server.call.duration", Some(Data::Histogram(histogram))) => {
                    assert_eq!(metric.unit, "s");
                    for point in &histogram.data_points {
                        let method = attribute(&point.attributes, "rpc.method").unwrap();
                        let status = attribute(&point.attributes, "rpc.response.status_code").unwrap();
                        durations.insert((method, status), point.count);
                    }
                }
                ("db.client.connection.count", Some(Data::Gauge(gauge))) => {
                    pool_states.extend(
                        gauge
                            .data_points
                            .iter()
                            .filter_map(|point| attribute(&point.attributes, "db.client.connection.state")),
                    );
                }
                _ => {}
            }
        }
    }
    let count = |method: &str| durations.get(&(method.to_owned(), "OK".to_owned())).copied();
    assert_eq!(count("lore.v1.ActionService/LogAction"), Some(1), "{durations:?}");
    assert_eq!(count("lore.v1.KnowledgeService/Search"), Some(1), "{durations:?}");
    assert_eq!(pool_states, ["idle".to_owned(), "used".to_owned()].into());
    // The LogAction, then the Search as a tool call of the session.
    assert_eq!(values.get("lore.actions.stored"), Some(&2.0), "{values:?}");
    assert_eq!(values.get("lore.tool_calls.dropped"), None, "nothing dropped, nothing reported: {values:?}");
    let keyword_index = values.get("lore.knowledge.keyword_index.memory").copied().unwrap_or(0.0);
    assert!(keyword_index > 0.0, "the keyword index's memory is reported: {values:?}");
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
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
    let Collector { endpoint: otlp, metrics: mut exports_rx, .. } = Collector::start().await;
    // No server: what the agent logs stays spooled.
    let spool = tempfile::tempdir_in(lore_e2e::default_cache_dir()).unwrap();
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
