//! Spool append throughput per fsync policy (`make bench`), next to the
//! floor of this disk: the same bytes written to one file with a single
//! fsync at the end.

use std::io::Write as _;
use std::sync::Arc;
use std::time::{Duration, Instant};

use lore_spool::{FsyncPolicy, Spool, SpoolConfig};

const APPENDS: usize = 200_000;
/// Concurrent appenders, like a sidecar serving many agent calls at once.
const APPENDERS: usize = 64;
/// About the size of a spooled action with a small context.
const PAYLOAD_BYTES: usize = 300;

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let base = lore_cache_dir();
    println!("\n## Spool appends ({APPENDS} records of {PAYLOAD_BYTES} bytes, {APPENDERS} concurrent appenders)\n");
    println!("| fsync policy | appends/s | MB/s |\n|---|---:|---:|");
    for (name, policy) in [
        ("always (default; group commit)", FsyncPolicy::Always),
        ("batch:2", FsyncPolicy::Batch(Duration::from_millis(2))),
        ("never", FsyncPolicy::Never),
    ] {
        let dir = tempfile::tempdir_in(&base).unwrap();
        let rate = runtime.block_on(appends_per_second(dir.path(), policy));
        println!("| {name} | {rate:.0} | {:.1} |", rate * PAYLOAD_BYTES as f64 / 1e6);
    }
    let dir = tempfile::tempdir_in(&base).unwrap();
    let started = Instant::now();
    let mut file = std::fs::File::create(dir.path().join("floor")).unwrap();
    let record = vec![b'x'; PAYLOAD_BYTES + 24];
    for _ in 0..APPENDS {
        file.write_all(&record).unwrap();
    }
    file.sync_all().unwrap();
    let rate = APPENDS as f64 / started.elapsed().as_secs_f64();
    println!("| baseline: plain writes, one fsync | {rate:.0} | {:.1} |", rate * PAYLOAD_BYTES as f64 / 1e6);
}

async fn appends_per_second(dir: &std::path::Path, fsync: FsyncPolicy) -> f64 {
    let (spool, _) = Spool::open(SpoolConfig { fsync, disk_budget_bytes: u64::MAX, ..SpoolConfig::new(dir) }).unwrap();
    let spool = Arc::new(spool);
    let started = Instant::now();
    let tasks: Vec<_> = (0..APPENDERS)
        .map(|_| {
            let spool = Arc::clone(&spool);
            tokio::spawn(async move {
                for _ in 0..APPENDS / APPENDERS {
                    spool.append(vec![vec![b'x'; PAYLOAD_BYTES]]).await.unwrap();
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
    let elapsed = started.elapsed();
    spool.close();
    (APPENDS / APPENDERS * APPENDERS) as f64 / elapsed.as_secs_f64()
}

/// Benchmarks write where the tests do (the project's cache directory), on
/// the same disk as a real spool would be.
fn lore_cache_dir() -> std::path::PathBuf {
    let dir = std::env::var_os("LORE_CACHE_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../.cache"));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
