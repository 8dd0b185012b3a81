//! Live notification of new actions, across server replicas.
//!
//! Every batch commit runs `pg_notify('lore_actions', project)`. One
//! connection per server LISTENs on that channel and fans the project names
//! out to Resume followers over a broadcast channel; each follower then reads
//! what is new from the table. A notification only says "look"; the table is
//! the truth, so a lost notification (a reconnect) costs latency, not
//! actions: followers also look on every heartbeat.

use std::sync::Arc;
use std::time::Duration;

use sqlx::PgPool;
use sqlx::postgres::PgListener;
use tokio::sync::broadcast;

use crate::background::Background;
use lore_store::actions::ACTIONS_CHANNEL;

/// Project names buffered per follower; a slower follower gets `Lagged` and
/// simply looks at the table.
const FEED_CAPACITY: usize = 1024;
const RECONNECT_DELAY: Duration = Duration::from_secs(1);

/// Subscribe to learn which projects have new actions.
#[derive(Debug, Clone)]
pub struct ActionFeed {
    sender: broadcast::Sender<String>,
    /// The listener, which ends with the last clone.
    _listener: Arc<Background>,
}

impl ActionFeed {
    /// Starts the listener task; it reconnects until the last clone of the
    /// feed is dropped.
    pub fn start(pool: PgPool) -> Self {
        let (sender, _) = broadcast::channel(FEED_CAPACITY);
        let listener = Background::default();
        let fan_out = sender.clone();
        listener.spawn(async move {
            loop {
                if let Err(error) = listen(&pool, &fan_out).await {
                    tracing::warn!(%error, "action feed lost its connection; reconnecting");
                }
                tokio::time::sleep(RECONNECT_DELAY).await;
            }
        });
        Self { sender, _listener: Arc::new(listener) }
    }

    pub fn subscribe(&self) -> broadcast::Receiver<String> {
        self.sender.subscribe()
    }
}

async fn listen(pool: &PgPool, sender: &broadcast::Sender<String>) -> Result<(), sqlx::Error> {
    let mut listener = PgListener::connect_with(pool).await?;
    listener.listen(ACTIONS_CHANNEL).await?;
    loop {
        let notification = listener.recv().await?;
        // No subscribers is fine: nobody is following.
        let _ = sender.send(notification.payload().to_owned());
    }
}
