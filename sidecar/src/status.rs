//! `lore.v1.SidecarService`: the sidecar's own figures, for
//! `lore sidecar status` and monitoring.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use tonic::{Request, Response, Status};

use lore_proto::v1 as proto;
use lore_proto::v1::sidecar_service_server::SidecarService;

use crate::ship::ShipStats;
use crate::spool::Spool;

pub struct StatusApi {
    pub spool: Arc<Spool>,
    pub stats: Arc<ShipStats>,
    pub server: String,
}

#[tonic::async_trait]
impl SidecarService for StatusApi {
    async fn status(
        &self,
        _request: Request<proto::SidecarStatusRequest>,
    ) -> Result<Response<proto::SidecarStatus>, Status> {
        let spool = Arc::clone(&self.spool);
        // Reading the oldest record touches the disk.
        let (spool_stats, oldest) =
            tokio::task::spawn_blocking(move || (spool.stats(), spool.oldest_unacked_appended_at()))
                .await
                .map_err(|error| Status::unavailable(error.to_string()))?;
        let now_micros = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |since| since.as_micros() as i64);
        Ok(Response::new(proto::SidecarStatus {
            connected: self.stats.connected.load(Ordering::Relaxed),
            server: self.server.clone(),
            spooled_records: spool_stats.unacked_records,
            spooled_bytes: spool_stats.disk_bytes,
            oldest_unacked_age_seconds: oldest
                .map_or(0.0, |appended_at| (now_micros - appended_at).max(0) as f64 / 1e6),
            shipped: self.stats.shipped.load(Ordering::Relaxed),
            duplicates: self.stats.duplicates.load(Ordering::Relaxed),
            rejected: self.stats.rejected.load(Ordering::Relaxed),
            dropped: spool_stats.dropped_records,
        }))
    }
}
