use super::*;
use crate::masks::Masks;

fn literally() -> Masks {
    Masks::none().reading_literally(true)
}

fn occurrences(messages: &[&str], patterns: &[usize]) -> (Vec<Occurrence<usize, usize>>, Vec<Template>) {
    let occurrences = messages
        .iter()
        .zip(patterns)
        .enumerate()
        .map(|(id, (message, pattern))| Occurrence { id, pattern: *pattern, template: Template::of(message) })
        .collect();
    let literal = messages.iter().map(|message| Template::of_masked(message, &literally())).collect();
    (occurrences, literal)
}

#[test]
fn a_literal_template_keeps_what_is_quoted_but_its_numbers_and_paths() {
    let literal = |message| Template::of_masked(message, &literally()).text();
    assert_eq!(
        literal("ModuleNotFoundError: No module named 'psycopg2'"),
        "ModuleNotFoundError: No module named 'psycopg#'"
    );
    assert_eq!(literal("KeyError: 'user name'"), "KeyError: 'user_name'", "a quoted value stays one token");
    assert_eq!(literal("cannot open '/tmp/a/b.txt'"), "cannot open <*>");
    assert_eq!(literal("bad port 8080 'p8080'"), "bad port <*> 'p#'");
    assert_eq!(
        Template::of("ModuleNotFoundError: No module named 'psycopg2'").text(),
        "ModuleNotFoundError: No module named <*>"
    );
}

#[test]
fn turning_literal_splits_each_pattern_by_template_and_leaves_a_persons_whole() {
    let messages = ["No module named 'a'", "No module named 'b'", "No module named 'a'", "x 'c'", "x 'd'"];
    let (_, literal) = occurrences(&messages, &[1, 1, 1, 2, 2]);
    assert_eq!(split_by_literal(&[1, 1, 1, 2, 2], &literal, &BTreeSet::new()), vec![1, 3, 1, 2, 4]);
    let pinned = BTreeSet::from([2]);
    assert_eq!(split_by_literal(&[1, 1, 1, 2, 2], &literal, &pinned), vec![1, 3, 1, 2, 2]);
}

/// A project's occurrences, their literal templates, their patterns
/// before the corrections, and the corrections.
type Project = (Vec<Occurrence<usize, usize>>, Vec<Template>, Vec<usize>, Vec<Correction<usize>>);

/// Four patterns of missing things, each holding a name its project's
/// people tell apart; `split` of them corrected by a person, who split the
/// second name out of each (pattern `p` → new `p + 10`).
fn missing(split: usize) -> Project {
    let kinds = ["No module named", "no such table:", "cannot remove", "unknown command"];
    let (mut messages, mut before, mut now, mut corrections) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for (pattern, kind) in kinds.iter().enumerate() {
        for (name, count) in [("psycopg", 2), ("reproduce_app", 3)] {
            for _ in 0..count {
                messages.push(format!("{kind} '{name}'"));
                before.push(pattern);
                now.push(if name == "reproduce_app" && pattern < split { pattern + 10 } else { pattern });
            }
        }
        if pattern < split {
            corrections.push(Correction::Split { from: pattern, new: pattern + 10 });
        }
    }
    let messages: Vec<&str> = messages.iter().map(String::as_str).collect();
    let (occurrences, literal) = occurrences(&messages, &now);
    (occurrences, literal, before, corrections)
}

#[test]
fn splits_by_a_quoted_name_support_reading_literally_once_there_are_enough() {
    let (occurrences, literal, before, corrections) = missing(MIN_CORRECTIONS);
    let evidence = literal_evidence(&occurrences, &literal, &before, &corrections);
    assert_eq!((evidence.agreeing, evidence.against), (MIN_CORRECTIONS, 0));
    assert!(evidence.supports(), "{evidence:?}");

    // Fewer are local judgments, not the project's way.
    let (occurrences, literal, before, corrections) = missing(MIN_CORRECTIONS - 1);
    let evidence = literal_evidence(&occurrences, &literal, &before, &corrections);
    assert_eq!(evidence.agreeing, MIN_CORRECTIONS - 1);
    assert!(!evidence.supports(), "{evidence:?}");
}

#[test]
fn a_merge_reading_literally_would_undo_withdraws_the_support() {
    let (mut occurrences, mut literal, mut before, mut corrections) = missing(MIN_CORRECTIONS);
    // The same project's person also merged two names javac reports into
    // one pattern, which capture had half together: read literally, they
    // fall apart again.
    for (message, was, is) in [
        ("symbol: variable indexCart", 20, 20),
        ("symbol: variable exportCount", 20, 20),
        ("symbol: variable exportCount 2", 21, 20),
    ] {
        occurrences.push(Occurrence { id: occurrences.len(), pattern: is, template: Template::of(message) });
        literal.push(Template::of_masked(message, &literally()));
        before.push(was);
    }
    corrections.push(Correction::Merge { from: 21, into: 20 });
    let evidence = literal_evidence(&occurrences, &literal, &before, &corrections);
    assert_eq!((evidence.agreeing, evidence.against), (MIN_CORRECTIONS, 1));
    assert!(!evidence.supports(), "{evidence:?}");
}

#[test]
fn without_corrections_nothing_supports_it() {
    let (occurrences, literal, before, _) = missing(0);
    assert!(!literal_evidence(&occurrences, &literal, &before, &[]).supports());
}

#[test]
fn read_literally_a_merge_of_two_quoted_names_is_left_out_of_the_plan_and_others_stay() {
    let masks = Masks::none().reading_literally(true);
    let messages =
        ["cannot import name 'alpha',", "cannot import name 'beta',", "user ann is locked", "user bob is locked"];
    let occurrences: Vec<Occurrence<usize, usize>> = messages
        .iter()
        .enumerate()
        .map(|(id, message)| Occurrence { id, pattern: id + 1, template: Template::of_masked(message, &masks) })
        .collect();
    let merge = |into, source, template: &str| Change::Merge {
        into: Target::Pattern(into),
        sources: vec![Target::Pattern(source)],
        template: Template::from_tokens(template.split(' ').map(str::to_owned).collect()),
    };
    let plan = [merge(1, 2, "cannot import name <*>"), merge(3, 4, "user <*> is locked")];
    assert_eq!(keeping_names(&plan, &occurrences), vec![plan[1].clone()]);

    // A move of a split and its merge keeps its numbering in the plan.
    let split = Change::Split { from: 1, occurrences: vec![0], template: occurrences[0].template.clone() };
    let into_nine = Change::Merge {
        into: Target::Pattern(9),
        sources: vec![Target::SplitOf(1)],
        template: occurrences[0].template.clone(),
    };
    let plan = [plan[1].clone(), split, into_nine];
    assert_eq!(keeping_names(&plan, &occurrences), plan.to_vec());
}
