//! Limits that are part of the contract: a client relies on them, and the
//! server and the sidecar, which both serve the call, enforce the same.

/// Actions per Ingest batch; larger batches end the stream with
/// INVALID_ARGUMENT (a client splits them).
pub const MAX_BATCH_ACTIONS: usize = 1000;
