//! TLS for the gRPC listener (rustls, through tonic), from the PEM files
//! the configuration names.

use std::path::Path;

use anyhow::Context as _;
use tonic::transport::{Certificate, Identity, ServerTlsConfig};

use crate::config::TlsConfig;

/// The listener's TLS settings; `None` when no certificate is configured.
pub fn server_config(config: &TlsConfig) -> anyhow::Result<Option<ServerTlsConfig>> {
    let (Some(cert_file), Some(key_file)) = (&config.cert_file, &config.key_file) else {
        return Ok(None);
    };
    let identity = Identity::from_pem(read_pem(cert_file, "tls.cert_file")?, read_pem(key_file, "tls.key_file")?);
    let mut tls = ServerTlsConfig::new().identity(identity);
    if let Some(ca_file) = &config.client_ca_file {
        tls = tls.client_ca_root(Certificate::from_pem(read_pem(ca_file, "tls.client_ca_file")?));
    }
    Ok(Some(tls))
}

/// A PEM file's contents; tonic only parses them when the listener starts,
/// so at least check here that there is something to parse.
fn read_pem(path: &Path, option: &str) -> anyhow::Result<Vec<u8>> {
    let pem = std::fs::read(path).with_context(|| format!("{option}: cannot read {}", path.display()))?;
    anyhow::ensure!(
        pem.windows(10).any(|window| window == b"-----BEGIN"),
        "{option}: {} is not a PEM file",
        path.display()
    );
    Ok(pem)
}
