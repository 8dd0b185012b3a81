use std::collections::HashMap;
use std::path::{Path, PathBuf};

use lore_calls::Strength;
use serde_json::json;

use super::runs::{self, Run};
use super::simulate::{self, Figures};

const NO_PYTEST: &str = "ModuleNotFoundError: No module named 'pytest'";
const ANY: Strength = Strength { min_sessions: 1, min_rate: 0.0 };

fn write_lines(dir: &Path, name: &str, lines: &[serde_json::Value]) -> PathBuf {
    let path = dir.join(name);
    let text: Vec<String> = lines.iter().map(ToString::to_string).collect();
    std::fs::write(&path, text.join("\n")).expect("write");
    path
}

fn run_line(id: &str, start: i64, end: i64) -> serde_json::Value {
    json!({"traj_id": id, "repo": "acme/app", "start_ts": start, "end_ts": end, "resolved": true})
}

fn step_line(id: &str, step: i64, command: &str, exit: i64, sig: Option<&str>) -> serde_json::Value {
    let output = sig.map_or("ok".to_owned(), |sig| format!("Traceback (most recent call last):\n  File \"x\"\n{sig}"));
    json!({"traj_id": id, "step": step, "command": command, "output": output, "exit_code_or_status": exit,
           "is_failure": sig.is_some(), "error_sig": sig, "sig_in_task_text": false})
}

/// Two runs ran the wrong test runner and then the repository's own; a
/// third, started after both finished, runs the wrong one again; a fourth
/// started before the third finished, so it cannot learn from it.
fn repository(dir: &Path) -> Vec<Run> {
    let mut steps = Vec::new();
    for (id, file) in [("a", "tests/a.py"), ("b", "tests/b.py"), ("c", "tests/c.py")] {
        steps.push(step_line(id, 1, &format!("cd /repo && pytest {file}"), 1, Some(NO_PYTEST)));
        steps.push(step_line(id, 2, &format!("./tests/runtests.py {id}"), 0, None));
    }
    steps.push(step_line("d", 1, "ls", 0, None));
    let runs = write_lines(
        dir,
        "runs.jsonl",
        &[run_line("a", 0, 10), run_line("b", 11, 20), run_line("c", 30, 40), run_line("d", 35, 50)],
    );
    let steps = write_lines(dir, "steps.jsonl", &steps);
    runs::read(&runs, &steps).expect("the runs read")
}

fn replay(runs: &[Run], strength: Strength) -> Figures {
    replay_with(runs, simulate::Setting::shipped(strength))
}

fn replay_with(runs: &[Run], setting: simulate::Setting) -> Figures {
    let calls: HashMap<&str, Vec<Option<lore_calls::Call>>> =
        runs.iter().map(|run| (run.id.as_str(), simulate::calls_of(run))).collect();
    let refs: Vec<&Run> = runs.iter().collect();
    simulate::replay(&refs, &calls, setting, simulate::Source::InProcess).0
}

#[test]
fn a_failure_earlier_runs_hit_is_warned_of_at_the_call_with_what_worked() {
    let dir = tempfile::tempdir().expect("tempdir");
    let figures = replay(&repository(dir.path()), ANY);
    // b and c hit what a (and b) hit before they started.
    assert_eq!((figures.runs, figures.recurring), (4, 2));
    assert_eq!((figures.covered, figures.warnings, figures.followed), (2, 2, 2));
    // b learned only from a, whose failure had a recovery: 1 of 1.
    assert_eq!(figures.recovery_named, 2);
    assert!(figures.tokens > 0);
    // c's call failed in 2 of 2 earlier runs: held before it ran, and it
    // would have failed; b's (1 of 1) came beside the result.
    assert_eq!((figures.held, figures.held_would_pass), (1, 0));
    // Each recurring failure cost its run one step before the runner that
    // passed, and both were warned of.
    assert_eq!((figures.stake_steps, figures.stake_steps_covered), (2, 2));
    assert!(figures.stake_output_tokens > 0 && figures.stake_output_tokens == figures.stake_output_tokens_covered);
    assert_eq!(figures.naive5_covered, figures.naive_covered, "one failure: five names cover what three do");
    // The naive briefing names the one failure earlier runs hit.
    assert_eq!((figures.naive_covered, figures.naive_briefed, figures.naive_followed), (2, 3, 2));
}

#[test]
fn a_strength_never_reached_leaves_the_failure_to_the_start_and_a_bar_never_reached_says_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let runs = repository(dir.path());
    let never = Strength { min_sessions: 3, min_rate: 0.0 };
    let figures = replay(&runs, never);
    // Nothing at the call; b, c and d started after a run hit the failure,
    // and their start briefings name it (one session is enough when its
    // chance is worth the tokens); b and c hit it, d did not.
    assert_eq!((figures.recurring, figures.covered, figures.warnings, figures.tokens), (2, 2, 0, 0));
    assert_eq!((figures.briefed, figures.start_labels, figures.start_labels_hit), (3, 3, 2));
    assert!(figures.start_tokens > 0);
    assert_eq!((figures.stake_steps, figures.stake_steps_covered), (2, 2));

    let silent = replay_with(&runs, simulate::Setting { min_worth: 1.5, ..simulate::Setting::shipped(never) });
    assert_eq!((silent.covered, silent.briefed, silent.start_tokens, silent.tokens), (0, 0, 0, 0));
}

#[test]
fn bad_input_names_the_file_line_and_field() {
    let dir = tempfile::tempdir().expect("tempdir");
    let runs = write_lines(dir.path(), "runs.jsonl", &[run_line("a", 0, 10), json!({"traj_id": "b", "repo": 3})]);
    let steps = write_lines(dir.path(), "steps.jsonl", &[]);
    let error = runs::read(&runs, &steps).expect_err("repo is a number").to_string();
    assert!(error.ends_with("runs.jsonl: line 2: field repo is not a string"), "{error}");

    let runs = write_lines(dir.path(), "runs.jsonl", &[json!({"traj_id": "a", "repo": "r", "start_ts": 5})]);
    let error = runs::read(&runs, &steps).expect_err("no end").to_string();
    assert!(error.ends_with("line 1: field end_ts is missing; it must be an integer"), "{error}");

    let runs = write_lines(dir.path(), "runs.jsonl", &[run_line("a", 0, 10)]);
    let steps =
        write_lines(dir.path(), "steps.jsonl", &[step_line("a", 1, "ls", 0, None), step_line("z", 1, "ls", 0, None)]);
    let error = runs::read(&runs, &steps).expect_err("unknown run").to_string();
    assert!(error.contains("steps.jsonl: line 2: field traj_id names no run"), "{error}");

    let mut step = step_line("a", 1, "ls", 0, None);
    step["exit_code_or_status"] = json!(1.5);
    let steps = write_lines(dir.path(), "steps.jsonl", &[step]);
    let error = runs::read(&runs, &steps).expect_err("a float exit code").to_string();
    assert!(error.contains("line 1: field exit_code_or_status must be"), "{error}");

    std::fs::write(dir.path().join("steps.jsonl"), "{\"traj_id\": \n").expect("write");
    let error = runs::read(&runs, &dir.path().join("steps.jsonl")).expect_err("cut JSON").to_string();
    assert!(error.ends_with("steps.jsonl: line 1 is not a JSON object"), "{error}");

    let error = runs::read(&dir.path().join("missing.jsonl"), &steps).expect_err("no file").to_string();
    assert!(error.starts_with("cannot read "), "{error}");
}
