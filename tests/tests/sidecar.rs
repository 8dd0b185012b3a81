//! lore-sidecar between an agent and the server, with the server going away.

use std::time::Duration;

use lore_e2e::{ServerOptions, ServerProcess, TestDatabase, default_cache_dir, free_port};
use lore_proto::v1 as proto;
use lore_proto::v1::action_service_client::ActionServiceClient;
use nix::sys::signal::Signal;

pub(crate) fn action(session: &proto::Session, index: usize) -> proto::Action {
    proto::Action {
        project: session.project.clone(),
        session_id: session.session_id.clone(),
        action_type: "tool_call".into(),
        outcome: proto::Outcome::Success as i32,
        context: Some(lore_proto::json::to_struct(
            &serde_json::json!({"step": index, "token": "sk_live_ReTllpYQYfIZu2Jnf2lAPFjD"}),
        )),
        ..Default::default()
    }
}

/// The session's stored action ids in chain order, once there are at least
/// `expected` of them (or after a minute, whatever is there).
pub(crate) async fn wait_until_stored(database: &TestDatabase, session_id: &str, expected: usize) -> Vec<String> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        let stored = stored_in_order(database, session_id).await;
        if stored.len() >= expected || tokio::time::Instant::now() > deadline {
            return stored;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

async fn stored_in_order(database: &TestDatabase, session_id: &str) -> Vec<String> {
    sqlx::query_scalar("SELECT action_id::text FROM actions WHERE session_id = $1::uuid ORDER BY chain_seq")
        .bind(session_id)
        .fetch_all(&database.pool)
        .await
        .unwrap()
}

#[tokio::test]
async fn every_action_acked_during_a_server_outage_arrives_once_and_in_order() {
    let database = TestDatabase::new().await.unwrap();
    let port = free_port();
    let server_options =
        || ServerOptions::with_database(&database.url).env("LORE_LISTEN_ADDR", &format!("127.0.0.1:{port}"));
    let mut server = ServerProcess::start(server_options()).await.unwrap();
    let spool = tempfile::tempdir_in(default_cache_dir()).unwrap();
    let sidecar =
        ServerProcess::start_sidecar(&format!("http://127.0.0.1:{port}"), spool.path(), &["--batch-size", "50"])
            .await
            .unwrap();
    let mut agent = ActionServiceClient::new(sidecar.channel().await);
    let session = lore_e2e::start_session(&mut agent, "outage", "agent-1").await;

    let mut acked = Vec::new();
    for index in 0..900 {
        if index == 300 {
            server.signal(Signal::SIGKILL);
            server.wait(Duration::from_secs(10)).await.unwrap();
        }
        if index == 600 {
            let mut status_client =
                lore_proto::v1::sidecar_service_client::SidecarServiceClient::new(sidecar.channel().await);
            let status = status_client.status(proto::SidecarStatusRequest {}).await.unwrap().into_inner();
            assert!(!status.connected, "{status:?}");
            assert!(status.spooled_records >= 250, "the outage's actions wait in the spool: {status:?}");
            assert!(status.oldest_unacked_age_seconds > 0.0 && status.spooled_bytes > 0, "{status:?}");
            server = ServerProcess::start(server_options()).await.unwrap();
        }
        let response =
            agent.log_action(proto::LogActionRequest { action: Some(action(&session, index)) }).await.unwrap();
        let ack = response.into_inner().ack.unwrap();
        acked.push(ack.id);
    }

    let stored = wait_until_stored(&database, &session.session_id, acked.len()).await;
    if stored.len() != acked.len() {
        let missing: Vec<(usize, &String)> = acked.iter().enumerate().filter(|(_, id)| !stored.contains(id)).collect();
        let anywhere: i64 = sqlx::query_scalar("SELECT count(*) FROM actions WHERE action_id::text = ANY($1)")
            .bind(missing.iter().map(|(_, id)| id.to_string()).collect::<Vec<_>>())
            .fetch_one(&database.pool)
            .await
            .unwrap();
        let rejects = std::fs::read_to_string(spool.path().join("rejects.jsonl")).unwrap_or_default();
        let log = sidecar.log();
        let tail: Vec<&str> = log.lines().rev().take(40).collect();
        panic!(
            "{} of {} acknowledged actions arrived; missing {missing:?} (in the table at all: {anywhere}); rejects: {rejects}; sidecar log tail: {tail:#?}",
            stored.len(),
            acked.len()
        );
    }
    assert_eq!(stored, acked, "in the order the agent logged them");
    let output = tokio::process::Command::new(lore_e2e::workspace_binary("lore"))
        .args(["sidecar", "status", "--json", "--sidecar", &sidecar.endpoint()])
        .output()
        .await
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let status: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(status["connected"], true, "{status}");
    assert_eq!(status["spooled_records"], 0, "{status}");
    assert!(status["shipped"].as_u64().unwrap() + status["duplicates"].as_u64().unwrap() >= 900, "{status}");
    let secrets: i64 = sqlx::query_scalar("SELECT count(*) FROM actions WHERE context::text LIKE '%sk_live_%'")
        .fetch_one(&database.pool)
        .await
        .unwrap();
    assert_eq!(secrets, 0, "redacted before shipping");
    let mut direct = ActionServiceClient::new(server.channel().await);
    let chain = direct
        .verify_chain(proto::VerifyChainRequest { session_id: session.session_id.clone() })
        .await
        .unwrap()
        .into_inner();
    assert!(chain.intact && chain.checked == 900, "{chain:?}");
}

/// Sends one batch on its own Ingest stream and waits for its ack.
async fn ingest_once(address: &str, batch: &proto::IngestRequest) -> Result<proto::IngestAck, String> {
    let channel = tonic::transport::Endpoint::from_shared(format!("http://{address}"))
        .unwrap()
        .connect_timeout(Duration::from_secs(2))
        .connect()
        .await
        .map_err(|error| error.to_string())?;
    let mut client = ActionServiceClient::new(channel);
    let mut acks =
        client.ingest(tokio_stream::iter([batch.clone()])).await.map_err(|status| status.to_string())?.into_inner();
    acks.message().await.map_err(|status| status.to_string())?.ok_or_else(|| "no ack".to_owned())
}

/// Which process the chaos kills.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Victim {
    Sidecar,
    Server,
}

/// An agent streams `batches` x `batch_size` actions through the sidecar,
/// resending any batch it got no ack for, while `victim` is killed with
/// SIGKILL `kills` times at random moments and restarted on the same
/// address. Afterwards the server must hold exactly the acknowledged
/// actions, each once.
async fn stream_through_kills(victim: Victim, batches: usize, batch_size: usize, kills: usize) {
    let database = TestDatabase::new().await.unwrap();
    let spool = tempfile::tempdir_in(default_cache_dir()).unwrap();
    let server_listen = format!("127.0.0.1:{}", free_port());
    let sidecar_listen = format!("127.0.0.1:{}", free_port());
    let start_server = {
        let (url, listen) = (database.url.clone(), server_listen.clone());
        move || {
            let options = ServerOptions::with_database(&url).env("LORE_LISTEN_ADDR", &listen);
            async move { ServerProcess::start(options).await.unwrap() }
        }
    };
    let start_sidecar = {
        let (listen, endpoint, spool_dir) =
            (sidecar_listen.clone(), format!("http://{server_listen}"), spool.path().to_owned());
        move || {
            let (listen, endpoint, spool_dir) = (listen.clone(), endpoint.clone(), spool_dir.clone());
            async move { ServerProcess::start_sidecar_on(&listen, &endpoint, &spool_dir, &[]).await.unwrap() }
        }
    };
    let mut server = start_server().await;
    let mut sidecar = start_sidecar().await;
    let mut direct = ActionServiceClient::new(server.channel().await);
    let session = lore_e2e::start_session(&mut direct, "kills", "agent-1").await;

    let batches: Vec<proto::IngestRequest> = (0..batches)
        .map(|batch| proto::IngestRequest {
            sequence: batch as u64,
            actions: (0..batch_size)
                .map(|index| proto::Action {
                    action_id: uuid::Uuid::now_v7().to_string(),
                    occurred_at: Some(prost_types::Timestamp {
                        seconds: chrono::Utc::now().timestamp(),
                        nanos: (index * 1000) as i32,
                    }),
                    ..action(&session, batch * batch_size + index)
                })
                .collect(),
        })
        .collect();

    // The agent: every batch until acked, resending after any failure.
    let agent = {
        let (listen, batches) = (sidecar_listen.clone(), batches.clone());
        tokio::spawn(async move {
            let mut acked = 0_usize;
            for batch in &batches {
                loop {
                    match ingest_once(&listen, batch).await {
                        Ok(ack) => {
                            assert_eq!(ack.stored as usize, batch.actions.len(), "the sidecar spooled the whole batch");
                            acked += ack.stored as usize;
                            break;
                        }
                        Err(_) => tokio::time::sleep(Duration::from_millis(20)).await,
                    }
                }
            }
            acked
        })
    };
    for _ in 0..kills {
        tokio::time::sleep(Duration::from_millis(100 + fastrand::u64(0..400))).await;
        match victim {
            Victim::Sidecar => {
                sidecar.signal(Signal::SIGKILL);
                sidecar.wait(Duration::from_secs(10)).await.unwrap();
                sidecar = start_sidecar().await;
            }
            Victim::Server => {
                server.signal(Signal::SIGKILL);
                server.wait(Duration::from_secs(10)).await.unwrap();
                server = start_server().await;
            }
        }
    }
    let acked = agent.await.unwrap();
    let sent: std::collections::HashSet<String> =
        batches.iter().flat_map(|batch| batch.actions.iter().map(|action| action.action_id.clone())).collect();
    assert_eq!(acked, sent.len());

    let deadline = tokio::time::Instant::now() + Duration::from_secs(180);
    loop {
        let stored: i64 = sqlx::query_scalar("SELECT count(*) FROM actions WHERE project = 'kills'")
            .fetch_one(&database.pool)
            .await
            .unwrap();
        if stored as usize >= sent.len() || tokio::time::Instant::now() > deadline {
            break;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let stored: Vec<String> = sqlx::query_scalar("SELECT action_id::text FROM actions WHERE project = 'kills'")
        .fetch_all(&database.pool)
        .await
        .unwrap();
    let distinct: std::collections::HashSet<String> = stored.iter().cloned().collect();
    assert_eq!(distinct.len(), stored.len(), "an action was stored twice");
    assert_eq!(distinct, sent, "the server holds exactly the acknowledged actions");
    drop((sidecar, server));
}

#[tokio::test]
async fn kill_9_of_the_sidecar_twenty_times_loses_and_doubles_nothing_the_agent_was_acked() {
    stream_through_kills(Victim::Sidecar, 200, 500, 20).await;
}

#[tokio::test]
async fn kill_9_of_the_server_mid_batch_loses_and_doubles_nothing_the_agent_was_acked() {
    stream_through_kills(Victim::Server, 60, 500, 5).await;
}

#[tokio::test]
async fn a_full_spool_refuses_with_resource_exhausted_and_accepts_again_once_shipped() {
    let database = TestDatabase::new().await.unwrap();
    let port = free_port();
    let spool = tempfile::tempdir_in(default_cache_dir()).unwrap();
    // No server yet: everything stays in the spool.
    let sidecar =
        ServerProcess::start_sidecar(&format!("http://127.0.0.1:{port}"), spool.path(), &["--disk-budget-mb", "1"])
            .await
            .unwrap();
    let mut agent = ActionServiceClient::new(sidecar.channel().await);
    let session = lore_e2e::start_session(&mut agent, "budget", "agent-1").await;
    let bulky = |index: usize| proto::Action {
        context: Some(lore_proto::json::to_struct(
            &serde_json::json!({"step": index, "log": "x".repeat(900).repeat(20)}),
        )),
        ..action(&session, index)
    };
    let mut acked = Vec::new();
    let refused = loop {
        match agent.log_action(proto::LogActionRequest { action: Some(bulky(acked.len())) }).await {
            Ok(response) => acked.push(response.into_inner().ack.unwrap().id),
            Err(status) => break status,
        }
        assert!(acked.len() < 1000, "the budget never filled");
    };
    assert_eq!(refused.code(), tonic::Code::ResourceExhausted, "{refused:?}");
    assert!(acked.len() > 10);

    // The server comes up; shipping frees the spool and accepting resumes.
    let server = ServerProcess::start(
        ServerOptions::with_database(&database.url).env("LORE_LISTEN_ADDR", &format!("127.0.0.1:{port}")),
    )
    .await
    .unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        match agent.log_action(proto::LogActionRequest { action: Some(bulky(acked.len())) }).await {
            Ok(response) => {
                acked.push(response.into_inner().ack.unwrap().id);
                break;
            }
            Err(status) => assert_eq!(status.code(), tonic::Code::ResourceExhausted),
        }
        assert!(tokio::time::Instant::now() < deadline, "the spool never freed up");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let stored = wait_until_stored(&database, &session.session_id, acked.len()).await;
    assert_eq!(stored, acked, "nothing spooled before the refusal was lost");
    drop(server);
}

fn inbox_line(index: usize) -> String {
    format!(r#"{{"project":"inbox","action_type":"shell","outcome":"success","category":"line-{index}"}}"#) + "\n"
}

fn append_to(path: &std::path::Path, text: &str) {
    use std::io::Write as _;
    let mut file = std::fs::OpenOptions::new().create(true).append(true).open(path).unwrap();
    file.write_all(text.as_bytes()).unwrap();
}

async fn stored_inbox_lines(database: &TestDatabase) -> Vec<String> {
    sqlx::query_scalar("SELECT category FROM actions WHERE project = 'inbox'").fetch_all(&database.pool).await.unwrap()
}

async fn wait_for_inbox_lines(database: &TestDatabase, expected: usize) -> Vec<String> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        let stored = stored_inbox_lines(database).await;
        if stored.len() >= expected || tokio::time::Instant::now() > deadline {
            return stored;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Every line once, none twice, whatever the file and the sidecar went
/// through.
fn assert_each_line_once(stored: &[String], lines: std::ops::Range<usize>) {
    let mut counts = std::collections::BTreeMap::<&str, usize>::new();
    for category in stored {
        *counts.entry(category.as_str()).or_default() += 1;
    }
    let doubled: Vec<_> = counts.iter().filter(|(_, count)| **count > 1).collect();
    assert!(doubled.is_empty(), "stored twice: {doubled:?}");
    let missing: Vec<usize> = lines.filter(|index| !counts.contains_key(format!("line-{index}").as_str())).collect();
    assert!(missing.is_empty(), "missing lines: {missing:?}");
}

#[tokio::test]
async fn the_inbox_reaches_the_server_once_through_bad_lines_partial_lines_rotation_truncation_and_kills() {
    let database = TestDatabase::new().await.unwrap();
    let server = ServerProcess::start(ServerOptions::with_database(&database.url)).await.unwrap();
    let spool = tempfile::tempdir_in(default_cache_dir()).unwrap();
    let hooks = tempfile::tempdir_in(default_cache_dir()).unwrap();
    let inbox = hooks.path().join("inbox.jsonl");
    let listen = format!("127.0.0.1:{}", free_port());
    let endpoint = server.endpoint();
    let args = ["--inbox", inbox.to_str().unwrap()];
    let start_sidecar = || ServerProcess::start_sidecar_on(&listen, &endpoint, spool.path(), &args);
    let mut sidecar = start_sidecar().await.unwrap();

    // Phase 1: a hook appends lines (a malformed one now and then, one line
    // in two writes) while the sidecar is killed five times.
    let malformed: Vec<String> = (0..10).map(|index| format!("{{\"broken\": {index}")).collect();
    let writer = {
        let (inbox, malformed) = (inbox.clone(), malformed.clone());
        tokio::spawn(async move {
            for index in 0..1500 {
                if index % 150 == 0 {
                    append_to(&inbox, &format!("{}\n", malformed[index / 150]));
                }
                let line = inbox_line(index);
                if index == 700 {
                    let (head, tail) = line.split_at(25);
                    append_to(&inbox, head);
                    tokio::time::sleep(Duration::from_millis(300)).await;
                    append_to(&inbox, tail);
                } else {
                    append_to(&inbox, &line);
                }
                if index % 10 == 0 {
                    tokio::time::sleep(Duration::from_millis(15)).await;
                }
            }
        })
    };
    for _ in 0..5 {
        tokio::time::sleep(Duration::from_millis(200 + fastrand::u64(0..300))).await;
        sidecar.signal(Signal::SIGKILL);
        sidecar.wait(Duration::from_secs(10)).await.unwrap();
        sidecar = start_sidecar().await.unwrap();
    }
    writer.await.unwrap();
    assert_each_line_once(&wait_for_inbox_lines(&database, 1500).await, 0..1500);

    // Phase 2: rotation. The old writer still appends to the renamed file
    // before a new file starts at the path.
    let rotated = hooks.path().join("inbox.jsonl.1");
    std::fs::rename(&inbox, &rotated).unwrap();
    append_to(&rotated, &(1500..1510).map(inbox_line).collect::<String>());
    append_to(&inbox, &(1510..2000).map(inbox_line).collect::<String>());
    assert_each_line_once(&wait_for_inbox_lines(&database, 2000).await, 0..2000);

    // Phase 3: truncation (copytruncate), then more lines.
    std::fs::OpenOptions::new().write(true).truncate(true).open(&inbox).unwrap();
    tokio::time::sleep(Duration::from_millis(600)).await;
    append_to(&inbox, &(2000..2100).map(inbox_line).collect::<String>());
    let stored = wait_for_inbox_lines(&database, 2100).await;
    assert_each_line_once(&stored, 0..2100);
    assert_eq!(stored.len(), 2100);

    // Every malformed line is in the rejects file with its reason (a kill
    // between writing a reject and moving the position may repeat one).
    let rejects = std::fs::read_to_string(spool.path().join("inbox-rejects.jsonl")).unwrap();
    let rejected: std::collections::BTreeSet<String> = rejects
        .lines()
        .map(|line| {
            let reject: serde_json::Value = serde_json::from_str(line).unwrap();
            assert!(reject["reason"].as_str().unwrap().starts_with("not an action: "), "{reject}");
            reject["line"].as_str().unwrap().to_owned()
        })
        .collect();
    assert_eq!(rejected, malformed.into_iter().collect());

    let mut status_client = lore_proto::v1::sidecar_service_client::SidecarServiceClient::new(sidecar.channel().await);
    let status = status_client.status(proto::SidecarStatusRequest {}).await.unwrap().into_inner();
    assert!(status.inbox_accepted >= 600, "{status:?}");
    drop((sidecar, server));
}

/// The segment files of a spool, oldest first.
fn segments(spool: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files: Vec<_> = std::fs::read_dir(spool)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|extension| extension == "seg"))
        .collect();
    files.sort();
    files
}

/// Start offsets of the records of a segment (the framing of
/// spool/src/record.rs: a 24-byte header that starts with the
/// payload length).
fn record_offsets(bytes: &[u8]) -> Vec<usize> {
    let mut offsets = Vec::new();
    let mut offset = 0;
    while offset + 24 <= bytes.len() {
        offsets.push(offset);
        offset += 24 + u32::from_le_bytes(bytes[offset..offset + 4].try_into().unwrap()) as usize;
    }
    offsets
}

#[tokio::test]
async fn a_spool_with_a_torn_tail_and_a_damaged_record_keeps_and_ships_every_good_record() {
    let database = TestDatabase::new().await.unwrap();
    let port = free_port();
    let spool = tempfile::tempdir_in(default_cache_dir()).unwrap();
    let endpoint = format!("http://127.0.0.1:{port}");
    // No server: the actions stay in the spool.
    let mut sidecar =
        ServerProcess::start_sidecar(&endpoint, spool.path(), &["--shutdown-grace-secs", "0"]).await.unwrap();
    let mut agent = ActionServiceClient::new(sidecar.channel().await);
    let mut acked = Vec::new();
    for index in 0..20 {
        let action = proto::Action { project: "damaged".into(), ..action(&proto::Session::default(), index) };
        acked.push(agent.log_action(proto::LogActionRequest { action: Some(action) }).await.unwrap().into_inner());
    }
    sidecar.stop().await;

    // The disk damages record 10 of the segment, and a crash tears a record
    // at its end.
    let files = segments(spool.path());
    assert_eq!(files.len(), 1, "{files:?}");
    let mut bytes = std::fs::read(&files[0]).unwrap();
    let offsets = record_offsets(&bytes);
    assert_eq!(offsets.len(), 20);
    bytes[offsets[10] + 24 + 5] ^= 0xff;
    let torn = bytes[offsets[3]..offsets[4]].to_vec();
    bytes.extend_from_slice(&torn[..torn.len() / 2]);
    std::fs::write(&files[0], &bytes).unwrap();

    let server = ServerProcess::start(
        ServerOptions::with_database(&database.url).env("LORE_LISTEN_ADDR", &format!("127.0.0.1:{port}")),
    )
    .await
    .unwrap();
    let sidecar = ServerProcess::start_sidecar(&endpoint, spool.path(), &[]).await.unwrap();
    let log = sidecar.log();
    assert!(log.contains("spool: damaged record moved aside"), "{log}");
    assert!(log.contains("spool: cut a torn last record"), "{log}");
    assert!(log.contains("corrupt_records: 1"), "{log}");
    assert_eq!(std::fs::read_dir(spool.path().join("corrupt")).unwrap().count(), 1, "the damaged bytes are kept");

    let expected: std::collections::BTreeSet<String> = acked
        .iter()
        .enumerate()
        .filter(|(index, _)| *index != 10)
        .map(|(_, response)| response.ack.as_ref().unwrap().id.clone())
        .collect();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    let stored = loop {
        let stored: std::collections::BTreeSet<String> =
            sqlx::query_scalar("SELECT action_id::text FROM actions WHERE project = 'damaged'")
                .fetch_all(&database.pool)
                .await
                .unwrap()
                .into_iter()
                .collect();
        if stored.len() >= expected.len() || tokio::time::Instant::now() > deadline {
            break stored;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(stored, expected, "every record but the damaged one reaches the server");
    drop((sidecar, server));
}

#[tokio::test]
async fn a_shutting_down_server_ends_the_sidecars_stream_and_the_sidecar_comes_back_to_its_successor() {
    let database = TestDatabase::new().await.unwrap();
    let port = free_port();
    // A grace longer than ServerProcess::stop waits: only ending the open
    // Ingest stream lets the server exit in time.
    let server_options = || {
        ServerOptions::with_database(&database.url)
            .env("LORE_LISTEN_ADDR", &format!("127.0.0.1:{port}"))
            .env("LORE_SHUTDOWN_GRACE_SECS", "120")
    };
    let mut server = ServerProcess::start(server_options()).await.unwrap();
    let spool = tempfile::tempdir_in(default_cache_dir()).unwrap();
    let sidecar = ServerProcess::start_sidecar(&format!("http://127.0.0.1:{port}"), spool.path(), &[]).await.unwrap();
    let mut agent = ActionServiceClient::new(sidecar.channel().await);
    let session = lore_e2e::start_session(&mut agent, "drain", "agent-1").await;
    for index in 0..10 {
        agent.log_action(proto::LogActionRequest { action: Some(action(&session, index)) }).await.unwrap();
    }
    assert_eq!(wait_until_stored(&database, &session.session_id, 10).await.len(), 10);

    server.stop().await;
    assert!(!server.log().contains("grace period over"), "{}", server.log());
    assert!(sidecar.log().contains("shutting down"), "the sidecar was told why: {}", sidecar.log());

    // Its successor gets what was logged meanwhile, once.
    for index in 10..20 {
        agent.log_action(proto::LogActionRequest { action: Some(action(&session, index)) }).await.unwrap();
    }
    let _successor = ServerProcess::start(server_options()).await.unwrap();
    assert_eq!(wait_until_stored(&database, &session.session_id, 20).await.len(), 20);
}

#[tokio::test]
async fn a_silent_partition_is_noticed_by_pings_and_what_was_acked_meanwhile_arrives_once_in_order() {
    let database = TestDatabase::new().await.unwrap();
    let server = ServerProcess::start(ServerOptions::with_database(&database.url)).await.unwrap();
    let proxy = lore_e2e::proxy::Proxy::start(server.addr()).await.unwrap();
    let spool = tempfile::tempdir_in(default_cache_dir()).unwrap();
    let sidecar = ServerProcess::start_sidecar(&format!("http://{}", proxy.addr()), spool.path(), &[]).await.unwrap();
    let mut agent = ActionServiceClient::new(sidecar.channel().await);
    let mut status = lore_proto::v1::sidecar_service_client::SidecarServiceClient::new(sidecar.channel().await);
    let session = lore_e2e::start_session(&mut agent, "partition", "agent-1").await;
    let mut acked = Vec::new();
    let mut log = async |agent: &mut ActionServiceClient<_>, index| {
        let request = proto::LogActionRequest { action: Some(action(&session, index)) };
        acked.push(agent.log_action(request).await.unwrap().into_inner().ack.unwrap().id);
    };
    for index in 0..20 {
        log(&mut agent, index).await;
    }
    assert_eq!(wait_until_stored(&database, &session.session_id, 20).await.len(), 20);

    // No byte crosses and nobody is told; only the sidecar's pings (every
    // 10 s, answered within 10 s) can find out before the network returns.
    let outage = Duration::from_secs(40);
    let noticed = async {
        let cut_at = tokio::time::Instant::now();
        for index in 20..40 {
            log(&mut agent, index).await;
        }
        loop {
            let now = status.status(proto::SidecarStatusRequest {}).await.unwrap().into_inner();
            if !now.connected {
                break cut_at.elapsed();
            }
            assert!(cut_at.elapsed() < outage, "the sidecar still believes in its stream: {now:?}");
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    };
    let ((), noticed_after) = tokio::join!(proxy.cut(outage), noticed);
    assert!(noticed_after < outage - Duration::from_secs(5), "noticed after {noticed_after:?}");

    let stored = wait_until_stored(&database, &session.session_id, 40).await;
    assert_eq!(stored, acked, "each acked action once, in the order logged");
}

/// What an agent records about what it learned goes through the sidecar
/// like its actions: a failure captured, a failed and a successful fix, a
/// lesson applied and one proposed, all while the server is down, arrive
/// once and in order when it is back (the fix finds its failure, the
/// application its session), with the secrets redacted before the spool.
#[tokio::test]
async fn failures_fixes_and_lessons_recorded_during_an_outage_arrive_once_in_order() {
    use lore_proto::v1::knowledge_service_client::KnowledgeServiceClient;
    use lore_proto::v1::qa_learning_service_client::QaLearningServiceClient;

    let database = TestDatabase::new().await.unwrap();
    let port = free_port();
    let server_options =
        || ServerOptions::with_database(&database.url).env("LORE_LISTEN_ADDR", &format!("127.0.0.1:{port}"));
    let mut server = ServerProcess::start(server_options()).await.unwrap();
    let mut knowledge = KnowledgeServiceClient::new(server.channel().await);
    let entry = proto::Entry {
        project: "learn".into(),
        kind: proto::EntryKind::Gotcha as i32,
        title: "Pin the clock in date tests".into(),
        ..Default::default()
    };
    let entry = knowledge.upsert_entry(proto::UpsertEntryRequest { entry: Some(entry) }).await.unwrap();
    let entry_id = entry.into_inner().entry.unwrap().entry_id;
    server.signal(Signal::SIGKILL);
    server.wait(Duration::from_secs(10)).await.unwrap();

    let spool = tempfile::tempdir_in(default_cache_dir()).unwrap();
    let sidecar = ServerProcess::start_sidecar(&format!("http://127.0.0.1:{port}"), spool.path(), &[]).await.unwrap();
    let mut agent = ActionServiceClient::new(sidecar.channel().await);
    let session = lore_e2e::start_session(&mut agent, "learn", "agent-1").await;
    let mut qa = QaLearningServiceClient::new(sidecar.channel().await);
    let mut lessons = KnowledgeServiceClient::new(sidecar.channel().await);
    let captured = qa
        .capture_failure(proto::CaptureFailureRequest {
            project: "learn".into(),
            session_id: session.session_id.clone(),
            task: Some(proto::Task { task_id: "T-1".into(), title: "Date formatting".into(), ..Default::default() }),
            failed_checks: vec![proto::FailedCheck {
                name: "pytest".into(),
                output: "AssertionError: 2026-11-24 != 2026-11-23 (API_KEY=sk_live_ReTllpYQYfIZu2Jnf2lAPFjD)".into(),
                exit_code: 1,
            }],
            error_messages: vec!["AssertionError: 2026-11-24 != 2026-11-23".into()],
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(
        captured.metadata().get(lore_proto::metadata::SPOOLED).and_then(|value| value.to_str().ok()),
        Some("true")
    );
    let failure_id = captured.into_inner().ack.unwrap().id;
    for (number, outcome) in [(1, proto::FixOutcome::Failure), (2, proto::FixOutcome::Success)] {
        qa.record_fix_attempt(proto::RecordFixAttemptRequest {
            failure_id: failure_id.clone(),
            attempt_number: number,
            approach: "pinned the clock".into(),
            outcome: outcome as i32,
            ..Default::default()
        })
        .await
        .unwrap();
    }
    // A warning a pre-tool-use hook gave at a call, reported twice (an
    // answer lost): stored once.
    let given = proto::RecordCallInjectionRequest {
        injection_id: uuid::Uuid::now_v7().to_string(),
        project: "learn".into(),
        session_id: session.session_id.clone(),
        kind: proto::InjectedKind::CallWarning as i32,
        shape: "pytest <arg>".into(),
        label: "AssertionError: <*> != <*>".into(),
        chars: 140,
        ..Default::default()
    };
    let mut hooks = lore_proto::v1::agent_service_client::AgentServiceClient::new(sidecar.channel().await);
    for _ in 0..2 {
        hooks.record_call_injection(given.clone()).await.unwrap();
    }
    for (bad, field) in [
        (proto::RecordCallInjectionRequest { session_id: "nope".into(), ..given.clone() }, "session_id"),
        (proto::RecordCallInjectionRequest { kind: 0, ..given.clone() }, "kind"),
    ] {
        let status = hooks.record_call_injection(bad).await.unwrap_err();
        assert!(status.message().starts_with(field), "{status:?}");
    }
    lessons
        .record_application(proto::RecordApplicationRequest {
            entry_id: entry_id.clone(),
            session_id: session.session_id.clone(),
            success: true,
            resolution_minutes: 7.0,
            ..Default::default()
        })
        .await
        .unwrap();
    let proposed = lessons
        .create_draft(proto::CreateDraftRequest {
            project: "learn".into(),
            session_id: session.session_id.clone(),
            proposal: Some(proto::DraftProposal {
                title: "Date tests need a pinned clock".into(),
                solution: "Freeze time with a fixture.".into(),
                ..Default::default()
            }),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    // Bad input is refused by the sidecar itself, naming the field.
    let status = qa
        .record_fix_attempt(proto::RecordFixAttemptRequest { failure_id: "nope".into(), ..Default::default() })
        .await
        .unwrap_err();
    assert_eq!(status.code(), tonic::Code::InvalidArgument);
    assert!(status.message().starts_with("failure_id"), "{status:?}");

    let _server = ServerProcess::start(server_options()).await.unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    let count = |sql: &'static str| {
        let pool = database.pool.clone();
        async move { sqlx::query_scalar::<_, i64>(sql).fetch_one(&pool).await.unwrap() }
    };
    loop {
        if count("SELECT count(*) FROM knowledge_drafts").await == 1 || tokio::time::Instant::now() > deadline {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(count("SELECT count(*) FROM qa_failures").await, 1);
    assert_eq!(count("SELECT count(*) FROM qa_fix_attempts").await, 2);
    assert_eq!(count("SELECT count(*) FROM qa_failure_resolutions").await, 1, "the second attempt resolved it");
    assert_eq!(count("SELECT count(*) FROM knowledge_applications").await, 1);
    assert_eq!(count("SELECT count(*) FROM knowledge_drafts").await, 1);
    assert_eq!(count("SELECT count(*) FROM injections WHERE surface = 'call'").await, 1, "reported twice, stored once");
    let stored_draft: String =
        sqlx::query_scalar("SELECT draft_id::text FROM knowledge_drafts").fetch_one(&database.pool).await.unwrap();
    assert_eq!(stored_draft, proposed.draft_id, "the id the sidecar answered with is the one stored");
    let leaked: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM qa_failures WHERE failed_checks::text LIKE '%sk_live_%' OR error_messages::text LIKE '%sk_live_%'",
    )
    .fetch_one(&database.pool)
    .await
    .unwrap();
    assert_eq!(leaked, 0);
    let rejects = std::fs::read_to_string(spool.path().join("rejects.jsonl")).unwrap_or_default();
    assert!(rejects.is_empty(), "{rejects}");
}

/// The sidecar restarts itself once with one glibc allocator arena (its
/// memory beside the agent, docs/BENCHMARKS.md), keeping its process id,
/// and then serves.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[tokio::test]
async fn the_sidecar_runs_with_one_allocator_arena_under_its_own_process_id() {
    let spool = tempfile::tempdir_in(default_cache_dir()).unwrap();
    let sidecar =
        ServerProcess::start_sidecar(&format!("http://127.0.0.1:{}", free_port()), spool.path(), &[]).await.unwrap();
    let pid = sidecar.pid().expect("the sidecar runs");
    let environment = std::fs::read(format!("/proc/{pid}/environ")).unwrap();
    let variables: Vec<&[u8]> = environment.split(|byte| *byte == 0).collect();
    assert!(variables.contains(&&b"MALLOC_ARENA_MAX=1"[..]), "the spawned process itself runs with one arena");
    let mut status = lore_proto::v1::sidecar_service_client::SidecarServiceClient::new(sidecar.channel().await);
    let answer = status.status(proto::SidecarStatusRequest {}).await.unwrap().into_inner();
    assert!(!answer.connected, "no server is up: {answer:?}");
}
