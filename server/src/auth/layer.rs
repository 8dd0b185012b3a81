//! The tower layer that authenticates every call before it reaches a
//! handler, and hands the handler the caller and its project scope in the
//! request extensions. Long-lived streams (Ingest, Resume, Export) are
//! checked again whenever tokens change, and end with UNAUTHENTICATED when
//! theirs was revoked: an open stream is no way around a revocation.

use std::sync::Arc;

use tonic::body::Body;

use super::{Authenticator, methods};
use crate::gate::{Answer, Gate, GateLayer, Inner, end_when};

/// Authenticates with `authenticator`; with `None` (auth switched off),
/// every call passes with no caller and every project in scope.
pub type AuthLayer = GateLayer<AuthGate>;

impl AuthLayer {
    pub fn authenticating(authenticator: Option<Arc<Authenticator>>) -> Self {
        GateLayer::new(AuthGate { authenticator })
    }
}

#[derive(Debug, Clone)]
pub struct AuthGate {
    authenticator: Option<Arc<Authenticator>>,
}

impl Gate for AuthGate {
    fn around<S: Inner>(&self, mut request: http::Request<Body>, mut inner: S) -> Answer<S> {
        let Some(authenticator) = self.authenticator.clone() else {
            return Box::pin(inner.call(request));
        };
        Box::pin(async move {
            let path = request.uri().path().to_owned();
            match authenticator.authorize(&path, request.headers()).await {
                Ok(Some(caller)) => {
                    request.extensions_mut().insert(caller.scope.clone());
                    request.extensions_mut().insert(caller);
                }
                Ok(None) => return inner.call(request).await,
                Err(error) => return Ok(tonic::Status::from(error).into_http()),
            }
            let secret = match methods::is_long_lived(&path) {
                true => super::bearer_token(request.headers()).ok().map(str::to_owned),
                false => None,
            };
            let response = inner.call(request).await?;
            Ok(match secret {
                Some(secret) => response.map(|body| revocable(body, authenticator, secret)),
                None => response,
            })
        })
    }
}

/// A streaming response that ends with its token: when tokens change (or
/// every cache TTL, for expiry), the token is checked again, and a refused
/// one ends the stream with UNAUTHENTICATED trailers.
fn revocable(body: Body, authenticator: Arc<Authenticator>, secret: String) -> Body {
    let mut changes = authenticator.changes.subscribe();
    let revoked = async move {
        loop {
            tokio::select! {
                changed = changes.changed() => if changed.is_err() { return std::future::pending().await },
                () = tokio::time::sleep(authenticator.ttl) => {}
            }
            // Still valid, or the database cannot say now: carry on.
            if let Err(error @ crate::Error::Unauthenticated(_)) = authenticator.verify(&secret).await {
                return tonic::Status::from(error);
            }
        }
    };
    end_when(body, revoked)
}
