//! What one re-mining of a project did, and the criterion's verdict on it.

use chrono::{DateTime, Utc};

/// What one re-mining of a project changed, and the description length of
/// its recent groups before and after (`lore_grouping::criterion`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Remined {
    pub occurrences: usize,
    pub merges: usize,
    pub splits: usize,
    /// Changes Brain proposed that the criterion turned down.
    pub rejected: usize,
    /// Patterns that took the template their occurrences share under the
    /// project's masks now.
    pub moves: usize,
    /// Bits to describe the recent occurrences in their groups, summed
    /// over categories, before and after.
    pub bits_before: f64,
    pub bits_after: f64,
}

impl Remined {
    /// How much shorter the description became, as a share (0 when nothing
    /// was read).
    pub fn shorter_by(&self) -> f64 {
        if self.bits_before > 0.0 { 1.0 - self.bits_after / self.bits_before } else { 0.0 }
    }
}

/// A project's last re-mining.
#[derive(Debug, Clone, PartialEq)]
pub struct RemineRun {
    pub project: String,
    pub remined_at: DateTime<Utc>,
    pub remined: Remined,
}
