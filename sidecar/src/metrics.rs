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

    for figure in FIGURES {
        let (figures, server) = (Arc::clone(&figures), server.clone());
        let read = figure.read;
        let callback = move |observer: &dyn opentelemetry::metrics::AsyncInstrument<u64>| {
            observer.observe(read(&figures), &server)
        };
        match figure.kind {
            Kind::Gauge => {
                meter
                    .u64_observable_gauge(figure.name)
                    .with_description(figure.description)
                    .with_unit(figure.unit)
                    .with_callback(callback)
                    .build();
            }
            Kind::Counter => {
                meter
                    .u64_observable_counter(figure.name)
                    .with_description(figure.description)
                    .with_unit(figure.unit)
                    .with_callback(callback)
                    .build();
            }
        }
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
    Ok(MetricsGuard { provider })
}

enum Kind {
    /// Where the sidecar stands now.
    Gauge,
    /// A total since the sidecar started.
    Counter,
}

/// One figure of [`Figures`] as an instrument.
struct Figure {
    name: &'static str,
    description: &'static str,
    unit: &'static str,
    kind: Kind,
    read: fn(&Figures) -> u64,
}

const FIGURES: [Figure; 10] = [
    Figure {
        name: "lore.sidecar.connected",
        description: "1 while an Ingest stream to the server is open",
        unit: "1",
        kind: Kind::Gauge,
        read: |figures| figures.connected() as u64,
    },
    Figure {
        name: "lore.sidecar.spool.records",
        description: "records spooled and not yet acknowledged",
        unit: "{record}",
        kind: Kind::Gauge,
        read: |figures| figures.spool.stats().unacked_records,
    },
    Figure {
        name: "lore.sidecar.spool.size",
        description: "bytes of the spool's segment files",
        unit: "By",
        kind: Kind::Gauge,
        read: |figures| figures.spool.stats().disk_bytes,
    },
    Figure {
        name: "lore.sidecar.shipped",
        description: "actions the server stored",
        unit: "{action}",
        kind: Kind::Counter,
        read: Figures::shipped,
    },
    Figure {
        name: "lore.sidecar.duplicates",
        description: "actions the server already had (replays)",
        unit: "{action}",
        kind: Kind::Counter,
        read: Figures::duplicates,
    },
    Figure {
        name: "lore.sidecar.rejected",
        description: "writes the server refused for good",
        unit: "{write}",
        kind: Kind::Counter,
        read: Figures::rejected,
    },
    Figure {
        name: "lore.sidecar.dropped",
        description: "records deleted unshipped by drop_oldest",
        unit: "{record}",
        kind: Kind::Counter,
        read: |figures| figures.spool.stats().dropped_records,
    },
    Figure {
        name: "lore.sidecar.inbox.accepted",
        description: "inbox lines spooled",
        unit: "{line}",
        kind: Kind::Counter,
        read: Figures::inbox_accepted,
    },
    Figure {
        name: "lore.sidecar.inbox.rejected",
        description: "inbox lines refused",
        unit: "{line}",
        kind: Kind::Counter,
        read: Figures::inbox_rejected,
    },
    Figure {
        name: "lore.sidecar.documents.indexed",
        description: "documents of the watched folders spooled for indexing",
        unit: "{document}",
        kind: Kind::Counter,
        read: Figures::documents_indexed,
    },
];
