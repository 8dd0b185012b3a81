//! Watched folders with the real binaries: two replicas over one database
//! and one folder; exactly one indexes, and the other takes over when the
//! first is killed.

use std::path::Path;
use std::time::Duration;

use lore_e2e::{ServerOptions, ServerProcess, TestDatabase};
use nix::sys::signal::Signal;

fn replica(database: &TestDatabase, folder: &Path) -> ServerOptions {
    let folders = format!(r#"[{{path="{}", project="lore"}}]"#, folder.display());
    ServerOptions::with_database(&database.url)
        .env("LORE_KNOWLEDGE__WATCH__FOLDERS", &folders)
        .env("LORE_KNOWLEDGE__WATCH__DEBOUNCE_MS", "50")
}

fn log_lines_saying(server: &ServerProcess, message: &str) -> usize {
    server
        .log()
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|line| line["message"] == message)
        .count()
}

async fn wait_for_log(server: &ServerProcess, message: &str) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    while log_lines_saying(server, message) == 0 {
        assert!(tokio::time::Instant::now() < deadline, "never logged {message:?}: {}", server.log());
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn wait_until_indexed(database: &TestDatabase, path: &str) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        let indexed: bool = sqlx::query_scalar(
            "SELECT EXISTS (SELECT 1 FROM knowledge_entries WHERE source_path = $1 AND status = 'active')",
        )
        .bind(path)
        .fetch_one(&database.pool)
        .await
        .unwrap();
        if indexed {
            return;
        }
        assert!(tokio::time::Instant::now() < deadline, "{path} was never indexed");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

const LEADING: &str = "leading: this replica runs the background jobs";
const INDEXED: &str = "document indexed";

#[tokio::test]
async fn two_replicas_watch_one_folder_one_indexes_and_the_other_takes_over_when_it_dies() {
    let database = TestDatabase::new().await.unwrap();
    let folder = tempfile::tempdir().unwrap();
    let mut first = ServerProcess::start(replica(&database, folder.path())).await.unwrap();
    wait_for_log(&first, LEADING).await;
    let second = ServerProcess::start(replica(&database, folder.path())).await.unwrap();

    std::fs::write(folder.path().join("first.md"), "# Written while the first replica leads\n").unwrap();
    wait_until_indexed(&database, "first.md").await;
    wait_for_log(&first, INDEXED).await;
    // Give the second replica every chance to (wrongly) index it too.
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(log_lines_saying(&first, INDEXED), 1, "{}", first.log());
    assert_eq!(log_lines_saying(&second, LEADING), 0, "{}", second.log());
    assert_eq!(log_lines_saying(&second, INDEXED), 0, "{}", second.log());

    first.signal(Signal::SIGKILL);
    first.wait(Duration::from_secs(10)).await.unwrap();
    wait_for_log(&second, LEADING).await;
    std::fs::write(folder.path().join("second.md"), "# Written after the first replica died\n").unwrap();
    wait_until_indexed(&database, "second.md").await;
    // The row commits before the entry is embedded and the line logged.
    wait_for_log(&second, INDEXED).await;
    let entries: i64 = sqlx::query_scalar("SELECT count(*) FROM knowledge_entries WHERE status = 'active'")
        .fetch_one(&database.pool)
        .await
        .unwrap();
    assert_eq!(entries, 2, "each file is one entry");
}
