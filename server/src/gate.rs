//! The one tower plumbing the server's layers share: a [`Gate`] decides
//! what happens around a call (answer it itself, or pass it on, changed or
//! not); [`GateLayer`] makes it a layer for tonic's server builder.
//! [`observe`] shows a call's data and status to whoever needs them
//! (telemetry, tool-call logging); [`end_when`] ends a stream early (a
//! revoked token, [`DrainGate`] at shutdown).

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures_util::future::BoxFuture;
use tonic::body::Body;

/// The rest of the stack, as a gate sees it.
pub trait Inner:
    tower::Service<http::Request<Body>, Response = http::Response<Body>, Future: Send + 'static> + Send + 'static
{
}

impl<S> Inner for S where
    S: tower::Service<http::Request<Body>, Response = http::Response<Body>, Future: Send + 'static> + Send + 'static
{
}

/// How a gate answers: the response of the rest of the stack, or its own.
pub type Answer<S> =
    BoxFuture<'static, Result<http::Response<Body>, <S as tower::Service<http::Request<Body>>>::Error>>;

/// A gate's answer of its own: `status`, without calling the rest.
pub fn refuse<S: Inner>(status: tonic::Status) -> Answer<S> {
    Box::pin(async move { Ok(status.into_http()) })
}

/// What a layer does around one call. `inner` is the rest of the stack,
/// ready to be called.
pub trait Gate: Clone + Send + Sync + 'static {
    fn around<S: Inner>(&self, request: http::Request<Body>, inner: S) -> Answer<S>;
}

#[derive(Debug, Clone)]
pub struct GateLayer<G> {
    gate: G,
}

impl<G> GateLayer<G> {
    pub fn new(gate: G) -> Self {
        Self { gate }
    }
}

impl<S, G: Clone> tower::Layer<S> for GateLayer<G> {
    type Service = Gated<S, G>;

    fn layer(&self, inner: S) -> Self::Service {
        Gated { inner, gate: self.gate.clone() }
    }
}

#[derive(Debug, Clone)]
pub struct Gated<S, G> {
    inner: S,
    gate: G,
}

impl<S, G> tower::Service<http::Request<Body>> for Gated<S, G>
where
    S: tower::Service<http::Request<Body>, Response = http::Response<Body>> + Clone + Send + 'static,
    S::Future: Send + 'static,
    G: Gate,
{
    type Response = http::Response<Body>;
    type Error = S::Error;
    type Future = BoxFuture<'static, Result<Self::Response, Self::Error>>;

    fn poll_ready(&mut self, context: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(context)
    }

    fn call(&mut self, request: http::Request<Body>) -> Self::Future {
        // The clone is not ready; the instance poll_ready prepared is.
        let clone = self.inner.clone();
        let inner = std::mem::replace(&mut self.inner, clone);
        self.gate.around(request, inner)
    }
}

/// Something that wants to know how a call went: the response data as it
/// goes out, then, exactly once, its gRPC status.
pub trait CallObserver: Send + Unpin + 'static {
    fn data(&mut self, _chunk: &Bytes) {}
    /// The status the client saw: from the trailers (or the headers of a
    /// trailers-only answer); CANCELLED when the response was dropped
    /// before it ended (client gone, deadline cut it).
    fn end(self, code: tonic::Code, message: &str);
}

/// Watches `response` for `observer`. Call inside the gate's future so an
/// error answered before any body exists is seen too.
pub fn observe<O: CallObserver>(response: http::Response<Body>, observer: O) -> http::Response<Body> {
    if let Some(status) = tonic::Status::from_header_map(response.headers()) {
        observer.end(status.code(), status.message());
        return response;
    }
    response.map(|body| observe_body(body, observer))
}

/// Shows `observer` the data of `body` as it passes (a request's, too).
pub fn observe_body<O: CallObserver>(body: Body, observer: O) -> Body {
    Body::new(Observed { inner: body, observer: Some(observer) })
}

/// What the wrapping bodies here answer when polled.
type FramePoll = Poll<Option<Result<http_body::Frame<Bytes>, tonic::Status>>>;

struct Observed<O: CallObserver> {
    inner: Body,
    observer: Option<O>,
}

impl<O: CallObserver> Observed<O> {
    fn end(&mut self, code: tonic::Code, message: &str) {
        if let Some(observer) = self.observer.take() {
            observer.end(code, message);
        }
    }
}

impl<O: CallObserver> http_body::Body for Observed<O> {
    type Data = Bytes;
    type Error = tonic::Status;

    fn poll_frame(self: Pin<&mut Self>, context: &mut Context<'_>) -> FramePoll {
        // Every field is Unpin (Body is boxed).
        let this = self.get_mut();
        let frame = Pin::new(&mut this.inner).poll_frame(context);
        match &frame {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(data) = frame.data_ref()
                    && let Some(observer) = &mut this.observer
                {
                    observer.data(data);
                }
                if let Some(trailers) = frame.trailers_ref() {
                    match tonic::Status::from_header_map(trailers) {
                        Some(status) => this.end(status.code(), status.message()),
                        None => this.end(tonic::Code::Unknown, "the response ended without a grpc-status"),
                    }
                }
            }
            Poll::Ready(Some(Err(status))) => this.end(status.code(), status.message()),
            Poll::Ready(None) => this.end(tonic::Code::Unknown, "the response ended without a grpc-status"),
            Poll::Pending => {}
        }
        frame
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }
}

impl<O: CallObserver> Drop for Observed<O> {
    fn drop(&mut self) {
        self.end(tonic::Code::Cancelled, "the response was dropped before it ended");
    }
}

/// A streaming response that ends early, with `until`'s status in its
/// trailers, when `until` resolves first (a revoked token, a server
/// shutting down).
pub fn end_when(body: Body, until: impl Future<Output = tonic::Status> + Send + 'static) -> Body {
    Body::new(EndWhen { inner: body, until: Box::pin(until), done: false })
}

struct EndWhen {
    inner: Body,
    until: Pin<Box<dyn Future<Output = tonic::Status> + Send>>,
    done: bool,
}

impl http_body::Body for EndWhen {
    type Data = Bytes;
    type Error = tonic::Status;

    fn poll_frame(self: Pin<&mut Self>, context: &mut Context<'_>) -> FramePoll {
        let this = self.get_mut();
        if this.done {
            return Poll::Ready(None);
        }
        if let Poll::Ready(status) = this.until.as_mut().poll(context) {
            this.done = true;
            let mut trailers = http::HeaderMap::new();
            // Only fails on a message that cannot be a header; ours can.
            let _ = status.add_header(&mut trailers);
            return Poll::Ready(Some(Ok(http_body::Frame::trailers(trailers))));
        }
        let frame = Pin::new(&mut this.inner).poll_frame(context);
        match &frame {
            Poll::Ready(None | Some(Err(_))) => this.done = true,
            Poll::Ready(Some(Ok(frame))) if frame.is_trailers() => this.done = true,
            _ => {}
        }
        frame
    }

    fn is_end_stream(&self) -> bool {
        self.done || self.inner.is_end_stream()
    }
}

/// Ends the streams that never end by themselves (Ingest, a following
/// Resume) with UNAVAILABLE once the server starts shutting down, so their
/// clients reconnect (to another replica) at once instead of holding the
/// drain to its grace period. A sidecar resends what was not acknowledged;
/// its ids make that safe.
#[derive(Debug, Clone)]
pub struct DrainGate {
    draining: tokio::sync::watch::Receiver<bool>,
}

pub type DrainLayer = GateLayer<DrainGate>;

impl DrainLayer {
    pub fn watching(draining: tokio::sync::watch::Receiver<bool>) -> Self {
        GateLayer::new(DrainGate { draining })
    }
}

const ENDLESS_STREAMS: [&str; 2] = ["/lore.v1.ActionService/Ingest", "/lore.v1.ActionService/Resume"];

impl Gate for DrainGate {
    fn around<S: Inner>(&self, request: http::Request<Body>, mut inner: S) -> Answer<S> {
        if !ENDLESS_STREAMS.contains(&request.uri().path()) {
            return Box::pin(inner.call(request));
        }
        let mut draining = self.draining.clone();
        Box::pin(async move {
            let response = inner.call(request).await?;
            Ok(response.map(|body| {
                end_when(body, async move {
                    // A dropped sender (the server gone) ends nothing.
                    if draining.wait_for(|draining| *draining).await.is_err() {
                        std::future::pending::<()>().await;
                    }
                    tonic::Status::unavailable("the server is shutting down; reconnect")
                })
            }))
        })
    }
}
