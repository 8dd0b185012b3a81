//! `lore eval redaction`: how well redaction works, measured through the
//! real server. Each sample goes into an action's context with LogAction and
//! is read back with SearchActions. A positive counts as caught when its
//! secret (the sample's `secret`, else the whole sample) did not come back;
//! a negative is over-redacted when it came back changed. With families
//! (`family` in .jsonl samples, grouped by what precedes a `/`), the figures
//! are given per family as well.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use super::Channel;
use anyhow::{Context as _, bail};
use indicatif::{ProgressBar, ProgressStyle};
use lore_proto::v1 as proto;
use prost_types::value::Kind;

use crate::convert;

#[derive(clap::Args)]
pub struct Args {
    /// Samples that contain a secret (.txt C-escaped after the marker line,
    /// or .jsonl with a "text" field); may be given more than once.
    #[arg(long, required = true)]
    positives: Vec<PathBuf>,
    /// Samples that do not; may be given more than once.
    #[arg(long, required = true)]
    negatives: Vec<PathBuf>,
    /// Project the evaluation's actions are logged in.
    #[arg(long, default_value = "lore-redaction-eval")]
    project: String,
    /// Print every sample that was misjudged.
    #[arg(long)]
    verbose: bool,
    /// Redact in this process, each source left out of the choice of
    /// setting in turn (needs no server). Several files may be given.
    #[arg(long)]
    pub leave_one_out: bool,
}

/// The samples of every file, in order.
fn read_all(paths: &[PathBuf]) -> anyhow::Result<Vec<Sample>> {
    let mut samples = Vec::new();
    for path in paths {
        samples.extend(read_samples(path)?);
    }
    Ok(samples)
}

/// `--leave-one-out`: every file's samples, by source.
pub fn leave_one_out(args: Args) -> anyhow::Result<()> {
    let (positives, negatives) = (read_all(&args.positives)?, read_all(&args.negatives)?);
    super::redaction_sources::run(positives, negatives)
}

/// The marker line after which a .txt file's samples start.
const SAMPLES_MARKER: &str = "# ---- samples start on the next line ----";

fn unescape(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars();
    while let Some(character) = chars.next() {
        if character != '\\' {
            out.push(character);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('t') => out.push('\t'),
            Some('\\') => out.push('\\'),
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}

/// One sample: its text, the secret in it (positives), its family, and
/// the source it was drawn from (the first word of its `source`, else the
/// name of its file's folder).
#[derive(Debug, Clone)]
pub(crate) struct Sample {
    pub text: String,
    pub secret: Option<String>,
    pub family: String,
    pub source: String,
}

impl Sample {
    /// Whether `stored` no longer holds what this sample must lose: its
    /// secret, or, when it names none, anything of it as it was.
    pub fn redacted_in(&self, stored: &str) -> bool {
        match &self.secret {
            Some(secret) => !stored.contains(secret.as_str()),
            None => stored != self.text,
        }
    }
}

pub(crate) fn read_samples(path: &Path) -> anyhow::Result<Vec<Sample>> {
    let folder = path
        .parent()
        .and_then(Path::file_name)
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_else(|| "samples".into());
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    if path.extension().is_some_and(|extension| extension == "jsonl") {
        return text
            .lines()
            .enumerate()
            .filter(|(_, line)| !line.trim().is_empty())
            .map(|(number, line)| {
                let at = || format!("{} line {}", path.display(), number + 1);
                let value: serde_json::Value = serde_json::from_str(line).with_context(at)?;
                let field = |name: &str| value[name].as_str().map(str::to_owned);
                let text = field("text").with_context(|| format!("{}: a sample without \"text\"", at()))?;
                let family = field("family").unwrap_or_else(|| "samples".into());
                let family = family.split('/').next().unwrap_or_default().to_owned();
                let source = field("source")
                    .and_then(|source| source.split_whitespace().next().map(str::to_owned))
                    .unwrap_or_else(|| folder.clone());
                Ok(Sample { text, secret: field("secret").filter(|secret| !secret.is_empty()), family, source })
            })
            .collect();
    }
    let Some((_, samples)) = text.split_once(SAMPLES_MARKER) else {
        bail!("{} has no line {SAMPLES_MARKER:?}", path.display());
    };
    Ok(samples
        .lines()
        .skip(1)
        .filter(|line| !line.is_empty())
        .map(|line| Sample { text: unescape(line), secret: None, family: "samples".into(), source: folder.clone() })
        .collect())
}

/// Per family: positives, caught, negatives, altered.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Figures {
    pub positives: usize,
    pub caught: usize,
    pub negatives: usize,
    pub altered: usize,
}

impl Figures {
    pub fn recall(&self) -> f64 {
        self.caught as f64 / self.positives.max(1) as f64
    }

    pub fn over_redaction(&self) -> f64 {
        self.altered as f64 / self.negatives.max(1) as f64
    }

    pub fn add(&mut self, other: &Figures) {
        self.positives += other.positives;
        self.caught += other.caught;
        self.negatives += other.negatives;
        self.altered += other.altered;
    }
}

/// A bar of `width` characters, `share` of it full.
fn bar(share: f64, width: usize) -> String {
    let full = (share.clamp(0.0, 1.0) * width as f64).round() as usize;
    format!("{}{}", "█".repeat(full), "·".repeat(width - full))
}

pub async fn run(channel: Channel, args: Args) -> anyhow::Result<()> {
    let (positives, negatives) = (read_all(&args.positives)?, read_all(&args.negatives)?);
    let mut client = super::actions_client(channel);
    let session = client
        .start_session(proto::StartSessionRequest {
            project: args.project.clone(),
            agent_id: "lore-eval-redaction".into(),
            ..Default::default()
        })
        .await?
        .into_inner()
        .session
        .context("no session")?;

    let progress = ProgressBar::new((positives.len() + negatives.len()) as u64).with_style(
        ProgressStyle::with_template("{msg} {bar:40} {pos}/{len} [{elapsed_precise}, {per_sec}]")
            .expect("valid template"),
    );
    progress.set_message("logging samples");
    let mut sent: HashMap<String, (bool, Sample)> = HashMap::new();
    for (is_positive, samples) in [(true, &positives), (false, &negatives)] {
        for sample in samples {
            let action_id = uuid::Uuid::now_v7().to_string();
            let context = prost_types::Struct {
                fields: [(
                    "sample".to_owned(),
                    prost_types::Value { kind: Some(Kind::StringValue(sample.text.clone())) },
                )]
                .into_iter()
                .collect(),
            };
            let action = proto::Action {
                action_id: action_id.clone(),
                session_id: session.session_id.clone(),
                project: args.project.clone(),
                action_type: "eval".into(),
                outcome: proto::Outcome::Success as i32,
                context: Some(context),
                occurred_at: Some(convert::now()),
                ..Default::default()
            };
            client.log_action(proto::LogActionRequest { action: Some(action) }).await?;
            sent.insert(action_id, (is_positive, sample.clone()));
            progress.inc(1);
        }
    }
    progress.finish_and_clear();

    let mut stored: HashMap<String, String> = HashMap::new();
    let mut cursor = String::new();
    loop {
        let page = client
            .search_actions(proto::SearchActionsRequest {
                project: args.project.clone(),
                session_id: session.session_id.clone(),
                page: Some(proto::PageRequest { page_size: 500, cursor }),
                ..Default::default()
            })
            .await?
            .into_inner();
        for action in page.actions {
            let sample = action
                .context
                .and_then(|context| context.fields.get("sample").cloned())
                .and_then(|value| match value.kind {
                    Some(Kind::StringValue(text)) => Some(text),
                    _ => None,
                })
                .unwrap_or_default();
            stored.insert(action.action_id, sample);
        }
        if page.next_cursor.is_empty() {
            break;
        }
        cursor = page.next_cursor;
    }

    let mut families: BTreeMap<String, Figures> = BTreeMap::new();
    let mut total = Figures::default();
    for (action_id, (is_positive, sample)) in &sent {
        let back = stored.get(action_id).with_context(|| format!("action {action_id} was not stored"))?;
        let figures = families.entry(sample.family.clone()).or_default();
        if *is_positive {
            let caught = sample.redacted_in(back);
            for figures in [&mut *figures, &mut total] {
                figures.positives += 1;
                figures.caught += usize::from(caught);
            }
            if !caught && args.verbose {
                println!("missed secret ({}): {:?} -> {back:?}", sample.family, sample.text);
            }
        } else {
            let altered = back != &sample.text;
            for figures in [&mut *figures, &mut total] {
                figures.negatives += 1;
                figures.altered += usize::from(altered);
            }
            if altered && args.verbose {
                println!("altered non-secret ({}): {:?} -> {back:?}", sample.family, sample.text);
            }
        }
    }
    if families.len() > 1 {
        println!("{:<22} {:>7}  {:<20} {:>11}  {:>10}", "family", "recall", "", "secrets", "over-red.");
        for (family, figures) in &families {
            let recall = if figures.positives > 0 { format!("{:.3}", figures.recall()) } else { "-".into() };
            let over = if figures.negatives > 0 {
                format!("{:.3} ({}/{})", figures.over_redaction(), figures.altered, figures.negatives)
            } else {
                "-".into()
            };
            let shown = if figures.positives > 0 { bar(figures.recall(), 20) } else { String::new() };
            println!(
                "{family:<22} {recall:>7}  {shown:<20} {:>11}  {over:>10}",
                format!("{}/{}", figures.caught, figures.positives)
            );
        }
    }
    println!(
        "positives={} caught={} negatives={} altered={}",
        total.positives, total.caught, total.negatives, total.altered
    );
    println!("redaction_recall={:.3} false_positive_rate={:.3}", total.recall(), total.over_redaction());
    Ok(())
}
