//! The categorization rule table: ordered rules over check names and
//! messages, kept as rows so that new categories and rules need no schema
//! change. The first enabled rule (by priority) whose regexes match decides;
//! nothing matching means `other`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use regex::{Regex, RegexBuilder};

use lore_types::qa::{CategoryRule, FailedCheck};

pub const OTHER: &str = "other";
/// Compiled regexes kept; more distinct rules than this just recompile.
const CACHE_CAPACITY: usize = 1024;
/// A rule's compiled program may not exceed this (a hostile regex cannot
/// take the server's memory).
const REGEX_SIZE_LIMIT: usize = 1 << 20;

/// Compiled rule regexes by source text, shared by all captures.
#[derive(Debug, Clone, Default)]
pub struct RuleCache {
    compiled: Arc<Mutex<HashMap<String, Arc<Regex>>>>,
}

impl RuleCache {
    fn regex(&self, source: &str) -> Result<Arc<Regex>, regex::Error> {
        let mut compiled = self.compiled.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(regex) = compiled.get(source) {
            return Ok(regex.clone());
        }
        let regex = Arc::new(compile(source)?);
        if compiled.len() >= CACHE_CAPACITY {
            compiled.clear();
        }
        compiled.insert(source.to_owned(), regex.clone());
        Ok(regex)
    }

    /// The category of a failure and the rule that chose it.
    pub fn categorize<'r>(
        &self,
        rules: &'r [CategoryRule],
        checks: &[FailedCheck],
        messages: &[String],
    ) -> (String, Option<&'r CategoryRule>) {
        for rule in rules.iter().filter(|rule| rule.enabled) {
            if self.matches(rule, checks, messages) {
                return (rule.category.clone(), Some(rule));
            }
        }
        (OTHER.to_owned(), None)
    }

    fn matches(&self, rule: &CategoryRule, checks: &[FailedCheck], messages: &[String]) -> bool {
        // Stored rules were validated on the way in; one that no longer
        // compiles (a regex engine change) is skipped, not fatal.
        let regex = |source: &str| match self.regex(source) {
            Ok(regex) => Some(regex),
            Err(error) => {
                tracing::warn!(rule = rule.rule_id, %error, "category rule does not compile; skipped");
                None
            }
        };
        if !rule.check_name_regex.is_empty() {
            let Some(names) = regex(&rule.check_name_regex) else { return false };
            if !checks.iter().any(|check| names.is_match(&check.name)) {
                return false;
            }
        }
        if !rule.message_regex.is_empty() {
            let Some(text) = regex(&rule.message_regex) else { return false };
            let in_messages = messages.iter().any(|message| text.is_match(message));
            if !in_messages && !checks.iter().any(|check| text.is_match(&check.output)) {
                return false;
            }
        }
        true
    }
}

/// Rule regexes are case-insensitive and bounded in size.
pub fn compile(source: &str) -> Result<Regex, regex::Error> {
    RegexBuilder::new(source).case_insensitive(true).size_limit(REGEX_SIZE_LIMIT).build()
}

/// The rules in force for a project, in evaluation order: a project's rule
/// replaces the global rule with the same id.
pub fn in_force(mut rules: Vec<CategoryRule>) -> Vec<CategoryRule> {
    let overridden: Vec<String> =
        rules.iter().filter(|rule| rule.project.is_some()).map(|rule| rule.rule_id.clone()).collect();
    rules.retain(|rule| rule.project.is_some() || !overridden.contains(&rule.rule_id));
    rules.sort_by(|a, b| {
        (a.priority, a.project.is_none(), &a.rule_id).cmp(&(b.priority, b.project.is_none(), &b.rule_id))
    });
    rules
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(
        rule_id: &str,
        project: Option<&str>,
        priority: i32,
        category: &str,
        checks: &str,
        text: &str,
    ) -> CategoryRule {
        CategoryRule {
            rule_id: rule_id.into(),
            project: project.map(Into::into),
            priority,
            category: category.into(),
            check_name_regex: checks.into(),
            message_regex: text.into(),
            enabled: true,
        }
    }

    fn check(name: &str, output: &str) -> FailedCheck {
        FailedCheck { name: name.into(), output: output.into(), exit_code: 1 }
    }

    #[test]
    fn first_matching_rule_decides() {
        let rules = in_force(vec![
            rule("tests", None, 600, "test_failure", "jest|pytest", ""),
            rule("deps", None, 100, "missing_dependency", "", "cannot find module"),
        ]);
        let cache = RuleCache::default();
        let (category, chosen) = cache.categorize(&rules, &[check("jest", "Cannot find module 'x'")], &[]);
        assert_eq!((category.as_str(), chosen.map(|rule| rule.rule_id.as_str())), ("missing_dependency", Some("deps")));
        let (category, _) = cache.categorize(&rules, &[check("pytest", "assert 1 == 2")], &[]);
        assert_eq!(category, "test_failure");
        let (category, chosen) = cache.categorize(&rules, &[check("deploy", "boom")], &["boom".into()]);
        assert_eq!((category.as_str(), chosen), (OTHER, None));
    }

    #[test]
    fn project_rules_replace_global_ones_with_the_same_id() {
        let rules = in_force(vec![
            rule("tests", None, 600, "test_failure", "jest", ""),
            rule("tests", Some("p"), 600, "flaky_test", "jest", ""),
        ]);
        assert_eq!(rules.len(), 1);
        let (category, _) = RuleCache::default().categorize(&rules, &[check("jest", "")], &[]);
        assert_eq!(category, "flaky_test");
    }
}
