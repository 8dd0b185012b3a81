//! Who is looking, and CSRF.
//!
//! The session is the token itself in an HttpOnly, SameSite=Strict cookie:
//! scripts cannot read it, other sites cannot send it, and every request
//! verifies it through the same cache as gRPC, so a revoked token stops
//! working in the console at once. The CSRF token of a session is a keyed
//! hash of its secret: stateless, the same on every replica, and unknown to
//! anyone who cannot read the cookie.

use std::sync::Arc;

use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{HeaderMap, header};

use super::params::Params;
use super::{Console, PageError};
use crate::Error;
use crate::auth::{Caller, Role};
use lore_types::scope::ProjectScope;

pub(super) const COOKIE: &str = "lore_console";
/// The form field every post carries.
pub const CSRF_FIELD: &str = "csrf";
/// Largest form body read; a draft's body is the largest field.
const MAX_FORM_BYTES: usize = 512 * 1024;

/// Who is looking at a page.
#[derive(Debug, Clone)]
pub struct Viewer {
    /// `None` when auth is switched off.
    pub caller: Option<Arc<Caller>>,
    pub csrf: String,
}

impl Viewer {
    pub fn scope(&self) -> ProjectScope {
        self.caller.as_ref().map_or(ProjectScope::All, |caller| caller.scope.clone())
    }

    pub fn name(&self) -> &str {
        self.caller.as_ref().map_or("console", |caller| caller.name.as_str())
    }

    /// Who acts, as the items they write or decide record it.
    pub fn origin(&self) -> lore_types::trust::Origin {
        let token = self.caller.as_ref().map(|caller| (caller.name.as_str(), <&str>::from(caller.role)));
        lore_types::trust::Origin::caller(token, Some("console"))
    }

    pub fn role(&self) -> Role {
        self.caller.as_ref().map_or(Role::Admin, |caller| caller.role)
    }

    /// Whether this viewer's token may call `method` (a gRPC path): the
    /// console offers and accepts exactly what gRPC would.
    pub fn may(&self, method: &str) -> bool {
        crate::auth::method_access(method).is_some_and(|access| self.role().permits(access))
    }

    pub fn require(&self, method: &str) -> Result<(), Error> {
        if self.may(method) {
            return Ok(());
        }
        let name = method.rsplit('/').next().unwrap_or(method);
        Err(Error::PermissionDenied(format!("a {} token may not {name}", self.role())))
    }
}

fn csrf_of(secret: &str) -> String {
    let key = crate::auth::hash_secret(secret);
    blake3::keyed_hash(&key, b"lore console csrf").to_hex().to_string()
}

fn cookie<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find_map(|(key, value)| (key == name).then_some(value))
}

impl FromRequestParts<Console> for Viewer {
    type Rejection = PageError;

    async fn from_request_parts(parts: &mut Parts, console: &Console) -> Result<Self, Self::Rejection> {
        let Some(auth) = &console.auth else {
            return Ok(Viewer { caller: None, csrf: csrf_of(&console.open_csrf) });
        };
        let secret = cookie(&parts.headers, COOKIE).ok_or(PageError::SignIn)?;
        match auth.verify(secret).await {
            Ok(caller) => Ok(Viewer { caller: Some(caller), csrf: csrf_of(secret) }),
            Err(Error::Unauthenticated(_)) => Err(PageError::SignIn),
            Err(error) => Err(error.into()),
        }
    }
}

/// A form post from a signed-in viewer whose CSRF token matched: handlers
/// that take one cannot forget the check.
pub struct Submitted {
    pub viewer: Viewer,
    pub fields: Params,
}

impl FromRequest<Console> for Submitted {
    type Rejection = PageError;

    async fn from_request(request: Request, console: &Console) -> Result<Self, Self::Rejection> {
        let (mut parts, body) = request.into_parts();
        let viewer = Viewer::from_request_parts(&mut parts, console).await?;
        let bytes = axum::body::to_bytes(body, MAX_FORM_BYTES)
            .await
            .map_err(|_| Error::invalid("form", format!("larger than {} KiB", MAX_FORM_BYTES / 1024)))?;
        let fields = Params::parse(&bytes);
        let sent = fields.get(CSRF_FIELD).unwrap_or_default();
        if !constant_time_eq(sent.as_bytes(), viewer.csrf.as_bytes()) {
            return Err(PageError::Forged);
        }
        Ok(Self { viewer, fields })
    }
}

fn constant_time_eq(left: &[u8], right: &[u8]) -> bool {
    left.len() == right.len() && left.iter().zip(right).fold(0u8, |acc, (a, b)| acc | (a ^ b)) == 0
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

    use super::*;

    #[test]
    fn the_csrf_token_depends_on_the_secret_and_comparison_needs_every_byte() {
        assert_eq!(csrf_of("lore_a"), csrf_of("lore_a"));
        assert_ne!(csrf_of("lore_a"), csrf_of("lore_b"));
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"ab"));
    }

    #[test]
    fn the_session_cookie_is_found_among_others() {
        let mut headers = HeaderMap::new();
        headers.insert(header::COOKIE, HeaderValue::from_static("a=1; lore_console=lore_x; b=2"));
        assert_eq!(cookie(&headers, COOKIE), Some("lore_x"));
        assert_eq!(cookie(&headers, "missing"), None);
    }
}
