//! `make soak`: the soak with faults (see `lore_e2e::soak`) for
//! `LORE_SOAK_SECS` (default 600) with `LORE_SOAK_AGENTS` agents (default
//! 6, two per sidecar). Exits non-zero when an acknowledged action was lost
//! or doubled, a client saw an error it should not retry, or memory grew
//! over the quiet phase.

use lore_e2e::soak::{self, Settings};

#[tokio::main]
async fn main() {
    let verdict = soak::run(&Settings::from_env(600, 6)).await.expect("the soak runs");
    let failures = verdict.failures();
    if !failures.is_empty() {
        eprintln!("soak FAILED:\n- {}", failures.join("\n- "));
        std::process::exit(1);
    }
    println!("soak ok: nothing lost, nothing doubled, only retryable errors, memory flat");
}
