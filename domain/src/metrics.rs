//! The instruments the domain records on, from the global meter provider
//! the server's telemetry installs (built on first use, after it).

use std::sync::OnceLock;

use opentelemetry::metrics::{Counter, Histogram};

pub struct Metrics {
    pub actions_stored: Counter<u64>,
    pub actions_duplicate: Counter<u64>,
    pub watch_lag: Histogram<f64>,
}

pub fn metrics() -> &'static Metrics {
    static METRICS: OnceLock<Metrics> = OnceLock::new();
    METRICS.get_or_init(|| {
        let meter = opentelemetry::global::meter("lore-server");
        Metrics {
            actions_stored: meter
                .u64_counter("lore.actions.stored")
                .with_unit("{action}")
                .with_description("Actions written to the log (LogAction, Ingest and tool calls)")
                .build(),
            actions_duplicate: meter
                .u64_counter("lore.actions.duplicates")
                .with_unit("{action}")
                .with_description("Actions sent again with an id already stored, and not stored twice")
                .build(),
            watch_lag: meter
                .f64_histogram("lore.knowledge.watch.lag")
                .with_unit("s")
                .with_description("From a watched markdown file's change to its indexing")
                .build(),
        }
    })
}
