//! Set-up through a mirror: `scripts/setup/third_party.py fetch` asks each
//! registry's own client (pip, npm, cargo, apt) for its packages by name
//! and version, so a machine that reaches the registries only through its
//! own mirror can set up. Here every client is pointed at a local mirror
//! of the cache's packages (`tests/python/registry_mirror.py`) the way a
//! company points them at its own, and every other address goes to a proxy
//! that does not answer: each pinned package comes from the mirror, and a
//! mirror serving another file than the pinned one is refused.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

use lore_e2e::repository;

/// A running `registry_mirror.py`, killed when dropped.
struct Mirror {
    child: Child,
    port: u16,
    log: PathBuf,
}

impl Mirror {
    fn start(scratch: &Path, altered: Option<&str>) -> Mirror {
        let registry = lore_pgtest::default_cache_dir().join("registry");
        let log = scratch.join("served.log");
        let mut command = Command::new("python3");
        command.arg(repository().join("tests/python/registry_mirror.py")).arg(&registry).arg(&log);
        if let Some(file) = altered {
            command.args(["--alter", file]);
        }
        let mut child = command.stdout(Stdio::piped()).spawn().expect("python3 runs the mirror");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        let port = line.trim().strip_prefix("port ").and_then(|port| port.parse().ok());
        let port = port.unwrap_or_else(|| panic!("the mirror did not say its port: {line:?}"));
        Mirror { child, port, log }
    }

    fn served(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// `third_party.py fetch IDS` into `scratch/cache`, every client set up
    /// for this mirror in the way each documents, and no other way out.
    fn fetch(&self, scratch: &Path, ids: &[&str]) -> Output {
        let base = format!("http://127.0.0.1:{}", self.port);
        let cargo_home = scratch.join("cargo");
        std::fs::create_dir_all(&cargo_home).unwrap();
        let cargo_config = format!(
            "[source.crates-io]\nreplace-with = \"company\"\n\n[source.company]\nregistry = \"sparse+{base}/crates/index/\"\n"
        );
        std::fs::write(cargo_home.join("config.toml"), cargo_config).unwrap();
        let apt = scratch.join("apt");
        std::fs::create_dir_all(apt.join("sources.list.d")).unwrap();
        std::fs::write(apt.join("sources.list"), format!("deb [trusted=yes] {base}/debian bookworm main\n")).unwrap();
        let apt_conf = format!(
            "Dir::Etc::SourceList \"{0}/sources.list\";\nDir::Etc::SourceParts \"{0}/sources.list.d\";\n",
            apt.display()
        );
        std::fs::write(apt.join("apt.conf"), apt_conf).unwrap();
        let nowhere = "http://127.0.0.1:9";
        Command::new("python3")
            .arg(repository().join("scripts/setup/third_party.py"))
            .arg("fetch")
            .args(ids)
            .current_dir(scratch)
            .env("LORE_CACHE_DIR", scratch.join("cache"))
            .env("PIP_INDEX_URL", format!("{base}/pypi/simple/"))
            .env("PIP_CACHE_DIR", scratch.join("pip-cache"))
            .env("npm_config_registry", format!("{base}/npm/"))
            .env("npm_config_cache", scratch.join("npm-cache"))
            .env("CARGO_HOME", &cargo_home)
            .env("APT_CONFIG", apt.join("apt.conf"))
            .env("http_proxy", nowhere)
            .env("https_proxy", nowhere)
            .env("HTTP_PROXY", nowhere)
            .env("HTTPS_PROXY", nowhere)
            .env("no_proxy", "127.0.0.1")
            .env("NO_PROXY", "127.0.0.1")
            .output()
            .expect("python3 runs third_party.py")
    }
}

impl Drop for Mirror {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The file of every `[[package]]` third-party.toml pins, by registry.
fn pinned_files() -> Vec<(String, String)> {
    let manifest = std::fs::read_to_string(repository().join("third-party.toml")).unwrap();
    let mut registry = String::new();
    let mut files = Vec::new();
    for line in manifest.lines() {
        let value = |key: &str| line.strip_prefix(key).map(|value| value.trim_matches('"').to_owned());
        if let Some(value) = value("registry = ") {
            registry = value;
        } else if let Some(value) = value("file = ") {
            files.push((registry.clone(), value));
        }
    }
    files
}

#[test]
fn set_up_fetches_every_pinned_package_through_its_clients_mirror_and_nowhere_else() {
    let scratch = tempfile::tempdir().unwrap();
    let mirror = Mirror::start(scratch.path(), None);
    let output = mirror.fetch(scratch.path(), &[]);
    assert!(output.status.success(), "set-up failed through the mirror:\n{}", String::from_utf8_lossy(&output.stderr));

    let pinned = pinned_files();
    let registries: std::collections::BTreeSet<&str> = pinned.iter().map(|(registry, _)| registry.as_str()).collect();
    assert_eq!(registries.into_iter().collect::<Vec<_>>(), ["crates", "debian", "npm", "pypi"]);
    let served = mirror.served();
    let cache = lore_pgtest::default_cache_dir().join("registry");
    for (registry, file) in &pinned {
        assert!(served.lines().any(|line| line == file), "{file} did not come from the mirror:\n{served}");
        let fetched = std::fs::read(scratch.path().join("cache/registry").join(registry).join(file))
            .unwrap_or_else(|error| panic!("{file} is not in the new cache: {error}"));
        assert!(
            fetched == std::fs::read(cache.join(registry).join(file)).unwrap(),
            "{file} differs from the pinned one"
        );
    }
}

#[test]
fn a_mirror_serving_another_file_than_the_pinned_one_is_refused_and_nothing_is_kept() {
    let scratch = tempfile::tempdir().unwrap();
    let gitleaks = "golang-github-gitleaks-gitleaks-dev_8.26.0-1_all.deb";
    let mirror = Mirror::start(scratch.path(), Some(gitleaks));
    let output = mirror.fetch(scratch.path(), &["gitleaks"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "an altered package was accepted");
    assert!(mirror.served().contains(gitleaks), "the altered package was never asked for:\n{stderr}");
    assert!(stderr.contains("has SHA-256") && stderr.contains("not the pinned"), "{stderr}");
    assert!(!scratch.path().join("cache/registry/debian").join(gitleaks).exists(), "the altered file was kept");
}
