//! `lore export`: actions to a file, with progress, resumable.
//!
//! After each chunk the file is flushed and a small state file beside it
//! (`<output>.lore-export`) records the chunk's cursor and the file's length.
//! `--resume` cuts the file back to that length (dropping a chunk that was
//! half written when the export broke) and asks the server to continue after
//! the cursor, so the finished file is the same as an unbroken export.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use crate::commands::Channel;
use anyhow::{Context as _, bail};
use indicatif::{ProgressBar, ProgressStyle};
use lore_proto::v1 as proto;

use crate::convert;

#[derive(clap::Args)]
pub struct Args {
    #[arg(long, env = "LORE_PROJECT")]
    project: String,
    /// jsonl, csv, json or training.
    #[arg(long, default_value = "jsonl")]
    format: String,
    /// File to write.
    #[arg(long, short)]
    output: PathBuf,
    /// Continue a broken export into the same file (same arguments).
    #[arg(long)]
    resume: bool,
    /// Only these action types (repeat or comma-separate).
    #[arg(long = "type", value_delimiter = ',')]
    types: Vec<String>,
    /// Only actions since (1h, 7d or RFC 3339).
    #[arg(long)]
    since: Option<String>,
    /// Rows per chunk.
    #[arg(long, default_value_t = 1000)]
    chunk_rows: u32,
}

/// What the state file remembers.
#[derive(Debug, PartialEq)]
struct ExportState {
    cursor: String,
    bytes: u64,
    rows: u64,
}

fn state_path(output: &Path) -> PathBuf {
    let mut name = output.as_os_str().to_owned();
    name.push(".lore-export");
    PathBuf::from(name)
}

fn read_state(path: &Path) -> anyhow::Result<ExportState> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("nothing to resume: cannot read {}", path.display()))?;
    let value: serde_json::Value =
        serde_json::from_str(&text).with_context(|| format!("{} is damaged", path.display()))?;
    Ok(ExportState {
        cursor: value["cursor"].as_str().unwrap_or_default().to_owned(),
        bytes: value["bytes"].as_u64().unwrap_or_default(),
        rows: value["rows"].as_u64().unwrap_or_default(),
    })
}

/// Written to a temporary file and renamed, so the state is never torn.
fn write_state(path: &Path, state: &ExportState) -> anyhow::Result<()> {
    let temporary = path.with_extension("lore-export.tmp");
    let text = serde_json::json!({"cursor": state.cursor, "bytes": state.bytes, "rows": state.rows}).to_string();
    std::fs::write(&temporary, text)?;
    std::fs::rename(&temporary, path)?;
    Ok(())
}

fn format(text: &str) -> anyhow::Result<proto::ExportFormat> {
    Ok(match text {
        "jsonl" => proto::ExportFormat::Jsonl,
        "csv" => proto::ExportFormat::Csv,
        "json" => proto::ExportFormat::Json,
        "training" => proto::ExportFormat::Training,
        other => bail!("unknown format {other:?} (jsonl, csv, json, training)"),
    })
}

pub async fn run(channel: Channel, args: Args) -> anyhow::Result<()> {
    let state_file = state_path(&args.output);
    let (mut file, mut state) = if args.resume {
        let state = read_state(&state_file)?;
        let file = std::fs::OpenOptions::new()
            .write(true)
            .open(&args.output)
            .with_context(|| format!("cannot open {}", args.output.display()))?;
        file.set_len(state.bytes)?;
        (file, state)
    } else {
        let file =
            std::fs::File::create(&args.output).with_context(|| format!("cannot create {}", args.output.display()))?;
        (file, ExportState { cursor: String::new(), bytes: 0, rows: 0 })
    };
    use std::io::Seek as _;
    file.seek(std::io::SeekFrom::End(0))?;

    let request = proto::ExportRequest {
        project: args.project,
        format: format(&args.format)? as i32,
        window: args
            .since
            .as_deref()
            .map(convert::instant)
            .transpose()?
            .map(|start| proto::TimeRange { start: Some(start), end: None }),
        action_types: args.types,
        resume_after: state.cursor.clone(),
        chunk_rows: args.chunk_rows,
        ..Default::default()
    };
    let progress = ProgressBar::new_spinner();
    progress.set_style(
        ProgressStyle::with_template("{spinner} {pos} rows exported ({per_sec}) {msg}").expect("valid template"),
    );
    progress.set_position(state.rows);
    let mut chunks = crate::commands::actions_client(channel).export(request).await?.into_inner();
    while let Some(chunk) = chunks.message().await? {
        file.write_all(&chunk.data)?;
        file.sync_data()?;
        state.bytes += chunk.data.len() as u64;
        state.rows += u64::from(chunk.rows);
        state.cursor = chunk.cursor;
        write_state(&state_file, &state)?;
        progress.set_position(state.rows);
        if chunk.last {
            break;
        }
    }
    progress.finish_with_message(format!("into {}", args.output.display()));
    std::fs::remove_file(&state_file)?;
    Ok(())
}
