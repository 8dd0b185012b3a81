//! The OCI images of `make image`, unpacked and run without a container
//! engine: no registry can be reached and no container runtime may set
//! rlimits here, so an archive is unpacked with skopeo and umoci (Debian's
//! packages) and its entrypoint runs under `unshare` + `chroot`, as the
//! image's user, sharing the host's loopback.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use anyhow::{Context as _, bail};
use serde_json::Value;
use tokio::process::Command;

/// `target/images/<name>.tar`, written by `make image` (release binaries) or
/// `make test-image` (the test build's).
pub fn image_archive(name: &str) -> PathBuf {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the workspace");
    let path = workspace.join("target/images").join(format!("{name}.tar"));
    assert!(
        path.is_file(),
        "{} is missing: run `make test-image` (or `make image`) first (make test does)",
        path.display()
    );
    path
}

/// One image archive unpacked into a temporary folder, with the
/// configuration its entrypoint runs under.
pub struct UnpackedImage {
    _folder: tempfile::TempDir,
    pub rootfs: PathBuf,
    pub entrypoint: Vec<String>,
    pub cmd: Vec<String>,
    pub env: Vec<(String, String)>,
    /// `uid:gid` as the image's config names them.
    pub user: String,
    pub labels: BTreeMap<String, String>,
    /// The reference the archive names its image by.
    pub reference: String,
}

impl UnpackedImage {
    /// Unpacks `target/images/<name>.tar`.
    pub async fn unpack(name: &str) -> anyhow::Result<Self> {
        let archive = image_archive(name);
        let folder = tempfile::tempdir_in(crate::default_cache_dir()).context("a folder to unpack into")?;
        let layout = folder.path().join("layout");
        let bundle = folder.path().join("bundle");
        let source = format!("oci-archive:{}", archive.display());
        run("skopeo", &["copy", "--quiet", &source, &format!("oci:{}:image", layout.display())]).await?;
        run("umoci", &["unpack", "--image", &format!("{}:image", layout.display()), &bundle.display().to_string()])
            .await?;
        let config: Value = serde_json::from_str(&run("skopeo", &["inspect", "--config", &source]).await?)
            .context("skopeo inspect --config prints JSON")?;
        // The archive's own index names the image (the copy above renamed it).
        let index: Value =
            serde_json::from_str(&run("tar", &["-xOf", &archive.display().to_string(), "index.json"]).await?)
                .context("the archive's index.json is JSON")?;
        let image_config = &config["config"];
        let strings = |value: &Value| -> Vec<String> {
            value.as_array().into_iter().flatten().filter_map(Value::as_str).map(str::to_owned).collect()
        };
        let env = strings(&image_config["Env"])
            .into_iter()
            .filter_map(|pair| pair.split_once('=').map(|(key, value)| (key.to_owned(), value.to_owned())))
            .collect();
        let labels = image_config["Labels"]
            .as_object()
            .into_iter()
            .flatten()
            .filter_map(|(key, value)| Some((key.clone(), value.as_str()?.to_owned())))
            .collect();
        Ok(Self {
            rootfs: bundle.join("rootfs"),
            entrypoint: strings(&image_config["Entrypoint"]),
            cmd: strings(&image_config["Cmd"]),
            env,
            user: image_config["User"].as_str().unwrap_or_default().to_owned(),
            labels,
            reference: index["manifests"][0]["annotations"]["org.opencontainers.image.ref.name"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            _folder: folder,
        })
    }

    /// The entrypoint as a container would run it: with the image's command
    /// when `args` is `None`, else with `args`; in new mount and process
    /// namespaces, chrooted into the image as its user, with the image's
    /// environment and nothing of this process's.
    pub fn command(&self, args: Option<&[&str]>, env: &[(&str, &str)]) -> Command {
        let mut command = Command::new(host_program("unshare"));
        command
            .args(["--mount", "--pid", "--fork", "--kill-child"])
            // PID 1 of the namespace is a root shell that waits for the
            // entrypoint: `--kill-child` kills it when `unshare` dies, and
            // with it everything in the namespace. The entrypoint cannot be
            // PID 1 itself: `chroot --userspec` changes the user, which
            // clears the parent-death signal, and it would outlive the test.
            .arg(host_program("sh"))
            .args(["-c", "\"$@\" & wait $!", "sh"])
            // By its path: the environment below is the image's, not ours.
            .arg(host_program("chroot"))
            .arg(format!("--userspec={}", self.user))
            .arg(&self.rootfs)
            .args(&self.entrypoint);
        match args {
            Some(args) => command.args(args),
            None => command.args(&self.cmd),
        };
        command
            .env_clear()
            .envs(self.env.iter().map(|(key, value)| (key, value)))
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        command
    }

    /// Runs the image's `migrate` against `database_url`, as the chart's
    /// migration Job does, and says why when it fails.
    pub async fn migrate(&self, database_url: &str) -> anyhow::Result<()> {
        let output = tokio::time::timeout(
            std::time::Duration::from_secs(120),
            self.command(Some(&["migrate"]), &[("LORE_DATABASE_URL", database_url)]).output(),
        )
        .await
        .map_err(|_| anyhow::anyhow!("migrate ran for two minutes"))??;
        anyhow::ensure!(output.status.success(), "migrate failed: {}", String::from_utf8_lossy(&output.stderr));
        Ok(())
    }

    /// The image's entrypoint serving over `database_url` on `listen`, as
    /// the chart runs it (JSON logs; auth off, as for the tests of the
    /// services), with `extra` settings, once it says it serves.
    pub async fn serve(
        &self,
        database_url: &str,
        listen: &str,
        extra: &[(&str, &str)],
    ) -> anyhow::Result<crate::ServerProcess> {
        let mut env = vec![
            ("LORE_DATABASE_URL", database_url),
            ("LORE_LISTEN_ADDR", listen),
            ("LORE_AUTH__ENABLED", "false"),
            ("LORE_LOG__FORMAT", "json"),
        ];
        env.extend_from_slice(extra);
        crate::ServerProcess::spawn_until_ready(self.command(None, &env), "lore-server serving").await
    }

    /// How many processes run chrooted into this image: their root is its
    /// root filesystem.
    pub fn processes_inside(&self) -> usize {
        let rootfs = self.rootfs.canonicalize().unwrap_or_else(|_| self.rootfs.clone());
        let Ok(entries) = std::fs::read_dir("/proc") else { return 0 };
        entries
            .flatten()
            .filter(|entry| std::fs::read_link(entry.path().join("root")).is_ok_and(|root| root == rootfs))
            .count()
    }

    /// Whether the image holds this path (absolute inside the image).
    pub fn holds(&self, path: &str) -> bool {
        self.rootfs.join(path.trim_start_matches('/')).symlink_metadata().is_ok()
    }
}

/// Where this machine's PATH has `program`.
fn host_program(program: &str) -> PathBuf {
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|folder| folder.join(program))
        .find(|path| path.is_file())
        .unwrap_or_else(|| panic!("{program} is not on PATH (util-linux and coreutils have it)"))
}

async fn run(program: &str, args: &[&str]) -> anyhow::Result<String> {
    let output = Command::new(program).args(args).output().await.with_context(|| {
        format!("cannot run {program}: apt-get install skopeo umoci (scripts/setup/fetch_tools.sh does)")
    })?;
    if !output.status.success() {
        bail!("{program} {} failed: {}", args.join(" "), String::from_utf8_lossy(&output.stderr));
    }
    String::from_utf8(output.stdout).context("the output is UTF-8")
}
