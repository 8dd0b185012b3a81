//! How clients reach lore-server: plaintext, or TLS (rustls) when they are
//! given the CA that signed the server's certificate, with a client
//! certificate of their own when the server asks for one (mutual TLS).

use std::path::{Path, PathBuf};

use tonic::transport::{Certificate, ClientTlsConfig, Endpoint, Identity};

/// PEM files for TLS; all empty means plaintext.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TlsFiles {
    /// CA bundle that signed the server's certificate. Given, the
    /// connection uses TLS (and an `http://` address becomes `https://`).
    pub ca: Option<PathBuf>,
    /// Certificate chain and key to present to a server that verifies
    /// clients.
    pub client_cert: Option<PathBuf>,
    pub client_key: Option<PathBuf>,
}

#[derive(Debug, thiserror::Error)]
pub enum EndpointError {
    #[error("invalid server address {address}: {source}")]
    Address { address: String, source: tonic::transport::Error },
    #[error("{option}: cannot read {path}: {source}")]
    Read { option: &'static str, path: PathBuf, source: std::io::Error },
    #[error("{0}")]
    Usage(&'static str),
    #[error("TLS settings refused: {0}")]
    Tls(tonic::transport::Error),
}

/// An endpoint for `server` (`http://host:port`, or `https://` with TLS).
pub fn endpoint(server: &str, tls: &TlsFiles) -> Result<Endpoint, EndpointError> {
    if tls.client_cert.is_some() != tls.client_key.is_some() {
        return Err(EndpointError::Usage("--client-cert and --client-key go together"));
    }
    let address = match (&tls.ca, server.strip_prefix("http://")) {
        (Some(_), Some(rest)) => format!("https://{rest}"),
        _ => server.to_owned(),
    };
    let endpoint = Endpoint::from_shared(address.clone())
        .map_err(|source| EndpointError::Address { address: address.clone(), source })?;
    let Some(ca) = &tls.ca else {
        if address.starts_with("https://") {
            return Err(EndpointError::Usage("an https:// server needs --ca (the CA that signed its certificate)"));
        }
        return Ok(endpoint);
    };
    let mut config = ClientTlsConfig::new().ca_certificate(Certificate::from_pem(read(ca, "--ca")?));
    if let (Some(cert), Some(key)) = (&tls.client_cert, &tls.client_key) {
        config = config.identity(Identity::from_pem(read(cert, "--client-cert")?, read(key, "--client-key")?));
    }
    endpoint.tls_config(config).map_err(EndpointError::Tls)
}

fn read(path: &Path, option: &'static str) -> Result<Vec<u8>, EndpointError> {
    std::fs::read(path).map_err(|source| EndpointError::Read { option, path: path.to_owned(), source })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ca_turns_the_address_to_https_and_https_needs_one() {
        let dir = std::env::temp_dir().join(format!("lore-tls-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // Any PEM-shaped bytes: rustls parses them only on connect.
        let ca = dir.join("ca.pem");
        std::fs::write(&ca, "-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n").unwrap();
        let files = TlsFiles { ca: Some(ca), ..Default::default() };
        assert_eq!(endpoint("http://127.0.0.1:1", &files).unwrap().uri().scheme_str(), Some("https"));
        assert_eq!(endpoint("http://127.0.0.1:1", &TlsFiles::default()).unwrap().uri().scheme_str(), Some("http"));
        assert!(matches!(endpoint("https://lore:1", &TlsFiles::default()), Err(EndpointError::Usage(_))));
        let half = TlsFiles { client_cert: Some(dir.join("c.pem")), ..Default::default() };
        assert!(matches!(endpoint("http://127.0.0.1:1", &half), Err(EndpointError::Usage(_))));
        let missing = TlsFiles { ca: Some(dir.join("missing.pem")), ..Default::default() };
        assert!(matches!(endpoint("http://127.0.0.1:1", &missing), Err(EndpointError::Read { option: "--ca", .. })));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
