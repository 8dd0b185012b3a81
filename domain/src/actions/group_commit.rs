//! Group commit for unary LogAction calls.
//!
//! A transaction that chains an action costs four round trips to PostgreSQL
//! whether it stores one action or a hundred. Writer tasks therefore take
//! every LogAction that queued up while the previous batch was being written
//! and store them as one batch. Nothing waits on a timer: a lone client's
//! call is written at once, alone; under load, calls share transactions. Each
//! caller is answered only after the batch holding its action committed.

use std::sync::Arc;

use sqlx::PgPool;
use tokio::sync::{Mutex, mpsc, oneshot};

use crate::Error;
use lore_store as store;
use lore_types::actions::{NewAction, Rejection};
use lore_types::scope::ProjectScope;

/// Most actions one group-commit transaction carries.
const MAX_GROUP: usize = 256;
/// Calls that may wait for a writer before LogAction pushes back.
const QUEUE_DEPTH: usize = 4096;

/// How one queued action fared.
pub enum Written {
    Stored,
    Duplicate,
    Rejected(Rejection),
}

struct Pending {
    scope: ProjectScope,
    action: NewAction,
    reply: oneshot::Sender<Result<Written, Error>>,
}

/// The queue in front of the writer tasks.
#[derive(Debug, Clone)]
pub struct GroupCommit {
    queue: mpsc::Sender<Pending>,
}

impl GroupCommit {
    /// Starts `writers` writer tasks (inside the Tokio runtime).
    pub fn start(pool: PgPool, writers: usize) -> Self {
        let (queue, receiver) = mpsc::channel(QUEUE_DEPTH);
        let receiver = Arc::new(Mutex::new(receiver));
        for _ in 0..writers.max(1) {
            tokio::spawn(write_groups(pool.clone(), Arc::clone(&receiver)));
        }
        Self { queue }
    }

    /// Stores one action, sharing a transaction with whatever else is queued.
    pub async fn write(&self, scope: ProjectScope, action: NewAction) -> Result<Written, Error> {
        let (reply, answer) = oneshot::channel();
        self.queue
            .send(Pending { scope, action, reply })
            .await
            .map_err(|_| Error::Unavailable("the action writer stopped".into()))?;
        answer.await.map_err(|_| Error::Unavailable("the action writer stopped".into()))?
    }
}

async fn write_groups(pool: PgPool, receiver: Arc<Mutex<mpsc::Receiver<Pending>>>) {
    loop {
        // Take what is waiting (at least one), then let the next writer in.
        let group = {
            let mut receiver = receiver.lock().await;
            let Some(first) = receiver.recv().await else { return };
            let mut group = vec![first];
            while group.len() < MAX_GROUP {
                match receiver.try_recv() {
                    Ok(next) => group.push(next),
                    Err(_) => break,
                }
            }
            group
        };
        // A group holds one scope; calls with another scope go to the next
        // group (rare: every call of a token has the same scope).
        let scope = group[0].scope.clone();
        let (same, others): (Vec<Pending>, Vec<Pending>) =
            group.into_iter().partition(|pending| pending.scope == scope);
        write_group(&pool, scope, same).await;
        for pending in others {
            let scope = pending.scope.clone();
            write_group(&pool, scope, vec![pending]).await;
        }
    }
}

async fn write_group(pool: &PgPool, scope: ProjectScope, group: Vec<Pending>) {
    let (actions, replies): (Vec<NewAction>, Vec<_>) =
        group.into_iter().map(|pending| (pending.action, pending.reply)).unzip();
    match store::actions::insert_batch(pool, &scope, &actions).await {
        Ok(outcome) => {
            let mut written: Vec<Written> = (0..replies.len()).map(|_| Written::Stored).collect();
            for index in outcome.duplicate_indexes {
                written[index] = Written::Duplicate;
            }
            for rejection in outcome.rejected {
                let index = rejection.index;
                written[index] = Written::Rejected(rejection);
            }
            for (reply, written) in replies.into_iter().zip(written) {
                let _ = reply.send(Ok(written));
            }
        }
        Err(error) => {
            // Every caller gets the same answer: nothing of the group was
            // committed.
            let retryable = matches!(error, Error::Aborted(_));
            let message = error.to_string();
            for reply in replies {
                let error =
                    if retryable { Error::Aborted(message.clone()) } else { Error::Unavailable(message.clone()) };
                let _ = reply.send(Err(error));
            }
        }
    }
}
