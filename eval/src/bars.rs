//! Bars drawn in text, for figures a person compares at a glance.

/// A bar of `width` characters, `share` of it full.
pub fn bar(share: f64, width: usize) -> String {
    let full = (share.clamp(0.0, 1.0) * width as f64).round() as usize;
    format!("{}{}", "█".repeat(full), "·".repeat(width - full))
}
