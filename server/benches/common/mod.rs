//! Timing helpers shared by the server's benchmarks.
// Each benchmark uses a part of this module.
#![allow(dead_code)]

pub mod failures;

use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

/// How many rows of `table` belong to `project`.
pub async fn project_rows(pool: &sqlx::PgPool, table: &str, project: &str) -> i64 {
    sqlx::query_scalar(sqlx::AssertSqlSafe(format!("SELECT count(*) FROM {table} WHERE project = $1")))
        .bind(project)
        .fetch_one(pool)
        .await
        .expect("count rows")
}

/// A histogram of microseconds.
pub fn histogram() -> Histogram<u64> {
    Histogram::<u64>::new(3).expect("histogram")
}

/// A quantile of a histogram of microseconds, in milliseconds.
pub fn millis(histogram: &Histogram<u64>, quantile: f64) -> f64 {
    histogram.value_at_quantile(quantile) as f64 / 1000.0
}

/// One markdown table row: the leading cells, then p50 and p99.
pub fn latency_row(cells: &str, histogram: &Histogram<u64>) {
    println!("| {cells} | {:.2} ms | {:.2} ms |", millis(histogram, 0.5), millis(histogram, 0.99));
}

/// Records how long `begin` was ago.
pub fn record(histogram: &mut Histogram<u64>, begin: Instant) {
    histogram.record(begin.elapsed().as_micros() as u64).expect("in range");
}

/// Runs `calls` timed calls of `call` over `clients` concurrent tasks.
pub async fn latencies<F, Fut>(clients: usize, calls: usize, call: F) -> (Histogram<u64>, Duration)
where
    F: Fn(usize, usize) -> Fut + Clone + Send + 'static,
    Fut: std::future::Future<Output = ()> + Send,
{
    let started = Instant::now();
    let tasks: Vec<_> = (0..clients)
        .map(|client| {
            let call = call.clone();
            tokio::spawn(async move {
                let mut histogram = histogram();
                for index in 0..calls / clients {
                    let begin = Instant::now();
                    call(client, index).await;
                    record(&mut histogram, begin);
                }
                histogram
            })
        })
        .collect();
    let mut total = histogram();
    for task in tasks {
        total.add(task.await.expect("benchmark task")).expect("same bounds");
    }
    (total, started.elapsed())
}

/// The sections named on the command line (`cargo bench --bench X -- a b`),
/// or every section when none is named.
pub fn wanted_sections() -> impl Fn(&str) -> bool {
    let wanted: Vec<String> = std::env::args().skip(1).filter(|arg| !arg.starts_with('-')).collect();
    move |section| wanted.is_empty() || wanted.iter().any(|name| name == section)
}

pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(0, |cores| cores.get())
}
