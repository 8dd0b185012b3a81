//! What the ledger records: injections, their items, and why an item was
//! withheld. Plain types, with nothing of the store, so the store can speak
//! of them.

use std::collections::{BTreeMap, HashSet};

use chrono::{DateTime, NaiveDate, Utc};
use uuid::Uuid;

use crate::actions::StoredName;
use crate::trust::Trust;

/// Tokens are estimated at four characters each, OpenAI's rule of thumb
/// for English text ("one token generally corresponds to ~4 characters"):
/// the ledger must not depend on which model reads the briefing, and the
/// estimate is for budgets and charts, not billing.
pub const CHARS_PER_TOKEN: usize = 4;

pub fn estimate_tokens(chars: usize) -> usize {
    chars.div_ceil(CHARS_PER_TOKEN)
}

/// Where the injection happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, strum::IntoStaticStr, strum::EnumString, strum::EnumIter)]
#[strum(serialize_all = "snake_case")]
pub enum Surface {
    /// The briefing of a SessionStart hook.
    SessionStart,
    /// The briefing of a UserPromptSubmit hook.
    Prompt,
    /// Any other briefing: the MCP tool, a client of Brief.
    Briefing,
    /// The learnings and warnings a Resume sends.
    Resume,
    /// A lesson search (Search, SearchMany: MCP `search_lessons`, `triage`).
    Search,
    /// One lesson read whole (GetEntry: MCP `get_lesson`).
    GetEntry,
    /// GetWarnings.
    Warnings,
    /// With a call, before it ran: the pre-tool-use hook.
    Call,
}

impl StoredName for Surface {}

/// What an injected item is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, strum::IntoStaticStr, strum::EnumString)]
#[strum(serialize_all = "snake_case")]
pub enum ItemKind {
    /// A knowledge entry (its id).
    Lesson,
    /// A QA pattern warned about (its id).
    Warning,
    /// Where the agent's last session stopped (the session's id).
    LastSession,
    /// A past session like the task (the session's id).
    SimilarSession,
    /// A warning at the call (an id derived from the project and the
    /// command's shape, see [`call_warning_id`]).
    CallWarning,
    /// A guard's refusal of a call (the guard's id).
    Guard,
}

/// The ledger's id of the warning at the call of `shape` in `project`:
/// the hook learns these warnings itself and gives them no id, and the same
/// warning given to many sessions must count as one item.
pub fn call_warning_id(project: &str, shape: &str) -> Uuid {
    let digest = blake3::hash(format!("call-warning\u{0}{project}\u{0}{shape}").as_bytes());
    let mut bytes = [0; 16];
    bytes.copy_from_slice(&digest.as_bytes()[..16]);
    uuid::Builder::from_custom_bytes(bytes).into_uuid()
}

impl StoredName for ItemKind {}

/// Why an item that was considered was not shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, strum::IntoStaticStr, strum::EnumString, strum::EnumIter)]
#[strum(serialize_all = "snake_case")]
pub enum Withheld {
    /// The injection screen holds (part of) it.
    Quarantined,
    /// Every file it cites is gone from the agent's checkout.
    Stale,
    /// It did not fit the briefing's size budget.
    OverBudget,
    /// The session was given it already.
    AlreadyGiven,
    /// The session's total budget is spent and it is not a new, reviewed
    /// item of high relevance.
    SessionBudget,
    /// The task is in the held-out group of the warnings' A/B measure.
    HeldOut,
    /// The agent's hooks give it with the call that would fail.
    AtCall,
    /// An agent's written text no person has reviewed yet.
    Unreviewed,
}

impl StoredName for Withheld {}

impl Withheld {
    /// Why, in words.
    pub fn explain(self) -> &'static str {
        match self {
            Self::Quarantined => "held by the injection screen",
            Self::Stale => "the files it cites are gone from the agent's checkout",
            Self::OverBudget => "did not fit the briefing's size budget",
            Self::AlreadyGiven => "this session was given it already",
            Self::SessionBudget => "the session's budget is spent, and it is not a new reviewed item of high relevance",
            Self::HeldOut => "the task is held out of warnings to measure them",
            Self::AtCall => "the agent's hooks give it with the call that would fail",
            Self::Unreviewed => "an agent wrote it and no person has reviewed it yet",
        }
    }
}

/// One item an injection considered.
#[derive(Debug, Clone, PartialEq)]
pub struct InjectedItem {
    pub kind: ItemKind,
    pub item_id: Uuid,
    /// What a person recognizes it by (a key, a pattern's name): data.
    pub label: String,
    pub trust: Option<Trust>,
    /// What it took of the context, or would have when withheld.
    pub chars: usize,
    pub score: f64,
    /// The parts of the score ("similarity", "confidence"...).
    pub score_parts: BTreeMap<String, f64>,
    /// Why it was chosen, in words.
    pub why: String,
    /// `None`: shown.
    pub withheld: Option<Withheld>,
}

impl InjectedItem {
    pub fn tokens(&self) -> usize {
        estimate_tokens(self.chars)
    }

    pub fn shown(&self) -> bool {
        self.withheld.is_none()
    }

    pub fn withheld(mut self, why: Withheld) -> Self {
        self.withheld = Some(why);
        self
    }
}

/// One injection: what one briefing or read gave one session.
#[derive(Debug, Clone, PartialEq)]
pub struct Injection {
    pub injection_id: Uuid,
    pub project: String,
    pub session_id: Option<Uuid>,
    /// Filled from the session when empty.
    pub agent_id: String,
    pub task_id: String,
    pub surface: Surface,
    /// What reached the agent: the briefing's markdown, or the shown items.
    pub chars: usize,
    pub items: Vec<InjectedItem>,
    /// Set by the store, unless the injection was made before it was
    /// recorded (a hook's call warning).
    pub created_at: Option<DateTime<Utc>>,
}

impl Injection {
    /// An MCP read in a session: what it returned, all shown.
    pub fn read(project: &str, session_id: Uuid, surface: Surface, items: Vec<InjectedItem>) -> Self {
        Self {
            injection_id: Uuid::now_v7(),
            project: project.to_owned(),
            session_id: Some(session_id),
            agent_id: String::new(),
            task_id: String::new(),
            surface,
            chars: items.iter().filter(|item| item.shown()).map(|item| item.chars).sum(),
            items,
            created_at: None,
        }
    }

    pub fn tokens(&self) -> usize {
        estimate_tokens(self.chars)
    }
}

/// How the ledger says why a warning at the call was given.
pub const CALL_WARNING_WHY: &str = "earlier sessions failed with: ";
/// How the ledger says why a guard refused a call.
pub const GUARD_WHY: &str = "a guard refused it: ";

/// What a hook gave with one call: a warning learned from earlier calls, or
/// a guard's refusal. The hook answers offline and reports it afterwards,
/// so it chooses the id and the time.
#[derive(Debug, Clone, PartialEq)]
pub struct CallGiven {
    pub injection_id: Uuid,
    pub project: String,
    pub session_id: Uuid,
    /// The guard, for a refusal; `None` for a warning.
    pub guard_id: Option<Uuid>,
    /// The command's shape.
    pub shape: String,
    /// The failure warned of, or the guard's reason: data.
    pub label: String,
    pub chars: usize,
    pub given_at: DateTime<Utc>,
}

impl CallGiven {
    /// Bounds on what a hook reports.
    pub const MAX_SHAPE_CHARS: usize = 500;
    pub const MAX_LABEL_CHARS: usize = 300;
    pub const MAX_CHARS: usize = 4000;

    /// The injection it is in the ledger: one item, shown.
    pub fn injection(&self) -> Injection {
        // A person knows a call by its shape; the failure (or the guard's
        // reason) is why it was given.
        let (kind, item_id, why) = match self.guard_id {
            Some(guard) => (ItemKind::Guard, guard, format!("{GUARD_WHY}{}", self.label)),
            None => (
                ItemKind::CallWarning,
                call_warning_id(&self.project, &self.shape),
                format!("{CALL_WARNING_WHY}{}", self.label),
            ),
        };
        let item = InjectedItem {
            kind,
            item_id,
            label: self.shape.clone(),
            trust: None,
            chars: self.chars,
            score: 0.0,
            score_parts: BTreeMap::new(),
            why,
            withheld: None,
        };
        Injection {
            injection_id: self.injection_id,
            project: self.project.clone(),
            session_id: Some(self.session_id),
            agent_id: String::new(),
            task_id: String::new(),
            surface: Surface::Call,
            chars: self.chars,
            items: vec![item],
            created_at: Some(self.given_at),
        }
    }
}

/// How often one warning at the call was given over a window.
#[derive(Debug, Clone, PartialEq)]
pub struct CallWarningGiven {
    pub shape: String,
    /// The failure it named (the ledger's `why` after [`CALL_WARNING_WHY`]).
    pub failure: String,
    pub times: i64,
    pub sessions: i64,
    pub last_given: DateTime<Utc>,
}

/// Which injections a listing shows.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct InjectionFilter {
    pub project: String,
    pub session_id: Option<Uuid>,
    pub agent_id: Option<String>,
    pub since: Option<DateTime<Utc>>,
    pub until: Option<DateTime<Utc>>,
}

/// Sums over the injections a filter selects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Totals {
    pub injections: i64,
    pub items_shown: i64,
    pub items_withheld: i64,
    pub chars: i64,
    pub tokens: i64,
}

/// What a session was given so far: the entries and patterns shown to it
/// (by briefings and reads, and warnings through GetWarnings), and the
/// characters. A pattern counts as given, too, when a failure of its
/// template's name was (a call warning, or a failure the start named).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Given {
    pub entries: HashSet<Uuid>,
    pub patterns: HashSet<Uuid>,
    pub chars: usize,
}

/// Tokens injected into a project's agents on one day.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Day {
    pub day: NaiveDate,
    pub tokens: i64,
    pub injections: i64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_estimated_at_four_characters_rounded_up() {
        assert_eq!(estimate_tokens(0), 0);
        assert_eq!(estimate_tokens(1), 1);
        assert_eq!(estimate_tokens(4), 1);
        assert_eq!(estimate_tokens(4_001), 1_001);
    }

    #[test]
    fn every_reason_and_surface_has_its_stored_name() {
        use strum::IntoEnumIterator as _;
        for reason in Withheld::iter() {
            assert_eq!(Withheld::parse(reason.as_str()), Some(reason));
            assert!(!reason.explain().is_empty());
        }
        for surface in Surface::iter() {
            assert_eq!(Surface::parse(surface.as_str()), Some(surface));
        }
    }
}
