//! Limits every call to a Lore service meets, applied by one tower layer
//! inside the auth layer (so it knows the caller): calls in flight at once,
//! a deadline per call, and a rate per token. Each refusal is a status a
//! client knows to retry later: RESOURCE_EXHAUSTED or DEADLINE_EXCEEDED.
//! Health and reflection are never limited, so probes see a busy server as
//! alive. Message sizes are limited by the services themselves
//! (`grpc.max_message_bytes`).

use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use governor::clock::{Clock as _, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota};
use tokio::sync::Semaphore;
use tonic::body::Body;
use uuid::Uuid;

use crate::auth::Caller;
use crate::config::GrpcConfig;
use crate::gate::{Answer, Gate, GateLayer, Inner, refuse};

/// Who a rate applies to: the token, or the client's address when auth is
/// switched off.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum RateKey {
    Token(Uuid),
    Peer(IpAddr),
    Unknown,
}

/// Forget idle rate states every this many calls, so the map holds only
/// recent callers.
const RETAIN_EVERY: u64 = 10_000;

#[derive(Debug)]
pub struct Limits {
    in_flight: Arc<Semaphore>,
    max_in_flight: usize,
    deadline: Duration,
    rate: Option<(DefaultKeyedRateLimiter<RateKey>, u32)>,
    calls: AtomicU64,
}

impl Limits {
    pub fn new(config: &GrpcConfig) -> Arc<Self> {
        let rate = NonZeroU32::new(config.rate_limit_per_token).map(|per_second| {
            let burst = NonZeroU32::new(config.rate_limit_burst).unwrap_or(per_second);
            (DefaultKeyedRateLimiter::dashmap(Quota::per_second(per_second).allow_burst(burst)), per_second.get())
        });
        Arc::new(Self {
            in_flight: Arc::new(Semaphore::new(config.max_concurrent_calls)),
            max_in_flight: config.max_concurrent_calls,
            deadline: Duration::from_secs(config.call_timeout_secs),
            rate,
            calls: AtomicU64::new(0),
        })
    }

    fn check_rate(&self, request: &http::Request<Body>) -> Result<(), tonic::Status> {
        let Some((limiter, per_second)) = &self.rate else { return Ok(()) };
        if self.calls.fetch_add(1, Ordering::Relaxed) % RETAIN_EVERY == RETAIN_EVERY - 1 {
            limiter.retain_recent();
        }
        let (key, who) = match request.extensions().get::<Arc<Caller>>() {
            Some(caller) => (RateKey::Token(caller.token_id), format!("token {}", caller.name)),
            None => match request
                .extensions()
                .get::<tonic::transport::server::TcpConnectInfo>()
                .and_then(|info| info.remote_addr())
            {
                Some(peer) => (RateKey::Peer(peer.ip()), format!("client {}", peer.ip())),
                None => (RateKey::Unknown, "this client".to_owned()),
            },
        };
        limiter.check_key(&key).map_err(|not_until| {
            let wait = not_until.wait_time_from(DefaultClock::default().now());
            tonic::Status::resource_exhausted(format!(
                "rate limit of {per_second} calls/s for {who} exceeded; retry in {} ms",
                wait.as_millis().max(1)
            ))
        })
    }
}

pub type LimitsLayer = GateLayer<Arc<Limits>>;

impl Gate for Arc<Limits> {
    fn around<S: Inner>(&self, request: http::Request<Body>, mut inner: S) -> Answer<S> {
        if !request.uri().path().starts_with("/lore.v1.") {
            return Box::pin(inner.call(request));
        }
        if let Err(status) = self.check_rate(&request) {
            return refuse::<S>(status);
        }
        // Shed rather than queue: a queued call would only time out later.
        let Ok(permit) = Arc::clone(&self.in_flight).try_acquire_owned() else {
            let status = tonic::Status::resource_exhausted(format!(
                "server busy: {} calls in flight; retry shortly",
                self.max_in_flight
            ));
            return refuse::<S>(status);
        };
        let deadline = self.deadline;
        let method = request.uri().path().to_owned();
        Box::pin(async move {
            // For a stream this covers its setup; the stream itself may run
            // as long as its client reads.
            let answered = tokio::time::timeout(deadline, inner.call(request)).await;
            drop(permit);
            match answered {
                Ok(response) => response,
                Err(_) => {
                    tracing::warn!(%method, deadline_secs = deadline.as_secs(), "call cut at the server's deadline");
                    Ok(tonic::Status::deadline_exceeded(format!(
                        "{method} did not answer within the server's {} s deadline; nothing it started was kept",
                        deadline.as_secs()
                    ))
                    .into_http())
                }
            }
        })
    }
}
