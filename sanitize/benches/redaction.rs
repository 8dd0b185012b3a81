//! Redaction throughput (`make bench`): what sanitizing costs per action and
//! in MB/s, next to the bare JSON parse of the same contexts measured in the
//! same run. Two sets: ordinary tool-call contexts (commands, paths, test
//! output; no secret), and the development corpus's samples (every one a
//! secret or a near miss), each as an action context. Then what each catalog
//! of provider formats costs alone: reading it, redacting with it, and the
//! memory its compiled rules take.

use std::time::Instant;

use lore_sanitize::{Catalogs, SanitizeConfig, Sanitizer};
use serde_json::{Value, json};

const ROUNDS: usize = 5;

fn main() {
    let sets = [("ordinary tool calls", texts(ordinary())), ("corpus samples", texts(corpus()))];
    // First, while no catalog has been read: each one's memory is then its own.
    per_catalog(&sets);
    let sanitizer = Sanitizer::new(SanitizeConfig::default());
    // The catalog compiles on first use; a server pays that once at start.
    let started = Instant::now();
    let summary = lore_sanitize::catalog_summary();
    let compile_ms = started.elapsed().as_secs_f64() * 1e3;
    println!("\n## Redaction ({} catalog rules, compiled in {compile_ms:.0} ms)\n", summary.rules);
    println!("| contexts | actions | per action: parse | parse + sanitize | sanitize alone | MB/s sanitized |");
    println!("|---|---:|---:|---:|---:|---:|");
    for (name, texts) in &sets {
        let bytes: usize = texts.iter().map(String::len).sum();
        let parse = parse_only(texts);
        let both = sanitize_all(&sanitizer, texts);
        let per = |seconds: f64| seconds / texts.len() as f64 * 1e6;
        let alone = (both - parse).max(0.0);
        println!(
            "| {name} | {} | {:.1} µs | {:.1} µs | {:.1} µs | {:.1} |",
            texts.len(),
            per(parse),
            per(both),
            per(alone),
            bytes as f64 / alone.max(1e-9) / 1e6
        );
    }
}

/// Each catalog alone beside the other layers (no catalog: the baseline of
/// the same run), then what ships. Memory is the growth of this process's
/// RSS when the catalog is first read, then when the corpus has woken its
/// rules: each catalog's rules are its own, so the growth is what it adds.
/// What ships adds gitleaks' generic allowlist to Kingfisher's catalog:
/// its row comes before gitleaks' so that its memory is its own.
fn per_catalog(sets: &[(&str, Vec<String>); 2]) {
    println!("\n## Redaction: each catalog alone, beside no catalog in the same run\n");
    println!(
        "| catalogs | rules | read in | ordinary, per action | corpus, per action | RSS: read | RSS: rules woken |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|");
    let [(_, ordinary), (_, corpus)] = sets;
    let alone = |catalogs| SanitizeConfig { catalogs, generic_allowlist: false, ..SanitizeConfig::default() };
    let both = Catalogs { gitleaks: true, kingfisher: true, credsweeper: false };
    // The last row's catalogs were read by the rows above: its memory is theirs.
    let rows = [
        ("none".to_owned(), alone(Catalogs::NONE)),
        ("kingfisher".to_owned(), alone(Catalogs::KINGFISHER)),
        ("shipped: kingfisher, gitleaks' generic allowlist".to_owned(), SanitizeConfig::default()),
        ("gitleaks".to_owned(), alone(Catalogs::GITLEAKS)),
        ("credsweeper".to_owned(), alone(Catalogs::CREDSWEEPER)),
        (both.to_string(), alone(both)),
    ];
    for (name, config) in rows {
        let catalogs = config.catalogs;
        let before = rss_kib();
        let started = Instant::now();
        let summary = lore_sanitize::catalog_summary_of(catalogs);
        let read_ms = started.elapsed().as_secs_f64() * 1e3;
        let read = rss_kib();
        let sanitizer = Sanitizer::new(config);
        let per = |texts: &[String]| {
            (sanitize_all(&sanitizer, texts) - parse_only(texts)).max(0.0) / texts.len() as f64 * 1e6
        };
        let (on_ordinary, on_corpus) = (per(ordinary), per(corpus));
        let woken = rss_kib();
        let mib = |kib: u64| format!("+{:.1} MiB", kib as f64 / 1024.0);
        println!(
            "| {name} | {} | {read_ms:.0} ms | {on_ordinary:.1} µs | {on_corpus:.1} µs | {} | {} |",
            summary.rules,
            mib(read.saturating_sub(before)),
            mib(woken.saturating_sub(before)),
        );
    }
}

fn texts(contexts: Vec<Value>) -> Vec<String> {
    contexts.iter().map(Value::to_string).collect()
}

fn parse_only(texts: &[String]) -> f64 {
    best_of(|| {
        for text in texts {
            std::hint::black_box(serde_json::from_str::<Value>(text).unwrap());
        }
    })
}

fn sanitize_all(sanitizer: &Sanitizer, texts: &[String]) -> f64 {
    best_of(|| {
        for text in texts {
            let mut value: Value = serde_json::from_str(text).unwrap();
            std::hint::black_box(sanitizer.sanitize_value(&mut value));
        }
    })
}

/// This process's resident memory, from `/proc/self/status` (0 elsewhere).
fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// The fastest of a few rounds: the least disturbed by a shared machine.
fn best_of(mut run: impl FnMut()) -> f64 {
    (0..ROUNDS)
        .map(|_| {
            let started = Instant::now();
            run();
            started.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

/// What hooks and SDKs log most: tool calls with a command or a file, and
/// their output.
fn ordinary() -> Vec<Value> {
    let commands = [
        "cargo test --workspace --no-fail-fast -- --test-threads=4",
        "npm install @types/node@20.11.5 --save-dev",
        "git log --oneline -n 20 -- server/src/store/actions.rs",
        "pytest tests/test_api.py -k 'not slow' -x -q",
        "docker build -t ghcr.io/acme/lore-server:v1.2.3-rc.1 .",
        "kubectl rollout status deploy/lore-server -n lore --timeout=120s",
    ];
    let output = "test store::actions::tests::ingest_replays_are_counted_as_duplicates ... ok\n\
        test qa::grouping::tests::brain_groups_on_constant_tokens ... FAILED\n\
        error[E0277]: the trait bound `Foo: Serialize` is not satisfied\n  --> server/src/grpc/mod.rs:42:17\n";
    (0..2000)
        .map(|index| {
            json!({
                "tool": if index % 3 == 0 { "Read" } else { "Bash" },
                "input": {
                    "command": commands[index % commands.len()],
                    "file_path": format!("/home/agent/work/lore/server/src/module_{index}.rs"),
                },
                "response": {"stdout": output.repeat(1 + index % 4), "exit_code": index % 2},
                "agent_session_id": format!("0190b6a0-7c3e-7a4b-9f10-{index:012x}"),
                "duration_ms": 1200 + index,
            })
        })
        .collect()
}

fn corpus() -> Vec<Value> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data/secrets/corpus");
    ["positives.jsonl", "negatives.jsonl"]
        .iter()
        .flat_map(|name| {
            let text = std::fs::read_to_string(dir.join(name)).expect("the corpus is in the repository");
            text.lines()
                .map(|line| {
                    let sample: Value = serde_json::from_str(line).unwrap();
                    json!({"tool": "Bash", "input": {"command": sample["text"]}, "outcome": "success"})
                })
                .collect::<Vec<_>>()
        })
        .collect()
}
