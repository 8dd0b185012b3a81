//! `lore eval redaction`: how well redaction works, measured through the
//! real server. Each sample goes into an action's context with LogAction and
//! is read back with SearchActions; a positive counts as caught when it came
//! back changed, a negative as a false positive when it came back changed.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::Channel;
use anyhow::{Context as _, bail};
use lore_proto::v1 as proto;
use prost_types::value::Kind;

use crate::convert;

#[derive(clap::Args)]
pub struct Args {
    /// Samples that contain a secret (.txt C-escaped after the marker line,
    /// or .jsonl with a "text" field).
    #[arg(long)]
    positives: PathBuf,
    /// Samples that do not.
    #[arg(long)]
    negatives: PathBuf,
    /// Project the evaluation's actions are logged in.
    #[arg(long, default_value = "lore-redaction-eval")]
    project: String,
    /// Print every sample that was misjudged.
    #[arg(long)]
    verbose: bool,
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

fn read_samples(path: &Path) -> anyhow::Result<Vec<String>> {
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    if path.extension().is_some_and(|extension| extension == "jsonl") {
        return text
            .lines()
            .filter(|line| !line.trim().is_empty())
            .map(|line| {
                let value: serde_json::Value = serde_json::from_str(line)?;
                value["text"].as_str().map(str::to_owned).context("a sample without \"text\"")
            })
            .collect();
    }
    let Some((_, samples)) = text.split_once(SAMPLES_MARKER) else {
        bail!("{} has no line {SAMPLES_MARKER:?}", path.display());
    };
    Ok(samples.lines().skip(1).filter(|line| !line.is_empty()).map(unescape).collect())
}

pub async fn run(channel: Channel, args: Args) -> anyhow::Result<()> {
    let positives = read_samples(&args.positives)?;
    let negatives = read_samples(&args.negatives)?;
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

    let mut sent: HashMap<String, (bool, String)> = HashMap::new();
    for (is_positive, samples) in [(true, &positives), (false, &negatives)] {
        for sample in samples {
            let action_id = uuid::Uuid::now_v7().to_string();
            let context = prost_types::Struct {
                fields: [("sample".to_owned(), prost_types::Value { kind: Some(Kind::StringValue(sample.clone())) })]
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
        }
    }

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

    let (mut caught, mut altered) = (0_usize, 0_usize);
    for (action_id, (is_positive, original)) in &sent {
        let back = stored.get(action_id).with_context(|| format!("action {action_id} was not stored"))?;
        let changed = back != original;
        match (is_positive, changed) {
            (true, true) => caught += 1,
            (false, true) => altered += 1,
            (true, false) if args.verbose => println!("missed secret: {original:?}"),
            _ => {}
        }
        if !is_positive && changed && args.verbose {
            println!("altered non-secret: {original:?} -> {back:?}");
        }
    }
    let recall = caught as f64 / positives.len().max(1) as f64;
    let false_positive_rate = altered as f64 / negatives.len().max(1) as f64;
    println!("positives={} caught={caught} negatives={} altered={altered}", positives.len(), negatives.len());
    println!("redaction_recall={recall:.3} false_positive_rate={false_positive_rate:.3}");
    Ok(())
}
