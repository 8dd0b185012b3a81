//! `lore eval redaction`: how well redaction works, measured through the
//! real server. Each sample goes into an action's context with LogAction and
//! is read back with SearchActions. A positive counts as caught when its
//! secret (the sample's `secret`, else the whole sample) did not come back;
//! a negative is over-redacted when it came back changed. With families
//! (`family` in .jsonl samples, grouped by what precedes a `/`), the figures
//! are given per family as well.

mod samples;
mod sources;

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

use crate::Channel;
use crate::bars::bar;
use anyhow::Context as _;
use indicatif::{ProgressBar, ProgressStyle};
use lore_proto::v1 as proto;
use prost_types::value::Kind;
use samples::{Figures, Sample, read_all};

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

/// `--leave-one-out`: every file's samples, by source.
pub fn leave_one_out(args: Args) -> anyhow::Result<()> {
    let (positives, negatives) = (read_all(&args.positives)?, read_all(&args.negatives)?);
    sources::run(positives, negatives)
}

type Actions = lore_proto::v1::action_service_client::ActionServiceClient<Channel>;

pub async fn run(channel: Channel, args: Args) -> anyhow::Result<()> {
    let (positives, negatives) = (read_all(&args.positives)?, read_all(&args.negatives)?);
    let mut client = lore_proto::client::actions(channel);
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
    let sent = log_samples(&mut client, &args.project, &session.session_id, &positives, &negatives).await?;
    let stored = read_back(&mut client, &args.project, &session.session_id).await?;
    let (families, total) = tally(&sent, &stored, args.verbose)?;
    print_figures(&families, &total);
    Ok(())
}

/// Logs every sample as an action's context, by action id: whether it
/// holds a secret, and the sample.
async fn log_samples(
    client: &mut Actions,
    project: &str,
    session_id: &str,
    positives: &[Sample],
    negatives: &[Sample],
) -> anyhow::Result<HashMap<String, (bool, Sample)>> {
    let progress = ProgressBar::new((positives.len() + negatives.len()) as u64).with_style(
        ProgressStyle::with_template("{msg} {bar:40} {pos}/{len} [{elapsed_precise}, {per_sec}]")
            .expect("valid template"),
    );
    progress.set_message("logging samples");
    let mut sent = HashMap::new();
    for (is_positive, samples) in [(true, positives), (false, negatives)] {
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
                session_id: session_id.to_owned(),
                project: project.to_owned(),
                action_type: "eval".into(),
                outcome: proto::Outcome::Success as i32,
                context: Some(context),
                occurred_at: Some(std::time::SystemTime::now().into()),
                ..Default::default()
            };
            client.log_action(proto::LogActionRequest { action: Some(action) }).await?;
            sent.insert(action_id, (is_positive, sample.clone()));
            progress.inc(1);
        }
    }
    progress.finish_and_clear();
    Ok(sent)
}

/// Each stored action's sample, as the server kept it, by action id.
async fn read_back(client: &mut Actions, project: &str, session_id: &str) -> anyhow::Result<HashMap<String, String>> {
    let mut stored = HashMap::new();
    let mut cursor = String::new();
    loop {
        let page = client
            .search_actions(proto::SearchActionsRequest {
                project: project.to_owned(),
                session_id: session_id.to_owned(),
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
            return Ok(stored);
        }
        cursor = page.next_cursor;
    }
}

/// The figures per family and in all: a secret caught when it did not come
/// back, a non-secret altered when it came back changed.
fn tally(
    sent: &HashMap<String, (bool, Sample)>,
    stored: &HashMap<String, String>,
    verbose: bool,
) -> anyhow::Result<(BTreeMap<String, Figures>, Figures)> {
    let mut families: BTreeMap<String, Figures> = BTreeMap::new();
    let mut total = Figures::default();
    for (action_id, (is_positive, sample)) in sent {
        let back = stored.get(action_id).with_context(|| format!("action {action_id} was not stored"))?;
        let figures = families.entry(sample.family.clone()).or_default();
        if *is_positive {
            let caught = sample.redacted_in(back);
            for figures in [&mut *figures, &mut total] {
                figures.positives += 1;
                figures.caught += usize::from(caught);
            }
            if !caught && verbose {
                println!("missed secret ({}): {:?} -> {back:?}", sample.family, sample.text);
            }
        } else {
            let altered = back != &sample.text;
            for figures in [&mut *figures, &mut total] {
                figures.negatives += 1;
                figures.altered += usize::from(altered);
            }
            if altered && verbose {
                println!("altered non-secret ({}): {:?} -> {back:?}", sample.family, sample.text);
            }
        }
    }
    Ok((families, total))
}

fn print_figures(families: &BTreeMap<String, Figures>, total: &Figures) {
    if families.len() > 1 {
        println!("{:<22} {:>7}  {:<20} {:>11}  {:>10}", "family", "recall", "", "secrets", "over-red.");
        for (family, figures) in families {
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
}
