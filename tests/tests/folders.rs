//! `lore-sidecar --index DIR`: a markdown folder on the agent's machine kept
//! indexed on a server that is not there, as a fleet runs it. Changes made
//! while the server is down are spooled and arrive once it is up; a file
//! removed is removed; a restarted sidecar sends only what changed while it
//! was stopped; a folder that is not there yet is indexed once it is;
//! what the server cannot take is left out and said.
//! `lore index push` does the same from CI.

use std::collections::BTreeMap;
use std::path::Path;

use lore_e2e::{ServerOptions, ServerProcess, TestDatabase, free_port, lore_cli};
use lore_proto::v1 as proto;
use lore_proto::v1::knowledge_service_client::KnowledgeServiceClient;

/// The project's indexed documents: source path to body.
async fn documents(server: &ServerProcess, project: &str) -> BTreeMap<String, String> {
    let mut knowledge = KnowledgeServiceClient::new(server.channel().await);
    let request = proto::ListEntriesRequest {
        project: project.into(),
        kinds: vec![proto::EntryKind::Learning.into()],
        page: Some(proto::PageRequest { page_size: 500, cursor: String::new() }),
        ..Default::default()
    };
    let entries = knowledge.list_entries(request).await.unwrap().into_inner().entries;
    entries
        .into_iter()
        .filter_map(|entry| match entry.details {
            Some(proto::entry::Details::Learning(learning)) => Some((learning.source_path, entry.body)),
            _ => None,
        })
        .collect()
}

/// Waits until the project's documents are `expected` (paths and a word of
/// each body).
async fn until_documents(server: &ServerProcess, project: &str, expected: &[(&str, &str)]) {
    let reached = lore_e2e::eventually(|| async {
        let found = documents(server, project).await;
        let matches = found.len() == expected.len()
            && expected.iter().all(|(path, word)| found.get(*path).is_some_and(|body| body.contains(word)));
        matches.then_some(())
    })
    .await;
    assert!(reached.is_some(), "expected {expected:?}, the server has {:?}", documents(server, project).await);
}

/// Waits until the sidecar has logged `count` lines with `message`.
async fn until_logged(sidecar: &ServerProcess, message: &str, count: usize) {
    let logged =
        lore_e2e::eventually(|| async { (sidecar.log().matches(message).count() >= count).then_some(()) }).await;
    assert!(logged.is_some(), "{count} × {message:?} never logged:\n{}", sidecar.log());
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

async fn sidecar(server: &str, spool: &Path, folders: &[&Path], listen: &str) -> ServerProcess {
    let folders: Vec<&str> = folders.iter().map(|folder| folder.to_str().unwrap()).collect();
    let folders = folders.join(",");
    let args = ["--index", &folders, "--index-project", "shop", "--index-debounce-ms", "50"];
    ServerProcess::start_sidecar_on(listen, server, spool, &args).await.unwrap()
}

#[tokio::test]
async fn a_watched_folder_reaches_a_server_that_was_away_once_and_in_full() {
    let database = TestDatabase::new().await.unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let (docs, spool) = (workspace.path().join("docs"), workspace.path().join("spool"));
    write(&docs.join("deploy.md"), "# Deploy\n\nRoll out with helm upgrade.\n");

    // The server is not there yet: the sidecar spools.
    let port = free_port();
    let server_url = format!("http://127.0.0.1:{port}");
    let listen = format!("127.0.0.1:{}", free_port());
    // A second folder is not there yet (a repository not cloned yet).
    let later = workspace.path().join("later");
    let mut watcher = sidecar(&server_url, &spool, &[&docs, &later], &listen).await;
    until_logged(&watcher, "document spooled for indexing", 1).await;
    write(&docs.join("ops/runbook.md"), "# Runbook\n\nPage the on-call zebrafish.\n");
    write(&docs.join("deploy.md"), "# Deploy\n\nRoll out with helm upgrade --atomic.\n");
    write(&docs.join("notes.txt"), "not markdown");
    write(&docs.join(".drafts/secret.md"), "hidden");
    std::fs::write(docs.join("binary.md"), [0xff, 0xfe, 0x00]).unwrap();
    // Written aside and renamed in, as editors save: never seen half written.
    write(&docs.join(".huge.md.swp"), &"x".repeat(1024 * 1024 + 1));
    std::fs::rename(docs.join(".huge.md.swp"), docs.join("huge.md")).unwrap();
    until_logged(&watcher, "document spooled for indexing", 3).await;
    until_logged(&watcher, "not indexed: not UTF-8 text", 1).await;
    until_logged(&watcher, "over the server's 1 MiB", 1).await;
    // `lore sidecar status` asks the sidecar alone (the server is away).
    let (ok, status, stderr) =
        lore_cli(&watcher, None, &["sidecar", "status", "--sidecar", &watcher.endpoint(), "--json"]).await;
    assert!(ok, "{stderr}");
    let status: serde_json::Value = serde_json::from_str(&status).unwrap();
    assert_eq!(
        (status["documents_indexed"].as_u64(), status["documents_skipped"].as_u64()),
        (Some(3), Some(2)),
        "{status}"
    );

    let options = ServerOptions::with_database(&database.url).env("LORE_LISTEN_ADDR", &format!("127.0.0.1:{port}"));
    let server = ServerProcess::start(options).await.unwrap();
    until_documents(&server, "shop", &[("deploy.md", "--atomic"), ("ops/runbook.md", "zebrafish")]).await;

    // A file removed is removed; the folder that was missing is indexed
    // once it is there.
    std::fs::remove_file(docs.join("ops/runbook.md")).unwrap();
    write(&later.join("cloned.md"), "# Cloned\n\nArrived with the checkout of the narwhal.\n");
    until_documents(&server, "shop", &[("deploy.md", "--atomic"), ("cloned.md", "narwhal")]).await;
    assert!(watcher.log().contains("looking for it every 5 s"), "{}", watcher.log());

    // Stopped, a change, started again: only the change is sent.
    watcher.stop().await;
    write(&docs.join("deploy.md"), "# Deploy\n\nRoll out with helm upgrade --atomic --wait.\n");
    let watcher = sidecar(&server.endpoint(), &spool, &[&docs], &listen).await;
    until_documents(&server, "shop", &[("deploy.md", "--wait"), ("cloned.md", "narwhal")]).await;
    until_logged(&watcher, "document spooled for indexing", 1).await;
    assert_eq!(watcher.log().matches("document spooled").count(), 1, "only the change:\n{}", watcher.log());

    // From CI: the folder pushed under a prefix is mirrored there, and
    // nothing outside the prefix is touched.
    let ci = workspace.path().join("ci-docs");
    write(&ci.join("adr/0001.md"), "# ADR 1\n\nUse PostgreSQL.\n");
    write(&ci.join("adr/0002.md"), "# ADR 2\n\nUse pgvector.\n");
    let push = |extra: &'static [&'static str]| {
        let ci = ci.to_str().unwrap().to_owned();
        let server = &server;
        async move {
            let mut args = vec!["index", "push", ci.as_str(), "--project", "shop", "--no-wait"];
            args.extend_from_slice(extra);
            lore_cli(server, None, &args).await
        }
    };
    let (ok, _, stderr) = push(&[]).await;
    assert!(!ok && stderr.contains("needs --prefix"), "{stderr}");
    let (ok, stdout, stderr) = push(&["--prefix", "decisions"]).await;
    assert!(ok, "{stdout}{stderr}");
    std::fs::remove_file(ci.join("adr/0001.md")).unwrap();
    let (ok, stdout, stderr) = push(&["--prefix", "decisions"]).await;
    assert!(ok && stdout.contains("removed under decisions/: 1 "), "{stdout}{stderr}");
    until_documents(
        &server,
        "shop",
        &[("deploy.md", "--wait"), ("cloned.md", "narwhal"), ("decisions/adr/0002.md", "pgvector")],
    )
    .await;
    drop(watcher);
}
