//! A TCP proxy that can cut the network: a test points its clients at the
//! proxy instead of the server and calls [`Proxy::cut`] for an outage.

use std::sync::Arc;
use std::time::Duration;

use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

/// Forwards every connection to `upstream` until cut.
pub struct Proxy {
    addr: String,
    /// The number of the current cut; odd while the network is down.
    cuts: Arc<watch::Sender<u64>>,
    accept: tokio::task::JoinHandle<()>,
}

impl Proxy {
    /// Listens on a free local port and forwards to `upstream` (host:port).
    pub async fn start(upstream: &str) -> std::io::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?.to_string();
        let cuts = Arc::new(watch::Sender::new(0u64));
        let upstream = upstream.to_owned();
        let accept = {
            let cuts = Arc::clone(&cuts);
            tokio::spawn(async move {
                while let Ok((client, _)) = listener.accept().await {
                    tokio::spawn(forward(client, upstream.clone(), cuts.subscribe()));
                }
            })
        };
        Ok(Self { addr, cuts, accept })
    }

    /// host:port to give clients.
    pub fn addr(&self) -> &str {
        &self.addr
    }

    /// Cuts the network for `outage`, as a partition does: bytes stop
    /// flowing both ways and new connections hang, and neither side is told.
    /// When the outage ends the connections it caught are closed (as when a
    /// router has forgotten them), and new ones go through again.
    pub async fn cut(&self, outage: Duration) {
        self.cuts.send_modify(|cut| *cut += 1);
        tokio::time::sleep(outage).await;
        self.cuts.send_modify(|cut| *cut += 1);
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

fn is_down(cut: u64) -> bool {
    cut % 2 == 1
}

/// One connection: copies both ways until either side closes or a cut
/// begins; then holds both sockets silent until the cut ends, and closes
/// them.
async fn forward(mut client: TcpStream, upstream: String, mut cuts: watch::Receiver<u64>) {
    if is_down(*cuts.borrow_and_update()) {
        let _ = cuts.wait_for(|cut| !is_down(*cut)).await;
        return;
    }
    let Ok(mut server) = TcpStream::connect(&upstream).await else {
        return;
    };
    let _ = client.set_nodelay(true);
    let _ = server.set_nodelay(true);
    tokio::select! {
        _ = tokio::io::copy_bidirectional(&mut client, &mut server) => return,
        _ = cuts.wait_for(|cut| is_down(*cut)) => {}
    }
    let _ = cuts.wait_for(|cut| !is_down(*cut)).await;
}
