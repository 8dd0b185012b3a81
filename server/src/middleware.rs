//! The one tower plumbing the server's layers share: a [`Gate`] decides
//! what happens around a call (answer it itself, or pass it on, changed or
//! not); [`GateLayer`] makes it a layer for tonic's server builder.

use std::task::{Context, Poll};

use futures_util::future::BoxFuture;
use tonic::body::Body;

/// What a layer does around one call. `inner` is the rest of the stack,
/// ready to be called.
pub trait Gate: Clone + Send + Sync + 'static {
    fn around<S>(
        &self,
        request: http::Request<Body>,
        inner: S,
    ) -> BoxFuture<'static, Result<http::Response<Body>, S::Error>>
    where
        S: tower::Service<http::Request<Body>, Response = http::Response<Body>> + Send + 'static,
        S::Future: Send + 'static;
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
