//! Waiting for a project's vectors after a bulk write: the server embeds in
//! the background, so `lore index` and `lore eval retrieval` follow
//! GetIndexStatus with a progress bar until nothing waits any more.

use std::time::{Duration, Instant};

use anyhow::Context as _;
use indicatif::{ProgressBar, ProgressStyle};
use lore_proto::v1 as proto;
use lore_proto::v1::knowledge_service_client::KnowledgeServiceClient;

use crate::Channel;

const POLL: Duration = Duration::from_millis(250);
/// Waiting stops when the queue has not moved for this long while entries
/// keep failing: the server retries them, the command need not.
const STALLED: Duration = Duration::from_secs(30);

/// How the wait ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Embedded {
    /// Every entry of the project has its vector.
    All { waited: Duration },
    /// Some could not be embedded and are left to the server's retries.
    Stalled { pending: u64, reason: String },
}

/// Follows `project`'s queue of entries waiting for a vector until it is
/// empty, or stalls on failures.
pub async fn wait(client: &KnowledgeServiceClient<Channel>, project: &str) -> anyhow::Result<Embedded> {
    let mut client = client.clone();
    let started = Instant::now();
    let first = status(&mut client, project).await?;
    if first.embeddings_pending == 0 {
        return Ok(Embedded::All { waited: started.elapsed() });
    }
    let bar = ProgressBar::new(first.embeddings_pending);
    bar.set_style(
        ProgressStyle::with_template("{msg:>9} [{bar:40}] {pos}/{len} {per_sec} eta {eta}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    bar.set_message("embedding");
    let (mut last_pending, mut moved_at) = (first.embeddings_pending, Instant::now());
    loop {
        tokio::time::sleep(POLL).await;
        let current = status(&mut client, project).await?;
        if current.embeddings_pending > bar.length().unwrap_or(0) {
            bar.set_length(current.embeddings_pending);
        }
        bar.set_position(bar.length().unwrap_or(0).saturating_sub(current.embeddings_pending));
        if current.embeddings_pending == 0 {
            bar.finish_and_clear();
            return Ok(Embedded::All { waited: started.elapsed() });
        }
        if current.embeddings_pending != last_pending {
            (last_pending, moved_at) = (current.embeddings_pending, Instant::now());
        } else if current.embeddings_failing > 0 && moved_at.elapsed() > STALLED {
            bar.finish_and_clear();
            return Ok(Embedded::Stalled { pending: current.embeddings_pending, reason: current.last_embedding_error });
        }
    }
}

async fn status(
    client: &mut KnowledgeServiceClient<Channel>,
    project: &str,
) -> anyhow::Result<proto::GetIndexStatusResponse> {
    let request = proto::GetIndexStatusRequest { project: project.to_owned() };
    Ok(client.get_index_status(request).await.context("cannot ask how far indexing is")?.into_inner())
}
