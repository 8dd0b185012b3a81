//! lore-sidecar: the process that runs beside each agent VM.
//!
//! # Layout
//! - `lore_spool` (a crate of its own, which hooks use too when no sidecar
//!   runs): the crash-safe on-disk queue and what one record holds.
//! - [`api`]: the local ActionService: writes to the spool, reads proxied.
//! - [`learning_api`]: the QA and knowledge writes an agent makes, spooled
//!   the same way.
//! - [`inbox`]: the tail of a JSON-lines file, the other way in.
//! - [`folders`]: markdown folders on this machine, kept indexed (`--index`).
//! - [`ship`]: the Ingest stream to the server, acks, reconnects.
//! - [`status`]: `lore.v1.SidecarService`, the sidecar's figures.
//! - [`metrics`]: the same figures over OTLP.

pub mod api;
pub mod app;
pub mod folders;
pub mod inbox;
pub mod learning_api;
pub mod metrics;
pub mod ship;
pub mod status;

use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use lore_spool::{FsyncPolicy, FullPolicy};

/// How often the sidecar pings the server on an open connection, and how
/// long it waits for the answer before it calls the connection dead.
const KEEPALIVE_INTERVAL: Duration = Duration::from_secs(10);

/// TLS to lore-server, shared by the sidecar and the `lore` CLI.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct TlsArgs {
    /// PEM CA bundle that signed the server's certificate: connect with TLS.
    #[arg(long, global = true, env = "LORE_CA")]
    pub ca: Option<PathBuf>,
    /// PEM certificate to present when the server verifies clients.
    #[arg(long, global = true, env = "LORE_CLIENT_CERT", requires = "client_key")]
    pub client_cert: Option<PathBuf>,
    /// PEM private key of --client-cert.
    #[arg(long, global = true, env = "LORE_CLIENT_KEY", requires = "client_cert")]
    pub client_key: Option<PathBuf>,
}

impl TlsArgs {
    pub fn files(&self) -> lore_proto::tls::TlsFiles {
        lore_proto::tls::TlsFiles {
            ca: self.ca.clone(),
            client_cert: self.client_cert.clone(),
            client_key: self.client_key.clone(),
        }
    }
}

/// A class of personal data (`--keep-personal`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum PersonalClass {
    Cards,
    Ibans,
    NationalIds,
    Emails,
    Phones,
}

/// What the sidecar redacts: every class but those kept.
fn personal_data(keep: &[PersonalClass]) -> lore_sanitize::PersonalData {
    let mut personal = lore_sanitize::PersonalData::default();
    for class in keep {
        match class {
            PersonalClass::Cards => personal.cards = false,
            PersonalClass::Ibans => personal.ibans = false,
            PersonalClass::NationalIds => personal.national_ids = false,
            PersonalClass::Emails => personal.emails = false,
            PersonalClass::Phones => personal.phones = false,
        }
    }
    personal
}

/// Configuration of the sidecar (command-line flags, or `LORE_SIDECAR_*`).
#[derive(Debug, Clone, clap::Args)]
pub struct SidecarConfig {
    /// Local address agents send their actions to.
    #[arg(long, env = "LORE_SIDECAR_LISTEN", default_value = "127.0.0.1:50052")]
    pub listen: SocketAddr,
    /// lore-server to ship to.
    #[arg(long, env = "LORE_SERVER", default_value = "http://127.0.0.1:50051")]
    pub server: String,
    /// Bearer token for the server (a sidecar token ships; an agent token
    /// also answers reads for agents that send no token of their own).
    #[arg(long, env = "LORE_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    #[command(flatten)]
    pub tls: TlsArgs,
    /// Directory of the spool.
    #[arg(long, env = "LORE_SIDECAR_SPOOL_DIR", default_value = ".lore/spool")]
    pub spool_dir: PathBuf,
    /// A JSON-lines file to tail for actions (one action per line), for
    /// agents and hooks that can only append a line. Off when not given.
    #[arg(long, env = "LORE_SIDECAR_INBOX")]
    pub inbox: Option<PathBuf>,
    /// When an accepted action counts as durable: always (fsync before every
    /// answer, shared by concurrent appends), batch:<ms> (also wait up to
    /// <ms> for more appends per fsync), or never (no fsync before answering).
    #[arg(long, env = "LORE_SIDECAR_FSYNC", default_value = "always", value_parser = parse_fsync)]
    pub fsync: FsyncPolicy,
    /// Disk budget of the spool, in MiB.
    #[arg(long, env = "LORE_SIDECAR_DISK_BUDGET_MB", default_value_t = 1024)]
    pub disk_budget_mb: u64,
    /// What to do when the budget is full: refuse (RESOURCE_EXHAUSTED) or
    /// drop_oldest (counted).
    #[arg(long, env = "LORE_SIDECAR_WHEN_FULL", default_value = "refuse", value_parser = parse_full_policy)]
    pub when_full: FullPolicy,
    /// Actions per shipped batch (at most 1000, the server's limit).
    #[arg(long, env = "LORE_SIDECAR_BATCH_SIZE", default_value_t = 1000)]
    pub batch_size: usize,
    /// How long a batch may wait to fill, in ms.
    #[arg(long, env = "LORE_SIDECAR_LINGER_MS", default_value_t = 5)]
    pub linger_ms: u64,
    /// Classes of personal data to keep instead of redacting before the
    /// spool (comma-separated: cards, ibans, national-ids, emails, phones).
    /// Secrets are always redacted. Match the server's `redaction` settings.
    #[arg(long, env = "LORE_SIDECAR_KEEP_PERSONAL", value_delimiter = ',')]
    pub keep_personal: Vec<PersonalClass>,
    /// Batches on the wire without an ack. Two full batches keep the server
    /// busy while the sidecar stays small (docs/BENCHMARKS.md, "Replay after
    /// an outage").
    #[arg(long, env = "LORE_SIDECAR_MAX_IN_FLIGHT", default_value_t = 2)]
    pub max_in_flight: usize,
    /// OTLP/gRPC endpoint to export the sidecar's figures to as metrics
    /// (e.g. http://collector:4317). Nothing is exported when not given.
    #[arg(long, env = "LORE_SIDECAR_OTLP_ENDPOINT")]
    pub otlp_endpoint: Option<String>,
    /// Seconds between two metric exports.
    #[arg(long, env = "LORE_SIDECAR_METRICS_INTERVAL_SECS", default_value_t = 60)]
    pub metrics_interval_secs: u64,
    /// After SIGTERM, how long to keep shipping before exiting.
    #[arg(long, env = "LORE_SIDECAR_SHUTDOWN_GRACE_SECS", default_value_t = 5)]
    pub shutdown_grace_secs: u64,
    /// Serve Lore's MCP tools over streamable HTTP at http://ADDR/mcp, for
    /// agents that connect to a URL (given alone: 127.0.0.1:50053). Any
    /// address other than loopback needs --mcp-token.
    #[arg(long, env = "LORE_SIDECAR_MCP_LISTEN", num_args = 0..=1, default_missing_value = "127.0.0.1:50053")]
    pub mcp_listen: Option<SocketAddr>,
    /// The bearer token MCP clients must send (required off loopback).
    #[arg(long, env = "LORE_SIDECAR_MCP_TOKEN", hide_env_values = true)]
    pub mcp_token: Option<String>,
    /// The project of MCP calls that do not name one (?project=NAME in
    /// the URL, or the x-lore-project header).
    #[arg(long, env = "LORE_PROJECT")]
    pub mcp_project: Option<String>,
    /// A markdown folder on this machine to keep indexed in Lore
    /// (repeatable, or comma-separated): each `.md` file under it becomes
    /// the document of its path there, spooled like actions whenever it
    /// changes. The token needs the agent role.
    #[arg(long = "index", env = "LORE_SIDECAR_INDEX", value_delimiter = ',')]
    pub index: Vec<PathBuf>,
    /// The project of the indexed folders (default: the repository each
    /// folder is in).
    #[arg(long, env = "LORE_PROJECT")]
    pub index_project: Option<String>,
    /// How long a folder must be quiet before its changes are looked at, in
    /// ms (an editor's save is several events).
    #[arg(long, env = "LORE_SIDECAR_INDEX_DEBOUNCE_MS", default_value_t = 200)]
    pub index_debounce_ms: u64,
}

fn parse_fsync(text: &str) -> Result<FsyncPolicy, String> {
    match text {
        "always" => Ok(FsyncPolicy::Always),
        "never" => Ok(FsyncPolicy::Never),
        other => other
            .strip_prefix("batch:")
            .and_then(|millis| millis.parse::<u64>().ok())
            .map(|millis| FsyncPolicy::Batch(Duration::from_millis(millis)))
            .ok_or_else(|| format!("{other:?}: expected always, never or batch:<ms>")),
    }
}

fn parse_full_policy(text: &str) -> Result<FullPolicy, String> {
    match text {
        "refuse" => Ok(FullPolicy::Refuse),
        "drop_oldest" => Ok(FullPolicy::DropOldest),
        other => Err(format!("{other:?}: expected refuse or drop_oldest")),
    }
}

/// Runs the sidecar until `shutdown` resolves, then stops accepting, ships
/// for up to the grace period, and closes the spool.
pub async fn run(config: SidecarConfig, shutdown: impl Future<Output = ()> + Send + 'static) -> anyhow::Result<()> {
    app::Sidecar::start(config).await?.serve(shutdown).await
}
