//! The authentication half of the contract: every call to a Lore service
//! carries `authorization: Bearer <token>`. [`Bearer`] adds it on the client
//! side; [`dev_token`] is how clients find the token of a local dev server.

use std::path::Path;

use tonic::metadata::{AsciiMetadataValue, MetadataValue};
use tonic::service::Interceptor;
use tonic::{Request, Status};

/// A connection whose every call carries a [`Bearer`] token.
pub type AuthChannel = tonic::service::interceptor::InterceptedService<tonic::transport::Channel, Bearer>;

/// Where a dev-mode server (`make run`, no database URL) writes its local
/// admin token, relative to the directory it runs in.
pub const DEV_TOKEN_FILE: &str = ".lore/dev-admin-token";

/// Adds the bearer token, when there is one, to every request that does not
/// already carry one (a proxy forwards its caller's own), and says what
/// kind of client sends it (`x-lore-client`: the server records it as where
/// what is written came from).
#[derive(Debug, Clone, Default)]
pub struct Bearer {
    value: Option<AsciiMetadataValue>,
    client: Option<AsciiMetadataValue>,
}

impl Bearer {
    /// Fails when the token cannot travel in metadata (not visible ASCII).
    pub fn new(token: Option<&str>) -> Result<Self, InvalidToken> {
        let value = token
            .map(|token| {
                let token = token.trim();
                if token.is_empty() || !token.bytes().all(|byte| byte.is_ascii_graphic()) {
                    return Err(InvalidToken);
                }
                MetadataValue::try_from(format!("Bearer {token}")).map_err(|_| InvalidToken)
            })
            .transpose()?;
        Ok(Self { value, client: None })
    }

    /// Names the client on every request that does not name one already.
    pub fn with_client(mut self, client: &'static str) -> Self {
        self.client = Some(AsciiMetadataValue::from_static(client));
        self
    }

    pub fn is_set(&self) -> bool {
        self.value.is_some()
    }
}

impl Interceptor for Bearer {
    fn call(&mut self, mut request: Request<()>) -> Result<Request<()>, Status> {
        if let Some(value) = &self.value
            && !request.metadata().contains_key("authorization")
        {
            request.metadata_mut().insert("authorization", value.clone());
        }
        if let Some(client) = &self.client
            && !request.metadata().contains_key(crate::metadata::CLIENT)
        {
            request.metadata_mut().insert(crate::metadata::CLIENT, client.clone());
        }
        Ok(request)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InvalidToken;

impl std::fmt::Display for InvalidToken {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("the token must be printable ASCII")
    }
}

impl std::error::Error for InvalidToken {}

/// The token a client speaks with: the one it was given, else, when the
/// server is on this machine, the one a dev-mode server (`make run`) wrote
/// in the current directory.
pub fn token_for(server: &str, given: Option<&str>) -> Option<String> {
    match given {
        Some(token) => Some(token.to_owned()),
        None => std::env::current_dir().ok().and_then(|dir| dev_token(server, &dir)),
    }
}

/// The dev server's token in `dir`, when `server` is on this machine
/// (a loopback address or localhost) and the file exists.
pub fn dev_token(server: &str, dir: &Path) -> Option<String> {
    let uri: tonic::codegen::http::Uri = server.parse().ok()?;
    let host = uri.host()?.trim_start_matches('[').trim_end_matches(']');
    let local = host.eq_ignore_ascii_case("localhost")
        || host.parse::<std::net::IpAddr>().is_ok_and(|address| address.is_loopback());
    if !local {
        return None;
    }
    let token = std::fs::read_to_string(dir.join(DEV_TOKEN_FILE)).ok()?;
    let token = token.trim();
    (!token.is_empty()).then(|| token.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dev_token_is_used_only_for_a_local_server() {
        let dir = std::env::temp_dir().join(format!("lore-dev-token-{}", std::process::id()));
        std::fs::create_dir_all(dir.join(".lore")).unwrap();
        std::fs::write(dir.join(DEV_TOKEN_FILE), "lore_abc\n").unwrap();
        for local in ["http://127.0.0.1:50051", "http://localhost:1", "http://[::1]:50051", "127.0.0.1"] {
            assert_eq!(dev_token(local, &dir).as_deref(), Some("lore_abc"), "{local}");
        }
        for remote in ["http://lore.internal:50051", "https://10.0.0.4:50051", "http://[2001:db8::1]:1"] {
            assert_eq!(dev_token(remote, &dir), None, "{remote}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_token_that_cannot_travel_in_metadata_is_refused() {
        assert!(Bearer::new(Some("lore_\u{e9}")).is_err());
        assert!(Bearer::new(Some("lore_ok")).unwrap().is_set());
        assert!(!Bearer::new(None).unwrap().is_set());
    }
}
