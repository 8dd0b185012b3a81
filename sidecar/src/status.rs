//! `lore.v1.SidecarService`: the sidecar's own figures, for
//! `lore sidecar status` and monitoring.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use tonic::{Request, Response, Status};

use lore_proto::v1 as proto;
use lore_proto::v1::sidecar_service_server::SidecarService;

use crate::folders::FolderStats;
use crate::inbox::InboxStats;
use crate::ship::ShipStats;
use lore_spool::Spool;

/// Where the sidecar's figures come from; read by the Status RPC and by
/// the OTLP metrics alike, so both always say the same.
pub struct Figures {
    pub spool: Arc<Spool>,
    pub ship: Arc<ShipStats>,
    pub inbox: Arc<InboxStats>,
    pub folders: Arc<FolderStats>,
    pub server: String,
}

impl Figures {
    /// The figures now. Blocks briefly: the oldest record's age is read
    /// from disk.
    pub fn snapshot(&self) -> proto::SidecarStatus {
        let spool = self.spool.stats();
        proto::SidecarStatus {
            connected: self.connected(),
            server: self.server.clone(),
            spooled_records: spool.unacked_records,
            spooled_bytes: spool.disk_bytes,
            oldest_unacked_age_seconds: self.oldest_unacked_age_seconds(),
            shipped: self.shipped(),
            shipped_records: self.ship.shipped_records.load(Ordering::Relaxed),
            duplicates: self.duplicates(),
            rejected: self.rejected(),
            dropped: spool.dropped_records,
            inbox_accepted: self.inbox_accepted(),
            inbox_rejected: self.inbox_rejected(),
            documents_indexed: self.documents_indexed(),
            documents_removed: self.folders.removed.load(Ordering::Relaxed),
            documents_skipped: self.folders.skipped.load(Ordering::Relaxed),
        }
    }

    pub fn connected(&self) -> bool {
        self.ship.connected.load(Ordering::Relaxed)
    }

    /// Reads the oldest unacknowledged record from disk.
    pub fn oldest_unacked_age_seconds(&self) -> f64 {
        let now_micros = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |since| since.as_micros() as i64);
        self.spool
            .oldest_unacked_appended_at()
            .map_or(0.0, |appended_at| (now_micros - appended_at).max(0) as f64 / 1e6)
    }

    pub fn shipped(&self) -> u64 {
        self.ship.shipped.load(Ordering::Relaxed)
    }

    pub fn duplicates(&self) -> u64 {
        self.ship.duplicates.load(Ordering::Relaxed)
    }

    pub fn rejected(&self) -> u64 {
        self.ship.rejected.load(Ordering::Relaxed)
    }

    pub fn inbox_accepted(&self) -> u64 {
        self.inbox.accepted.load(Ordering::Relaxed)
    }

    pub fn inbox_rejected(&self) -> u64 {
        self.inbox.rejected.load(Ordering::Relaxed)
    }

    pub fn documents_indexed(&self) -> u64 {
        self.folders.indexed.load(Ordering::Relaxed)
    }
}

pub struct StatusApi {
    pub figures: Arc<Figures>,
}

#[tonic::async_trait]
impl SidecarService for StatusApi {
    async fn status(
        &self,
        _request: Request<proto::SidecarStatusRequest>,
    ) -> Result<Response<proto::SidecarStatus>, Status> {
        let figures = Arc::clone(&self.figures);
        let status = tokio::task::spawn_blocking(move || figures.snapshot())
            .await
            .map_err(|error| Status::unavailable(error.to_string()))?;
        Ok(Response::new(status))
    }
}
