//! betterleaks' finding filters, as Kingfisher ships them: a CEL expression
//! per rule, parsed into a tree (`rules/kingfisher.jsonl`). A filter that
//! holds discards the finding.
//!
//! What is evaluated: `||`, `&&`, `!`, comparisons and `contains`; the
//! finding's secret, match and line; `entropy` (Shannon, over bytes),
//! `matchesAny` (Go regexes, compiled on first use), `containsAny`
//! (case-insensitive), `lower`, and the text methods `startsWith`,
//! `endsWith` and `contains`.
//!
//! What is not: `tokenRatio` (a cl100k BPE count, whose vocabulary would
//! cost the sidecar more memory than all its rules), `findMatch` on the
//! text before the match, `malformedPrivateKey`, `setConfidence`, file
//! paths, named captures and bindings. They are unknown, and an unknown
//! never spares a finding: `entropy(s) < 3.5 || tokenRatio(s) >= 2.5`
//! spares a secret of low entropy and redacts the rest. Three-valued logic
//! keeps that exact: `true || unknown` is true, `false || unknown` unknown.

use std::sync::{Arc, OnceLock};

use serde_json::Value as Json;

use super::Patterns;

/// The finding a filter looks at.
pub(super) struct Finding<'a> {
    pub secret: &'a [u8],
    pub matched: &'a [u8],
    pub line: &'a [u8],
}

#[derive(Debug)]
pub(super) enum Expr {
    Bool(bool),
    Number(f64),
    Text(String),
    List(Vec<Expr>),
    Field(Field),
    Or(Box<Expr>, Box<Expr>),
    And(Box<Expr>, Box<Expr>),
    Not(Box<Expr>),
    Compare(Comparison, Box<Expr>, Box<Expr>),
    /// `a contains b`, `a.contains(b)`, `a.startsWith(b)`, `a.endsWith(b)`.
    Text2(TextTest, Box<Expr>, Box<Expr>),
    Entropy(Box<Expr>),
    Lower(Box<Expr>),
    MatchesAny(Box<Expr>, Patterns),
    ContainsAny(Box<Expr>, Vec<String>),
    /// The catalog's global allowlist, shared by the rules that hold it.
    Shared(Arc<Expr>),
    /// What this interpreter does not evaluate; the reason is for the
    /// catalog's summary.
    Unknown(String),
}

#[derive(Debug, Clone, Copy)]
pub(super) enum Field {
    Secret,
    Match,
    Line,
}

#[derive(Debug, Clone, Copy)]
pub(super) enum Comparison {
    Less,
    LessOrEqual,
    Greater,
    GreaterOrEqual,
    Equal,
    NotEqual,
}

#[derive(Debug, Clone, Copy)]
pub(super) enum TextTest {
    Contains,
    StartsWith,
    EndsWith,
}

/// A rule's filter, kept as the catalog's text until the rule first judges
/// a finding: the parsed filters of all 469 rules would take a sidecar
/// 1.2 MiB, and most rules never match in a process's life.
#[derive(Debug)]
pub(super) struct Filter {
    source: &'static str,
    global: Arc<Expr>,
    tree: OnceLock<Expr>,
}

impl Filter {
    pub(super) fn new(source: &'static str, global: &Arc<Expr>) -> Self {
        Self { source, global: Arc::clone(global), tree: OnceLock::new() }
    }

    /// The filter parsed, on first use.
    pub(super) fn tree(&self) -> &Expr {
        self.tree.get_or_init(|| parse_text(self.source, Some(&self.global)))
    }

    /// True when the filter holds for the finding: it is then discarded.
    pub(super) fn discards(&self, finding: &Finding<'_>) -> bool {
        self.tree().discards(finding)
    }
}

/// A value while evaluating: `None` of [`Expr::eval`] is the unknown.
#[derive(Debug, Clone, PartialEq)]
enum Value {
    Bool(bool),
    Number(f64),
    Text(Vec<u8>),
    List(Vec<Value>),
}

impl Expr {
    /// True when the filter holds for the finding: it is then discarded.
    pub(super) fn discards(&self, finding: &Finding<'_>) -> bool {
        self.eval(Some(finding)) == Some(Value::Bool(true))
    }

    /// True when the filter holds whatever the finding (`... || true`).
    pub(super) fn discards_everything(&self) -> bool {
        self.eval(None) == Some(Value::Bool(true))
    }

    /// `finding` is `None` when asking what holds of every finding: its
    /// fields are then unknown.
    fn eval(&self, finding: Option<&Finding<'_>>) -> Option<Value> {
        match self {
            Self::Bool(value) => Some(Value::Bool(*value)),
            Self::Number(value) => Some(Value::Number(*value)),
            Self::Text(value) => Some(Value::Text(value.as_bytes().to_vec())),
            Self::List(items) => items.iter().map(|item| item.eval(finding)).collect::<Option<_>>().map(Value::List),
            Self::Field(field) => {
                let finding = finding?;
                Some(Value::Text(
                    match field {
                        Field::Secret => finding.secret,
                        Field::Match => finding.matched,
                        Field::Line => finding.line,
                    }
                    .to_vec(),
                ))
            }
            Self::Or(left, right) => match (truth(left.eval(finding)), truth(right.eval(finding))) {
                (Some(true), _) | (_, Some(true)) => Some(Value::Bool(true)),
                (Some(false), Some(false)) => Some(Value::Bool(false)),
                _ => None,
            },
            Self::And(left, right) => match (truth(left.eval(finding)), truth(right.eval(finding))) {
                (Some(false), _) | (_, Some(false)) => Some(Value::Bool(false)),
                (Some(true), Some(true)) => Some(Value::Bool(true)),
                _ => None,
            },
            Self::Not(inner) => truth(inner.eval(finding)).map(|value| Value::Bool(!value)),
            Self::Compare(comparison, left, right) => compare(*comparison, left.eval(finding)?, right.eval(finding)?),
            Self::Text2(test, left, right) => {
                let (Value::Text(text), Value::Text(part)) = (left.eval(finding)?, right.eval(finding)?) else {
                    return None;
                };
                Some(Value::Bool(match test {
                    TextTest::Contains => contains(&text, &part),
                    TextTest::StartsWith => text.starts_with(&part),
                    TextTest::EndsWith => text.ends_with(&part),
                }))
            }
            Self::Entropy(inner) => match inner.eval(finding)? {
                Value::Text(text) => Some(Value::Number(crate::entropy::shannon(&text))),
                _ => None,
            },
            Self::Lower(inner) => match inner.eval(finding)? {
                Value::Text(text) => Some(Value::Text(text.to_ascii_lowercase())),
                _ => None,
            },
            Self::MatchesAny(input, patterns) => {
                let texts = texts(input.eval(finding)?)?;
                let mut held = false;
                for text in &texts {
                    held |= patterns.is_match(text)?;
                }
                Some(Value::Bool(held))
            }
            Self::ContainsAny(input, terms) => {
                let texts = texts(input.eval(finding)?)?;
                let found = texts.iter().any(|text| {
                    let text = text.to_ascii_lowercase();
                    terms.iter().any(|term| contains(&text, term.as_bytes()))
                });
                Some(Value::Bool(found))
            }
            Self::Shared(shared) => shared.eval(finding),
            Self::Unknown(_) => None,
        }
    }

    /// Why parts of this filter are not evaluated, once each.
    pub(super) fn unknowns(&self, out: &mut Vec<String>) {
        let mut visit = |expr: &Expr| expr.unknowns(out);
        match self {
            Self::Unknown(why) => {
                if !out.contains(why) {
                    out.push(why.clone());
                }
            }
            Self::List(items) => items.iter().for_each(visit),
            Self::Or(left, right)
            | Self::And(left, right)
            | Self::Compare(_, left, right)
            | Self::Text2(_, left, right) => {
                visit(left);
                visit(right);
            }
            Self::Not(inner)
            | Self::Entropy(inner)
            | Self::Lower(inner)
            | Self::MatchesAny(inner, _)
            | Self::ContainsAny(inner, _) => visit(inner),
            Self::Bool(_) | Self::Number(_) | Self::Text(_) | Self::Field(_) | Self::Shared(_) => {}
        }
    }

    /// Every `matchesAny` list of this filter.
    #[cfg(test)]
    pub(super) fn patterns<'a>(&'a self, out: &mut Vec<&'a Patterns>) {
        match self {
            Self::MatchesAny(inner, patterns) => {
                out.push(patterns);
                inner.patterns(out);
            }
            Self::List(items) => items.iter().for_each(|item| item.patterns(out)),
            Self::Or(left, right)
            | Self::And(left, right)
            | Self::Compare(_, left, right)
            | Self::Text2(_, left, right) => {
                left.patterns(out);
                right.patterns(out);
            }
            Self::Not(inner) | Self::Entropy(inner) | Self::Lower(inner) | Self::ContainsAny(inner, _) => {
                inner.patterns(out)
            }
            Self::Shared(shared) => shared.patterns(out),
            Self::Bool(_) | Self::Number(_) | Self::Text(_) | Self::Field(_) | Self::Unknown(_) => {}
        }
    }
}

fn truth(value: Option<Value>) -> Option<bool> {
    match value? {
        Value::Bool(value) => Some(value),
        _ => None,
    }
}

fn texts(value: Value) -> Option<Vec<Vec<u8>>> {
    match value {
        Value::Text(text) => Some(vec![text]),
        Value::List(items) => items
            .into_iter()
            .map(|item| match item {
                Value::Text(text) => Some(text),
                _ => None,
            })
            .collect(),
        _ => None,
    }
}

fn contains(text: &[u8], part: &[u8]) -> bool {
    part.is_empty() || text.windows(part.len()).any(|window| window == part)
}

fn compare(comparison: Comparison, left: Value, right: Value) -> Option<Value> {
    let held = match (comparison, &left, &right) {
        (Comparison::Equal, _, _) => left == right,
        (Comparison::NotEqual, _, _) => left != right,
        (_, Value::Number(left), Value::Number(right)) => match comparison {
            Comparison::Less => left < right,
            Comparison::LessOrEqual => left <= right,
            Comparison::Greater => left > right,
            Comparison::GreaterOrEqual => left >= right,
            Comparison::Equal | Comparison::NotEqual => unreachable!("matched above"),
        },
        _ => return None,
    };
    Some(Value::Bool(held))
}

/// A filter tree from its JSON text; text that is not JSON is unknown, and
/// so never spares a finding.
pub(super) fn parse_text(source: &str, global: Option<&Arc<Expr>>) -> Expr {
    match serde_json::from_str::<Json>(source) {
        Ok(node) => parse(&node, global),
        Err(error) => Expr::Unknown(format!("a filter that is not JSON ({error})")),
    }
}

/// A filter tree as Kingfisher writes it (`{"kind": ..}` nodes), with
/// `{"kind": "global_filter"}` standing for the catalog's global allowlist.
pub(super) fn parse(node: &Json, global: Option<&Arc<Expr>>) -> Expr {
    let kind = node.get("kind").and_then(Json::as_str).unwrap_or("");
    let text = |key: &str| node.get(key).and_then(Json::as_str).unwrap_or("");
    let child = |key: &str| {
        Box::new(node.get(key).map_or(Expr::Unknown(format!("{kind} without {key}")), |inner| parse(inner, global)))
    };
    match kind {
        "global_filter" => global.map_or(Expr::Unknown("a global filter the file does not hold".into()), |global| {
            Expr::Shared(Arc::clone(global))
        }),
        "bool" => node.get("value").and_then(Json::as_bool).map_or(Expr::Unknown("bool".into()), Expr::Bool),
        "float" | "int" => number(node.get("value")).map_or(Expr::Unknown("number".into()), Expr::Number),
        "string" => Expr::Text(text("value").to_owned()),
        "array" => Expr::List(
            node.get("nodes").and_then(Json::as_array).into_iter().flatten().map(|item| parse(item, global)).collect(),
        ),
        "member" => field(node),
        "unary" if text("operator") == "!" => Expr::Not(child("node")),
        "binary" => {
            let (left, right) = (child("left"), child("right"));
            match text("operator") {
                "||" => Expr::Or(left, right),
                "&&" => Expr::And(left, right),
                "<" => Expr::Compare(Comparison::Less, left, right),
                "<=" => Expr::Compare(Comparison::LessOrEqual, left, right),
                ">" => Expr::Compare(Comparison::Greater, left, right),
                ">=" => Expr::Compare(Comparison::GreaterOrEqual, left, right),
                "==" => Expr::Compare(Comparison::Equal, left, right),
                "!=" => Expr::Compare(Comparison::NotEqual, left, right),
                "contains" => Expr::Text2(TextTest::Contains, left, right),
                other => Expr::Unknown(format!("the operator {other}")),
            }
        }
        "call" => call(node, global),
        other => Expr::Unknown(format!("{other} expressions")),
    }
}

fn number(value: Option<&Json>) -> Option<f64> {
    match value? {
        Json::Number(number) => number.as_f64(),
        Json::String(text) => text.parse().ok(),
        _ => None,
    }
}

/// `finding.secret`, `finding.match`, `finding.line`; anything else
/// (captures, offsets, `attributes.path`) is unknown here.
fn field(node: &Json) -> Expr {
    let name = |node: Option<&Json>| node.and_then(|node| node.get("value")).and_then(Json::as_str).map(str::to_owned);
    let object = node.get("node").filter(|inner| inner.get("kind").and_then(Json::as_str) == Some("identifier"));
    match (name(object).as_deref(), name(node.get("property")).as_deref()) {
        (Some("finding"), Some("secret")) => Expr::Field(Field::Secret),
        (Some("finding"), Some("match")) => Expr::Field(Field::Match),
        (Some("finding"), Some("line")) => Expr::Field(Field::Line),
        (Some(object), Some(property)) => Expr::Unknown(format!("{object}.{property}")),
        _ => Expr::Unknown("a member of a computed value".into()),
    }
}

fn call(node: &Json, global: Option<&Arc<Expr>>) -> Expr {
    let arguments: Vec<&Json> = node.get("arguments").and_then(Json::as_array).into_iter().flatten().collect();
    let callee = node.get("callee");
    let callee_kind = callee.and_then(|callee| callee.get("kind")).and_then(Json::as_str);
    let argument = |at: usize| {
        Box::new(arguments.get(at).map_or(Expr::Unknown("a missing argument".into()), |inner| parse(inner, global)))
    };
    let strings = |at: usize| -> Option<Vec<String>> {
        arguments
            .get(at)?
            .get("nodes")?
            .as_array()?
            .iter()
            .map(|item| item.get("value")?.as_str().map(str::to_owned))
            .collect()
    };
    if callee_kind == Some("member") {
        // A method: `receiver.name(argument)`.
        let callee = callee.expect("kind read from it");
        let name =
            callee.get("property").and_then(|property| property.get("value")).and_then(Json::as_str).unwrap_or("");
        let receiver = Box::new(
            callee.get("node").map_or(Expr::Unknown("a method without receiver".into()), |inner| parse(inner, global)),
        );
        return match name {
            "startsWith" => Expr::Text2(TextTest::StartsWith, receiver, argument(0)),
            "endsWith" => Expr::Text2(TextTest::EndsWith, receiver, argument(0)),
            "contains" => Expr::Text2(TextTest::Contains, receiver, argument(0)),
            "lower" | "lowerAscii" => Expr::Lower(receiver),
            other => Expr::Unknown(format!("the method {other}")),
        };
    }
    let name = callee.and_then(|callee| callee.get("value")).and_then(Json::as_str).unwrap_or("");
    match name {
        "entropy" => Expr::Entropy(argument(0)),
        "lower" => Expr::Lower(argument(0)),
        "matchesAny" => match strings(1) {
            Some(sources) => Expr::MatchesAny(argument(0), Patterns::new(sources)),
            None => Expr::Unknown("matchesAny over computed patterns".into()),
        },
        "containsAny" => match strings(1) {
            Some(terms) => Expr::ContainsAny(argument(0), terms.iter().map(|term| term.to_ascii_lowercase()).collect()),
            None => Expr::Unknown("containsAny over computed terms".into()),
        },
        other => Expr::Unknown(format!("{other}()")),
    }
}
