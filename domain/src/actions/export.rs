//! Export of the action log: formats, chunks and the resumable cursor.
//!
//! An export walks the filtered log in (occurred_at, action_id) order, one
//! page at a time, so memory stays flat for any size. It only covers actions
//! stored at or before its `as_of` instant (the time of the first request),
//! so rows written while it runs, even with old timestamps, cannot shift it:
//! an export resumed from any chunk's cursor yields exactly the rows an
//! uninterrupted one would have.

use lore_types::actions::StoredName as _;
use std::fmt::Write as _;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::{Value, json};
use uuid::Uuid;

use lore_types::actions::Action;
use lore_types::actions::chain::canonical_json;
use lore_types::actions::query::{ActionFilter, BadCursor, Position};

/// A chunk is cut at a row boundary once it holds this many bytes.
pub const MAX_CHUNK_BYTES: usize = 1024 * 1024;

/// The shapes an export can take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportFormat {
    Jsonl,
    Csv,
    Json,
    Training,
}

impl ExportFormat {
    fn tag(self) -> &'static str {
        match self {
            ExportFormat::Jsonl => "jsonl",
            ExportFormat::Csv => "csv",
            ExportFormat::Json => "json",
            ExportFormat::Training => "training",
        }
    }
}

/// Where an export stands: what it covers and the last row sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExportCursor {
    pub as_of: DateTime<Utc>,
    /// Identifies the filter and format, so a cursor cannot resume a
    /// different export.
    pub fingerprint: u64,
    pub after: Option<Position>,
}

impl ExportCursor {
    pub fn encode(&self) -> String {
        let after = self
            .after
            .map(|position| format!("{}.{}", position.occurred_at.timestamp_micros(), position.action_id))
            .unwrap_or_else(|| "-.-".to_owned());
        URL_SAFE_NO_PAD.encode(format!("e1.{}.{:016x}.{after}", self.as_of.timestamp_micros(), self.fingerprint))
    }

    pub fn decode(cursor: &str) -> Result<Self, BadCursor> {
        let bytes = URL_SAFE_NO_PAD.decode(cursor).map_err(|_| BadCursor)?;
        let text = std::str::from_utf8(&bytes).map_err(|_| BadCursor)?;
        let parts: Vec<&str> = text.split('.').collect();
        let [version, as_of, fingerprint, occurred_at, action_id] = parts.as_slice() else {
            return Err(BadCursor);
        };
        if *version != "e1" {
            return Err(BadCursor);
        }
        let micros = |text: &str| text.parse::<i64>().ok().and_then(DateTime::from_timestamp_micros).ok_or(BadCursor);
        let after = match (*occurred_at, *action_id) {
            ("-", "-") => None,
            (occurred_at, action_id) => Some(Position {
                occurred_at: micros(occurred_at)?,
                action_id: Uuid::parse_str(action_id).map_err(|_| BadCursor)?,
            }),
        };
        Ok(Self {
            as_of: micros(as_of)?,
            fingerprint: u64::from_str_radix(fingerprint, 16).map_err(|_| BadCursor)?,
            after,
        })
    }
}

/// A fingerprint of what an export selects and how it writes it.
pub fn fingerprint(format: ExportFormat, filter: &ActionFilter) -> u64 {
    let description = format!(
        "{}|{}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}",
        format.tag(),
        filter.project,
        filter.action_types,
        filter.outcomes,
        filter.session_id,
        filter.from.map(|at| at.timestamp_micros()),
        filter.until.map(|at| at.timestamp_micros()),
        filter.agent_id,
    );
    let hash = blake3::hash(description.as_bytes());
    u64::from_le_bytes(hash.as_bytes()[..8].try_into().expect("8 bytes"))
}

const CSV_COLUMNS: [&str; 19] = [
    "action_id",
    "occurred_at",
    "received_at",
    "project",
    "session_id",
    "agent_id",
    "action_type",
    "category",
    "outcome",
    "error",
    "duration_ms",
    "parent_action_id",
    "epic_id",
    "issue_id",
    "context",
    "redaction_count",
    "truncated",
    "chain_seq",
    "chain_hash",
];

fn timestamp(value: DateTime<Utc>) -> String {
    value.to_rfc3339_opts(SecondsFormat::Micros, true)
}

fn optional_id(value: Option<Uuid>) -> String {
    value.map(|id| id.to_string()).unwrap_or_default()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().fold(String::with_capacity(bytes.len() * 2), |mut out, byte| {
        let _ = write!(out, "{byte:02x}");
        out
    })
}

/// The full record of an action, for JSONL and JSON.
pub fn action_record(stored: &Action) -> Value {
    let action = &stored.action;
    json!({
        "action_id": action.action_id,
        "occurred_at": timestamp(action.occurred_at),
        "received_at": timestamp(stored.received_at),
        "project": action.project,
        "session_id": action.session_id,
        "agent_id": action.agent_id,
        "action_type": action.action_type,
        "category": action.category,
        "context": action.context,
        "outcome": action.outcome.as_str(),
        "error": action.error,
        "duration_ms": action.duration_ms,
        "parent_action_id": action.parent_action_id,
        "epic_id": action.epic_id,
        "issue_id": action.issue_id,
        "redaction_count": action.redaction_count,
        "truncated": action.truncated,
        "chain_seq": stored.chain_seq,
        "chain_hash": hex(&stored.chain_hash),
    })
}

/// An action as a training example: what the agent faced, what it did, how
/// it went.
pub fn training_record(stored: &Action) -> Value {
    let action = &stored.action;
    let task = action
        .context
        .get("task")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .unwrap_or_else(|| action.issue_id.clone());
    let mut output = json!({
        "action_taken": action.action_type,
        "outcome": action.outcome.as_str(),
        "duration_seconds": action.duration_ms as f64 / 1000.0,
    });
    if !action.error.is_empty() {
        output["error"] = Value::String(action.error.clone());
    }
    json!({
        "input": {"task": task, "epic_id": action.epic_id, "context": action.context},
        "output": output,
        "metadata": {
            "action_id": action.action_id,
            "session_id": action.session_id,
            "project": action.project,
            "agent_id": action.agent_id,
            "category": action.category,
            "issue_id": action.issue_id,
            "occurred_at": timestamp(action.occurred_at),
            "chain_seq": stored.chain_seq,
        },
    })
}

/// Writes rows in one format, remembering what a chunk boundary needs
/// (CSV's header, JSON's brackets and commas).
#[derive(Debug)]
pub struct ExportWriter {
    format: ExportFormat,
    /// True once any row was written by this export, in this call or (when
    /// resumed) an earlier one.
    wrote_rows: bool,
    wrote_header: bool,
}

impl ExportWriter {
    /// `resumed` is true when an earlier call already sent rows.
    pub fn new(format: ExportFormat, resumed: bool) -> Self {
        Self { format, wrote_rows: resumed, wrote_header: resumed }
    }

    /// Appends one row to `out`.
    pub fn write_row(&mut self, out: &mut Vec<u8>, stored: &Action) {
        match self.format {
            ExportFormat::Jsonl => {
                out.extend_from_slice(canonical_json(&action_record(stored)).as_bytes());
                out.push(b'\n');
            }
            ExportFormat::Training => {
                out.extend_from_slice(canonical_json(&training_record(stored)).as_bytes());
                out.push(b'\n');
            }
            ExportFormat::Json => {
                out.extend_from_slice(if self.wrote_rows { b",\n" } else { b"[\n" });
                out.extend_from_slice(canonical_json(&action_record(stored)).as_bytes());
            }
            ExportFormat::Csv => {
                let mut writer = csv::WriterBuilder::new().has_headers(false).from_writer(Vec::new());
                if !self.wrote_header {
                    let _ = writer.write_record(CSV_COLUMNS);
                    self.wrote_header = true;
                }
                let action = &stored.action;
                let _ = writer.write_record([
                    action.action_id.to_string(),
                    timestamp(action.occurred_at),
                    timestamp(stored.received_at),
                    action.project.clone(),
                    optional_id(action.session_id),
                    action.agent_id.clone(),
                    action.action_type.clone(),
                    action.category.clone(),
                    action.outcome.as_str().to_owned(),
                    action.error.clone(),
                    action.duration_ms.to_string(),
                    optional_id(action.parent_action_id),
                    action.epic_id.clone(),
                    action.issue_id.clone(),
                    canonical_json(&action.context),
                    action.redaction_count.to_string(),
                    action.truncated.to_string(),
                    stored.chain_seq.map(|seq| seq.to_string()).unwrap_or_default(),
                    hex(&stored.chain_hash),
                ]);
                out.extend_from_slice(&writer.into_inner().unwrap_or_default());
            }
        }
        self.wrote_rows = true;
    }

    /// What closes the export (JSON's bracket; a CSV header when no row was
    /// ever written).
    pub fn finish(&mut self, out: &mut Vec<u8>) {
        match self.format {
            ExportFormat::Json => out.extend_from_slice(if self.wrote_rows { b"\n]\n" } else { b"[]\n" }),
            ExportFormat::Csv if !self.wrote_header => {
                let mut line = CSV_COLUMNS.join(",");
                line.push('\n');
                out.extend_from_slice(line.as_bytes());
                self.wrote_header = true;
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip_with_and_without_a_position() {
        let as_of = DateTime::from_timestamp_micros(1_763_807_324_000_001).unwrap();
        for after in [None, Some(Position { occurred_at: as_of, action_id: Uuid::now_v7() })] {
            let cursor = ExportCursor { as_of, fingerprint: 0xdead_beef_0123_4567, after };
            assert_eq!(ExportCursor::decode(&cursor.encode()), Ok(cursor));
        }
        assert_eq!(ExportCursor::decode("nonsense"), Err(BadCursor));
    }
}
