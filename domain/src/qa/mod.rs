//! QA-learning: failures become patterns, patterns become warnings, and
//! warnings are measured.
//!
//! - `capture`: CaptureFailure. Categorize by the rule table, normalize each
//!   message into a template, link it to a pattern (or start one).
//! - `fixes`: fix attempts, resolution and the gotcha a fix becomes.
//! - `warnings`: GetWarnings and RecordOutcome.
//! - `results`: task results, which score the warnings of their task.
//! - `significance`: shown against held-out warnings, with intervals.
//! - `patterns`: listing, editing, merging and splitting patterns.
//! - `masks`: a project's own grouping masks, as data.
//! - `guards`: warnings at the call a person turned into refusals.
//! - `remining`: Brain over recent occurrences, merging and splitting
//!   where it disagrees with the captures' grouping.
//! - `promotion`: proven patterns proposed, reviewed and published.
//! - `instructions`: published promotions as entries of the project's
//!   AGENTS.md or CLAUDE.md.
//! - `dashboard`: the aggregates.
//! - `hotspots`: where the project's work fails QA more than the rest.

pub mod capture;
pub mod category;
pub mod dashboard;
pub mod fixes;
pub mod grouping;
pub mod guards;
pub mod hotspots;
pub mod instructions;
pub mod literal_reading;
pub mod mask_proposals;
pub mod masks;
pub mod patterns;
pub mod promotion;
pub mod regrouping;
pub mod regrouping_proposals;
pub mod remining;
pub mod results;
pub mod routes;
pub mod template;
pub mod warnings;

use serde::{Deserialize, Serialize};
use sqlx::PgPool;

use std::sync::Arc;

use crate::Error;
use crate::knowledge::KnowledgeBase;
use crate::settings::Switches;
use lore_store::replicas::ReadPools;
use lore_types::qa::PromotionThresholds;

/// `[qa]` configuration: the grouping threshold, when patterns are shown,
/// how outcomes move confidence, and when a pattern may be promoted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct QaConfig {
    /// Share of template positions a message must fit to join a pattern.
    pub similarity_threshold: f64,
    /// Confidence of a new pattern.
    pub initial_confidence: f64,
    /// Added to a pattern's confidence when it is seen in another task.
    pub recurrence_boost: f64,
    /// Added on each prevention, up to `max_confidence`.
    pub prevention_boost: f64,
    pub max_confidence: f64,
    /// Taken on each failure despite a warning, down to `min_confidence`.
    pub failure_decay: f64,
    pub min_confidence: f64,
    /// Patterns below either floor are not warned about.
    pub warn_min_occurrences: i64,
    pub warn_min_confidence: f64,
    /// How often the leader re-mines projects with new occurrences
    /// (`remining`); 0 never.
    pub remine_interval_secs: u64,
    /// The newest occurrences of a project re-mining reads.
    pub remine_window: i64,
    /// Share of tasks (by task id) whose warnings are recorded but not shown,
    /// to measure what warnings change; 0 shows every warning.
    pub holdout_fraction: f64,
    pub promotion: PromotionThresholds,
    /// Per project, the instructions file approved promotions are written
    /// into (see `instructions`).
    pub instructions: Vec<instructions::InstructionsFile>,
    /// `qa.warnings.enabled`: warnings in briefings and GetWarnings. A row
    /// of the settings table overrides it at run time (see
    /// [`crate::settings`]).
    pub warnings: Switch,
    /// `qa.learning.enabled`: failures grouped into patterns, confidence
    /// moved by outcomes, promotions proposed, re-mining. Overridden the
    /// same way.
    pub learning: Switch,
}

/// A switch of the config: `[qa.warnings] enabled = false`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Switch {
    pub enabled: bool,
}

impl Default for Switch {
    fn default() -> Self {
        Self { enabled: true }
    }
}

impl Default for QaConfig {
    fn default() -> Self {
        Self {
            similarity_threshold: grouping::DEFAULT_SIMILARITY_THRESHOLD,
            initial_confidence: 0.5,
            recurrence_boost: 0.02,
            prevention_boost: 0.05,
            max_confidence: 0.95,
            failure_decay: 0.03,
            min_confidence: 0.1,
            warn_min_occurrences: 2,
            warn_min_confidence: 0.3,
            holdout_fraction: 0.1,
            remine_interval_secs: 600,
            remine_window: 5000,
            promotion: PromotionThresholds::default(),
            instructions: Vec::new(),
            warnings: Switch::default(),
            learning: Switch::default(),
        }
    }
}

impl QaConfig {
    /// Why the values cannot work, if they cannot.
    pub fn check(&self) -> Result<(), String> {
        let unit = [
            ("similarity_threshold", self.similarity_threshold),
            ("initial_confidence", self.initial_confidence),
            ("recurrence_boost", self.recurrence_boost),
            ("prevention_boost", self.prevention_boost),
            ("max_confidence", self.max_confidence),
            ("failure_decay", self.failure_decay),
            ("min_confidence", self.min_confidence),
            ("warn_min_confidence", self.warn_min_confidence),
            ("holdout_fraction", self.holdout_fraction),
            ("promotion.min_effectiveness", self.promotion.min_effectiveness),
            ("promotion.min_confidence", self.promotion.min_confidence),
            ("promotion.significance", self.promotion.significance),
        ];
        if let Some((name, _)) = unit.iter().find(|(_, value)| !(0.0..=1.0).contains(value)) {
            return Err(format!("qa.{name} must be between 0 and 1"));
        }
        if self.promotion.significance == 0.0 {
            return Err("qa.promotion.significance must be above 0 (1 turns the test off)".into());
        }
        if self.similarity_threshold == 0.0 {
            return Err("qa.similarity_threshold must be above 0".into());
        }
        if self.min_confidence > self.max_confidence
            || !(self.min_confidence..=self.max_confidence).contains(&self.initial_confidence)
        {
            return Err("qa: min_confidence <= initial_confidence <= max_confidence must hold".into());
        }
        for (index, file) in self.instructions.iter().enumerate() {
            if self.instructions[..index].iter().any(|earlier| earlier.project == file.project) {
                return Err(format!("qa.instructions: project {} has two instructions files", file.project));
            }
            if file.file.file_name().is_none() {
                return Err(format!("qa.instructions: {} is not a file path", file.file.display()));
            }
        }
        if !(100..=50_000).contains(&self.remine_window) {
            return Err("qa.remine_window must be between 100 and 50000".into());
        }
        if self.warn_min_occurrences < 1 || self.promotion.min_tasks < 1 {
            return Err("qa.warn_min_occurrences and qa.promotion.min_tasks must be at least 1".into());
        }
        Ok(())
    }
}

/// The QA-learning service over PostgreSQL; successful fixes and promoted
/// patterns go to the knowledge base.
#[derive(Debug, Clone)]
pub struct QaLearning {
    pool: PgPool,
    /// Where dashboards read (a replica when one is fresh enough).
    reads: ReadPools,
    knowledge: KnowledgeBase,
    sanitizer: lore_sanitize::Sanitizer,
    config: QaConfig,
    rules: category::RuleCache,
    routes: routes::RouteCache,
    masks: masks::MaskCache,
    /// Warnings and learning on or off, as this replica holds them.
    switches: Arc<Switches>,
    /// Each project's hot spots as briefings last read them.
    hot_spots: Arc<hotspots::HotSpotCache>,
}

impl QaLearning {
    /// The injection screen, the knowledge base's.
    pub fn screening(&self) -> &crate::screening::Screening {
        self.knowledge.screening()
    }

    pub fn new(pool: PgPool, knowledge: KnowledgeBase, sanitizer: lore_sanitize::Sanitizer, config: QaConfig) -> Self {
        Self {
            reads: ReadPools::primary_only(pool.clone()),
            pool,
            knowledge,
            sanitizer,
            rules: category::RuleCache::default(),
            routes: routes::RouteCache::default(),
            masks: masks::MaskCache::default(),
            switches: Arc::new(Switches::new(config.warnings.enabled, config.learning.enabled)),
            hot_spots: Arc::default(),
            config,
        }
    }

    /// The switches as the settings table holds them (see
    /// [`crate::settings::Settings`]); without, the config's.
    pub fn with_switches(mut self, switches: Arc<Switches>) -> Self {
        self.switches = switches;
        self
    }

    pub fn switches(&self) -> &Switches {
        &self.switches
    }

    /// Refuses what learns while learning is switched off.
    fn learning_on(&self) -> Result<(), Error> {
        if self.switches.learning() {
            Ok(())
        } else {
            Err(Error::FailedPrecondition(
                "learning is switched off (qa.learning.enabled); switch it on with `lore qa switches --learning on`"
                    .into(),
            ))
        }
    }

    /// Dashboards read through `reads` (`database.read_urls`).
    pub fn with_reads(mut self, reads: ReadPools) -> Self {
        self.reads = reads;
        self
    }

    pub fn config(&self) -> &QaConfig {
        &self.config
    }
}
