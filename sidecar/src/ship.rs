//! Shipping the spool to the server.
//!
//! One connection, one Ingest stream. Consecutive spooled actions go out as
//! batches (up to `batch_size`, after waiting up to `linger` for a batch to
//! fill), at most `max_in_flight` unacknowledged at once; a batch's sequence
//! number is the id of its last record, and its ack moves the spool's acked
//! cursor there. Any other write (a session operation, a captured failure,
//! a fix, a lesson applied or proposed) keeps its place in the order: the
//! shipper waits for every batch before it to be acknowledged, then sends
//! it as a unary call.
//!
//! Any transport trouble drops the connection; the shipper reconnects with
//! exponential backoff and jitter and replays from the acked cursor. The
//! server deduplicates what it had already stored. What the server refuses
//! for good (an invalid action, an unknown session) is written to
//! `rejects.jsonl` in the spool directory and acknowledged, so it never
//! blocks the rest.

use std::collections::VecDeque;
use std::io::Write as _;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use lore_proto::auth::AuthChannel;
use tokio::sync::{mpsc, watch};
use tokio_stream::wrappers::ReceiverStream;
use tonic::service::interceptor::InterceptedService;
use tonic::{Code, Status};

use lore_proto::v1 as proto;

use lore_spool::entry::{SpoolEntry, Write};
use lore_spool::{Spool, SpooledRecord};

#[derive(Debug, Clone)]
pub struct ShipConfig {
    /// The server's address, for logs.
    pub server: String,
    /// How to reach it (TLS settings included).
    pub endpoint: tonic::transport::Endpoint,
    pub bearer: lore_proto::auth::Bearer,
    pub batch_size: usize,
    pub linger: Duration,
    pub max_in_flight: usize,
    pub initial_backoff: Duration,
    pub max_backoff: Duration,
    /// Where refused writes are recorded.
    pub rejects_file: PathBuf,
}

/// Shipping figures for status and metrics.
#[derive(Debug, Default)]
pub struct ShipStats {
    pub connected: AtomicBool,
    pub shipped: AtomicU64,
    /// Writes other than actions delivered (sessions, failures, fixes,
    /// lessons).
    pub shipped_records: AtomicU64,
    pub duplicates: AtomicU64,
    pub rejected: AtomicU64,
}

/// Ships until `stop` turns true and everything spooled is acknowledged (or
/// the connection is down when stopping: what is left is replayed at the
/// next start).
pub async fn run(spool: Arc<Spool>, config: ShipConfig, stats: Arc<ShipStats>, mut stop: watch::Receiver<bool>) {
    let mut backoff = config.initial_backoff;
    loop {
        match ship(&spool, &config, &stats, &mut stop).await {
            Ok(()) => return,
            Err(error) => {
                stats.connected.store(false, Ordering::Relaxed);
                if *stop.borrow() {
                    tracing::info!(%error, "stopping with unshipped actions; they are replayed at the next start");
                    return;
                }
                tracing::warn!(%error, retry_in_ms = backoff.as_millis() as u64, "server unreachable; spooling");
                // Full jitter: a fleet of sidecars does not reconnect in step.
                let delay = backoff.mul_f64(fastrand::f64());
                tokio::select! {
                    () = tokio::time::sleep(delay) => {}
                    _ = stop.changed() => {}
                }
                backoff = (backoff * 2).min(config.max_backoff);
            }
        }
        if stats.connected.load(Ordering::Relaxed) {
            backoff = config.initial_backoff;
        }
    }
}

#[derive(Debug, thiserror::Error)]
enum ShipError {
    #[error("cannot connect: {0}")]
    Connect(#[from] tonic::transport::Error),
    #[error("server said {0}")]
    Status(#[from] Status),
    #[error("the ack stream ended")]
    StreamEnded,
    #[error("spool: {0}")]
    Spool(#[from] lore_spool::SpoolError),
    #[error("spool read: {0}")]
    Read(#[from] std::io::Error),
}

/// One batch on the wire, waiting for its ack.
struct InFlight {
    sequence: u64,
    actions: u64,
}

struct Connection<'a> {
    spool: &'a Spool,
    config: &'a ShipConfig,
    stats: &'a ShipStats,
    /// For the writes sent one by one.
    channel: AuthChannel,
    batches: mpsc::Sender<proto::IngestRequest>,
    acks: tonic::Streaming<proto::IngestAck>,
    in_flight: VecDeque<InFlight>,
}

async fn ship(
    spool: &Spool,
    config: &ShipConfig,
    stats: &ShipStats,
    stop: &mut watch::Receiver<bool>,
) -> Result<(), ShipError> {
    let channel = config.endpoint.clone().connect_timeout(Duration::from_secs(5)).connect().await?;
    let authed = InterceptedService::new(channel, config.bearer.clone());
    let mut client = lore_proto::client::actions(authed.clone());
    let (batches, outgoing) = mpsc::channel(config.max_in_flight.max(1));
    let acks = client.ingest(ReceiverStream::new(outgoing)).await?.into_inner();
    stats.connected.store(true, Ordering::Relaxed);
    tracing::info!(server = %config.server, "shipping to the server");
    let mut connection =
        Connection { spool, config, stats, channel: authed, batches, acks, in_flight: VecDeque::new() };
    let mut reader = spool.reader();
    let mut written = spool.subscribe();
    loop {
        let mut records = reader.read_batch(config.batch_size, 4 * 1024 * 1024)?;
        if records.len() < config.batch_size && !*stop.borrow() {
            // Linger a little so small writes travel together.
            let deadline = tokio::time::Instant::now() + config.linger;
            while records.len() < config.batch_size {
                tokio::select! {
                    _ = tokio::time::sleep_until(deadline) => break,
                    _ = written.changed() => records.extend(reader.read_batch(config.batch_size - records.len(), 4 * 1024 * 1024)?),
                    ack = connection.acks.message() => connection.on_ack(ack?.ok_or(ShipError::StreamEnded)?)?,
                }
            }
        }
        if records.is_empty() {
            if *stop.borrow() && connection.in_flight.is_empty() {
                return Ok(());
            }
            tokio::select! {
                _ = written.changed() => {}
                // Also read while nothing is in flight: a stream the server
                // ends (shutdown, a revoked token) is noticed at once, not
                // at the next write.
                ack = connection.acks.message() => {
                    connection.on_ack(ack?.ok_or(ShipError::StreamEnded)?)?;
                }
                _ = stop.changed() => {}
            }
            continue;
        }
        connection.send_records(records).await?;
    }
}

impl Connection<'_> {
    /// Sends records in order: runs of actions as batches, every other
    /// write as a unary call once everything before it is acked.
    async fn send_records(&mut self, records: Vec<SpooledRecord>) -> Result<(), ShipError> {
        // Each batch is sized once, for the records left: one grown by
        // doubling held twice its actions at the copy, the largest part of
        // a replaying sidecar's heap.
        let batch_size = self.config.batch_size;
        let next_batch = |left: usize| Vec::with_capacity(left.min(batch_size));
        let mut records = records.into_iter();
        let mut actions = next_batch(records.len());
        let mut last_id = 0;
        while let Some(record) = records.next() {
            let (write, client) = match SpoolEntry::decode(&record.payload) {
                Ok(entry) => (entry.write, entry.client),
                Err(_) => (None, String::new()),
            };
            match write {
                Some(Write::Action(action)) => {
                    actions.push(action);
                    last_id = record.id;
                    if actions.len() >= batch_size {
                        let full = std::mem::replace(&mut actions, next_batch(records.len()));
                        self.send_batch(full, last_id).await?;
                    }
                }
                other => {
                    if !actions.is_empty() {
                        let run = std::mem::replace(&mut actions, next_batch(records.len()));
                        self.send_batch(run, last_id).await?;
                    }
                    self.drain_acks().await?;
                    match other {
                        Some(write) => self.send_unary_write(write, &client).await?,
                        None => self.reject(&format!("record {} is not a spooled write", record.id))?,
                    }
                    self.spool.ack(record.id)?;
                }
            }
        }
        if !actions.is_empty() {
            self.send_batch(actions, last_id).await?;
        }
        Ok(())
    }

    async fn send_batch(&mut self, actions: Vec<proto::Action>, last_id: u64) -> Result<(), ShipError> {
        while self.in_flight.len() >= self.config.max_in_flight.max(1) {
            let ack = self.acks.message().await?.ok_or(ShipError::StreamEnded)?;
            self.on_ack(ack)?;
        }
        let count = actions.len() as u64;
        self.batches
            .send(proto::IngestRequest { sequence: last_id, actions })
            .await
            .map_err(|_| ShipError::StreamEnded)?;
        self.in_flight.push_back(InFlight { sequence: last_id, actions: count });
        Ok(())
    }

    async fn drain_acks(&mut self) -> Result<(), ShipError> {
        while !self.in_flight.is_empty() {
            let ack = self.acks.message().await?.ok_or(ShipError::StreamEnded)?;
            self.on_ack(ack)?;
        }
        Ok(())
    }

    fn on_ack(&mut self, ack: proto::IngestAck) -> Result<(), ShipError> {
        let Some(batch) = self.in_flight.pop_front() else {
            return Err(ShipError::Status(Status::internal(format!("an ack for batch {} nobody sent", ack.sequence))));
        };
        if batch.sequence != ack.sequence {
            return Err(ShipError::Status(Status::internal(format!(
                "ack for batch {} while {} was expected",
                ack.sequence, batch.sequence
            ))));
        }
        debug_assert_eq!(u64::from(ack.stored + ack.duplicates) + ack.rejected.len() as u64, batch.actions);
        self.stats.shipped.fetch_add(u64::from(ack.stored), Ordering::Relaxed);
        self.stats.duplicates.fetch_add(u64::from(ack.duplicates), Ordering::Relaxed);
        for rejection in &ack.rejected {
            self.reject(&format!("action {}: {}", rejection.action_id, rejection.reason))?;
        }
        self.spool.ack(batch.sequence)?;
        Ok(())
    }

    /// Sends one write, saying for the client that made it what it was
    /// (`client`; the sidecar's own name when the record has none).
    async fn send_unary_write(&mut self, write: Write, client: &str) -> Result<(), ShipError> {
        debug_assert!(!matches!(write, Write::Action(_)), "actions travel in batches");
        let what = write.what();
        let result = write.deliver(self.channel.clone(), client).await;
        match result {
            Ok(()) => {
                self.stats.shipped_records.fetch_add(1, Ordering::Relaxed);
                Ok(())
            }
            // Retry later: the call may not have reached the server.
            Err(status) if lore_spool::entry::is_transient(&status) => Err(ShipError::Status(status)),
            Err(status) if status.code() == Code::PermissionDenied => self.reject(&format!(
                "{what} refused: {}; the sidecar's token needs the agent role to record what agents learn",
                status.message()
            )),
            Err(status) => self.reject(&format!("{what} refused: {status}")),
        }
    }

    fn reject(&self, reason: &str) -> Result<(), ShipError> {
        self.stats.rejected.fetch_add(1, Ordering::Relaxed);
        tracing::warn!(reason, "the server refused a spooled write for good");
        let mut file = std::fs::OpenOptions::new().create(true).append(true).open(&self.config.rejects_file)?;
        writeln!(file, "{}", serde_json::json!({ "reason": reason }))?;
        Ok(())
    }
}
