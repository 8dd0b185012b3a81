//! Filters over the action log and the keyset positions that page through it.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chrono::{DateTime, Utc};
use serde_json::Value;
use uuid::Uuid;

use super::Outcome;

/// Which actions a search, report or export covers. Empty / `None` fields
/// do not filter.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ActionFilter {
    pub project: String,
    pub action_types: Vec<String>,
    pub agent_id: Option<String>,
    pub session_id: Option<Uuid>,
    pub epic_id: Option<String>,
    pub issue_id: Option<String>,
    pub outcomes: Vec<Outcome>,
    /// `occurred_at >= from`.
    pub from: Option<DateTime<Utc>>,
    /// `occurred_at < until`.
    pub until: Option<DateTime<Utc>>,
    /// JSON containment: `context @> context_contains`.
    pub context_contains: Option<Value>,
    /// Case-insensitive substring of action type, category or error.
    pub text: Option<String>,
    /// `received_at <= received_by`: pins an export to what was stored when
    /// it began.
    pub received_by: Option<DateTime<Utc>>,
}

/// A place in the log's (occurred_at, action_id) order: the last row a page
/// returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Position {
    pub occurred_at: DateTime<Utc>,
    pub action_id: Uuid,
}

/// Why a cursor could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadCursor;

impl Position {
    /// Opaque to clients: they send back what they got.
    pub fn encode(&self) -> String {
        URL_SAFE_NO_PAD.encode(format!("p1.{}.{}", self.occurred_at.timestamp_micros(), self.action_id))
    }

    pub fn decode(cursor: &str) -> Result<Self, BadCursor> {
        let bytes = URL_SAFE_NO_PAD.decode(cursor).map_err(|_| BadCursor)?;
        let text = std::str::from_utf8(&bytes).map_err(|_| BadCursor)?;
        let mut parts = text.split('.');
        if parts.next() != Some("p1") {
            return Err(BadCursor);
        }
        let micros: i64 = parts.next().and_then(|part| part.parse().ok()).ok_or(BadCursor)?;
        let action_id = parts.next().and_then(|part| Uuid::parse_str(part).ok()).ok_or(BadCursor)?;
        if parts.next().is_some() {
            return Err(BadCursor);
        }
        Ok(Self { occurred_at: DateTime::from_timestamp_micros(micros).ok_or(BadCursor)?, action_id })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_survive_a_round_trip_and_garbage_is_refused() {
        let position = Position {
            occurred_at: DateTime::from_timestamp_micros(1_763_807_324_123_456).unwrap(),
            action_id: Uuid::now_v7(),
        };
        assert_eq!(Position::decode(&position.encode()), Ok(position));
        assert_eq!(Position::decode("not-a-cursor"), Err(BadCursor));
        assert_eq!(Position::decode(&URL_SAFE_NO_PAD.encode("p1.12.nope")), Err(BadCursor));
    }
}
