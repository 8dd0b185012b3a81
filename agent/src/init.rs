//! `lore init claude-code|codex|gemini`: plugs Lore into a repository for an
//! agent, in one command.
//!
//! For Claude Code it merges the MCP server into `.mcp.json` and the hooks
//! into `.claude/settings.json` (both meant to be committed, so every
//! clone gets them), and approves the server for this user in
//! `~/.claude/settings.json`, which is what Claude Code would otherwise ask
//! at the first start (a repository cannot approve its own servers). For
//! Codex it merges the server into `.codex/config.toml` and the hooks into
//! `.codex/hooks.json`, and marks the repository trusted in the user's
//! `~/.codex/config.toml` (`$CODEX_HOME`), without which Codex reads no
//! project configuration at all. For Gemini CLI it merges both into
//! `.gemini/settings.json`, the hooks under Gemini's own event names
//! (BeforeAgent, BeforeTool, AfterTool, AfterAgent) with its timeouts in milliseconds,
//! and trusts the folder in `~/.gemini/trustedFolders.json`, without which
//! Gemini disables the folder's servers.
//!
//! A merge touches Lore's entries and nothing else: other servers and
//! hooks stay, keys keep their order, and running it twice changes
//! nothing. `--dry-run` shows the change as a diff and writes nothing.

use std::path::{Path, PathBuf};

use crate::AgentError;
use crate::hooks::HookEvent;
use crate::identity::{self, AgentKind};
use crate::ordered_json::Json;

/// The agents `lore init` knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum InitTarget {
    ClaudeCode,
    Codex,
    Gemini,
}

#[derive(Debug, Clone, clap::Args)]
pub struct InitArgs {
    /// The agent to set up.
    pub agent: InitTarget,
    /// The Lore project (default: the repository's name).
    #[arg(long)]
    pub project: Option<String>,
    /// The repository (default: the one holding the current directory).
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// Show the change as a diff and write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// How the agent runs lore (default: `lore` when it is on PATH, else
    /// this binary's full path).
    #[arg(long)]
    pub command: Option<String>,
    /// Claude Code: do not approve the MCP server in ~/.claude/settings.json
    /// (Claude Code then asks at its first start). Codex: do not mark the
    /// repository trusted in ~/.codex/config.toml (Codex then ignores its
    /// .codex/config.toml until you trust it). Gemini CLI: do not trust the
    /// folder in ~/.gemini/trustedFolders.json (Gemini then disables Lore).
    #[arg(long)]
    pub no_approve: bool,
    /// A regex over shell commands that marks one more QA check for the
    /// hooks (repeatable).
    #[arg(long = "check-pattern")]
    pub check_patterns: Vec<String>,
}

/// One file as it is and as `lore init` would leave it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    pub path: PathBuf,
    /// `None`: the file does not exist yet.
    pub before: Option<String>,
    pub after: String,
}

impl FileChange {
    pub fn changed(&self) -> bool {
        self.before.as_deref() != Some(self.after.as_str())
    }

    /// A unified diff of the change, for `--dry-run`.
    pub fn diff(&self) -> String {
        let before = self.before.clone().unwrap_or_default();
        let name = self.path.display().to_string();
        similar::TextDiff::from_lines(&before, &self.after)
            .unified_diff()
            .header(&if self.before.is_some() { name.clone() } else { "/dev/null".into() }, &name)
            .to_string()
    }
}

/// What `lore init` would write, file by file; nothing is written.
pub fn plan(args: &InitArgs, home: Option<&Path>) -> Result<Vec<FileChange>, AgentError> {
    let (root, setup) = setup(args)?;
    match args.agent {
        InitTarget::ClaudeCode => {
            let mut changes = vec![
                edit_json(&root.join(".mcp.json"), |config| setup.claude_mcp(config))?,
                edit_json(&root.join(".claude/settings.json"), |settings| setup.claude_hooks(settings))?,
            ];
            if !args.no_approve {
                let Some(home) = home else {
                    return Err(AgentError::Setup(
                        "HOME is not set, so the MCP server cannot be approved for you: give --no-approve".into(),
                    ));
                };
                changes.push(edit_json(&home.join(".claude/settings.json"), approve_lore)?);
            }
            Ok(changes)
        }
        InitTarget::Codex => {
            let mut changes = vec![
                edit_toml(&root.join(".codex/config.toml"), |config| setup.codex_mcp(config))?,
                edit_json(&root.join(".codex/hooks.json"), |hooks| setup.codex_hooks(hooks))?,
            ];
            if !args.no_approve {
                let codex_home = codex_home(home)?;
                // Codex keys projects by their absolute path.
                let key = root.canonicalize().unwrap_or_else(|_| root.clone()).display().to_string();
                changes.push(edit_toml(&codex_home.join("config.toml"), |config| trust_project(config, &key))?);
            }
            Ok(changes)
        }
        InitTarget::Gemini => {
            let mut changes = vec![edit_json(&root.join(".gemini/settings.json"), |settings| {
                setup.gemini_mcp(settings)?;
                setup.merge_hooks(settings, GEMINI_HOOKS, AgentKind::Gemini)
            })?];
            if !args.no_approve {
                // Gemini CLI disables a folder's MCP servers (and hooks)
                // until the user trusts the folder.
                let trusted = std::env::var_os("GEMINI_CLI_TRUSTED_FOLDERS_PATH")
                    .filter(|path| !path.is_empty())
                    .map(PathBuf::from)
                    .or_else(|| home.map(|home| home.join(".gemini/trustedFolders.json")));
                let Some(trusted) = trusted else {
                    return Err(AgentError::Setup(
                        "HOME is not set, so the repository cannot be trusted for Gemini CLI: give --no-approve".into(),
                    ));
                };
                let key = root.canonicalize().unwrap_or_else(|_| root.clone()).display().to_string();
                changes.push(edit_json(&trusted, |folders| trust_folder(folders, &key))?);
            }
            Ok(changes)
        }
    }
}

/// What trusting Lore's Codex hooks came to.
#[derive(Debug)]
pub enum CodexHookTrust {
    /// The user's `config.toml` as it is and with Lore's hooks trusted.
    Change(FileChange),
    /// Codex could not be asked for the hooks' hashes (why): it asks the
    /// user to review them at its next start.
    Unasked(String),
}

/// Trusts Lore's hooks in the repository's `.codex/hooks.json` for Codex,
/// as its hook review would; run after [`apply`] wrote them, since Codex
/// hashes what is on disk (see [`crate::codex_trust`]).
pub fn trust_codex_hooks(args: &InitArgs, home: Option<&Path>) -> Result<CodexHookTrust, AgentError> {
    let (root, setup) = setup(args)?;
    let root = root.canonicalize().unwrap_or(root);
    let codex_home = codex_home(home)?;
    let Some(codex) = on_path("codex") else {
        return Ok(CodexHookTrust::Unasked("codex is not on PATH".into()));
    };
    let ours = format!("{}:", root.join(".codex/hooks.json").display());
    // Exactly the commands `lore init` writes: a repository's own hook
    // that merely starts with `lore hook` is the user's to review.
    let written: Vec<String> =
        CODEX_HOOKS.iter().map(|(_, event, _, _)| setup.hook_command(*event, AgentKind::Codex)).collect();
    let hooks: Vec<_> = crate::codex_trust::list_hooks(&codex, &codex_home, &root)?
        .into_iter()
        .filter(|hook| hook.key.starts_with(&ours) && written.contains(&hook.command) && !hook.trusted)
        .collect();
    let change = edit_toml(&codex_home.join("config.toml"), |config| crate::codex_trust::trust(config, &hooks))?;
    Ok(CodexHookTrust::Change(change))
}

/// The repository and what `lore init` writes into it.
fn setup(args: &InitArgs) -> Result<(PathBuf, Setup), AgentError> {
    let root = repository(args)?;
    let project = match &args.project {
        Some(project) => check_project(project)?,
        None => identity::project_name(&root),
    };
    let command = args.command.clone().unwrap_or_else(lore_command);
    Ok((root, Setup { command, project, check_patterns: args.check_patterns.clone() }))
}

/// The repository `lore init` works on: `--dir`'s, or the current
/// directory's.
fn repository(args: &InitArgs) -> Result<PathBuf, AgentError> {
    let start = match &args.dir {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().map_err(|error| AgentError::Setup(format!("no current directory: {error}")))?,
    };
    Ok(identity::repository_root(&start).unwrap_or(start))
}

/// Codex's home: `$CODEX_HOME`, else `~/.codex`.
fn codex_home(home: Option<&Path>) -> Result<PathBuf, AgentError> {
    std::env::var_os("CODEX_HOME")
        .filter(|dir| !dir.is_empty())
        .map(PathBuf::from)
        .or_else(|| home.map(|home| home.join(".codex")))
        .ok_or_else(|| {
            AgentError::Setup(
                "HOME is not set, so the repository cannot be marked trusted for Codex: give --no-approve".into(),
            )
        })
}

/// The first `name` on PATH.
fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|dir| dir.join(name)).find(|candidate| candidate.is_file())
}

/// Writes the changed files (each through a temporary file and a rename).
pub fn apply(changes: &[FileChange]) -> Result<(), AgentError> {
    for change in changes.iter().filter(|change| change.changed()) {
        let dir = change.path.parent().unwrap_or(Path::new("."));
        let failed =
            |error: std::io::Error| AgentError::Setup(format!("cannot write {}: {error}", change.path.display()));
        std::fs::create_dir_all(dir).map_err(failed)?;
        let temporary = dir.join(format!(
            ".{}.lore-init",
            change.path.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default()
        ));
        std::fs::write(&temporary, &change.after).map_err(failed)?;
        std::fs::rename(&temporary, &change.path).map_err(failed)?;
    }
    Ok(())
}

fn check_project(project: &str) -> Result<String, AgentError> {
    let valid = !project.is_empty()
        && project.len() <= 128
        && project.bytes().all(|byte| byte.is_ascii_alphanumeric() || b"._-".contains(&byte));
    if valid {
        Ok(project.to_owned())
    } else {
        Err(AgentError::invalid("--project", "must be 1 to 128 characters of A-Z, a-z, 0-9, '.', '_' or '-'"))
    }
}

/// `lore` when the `lore` on PATH is this binary, else this binary's path.
fn lore_command() -> String {
    let Ok(current) = std::env::current_exe().and_then(|path| path.canonicalize()) else {
        return "lore".into();
    };
    match on_path("lore").and_then(|path| path.canonicalize().ok()) {
        Some(found) if found == current => "lore".into(),
        _ => current.display().to_string(),
    }
}

/// A word for a shell command line, quoted when it needs to be.
fn shell_word(word: &str) -> String {
    if !word.is_empty() && word.bytes().all(|byte| byte.is_ascii_alphanumeric() || b"/._-=:@+,".contains(&byte)) {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// What the configuration says, whatever the agent.
struct Setup {
    command: String,
    project: String,
    check_patterns: Vec<String>,
}

/// The events each agent runs hooks for, with the `lore hook` event that
/// answers it, its matcher, and the agent's timeout in seconds (above the
/// hook's own budget, which it keeps by itself).
const CLAUDE_HOOKS: &[(&str, HookEvent, Option<&str>, u64)] = &[
    ("SessionStart", HookEvent::SessionStart, None, 10),
    ("UserPromptSubmit", HookEvent::UserPromptSubmit, None, 10),
    ("PreToolUse", HookEvent::PreToolUse, Some("Bash"), 5),
    ("PostToolUse", HookEvent::PostToolUse, Some("*"), 5),
    ("PostToolUseFailure", HookEvent::PostToolUse, Some("*"), 5),
    ("Stop", HookEvent::Stop, None, 5),
    ("SessionEnd", HookEvent::SessionEnd, None, 5),
    ("SubagentStart", HookEvent::SubagentStart, None, 5),
    ("SubagentStop", HookEvent::SubagentStop, None, 5),
];
/// Gemini CLI's names for the same moments; its timeouts are in
/// milliseconds.
const GEMINI_HOOKS: &[(&str, HookEvent, Option<&str>, u64)] = &[
    ("SessionStart", HookEvent::SessionStart, None, 10_000),
    ("BeforeAgent", HookEvent::UserPromptSubmit, None, 10_000),
    ("BeforeTool", HookEvent::PreToolUse, Some("run_shell_command"), 5_000),
    ("AfterTool", HookEvent::PostToolUse, Some("*"), 5_000),
    ("AfterAgent", HookEvent::Stop, None, 5_000),
    ("SessionEnd", HookEvent::SessionEnd, None, 5_000),
];
/// Codex starts an MCP server with a bare environment (PATH, HOME and the
/// like): these pass through, so the server reaches the Lore the user's
/// shell names, as Lore's hooks (which Codex runs with the whole
/// environment) do.
const CODEX_MCP_ENV: &[&str] =
    &["LORE_SERVER", "LORE_SIDECAR", "LORE_TOKEN", "LORE_AGENT_ID", "LORE_SESSION_ID", "LORE_STATE_DIR"];
/// Codex matches tool names with a regex.
/// Its SessionEnd hooks get at most 3 s.
const CODEX_HOOKS: &[(&str, HookEvent, Option<&str>, u64)] = &[
    ("SessionStart", HookEvent::SessionStart, None, 10),
    ("UserPromptSubmit", HookEvent::UserPromptSubmit, None, 10),
    ("PreToolUse", HookEvent::PreToolUse, Some(".*"), 5),
    ("PostToolUse", HookEvent::PostToolUse, Some(".*"), 5),
    ("Stop", HookEvent::Stop, None, 5),
    ("SubagentStart", HookEvent::SubagentStart, None, 5),
    ("SubagentStop", HookEvent::SubagentStop, None, 5),
    ("SessionEnd", HookEvent::SessionEnd, None, 3),
];

impl Setup {
    fn mcp_args(&self, agent: AgentKind) -> Vec<String> {
        let mut args = vec!["mcp".to_owned(), "--project".to_owned(), self.project.clone()];
        if agent != AgentKind::ClaudeCode {
            args.extend(["--agent".to_owned(), agent.as_str().to_owned()]);
        }
        args
    }

    fn hook_command(&self, event: HookEvent, agent: AgentKind) -> String {
        let mut words = vec![shell_word(&self.command), "hook".into(), event.arg_name().into()];
        words.extend(["--project".into(), shell_word(&self.project)]);
        if agent != AgentKind::ClaudeCode {
            words.extend(["--agent".into(), agent.as_str().into()]);
        }
        for pattern in &self.check_patterns {
            words.extend(["--check-pattern".into(), shell_word(pattern)]);
        }
        words.join(" ")
    }

    fn gemini_mcp(&self, settings: &mut Json) -> Result<(), String> {
        let servers = member(settings, "mcpServers")?;
        let mut entry = Json::object();
        let fields = entry.as_object_mut().expect("object");
        fields.insert("command".into(), Json::String(self.command.clone()));
        fields.insert(
            "args".into(),
            Json::Array(self.mcp_args(AgentKind::Gemini).into_iter().map(Json::String).collect()),
        );
        servers.as_object_mut().expect("member is an object").insert(crate::mcp::SERVER_NAME.into(), entry);
        Ok(())
    }

    fn claude_mcp(&self, config: &mut Json) -> Result<(), String> {
        let servers = member(config, "mcpServers")?;
        let mut entry = Json::object();
        let fields = entry.as_object_mut().expect("object");
        fields.insert("command".into(), Json::String(self.command.clone()));
        fields.insert(
            "args".into(),
            Json::Array(self.mcp_args(AgentKind::ClaudeCode).into_iter().map(Json::String).collect()),
        );
        servers.as_object_mut().expect("member is an object").insert(crate::mcp::SERVER_NAME.into(), entry);
        Ok(())
    }

    fn claude_hooks(&self, settings: &mut Json) -> Result<(), String> {
        self.merge_hooks(settings, CLAUDE_HOOKS, AgentKind::ClaudeCode)
    }

    fn codex_hooks(&self, hooks: &mut Json) -> Result<(), String> {
        self.merge_hooks(hooks, CODEX_HOOKS, AgentKind::Codex)
    }

    /// Puts one Lore hook in each event: one already there (same command)
    /// stays as it is; an older Lore hook of the event is replaced; every
    /// other hook stays.
    fn merge_hooks(
        &self,
        settings: &mut Json,
        events: &[(&str, HookEvent, Option<&str>, u64)],
        agent: AgentKind,
    ) -> Result<(), String> {
        let hooks = member(settings, "hooks")?;
        let hooks = hooks.as_object_mut().expect("member is an object");
        for (name, event, matcher, timeout) in events {
            let command = self.hook_command(*event, agent);
            let groups = hooks.entry((*name).to_owned()).or_insert_with(|| Json::Array(Vec::new()));
            let Some(groups) = groups.as_array_mut() else {
                return Err(format!("hooks.{name} is not a list"));
            };
            let present = groups.iter().any(|group| {
                group.get("hooks").is_some_and(|entries| match entries {
                    Json::Array(entries) => entries
                        .iter()
                        .any(|entry| entry.get("command").and_then(Json::as_str) == Some(command.as_str())),
                    _ => false,
                })
            });
            if present {
                continue;
            }
            let ours = |entry: &Json| {
                entry.get("command").and_then(Json::as_str).is_some_and(|other| is_lore_hook(other, *event))
            };
            for group in groups.iter_mut() {
                if let Some(Json::Array(entries)) = group.as_object_mut().and_then(|group| group.get_mut("hooks")) {
                    entries.retain(|entry| !ours(entry));
                }
            }
            groups.retain(|group| !matches!(group.get("hooks"), Some(Json::Array(entries)) if entries.is_empty()));
            // In the order the agents' own documentation writes them.
            let mut hook = Json::object();
            let fields = hook.as_object_mut().expect("object");
            fields.insert("type".into(), Json::String("command".into()));
            fields.insert("command".into(), Json::String(command));
            fields.insert("timeout".into(), Json::Number((*timeout).into()));
            let mut group = Json::object();
            let fields = group.as_object_mut().expect("object");
            if let Some(matcher) = matcher {
                fields.insert("matcher".into(), Json::String((*matcher).to_owned()));
            }
            fields.insert("hooks".into(), Json::Array(vec![hook]));
            groups.push(group);
        }
        Ok(())
    }

    fn codex_mcp(&self, config: &mut toml_edit::DocumentMut) -> Result<(), String> {
        let servers = config.entry("mcp_servers").or_insert_with(|| {
            // Only its sub-tables are written: [mcp_servers.lore].
            let mut table = toml_edit::Table::new();
            table.set_implicit(true);
            toml_edit::Item::Table(table)
        });
        let Some(servers) = servers.as_table_like_mut() else {
            return Err("mcp_servers is not a table".into());
        };
        let mut lore = toml_edit::Table::new();
        lore.insert("command", toml_edit::value(self.command.clone()));
        let mut args = toml_edit::Array::new();
        for arg in self.mcp_args(AgentKind::Codex) {
            args.push(arg);
        }
        lore.insert("args", toml_edit::value(args));
        lore.insert("env_vars", toml_edit::value(CODEX_MCP_ENV.iter().copied().collect::<toml_edit::Array>()));
        let unchanged = servers.get(crate::mcp::SERVER_NAME).and_then(|item| item.as_table()).is_some_and(|table| {
            table.get("command").and_then(|item| item.as_str()) == Some(self.command.as_str())
                && ["args", "env_vars"].iter().all(|key| {
                    table.get(key).map(|item| item.to_string()) == lore.get(key).map(|item| item.to_string())
                })
        });
        if !unchanged {
            servers.insert(crate::mcp::SERVER_NAME, toml_edit::Item::Table(lore));
        }
        Ok(())
    }
}

/// A Lore hook for `event`, whatever path its `lore` has.
fn is_lore_hook(command: &str, event: HookEvent) -> bool {
    let mut words = command.split_whitespace();
    let program = words.next().unwrap_or_default().trim_matches('\'');
    let program_is_lore = Path::new(program).file_name().is_some_and(|name| name == "lore");
    program_is_lore && words.next() == Some("hook") && words.next() == Some(event.arg_name())
}

/// The member `key` of a JSON object, created empty when missing.
fn member<'a>(value: &'a mut Json, key: &str) -> Result<&'a mut Json, String> {
    let Some(object) = value.as_object_mut() else {
        return Err("the file is not a JSON object".into());
    };
    let member = object.entry(key.to_owned()).or_insert_with(Json::object);
    if member.as_object_mut().is_none() {
        return Err(format!("{key} is not an object"));
    }
    Ok(member)
}

/// Marks the repository at `key` (its absolute path) trusted for Codex, as
/// Codex's own prompt would: `[projects."<path>"] trust_level = "trusted"`.
fn trust_project(config: &mut toml_edit::DocumentMut, key: &str) -> Result<(), String> {
    let projects = config.entry("projects").or_insert_with(|| {
        let mut table = toml_edit::Table::new();
        table.set_implicit(true);
        toml_edit::Item::Table(table)
    });
    let Some(projects) = projects.as_table_mut() else {
        return Err("projects is not a table".into());
    };
    let project = projects.entry(key).or_insert_with(|| toml_edit::Item::Table(toml_edit::Table::new()));
    let Some(project) = project.as_table_mut() else {
        return Err(format!("projects.\"{key}\" is not a table"));
    };
    if project.get("trust_level").and_then(|item| item.as_str()) != Some("trusted") {
        project.insert("trust_level", toml_edit::value("trusted"));
    }
    Ok(())
}

/// Trusts the folder at `key` for Gemini CLI, as its own prompt would:
/// `{"<path>": "TRUST_FOLDER"}` in `~/.gemini/trustedFolders.json`. A
/// folder trusted already (or through its parent) is left as it is.
fn trust_folder(folders: &mut Json, key: &str) -> Result<(), String> {
    let Some(object) = folders.as_object_mut() else {
        return Err("the file is not a JSON object".into());
    };
    let trusted = object.get(key).and_then(Json::as_str).is_some_and(|level| level.starts_with("TRUST_"));
    if !trusted {
        object.insert(key.to_owned(), Json::String("TRUST_FOLDER".into()));
    }
    Ok(())
}

/// Approves Lore's MCP server (by name) for the user, as Claude Code's own
/// prompt would.
fn approve_lore(settings: &mut Json) -> Result<(), String> {
    let Some(object) = settings.as_object_mut() else {
        return Err("the file is not a JSON object".into());
    };
    let approved = object.entry("enabledMcpjsonServers".to_owned()).or_insert_with(|| Json::Array(Vec::new()));
    let Some(approved) = approved.as_array_mut() else {
        return Err("enabledMcpjsonServers is not a list".into());
    };
    if !approved.iter().any(|name| name.as_str() == Some(crate::mcp::SERVER_NAME)) {
        approved.push(Json::String(crate::mcp::SERVER_NAME.into()));
    }
    Ok(())
}

fn read(path: &Path) -> Result<Option<String>, AgentError> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(AgentError::Setup(format!("cannot read {}: {error}", path.display()))),
    }
}

fn edit_json(path: &Path, edit: impl FnOnce(&mut Json) -> Result<(), String>) -> Result<FileChange, AgentError> {
    let before = read(path)?;
    let mut value = match before.as_deref().map(str::trim) {
        None | Some("") => Json::object(),
        Some(text) => serde_json::from_str(text).map_err(|error| {
            AgentError::Setup(format!("{} is not valid JSON ({error}); fix it first", path.display()))
        })?,
    };
    edit(&mut value).map_err(|reason| AgentError::Setup(format!("{}: {reason}", path.display())))?;
    let mut after = value.to_pretty();
    // Unchanged content keeps the file's own formatting.
    if let Some(text) = &before
        && serde_json::from_str::<Json>(text).ok().as_ref() == Some(&value)
    {
        after = text.clone();
    }
    Ok(FileChange { path: path.to_owned(), before, after })
}

fn edit_toml(
    path: &Path,
    edit: impl FnOnce(&mut toml_edit::DocumentMut) -> Result<(), String>,
) -> Result<FileChange, AgentError> {
    let before = read(path)?;
    let mut document: toml_edit::DocumentMut =
        before.as_deref().unwrap_or_default().parse().map_err(|error| {
            AgentError::Setup(format!("{} is not valid TOML ({error}); fix it first", path.display()))
        })?;
    edit(&mut document).map_err(|reason| AgentError::Setup(format!("{}: {reason}", path.display())))?;
    Ok(FileChange { path: path.to_owned(), before, after: document.to_string() })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(agent: InitTarget, dir: &Path) -> InitArgs {
        InitArgs {
            agent,
            project: Some("calc".into()),
            dir: Some(dir.to_owned()),
            dry_run: false,
            command: Some("/opt/lore tools/lore".into()),
            no_approve: false,
            check_patterns: Vec::new(),
        }
    }

    #[test]
    fn claude_code_is_set_up_keeping_what_was_there_and_a_second_run_changes_nothing() {
        let repo = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(repo.path().join(".git")).unwrap();
        std::fs::create_dir_all(repo.path().join(".claude")).unwrap();
        std::fs::write(repo.path().join(".mcp.json"), "{\"mcpServers\": {\"github\": {\"command\": \"gh-mcp\"}}}")
            .unwrap();
        let settings = r#"{
  "permissions": {"allow": ["Bash(ls:*)"]},
  "hooks": {
    "PostToolUse": [{"matcher": "Edit", "hooks": [{"type": "command", "command": "prettier --write"}]}],
    "Stop": [{"hooks": [{"type": "command", "command": "/old/path/lore hook stop --project old"}]}]
  }
}
"#;
        std::fs::write(repo.path().join(".claude/settings.json"), settings).unwrap();

        let changes = plan(&args(InitTarget::ClaudeCode, repo.path()), Some(home.path())).unwrap();
        assert_eq!(changes.len(), 3);
        apply(&changes).unwrap();

        let mcp: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(repo.path().join(".mcp.json")).unwrap()).unwrap();
        assert_eq!(mcp["mcpServers"]["github"]["command"], "gh-mcp", "other servers stay");
        assert_eq!(mcp["mcpServers"]["lore"]["command"], "/opt/lore tools/lore");
        assert_eq!(mcp["mcpServers"]["lore"]["args"], serde_json::json!(["mcp", "--project", "calc"]));

        let written = std::fs::read_to_string(repo.path().join(".claude/settings.json")).unwrap();
        assert!(written.find("\"permissions\"").unwrap() < written.find("\"hooks\"").unwrap(), "key order kept");
        let settings: serde_json::Value = serde_json::from_str(&written).unwrap();
        let post = settings["hooks"]["PostToolUse"].as_array().unwrap();
        assert_eq!(post[0]["hooks"][0]["command"], "prettier --write", "other hooks stay");
        assert_eq!(post[1]["matcher"], "*");
        assert_eq!(post[1]["hooks"][0]["command"], "'/opt/lore tools/lore' hook post-tool-use --project calc");
        let stop = settings["hooks"]["Stop"].as_array().unwrap();
        assert_eq!(stop.len(), 1, "the old Lore hook is replaced, not doubled: {stop:?}");
        assert_eq!(stop[0]["hooks"][0]["command"], "'/opt/lore tools/lore' hook stop --project calc");
        for event in ["SessionStart", "UserPromptSubmit", "PostToolUseFailure", "SessionEnd"] {
            assert!(settings["hooks"][event].is_array(), "{event}");
        }
        let approved: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(home.path().join(".claude/settings.json")).unwrap()).unwrap();
        assert_eq!(approved["enabledMcpjsonServers"], serde_json::json!(["lore"]));

        let again = plan(&args(InitTarget::ClaudeCode, repo.path()), Some(home.path())).unwrap();
        assert!(again.iter().all(|change| !change.changed()), "a second run changes nothing: {again:#?}");
    }

    #[test]
    fn a_dry_run_shows_a_diff_and_a_broken_file_is_named() {
        let repo = tempfile::tempdir().unwrap();
        let mut arguments = args(InitTarget::ClaudeCode, repo.path());
        arguments.no_approve = true;
        let changes = plan(&arguments, None).unwrap();
        assert_eq!(changes.len(), 2);
        let diff = changes[0].diff();
        assert!(diff.starts_with("--- /dev/null"), "{diff}");
        assert!(diff.contains("+    \"lore\": {"), "{diff}");
        assert!(!repo.path().join(".mcp.json").exists(), "planning writes nothing");

        std::fs::write(repo.path().join(".mcp.json"), "{ not json").unwrap();
        let error = plan(&arguments, None).unwrap_err().to_string();
        assert!(error.contains(".mcp.json is not valid JSON"), "{error}");
        std::fs::write(repo.path().join(".mcp.json"), "[]").unwrap();
        let error = plan(&arguments, None).unwrap_err().to_string();
        assert!(error.contains("not a JSON object"), "{error}");
        arguments.project = Some("bad project".into());
        assert!(plan(&arguments, None).unwrap_err().to_string().starts_with("--project"));
    }

    #[test]
    fn codex_is_set_up_in_its_own_files_and_a_second_run_changes_nothing() {
        let repo = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(repo.path().join(".codex")).unwrap();
        std::fs::write(
            repo.path().join(".codex/config.toml"),
            "# mine\nmodel = \"o4\"\n\n[mcp_servers.docs]\ncommand = \"docs-mcp\"\n",
        )
        .unwrap();
        let home = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(home.path().join(".codex")).unwrap();
        std::fs::write(home.path().join(".codex/config.toml"), "model = \"gpt-5\"\n").unwrap();
        let changes = plan(&args(InitTarget::Codex, repo.path()), Some(home.path())).unwrap();
        apply(&changes).unwrap();
        // Codex reads a project's configuration only once the user trusts it.
        let user = std::fs::read_to_string(home.path().join(".codex/config.toml")).unwrap();
        let root = repo.path().canonicalize().unwrap().display().to_string();
        assert!(user.starts_with("model = \"gpt-5\""), "{user}");
        assert!(user.contains(&format!("[projects.\"{root}\"]\ntrust_level = \"trusted\"")), "{user}");
        let config = std::fs::read_to_string(repo.path().join(".codex/config.toml")).unwrap();
        assert!(config.starts_with("# mine\nmodel = \"o4\""), "{config}");
        assert!(config.contains("[mcp_servers.docs]"), "{config}");
        assert!(config.contains("[mcp_servers.lore]"), "{config}");
        assert!(config.contains("args = [\"mcp\", \"--project\", \"calc\", \"--agent\", \"codex\"]"), "{config}");
        let hooks: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(repo.path().join(".codex/hooks.json")).unwrap()).unwrap();
        assert_eq!(hooks["hooks"]["PostToolUse"][0]["matcher"], ".*");
        assert!(hooks["hooks"]["SessionStart"][0]["hooks"][0]["command"].as_str().unwrap().ends_with("--agent codex"));
        let again = plan(&args(InitTarget::Codex, repo.path()), Some(home.path())).unwrap();
        assert!(again.iter().all(|change| !change.changed()), "{again:#?}");
        let mut untrusted = args(InitTarget::Codex, repo.path());
        untrusted.no_approve = true;
        assert_eq!(plan(&untrusted, None).unwrap().len(), 2, "--no-approve leaves the user's file alone");
        let error = plan(&args(InitTarget::Codex, repo.path()), None).unwrap_err().to_string();
        assert!(error.contains("--no-approve") || std::env::var_os("CODEX_HOME").is_some(), "{error}");
    }

    #[test]
    fn gemini_gets_the_server_and_the_hooks_in_its_own_names_and_units() {
        let repo = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(repo.path().join(".gemini")).unwrap();
        std::fs::write(
            repo.path().join(".gemini/settings.json"),
            "{\"theme\": \"GitHub\", \"hooks\": {\"AfterTool\": [{\"matcher\": \"write_file\", \"hooks\": [{\"type\": \"command\", \"command\": \"prettier\"}]}]}}",
        )
        .unwrap();
        let home = tempfile::tempdir().unwrap();
        let changes = plan(&args(InitTarget::Gemini, repo.path()), Some(home.path())).unwrap();
        apply(&changes).unwrap();
        let trusted: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(home.path().join(".gemini/trustedFolders.json")).unwrap())
                .unwrap();
        assert_eq!(trusted[repo.path().canonicalize().unwrap().display().to_string()], "TRUST_FOLDER");
        let settings: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(repo.path().join(".gemini/settings.json")).unwrap()).unwrap();
        assert_eq!(settings["theme"], "GitHub");
        assert_eq!(
            settings["mcpServers"]["lore"]["args"],
            serde_json::json!(["mcp", "--project", "calc", "--agent", "gemini"])
        );
        let hooks = &settings["hooks"];
        assert_eq!(hooks["AfterTool"][0]["hooks"][0]["command"], "prettier", "the project's own hook stays");
        let lore = |event: &str| hooks[event].as_array().unwrap().last().unwrap()["hooks"][0].clone();
        assert!(
            lore("AfterTool")["command"].as_str().unwrap().contains("hook post-tool-use --project calc --agent gemini")
        );
        assert_eq!(lore("AfterTool")["timeout"], 5000, "milliseconds");
        assert!(lore("BeforeAgent")["command"].as_str().unwrap().contains("hook user-prompt-submit"));
        assert!(lore("AfterAgent")["command"].as_str().unwrap().contains("hook stop"));
        assert!(hooks.get("UserPromptSubmit").is_none() && hooks.get("PostToolUse").is_none(), "no Claude names");
        let again = plan(&args(InitTarget::Gemini, repo.path()), Some(home.path())).unwrap();
        assert!(again.iter().all(|change| !change.changed()), "{again:#?}");
    }
}
