//! A guard as the hook applies it: a person's refusal of every call of one
//! shape, with the reason and what to run instead. The server keeps them;
//! the hook reads them into the project's call index.

use serde::{Deserialize, Serialize};

use crate::shape::Shape;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Guard {
    /// The server's id, for the ledger.
    pub guard_id: String,
    /// The guarded shape (see [`Shape::text`]).
    pub shape: String,
    pub reason: String,
    /// May be empty.
    pub alternative: String,
}

impl Guard {
    /// Whether a call of `command` is refused: its shape holds the guarded
    /// one.
    pub fn holds(&self, command: &str) -> bool {
        self.holds_shape(&Shape::of(command))
    }

    /// [`Self::holds`] for a call whose shape was read already (one read
    /// for every guard of the index).
    pub fn holds_shape(&self, call: &Shape) -> bool {
        call.contains(&Shape::of(&self.shape))
    }

    pub fn text(&self) -> String {
        refusal_text(&self.reason, &self.alternative)
    }
}

/// What an agent reads when a guard refuses its call. The reason and the
/// alternative are a person's words; backticks are turned to quotes so the
/// alternative stays one code span.
pub fn refusal_text(reason: &str, alternative: &str) -> String {
    let mut text = format!("Lore guard (set by a person for this project): this call is refused. {reason}");
    if !alternative.is_empty() {
        text.push_str(&format!(" Run instead: `{}`.", alternative.replace('`', "'")));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guard(shape: &str) -> Guard {
        Guard {
            guard_id: "g".into(),
            shape: shape.into(),
            reason: "No module named django.".into(),
            alternative: "./runtests.sh".into(),
        }
    }

    #[test]
    fn a_guard_holds_its_shape_wherever_it_runs_in_the_line() {
        let guard = guard("pytest <arg>");
        assert!(guard.holds("pytest tests/test_forms.py"));
        assert!(guard.holds("cd /repo && pytest tests"));
        assert!(guard.holds("pytest tests; make lint"));
        assert!(!guard.holds("pytest -x tests"), "another shape: flags count");
        assert!(!guard.holds("./runtests.sh forms"));
        assert!(!super::Guard { shape: String::new(), ..guard }.holds("ls"), "an empty shape holds nothing");
    }

    #[test]
    fn the_refusal_names_the_reason_and_the_alternative() {
        assert_eq!(
            guard("pytest <arg>").text(),
            "Lore guard (set by a person for this project): this call is refused. No module named django. \
             Run instead: `./runtests.sh`."
        );
    }
}
