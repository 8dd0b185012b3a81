//! TLS end to end: a server with a certificate that also verifies client
//! certificates, reached by the sidecar (which ships through it), the CLI
//! and a generated client, each given the CA; plaintext and clients without
//! a certificate are turned away. Certificates are made here with rcgen.

use std::path::{Path, PathBuf};

use lore_e2e::{ServerOptions, ServerProcess, TestDatabase, default_cache_dir};
use lore_proto::tls::TlsFiles;
use lore_proto::v1 as proto;
use lore_proto::v1::action_service_client::ActionServiceClient;
use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair};

use super::sidecar::{action, wait_until_stored};

struct Pki {
    dir: tempfile::TempDir,
}

impl Pki {
    /// A CA, a server certificate for localhost and 127.0.0.1, and a client
    /// certificate, all as PEM files.
    fn new() -> Self {
        let dir = tempfile::tempdir_in(default_cache_dir()).unwrap();
        let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca_params.distinguished_name.push(DnType::CommonName, "Lore test CA");
        let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().unwrap()).unwrap();
        std::fs::write(dir.path().join("ca.pem"), ca.pem()).unwrap();
        for (name, names) in [
            ("server", vec!["localhost".to_owned(), "127.0.0.1".to_owned()]),
            ("client", vec!["agent-vm-1".to_owned()]),
        ] {
            let key = KeyPair::generate().unwrap();
            let certificate = CertificateParams::new(names).unwrap().signed_by(&key, &ca).unwrap();
            std::fs::write(dir.path().join(format!("{name}.pem")), certificate.pem()).unwrap();
            std::fs::write(dir.path().join(format!("{name}-key.pem")), key.serialize_pem()).unwrap();
        }
        Self { dir }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn arg(&self, name: &str) -> String {
        self.path(name).display().to_string()
    }

    fn client_files(&self, with_certificate: bool) -> TlsFiles {
        TlsFiles {
            ca: Some(self.path("ca.pem")),
            client_cert: with_certificate.then(|| self.path("client.pem")),
            client_key: with_certificate.then(|| self.path("client-key.pem")),
        }
    }
}

async fn connect(server: &ServerProcess, files: &TlsFiles) -> Result<tonic::transport::Channel, String> {
    let endpoint = lore_proto::tls::endpoint(&server.endpoint(), files).map_err(|error| error.to_string())?;
    endpoint.connect().await.map_err(|error| format!("{error:?}"))
}

async fn recent(channel: tonic::transport::Channel, session_id: &str) -> Result<usize, tonic::Status> {
    let request = proto::GetRecentActionsRequest { session_id: session_id.into(), limit: 100, ..Default::default() };
    Ok(ActionServiceClient::new(channel).get_recent_actions(request).await?.into_inner().actions.len())
}

#[tokio::test]
async fn the_sidecar_and_the_cli_reach_a_tls_server_with_client_certificates() {
    let pki = Pki::new();
    let database = TestDatabase::new().await.unwrap();
    let mut server = ServerProcess::start(
        ServerOptions::with_database(&database.url)
            .env("LORE_TLS__CERT_FILE", &pki.arg("server.pem"))
            .env("LORE_TLS__KEY_FILE", &pki.arg("server-key.pem"))
            .env("LORE_TLS__CLIENT_CA_FILE", &pki.arg("ca.pem")),
    )
    .await
    .unwrap();

    let trusted = connect(&server, &pki.client_files(true)).await.expect("TLS with a client certificate");
    let mut actions = ActionServiceClient::new(trusted.clone());
    let session = lore_e2e::start_session(&mut actions, "tls", "agent-tls").await;

    // The sidecar ships through TLS with its own certificate.
    let spool = tempfile::tempdir_in(default_cache_dir()).unwrap();
    let (ca, cert, key) = (pki.arg("ca.pem"), pki.arg("client.pem"), pki.arg("client-key.pem"));
    let sidecar = ServerProcess::start_sidecar(
        &server.endpoint(),
        spool.path(),
        &["--ca", &ca, "--client-cert", &cert, "--client-key", &key],
    )
    .await
    .unwrap();
    let mut agent = ActionServiceClient::new(sidecar.channel().await);
    for index in 0..20 {
        agent.log_action(proto::LogActionRequest { action: Some(action(&session, index)) }).await.unwrap();
    }
    assert_eq!(wait_until_stored(&database, &session.session_id, 20).await.len(), 20, "{}", sidecar.log());
    // Reads the sidecar proxies go through the same TLS connection.
    let request =
        proto::GetRecentActionsRequest { session_id: session.session_id.clone(), limit: 5, ..Default::default() };
    assert_eq!(agent.get_recent_actions(request).await.unwrap().into_inner().actions.len(), 5);

    let (ok, stdout, stderr) = lore_cli(
        &server,
        &[
            "--ca",
            &ca,
            "--client-cert",
            &cert,
            "--client-key",
            &key,
            "resume",
            "--project",
            "tls",
            "--session",
            &session.session_id,
        ],
    )
    .await;
    assert!(ok, "the CLI over TLS: {stderr}");
    assert!(stdout.contains(&session.session_id) || stdout.contains("agent-tls"), "{stdout}");

    // Turned away: plaintext, a client without a certificate, a client
    // that does not trust the server's CA.
    let plaintext = connect(&server, &TlsFiles::default()).await;
    let refused = match plaintext {
        Err(error) => error,
        Ok(channel) => recent(channel, &session.session_id).await.unwrap_err().to_string(),
    };
    assert!(!refused.is_empty());
    let anonymous = match connect(&server, &pki.client_files(false)).await {
        Err(error) => error,
        Ok(channel) => recent(channel, &session.session_id).await.expect_err("no client certificate").to_string(),
    };
    assert!(!anonymous.is_empty());
    let other_ca = Pki::new();
    let mut wrong = pki.client_files(true);
    wrong.ca = Some(other_ca.path("ca.pem"));
    let untrusted = match connect(&server, &wrong).await {
        Err(error) => error,
        Ok(channel) => recent(channel, &session.session_id).await.expect_err("server not trusted").to_string(),
    };
    assert!(!untrusted.is_empty());
    assert_eq!(recent(trusted, &session.session_id).await.unwrap(), 20, "still served to the trusted client");
    server.stop().await;
}

/// The CLI against `server`, with the TLS flags among `args`.
async fn lore_cli(server: &ServerProcess, args: &[&str]) -> (bool, String, String) {
    lore_e2e::lore_cli(server, None::<&Path>, args).await
}
