//! The per-session hash chain.
//!
//! Each action's `chain_hash` is BLAKE3 over a canonical encoding of the
//! stored row and the previous action's hash, so changing any stored field,
//! deleting an action or reordering them breaks every later link. The
//! encoding is ours (not PostgreSQL's text output), so verification does not
//! depend on how jsonb happens to order keys: every field is length-prefixed
//! and the context is serialized as JSON with keys sorted.

use crate::actions::StoredName as _;
use serde_json::Value;

use super::NewAction;

/// Bumped if the encoding ever changes, so old and new chains stay
/// distinguishable.
const ENCODING_VERSION: &[u8] = b"lore.action.v1";

/// The hash that links `action` (at `chain_seq`, or unchained when `None`)
/// to its predecessor's hash (empty for the first action).
pub fn action_hash(prev_hash: &[u8], chain_seq: Option<i64>, action: &NewAction, received_at_micros: i64) -> [u8; 32] {
    let mut hasher = blake3::Hasher::new();
    let mut field = |bytes: &[u8]| {
        hasher.update(&(bytes.len() as u64).to_le_bytes());
        hasher.update(bytes);
    };
    field(ENCODING_VERSION);
    field(prev_hash);
    field(&chain_seq.unwrap_or(0).to_le_bytes());
    field(action.action_id.as_bytes());
    field(action.session_id.map(|id| *id.as_bytes()).unwrap_or_default().as_slice());
    field(&action.occurred_at.timestamp_micros().to_le_bytes());
    field(&received_at_micros.to_le_bytes());
    field(action.project.as_bytes());
    field(action.agent_id.as_bytes());
    field(action.action_type.as_bytes());
    field(action.category.as_bytes());
    field(canonical_json(&action.context).as_bytes());
    field(action.outcome.as_str().as_bytes());
    field(action.error.as_bytes());
    field(&action.duration_ms.to_le_bytes());
    field(action.parent_action_id.map(|id| *id.as_bytes()).unwrap_or_default().as_slice());
    field(action.epic_id.as_bytes());
    field(action.issue_id.as_bytes());
    field(&action.redaction_count.to_le_bytes());
    field(&[u8::from(action.truncated)]);
    *hasher.finalize().as_bytes()
}

/// JSON with object keys sorted, independent of map implementation.
pub fn canonical_json(value: &Value) -> String {
    let mut out = String::new();
    write_canonical(value, &mut out);
    out
}

fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_unstable_by(|left, right| left.0.cmp(right.0));
            out.push('{');
            for (index, (key, entry)) in entries.into_iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                write_canonical(entry, out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}
