//! The sidecar's figures as OpenTelemetry metrics over OTLP, when an
//! endpoint is configured: the same numbers `SidecarService.Status` gives,
//! read from the same [`Figures`], observed at each export.

use std::sync::Arc;
use std::time::Duration;

use opentelemetry::KeyValue;
use opentelemetry::metrics::MeterProvider as _;
use opentelemetry_otlp::WithExportConfig as _;
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::metrics::{PeriodicReader, SdkMeterProvider};

use crate::status::Figures;

/// Flushes the last figures and stops the export when dropped.
#[must_use = "dropping the guard stops the metric export"]
pub struct MetricsGuard {
    provider: SdkMeterProvider,
}

impl Drop for MetricsGuard {
    fn drop(&mut self) {
        if let Err(error) = self.provider.shutdown() {
            tracing::warn!(%error, "flushing the last metrics failed");
        }
    }
}

/// Starts exporting every `interval`. Must run inside the Tokio runtime (the
/// OTLP channel is built on it).
pub fn export(endpoint: &str, interval: Duration, figures: Arc<Figures>) -> anyhow::Result<MetricsGuard> {
    let exporter = opentelemetry_otlp::MetricExporter::builder()
        .with_tonic()
        .with_endpoint(endpoint)
        .build()
        .map_err(|error| anyhow::anyhow!("cannot build the OTLP metric exporter for {endpoint}: {error}"))?;
    let provider = SdkMeterProvider::builder()
        .with_reader(PeriodicReader::builder(exporter).with_interval(interval).build())
        .with_resource(Resource::builder().with_service_name("lore-sidecar").build())
        .build();
    let meter = provider.meter("lore-sidecar");
    let server = [KeyValue::new("server.address", figures.server.clone())];

    // Gauges: where the sidecar stands now.
    let gauges: [(&str, &str, &str, fn(&Figures) -> u64); 3] = [
        ("lore.sidecar.connected", "1 while an Ingest stream to the server is open", "1", |f| f.connected() as u64),
        ("lore.sidecar.spool.records", "records spooled and not yet acknowledged", "{record}", |f| {
            f.spool.stats().unacked_records
        }),
        ("lore.sidecar.spool.size", "bytes of the spool's segment files", "By", |f| f.spool.stats().disk_bytes),
    ];
    for (name, description, unit, read) in gauges {
        let (figures, server) = (Arc::clone(&figures), server.clone());
        meter
            .u64_observable_gauge(name)
            .with_description(description)
            .with_unit(unit)
            .with_callback(move |observer| observer.observe(read(&figures), &server))
            .build();
    }
    {
        let (figures, server) = (Arc::clone(&figures), server.clone());
        meter
            .f64_observable_gauge("lore.sidecar.spool.oldest_unacked_age")
            .with_description("age of the oldest unacknowledged record (0 when none)")
            .with_unit("s")
            .with_callback(move |observer| observer.observe(figures.oldest_unacked_age_seconds(), &server))
            .build();
    }

    // Counters: totals since the sidecar started.
    let counters: [(&str, &str, fn(&Figures) -> u64); 6] = [
        ("lore.sidecar.shipped", "actions the server stored", |f| f.shipped()),
        ("lore.sidecar.duplicates", "actions the server already had (replays)", |f| f.duplicates()),
        ("lore.sidecar.rejected", "writes the server refused for good", |f| f.rejected()),
        ("lore.sidecar.dropped", "records deleted unshipped by drop_oldest", |f| f.spool.stats().dropped_records),
        ("lore.sidecar.inbox.accepted", "inbox lines spooled", |f| f.inbox_accepted()),
        ("lore.sidecar.inbox.rejected", "inbox lines refused", |f| f.inbox_rejected()),
    ];
    for (name, description, read) in counters {
        let (figures, server) = (Arc::clone(&figures), server.clone());
        meter
            .u64_observable_counter(name)
            .with_description(description)
            .with_callback(move |observer| observer.observe(read(&figures), &server))
            .build();
    }
    Ok(MetricsGuard { provider })
}
