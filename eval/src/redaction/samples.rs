//! The samples `lore eval redaction` reads: .txt files (C-escaped, after a
//! marker line) or .jsonl (`text`, `secret`, `family`, `source`), and the
//! counts it keeps of them.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};

/// The samples of every file, in order.
pub(crate) fn read_all(paths: &[PathBuf]) -> anyhow::Result<Vec<Sample>> {
    let mut samples = Vec::new();
    for path in paths {
        samples.extend(read_samples(path)?);
    }
    Ok(samples)
}

/// The marker line after which a .txt file's samples start.
const SAMPLES_MARKER: &str = "# ---- samples start on the next line ----";

fn unescape(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars();
    while let Some(character) = chars.next() {
        if character != '\\' {
            out.push(character);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('t') => out.push('\t'),
            Some('\\') => out.push('\\'),
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}

/// One sample: its text, the secret in it (positives), its family, and
/// the source it was drawn from (the first word of its `source`, else the
/// name of its file's folder).
#[derive(Debug, Clone)]
pub(crate) struct Sample {
    pub text: String,
    pub secret: Option<String>,
    pub family: String,
    pub source: String,
}

impl Sample {
    /// Whether `stored` no longer holds what this sample must lose: its
    /// secret, or, when it names none, anything of it as it was.
    pub fn redacted_in(&self, stored: &str) -> bool {
        match &self.secret {
            Some(secret) => !stored.contains(secret.as_str()),
            None => stored != self.text,
        }
    }
}

fn read_samples(path: &Path) -> anyhow::Result<Vec<Sample>> {
    let folder = path
        .parent()
        .and_then(Path::file_name)
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_else(|| "samples".into());
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    if path.extension().is_some_and(|extension| extension == "jsonl") {
        return text
            .lines()
            .enumerate()
            .filter(|(_, line)| !line.trim().is_empty())
            .map(|(number, line)| {
                let at = || format!("{} line {}", path.display(), number + 1);
                let value: serde_json::Value = serde_json::from_str(line).with_context(at)?;
                let field = |name: &str| value[name].as_str().map(str::to_owned);
                let text = field("text").with_context(|| format!("{}: a sample without \"text\"", at()))?;
                let family = field("family").unwrap_or_else(|| "samples".into());
                let family = family.split('/').next().unwrap_or_default().to_owned();
                let source = field("source")
                    .and_then(|source| source.split_whitespace().next().map(str::to_owned))
                    .unwrap_or_else(|| folder.clone());
                Ok(Sample { text, secret: field("secret").filter(|secret| !secret.is_empty()), family, source })
            })
            .collect();
    }
    let Some((_, samples)) = text.split_once(SAMPLES_MARKER) else {
        bail!("{} has no line {SAMPLES_MARKER:?}", path.display());
    };
    Ok(samples
        .lines()
        .skip(1)
        .filter(|line| !line.is_empty())
        .map(|line| Sample { text: unescape(line), secret: None, family: "samples".into(), source: folder.clone() })
        .collect())
}

/// Per family: positives, caught, negatives, altered.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Figures {
    pub positives: usize,
    pub caught: usize,
    pub negatives: usize,
    pub altered: usize,
}

impl Figures {
    pub fn recall(&self) -> f64 {
        self.caught as f64 / self.positives.max(1) as f64
    }

    pub fn over_redaction(&self) -> f64 {
        self.altered as f64 / self.negatives.max(1) as f64
    }

    pub fn add(&mut self, other: &Figures) {
        self.positives += other.positives;
        self.caught += other.caught;
        self.negatives += other.negatives;
        self.altered += other.altered;
    }
}
