//! Turning command-line arguments into proto values and back into text.

use anyhow::{Context as _, bail};
use chrono::{DateTime, Utc};

use lore_proto::v1 as proto;

/// A JSON object from the command line as a Struct.
pub fn json_object(text: &str) -> anyhow::Result<prost_types::Struct> {
    let value: serde_json::Value = serde_json::from_str(text).with_context(|| format!("not JSON: {text}"))?;
    if !value.is_object() {
        bail!("expected a JSON object, got {text}");
    }
    Ok(lore_proto::json::to_struct(&value))
}

/// A context Struct as JSON; a missing one is `{}`.
pub fn struct_json(value: Option<&prost_types::Struct>) -> serde_json::Value {
    value.map(lore_proto::json::struct_to_json).unwrap_or_else(|| serde_json::json!({}))
}

pub fn now() -> prost_types::Timestamp {
    timestamp(Utc::now())
}

/// The `days` days up to now, as report windows are given.
pub fn last_days(days: u32) -> proto::TimeRange {
    let now = Utc::now();
    proto::TimeRange {
        start: Some(timestamp(now - chrono::Duration::days(i64::from(days)))),
        end: Some(timestamp(now)),
    }
}

pub fn timestamp(value: DateTime<Utc>) -> prost_types::Timestamp {
    prost_types::Timestamp { seconds: value.timestamp(), nanos: value.timestamp_subsec_nanos() as i32 }
}

pub fn time(value: Option<&prost_types::Timestamp>) -> String {
    value
        .and_then(|at| DateTime::from_timestamp(at.seconds, at.nanos.max(0) as u32))
        .map(|at| at.format("%Y-%m-%d %H:%M:%S").to_string())
        .unwrap_or_else(|| "-".to_owned())
}

/// "2h", "30m", "7d" ago, or an RFC 3339 instant.
pub fn instant(text: &str) -> anyhow::Result<prost_types::Timestamp> {
    if let Ok(at) = DateTime::parse_from_rfc3339(text) {
        return Ok(timestamp(at.with_timezone(&Utc)));
    }
    let ago = humantime::parse_duration(text)
        .with_context(|| format!("{text:?} is neither a duration (2h, 30m) nor RFC 3339"))?;
    Ok(timestamp(Utc::now() - ago))
}

pub fn outcome(text: &str) -> anyhow::Result<proto::Outcome> {
    Ok(match text {
        "success" => proto::Outcome::Success,
        "failure" => proto::Outcome::Failure,
        "blocked" => proto::Outcome::Blocked,
        "in_progress" | "in-progress" => proto::Outcome::InProgress,
        other => bail!("unknown outcome {other:?} (success, failure, blocked, in_progress)"),
    })
}

pub fn outcome_name(value: i32) -> &'static str {
    match proto::Outcome::try_from(value) {
        Ok(proto::Outcome::Success) => "success",
        Ok(proto::Outcome::Failure) => "failure",
        Ok(proto::Outcome::Blocked) => "blocked",
        Ok(proto::Outcome::InProgress) => "in_progress",
        _ => "?",
    }
}

/// One action as a line of text.
pub fn action_line(action: &proto::Action) -> String {
    let mut line = format!(
        "{}  {:<11} {:<12} {}",
        time(action.occurred_at.as_ref()),
        outcome_name(action.outcome),
        action.action_type,
        if action.category.is_empty() { String::new() } else { format!("[{}] ", action.category) }
    );
    if !action.epic_id.is_empty() {
        line.push_str(&format!("epic={} ", action.epic_id));
    }
    if !action.error.is_empty() {
        line.push_str(&format!("error={:?} ", action.error.lines().next().unwrap_or_default()));
    }
    line.push_str(&struct_json(action.context.as_ref()).to_string());
    line
}
