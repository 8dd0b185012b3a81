//! The development set's files (`tests/data/injection/`): one JSON object
//! per line, `{"text", "source", ...}`; payloads carry `style` and
//! `obfuscation`, benign samples `kind`; either may carry `language`
//! (ISO 639-1, English when absent) and `hosts` (the project's own hosts,
//! for a text about its remotes or registries).

use std::path::Path;

use crate::training::Sample;

/// A file that cannot be read as samples, with where and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CorpusError(pub String);

impl std::fmt::Display for CorpusError {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(&self.0)
    }
}

impl std::error::Error for CorpusError {}

/// Reads one file of samples, all payloads or all benign.
pub fn read(path: &Path, payload: bool) -> Result<Vec<Sample>, CorpusError> {
    let text = std::fs::read_to_string(path)
        .map_err(|error| CorpusError(format!("cannot read {}: {error}", path.display())))?;
    let mut samples = Vec::new();
    for (number, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let at = || format!("{} line {}", path.display(), number + 1);
        let value: serde_json::Value =
            serde_json::from_str(line).map_err(|error| CorpusError(format!("{}: {error}", at())))?;
        let field = |name: &str| value.get(name).and_then(serde_json::Value::as_str).map(str::to_owned);
        let text = field("text").ok_or_else(|| CorpusError(format!("{}: no \"text\"", at())))?;
        let source = field("source").ok_or_else(|| CorpusError(format!("{}: no \"source\"", at())))?;
        let group = if payload {
            field("obfuscation").filter(|how| !how.is_empty()).unwrap_or_else(|| "plain".to_owned())
        } else {
            field("kind").unwrap_or_default()
        };
        // A payload's style of attack; a benign text's style is its kind,
        // as the carrier is what varies among them.
        let style = field("style").or_else(|| field("kind")).unwrap_or_else(|| "unlabelled".to_owned());
        let language = field("language").unwrap_or_else(|| "en".to_owned());
        let hosts = value
            .get("hosts")
            .and_then(serde_json::Value::as_array)
            .map(|hosts| hosts.iter().filter_map(serde_json::Value::as_str).map(str::to_lowercase).collect())
            .unwrap_or_default();
        samples.push(Sample { text, payload, source, group, style, language, hosts });
    }
    Ok(samples)
}
