//! The deployment examples as a person would use them: the systemd unit for
//! agent VMs passes `systemd-analyze verify`, names only settings the
//! sidecar knows, and a sidecar started with its settings ships an action.
//! The agent pod's sidecar container (scripts/checks/helm.sh validates the
//! pod itself) names only settings the sidecar knows, commented ones of the
//! unit included.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Stdio;

use lore_e2e::{ServerOptions, ServerProcess, TestDatabase, free_port, workspace_binary};
use lore_proto::v1::action_service_client::ActionServiceClient;
use tokio::process::Command;

const UNIT: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../deploy/systemd/lore-sidecar.service"));

const POD: &str =
    include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../helm/lore/examples/agent-pod-with-sidecar.yaml"));

async fn sidecar_help() -> String {
    help("lore-sidecar", &[]).await
}

async fn help(binary: &str, args: &[&str]) -> String {
    let help = Command::new(workspace_binary(binary)).args(args).arg("--help").output().await.unwrap();
    String::from_utf8(help.stdout).unwrap()
}

#[tokio::test]
async fn the_examples_name_only_settings_the_sidecar_and_the_hooks_read() {
    // The agent container's settings are for `lore hook`, the sidecar's
    // for lore-sidecar: either reads each.
    let help = format!("{}{}", sidecar_help().await, help("lore", &["hook"]).await);
    let in_pod =
        POD.lines().filter_map(|line| line.trim().strip_prefix("- name: ")).filter(|name| name.starts_with("LORE_"));
    let commented_in_unit = UNIT
        .lines()
        .filter_map(|line| line.strip_prefix("#Environment="))
        .filter_map(|pair| pair.split_once('='))
        .map(|(key, _)| key);
    let named: Vec<&str> = in_pod.chain(commented_in_unit).collect();
    assert!(named.contains(&"LORE_SIDECAR_INDEX"), "{named:?}");
    for key in named {
        assert!(
            help.contains(&format!("[env: {key}")),
            "an example sets {key}, which neither lore-sidecar nor lore hook reads"
        );
    }
}

/// The unit's `Environment=KEY=VALUE` settings.
fn unit_environment() -> BTreeMap<String, String> {
    UNIT.lines()
        .filter_map(|line| line.strip_prefix("Environment="))
        .filter_map(|pair| pair.split_once('='))
        .map(|(key, value)| (key.to_owned(), value.to_owned()))
        .collect()
}

#[tokio::test]
async fn the_sidecar_unit_verifies_and_its_settings_start_a_sidecar_that_ships() {
    let sidecar = workspace_binary("lore-sidecar");
    let unit_dir = tempfile::tempdir().unwrap();
    let unit = unit_dir.path().join("lore-sidecar.service");
    assert!(UNIT.contains("ExecStart=/usr/local/bin/lore-sidecar\n"), "the unit runs the installed binary");
    std::fs::write(&unit, UNIT.replace("/usr/local/bin/lore-sidecar", &sidecar.display().to_string())).unwrap();
    let verified = Command::new("systemd-analyze").arg("verify").arg(&unit).output().await.unwrap();
    assert!(verified.status.success(), "systemd-analyze verify: {}", String::from_utf8_lossy(&verified.stderr));

    let environment = unit_environment();
    let help = sidecar_help().await;
    for key in environment.keys() {
        assert!(help.contains(&format!("[env: {key}")), "the unit sets {key}, which lore-sidecar does not read");
    }
    assert!(help.contains("[env: LORE_TOKEN"), "the token the unit's EnvironmentFile holds");

    // The unit's settings, with the server, spool and port of this test.
    let database = TestDatabase::new().await.unwrap();
    let server = ServerProcess::start(ServerOptions::with_database(&database.url)).await.unwrap();
    let state = tempfile::tempdir_in(lore_e2e::default_cache_dir()).unwrap();
    let mut settings = environment.clone();
    settings.insert("LORE_SERVER".into(), server.endpoint());
    settings.insert("LORE_SIDECAR_LISTEN".into(), format!("127.0.0.1:{}", free_port()));
    let spool = Path::new(&environment["LORE_SIDECAR_SPOOL_DIR"]);
    assert!(spool.starts_with("/var/lib/lore-sidecar"), "the spool is in the unit's StateDirectory");
    settings.insert("LORE_SIDECAR_SPOOL_DIR".into(), state.path().join("spool").display().to_string());
    let mut command = Command::new(&sidecar);
    command.env_clear().envs(&settings).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped());
    command.kill_on_drop(true);
    let sidecar = ServerProcess::spawn_until_ready(command, "lore-sidecar serving").await.unwrap();

    let mut agent = ActionServiceClient::new(sidecar.channel().await);
    let session = lore_e2e::start_session(&mut agent, "vm", "agent-1").await;
    lore_e2e::log_tool_call(&mut agent, &session, serde_json::json!({"via": "the unit's settings"})).await;
    let stored = lore_e2e::eventually(|| async {
        let count: i64 = sqlx::query_scalar("SELECT count(*) FROM actions WHERE session_id = $1::uuid")
            .bind(&session.session_id)
            .fetch_one(&database.pool)
            .await
            .unwrap();
        (count == 1).then_some(count)
    })
    .await;
    assert_eq!(stored, Some(1), "the action the sidecar spooled reached the server once");
}
