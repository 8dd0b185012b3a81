//! `google.protobuf.Struct` <-> JSON, for code on either side of the wire
//! that shows or builds free-form context. (The server's inbound conversion
//! adds validation of its own on top.)

use prost_types::value::Kind;
use serde_json::Value;

/// A JSON value as a Struct value.
pub fn to_proto_value(value: &Value) -> prost_types::Value {
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

/// A JSON value as a Struct: objects as they are, anything else under the
/// key "value".
pub fn to_struct(value: &Value) -> prost_types::Struct {
    match to_proto_value(value).kind {
        Some(Kind::StructValue(object)) => object,
        other => prost_types::Struct {
            fields: [("value".to_owned(), prost_types::Value { kind: other })].into_iter().collect(),
        },
    }
}

/// A Struct value as JSON. Numbers that are not finite become null.
pub fn to_json(value: &prost_types::Value) -> Value {
    match &value.kind {
        None | Some(Kind::NullValue(_)) => Value::Null,
        Some(Kind::BoolValue(flag)) => Value::Bool(*flag),
        Some(Kind::NumberValue(number)) => serde_json::Number::from_f64(*number).map_or(Value::Null, Value::Number),
        Some(Kind::StringValue(text)) => Value::String(text.clone()),
        Some(Kind::ListValue(list)) => Value::Array(list.values.iter().map(to_json).collect()),
        Some(Kind::StructValue(object)) => struct_to_json(object),
    }
}

/// A Struct as a JSON object.
pub fn struct_to_json(object: &prost_types::Struct) -> Value {
    Value::Object(object.fields.iter().map(|(key, entry)| (key.clone(), to_json(entry))).collect())
}
