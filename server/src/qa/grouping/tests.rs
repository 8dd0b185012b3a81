use std::collections::HashMap;
use std::path::PathBuf;

use super::*;

/// The grouping of the server without the database: routes to templates.
#[derive(Default)]
struct Grouper {
    routes: HashMap<String, Vec<(usize, Template)>>,
    next: usize,
}

impl Grouper {
    fn add(&mut self, message: &str, threshold: f64) -> usize {
        let template = Template::of(message);
        let bucket = self.routes.entry(template.route()).or_default();
        let found = best_match(&template, bucket.iter().enumerate().map(|(index, (_, t))| (index, t)), threshold);
        match found {
            Some(Match { candidate, .. }) => {
                let (id, current) = &mut bucket[candidate];
                *current = current.generalize(&template);
                *id
            }
            None => {
                self.next += 1;
                bucket.push((self.next, template));
                self.next
            }
        }
    }
}

/// Group accuracy as in logpai/logparser's evaluator: a line counts when its
/// predicted group has exactly the members of its true group.
pub(crate) fn group_accuracy(predicted: &[usize], truth: &[String]) -> f64 {
    let mut true_sizes: HashMap<&str, usize> = HashMap::new();
    for event in truth {
        *true_sizes.entry(event).or_default() += 1;
    }
    let mut clusters: HashMap<usize, Vec<usize>> = HashMap::new();
    for (line, group) in predicted.iter().enumerate() {
        clusters.entry(*group).or_default().push(line);
    }
    let correct: usize = clusters
        .values()
        .filter(|lines| {
            let event = &truth[lines[0]];
            lines.iter().all(|line| &truth[*line] == event) && true_sizes[event.as_str()] == lines.len()
        })
        .map(Vec::len)
        .sum();
    correct as f64 / truth.len() as f64
}

fn loghub(system: &str) -> (Vec<String>, Vec<String>) {
    structured(&PathBuf::from("loghub2k").join(system).join(format!("{system}_2k.log_structured.csv")))
}

/// A LogHub-format file of tests/data: its messages and their true groups.
fn structured(relative: &std::path::Path) -> (Vec<String>, Vec<String>) {
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

/// Drain's group accuracy in the LogPAI benchmark (Zhu et al., ICSE-SEIP
/// 2019), which the issue asks to match with the default threshold.
#[test]
fn loghub_group_accuracy_reaches_drain() {
    let mut short = Vec::new();
    for (system, drain) in [("HDFS", 0.998), ("Apache", 1.0), ("OpenSSH", 0.788), ("Spark", 0.920)] {
        let (messages, truth) = loghub(system);
        let mut grouper = Grouper::default();
        let predicted: Vec<usize> =
            messages.iter().map(|message| grouper.add(message, DEFAULT_SIMILARITY_THRESHOLD)).collect();
        let accuracy = group_accuracy(&predicted, &truth);
        eprintln!("{system}: group accuracy {accuracy:.3} (Drain {drain:.3})");
        // Drain's figures are rounded to three places.
        if accuracy + 0.0005 < drain {
            short.push(format!("{system}: {accuracy:.3} < Drain's {drain:.3}"));
        }
    }
    assert!(short.is_empty(), "{short:?}");
}

/// Lore's own failure messages (tests/data/failures): the kinds agents'
/// checks print, many with a varying token count. The figure is reported;
/// the floor keeps it from sliding back.
#[test]
fn failure_messages_group_accuracy() {
    let (messages, truth) = structured(std::path::Path::new("failures/failures_2k.log_structured.csv"));
    let mut grouper = Grouper::default();
    let predicted: Vec<usize> =
        messages.iter().map(|message| grouper.add(message, DEFAULT_SIMILARITY_THRESHOLD)).collect();
    let accuracy = group_accuracy(&predicted, &truth);
    eprintln!("failure messages: group accuracy {accuracy:.3}");
    assert!(accuracy >= FAILURES_FLOOR, "group accuracy {accuracy:.3} < {FAILURES_FLOOR}");
}

/// What grouping reaches on tests/data/failures: 0.768 comparing position
/// by position, 0.835 with a list of variables read as one wildcard, 0.932
/// with short templates joined one position off.
const FAILURES_FLOOR: f64 = 0.93;

#[test]
fn a_short_template_joins_a_message_one_position_off_and_a_three_token_one_does_not() {
    let mut grouper = Grouper::default();
    let first = grouper.add("--- FAIL: TestUserCache (0.12s)", 0.85);
    assert_eq!(grouper.add("--- FAIL: TestOrderQueue (1.20s)", 0.85), first, "3 of 4 positions fit");
    assert_ne!(grouper.add("--- FAIL: TestOrderQueue again now", 0.85), first, "another length");
    let task = grouper.add("Task <*> failed", 0.85);
    assert_ne!(grouper.add("Task <*> succeeded", 0.85), task, "a third of a message is not a variable");
    let many = grouper.add("retry one two three four five six seven", 0.85);
    assert_ne!(grouper.add("retry one two three four five ten eight", 0.85), many, "6 of 8 is under 0.85");
}

#[test]
fn near_templates_join_and_far_ones_start_new_patterns() {
    let mut grouper = Grouper::default();
    let first = grouper.add("timeout after 30s waiting for db on host alpha port 5432", 0.85);
    assert_eq!(grouper.add("timeout after 12s waiting for db on host alpha port 6543", 0.85), first);
    // 9 of 10 positions fit.
    assert_eq!(grouper.add("timeout after 12s waiting for db on host beta port 6543", 0.85), first);
    // 8 of 10 after the widening above: "cache" and "gamma" differ... only one new
    // difference since "host" slot is now a wildcard.
    assert_ne!(grouper.add("timeout after 12s waiting for redis on server beta port 1", 0.85), first);
    assert_ne!(grouper.add("something else entirely", 0.85), first);
}
