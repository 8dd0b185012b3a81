//! Generated QA failures for the benchmarks: real error-message shapes
//! (pytest, tsc, rustc, eslint, jest, Python tracebacks ...) whose constant
//! words come from the retrieval queries, with paths, line numbers and quoted
//! values that vary from one occurrence to the next. Each pattern's words
//! are drawn from a generator seeded by its index, so a later "same
//! pattern, other numbers" capture regenerates them.

use std::time::Instant;

use lore_proto::v1 as proto;
use lore_proto::v1::qa_learning_service_client::QaLearningServiceClient;
use lore_server::testing::TestServer;
use uuid::Uuid;

/// Concurrent clients while filling.
const FILL_CLIENTS: usize = 4;

/// (check name, the message's first words): two constant leading tokens,
/// as real tools print them.
const SHAPES: [(&str, &str, &str); 12] = [
    ("pytest", "AssertionError: expected", "py"),
    ("pytest", "ModuleNotFoundError: No", "py"),
    ("tsc", "error TS2322: Type", "ts"),
    ("tsc", "error TS2339: Property", "ts"),
    ("cargo build", "error[E0308]: mismatched types", "rs"),
    ("cargo build", "error[E0425]: cannot find", "rs"),
    ("clippy", "warning: unused", "rs"),
    ("eslint", "error no-unused-vars", "js"),
    ("jest", "expect(received).toEqual(expected) received", "tsx"),
    ("e2e", "TimeoutError: waiting for", "ts"),
    ("integration", "Traceback (most recent call last):", "py"),
    ("migrate", "ERROR: relation", "sql"),
];
const FOLDERS: [&str; 24] = [
    "src/api",
    "src/db",
    "src/auth",
    "src/billing",
    "src/ui/components",
    "src/ui/pages",
    "schema",
    "migrations",
    "tests/unit",
    "tests/e2e",
    "server/src/grpc",
    "server/src/store",
    "cli/src",
    "lib/utils",
    "lib/models",
    "app/routes",
    "app/services",
    "config",
    "scripts",
    "jobs",
    "workers",
    "infra",
    "docs",
    "pkg/cache",
];
const TASK_CATEGORIES: [&str; 5] = ["feature", "bugfix", "refactor", "migration", "test"];

/// Lowercase words of the retrieval corpus's queries (the first lines of
/// the Python standard library's docstrings): real English and programming
/// vocabulary for the constant parts of the messages and the task titles.
pub fn vocabulary() -> Vec<String> {
    let path = lore_server::testing::corpus::folder().join("queries.jsonl");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    let mut words: Vec<String> = text
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter_map(|value| value["text"].as_str().map(str::to_lowercase))
        .flat_map(|text| {
            text.split(|c: char| !c.is_ascii_alphabetic()).map(str::to_owned).collect::<Vec<_>>().into_iter()
        })
        .filter(|word| word.len() >= 3)
        .collect();
    words.sort();
    words.dedup();
    words
}

/// One generated pattern: what stays the same between its occurrences.
pub struct Shape {
    pub project: String,
    pub check: &'static str,
    pub prefix: &'static str,
    pub words: Vec<String>,
    pub folder: &'static str,
    pub extension: &'static str,
    pub task_category: &'static str,
    pub title: String,
}

impl Shape {
    pub fn of(project: &str, pattern: usize, vocabulary: &[String]) -> Self {
        let mut rng = fastrand::Rng::with_seed(pattern as u64);
        let (check, prefix, extension) = SHAPES[pattern % SHAPES.len()];
        let mut pick = || vocabulary[rng.usize(..vocabulary.len())].clone();
        let words: Vec<String> = (0..3 + pattern % 6).map(|_| pick()).collect();
        let title = format!("{} {} {} for {}", pick(), pick(), pick(), pick());
        Self {
            project: project.to_owned(),
            check,
            prefix,
            words,
            folder: FOLDERS[pattern % FOLDERS.len()],
            extension,
            task_category: TASK_CATEGORIES[pattern % TASK_CATEGORIES.len()],
            title,
        }
    }

    /// The file an occurrence names.
    fn file(&self, variant: usize) -> String {
        format!("{}/{}_{variant}.{}", self.folder, self.words[0], self.extension)
    }

    /// An occurrence's message: the constant words with a fresh path, line
    /// and value.
    pub fn message(&self, variant: usize) -> String {
        let file = self.file(variant);
        format!("{} {} '{}{variant}' at {file}:{}", self.prefix, self.words.join(" "), self.words[1], 10 + variant)
    }

    /// An occurrence, as a capture sends it.
    pub fn failure(&self, task: &str, variant: usize) -> proto::CaptureFailureRequest {
        let (file, message) = (self.file(variant), self.message(variant));
        proto::CaptureFailureRequest {
            failure_id: Uuid::now_v7().to_string(),
            project: self.project.clone(),
            task: Some(self.task(task, &file)),
            failed_checks: vec![proto::FailedCheck { name: self.check.into(), output: message.clone(), exit_code: 1 }],
            error_messages: vec![message],
            files_modified: vec![file],
            diff_summary: "2 files changed, 14 insertions(+), 3 deletions(-)".into(),
            ..Default::default()
        }
    }

    pub fn task(&self, task: &str, file: &str) -> proto::Task {
        proto::Task {
            task_id: task.into(),
            title: self.title.clone(),
            category: self.task_category.into(),
            files: vec![file.into()],
            description: String::new(),
        }
    }
}

/// Creates the patterns through CaptureFailure: two occurrences each, in
/// two tasks, from `FILL_CLIENTS` clients at once.
pub async fn fill_patterns(server: &TestServer, project: &str, patterns: usize, vocabulary: &[String]) {
    let started = Instant::now();
    let vocabulary = std::sync::Arc::new(vocabulary.to_vec());
    let (latencies, elapsed) = {
        let channel = server.channel().await;
        let project = project.to_owned();
        super::latencies(FILL_CLIENTS, patterns * 2, move |client, index| {
            let mut qa = QaLearningServiceClient::new(channel.clone());
            let vocabulary = std::sync::Arc::clone(&vocabulary);
            let project = project.clone();
            async move {
                let call = client * (patterns * 2 / FILL_CLIENTS) + index;
                let (pattern, variant) = (call / 2, call % 2);
                let shape = Shape::of(&project, pattern, &vocabulary);
                qa.capture_failure(shape.failure(&format!("T-{pattern}-{variant}"), variant)).await.unwrap();
            }
        })
        .await
    };
    let stored = super::project_rows(server.pool(), "qa_patterns", project).await;
    eprintln!(
        "{} captures from {FILL_CLIENTS} clients in {:.1} s ({:.0}/s, p50 {:.2} ms): {stored} patterns",
        patterns * 2,
        elapsed.as_secs_f64(),
        (patterns * 2) as f64 / elapsed.as_secs_f64(),
        super::millis(&latencies, 0.5),
    );
    assert!(stored as usize >= patterns * 95 / 100, "the generated shapes should stay apart: {stored} patterns");
    // Autovacuum analyzes tables this size within a minute or two of such a
    // load; measuring before it would measure plans made without any
    // statistics (the planner then walks every pattern of the project).
    sqlx::query("ANALYZE").execute(server.pool()).await.unwrap();
    eprintln!("filled in {:.1} s", started.elapsed().as_secs_f64());
}
