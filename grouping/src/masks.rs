//! A project's own masks: regular expressions whose every match is one
//! variable, applied before the generic masks of `template`.
//!
//! Brain reaches its best figures with settings per log system (Yu et al.,
//! IEEE TSC 2023, table 3: a regex or two per system for its ids); the
//! default grouping has none and must stand without them. Where a project's
//! messages carry a variable the generic masks cannot see (`svc-billing`,
//! `job#q7x`), a person adds a mask as data, and re-mining regroups what was
//! captured before it.

use std::borrow::Cow;

use regex::{Regex, RegexBuilder};

/// Masks one project may hold: each runs over every captured message.
pub const MAX_MASKS: usize = 32;
/// The longest mask expression accepted.
pub const MAX_PATTERN_CHARS: usize = 512;
/// The longest mask name accepted.
pub const MAX_NAME_CHARS: usize = 64;
/// A compiled mask may not grow past this (regex's own size limit), so a
/// mask cannot make every capture of its project slow.
const COMPILED_SIZE_LIMIT: usize = 1 << 20;

/// One mask as a person wrote it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MaskSpec {
    pub name: String,
    pub pattern: String,
}

/// Why a mask was refused, naming what of it is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MaskError {
    /// `name` or `pattern`.
    pub field: &'static str,
    pub message: String,
}

impl std::fmt::Display for MaskError {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(formatter, "{}: {}", self.field, self.message)
    }
}

impl std::error::Error for MaskError {}

impl MaskSpec {
    /// Checks a mask and compiles it: a name of letters, digits, `-`, `_`
    /// and `.`; an expression that compiles, within the size limit, and
    /// never matches the empty text (which would put a wildcard between
    /// every two characters).
    pub fn compile(&self) -> Result<Regex, MaskError> {
        check_name(&self.name)?;
        let pattern_error = |message: String| MaskError { field: "pattern", message };
        if self.pattern.is_empty() {
            return Err(pattern_error("required".into()));
        }
        if self.pattern.chars().count() > MAX_PATTERN_CHARS {
            return Err(pattern_error(format!("at most {MAX_PATTERN_CHARS} characters")));
        }
        let regex = RegexBuilder::new(&self.pattern)
            .size_limit(COMPILED_SIZE_LIMIT)
            .build()
            .map_err(|error| pattern_error(format!("not a valid regular expression: {}", first_line(&error))))?;
        if regex.is_match("") {
            return Err(pattern_error("matches the empty text, so it would mask between every character".into()));
        }
        Ok(regex)
    }
}

/// Checks a mask's name alone: letters, digits, `-`, `_` and `.`, at most
/// [`MAX_NAME_CHARS`].
pub fn check_name(name: &str) -> Result<(), MaskError> {
    let name_error = |message: String| MaskError { field: "name", message };
    if name.is_empty() {
        return Err(name_error("required".into()));
    }
    if name.chars().count() > MAX_NAME_CHARS {
        return Err(name_error(format!("at most {MAX_NAME_CHARS} characters")));
    }
    if !name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')) {
        return Err(name_error("only letters, digits, '-', '_' and '.'".into()));
    }
    Ok(())
}

fn first_line(error: &regex::Error) -> String {
    let text = error.to_string();
    text.lines().rev().find(|line| !line.trim().is_empty()).unwrap_or(&text).trim().to_owned()
}

/// How a project's messages are read: its masks, compiled, in the order
/// they apply, and whether the project is read literally
/// (`crate::convention`).
#[derive(Debug, Clone, Default)]
pub struct Masks {
    compiled: Vec<Regex>,
    literal: bool,
}

impl Masks {
    /// No project mask: the generic masks alone.
    pub fn none() -> Self {
        Self::default()
    }

    /// Compiles `specs`, refusing more than [`MAX_MASKS`] or any mask
    /// [`MaskSpec::compile`] refuses.
    pub fn compile(specs: &[MaskSpec]) -> Result<Self, MaskError> {
        if specs.len() > MAX_MASKS {
            return Err(MaskError { field: "name", message: format!("a project holds at most {MAX_MASKS} masks") });
        }
        let compiled = specs.iter().map(MaskSpec::compile).collect::<Result<_, _>>()?;
        Ok(Self { compiled, literal: false })
    }

    /// These masks, with the project read literally or not.
    pub fn reading_literally(self, literal: bool) -> Self {
        Self { literal, ..self }
    }

    /// Whether the project is read literally: quoted values kept, and a
    /// message joins only a pattern it fits in every position.
    pub fn reads_literally(&self) -> bool {
        self.literal
    }

    pub fn is_empty(&self) -> bool {
        self.compiled.is_empty()
    }

    /// `message` with every match of every mask replaced by `variable`.
    pub fn apply<'a>(&self, message: &'a str, variable: &str) -> Cow<'a, str> {
        let mut masked = Cow::Borrowed(message);
        for regex in &self.compiled {
            if let Cow::Owned(replaced) = regex.replace_all(&masked, regex::NoExpand(variable)) {
                masked = Cow::Owned(replaced);
            }
        }
        masked
    }
}

#[cfg(test)]
mod tests;
