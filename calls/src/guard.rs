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
    /// Whether a call of this shape is refused: it holds the guarded one
    /// (the call's shape is read once for every guard of the index).
    pub fn holds(&self, call: &Shape) -> bool {
        call.contains(&Shape::of(&self.shape))
    }

    /// What an agent reads when the guard refuses its call. The reason and
    /// the alternative are a person's words; backticks are turned to quotes
    /// so the alternative stays one code span.
    pub fn text(&self) -> String {
        let mut text = format!("Lore guard (set by a person for this project): this call is refused. {}", self.reason);
        if !self.alternative.is_empty() {
            text.push_str(&format!(" Run instead: `{}`.", self.alternative.replace('`', "'")));
        }
        text
    }
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
        let holds = |guard: &Guard, command: &str| guard.holds(&Shape::of(command));
        assert!(holds(&guard, "pytest tests/test_forms.py"));
        assert!(holds(&guard, "cd /repo && pytest tests"));
        assert!(holds(&guard, "pytest tests; make lint"));
        assert!(!holds(&guard, "pytest -x tests"), "another shape: flags count");
        assert!(!holds(&guard, "./runtests.sh forms"));
        assert!(!holds(&super::Guard { shape: String::new(), ..guard }, "ls"), "an empty shape holds nothing");
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
