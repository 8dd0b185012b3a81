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

/// A rate on a 0..100% scale with its interval: `─` spans the interval and
/// `●` marks the rate, so two groups printed one under the other compare at
/// a glance.
pub fn interval_bar(low: f64, rate: f64, high: f64) -> String {
    let width = BAR_WIDTH as usize;
    let at = |value: f64| ((value.clamp(0.0, 1.0) * (width - 1) as f64).round()) as usize;
    let (low, rate, high) = (at(low), at(rate), at(high));
    (0..width)
        .map(|position| match position {
            _ if position == rate => '●',
            _ if (low..=high).contains(&position) => '─',
            _ => '·',
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_interval_bar_marks_the_rate_inside_its_interval() {
        let bar = interval_bar(0.25, 0.5, 0.75);
        assert_eq!(bar.chars().count(), 40);
        assert_eq!(bar.chars().position(|c| c == '●'), Some(20));
        // Positions 10 to 29 are the interval, one of them the rate.
        assert_eq!(bar.chars().filter(|c| *c == '─').count(), 19);
        assert!(interval_bar(0.0, 0.0, 0.0).starts_with('●'));
    }
}
