//! What Lore costs an agent (`make bench`): each hook's wall time as a whole
//! process, spawned and fed its JSON the way Claude Code does, with 10,000
//! entries in the project; and the MCP tool-call overhead over the direct
//! gRPC call on the same route (through the sidecar).
//!
//! Baselines in the same run, interleaved round by round with what they
//! are compared to: spawning `/bin/true` and `lore --version` (what any
//! hook process costs before it does anything), and the direct gRPC calls
//! the MCP tools make.
//!
//! `LORE_BENCH_BEFORE=/path/to/an/earlier/lore` adds that binary's
//! post-tool-use to each round, on the same inputs and the same sidecar
//! (its own state directory): today's against the earlier, in one run.
//!
//! `cargo build --release --workspace --bins` first (make bench does).

use std::io::Write as _;
use std::process::{Command, Stdio};
use std::time::Instant;

use hdrhistogram::Histogram;
use lore_domain::knowledge::embed;
use lore_e2e::{ServerOptions, ServerProcess, TestDatabase, default_cache_dir};
use lore_proto::v1 as proto;
use lore_proto::v1::action_service_client::ActionServiceClient;
use lore_proto::v1::knowledge_service_client::KnowledgeServiceClient;
use lore_server::config::Config;
use lore_server::testing::corpus::{Corpus, fill};
use rmcp::ServiceExt as _;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::{ConfigureCommandExt as _, TokioChildProcess};
use serde_json::json;

const PROJECT: &str = "bench-agent";
const AGENT: &str = "bench-agent-1";
const ENTRIES: usize = 10_000;
const HOOK_ROUNDS: usize = 200;
const WARMUP: usize = 10;
/// Guards in the bench index: each call is matched against every one.
const GUARDS: usize = 50;

fn histogram() -> Histogram<u64> {
    Histogram::<u64>::new(3).expect("histogram")
}

fn millis(histogram: &Histogram<u64>, quantile: f64) -> f64 {
    histogram.value_at_quantile(quantile) as f64 / 1000.0
}

fn row(name: &str, histogram: &Histogram<u64>) {
    println!("| {name} | {:.2} ms | {:.2} ms |", millis(histogram, 0.5), millis(histogram, 0.99));
}

/// Spawns `program args`, writes `stdin`, waits: the wall time an agent
/// waits for a hook.
fn timed_process(program: &std::path::Path, args: &[&str], stdin: &[u8], env: &[(&str, String)]) -> u64 {
    let begin = Instant::now();
    let mut child = Command::new(program)
        .args(args)
        .envs(env.iter().map(|(key, value)| (*key, value.as_str())))
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    let _ = child.stdin.take().expect("stdin").write_all(stdin);
    let status = child.wait().expect("wait");
    assert!(status.success(), "{program:?} {args:?} exited {status:?}");
    begin.elapsed().as_micros() as u64
}

/// Writes the project's call index into `state`: sessions that ran a mix of
/// commands, some failing in several ways, one of them the wrong test
/// runner followed by the right one. Returns the number of sessions.
fn call_index(state: &std::path::Path) -> u32 {
    use lore_calls::{Call, CallMemory, Outcome};
    const SESSIONS: usize = 400;
    let mut memory = CallMemory::new();
    for session in 0..SESSIONS {
        let mut calls = Vec::new();
        for step in 0..30 {
            let (command, failure) = match step % 6 {
                0 => (format!("cat src/module_{}.py", session % 50), None),
                1 => (format!("grep -rn symbol_{step} src"), None),
                2 => (
                    format!("python3 reproduce_{session}.py"),
                    (session % 3 == 0).then(|| format!("NameError: name 'x{}' is not defined", session % 40)),
                ),
                3 => (format!("sed -i 's/a/b/' src/module_{}.py", session % 50), None),
                4 => (
                    format!("cargo build -p crate_{}", session % 20),
                    (session % 5 == 0).then(|| format!("error[E0{}]: mismatched types", 300 + session % 30)),
                ),
                _ => ("git diff".to_owned(), None),
            };
            calls.push(Call { command, outcome: failure.map_or(Outcome::Passed, Outcome::Failed) });
        }
        calls.push(Call {
            command: format!("pytest tests/test_{session}.py"),
            outcome: Outcome::Failed("ModuleNotFoundError: No module named <*>".into()),
        });
        calls.push(Call { command: "./runtests.sh".to_owned(), outcome: Outcome::Passed });
        memory.learn(&calls);
    }
    let index = lore_agent::call_index::CallIndex {
        project: PROJECT.to_owned(),
        refreshed_at: std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs(),
        refreshed_for: uuid::Uuid::nil(),
        memory: memory.pruned(),
        // Guards a busy project might hold: each call is matched against all.
        guards: (0..GUARDS)
            .map(|guard| lore_calls::Guard {
                guard_id: uuid::Uuid::now_v7().to_string(),
                shape: if guard == 0 { "make deploy".to_owned() } else { format!("tool{guard} <arg> --flag{guard}") },
                reason: "Deploys go through the release pipeline.".to_owned(),
                alternative: "gh workflow run release".to_owned(),
            })
            .collect(),
        fixes: Default::default(),
        call_warnings: Default::default(),
    };
    lore_agent::call_index::save(&lore_agent::call_index::path(state, PROJECT), &index).unwrap();
    SESSIONS as u32
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let database = TestDatabase::new().await.unwrap();
        let server = ServerProcess::start(ServerOptions::with_database(&database.url)).await.unwrap();
        let spool = tempfile::tempdir_in(default_cache_dir()).unwrap();
        let sidecar = ServerProcess::start_sidecar(&server.endpoint(), spool.path(), &[]).await.unwrap();
        let embedder = embed::from_config(&Config::default().knowledge.embedding, &default_cache_dir())
            .expect("the local model (`make tools`)");
        let corpus = Corpus::load();
        fill(&database.pool, PROJECT, &corpus, &embedder, &default_cache_dir(), 0, ENTRIES).await;
        let error = "AssertionError: read the file line by line returned 2 lines, expected 3";
        lore_server::testing::seed_failed_session(server.channel().await, PROJECT, AGENT, error).await;
        println!("# What Lore costs an agent ({} cores)", std::thread::available_parallelism().map_or(0, |n| n.get()));

        // ---- hooks, each a whole process ----
        let lore = lore_e2e::workspace_binary("lore");
        let state = tempfile::tempdir().unwrap();
        // A repository with its own CLAUDE.md: each session start also
        // brings it to the project's standing instructions.
        let repo = tempfile::tempdir().unwrap();
        let git = std::process::Command::new("git").args(["init", "-q"]).current_dir(repo.path()).status().unwrap();
        assert!(git.success());
        std::fs::write(repo.path().join("CLAUDE.md"), "# Working here\n\nRun the tests first.\n").unwrap();
        let cwd = repo.path().display().to_string();
        let env_of = |agent: &str| {
            [
                ("LORE_SIDECAR", sidecar.endpoint()),
                ("LORE_SERVER", server.endpoint()),
                ("LORE_STATE_DIR", state.path().display().to_string()),
                ("LORE_AGENT_ID", agent.to_owned()),
                ("LORE_PROJECT", PROJECT.to_owned()),
            ]
        };
        // Each session start is a new session of the agent whose last
        // session failed (so its briefing searches); the other hooks work
        // in one session of another agent, so they do not become that last
        // session.
        let (starting, working_env) = (env_of(AGENT), env_of("bench-agent-worker"));
        let working = "0193b1c2-0000-7000-8000-000000000001";
        let input = |event: &str, session: &str, extra: serde_json::Value| {
            let mut input = json!({"session_id": session, "cwd": cwd, "hook_event_name": event});
            input.as_object_mut().unwrap().extend(extra.as_object().cloned().unwrap_or_default());
            input.to_string().into_bytes()
        };
        let read = input("PostToolUse", working, json!({"tool_name": "Read", "tool_input": {"file_path": format!("{cwd}/src/lib.rs")}, "tool_response": {"type": "text"}, "duration_ms": 3}));
        let failing = input(
            "PostToolUseFailure",
            working,
            json!({"tool_name": "Bash", "tool_input": {"command": "cargo test"}, "error": "Exit code 101\ntest parse ... FAILED\nthread 'parse' panicked at src/lib.rs:9:5", "duration_ms": 900}),
        );
        let prompt = input("UserPromptSubmit", working, json!({"prompt": "read the file line by line and count the lines"}));
        let stop = input("Stop", working, json!({"last_assistant_message": "Done."}));
        let true_binary = std::path::Path::new("/bin/true");
        // With the sidecar and the server both down, the write waits in the
        // outbox (the local spool) of a state directory of its own.
        let down = format!("http://127.0.0.1:{}", lore_e2e::free_port());
        let outbox_state = tempfile::tempdir().unwrap();
        let lore_down = [
            ("LORE_SIDECAR", down.clone()),
            ("LORE_SERVER", down.clone()),
            ("LORE_STATE_DIR", outbox_state.path().display().to_string()),
            ("LORE_AGENT_ID", "bench-agent-offline".to_owned()),
            ("LORE_PROJECT", PROJECT.to_owned()),
        ];
        // The call index the pre-tool-use hook answers from, as a session
        // start would have written it in that offline state directory.
        let call_sessions = call_index(outbox_state.path());
        let warned_call = |round: usize| {
            let session = format!("0193b1c2-0000-7000-a000-{round:012}");
            input("PreToolUse", &session, json!({"tool_name": "Bash", "tool_input": {"command": "pytest tests/test_parse.py"}}))
        };
        let quiet_call = input("PreToolUse", working, json!({"tool_name": "Bash", "tool_input": {"command": "ls -la src"}}));
        let guarded_call = input("PreToolUse", working, json!({"tool_name": "Bash", "tool_input": {"command": "make deploy"}}));
        let (mut pre_warned, mut pre_quiet, mut pre_refused) = (histogram(), histogram(), histogram());
        let before = std::env::var_os("LORE_BENCH_BEFORE").map(std::path::PathBuf::from);
        let before_state = tempfile::tempdir().unwrap();
        let before_env = [
            ("LORE_SIDECAR", sidecar.endpoint()),
            ("LORE_SERVER", server.endpoint()),
            ("LORE_STATE_DIR", before_state.path().display().to_string()),
            ("LORE_AGENT_ID", "bench-agent-before".to_owned()),
            ("LORE_PROJECT", PROJECT.to_owned()),
        ];
        let rows: [(&str, &str); 7] = [
            ("baseline: /bin/true, spawned and waited", ""),
            ("baseline: lore --version", ""),
            ("post-tool-use (a Read, logged through the sidecar)", "post-tool-use"),
            ("post-tool-use (a failing cargo test: logged and captured)", "post-tool-use"),
            ("session-start (a new session: start, briefing with 10,000 entries, CLAUDE.md synced)", "session-start"),
            ("user-prompt-submit (briefing for the prompt, given items left out)", "user-prompt-submit"),
            ("stop (the session ends)", "stop"),
        ];
        let mut latencies: Vec<Histogram<u64>> = rows.iter().map(|_| histogram()).collect();
        let (mut offline, mut before_read, mut before_failing) = (histogram(), histogram(), histogram());
        for round in 0..HOOK_ROUNDS + WARMUP {
            let fresh = format!("0193b1c2-0000-7000-9000-{round:012}");
            let start = input("SessionStart", &fresh, json!({"source": "startup"}));
            let runs: [(&std::path::Path, Vec<&str>, &[u8]); 7] = [
                (true_binary, vec![], b""),
                (&lore, vec!["--version"], b""),
                (&lore, vec!["hook", "post-tool-use"], &read),
                (&lore, vec!["hook", "post-tool-use"], &failing),
                (&lore, vec!["hook", "session-start"], &start),
                (&lore, vec!["hook", "user-prompt-submit"], &prompt),
                (&lore, vec!["hook", "stop"], &stop),
            ];
            for (index, (program, args, stdin)) in runs.iter().enumerate() {
                let env = if args.contains(&"session-start") { &starting } else { &working_env };
                let took = timed_process(program, args, stdin, env);
                if round >= WARMUP {
                    latencies[index].record(took).unwrap();
                }
            }
            let took = timed_process(&lore, &["hook", "post-tool-use"], &failing, &lore_down);
            if round >= WARMUP {
                offline.record(took).unwrap();
            }
            // A new session each round: a warning is given once per session.
            let warned_took = timed_process(&lore, &["hook", "pre-tool-use"], &warned_call(round), &lore_down);
            let quiet_took = timed_process(&lore, &["hook", "pre-tool-use"], &quiet_call, &lore_down);
            let refused_took = timed_process(&lore, &["hook", "pre-tool-use"], &guarded_call, &lore_down);
            if round >= WARMUP {
                pre_warned.record(warned_took).unwrap();
                pre_quiet.record(quiet_took).unwrap();
                pre_refused.record(refused_took).unwrap();
            }
            if let Some(before) = &before {
                let read_took = timed_process(before, &["hook", "post-tool-use"], &read, &before_env);
                let failing_took = timed_process(before, &["hook", "post-tool-use"], &failing, &before_env);
                if round >= WARMUP {
                    before_read.record(read_took).unwrap();
                    before_failing.record(failing_took).unwrap();
                }
            }
        }
        let log = std::fs::read_to_string(state.path().join("hooks.log")).unwrap_or_default();
        let over_budget = log.lines().filter(|line| line.contains("gave up after its budget")).count();
        println!("\n## Hooks as whole processes, {HOOK_ROUNDS} rounds, {ENTRIES} entries, through a sidecar\n");
        println!("| hook | p50 | p99 |\n|---|---:|---:|");
        for ((name, _), histogram) in rows.iter().zip(&latencies) {
            row(name, histogram);
        }
        row("post-tool-use (a failing cargo test) with the sidecar and the server down: kept in the outbox", &offline);
        let indexed = format!("an index of {call_sessions} sessions and {GUARDS} guards, the sidecar and the server down");
        row(&format!("pre-tool-use, a call that failed before: warned ({indexed})"), &pre_warned);
        row(&format!("pre-tool-use, a call that never failed: nothing said ({indexed})"), &pre_quiet);
        row(&format!("pre-tool-use, a guarded call: refused ({indexed})"), &pre_refused);
        if before.is_some() {
            row("the earlier lore (LORE_BENCH_BEFORE): post-tool-use, a Read", &before_read);
            row("the earlier lore (LORE_BENCH_BEFORE): post-tool-use, a failing cargo test", &before_failing);
        }
        let kept = std::fs::read_dir(outbox_state.path().join("outbox")).map_or(0, |entries| entries.count());
        println!("\nThe outbox holds {kept} file(s) after the offline rounds (its segments and acknowledgement ledger).");
        println!("\nHook runs that gave up at their budget: {over_budget}; other problems logged: {}.", log.lines().count() - over_budget);
        for line in log.lines() {
            println!("    {line}");
        }

        // ---- MCP over stdio against the direct gRPC call, same route ----
        let transport = TokioChildProcess::new(tokio::process::Command::new(&lore).configure(|command| {
            command.args(["mcp", "--project", PROJECT]).envs(working_env.iter().map(|(key, value)| (*key, value.as_str())));
        }))
        .unwrap();
        let mcp = ().serve(transport).await.expect("lore mcp starts");
        let mut knowledge = KnowledgeServiceClient::new(sidecar.channel().await);
        let mut actions = ActionServiceClient::new(sidecar.channel().await);
        let session = lore_e2e::start_session(&mut actions, PROJECT, AGENT).await;
        let (mut mcp_search, mut grpc_search, mut mcp_log, mut grpc_log) = (histogram(), histogram(), histogram(), histogram());
        // The server caches query vectors, so the two searches of a call
        // ask different questions, each never asked before: both pay the
        // query's embedding, as an agent's new question does.
        let mcp_calls = corpus.questions.len() / 2 - WARMUP;
        for call in 0..mcp_calls + WARMUP {
            let question = corpus.questions[2 * call].clone();
            let arguments = json!({"query": question, "limit": 5}).as_object().cloned().unwrap();
            let begin = Instant::now();
            let result = mcp.call_tool(CallToolRequestParams::new("search_lessons").with_arguments(arguments)).await.unwrap();
            let mcp_took = begin.elapsed().as_micros() as u64;
            assert_ne!(result.is_error, Some(true), "{result:?}");
            let request = proto::SearchRequest {
                project: PROJECT.into(),
                query: Some(proto::SearchQuery {
                    text: corpus.questions[2 * call + 1].clone(),
                    limit: 5,
                    ..Default::default()
                }),
                ..Default::default()
            };
            let begin = Instant::now();
            knowledge.search(request).await.unwrap();
            let grpc_took = begin.elapsed().as_micros() as u64;

            let arguments = json!({"action_type": "note", "outcome": "success", "summary": format!("step {call}")});
            let begin = Instant::now();
            mcp.call_tool(CallToolRequestParams::new("log_action").with_arguments(arguments.as_object().cloned().unwrap()))
                .await
                .unwrap();
            let mcp_log_took = begin.elapsed().as_micros() as u64;
            let action = lore_server::testing::bench_action(&session, call);
            let begin = Instant::now();
            actions.log_action(proto::LogActionRequest { action: Some(action) }).await.unwrap();
            let grpc_log_took = begin.elapsed().as_micros() as u64;
            if call >= WARMUP {
                mcp_search.record(mcp_took).unwrap();
                grpc_search.record(grpc_took).unwrap();
                mcp_log.record(mcp_log_took).unwrap();
                grpc_log.record(grpc_log_took).unwrap();
            }
        }
        mcp.cancel().await.unwrap();
        println!("\n## MCP tool calls over stdio vs the direct gRPC call through the same sidecar, {mcp_calls} calls, one client\n");
        println!("| call | p50 | p99 |\n|---|---:|---:|");
        row("MCP search_lessons (5 hits; the call also recorded as an action)", &mcp_search);
        row("baseline: gRPC Search through the sidecar (5 hits)", &grpc_search);
        row("MCP log_action (the action and the call's own record: two spooled writes)", &mcp_log);
        row("baseline: gRPC LogAction through the sidecar", &grpc_log);
        println!(
            "\nMCP overhead at p50: search_lessons +{:.2} ms ({:.2}x), log_action +{:.2} ms ({:.2}x).",
            millis(&mcp_search, 0.5) - millis(&grpc_search, 0.5),
            millis(&mcp_search, 0.5) / millis(&grpc_search, 0.5),
            millis(&mcp_log, 0.5) - millis(&grpc_log, 0.5),
            millis(&mcp_log, 0.5) / millis(&grpc_log, 0.5),
        );
    });
}
