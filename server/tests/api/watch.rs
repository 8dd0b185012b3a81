//! The folder watcher over a real folder, the real local model and a real
//! PostgreSQL; what it indexed is read back over real gRPC. Writes, edits,
//! renames, deletions, files the watcher must skip, and changes made while
//! it was not running. How fast a save becomes searchable is measured by
//! the benchmark, not here: the waits below only bound a hang.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use lore_domain::knowledge::KnowledgeBase;
use lore_domain::knowledge::embed;
use lore_domain::knowledge::watch::{self, WatchConfig, WatchStats, WatchedFolder};
use lore_proto::v1 as proto;
use lore_proto::v1::knowledge_service_client::KnowledgeServiceClient;
use lore_server::config::Config;
use lore_server::testing::TestServer;
use tokio::task::JoinHandle;
use tonic::transport::Channel;

use crate::wait_for;

/// How long the watcher may take to see what a test did.
const WAIT: Duration = Duration::from_secs(30);

type Client = KnowledgeServiceClient<Channel>;

struct Fixture {
    server: TestServer,
    client: Client,
    folder: tempfile::TempDir,
    stats: Arc<WatchStats>,
    watcher: Option<JoinHandle<()>>,
    knowledge: Option<KnowledgeBase>,
}

impl Fixture {
    async fn new() -> Self {
        let server = TestServer::start().await;
        let client = KnowledgeServiceClient::new(server.channel().await);
        let folder = tempfile::tempdir().unwrap();
        Self { server, client, folder, stats: Arc::default(), watcher: None, knowledge: None }
    }

    /// Starts the watcher and waits for its first reconciliation.
    async fn start(&mut self) {
        let cache_dir = lore_pgtest::default_cache_dir();
        let embedder = embed::from_config(&Config::default().knowledge.embedding, &cache_dir).unwrap();
        let knowledge = KnowledgeBase::new(self.server.pool().clone(), Some(embedder), Default::default());
        self.knowledge = Some(knowledge.clone());
        let config = WatchConfig {
            folders: vec![WatchedFolder {
                path: self.folder.path().to_owned(),
                project: "lore".into(),
                publish: false,
            }],
            debounce_ms: 50,
            ..WatchConfig::default()
        };
        self.stats = Arc::default();
        let stats = Arc::clone(&self.stats);
        self.watcher = Some(tokio::spawn(async move { watch::watch(knowledge, config, stats).await.unwrap() }));
        let stats = Arc::clone(&self.stats);
        wait_for("the first reconciliation", WAIT, || async { stats.reconciled.load(Ordering::Relaxed) > 0 }).await;
    }

    fn stop(&mut self) {
        self.watcher.take().unwrap().abort();
    }

    fn path(&self, relative: &str) -> PathBuf {
        self.folder.path().join(relative)
    }

    fn write(&self, relative: &str, content: impl AsRef<[u8]>) {
        let path = self.path(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }

    /// Active entries of the project: (title, source path), sorted.
    async fn indexed(&mut self) -> Vec<(String, String)> {
        let request = proto::ListEntriesRequest {
            project: "lore".into(),
            page: Some(proto::PageRequest { page_size: 100, ..Default::default() }),
            ..Default::default()
        };
        let response = match self.client.list_entries(request).await {
            Ok(response) => response.into_inner(),
            Err(status) if status.code() == tonic::Code::NotFound => return Vec::new(),
            Err(status) => panic!("{status:?}"),
        };
        let mut entries: Vec<(String, String)> = response
            .entries
            .into_iter()
            .map(|entry| {
                let path = match entry.details {
                    Some(proto::entry::Details::Learning(learning)) => learning.source_path,
                    _ => String::new(),
                };
                (entry.title, path)
            })
            .collect();
        entries.sort();
        entries
    }

    /// Waits until the active entries are exactly `expected`.
    async fn expect(&mut self, expected: &[(&str, &str)]) {
        let expected: Vec<(String, String)> =
            expected.iter().map(|(title, path)| ((*title).to_owned(), (*path).to_owned())).collect();
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        loop {
            let indexed = self.indexed().await;
            if indexed == expected {
                return;
            }
            assert!(tokio::time::Instant::now() < deadline, "index is {indexed:?}, expected {expected:?}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    async fn entry_id(&mut self, key: &str) -> String {
        let request = proto::GetEntryRequest { project: "lore".into(), key: key.into(), ..Default::default() };
        self.client.get_entry(request).await.unwrap().into_inner().entry.unwrap().entry_id
    }
}

fn with_id(id: &str, title: &str) -> String {
    format!("---\nid: {id}\n---\n# {title}\n\nBody of {title}.\n")
}

/// The standing instructions Lore writes into an AGENTS.md of a watched
/// folder are not indexed back; a person's edit of the same file is.
#[tokio::test]
async fn lore_s_own_writes_to_a_watched_file_trigger_nothing() {
    let mut fixture = Fixture::new().await;
    fixture.write("AGENTS.md", with_id("agents", "Agents"));
    fixture.start().await;
    fixture.expect(&[("Agents", "AGENTS.md")]).await;
    let ours = with_id("agents", "Agents as Lore wrote them");
    fixture.knowledge.as_ref().unwrap().own_writes().record(&fixture.path("AGENTS.md"), ours.as_bytes());
    fixture.write("AGENTS.md", &ours);
    // Indexed once the watcher has acted on everything written before it.
    fixture.write("later.md", with_id("later", "Later"));
    fixture.expect(&[("Agents", "AGENTS.md"), ("Later", "later.md")]).await;
    fixture.write("AGENTS.md", with_id("agents", "Agents as a person wrote them"));
    fixture.expect(&[("Agents as a person wrote them", "AGENTS.md"), ("Later", "later.md")]).await;
}

#[tokio::test]
async fn the_index_follows_writes_edits_renames_and_deletions_in_the_folder() {
    let mut fixture = Fixture::new().await;
    fixture.start().await;

    fixture.write("db/rls.md", with_id("LRN-1", "RLS blocks inserts"));
    fixture.write("ci/flaky.md", "# Flaky runners\n\nRetry.\n");
    fixture.expect(&[("Flaky runners", "ci/flaky.md"), ("RLS blocks inserts", "db/rls.md")]).await;
    let rls = fixture.entry_id("LRN-1").await;

    // An edit re-indexes the same entry.
    fixture.write("db/rls.md", with_id("LRN-1", "RLS blocks INSERT without WITH CHECK"));
    fixture.expect(&[("Flaky runners", "ci/flaky.md"), ("RLS blocks INSERT without WITH CHECK", "db/rls.md")]).await;
    assert_eq!(fixture.entry_id("LRN-1").await, rls);

    // A rename keeps the entry when the front matter carries an id.
    std::fs::create_dir_all(fixture.path("postgres")).unwrap();
    std::fs::rename(fixture.path("db/rls.md"), fixture.path("postgres/rls.md")).unwrap();
    fixture
        .expect(&[("Flaky runners", "ci/flaky.md"), ("RLS blocks INSERT without WITH CHECK", "postgres/rls.md")])
        .await;
    assert_eq!(fixture.entry_id("LRN-1").await, rls, "renamed, same identity");

    // Without an id, a rename is a new document at the new path.
    std::fs::rename(fixture.path("ci/flaky.md"), fixture.path("ci/flaky-runners.md")).unwrap();
    fixture
        .expect(&[
            ("Flaky runners", "ci/flaky-runners.md"),
            ("RLS blocks INSERT without WITH CHECK", "postgres/rls.md"),
        ])
        .await;

    // A deleted file leaves the index; a folder moved out of the watched
    // one takes its documents with it.
    std::fs::remove_file(fixture.path("ci/flaky-runners.md")).unwrap();
    fixture.expect(&[("RLS blocks INSERT without WITH CHECK", "postgres/rls.md")]).await;
    let outside = tempfile::tempdir().unwrap();
    std::fs::rename(fixture.path("postgres"), outside.path().join("postgres")).unwrap();
    fixture.expect(&[]).await;

    // And moved back in, it returns as the same entry.
    std::fs::rename(outside.path().join("postgres"), fixture.path("postgres")).unwrap();
    fixture.expect(&[("RLS blocks INSERT without WITH CHECK", "postgres/rls.md")]).await;
    assert_eq!(fixture.entry_id("LRN-1").await, rls);
}

#[tokio::test]
async fn files_that_cannot_be_indexed_are_reported_and_skipped_and_the_last_good_version_stays() {
    let mut fixture = Fixture::new().await;
    fixture.start().await;
    fixture.write("good.md", "# Good\n");
    fixture.expect(&[("Good", "good.md")]).await;

    fixture.write("good.md", "---\ntitle: [broken\n---\n# Good\n");
    fixture.write("latin1.md", b"# caf\xe9\n");
    fixture.write("binary.md", b"# a\0\x01\x02");
    fixture.write("huge.md", "x".repeat(2 * 1024 * 1024));
    fixture.write(".hidden.md", "# Hidden\n");
    fixture.write(".git/notes.md", "# In a hidden folder\n");
    fixture.write("notes.txt", "# Not markdown\n");
    fixture.write("after.md", "# After\n");
    // The watcher went on past every bad file.
    fixture.expect(&[("After", "after.md"), ("Good", "good.md")]).await;
    let stats = Arc::clone(&fixture.stats);
    wait_for("four problem files", WAIT, || async { stats.problems().len() >= 4 }).await;
    let problems: Vec<(String, String)> = fixture
        .stats
        .problems()
        .into_iter()
        .map(|(path, problem)| (path.file_name().unwrap().to_string_lossy().into_owned(), problem))
        .collect();
    let files: Vec<&str> = problems.iter().map(|(file, _)| file.as_str()).collect();
    assert_eq!(files, ["binary.md", "good.md", "huge.md", "latin1.md"], "{problems:?}");
    assert!(problems[0].1.contains("binary file"), "{problems:?}");
    assert!(problems[1].1.contains("front matter"), "{problems:?}");
    assert!(problems[2].1.contains("over the limit"), "{problems:?}");
    assert!(problems[3].1.contains("not UTF-8"), "{problems:?}");

    // Mended or deleted, a file is no longer a problem.
    fixture.write("good.md", "# Good again\n");
    std::fs::remove_file(fixture.path("binary.md")).unwrap();
    fixture.expect(&[("After", "after.md"), ("Good again", "good.md")]).await;
    let stats = Arc::clone(&fixture.stats);
    wait_for("two problems left", WAIT, || async { stats.problems().len() == 2 }).await;
}

#[tokio::test]
async fn changes_made_while_the_watcher_was_down_are_reconciled_at_start() {
    let mut fixture = Fixture::new().await;
    fixture.start().await;
    fixture.write("kept.md", "# Kept\n");
    fixture.write("edited.md", with_id("E-1", "Before"));
    fixture.write("deleted.md", "# Deleted\n");
    fixture.expect(&[("Before", "edited.md"), ("Deleted", "deleted.md"), ("Kept", "kept.md")]).await;
    fixture.stop();

    fixture.write("edited.md", with_id("E-1", "After"));
    std::fs::remove_file(fixture.path("deleted.md")).unwrap();
    fixture.write("new/added.md", "# Added\n");
    fixture.start().await;
    fixture.expect(&[("Added", "new/added.md"), ("After", "edited.md"), ("Kept", "kept.md")]).await;
    // The first reconciliation re-read every file but changed only these.
    assert_eq!(fixture.stats.indexed.load(Ordering::Relaxed), 2, "edited and added");
    assert_eq!(fixture.stats.removed.load(Ordering::Relaxed), 1, "deleted");
    assert!(fixture.stats.unchanged.load(Ordering::Relaxed) >= 1, "kept");
}

#[tokio::test]
async fn documents_of_another_folder_or_of_the_api_are_not_touched_by_reconciliation() {
    let mut fixture = Fixture::new().await;
    let request = proto::IndexDocumentRequest {
        project: "lore".into(),
        path: "api/doc.md".into(),
        content: "# From the API\n".into(),
    };
    fixture.client.index_document(request).await.unwrap();
    fixture.start().await;
    fixture.write("file.md", "# From a file\n");
    fixture.expect(&[("From a file", "file.md"), ("From the API", "api/doc.md")]).await;
}

/// The watcher reads a file, then stores it under the documents lock. A
/// version read before a publish rewrote the file must not be stored after
/// it: the file is read again under the lock, and a stale read stores
/// nothing (the watcher tries again and reads the new version).
#[tokio::test]
async fn a_version_read_before_a_newer_write_is_not_stored_over_it() {
    let fixture = Fixture::new().await;
    let knowledge = KnowledgeBase::new(fixture.server.pool().clone(), None, Default::default());
    let source = lore_types::knowledge::DocumentSource {
        project: "lore".into(),
        path: "pin.md".into(),
        root: Some("docs".into()),
    };
    let store = |text: &'static str, read: &'static str| {
        let (knowledge, source, path) = (knowledge.clone(), source.clone(), fixture.path("pin.md"));
        async move {
            let parsed = lore_domain::knowledge::document::parse("pin.md", text).unwrap();
            knowledge
                .store_watched_document(&lore_types::scope::ProjectScope::All, &source, parsed, &path, read.as_bytes())
                .await
                .unwrap()
        }
    };
    const OLD: &str = "---\nid: PIN-1\nstatus: active\n---\n# Pin the ORM\n\nPin it to v1.\n";
    const NEW: &str = "---\nid: PIN-1\nstatus: obsolete\n---\n# Pin the ORM\n\nObsolete: v2 fixed it.\n";
    fixture.write("pin.md", OLD);
    let (first, changed) = store(OLD, OLD).await.expect("the file holds what was read");
    assert!(changed);
    fixture.write("pin.md", NEW);
    let (second, _) = store(NEW, NEW).await.unwrap();
    assert_eq!(second.entry_id, first.entry_id);
    // A version read before the rewrite arrives late: nothing is stored.
    assert!(store(OLD, OLD).await.is_none());
    let mut client = fixture.client.clone();
    let request = proto::GetEntryRequest { entry_id: first.entry_id.to_string(), ..Default::default() };
    let entry = client.get_entry(request).await.unwrap().into_inner().entry.unwrap();
    assert_eq!(entry.status, proto::EntryStatus::Obsolete as i32, "the newer version stays");
}
