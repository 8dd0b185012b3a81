use std::fs::OpenOptions;

use super::*;
use lore_spool::SpoolConfig;

/// A spool and an inbox path in one temporary directory, and a tail that
/// can be stopped and started again on them.
struct Fixture {
    directory: tempfile::TempDir,
    spool: Arc<Spool>,
    stats: Arc<InboxStats>,
    tail: Option<InboxTail>,
}

impl Fixture {
    fn new() -> Self {
        Self::with_spool(|config| config)
    }

    /// A spool whose disk budget holds fewer than 200 of the test lines.
    fn with_small_spool() -> Self {
        Self::with_spool(|config| SpoolConfig { disk_budget_bytes: 8 * 1024, max_segment_bytes: 1024, ..config })
    }

    fn with_spool(configure: impl FnOnce(SpoolConfig) -> SpoolConfig) -> Self {
        let directory = tempfile::tempdir().unwrap();
        let (spool, _) = Spool::open(configure(SpoolConfig::new(directory.path().join("spool")))).unwrap();
        let mut fixture = Self { directory, spool: Arc::new(spool), stats: Arc::default(), tail: None };
        fixture.start();
        fixture
    }

    fn config(&self) -> InboxConfig {
        InboxConfig {
            poll_interval: Duration::from_millis(20),
            rotated_grace: Duration::from_millis(200),
            max_line_bytes: 1024,
            ..InboxConfig::new(self.inbox(), self.directory.path().join("spool"))
        }
    }

    fn start(&mut self) {
        let tail =
            InboxTail::start(self.config(), Arc::clone(&self.spool), Sanitizer::default(), Arc::clone(&self.stats));
        self.tail = Some(tail.unwrap());
    }

    fn stop(&mut self) {
        self.tail.take().unwrap().stop();
    }

    /// Closes the spool and opens it again, as a new sidecar process does.
    fn reopen_spool(&mut self) {
        self.spool.close();
        let (spool, _) = Spool::open(SpoolConfig::new(self.directory.path().join("spool"))).unwrap();
        self.spool = Arc::new(spool);
    }

    fn inbox(&self) -> PathBuf {
        self.directory.path().join("hooks").join("inbox.jsonl")
    }

    fn append(&self, text: &str) {
        self.append_to(&self.inbox(), text.as_bytes());
    }

    fn append_to(&self, path: &Path, bytes: &[u8]) {
        let mut file = OpenOptions::new().create(true).append(true).open(path).unwrap();
        file.write_all(bytes).unwrap();
    }

    /// The `category` of every spooled action, in spool order.
    fn spooled(&self) -> Vec<String> {
        let mut reader = self.spool.reader();
        reader.rewind(0);
        let mut categories = Vec::new();
        loop {
            let records = reader.read_batch(1000, usize::MAX).unwrap();
            if records.is_empty() {
                return categories;
            }
            for record in records {
                let Some(Write::Action(action)) = SpoolEntry::decode(&record.payload).unwrap().write else {
                    panic!("not an action")
                };
                categories.push(action.category);
            }
        }
    }

    fn rejects(&self) -> Vec<serde_json::Value> {
        match fs::read_to_string(self.directory.path().join("spool").join(REJECTS_FILE)) {
            Ok(text) => text.lines().map(|line| serde_json::from_str(line).unwrap()).collect(),
            Err(_) => Vec::new(),
        }
    }

    /// Acknowledges whatever is spooled, as the server would, until
    /// `count` records were written (or a few seconds passed).
    async fn ack_until_written(&self, count: u64) {
        for _ in 0..100 {
            let written = self.spool.stats().written_id;
            self.spool.ack(written).unwrap();
            if written == count {
                break;
            }
            tokio::time::sleep(Duration::from_millis(30)).await;
        }
    }

    /// Waits until `count` actions are spooled, then a little longer to
    /// catch any extra one.
    async fn wait_for_spooled(&self, count: usize) -> Vec<String> {
        let deadline = Instant::now() + Duration::from_secs(10);
        while self.spooled().len() < count && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        settle().await;
        self.spooled()
    }
}

/// Several poll intervals: long enough for the tail to act on what is there.
async fn settle() {
    tokio::time::sleep(Duration::from_millis(150)).await;
}

fn line(category: &str) -> String {
    format!(r#"{{"project":"lore","action_type":"shell","outcome":"success","category":"{category}"}}"#) + "\n"
}

fn lines(range: std::ops::Range<usize>) -> String {
    range.map(|index| line(&format!("n{index}"))).collect()
}

fn names(range: std::ops::Range<usize>) -> Vec<String> {
    range.map(|index| format!("n{index}")).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn lines_become_spooled_actions_with_ids_times_and_redaction() {
    let fixture = Fixture::new();
    fixture.append(
        r#"{"project":"lore","action_type":"deploy","outcome":"failure","error":"token ghp_Q8vZk3mX9bT5nK2pL8rW1yY4cC7dE0fHjR2s refused","context":{"password":"hunter2","file":"src/main.rs"},"occurred_at":"2026-11-22T10:00:00Z","duration_ms":12}"#,
    );
    fixture.append("\n");
    fixture.wait_for_spooled(1).await;
    let mut reader = fixture.spool.reader();
    let record = reader.read_batch(1, usize::MAX).unwrap().remove(0);
    let entry = SpoolEntry::decode(&record.payload).unwrap();
    let Some(Write::Action(action)) = entry.write else { panic!("not an action") };
    assert!(uuid::Uuid::parse_str(&action.action_id).is_ok(), "{}", action.action_id);
    assert_eq!(action.outcome, proto::Outcome::Failure as i32);
    assert_eq!(action.duration_ms, 12);
    assert_eq!(action.occurred_at.unwrap().seconds, 1_795_341_600);
    assert!(!action.error.contains("ghp_"), "{}", action.error);
    let context = lore_proto::json::struct_to_json(action.context.as_ref().unwrap());
    assert_eq!(context["password"], "[REDACTED]");
    assert_eq!(context["file"], "src/main.rs");
    let length = fs::metadata(fixture.inbox()).unwrap().len();
    assert_eq!(entry.inbox.unwrap().offset, length, "the position after the line travels with it");
    assert_eq!(fixture.stats.accepted.load(Ordering::Relaxed), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn malformed_lines_go_to_the_rejects_file_and_the_tail_goes_on() {
    let fixture = Fixture::new();
    fixture.append(&line("n0"));
    fixture.append("this is not json\n");
    fixture.append("\n   \n");
    fixture.append(r#"{"project":"lore","action_type":"shell","outcome":"maybe"}"#);
    fixture.append("\n");
    fixture.append(r#"{"action_type":"shell","outcome":"success"}"#);
    fixture.append("\n");
    fixture.append(r#"{"project":"","action_type":"shell","outcome":"success"}"#);
    fixture.append("\n");
    fixture.append(r#"{"project":"lore","action_type":"shell","outcome":"success","colour":"blue"}"#);
    fixture.append("\n");
    fixture.append(r#"{"project":"lore","action_type":"shell","outcome":"success","context":"not an object"}"#);
    fixture.append("\n");
    fixture.append_to(&fixture.inbox(), b"{\"project\":\"lo\xffre\"}\n");
    fixture.append(&format!("{{\"password\":\"hunter2hunter2\",\"padding\":\"{}\"}}\n", "x".repeat(2000)));
    fixture.append(&line("n1"));

    assert_eq!(fixture.wait_for_spooled(2).await, names(0..2));
    let rejects = fixture.rejects();
    let reasons: Vec<&str> = rejects.iter().map(|reject| reject["reason"].as_str().unwrap()).collect();
    assert_eq!(reasons.len(), 8, "{reasons:#?}");
    assert!(reasons[0].starts_with("not an action: expected"), "{}", reasons[0]);
    assert!(reasons[1].contains("\"maybe\" is not one of success"), "{}", reasons[1]);
    assert!(reasons[2].contains("missing field `project`"), "{}", reasons[2]);
    assert_eq!(reasons[3], "project: required");
    assert!(reasons[4].contains("unknown field `colour`"), "{}", reasons[4]);
    assert!(reasons[5].contains("invalid type: string"), "{}", reasons[5]);
    assert!(reasons[6].starts_with("not UTF-8"), "{}", reasons[6]);
    assert_eq!(reasons[7], "line longer than 1024 bytes");
    assert_eq!(rejects[0]["line"], "this is not json");
    let long = rejects[7]["line"].as_str().unwrap();
    assert!(!long.contains("hunter2hunter2"), "secrets are redacted in the rejects file too: {long}");
    assert_eq!(fixture.stats.rejected.load(Ordering::Relaxed), 8);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_partial_last_line_is_waited_for_not_rejected() {
    let fixture = Fixture::new();
    let whole = line("n0");
    let (head, tail) = whole.split_at(30);
    fixture.append(head);
    settle().await;
    assert!(fixture.spooled().is_empty());
    assert!(fixture.rejects().is_empty());
    fixture.append(tail);
    assert_eq!(fixture.wait_for_spooled(1).await, names(0..1));
    assert!(fixture.rejects().is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_line_over_the_limit_without_its_newline_yet_is_rejected_and_skipped() {
    let fixture = Fixture::new();
    fixture.append(&"y".repeat(1500));
    settle().await;
    fixture.append(&"y".repeat(3000));
    fixture.append("\n");
    fixture.append(&line("n0"));
    assert_eq!(fixture.wait_for_spooled(1).await, names(0..1));
    let rejects = fixture.rejects();
    assert_eq!(rejects.len(), 1, "{rejects:?}");
    assert_eq!(rejects[0]["reason"], "line longer than 1024 bytes");
}

#[tokio::test(flavor = "multi_thread")]
async fn rotation_reads_the_old_file_to_its_end_then_follows_the_new_one() {
    let fixture = Fixture::new();
    fixture.append(&lines(0..3));
    fixture.wait_for_spooled(3).await;

    // logrotate without copytruncate: rename, the writer still appends to
    // the old file (with a last line it finishes later), a new file starts.
    let rotated = fixture.inbox().with_extension("jsonl.1");
    fs::rename(fixture.inbox(), &rotated).unwrap();
    fixture.append_to(&rotated, lines(3..5).as_bytes());
    let unterminated = line("n5");
    fixture.append_to(&rotated, unterminated.trim_end().as_bytes());
    fixture.append(&lines(6..8));
    assert_eq!(fixture.wait_for_spooled(8).await, names(0..8), "the old file is finished before the new one starts");
    assert!(fixture.rejects().is_empty(), "{:?}", fixture.rejects());

    fixture.append(&lines(8..10));
    assert_eq!(fixture.wait_for_spooled(10).await.len(), 10);
}

#[tokio::test(flavor = "multi_thread")]
async fn truncation_starts_over_at_the_beginning() {
    let fixture = Fixture::new();
    fixture.append(&lines(0..5));
    fixture.wait_for_spooled(5).await;
    OpenOptions::new().write(true).truncate(true).open(fixture.inbox()).unwrap();
    settle().await;
    fixture.append(&lines(5..7));
    assert_eq!(fixture.wait_for_spooled(7).await, names(0..7));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_restart_continues_where_the_last_run_stopped() {
    let mut fixture = Fixture::new();
    fixture.append(&lines(0..3));
    fixture.wait_for_spooled(3).await;
    fixture.stop();
    fixture.append(&lines(3..6));
    fixture.start();
    assert_eq!(fixture.wait_for_spooled(6).await, names(0..6));
}

/// Spools lines 2 and 3, then stops as if the process had died before it
/// replaced the position file (acknowledged by the server first, when
/// `acknowledged`, and the spool opened again as a new process does), and
/// starts again: no line may come twice.
async fn crash_between_the_spool_append_and_the_position_write(acknowledged: bool) {
    let mut fixture = Fixture::new();
    fixture.append(&lines(0..2));
    fixture.wait_for_spooled(2).await;
    let position_file = fixture.directory.path().join("spool").join(POSITION_FILE);
    let before = fs::read(&position_file).unwrap();
    fixture.append(&lines(2..4));
    fixture.wait_for_spooled(4).await;
    if acknowledged {
        fixture.ack_until_written(4).await;
    }
    fixture.stop();
    fs::write(&position_file, before).unwrap();
    if acknowledged {
        fixture.reopen_spool();
    }
    fixture.start();
    fixture.append(&lines(4..5));
    assert_eq!(fixture.wait_for_spooled(5).await, names(0..5));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_crash_between_the_spool_append_and_the_position_write_reads_no_line_twice() {
    crash_between_the_spool_append_and_the_position_write(false).await;
}

/// The reopened spool still holds the acknowledged lines for the
/// position's recovery.
#[tokio::test(flavor = "multi_thread")]
async fn lines_acknowledged_before_such_a_crash_are_not_read_again() {
    crash_between_the_spool_append_and_the_position_write(true).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_file_rotated_while_the_sidecar_was_down_is_finished_first() {
    let mut fixture = Fixture::new();
    fixture.append(&lines(0..2));
    fixture.wait_for_spooled(2).await;
    fixture.stop();
    fixture.append(&lines(2..4));
    fs::rename(fixture.inbox(), fixture.inbox().with_extension("jsonl.1")).unwrap();
    fixture.append(&lines(4..6));
    fixture.start();
    assert_eq!(fixture.wait_for_spooled(6).await, names(0..6));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_full_spool_holds_the_tail_back_without_losing_lines() {
    let fixture = Fixture::with_small_spool();
    fixture.append(&lines(0..200));
    settle().await;
    let held = fixture.spool.stats().written_id;
    assert!(held < 200, "the budget holds fewer than 200 actions, got {held}");
    // The server acknowledges everything: room again, and the tail goes on.
    fixture.ack_until_written(200).await;
    assert_eq!(fixture.spool.stats().written_id, 200, "every line spooled once room was made");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_batch_retried_on_a_full_spool_writes_its_reject_once() {
    let fixture = Fixture::with_small_spool();
    fixture.append(&lines(0..200));
    settle().await;
    let held = fixture.spool.stats().written_id;
    assert!(held < 200, "the spool is full, got {held}");
    // A malformed line with good lines behind it that cannot be spooled yet:
    // the reject is written before each append attempt, and the attempts
    // repeat while the spool makes room.
    fixture.append(&format!("{{\"broken\": 1\n{}", lines(200..210)));
    settle().await;
    fixture.ack_until_written(210).await;
    assert_eq!(fixture.spool.stats().written_id, 210, "every good line spooled once room was made");
    let rejects = fixture.rejects();
    assert_eq!(rejects.len(), 1, "the full spool's retries write the reject once: {rejects:?}");
    assert_eq!(fixture.stats.rejected.load(Ordering::Relaxed), 1);
}
