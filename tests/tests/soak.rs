//! The short soak of `make test`: every fault once, in the debug build (the
//! ten-minute one is `make soak`). A binary of its own, so cargo runs it
//! alone and the other tests' load does not mix with its figures.

use std::time::Duration;

use lore_e2e::soak::{self, Settings};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_short_soak_with_every_fault_loses_nothing_doubles_nothing_and_stays_flat() {
    let settings = Settings::from_env(90, 6);
    assert!(settings.duration >= Duration::from_secs(30), "too short a soak to judge memory");
    let verdict = soak::run(&settings).await.expect("the soak runs");
    assert!(verdict.acknowledged > 1000, "too little load to mean anything: {verdict:?}");
    assert_eq!(verdict.faults.len(), 5, "{verdict:?}");
    let failures = verdict.failures();
    assert!(failures.is_empty(), "{failures:#?}");
}
