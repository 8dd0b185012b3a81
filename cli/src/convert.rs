//! Turning command-line arguments into proto values and back into text.

use anyhow::{Context as _, bail};
use chrono::{DateTime, Utc};
use prost_types::value::Kind;

use lore_proto::v1 as proto;

/// A JSON object from the command line as a Struct.
pub fn json_object(text: &str) -> anyhow::Result<prost_types::Struct> {
    let value: serde_json::Value = serde_json::from_str(text).with_context(|| format!("not JSON: {text}"))?;
    match to_proto_value(&value).kind {
        Some(Kind::StructValue(object)) => Ok(object),
        _ => bail!("expected a JSON object, got {text}"),
    }
}

fn to_proto_value(value: &serde_json::Value) -> prost_types::Value {
    use serde_json::Value;
    let kind = match value {
        Value::Null => Kind::NullValue(0),
        Value::Bool(flag) => Kind::BoolValue(*flag),
        Value::Number(number) => Kind::NumberValue(number.as_f64().unwrap_or_default()),
        Value::String(text) => Kind::StringValue(text.clone()),
        Value::Array(items) => {
            Kind::ListValue(prost_types::ListValue { values: items.iter().map(to_proto_value).collect() })
        }
        Value::Object(map) => Kind::StructValue(prost_types::Struct {
            fields: map.iter().map(|(key, entry)| (key.clone(), to_proto_value(entry))).collect(),
        }),
    };
    prost_types::Value { kind: Some(kind) }
}

/// A Struct as compact JSON text.
pub fn struct_json(value: Option<&prost_types::Struct>) -> String {
    fn to_json(value: &prost_types::Value) -> serde_json::Value {
        match &value.kind {
            None | Some(Kind::NullValue(_)) => serde_json::Value::Null,
            Some(Kind::BoolValue(flag)) => (*flag).into(),
            Some(Kind::NumberValue(number)) => {
                serde_json::Number::from_f64(*number).map_or(serde_json::Value::Null, Into::into)
            }
            Some(Kind::StringValue(text)) => text.clone().into(),
            Some(Kind::ListValue(list)) => list.values.iter().map(to_json).collect(),
            Some(Kind::StructValue(object)) => object
                .fields
                .iter()
                .map(|(key, entry)| (key.clone(), to_json(entry)))
                .collect::<serde_json::Map<_, _>>()
                .into(),
        }
    }
    let object: serde_json::Map<String, serde_json::Value> = value
        .map(|object| object.fields.iter().map(|(key, entry)| (key.clone(), to_json(entry))).collect())
        .unwrap_or_default();
    serde_json::Value::Object(object).to_string()
}

pub fn now() -> prost_types::Timestamp {
    timestamp(Utc::now())
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
    line.push_str(&struct_json(action.context.as_ref()));
    line
}
