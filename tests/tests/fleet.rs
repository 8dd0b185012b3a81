//! A fleet as it runs: the server in its image (unpacked, under unshare +
//! chroot, its disk its own) and an agent's machine apart from it, here a
//! repository in a temporary folder with the real `lore-sidecar` and `lore`
//! beside it. Nothing reaches the agent through the server's disk:
//! - a promotion approved on the server lands in the repository's
//!   CLAUDE.md through the SessionStart hook, after what a person wrote;
//! - a markdown file saved in a folder the sidecar watches becomes
//!   searchable on the server;
//! - the daily report the server's leader stored is read with
//!   `lore report`.
//!
//! How a pattern earns its promotion (warnings shown and held out, the
//! significance test) is server/tests/api/task_results.rs's; here the
//! promotion is put up for review directly, and approved through the API.

use std::path::Path;
use std::process::Stdio;

use lore_e2e::image::UnpackedImage;
use lore_e2e::{ServerProcess, TestDatabase, free_port};
use lore_proto::v1 as proto;
use lore_proto::v1::action_service_client::ActionServiceClient;
use lore_proto::v1::knowledge_service_client::KnowledgeServiceClient;
use lore_proto::v1::qa_learning_service_client::QaLearningServiceClient;
use uuid::Uuid;

const PROJECT: &str = "fleet";
const THEIRS: &str = "# Working here\n\nRun `make test` before you push.\n";

/// Runs `lore` as the agent's machine does: in the repository, against the
/// sidecar first, with its own state.
async fn lore(
    repository: &Path,
    state: &Path,
    sidecar: &str,
    server: &str,
    args: &[&str],
    stdin: &[u8],
) -> (bool, String, String) {
    let mut command = tokio::process::Command::new(lore_e2e::workspace_binary("lore"));
    for (key, _) in std::env::vars() {
        if key.starts_with("LORE_") || key.starts_with("CLAUDE") {
            command.env_remove(key);
        }
    }
    let mut child = command
        .current_dir(repository)
        .env("LORE_STATE_DIR", state)
        .env("LORE_SIDECAR", sidecar)
        .env("LORE_SERVER", server)
        .env("LORE_HOOK_BUDGET_MS", "8000")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("lore runs");
    let mut input = child.stdin.take().unwrap();
    tokio::io::AsyncWriteExt::write_all(&mut input, stdin).await.unwrap_or_default();
    drop(input);
    let output = child.wait_with_output().await.unwrap();
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[tokio::test]
async fn promotions_documents_and_reports_reach_an_agent_machine_apart_from_the_server() {
    assert!(nix::unistd::geteuid().is_root(), "the server runs chrooted in its unpacked image, which needs root");
    let image = UnpackedImage::unpack("lore-server").await.unwrap();
    let database = TestDatabase::empty().await.unwrap();
    let url = database.url.as_str();
    image.migrate(url).await.unwrap();
    let listen = format!("127.0.0.1:{}", free_port());
    let server = image.serve(url, &listen, &[("LORE_REPORTS__INTERVAL_SECS", "1")]).await.unwrap();

    // The agent's machine: a repository with its own CLAUDE.md and notes,
    // and a sidecar watching the notes.
    let machine = tempfile::tempdir().unwrap();
    let repository = machine.path().join("shop");
    std::fs::create_dir_all(repository.join("docs")).unwrap();
    let git = std::process::Command::new("git").args(["init", "-q"]).current_dir(&repository).status().unwrap();
    assert!(git.success());
    std::fs::write(repository.join("CLAUDE.md"), THEIRS).unwrap();
    let state = machine.path().join("state");
    let docs = repository.join("docs");
    let sidecar = ServerProcess::start_sidecar(
        &server.endpoint(),
        &machine.path().join("spool"),
        &["--index", docs.to_str().unwrap(), "--index-project", PROJECT, "--index-debounce-ms", "50"],
    )
    .await
    .unwrap();
    let run = |args: &'static [&'static str], stdin: Vec<u8>| {
        let (repository, state, sidecar, server) =
            (repository.clone(), state.clone(), sidecar.endpoint(), server.endpoint());
        async move { lore(&repository, &state, &sidecar, &server, args, &stdin).await }
    };

    // Yesterday's work, shipped by the sidecar: the leader stores its report.
    let mut actions = ActionServiceClient::new(sidecar.channel().await);
    let session = lore_e2e::start_session(&mut actions, PROJECT, "agent-1").await;
    let yesterday = (chrono::Utc::now() - chrono::Duration::days(1)).date_naive();
    let noon = yesterday.and_hms_opt(12, 0, 0).unwrap().and_utc();
    let deploy = proto::Action {
        action_id: Uuid::now_v7().to_string(),
        session_id: session.session_id.clone(),
        project: PROJECT.into(),
        action_type: "deploy".into(),
        outcome: proto::Outcome::Success.into(),
        occurred_at: Some(prost_types::Timestamp { seconds: noon.timestamp(), nanos: 0 }),
        ..Default::default()
    };
    actions.log_action(proto::LogActionRequest { action: Some(deploy) }).await.unwrap();

    // A failure becomes a pattern; its promotion is approved on the server.
    let mut qa = QaLearningServiceClient::new(server.channel().await);
    let captured = qa
        .capture_failure(proto::CaptureFailureRequest {
            project: PROJECT.into(),
            task: Some(proto::Task { task_id: "T-1".into(), ..Default::default() }),
            error_messages: vec!["migration 42 failed: relation \"orders\" already exists".into()],
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let pattern_id: Uuid = captured.links[0].pattern_id.parse().unwrap();
    let promotion_id = Uuid::now_v7();
    sqlx::query(
        "INSERT INTO qa_promotions (promotion_id, project, pattern_id, status, markdown)
         VALUES ($1, $2, $3, 'pending', '# Check for the table before you create it')",
    )
    .bind(promotion_id)
    .bind(PROJECT)
    .bind(pattern_id)
    .execute(&database.pool)
    .await
    .unwrap();
    let approved = qa
        .approve_promotion(proto::ReviewPromotionRequest {
            promotion_id: promotion_id.to_string(),
            actor: "reviewer".into(),
            note: String::new(),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(approved.status, proto::PromotionStatus::Published as i32);
    let key = format!("QA-{}", &pattern_id.simple().to_string()[20..]);

    // The agent starts a session: the hook brings CLAUDE.md to the list.
    let start = serde_json::json!({
        "session_id": "claude-session-1",
        "cwd": repository.to_str().unwrap(),
        "hook_event_name": "SessionStart",
        "source": "startup",
    })
    .to_string()
    .into_bytes();
    let hook: &[&str] = &["hook", "session-start", "--agent", "claude-code", "--project", PROJECT];
    let (ok, _, stderr) = run(hook, start.clone()).await;
    assert!(ok, "{stderr}");
    let hooks_log = std::fs::read_to_string(state.join("hooks.log")).unwrap_or_default();
    assert!(hooks_log.contains("CLAUDE.md: 1 entry written"), "{hooks_log}");
    let written = std::fs::read_to_string(repository.join("CLAUDE.md")).unwrap();
    assert!(written.starts_with(THEIRS), "what a person wrote stays first:\n{written}");
    assert!(written.contains(&format!("<!-- lore:entry {key} ")), "the promotion's entry:\n{written}");
    assert!(written.contains("From Lore QA pattern"), "{written}");
    let (ok, _, _) = run(hook, start).await;
    assert!(ok);
    assert_eq!(
        std::fs::read_to_string(repository.join("CLAUDE.md")).unwrap(),
        written,
        "a second start changes nothing"
    );
    let (ok, stdout, stderr) = run(&["instructions", "diff", "--project", PROJECT], Vec::new()).await;
    assert!(ok && stdout.is_empty() && stderr.contains("is up to date"), "{stdout}{stderr}");

    // Rolled back on the server: `lore instructions diff` shows the entry
    // going as a patch, and `sync` takes it out, leaving theirs.
    qa.rollback_promotion(proto::ReviewPromotionRequest {
        promotion_id: promotion_id.to_string(),
        actor: "reviewer".into(),
        note: "the migration tool checks this now".into(),
    })
    .await
    .unwrap();
    let (ok, patch, stderr) = run(&["instructions", "diff", "--project", PROJECT], Vec::new()).await;
    assert!(ok && patch.starts_with("--- a/CLAUDE.md\n+++ b/CLAUDE.md\n"), "{patch}{stderr}");
    assert!(patch.lines().any(|line| line.starts_with('-') && line.contains(&key)), "{patch}");
    let (ok, stdout, stderr) = run(&["instructions", "sync", "--project", PROJECT], Vec::new()).await;
    assert!(ok && stdout.contains("1 entry removed"), "{stdout}{stderr}");
    assert!(!std::fs::read_to_string(repository.join("CLAUDE.md")).unwrap().contains(&key));

    // A note saved on the agent's machine becomes searchable on the server.
    std::fs::write(docs.join("orders.md"), "# Orders table\n\nThe orders table is sharded by tenant zanzibar.\n")
        .unwrap();
    let mut knowledge = KnowledgeServiceClient::new(server.channel().await);
    let found = lore_e2e::eventually(|| {
        let mut knowledge = knowledge.clone();
        async move {
            let query =
                proto::SearchQuery { text: "sharded by tenant zanzibar".into(), limit: 5, ..Default::default() };
            let request = proto::SearchRequest { project: PROJECT.into(), query: Some(query), ..Default::default() };
            let hits = knowledge.search(request).await.ok()?.into_inner().hits;
            hits.into_iter().find(|hit| hit.entry.as_ref().is_some_and(|entry| entry.title == "Orders table"))
        }
    })
    .await;
    assert!(found.is_some(), "the saved note never became searchable:\n{}", sidecar.log());
    knowledge.get_index_status(proto::GetIndexStatusRequest { project: PROJECT.into() }).await.unwrap();

    // The leader stored yesterday's report; `lore report` reads it.
    let day = yesterday.format("%Y-%m-%d").to_string();
    let report = lore_e2e::eventually(|| async {
        let (ok, stdout, stderr) = run(&["report", "--project", PROJECT, "--period", "daily"], Vec::new()).await;
        (ok && stderr.contains("stored by the server")).then_some(stdout)
    })
    .await
    .expect("the leader stores yesterday's report");
    assert!(report.starts_with(&format!("# Daily report of {PROJECT}: {day}")), "{report}");
    assert!(report.contains("- **Deployments:** 1"), "{report}");
    let (ok, listed, _) = run(&["report", "--project", PROJECT, "--period", "daily", "--list"], Vec::new()).await;
    assert!(ok && listed.starts_with(&format!("Daily report of {PROJECT}: {day}  (stored ")), "{listed}");
}
