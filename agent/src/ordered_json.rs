//! JSON whose objects keep their keys in the order they were written.
//!
//! `lore init` edits files people also edit (`.mcp.json`,
//! `.claude/settings.json`): a merge must change what it adds and nothing
//! else, not re-sort a hand-ordered file. serde_json keeps keys ordered
//! only with a crate-wide feature that would change the order everywhere
//! in the workspace (the server's JSON included), so this small value type
//! keeps the order here alone.

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Json {
    Null,
    Bool(bool),
    Number(serde_json::Number),
    String(String),
    Array(Vec<Json>),
    Object(IndexMap<String, Json>),
}

impl Json {
    pub fn object() -> Self {
        Self::Object(IndexMap::new())
    }

    pub fn as_object_mut(&mut self) -> Option<&mut IndexMap<String, Json>> {
        match self {
            Self::Object(map) => Some(map),
            _ => None,
        }
    }

    pub fn as_array_mut(&mut self) -> Option<&mut Vec<Json>> {
        match self {
            Self::Array(items) => Some(items),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Self::String(text) => Some(text),
            _ => None,
        }
    }

    pub fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Self::Object(map) => map.get(key),
            _ => None,
        }
    }

    /// Two-space indented, with a final newline, as the agents write them.
    pub fn to_pretty(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).expect("Json serializes");
        text.push('\n');
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_keep_their_order_through_a_round_trip() {
        let text = "{\n  \"zeta\": 1,\n  \"alpha\": {\n    \"y\": [\n      true,\n      null,\n      2.5\n    ],\n    \"b\": \"x\"\n  }\n}\n";
        let parsed: Json = serde_json::from_str(text).unwrap();
        assert_eq!(parsed.to_pretty(), text);
    }
}
