//! The services the handlers call, built once from the configuration: the
//! domain's, and the server's own layers (auth, limits, tool calls). The
//! gRPC server and the web console both receive them from `app`.

use std::sync::Arc;
use std::time::Duration;

use lore_domain::actions::ActionLog;

use crate::config::Config;

/// Everything the handlers need, built once at start-up.
#[derive(Debug, Clone)]
pub struct Services {
    pub actions: ActionLog,
    pub knowledge: lore_domain::knowledge::KnowledgeBase,
    pub qa: lore_domain::qa::QaLearning,
    /// The switches people flip at run time, followed on every replica.
    pub settings: lore_domain::settings::Settings,
    pub briefer: lore_domain::briefing::Briefer,
    /// What the injection screen held, and people's decisions.
    pub quarantine: lore_domain::trust::quarantine::Quarantine,
    /// Erasure of memory items with what derives from them.
    pub erasure: lore_domain::trust::erasure::Erasure,
    pub reports: lore_domain::reports::Reports,
    /// Where reads that may lag go (`database.read_urls`).
    pub reads: lore_store::replicas::ReadPools,
    /// `None` when auth is switched off.
    pub auth: Option<Arc<crate::auth::Authenticator>>,
    pub limits: Arc<crate::limits::Limits>,
    /// `None` when tool-call logging is switched off.
    pub tool_calls: Option<Arc<crate::tool_calls::ToolCalls>>,
    pub max_message_bytes: usize,
    /// `None`: plaintext.
    pub tls: Option<tonic::transport::ServerTlsConfig>,
}

impl Services {
    /// Fails when the configured embedding provider cannot be built (e.g.
    /// the local model's files are missing). Call inside the runtime: the
    /// authenticator starts listening for token changes.
    pub fn new(config: &Config, pool: sqlx::PgPool) -> Result<Self, lore_domain::knowledge::embed::EmbedError> {
        let sanitizer = sanitizer(config);
        lore_domain::screening::prepare();
        let limits = lore_domain::actions::ActionLimits {
            max_context_bytes: config.actions.max_context_bytes,
            follow_heartbeat: std::time::Duration::from_secs(config.actions.follow_heartbeat_secs),
            retention: lore_domain::actions::RetentionPolicy {
                archive_after_days: config.retention.archive_after_days,
                drop_after_days: config.retention.drop_after_days,
            },
        };
        let embedder = lore_domain::knowledge::embed::from_config(&config.knowledge.embedding, &config.cache_dir)?;
        let reads = lore_store::replicas::ReadPools::connect(pool.clone(), &config.database);
        let mut knowledge =
            lore_domain::knowledge::KnowledgeBase::new(pool.clone(), Some(embedder), config.knowledge.search.clone())
                .with_watch_config(&config.knowledge.watch)
                .with_embedding_batch(config.knowledge.embedding.batch_size)
                .with_reads(reads.clone())
                .with_screening(lore_domain::screening::Screening::new(&config.trust));
        if !config.knowledge.keyword_index.enabled {
            knowledge = knowledge.without_keyword_index();
        }
        let actions = ActionLog::new(pool.clone(), sanitizer.clone(), limits).with_reads(reads.clone());
        let settings = lore_domain::settings::Settings::start(
            pool.clone(),
            lore_domain::settings::Switches::new(config.qa.warnings.enabled, config.qa.learning.enabled),
        );
        let qa =
            lore_domain::qa::QaLearning::new(pool.clone(), knowledge.clone(), sanitizer.clone(), config.qa.clone())
                .with_reads(reads.clone())
                .with_switches(settings.switches());
        Ok(Self {
            tool_calls: config
                .tool_calls
                .enabled
                .then(|| crate::tool_calls::ToolCalls::start(actions.clone(), config.tool_calls.queue_capacity)),
            quarantine: lore_domain::trust::quarantine::Quarantine::new(pool.clone(), knowledge.clone(), qa.clone()),
            erasure: lore_domain::trust::erasure::Erasure::new(
                pool.clone(),
                actions.clone(),
                knowledge.clone(),
                qa.clone(),
            ),
            briefer: lore_domain::briefing::Briefer::new(
                actions.clone(),
                knowledge.clone(),
                qa.clone(),
                lore_domain::injections::InjectionLedger::new(pool.clone()),
                config.briefing.clone(),
            ),
            reports: lore_domain::reports::Reports::new(
                reads.clone(),
                actions.clone(),
                knowledge.clone(),
                qa.clone(),
                config.reports.clone(),
            ),
            qa,
            settings,
            knowledge,
            auth: config.auth.enabled.then(|| {
                crate::auth::Authenticator::start(pool.clone(), Duration::from_secs(config.auth.cache_ttl_secs))
            }),
            actions,
            limits: crate::limits::Limits::new(&config.grpc),
            max_message_bytes: config.grpc.max_message_bytes,
            tls: None,
            reads,
        })
    }
}

/// Redaction as configured, and the secret catalog's report at start.
fn sanitizer(config: &Config) -> lore_sanitize::Sanitizer {
    let sanitizer = lore_sanitize::Sanitizer::new(lore_sanitize::SanitizeConfig {
        max_string_chars: config.actions.max_string_chars,
        personal: config.redaction,
        ..lore_sanitize::SanitizeConfig::default()
    });
    let catalog = lore_sanitize::catalog_summary();
    tracing::info!(
        rules = catalog.rules,
        unused = catalog.unused.len(),
        unevaluated = ?catalog.unevaluated,
        "secret redaction: {} catalog rules in use, {} left out as not applying to an action's context",
        catalog.rules,
        catalog.unused.len()
    );
    sanitizer
}
