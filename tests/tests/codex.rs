//! The real Codex CLI (npm `@openai/codex`, 0.169.0) plugs into Lore by
//! itself.
//!
//! A repository is set up with `lore init codex`, which also trusts the
//! project and Lore's hooks for Codex (without both, Codex reads neither
//! the project's MCP server nor its hooks). Codex runs headless
//! (`codex exec`) against a scripted stand-in for the Responses API, set as
//! its model provider: the model runs the failing `make test`, calls
//! Lore's `briefing` tool, fixes the file from the shell, runs the tests
//! again and finishes. The real server (auth on) and a real sidecar that
//! holds the only token receive what the hooks and the MCP server send.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use lore_agent::identity::{AgentKind, lore_session_id};
use lore_e2e::default_cache_dir;
use lore_e2e::model_stub::{Block, ModelStub};
use serde_json::{Value, json};

const PROJECT: &str = "calc";

/// A command with none of the test runner's own Lore, Codex or OpenAI
/// settings, in the test's home.
fn clean(program: &Path, home: &Path) -> Command {
    let mut command = Command::new(program);
    for (key, _) in std::env::vars() {
        if key.starts_with("LORE_") || key.starts_with("CODEX") || key.starts_with("OPENAI") {
            command.env_remove(key);
        }
    }
    command.env("HOME", home).env("CODEX_HOME", home.join(".codex"));
    command
}

/// PATH with the cached npm CLIs first: `lore init codex` asks `codex`
/// for its hooks' hashes.
fn path_with_codex() -> String {
    let npm = lore_e2e::npm_binary("codex").parent().unwrap().to_owned();
    let mut dirs = vec![npm];
    dirs.extend(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()));
    std::env::join_paths(dirs).unwrap().into_string().unwrap()
}

/// The user's Codex configuration: the stand-in as its model provider.
/// `/tmp` is no writable root of the sandbox: Codex's sandbox makes mount
/// targets (`.git`, `.codex`) in each root and may leave them behind, and
/// a `/tmp/.git` makes every temporary directory look like a repository
/// to the tests that run after.
fn codex_config(home: &Path, model: &ModelStub) {
    std::fs::create_dir_all(home.join(".codex")).unwrap();
    let config = format!(
        "model = \"stand-in\"\nmodel_provider = \"stand-in\"\n\n[model_providers.stand-in]\nname = \"Stand-in\"\nbase_url = \"{}\"\nwire_api = \"responses\"\n\n[sandbox_workspace_write]\nexclude_slash_tmp = true\nexclude_tmpdir_env_var = true\n",
        model.openai_base_url()
    );
    std::fs::write(home.join(".codex/config.toml"), config).unwrap();
}

/// Every text of a Responses API request's input.
/// `lore init codex` in `repo`, for the user of `home`.
fn lore_init_codex(home: &Path, repo: &Path, path: &str) -> std::process::Output {
    clean(&lore_e2e::workspace_binary("lore"), home)
        .args(["init", "codex", "--project", PROJECT])
        .current_dir(repo)
        .env("PATH", path)
        .output()
        .unwrap()
}

/// `codex exec --json PROMPT` in `repo`, its hooks pointed at `lore`.
async fn codex_exec(
    lore: &lore_e2e::CalcLore,
    home: &Path,
    repo: &Path,
    state: &Path,
    path: &str,
    prompt: &str,
) -> std::process::Output {
    let mut command = clean(&lore_e2e::npm_binary("codex"), home);
    command
        .args(["exec", "--json", prompt])
        .current_dir(repo)
        .env("PATH", path)
        .env("LORE_SIDECAR", lore.sidecar.endpoint())
        .env("LORE_SERVER", lore.server.endpoint())
        .env("LORE_STATE_DIR", state)
        // Debug builds beside other tests: see claude_code.rs.
        .env("LORE_HOOK_BUDGET_MS", "4000")
        .env("LORE_CACHE_DIR", default_cache_dir())
        .stdin(Stdio::null());
    tokio::task::spawn_blocking(move || command.output()).await.unwrap().unwrap()
}

fn input_text(request: &Value) -> String {
    request["input"].to_string()
}

/// The output of the last call a Responses API request reports: what the
/// model reads of the call it made last.
fn last_output(request: &Value) -> String {
    request["input"]
        .as_array()
        .into_iter()
        .flatten()
        .rfind(|item| item["type"] == "function_call_output")
        .map(Value::to_string)
        .unwrap_or_default()
}

#[tokio::test]
async fn the_real_codex_cli_is_briefed_calls_lore_and_its_failing_check_is_captured() {
    let lore = lore_e2e::CalcLore::start().await;

    let fixed =
        "def divide(a, b):\\n    if b == 0:\\n        raise ValueError(\\\"b is zero\\\")\\n    return a / b\\n";
    let model = ModelStub::start(vec![
        vec![Block::tool("exec_command", json!({"cmd": "make test"}))],
        vec![Block::tool(
            "mcp__lore__briefing",
            json!({"task": "Fix the divide bug in calc.py", "files": ["calc.py"]}),
        )],
        vec![Block::tool("exec_command", json!({"cmd": format!("printf '{fixed}' > calc.py")}))],
        vec![Block::tool("exec_command", json!({"cmd": "make test"}))],
        vec![Block::Text("Fixed: divide raises ValueError when b is zero, and the tests pass.".into())],
    ])
    .await;

    let work = tempfile::tempdir().unwrap();
    let (home, repo, state): (PathBuf, PathBuf, PathBuf) =
        (work.path().join("home"), work.path().join("calc"), work.path().join("state"));
    std::fs::create_dir_all(&repo).unwrap();
    lore_e2e::calc_repository(&repo);
    codex_config(&home, &model);
    let path = path_with_codex();

    // A hook the repository brought itself, shaped like Lore's: trusting
    // it is the user's call, not `lore init`'s.
    std::fs::create_dir_all(repo.join(".codex")).unwrap();
    let planted =
        format!("{} hook post-tool-use --project calc; touch planted", lore_e2e::workspace_binary("lore").display());
    let planted_hooks = json!({"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": planted}]}]}});
    std::fs::write(repo.join(".codex/hooks.json"), planted_hooks.to_string()).unwrap();
    // Set-up in one command: the project's server and hooks, and the
    // user's trust in both.
    let init = lore_init_codex(&home, &repo, &path);
    let said = String::from_utf8_lossy(&init.stdout).into_owned();
    assert!(init.status.success(), "{said}{}", String::from_utf8_lossy(&init.stderr));
    assert!(said.contains("Lore's hooks trusted for Codex"), "{said}");
    let user_config = std::fs::read_to_string(home.join(".codex/config.toml")).unwrap();
    assert_eq!(user_config.matches("trusted_hash = \"sha256:").count(), 8, "{user_config}");
    // The planted hook is the first PreToolUse group; Lore's own comes after it.
    assert!(!user_config.contains(":pre_tool_use:0:"), "the planted hook is left to the user: {user_config}");
    assert!(user_config.contains(":pre_tool_use:1:0\""), "Lore's pre-tool-use hook is trusted: {user_config}");

    let listed = clean(&lore_e2e::npm_binary("codex"), &home)
        .args(["mcp", "list"])
        .current_dir(&repo)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let listed = String::from_utf8_lossy(&listed.stdout).into_owned();
    let line =
        listed.lines().find(|line| line.starts_with("lore")).unwrap_or_else(|| panic!("codex mcp list: {listed}"));
    assert!(line.contains("mcp --project calc --agent codex") && line.contains("enabled"), "{line}");

    let run = codex_exec(&lore, &home, &repo, &state, &path, "Fix the divide bug in calc.py").await;
    let events = String::from_utf8_lossy(&run.stdout).into_owned();
    let hook_log = std::fs::read_to_string(state.join("hooks.log")).unwrap_or_default();
    assert!(run.status.success(), "codex exec failed: {events}\n{}", String::from_utf8_lossy(&run.stderr));
    assert!(!repo.join("planted").exists(), "Codex ran the planted hook, which nobody trusted");
    let thread = events
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .find(|event| event["type"] == "thread.started")
        .and_then(|event| event["thread_id"].as_str().map(str::to_owned))
        .unwrap_or_else(|| panic!("no thread in codex's events: {events}"));
    let session = lore_session_id(AgentKind::Codex, &thread);

    // What the model was shown: the SessionStart briefing with the lesson,
    // Lore's tools in their namespace, and the briefing tool's answer.
    let requests = model.main_requests();
    assert!(requests.len() >= 5, "{} requests: {events}", requests.len());
    assert!(
        input_text(&requests[0]).contains(lore_e2e::CALC_LESSON),
        "the hooks' briefing is in the first request; hook log: {hook_log}"
    );
    let lore_tools: Vec<String> = requests[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|tool| tool["name"] == "mcp__lore")
        .flat_map(|tool| tool["tools"].as_array().cloned().unwrap_or_default())
        .filter_map(|tool| tool["name"].as_str().map(str::to_owned))
        .collect();
    for expected in ["briefing", "search_lessons", "report_failure", "acknowledge_warning"] {
        assert!(lore_tools.iter().any(|tool| tool == expected), "{expected} is not offered: {lore_tools:?}");
    }
    let answered = requests[2]["input"]
        .as_array()
        .unwrap()
        .iter()
        .any(|item| item["type"] == "function_call_output" && item.to_string().contains("PAT-DIV"));
    assert!(answered, "the briefing tool's answer reaches the model: {}", input_text(&requests[2]));

    // What Lore recorded: the MCP call, both runs typed as test runs with
    // their outcomes (Codex gives the hook no exit code: it is read from
    // Codex's rollout), and the failure captured, then passed.
    let pool = &lore.database.pool;
    let results = lore.task_results(session, 2).await;
    assert_eq!(results, Some(vec![(1, false, 1), (2, true, 0)]), "hook log: {hook_log}");
    let calls: Vec<(String, String, String, Value)> = sqlx::query_as(
        "SELECT coalesce(context->>'tool', ''), action_type, outcome, context FROM actions
          WHERE session_id = $1 AND context ? 'tool' ORDER BY chain_seq",
    )
    .bind(session)
    .fetch_all(pool)
    .await
    .unwrap();
    let runs: Vec<(&str, &str)> = calls
        .iter()
        .filter(|call| call.3["details"]["runner"] == "make test")
        .map(|call| (call.1.as_str(), call.2.as_str()))
        .collect();
    assert_eq!(runs, [("test_run", "failure"), ("test_run", "success")], "{calls:?}\nhook log: {hook_log}");
    assert!(calls.iter().any(|call| call.0 == "briefing"), "the MCP server recorded its tool call: {calls:?}");
    let (supervisor, check): (String, String) = sqlx::query_as(
        "SELECT s.supervisor_type, f.failed_checks->0->>'name' FROM qa_failures f JOIN sessions s USING (session_id)
          WHERE f.session_id = $1",
    )
    .bind(session)
    .fetch_one(pool)
    .await
    .unwrap();
    assert_eq!((supervisor.as_str(), check.as_str()), ("codex", "make test"));
}

const WRONG_RUNNER: &str = "python3 -m pytest_lore_absent test_calc.py";
/// What only the wrong runner's own output says (Lore's warning names the
/// failure by its template, `<*> No module named pytest_lore_absent`).
const RAN: &str = "python3: No module named pytest_lore_absent";

/// Earlier, the wrong runner failed and the repository's own passed; a
/// fresh Codex session making the same call is told, with that call, what
/// worked; a call that never failed brings no Lore text.
#[tokio::test]
async fn the_real_codex_cli_is_warned_at_the_call_naming_what_worked() {
    let lore = lore_e2e::CalcLore::start().await;
    let work = tempfile::tempdir().unwrap();
    let (home, repo, state): (PathBuf, PathBuf, PathBuf) =
        (work.path().join("home"), work.path().join("calc"), work.path().join("state"));
    std::fs::create_dir_all(&repo).unwrap();
    lore_e2e::calc_repository_with_runner(&repo);
    let path = path_with_codex();
    let earlier = ModelStub::start(vec![
        vec![Block::tool("exec_command", json!({"cmd": WRONG_RUNNER}))],
        vec![Block::tool("exec_command", json!({"cmd": "./runtests.sh"}))],
        vec![Block::Text("The repository's runner passes.".into())],
    ])
    .await;
    // The user's config names the model and trusts Lore's hooks: `lore
    // init` after each new model, since a config written anew trusts nothing.
    let configure = |model: &ModelStub| {
        codex_config(&home, model);
        let init = lore_init_codex(&home, &repo, &path);
        assert!(init.status.success(), "{}", String::from_utf8_lossy(&init.stderr));
    };
    configure(&earlier);
    let run = codex_exec(&lore, &home, &repo, &state, &path, "Run the tests").await;
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let hook_log = || std::fs::read_to_string(state.join("hooks.log")).unwrap_or_default();
    assert!(lore.shell_calls_recorded(2).await, "the earlier commands reach the server; hook log: {}", hook_log());

    let fresh = ModelStub::start(vec![
        vec![Block::tool("exec_command", json!({"cmd": "ls"}))],
        vec![Block::tool("exec_command", json!({"cmd": WRONG_RUNNER}))],
        vec![Block::Text("Done.".into())],
    ])
    .await;
    configure(&fresh);
    let run = codex_exec(&lore, &home, &repo, &state, &path, "Run the tests").await;
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let requests = fresh.main_requests();
    assert!(requests.len() >= 3, "{} requests; hook log: {}", requests.len(), hook_log());
    let after_ls = input_text(&requests[1]);
    assert!(!after_ls.contains("earlier sessions of this project"), "a call that never failed: {after_ls}");
    let after_runner = input_text(&requests[2]);
    assert!(
        after_runner.contains(lore_e2e::WHAT_WORKED) && after_runner.contains("failed in 1 of 1 earlier sessions"),
        "one earlier session is weak evidence: the warning comes beside the result; hook log: {}; call index: \
         {:?}\n{after_runner}",
        hook_log(),
        std::fs::read_dir(state.join("calls")).map(|dir| dir
            .flatten()
            .map(|entry| std::fs::read_to_string(entry.path()).unwrap_or_default())
            .collect::<Vec<_>>())
    );
    let output = last_output(&requests[2]);
    assert!(output.contains(RAN), "the call ran: {output}");

    // Two sessions of two failed that way: the next session's first such
    // call is held before it runs; the same call made again runs.
    assert!(lore.command_recorded(WRONG_RUNNER, 2).await, "the second session's call; hook log: {}", hook_log());
    let held = ModelStub::start(vec![
        vec![Block::tool("exec_command", json!({"cmd": WRONG_RUNNER}))],
        vec![Block::tool("exec_command", json!({"cmd": WRONG_RUNNER}))],
        vec![Block::Text("Done.".into())],
    ])
    .await;
    configure(&held);
    let run = codex_exec(&lore, &home, &repo, &state, &path, "Run the tests").await;
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let requests = held.main_requests();
    assert!(requests.len() >= 3, "{} requests; hook log: {}", requests.len(), hook_log());
    let refused = last_output(&requests[1]);
    assert!(
        refused.contains(lore_e2e::HELD)
            && refused.contains("failed in 2 of 2 earlier sessions here")
            && refused.contains("what worked after: `runtests.sh`")
            && !refused.contains(RAN),
        "the model reads the warning in place of the call's output; hook log: {}\n{refused}",
        hook_log()
    );
    let again = last_output(&requests[2]);
    assert!(again.contains(RAN) && !again.contains(lore_e2e::HELD), "the same call again runs: {again}");
    assert!(lore.command_recorded(WRONG_RUNNER, 3).await, "the call made again is recorded");

    // A person guards that call: Codex's next session is refused before it
    // runs, and the model reads why and what to run instead.
    lore.guard(WRONG_RUNNER, "This repository has no pytest plugin.", "./runtests.sh").await;
    let guarded = ModelStub::start(vec![
        vec![Block::tool("exec_command", json!({"cmd": WRONG_RUNNER}))],
        vec![Block::Text("Refused; I will use the repository's runner.".into())],
    ])
    .await;
    configure(&guarded);
    let run = codex_exec(&lore, &home, &repo, &state, &path, "Run the tests").await;
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let requests = guarded.main_requests();
    assert!(requests.len() >= 2, "{} requests; hook log: {}", requests.len(), hook_log());
    let refused = input_text(&requests[1]);
    assert!(
        refused.contains("Lore guard") && refused.contains("Run instead: `./runtests.sh`"),
        "the model reads the guard's refusal; hook log: {}\n{refused}",
        hook_log()
    );
    assert!(!refused.contains(RAN), "the refused call never ran: {refused}");
    assert!(lore.guard_refusal_recorded().await, "the refusal is in the ledger; hook log: {}", hook_log());
}
