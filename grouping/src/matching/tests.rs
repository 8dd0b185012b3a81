use std::path::PathBuf;

use super::*;

use crate::accuracy::group_accuracy;
use crate::template::Template;

/// A LogHub-format file of tests/data: its messages and their true groups.
pub(crate) fn structured(relative: &std::path::Path) -> (Vec<String>, Vec<String>) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/data").join(relative);
    let mut reader = csv::Reader::from_path(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    let headers = reader.headers().expect("header").clone();
    let content = headers.iter().position(|name| name == "Content").expect("Content column");
    let event = headers.iter().position(|name| name == "EventId").expect("EventId column");
    reader
        .records()
        .map(|record| {
            let record = record.expect("csv record");
            (record[content].to_owned(), record[event].to_owned())
        })
        .unzip()
}

/// Lore's own failure messages (tests/data/failures): the kinds agents'
/// checks print, many with a varying token count. The figure is reported;
/// the floor keeps it from sliding back.
#[test]
fn failure_messages_group_accuracy() {
    let (messages, truth) = structured(std::path::Path::new("failures/failures_2k.log_structured.csv"));
    let mut grouper = OnlineGrouper::new(DEFAULT_SIMILARITY_THRESHOLD);
    let predicted: Vec<usize> = messages.iter().map(|message| grouper.add(&Template::of(message))).collect();
    let accuracy = group_accuracy(&predicted, &truth);
    eprintln!("failure messages: group accuracy {accuracy:.3}");
    assert!(accuracy >= FAILURES_FLOOR, "group accuracy {accuracy:.3} < {FAILURES_FLOOR}");
}

/// What grouping reaches on tests/data/failures: 0.768 comparing position
/// by position, 0.835 with a list of variables read as one wildcard, 0.932
/// with short templates joined one position off.
const FAILURES_FLOOR: f64 = 0.93;

/// Real tool failures (tests/data/tool-failures), a set the online
/// assignment was not tuned on: its figure when the set was made is the
/// floor (docs/EVALUATION.md).
#[test]
fn tool_failures_group_accuracy() {
    let (messages, truth) = structured(std::path::Path::new("tool-failures/tool_failures.log_structured.csv"));
    let mut grouper = OnlineGrouper::new(DEFAULT_SIMILARITY_THRESHOLD);
    let predicted: Vec<usize> = messages.iter().map(|message| grouper.add(&Template::of(message))).collect();
    let accuracy = group_accuracy(&predicted, &truth);
    eprintln!("tool failures: online group accuracy {accuracy:.3}");
    assert!(accuracy >= 0.778 - 0.01, "group accuracy {accuracy:.3} < 0.768");
}

#[test]
fn a_short_template_joins_a_message_one_position_off_and_a_three_token_one_does_not() {
    let mut grouper = OnlineGrouper::new(DEFAULT_SIMILARITY_THRESHOLD);
    let first = grouper.add(&Template::of("--- FAIL: TestUserCache (0.12s)"));
    assert_eq!(grouper.add(&Template::of("--- FAIL: TestOrderQueue (1.20s)")), first, "3 of 4 positions fit");
    assert_ne!(grouper.add(&Template::of("--- FAIL: TestOrderQueue again now")), first, "another length");
    let task = grouper.add(&Template::of("Task <*> failed"));
    assert_ne!(grouper.add(&Template::of("Task <*> succeeded")), task, "a third of a message is not a variable");
    let many = grouper.add(&Template::of("retry one two three four five six seven"));
    assert_ne!(grouper.add(&Template::of("retry one two three four five ten eight")), many, "6 of 8 is under 0.85");
}

#[test]
fn near_templates_join_and_far_ones_start_new_patterns() {
    let mut grouper = OnlineGrouper::new(DEFAULT_SIMILARITY_THRESHOLD);
    let first = grouper.add(&Template::of("timeout after 30s waiting for db on host alpha port 5432"));
    assert_eq!(grouper.add(&Template::of("timeout after 12s waiting for db on host alpha port 6543")), first);
    // 9 of 10 positions fit.
    assert_eq!(grouper.add(&Template::of("timeout after 12s waiting for db on host beta port 6543")), first);
    // 8 of 10 after the widening above: "cache" and "gamma" differ... only one new
    // difference since "host" slot is now a wildcard.
    assert_ne!(grouper.add(&Template::of("timeout after 12s waiting for redis on server beta port 1")), first);
    assert_ne!(grouper.add(&Template::of("something else entirely")), first);
}

#[test]
fn read_literally_a_short_message_joins_only_a_template_it_fits_everywhere() {
    let admin = Template::of("Too many authentication failures for admin");
    let root = Template::of("Too many authentication failures for root");
    assert!(joins(admin.similarity(&root), admin.tokens.len(), DEFAULT_SIMILARITY_THRESHOLD), "one word apart joins");
    assert!(!joins(admin.similarity(&root), admin.tokens.len(), EXACT));
    let mut grouper = OnlineGrouper::new(EXACT);
    assert_ne!(grouper.add(&admin), grouper.add(&root));
    assert_eq!(grouper.add(&Template::of("Too many authentication failures for admin")), 1);
}
