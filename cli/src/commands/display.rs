//! How the reports print: horizontal bars and empty fields.

/// Width of the longest bar.
const BAR_WIDTH: f64 = 40.0;

/// A bar for `share` (0..=1) of the longest; anything counted gets at least
/// one block, so it is not mistaken for nothing.
pub fn bar(share: f64) -> String {
    "█".repeat((share * BAR_WIDTH).round().max(1.0) as usize)
}

/// The largest of `values`, at least 1: what bars are shares of.
pub fn largest(values: impl Iterator<Item = u64>) -> f64 {
    values.max().unwrap_or(1).max(1) as f64
}

pub fn or_dash(text: &str) -> &str {
    if text.is_empty() { "-" } else { text }
}
