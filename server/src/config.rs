//! The server's one configuration struct, loaded once at start-up from an
//! optional TOML file and `LORE_*` environment variables (which win), then
//! passed down. Every option is documented in the book's Configuration
//! chapter (docs/guide/configuration.md); keep the two in step.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use figment::Figment;
use figment::providers::{Env, Format, Serialized, Toml};
use serde::{Deserialize, Serialize};

pub use lore_store::DatabaseConfig;

/// The gRPC port of the server; 50052 is the sidecar's.
pub const DEFAULT_LISTEN_ADDR: &str = "127.0.0.1:50051";
/// Kubernetes sends SIGKILL 30 s after SIGTERM by default; drain within that.
const DEFAULT_SHUTDOWN_GRACE_SECS: u64 = 25;
/// 16 MiB: an Ingest batch of 1000 actions with large contexts fits.
const DEFAULT_MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;
/// Agents heartbeat every 30 s or so; five silent minutes means gone.
const DEFAULT_SESSION_TIMEOUT_SECS: u64 = 300;
const DEFAULT_SWEEP_INTERVAL_SECS: u64 = 30;
/// Often enough that a client notices a dead stream within seconds.
const DEFAULT_FOLLOW_HEARTBEAT_SECS: u64 = 5;
/// Where `make run` keeps its PostgreSQL data between runs.
const DEFAULT_DEV_DATA_DIR: &str = ".lore/pgdata";
/// Where `make run` writes its admin token; the `lore` CLI looks there
/// (lore_proto::DEV_TOKEN_FILE) when talking to a local server.
const DEFAULT_DEV_TOKEN_FILE: &str = lore_proto::DEV_TOKEN_FILE;
/// Where downloaded tools (PostgreSQL, grpcurl, model files) are cached.
const DEFAULT_CACHE_DIR: &str = ".cache";

/// Environment variables are `LORE_` + the option path in upper case, with
/// `__` between a section and its key: `LORE_LOG__FORMAT=json`.
const ENV_PREFIX: &str = "LORE_";
/// Other variables that start with `LORE_` belong to other programs (the CLI's
/// `LORE_TOKEN`, the harness's `LORE_CACHE_DIR` is shared on purpose); only
/// these top-level keys are read from the environment.
const ENV_TOP_LEVEL_KEYS: &[&str] = &[
    "listen_addr",
    "database_url",
    "database",
    "dev_postgres",
    "cache_dir",
    "log",
    "telemetry",
    "grpc",
    "tls",
    "auth",
    "tool_calls",
    "actions",
    "redaction",
    "retention",
    "knowledge",
    "qa",
    "reports",
    "briefing",
    "trust",
    "web",
    "shutdown_grace_secs",
];

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    /// Address the gRPC server listens on.
    pub listen_addr: SocketAddr,
    /// PostgreSQL URL. When unset, the server runs its own PostgreSQL from the
    /// cache (dev mode), keeping its data in `dev_postgres.data_dir`. Also read
    /// from plain `DATABASE_URL`.
    pub database_url: Option<String>,
    pub database: DatabaseConfig,
    pub dev_postgres: DevPostgresConfig,
    /// Directory for downloaded tools (PostgreSQL, grpcurl, model files).
    pub cache_dir: PathBuf,
    pub log: LogConfig,
    pub telemetry: TelemetryConfig,
    pub grpc: GrpcConfig,
    pub tls: TlsConfig,
    pub auth: AuthConfig,
    pub tool_calls: ToolCallsConfig,
    pub actions: ActionsConfig,
    /// Which classes of personal data are redacted (secrets always are).
    pub redaction: lore_sanitize::PersonalData,
    pub retention: RetentionConfig,
    pub knowledge: lore_domain::knowledge::KnowledgeConfig,
    pub qa: lore_domain::qa::QaConfig,
    pub reports: lore_domain::reports::ReportsConfig,
    pub briefing: lore_domain::briefing::BriefingConfig,
    /// The hosts each project owns, which the injection screen does not
    /// count as outside addresses.
    pub trust: lore_domain::screening::TrustConfig,
    /// The web console (`web.listen`); off when no address is given.
    pub web: WebConfig,
    /// How long in-flight calls may take to finish after SIGTERM/SIGINT
    /// before their connections are closed.
    pub shutdown_grace_secs: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DevPostgresConfig {
    /// Data directory of the dev-mode PostgreSQL, kept between runs.
    pub data_dir: PathBuf,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line, for log collectors.
    Json,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LogConfig {
    pub format: LogFormat,
    /// A `tracing` filter such as `info` or `lore_server=debug,sqlx=warn`;
    /// `RUST_LOG` overrides it when set.
    pub filter: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TelemetryConfig {
    /// OTLP/gRPC endpoint for traces, e.g. `http://otel-collector:4317`.
    /// Nothing is exported when unset (also read from
    /// `OTEL_EXPORTER_OTLP_ENDPOINT`).
    pub otlp_endpoint: Option<String>,
    /// `service.name` of the exported resource.
    pub service_name: String,
    /// How often metrics are exported.
    pub metrics_interval_secs: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TlsConfig {
    /// PEM certificate chain of the server. With `key_file`, the server
    /// speaks TLS only (rustls); without both, plaintext.
    pub cert_file: Option<PathBuf>,
    /// PEM private key of `cert_file`.
    pub key_file: Option<PathBuf>,
    /// PEM CA bundle: when set, clients must present a certificate it
    /// signed (mutual TLS), on top of their bearer token.
    pub client_ca_file: Option<PathBuf>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ToolCallsConfig {
    /// Log KnowledgeService and QaLearningService calls that carry
    /// `x-lore-session-id` as `tool_call` actions of that session.
    pub enabled: bool,
    /// Finished calls waiting to be stored; beyond it they are dropped (and
    /// counted in `lore.tool_calls.dropped`) rather than slow the calls.
    pub queue_capacity: usize,
}

impl Default for ToolCallsConfig {
    fn default() -> Self {
        Self { enabled: true, queue_capacity: 10_000 }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GrpcConfig {
    /// Largest request or response message accepted, in bytes. Above the
    /// largest valid request (an Ingest batch of 1000 actions), so oversized
    /// fields get an INVALID_ARGUMENT naming them rather than a transport
    /// error.
    pub max_message_bytes: usize,
    /// Calls served at once; more are refused with RESOURCE_EXHAUSTED at
    /// once rather than queued (a stream counts while it is set up).
    pub max_concurrent_calls: usize,
    /// A call that has not answered after this long is cut with
    /// DEADLINE_EXCEEDED (for a stream: until it starts answering).
    pub call_timeout_secs: u64,
    /// Calls per second per token (per client address when auth is off);
    /// beyond it RESOURCE_EXHAUSTED says when to retry. 0 turns it off.
    pub rate_limit_per_token: u32,
    /// Calls a token may make at once above its rate.
    pub rate_limit_burst: u32,
}

impl Default for GrpcConfig {
    fn default() -> Self {
        Self {
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            max_concurrent_calls: 512,
            call_timeout_secs: 30,
            rate_limit_per_token: 1000,
            rate_limit_burst: 2000,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AuthConfig {
    /// Require a bearer token (`lore-server token create`) on every call to
    /// the Lore services; health and reflection stay open. Switch off only
    /// when something in front of the server authenticates instead.
    pub enabled: bool,
    /// How long a replica trusts a token it verified before asking the
    /// database again. Revocations reach every replica at once (NOTIFY);
    /// this only bounds a notification lost with a connection.
    pub cache_ttl_secs: u64,
    /// Dev mode (no database_url): where the local admin token is written,
    /// for the `lore` CLI to find.
    pub dev_token_file: PathBuf,
    /// An admin token to register at start-up (only its hash is stored),
    /// so a deployment can keep its first token in a Secret. At least 32
    /// printable ASCII characters.
    pub bootstrap_admin_token: Option<String>,
}

impl Default for AuthConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            cache_ttl_secs: 60,
            dev_token_file: PathBuf::from(DEFAULT_DEV_TOKEN_FILE),
            bootstrap_admin_token: None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ActionsConfig {
    /// Strings in action context longer than this are cut and marked
    /// `... [TRUNCATED]`.
    pub max_string_chars: usize,
    /// A context larger than this (after sanitization, in bytes of JSON) is
    /// replaced by a marked preview.
    pub max_context_bytes: usize,
    /// An active session with no heartbeat or action for this long is marked
    /// disconnected (reason timeout).
    pub session_timeout_secs: u64,
    /// How often the disconnect sweep runs.
    pub sweep_interval_secs: u64,
    /// How often a following Resume stream sends a heartbeat.
    pub follow_heartbeat_secs: u64,
}

impl Default for ActionsConfig {
    fn default() -> Self {
        Self {
            max_string_chars: lore_sanitize::DEFAULT_MAX_STRING_CHARS,
            max_context_bytes: lore_domain::actions::DEFAULT_MAX_CONTEXT_BYTES,
            session_timeout_secs: DEFAULT_SESSION_TIMEOUT_SECS,
            sweep_interval_secs: DEFAULT_SWEEP_INTERVAL_SECS,
            follow_heartbeat_secs: DEFAULT_FOLLOW_HEARTBEAT_SECS,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RetentionConfig {
    /// Months of actions older than this many days move to the archive.
    pub archive_after_days: u32,
    /// Archived months older than this many days are dropped.
    pub drop_after_days: u32,
    /// How often retention runs (it can also be run with RunRetention); 0:
    /// only when asked.
    pub interval_secs: u64,
}

impl Default for RetentionConfig {
    fn default() -> Self {
        Self { archive_after_days: 90, drop_after_days: 365, interval_secs: 24 * 60 * 60 }
    }
}

impl Default for Config {
    fn default() -> Self {
        Self {
            listen_addr: DEFAULT_LISTEN_ADDR.parse().expect("default listen address parses"),
            database_url: None,
            database: DatabaseConfig::default(),
            dev_postgres: DevPostgresConfig::default(),
            cache_dir: PathBuf::from(DEFAULT_CACHE_DIR),
            log: LogConfig::default(),
            telemetry: TelemetryConfig::default(),
            grpc: GrpcConfig::default(),
            tls: TlsConfig::default(),
            auth: AuthConfig::default(),
            tool_calls: ToolCallsConfig::default(),
            knowledge: lore_domain::knowledge::KnowledgeConfig::default(),
            qa: lore_domain::qa::QaConfig::default(),
            reports: lore_domain::reports::ReportsConfig::default(),
            briefing: lore_domain::briefing::BriefingConfig::default(),
            trust: lore_domain::screening::TrustConfig::default(),
            web: WebConfig::default(),
            redaction: lore_sanitize::PersonalData::default(),
            actions: ActionsConfig::default(),
            retention: RetentionConfig::default(),
            shutdown_grace_secs: DEFAULT_SHUTDOWN_GRACE_SECS,
        }
    }
}

impl Default for DevPostgresConfig {
    fn default() -> Self {
        Self { data_dir: PathBuf::from(DEFAULT_DEV_DATA_DIR) }
    }
}

impl Default for LogConfig {
    fn default() -> Self {
        Self {
            format: LogFormat::Text,
            // sqlx reports PostgreSQL NOTICEs ("already exists, skipping") at info.
            filter: "info,sqlx::postgres::notice=warn".to_owned(),
        }
    }
}

impl Default for TelemetryConfig {
    fn default() -> Self {
        Self { otlp_endpoint: None, service_name: "lore-server".to_owned(), metrics_interval_secs: 60 }
    }
}

/// Why the configuration could not be loaded. The message names the file or
/// the option.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read config file {path}: {source}")]
    UnreadableFile { path: PathBuf, source: std::io::Error },
    #[error("invalid configuration: {0}")]
    Invalid(String),
}

impl Config {
    /// Loads defaults, then the TOML file at `path` (which must exist and be
    /// readable when given), then the environment.
    pub fn load(path: Option<&Path>) -> Result<Self, ConfigError> {
        let mut figment = Figment::from(Serialized::defaults(Config::default()));
        if let Some(path) = path {
            let text = std::fs::read_to_string(path)
                .map_err(|source| ConfigError::UnreadableFile { path: path.to_owned(), source })?;
            figment = figment.merge(Toml::string(&text));
        }
        let config: Config = figment
            .merge(Env::raw().only(&["DATABASE_URL"]))
            .merge(Env::raw().only(&["OTEL_EXPORTER_OTLP_ENDPOINT"]).map(|_| "telemetry.otlp_endpoint".into()))
            .merge(Env::prefixed(ENV_PREFIX).split("__").filter(|key| {
                let top_level = key.as_str().split('.').next().unwrap_or_default();
                ENV_TOP_LEVEL_KEYS.iter().any(|known| known.eq_ignore_ascii_case(top_level))
            }))
            .extract()
            .map_err(|error| ConfigError::Invalid(describe_figment_error(error)))?;
        config.validate()?;
        Ok(config)
    }

    fn validate(&self) -> Result<(), ConfigError> {
        self.database.validate().map_err(ConfigError::Invalid)?;
        if self.actions.session_timeout_secs == 0
            || self.actions.sweep_interval_secs == 0
            || self.actions.follow_heartbeat_secs == 0
        {
            return Err(ConfigError::Invalid(
                "actions.session_timeout_secs and actions.sweep_interval_secs must be at least 1".into(),
            ));
        }
        if !(1..=500).contains(&self.web.page_size) {
            return Err(ConfigError::Invalid(format!("web.page_size must be 1 to 500, not {}", self.web.page_size)));
        }
        if self.actions.max_string_chars == 0 || self.actions.max_context_bytes < 1024 {
            return Err(ConfigError::Invalid(
                "actions.max_string_chars must be at least 1 and actions.max_context_bytes at least 1024".into(),
            ));
        }
        if self.retention.archive_after_days == 0 || self.retention.drop_after_days < self.retention.archive_after_days
        {
            return Err(ConfigError::Invalid(
                "retention: archive_after_days must be at least 1, drop_after_days at least archive_after_days".into(),
            ));
        }
        self.briefing.check().map_err(ConfigError::Invalid)?;
        self.trust.check().map_err(ConfigError::Invalid)?;
        check_watched_folders(&self.knowledge.watch)?;
        self.qa.check().map_err(ConfigError::Invalid)?;
        if self.grpc.max_concurrent_calls == 0 || self.grpc.call_timeout_secs == 0 {
            return Err(ConfigError::Invalid(
                "grpc.max_concurrent_calls and grpc.call_timeout_secs must be at least 1".into(),
            ));
        }
        if self.telemetry.metrics_interval_secs == 0 || self.tool_calls.queue_capacity == 0 {
            return Err(ConfigError::Invalid(
                "telemetry.metrics_interval_secs and tool_calls.queue_capacity must be at least 1".into(),
            ));
        }
        if self.tls.cert_file.is_some() != self.tls.key_file.is_some() {
            return Err(ConfigError::Invalid("tls.cert_file and tls.key_file go together: set both or neither".into()));
        }
        if self.tls.client_ca_file.is_some() && self.tls.cert_file.is_none() {
            return Err(ConfigError::Invalid("tls.client_ca_file needs tls.cert_file and tls.key_file".into()));
        }
        if self.auth.cache_ttl_secs == 0 {
            return Err(ConfigError::Invalid("auth.cache_ttl_secs must be at least 1".into()));
        }
        if let Some(token) = &self.auth.bootstrap_admin_token
            && (token.len() < 32 || !token.bytes().all(|byte| byte.is_ascii_graphic()))
        {
            return Err(ConfigError::Invalid(
                "auth.bootstrap_admin_token must be at least 32 printable ASCII characters".into(),
            ));
        }
        if let Some(url) = &self.database_url
            && !(url.starts_with("postgres://") || url.starts_with("postgresql://"))
        {
            return Err(ConfigError::Invalid("database_url must start with postgres:// or postgresql://".into()));
        }
        Ok(())
    }

    pub fn shutdown_grace(&self) -> Duration {
        Duration::from_secs(self.shutdown_grace_secs)
    }
}

/// figment's errors can hold several problems; list them all, each with the
/// option path, so one start-up shows every bad key.
fn describe_figment_error(error: figment::Error) -> String {
    error
        .into_iter()
        .map(|error| {
            let path = error.path.join(".");
            if path.is_empty() { error.kind.to_string() } else { format!("{path}: {}", error.kind) }
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// `[web]`: the console's listener and its cookie.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WebConfig {
    /// Where the console listens; no console when unset.
    pub listen: Option<SocketAddr>,
    /// Marks the session cookie `Secure`: set it when the console is reached
    /// over HTTPS (an Ingress with TLS), so the cookie never travels in the
    /// clear.
    pub secure_cookie: bool,
    /// Rows per page of the long lists (actions, patterns).
    pub page_size: i64,
}

impl Default for WebConfig {
    fn default() -> Self {
        Self { listen: None, secure_cookie: false, page_size: 50 }
    }
}

/// The watched folders: each names a project and a path, a project
/// publishes to one folder at most, and the watcher's intervals are set.
fn check_watched_folders(watch: &lore_domain::knowledge::watch::WatchConfig) -> Result<(), ConfigError> {
    for (index, folder) in watch.folders.iter().enumerate() {
        let field = format!("knowledge.watch.folders[{index}]");
        lore_types::validate::project(&format!("{field}.project"), &folder.project)
            .map_err(|error| ConfigError::Invalid(error.to_string()))?;
        if folder.path.as_os_str().is_empty() {
            return Err(ConfigError::Invalid(format!("{field}.path: required")));
        }
    }
    let mut publishing: Vec<&str> = Vec::new();
    for folder in watch.folders.iter().filter(|folder| folder.publish) {
        if publishing.contains(&folder.project.as_str()) {
            return Err(ConfigError::Invalid(format!(
                "knowledge.watch.folders: project {} has more than one publish folder",
                folder.project
            )));
        }
        publishing.push(&folder.project);
    }
    if watch.debounce_ms == 0 || watch.rescan_secs == 0 || watch.max_file_bytes == 0 {
        return Err(ConfigError::Invalid(
            "knowledge.watch: debounce_ms, rescan_secs and max_file_bytes must be at least 1".into(),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests;
