//! `lore sidecar status`: a running sidecar's figures.

use lore_proto::v1 as proto;

#[derive(clap::Args)]
pub struct Args {
    /// The sidecar to ask.
    #[arg(long, env = "LORE_SIDECAR", default_value = "http://127.0.0.1:50052")]
    sidecar: String,
    /// Print the figures as one JSON object.
    #[arg(long)]
    json: bool,
}

pub async fn run(args: Args) -> anyhow::Result<()> {
    let channel = crate::commands::connect(&args.sidecar, None, &lore_proto::tls::TlsFiles::default()).await?;
    let status = lore_proto::client::sidecar(channel).status(proto::SidecarStatusRequest {}).await?.into_inner();
    if args.json {
        println!(
            "{}",
            serde_json::json!({
                "connected": status.connected,
                "server": status.server,
                "spooled_records": status.spooled_records,
                "spooled_bytes": status.spooled_bytes,
                "oldest_unacked_age_seconds": status.oldest_unacked_age_seconds,
                "shipped": status.shipped,
                "shipped_records": status.shipped_records,
                "duplicates": status.duplicates,
                "rejected": status.rejected,
                "dropped": status.dropped,
                "inbox_accepted": status.inbox_accepted,
                "inbox_rejected": status.inbox_rejected,
                "documents_indexed": status.documents_indexed,
                "documents_removed": status.documents_removed,
                "documents_skipped": status.documents_skipped,
            })
        );
        return Ok(());
    }
    println!("{} -> {}: {}", args.sidecar, status.server, if status.connected { "connected" } else { "disconnected" });
    println!(
        "spooled: {} records, {:.1} KiB, oldest {:.1} s",
        status.spooled_records,
        status.spooled_bytes as f64 / 1024.0,
        status.oldest_unacked_age_seconds
    );
    println!(
        "shipped: {} actions, {} other writes  duplicates: {}  rejected: {}  dropped: {}",
        status.shipped, status.shipped_records, status.duplicates, status.rejected, status.dropped
    );
    println!("inbox: {} accepted, {} rejected", status.inbox_accepted, status.inbox_rejected);
    println!(
        "watched folders: {} documents indexed, {} removed, {} files skipped",
        status.documents_indexed, status.documents_removed, status.documents_skipped
    );
    Ok(())
}
