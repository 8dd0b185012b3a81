//! The images of `make image` as a fleet runs them: each archive unpacked
//! (skopeo, umoci) and its entrypoint run under unshare + chroot as the
//! image's user. The server's image migrates an empty database, serves
//! (gRPC health and a LogAction through grpcurl) and the sidecar's image
//! ships an action to it.

use lore_e2e::image::UnpackedImage;
use lore_e2e::{ServerProcess, TestDatabase, free_port, grpcurl};
use lore_proto::v1::action_service_client::ActionServiceClient;

fn assert_root() {
    assert!(
        nix::unistd::geteuid().is_root(),
        "the image test chroots into the unpacked images, which needs root (CI and `make test` run as root)"
    );
}

/// What every image must be: the workspace's version and revision in its
/// labels, a non-root user, no shell and no package manager.
fn assert_shape(image: &UnpackedImage, name: &str) {
    let version = env!("CARGO_PKG_VERSION");
    assert_eq!(image.reference, format!("ghcr.io/lore-dev/{name}:{version}"), "the chart's repository and tag");
    assert_eq!(image.labels.get("org.opencontainers.image.version").map(String::as_str), Some(version));
    let revision = image.labels.get("org.opencontainers.image.revision").cloned().unwrap_or_default();
    assert!(revision.len() >= 40, "the source revision is labelled: {revision:?}");
    assert_eq!(image.user, "10001:10001", "a non-root user");
    assert!(image.holds(&format!("/usr/bin/{name}")));
    assert!(image.holds("/etc/ssl/certs/ca-certificates.crt"), "CA certificates");
    for absent in ["/bin/sh", "/usr/bin/sh", "/bin/bash", "/usr/bin/apt-get", "/usr/bin/dpkg"] {
        assert!(!image.holds(absent), "{name}'s image holds {absent}");
    }
}

#[tokio::test]
async fn the_images_migrate_serve_and_ship_from_their_unpacked_archives() {
    assert_root();
    let server_image = UnpackedImage::unpack("lore-server").await.unwrap();
    assert_shape(&server_image, "lore-server");
    assert_eq!(server_image.entrypoint, ["/usr/bin/lore-server"]);
    assert_eq!(server_image.cmd, ["serve"], "the entrypoint serves");
    assert!(server_image.holds("/opt/lore/cache/models/all-MiniLM-L6-v2/model.safetensors"), "the model");

    // The migration Job's command, on a database with nothing in it.
    let database = TestDatabase::empty().await.unwrap();
    let url = database.url.as_str();
    server_image.migrate(url).await.unwrap();
    let applied: i64 = sqlx::query_scalar("SELECT count(*) FROM _sqlx_migrations WHERE success")
        .fetch_one(&database.pool)
        .await
        .unwrap();
    let shipped = std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../migrations"))
        .unwrap()
        .filter(|entry| entry.as_ref().unwrap().file_name().to_string_lossy().ends_with(".up.sql"))
        .count();
    assert_eq!(applied as usize, shipped, "every migration applied by the image's migrate");

    let port = free_port().to_string();
    let listen = format!("127.0.0.1:{port}");
    let server = server_image.serve(url, &listen, &[]).await.unwrap();

    let health = grpcurl(&[], server.addr(), &["grpc.health.v1.Health/Check"]).await;
    assert!(health.success && health.stdout.contains("SERVING"), "{health:?}");
    let started = grpcurl(
        &["-d", r#"{"project": "image", "agent_id": "agent-1"}"#],
        server.addr(),
        &["lore.v1.ActionService/StartSession"],
    )
    .await;
    assert!(started.success, "{started:?}");
    let session: serde_json::Value = serde_json::from_str(&started.stdout).unwrap();
    let session_id = session["session"]["sessionId"].as_str().expect("a session id").to_owned();
    let logged = grpcurl(
        &[
            "-d",
            &serde_json::json!({"action": {
                "project": "image", "session_id": session_id, "action_type": "tool_call",
                "outcome": "OUTCOME_SUCCESS", "context": {"via": "grpcurl"},
                "occurred_at": chrono::Utc::now().to_rfc3339()}})
            .to_string(),
        ],
        server.addr(),
        &["lore.v1.ActionService/LogAction"],
    )
    .await;
    assert!(logged.success, "{logged:?}");

    // The sidecar's image, with its spool in the image's own folder.
    let sidecar_image = UnpackedImage::unpack("lore-sidecar").await.unwrap();
    assert_shape(&sidecar_image, "lore-sidecar");
    assert_eq!(sidecar_image.entrypoint, ["/usr/bin/lore-sidecar"]);
    let sidecar_listen = format!("127.0.0.1:{}", free_port());
    let server_url = format!("http://{listen}");
    let sidecar = ServerProcess::spawn_until_ready(
        sidecar_image.command(
            None,
            &[
                ("LORE_SERVER", &server_url),
                ("LORE_SIDECAR_LISTEN", &sidecar_listen),
                ("LORE_SIDECAR_LOG_JSON", "true"),
            ],
        ),
        "lore-sidecar serving",
    )
    .await
    .unwrap();
    let mut agent = ActionServiceClient::new(sidecar.channel().await);
    let shipped_session = lore_e2e::start_session(&mut agent, "image", "agent-2").await;
    lore_e2e::log_tool_call(&mut agent, &shipped_session, serde_json::json!({"via": "the sidecar's image"})).await;

    let stored = lore_e2e::eventually(|| async {
        let mut via: Vec<String> =
            sqlx::query_scalar("SELECT context->>'via' FROM actions").fetch_all(&database.pool).await.unwrap();
        via.sort();
        (via.len() == 2).then_some(via)
    })
    .await;
    assert_eq!(
        stored,
        Some(vec!["grpcurl".to_owned(), "the sidecar's image".to_owned()]),
        "one action logged through each image, each once"
    );
    drop(sidecar);
    drop(server);
    let ended = lore_e2e::eventually(|| async {
        (server_image.processes_inside() + sidecar_image.processes_inside() == 0).then_some(())
    })
    .await;
    assert!(ended.is_some(), "the entrypoints end with the processes that ran them");
}
