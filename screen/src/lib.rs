//! lore-screen: is this text data, or is it trying to give an agent orders?
//!
//! Everything Lore injects into an agent's context (a QA warning, a lesson,
//! a fix, where the last session stopped) was written by an agent or
//! printed by a tool. Before any of it may reach another agent it is
//! screened here; what the screen holds is quarantined until a person
//! releases it.
//!
//! The method, in three steps:
//! 1. [`canonical`]: the text as a reader sees it. Zero-width,
//!    bidirectional and tag characters, full-width forms and look-alike
//!    letters are undone (and counted: hiding text is itself a sign).
//! 2. [`cues`]: the text read clause by clause as speech acts. Does a
//!    clause give an order (an imperative, an obligation put on "you", a
//!    request)? Whom does the text address? What does it ask, by the
//!    threats that matter to a coding agent's memory: overriding earlier
//!    instructions, hiding something from the user, reading or sending
//!    credentials, changing package registries or git remotes, disabling
//!    checks, hooks or reviews, piping a download into a shell, forging
//!    tags and sections? The lexicons are semantic fields, not sentences
//!    seen in attacks.
//! 3. [`classifier`]: logistic regression weighs the features into a score;
//!    the weights and the threshold are fitted on the development set
//!    (`tests/data/injection`) by [`training`], and every figure is
//!    reported with its source left out of the fit.
//! 4. [`policy`]: the shell commands in the text, parsed, and what each
//!    would do. A text that asks for a security downgrade (a download run
//!    in a shell, TLS switched off, a registry changed, a hook bypassed)
//!    is held whatever the model's score: politeness does not make it
//!    safe. No weight is fitted here, so no style of writing escapes it.
//!
//! What the screen passes but no person reviewed still reaches a model
//! only as data: [`fence`] delimits and datamarks it (spotlighting).
//!
//! A verdict names the features that weighed most, in sentences a reviewer
//! reads. Screening is pure and allocation-light: it runs inline on every
//! capture (see `make bench`).
//!
//! # Layout
//! - [`canonical`]: undoing hidden writing.
//! - [`cues`]: the clause reader and its lexicons; [`cues::Feature`].
//! - [`classifier`]: the weights (`classifier.json`, shipped in the binary).
//! - [`policy`]: the command policy.
//! - [`hosts`]: hosts in addresses, and the project's own.
//! - [`fence`]: untrusted text as a model is shown it.
//! - [`negation`]: whether a text forbids what it names, for the policy
//!   and the cues alike.
//! - [`training`]: fitting, thresholds, leave-one-source-out.
//! - [`corpus`]: reading the development set.

pub mod canonical;
pub mod classifier;
pub mod corpus;
pub mod cues;
pub mod decoded;
pub mod fence;
pub mod hosts;
pub mod negation;
pub mod policy;
pub mod training;

use std::sync::LazyLock;

use classifier::{Classifier, ClassifierFile};
use cues::Feature;

/// The model fitted on the development set (`lore eval screening
/// --write-classifier` writes it; a test checks it is what the set fits).
pub const SHIPPED_CLASSIFIER: &str = include_str!("../classifier.json");

static SHIPPED: LazyLock<Screen> = LazyLock::new(|| {
    let file: ClassifierFile = serde_json::from_str(SHIPPED_CLASSIFIER).expect("screen/classifier.json is valid JSON");
    Screen::new(Classifier::from_file(&file).expect("screen/classifier.json is a valid classifier"))
});

/// A screen with its classifier.
#[derive(Debug, Clone, PartialEq)]
pub struct Screen {
    classifier: Classifier,
}

/// What the screen says of a text.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    /// The model's probability that the text carries instructions.
    pub score: f64,
    /// True when the score reaches the model's threshold: the text must
    /// not be injected until a person releases it.
    pub held: bool,
    /// The features that weighed most, largest first.
    pub findings: Vec<Feature>,
    /// The risky commands the text asks for (the command policy): any one
    /// holds it.
    pub commands: Vec<policy::Finding>,
}

impl Verdict {
    fn passes() -> Self {
        Verdict { score: 0.0, held: false, findings: Vec::new(), commands: Vec::new() }
    }

    /// Why, one clause each ("its command `chmod -R 777 /` widens
    /// permissions or makes something public", "gives the assistant
    /// orders").
    pub fn reasons(&self) -> Vec<String> {
        let commands = self.commands.iter().map(|finding| {
            let command: String = finding.command.chars().take(COMMAND_CHARS).collect();
            format!("its command `{}` {}", command.replace('`', "'"), finding.risk.reason())
        });
        commands.chain(self.findings.iter().map(|feature| feature.reason().to_owned())).collect()
    }

    /// Why, in one sentence of the review queue ("gives the assistant
    /// orders; asks to hide something from the user").
    pub fn reason(&self) -> String {
        let reasons = self.reasons();
        if reasons.is_empty() { "nothing".to_owned() } else { reasons.join("; ") }
    }
}

/// A command is named in a reason up to this many characters.
const COMMAND_CHARS: usize = 80;

/// What the screen reads of a text: its canonical form, its features and
/// the risky commands it asks for, with what its encoded blobs say taken
/// in (a feature at its strongest in either, every command of both).
#[derive(Debug, Clone)]
pub struct Reading {
    pub canonical: canonical::Canonical,
    pub features: cues::Features,
    pub commands: Vec<policy::Finding>,
}

/// Reads a text for a project whose own hosts are `own_hosts`.
pub fn read(text: &str, own_hosts: &[String]) -> Reading {
    let mut canonical = canonical::canonical(text);
    let mut commands = policy::asked(&canonical.text, own_hosts);
    canonical.mask_hosts(own_hosts);
    let mut features = cues::features(&canonical);
    for hidden in decoded::decoded(text) {
        let mut inner = canonical::canonical(&hidden);
        commands.extend(policy::asked(&inner.text, own_hosts));
        inner.mask_hosts(own_hosts);
        for (value, hidden_value) in features.iter_mut().zip(cues::features(&inner)) {
            *value = value.max(hidden_value);
        }
    }
    Reading { canonical, features, commands }
}

/// At most this many findings are named.
const FINDINGS: usize = 3;
/// A feature is named when it carries at least this share of what pushed
/// the score up.
const FINDING_SHARE: f64 = 0.1;

impl Screen {
    pub fn new(classifier: Classifier) -> Self {
        Self { classifier }
    }

    /// The screen Lore runs with.
    pub fn shipped() -> &'static Screen {
        &SHIPPED
    }

    pub fn classifier(&self) -> &Classifier {
        &self.classifier
    }

    pub fn check(&self, text: &str) -> Verdict {
        self.check_for(text, &[])
    }

    /// The verdict for a project whose own hosts (its git remotes', its
    /// registries', lowercase) are `own_hosts`: an address there is no
    /// outside address, a source changed to it no change of source.
    pub fn check_for(&self, text: &str, own_hosts: &[String]) -> Verdict {
        if text.trim().is_empty() {
            return Verdict::passes();
        }
        let Reading { features, commands, .. } = read(text, own_hosts);
        self.verdict(&features, commands)
    }

    /// The verdict on a text's features and the risky commands it asks for.
    fn verdict(&self, features: &cues::Features, commands: Vec<policy::Finding>) -> Verdict {
        let score = self.classifier.score(features);
        let contributions = self.classifier.contributions(features);
        let total: f64 = contributions.iter().map(|(_, part)| part).sum();
        let findings = contributions
            .into_iter()
            .filter(|(_, part)| *part >= total * FINDING_SHARE)
            .take(FINDINGS)
            .map(|(feature, _)| feature)
            .collect();
        let held = score >= self.classifier.threshold || !commands.is_empty();
        Verdict { score, held, findings, commands }
    }

    /// Everything behind a verdict: the canonical text and every feature
    /// with its weight, for `lore eval screening --explain`.
    pub fn explain(&self, text: &str) -> (canonical::Canonical, cues::Features, Verdict) {
        let Reading { canonical, features, commands } = read(text, &[]);
        let verdict = self.verdict(&features, commands);
        (canonical, features, verdict)
    }
}

#[cfg(test)]
mod tests;
