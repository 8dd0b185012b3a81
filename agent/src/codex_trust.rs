//! Trusting Lore's hooks for Codex.
//!
//! Codex (0.169) runs a hook of a project's `.codex/hooks.json` only once
//! the user has reviewed it: its `/hooks` screen records each trusted hook
//! in the user's `config.toml` as `[hooks.state."<file>:<event>:<group>:<handler>"]`
//! `trusted_hash = "sha256:..."`, and a hook whose definition changes needs
//! review again. Until then a headless `codex exec` silently skips it.
//!
//! The hash is Codex's own and not a published format, so Lore does not
//! reproduce it: it asks Codex, through `codex app-server`'s `hooks/list`
//! (the list the review screen shows, with each hook's key and current
//! hash), and records those of Lore's own hooks, as the review would.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

use crate::AgentError;

/// How long Codex may take to start and list its hooks.
const LIST_TIMEOUT: Duration = Duration::from_secs(30);

/// One hook as Codex lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedHook {
    /// Codex's key: `<hooks.json path>:<event>:<group>:<handler>`.
    pub key: String,
    pub command: String,
    /// `sha256:...`, as Codex computes it now.
    pub current_hash: String,
    pub trusted: bool,
}

/// The hooks Codex finds for `repo`, asked of the `codex` binary with
/// `CODEX_HOME` at `codex_home`.
pub fn list_hooks(codex: &Path, codex_home: &Path, repo: &Path) -> Result<Vec<ListedHook>, AgentError> {
    let failed = |what: String| AgentError::Setup(format!("cannot ask Codex for its hooks: {what}"));
    let mut child = Command::new(codex)
        .arg("app-server")
        .env("CODEX_HOME", codex_home)
        .current_dir(repo)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|error| failed(format!("{} app-server would not start ({error})", codex.display())))?;
    let requests = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"clientInfo": {"name": "lore-init", "version": env!("CARGO_PKG_VERSION")}}}),
        json!({"jsonrpc": "2.0", "method": "initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "hooks/list", "params": {"cwds": [repo.display().to_string()]}}),
    ];
    let mut stdin = child.stdin.take().expect("stdin is piped");
    let stdout = child.stdout.take().expect("stdout is piped");
    let (sender, receiver) = std::sync::mpsc::channel();
    // A reader thread, so a Codex that never answers costs the timeout,
    // not a hang.
    std::thread::spawn(move || {
        let answer = BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
            .filter_map(|line| serde_json::from_str::<Value>(&line).ok())
            .find(|message| message.get("id") == Some(&json!(2)));
        let _ = sender.send(answer);
    });
    let written = requests.iter().try_for_each(|request| writeln!(stdin, "{request}"));
    let answer = match written {
        Ok(()) => receiver.recv_timeout(LIST_TIMEOUT).ok().flatten(),
        Err(_) => None,
    };
    let _ = child.kill();
    let _ = child.wait();
    let answer = answer.ok_or_else(|| failed(format!("no answer to hooks/list within {}s", LIST_TIMEOUT.as_secs())))?;
    if let Some(error) = answer.get("error") {
        return Err(failed(format!("hooks/list failed: {error}")));
    }
    Ok(hooks_of(&answer))
}

fn hooks_of(answer: &Value) -> Vec<ListedHook> {
    let folders = answer.pointer("/result/data").and_then(Value::as_array).cloned().unwrap_or_default();
    folders
        .iter()
        .filter_map(|folder| folder.get("hooks")?.as_array().cloned())
        .flatten()
        .filter_map(|hook| {
            let text = |key: &str| hook.get(key).and_then(Value::as_str).map(str::to_owned);
            Some(ListedHook {
                key: text("key")?,
                command: text("command").unwrap_or_default(),
                current_hash: text("currentHash")?,
                trusted: text("trustStatus").as_deref() == Some("trusted"),
            })
        })
        .collect()
}

/// Records `hooks` as trusted in a Codex `config.toml`; other hooks'
/// states and every other key stay as they are.
pub fn trust(config: &mut toml_edit::DocumentMut, hooks: &[ListedHook]) -> Result<(), String> {
    if hooks.is_empty() {
        return Ok(());
    }
    let implicit = || {
        let mut table = toml_edit::Table::new();
        table.set_implicit(true);
        toml_edit::Item::Table(table)
    };
    let section = config.entry("hooks").or_insert_with(implicit);
    let section = section.as_table_like_mut().ok_or("hooks is not a table")?;
    let states = section.entry("state").or_insert(implicit());
    let states = states.as_table_like_mut().ok_or("hooks.state is not a table")?;
    for hook in hooks {
        let state = states.entry(&hook.key).or_insert(toml_edit::Item::Table(toml_edit::Table::new()));
        let state = state.as_table_like_mut().ok_or_else(|| format!("hooks.state.\"{}\" is not a table", hook.key))?;
        if state.get("trusted_hash").and_then(|item| item.as_str()) != Some(hook.current_hash.as_str()) {
            state.insert("trusted_hash", toml_edit::value(hook.current_hash.clone()));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listed_hooks_are_read_and_trusted_beside_the_users_own() {
        let answer = json!({"id": 2, "result": {"data": [{"cwd": "/r", "hooks": [
            {"key": "/r/.codex/hooks.json:stop:0:0", "command": "lore hook stop --project r --agent codex",
             "currentHash": "sha256:ab", "trustStatus": "untrusted"},
            {"key": "/r/.codex/hooks.json:stop:0:1", "command": "other", "currentHash": "sha256:cd", "trustStatus": "trusted"},
            {"key": "no hash"}
        ]}]}});
        let hooks = hooks_of(&answer);
        assert_eq!(hooks.len(), 2);
        assert!(!hooks[0].trusted && hooks[1].trusted);
        let mut config: toml_edit::DocumentMut =
            "model = \"gpt-5\"\n\n[hooks.state.\"/elsewhere:stop:0:0\"]\ntrusted_hash = \"sha256:00\"\n"
                .parse()
                .unwrap();
        trust(&mut config, &hooks[..1]).unwrap();
        let text = config.to_string();
        assert!(text.starts_with("model = \"gpt-5\""), "{text}");
        let parsed: toml::Table = toml::from_str(&text).unwrap();
        let states = parsed["hooks"]["state"].as_table().unwrap();
        assert_eq!(states["/r/.codex/hooks.json:stop:0:0"]["trusted_hash"].as_str(), Some("sha256:ab"));
        assert_eq!(states["/elsewhere:stop:0:0"]["trusted_hash"].as_str(), Some("sha256:00"));
        // Twice: the same text.
        trust(&mut config, &hooks[..1]).unwrap();
        assert_eq!(config.to_string(), text);
        let mut broken: toml_edit::DocumentMut = "hooks = 3\n".parse().unwrap();
        assert_eq!(trust(&mut broken, &hooks[..1]).unwrap_err(), "hooks is not a table");
    }
}
