//! `lore hook post-tool-use`: the tool call as a typed action; a check that
//! fails is captured as a QA failure of the session's task, and the same
//! check passing later is its fix.

use super::input::HookInput;
use super::state::{LockedState, OpenCheck};
use super::subagents::spawn_details;
use super::{Hook, record, staleness, typed};
use crate::AgentError;
use crate::checks::{self, Checks};
use crate::requests::{self, FailedCheck};
use lore_proto::v1 as proto;
use lore_spool::entry::Write;
use serde_json::json;
use uuid::Uuid;

impl Hook<'_> {
    pub(super) async fn post_tool_use(&self, input: &HookInput) -> Result<(), AgentError> {
        if input.tool_name.starts_with(&format!("mcp__{}__", self.args.mcp_name)) {
            return Ok(());
        }
        let failed = input.tool_failed();
        // Only a shell command can be a check: the patterns are compiled
        // for it alone, not for every Read.
        let check = match input.command() {
            Some(command) if record::is_shell(&input.tool_name) && !input.is_interrupt => {
                self.checks()?.check_of(command).map(|check| (check, checks::fold(command)))
            }
            _ => None,
        };
        let edited = record::edited_files(input);
        let typed = self.recognizers().recognize(input);
        let mut locked = self.state().await?;
        if !locked.state.started {
            self.start_session("", None).await?;
            locked.state.started = true;
        }
        let mut context = self.call_context(input, failed, check.as_ref().map(|(name, _)| name.as_str()));
        // A commit's trailers (`Fixes #12`) name the issue from then on.
        if let Some(issue) = typed.as_ref().and_then(|typed| typed.details.get("issue")?.as_str()) {
            locked.state.issue = issue.to_owned();
        }
        if let Some(epic) = typed.as_ref().and_then(|typed| typed.details.get("epic")?.as_str())
            && self.args.epic.is_none()
        {
            locked.state.epic = epic.to_owned();
        }
        // Inside a sub-agent, its `subagent` action is the parent; the tool
        // call that spawned a sub-agent is that action.
        let parent_action_id = locked.state.subagents.get(&input.agent_id).map(|spawn| spawn.action_id);
        let mut action_id = Uuid::now_v7();
        let action_type = match typed {
            Some(mut typed) => {
                let agent_type = typed.details.get("subagent_type").and_then(serde_json::Value::as_str);
                if typed.action_type == "subagent" {
                    let child = input.spawned_agent_id();
                    if let Some(spawn) = locked.state.spawned_by(child, agent_type) {
                        action_id = spawn.action_id;
                        typed.details.extend(spawn_details(&spawn));
                    } else if let Some(child) = child {
                        locked.state.launch_subagent(child, agent_type.unwrap_or_default(), action_id);
                    }
                }
                if let Some((runner, _)) = check.as_ref().filter(|_| typed.action_type == "test_run") {
                    typed.details.insert("runner".into(), json!(runner));
                }
                context["details"] = serde_json::Value::Object(typed.details);
                typed.action_type
            }
            None => "tool_call".to_owned(),
        };
        let action = proto::Action {
            action_id: action_id.to_string(),
            session_id: self.session_id.to_string(),
            project: self.identity.project.clone(),
            agent_id: self.identity.agent_id.clone(),
            action_type,
            issue_id: locked.state.issue.clone(),
            epic_id: self.args.epic.clone().unwrap_or_else(|| locked.state.epic.clone()),
            parent_action_id: parent_action_id.map(|id| id.to_string()).unwrap_or_default(),
            category: record::category(&input.tool_name),
            context: Some(lore_proto::json::to_struct(&context)),
            outcome: if failed { proto::Outcome::Failure } else { proto::Outcome::Success } as i32,
            error: if failed { record::error_text(input) } else { String::new() },
            duration_ms: input.duration_ms.unwrap_or(0),
            occurred_at: Some(requests::now()),
            ..Default::default()
        };
        self.send(vec![Write::Action(action)]).await?;
        locked.state.record_edits(&edited);
        if let Some((name, key)) = check {
            self.check_ran(&mut locked, input, &name, key, failed).await?;
        }
        self.save(locked).await
    }

    /// The action's context: the tool, what it was given, what it answered
    /// when it did not fail, its exit code and the check it was.
    fn call_context(&self, input: &HookInput, failed: bool, check: Option<&str>) -> serde_json::Value {
        let mut context = json!({
            "tool": input.tool_name,
            "input": record::input_summary(input),
            "agent_session_id": self.agent_session,
        });
        if !failed {
            context["response"] = record::response_summary(input);
        }
        // Kept for the call index: exit 1 of a grep found nothing.
        if let Some(code) = input.exit_code().filter(|_| input.command().is_some()) {
            context["exit_code"] = json!(code);
        }
        if let Some(name) = check {
            context["check"] = json!(name);
        }
        context
    }

    /// A check ran: a failure is captured (or, when it was failing already,
    /// is one more failed attempt); a pass after a failure is its fix.
    pub(super) async fn check_ran(
        &self,
        locked: &mut LockedState,
        input: &HookInput,
        name: &str,
        key: String,
        failed: bool,
    ) -> Result<(), AgentError> {
        let state = &mut locked.state;
        // A pass says something only as the task's first result or as the
        // fix of its last failing check.
        let pass_is_news = !state.passed && state.open_checks.is_empty();
        match (state.open_checks.get_mut(&key), failed) {
            (None, false) if !pass_is_news => Ok(()),
            (None, false) => {
                state.passed = true;
                self.task_result(name, None).await
            }
            (None, true) => {
                let output = input.tool_output();
                let failure_id = Uuid::now_v7();
                let task = proto::Task {
                    task_id: requests::session_task(self.session_id),
                    title: state.task_title.clone(),
                    files: state.edited.clone(),
                    ..Default::default()
                };
                let failed = FailedCheck { name, output: &output, exit_code: input.exit_code().unwrap_or(1) };
                let capture = requests::capture_failure(
                    &self.identity,
                    self.session_id,
                    failure_id,
                    task,
                    &failed,
                    state.edited.clone(),
                );
                self.send(vec![Write::CaptureFailure(capture)]).await?;
                state.open_checks.insert(
                    key,
                    OpenCheck { failure_id, check: name.to_owned(), attempts: 0, edited_since: Vec::new() },
                );
                state.passed = false;
                self.task_result(name, Some(failure_id)).await
            }
            (Some(open), failed) => {
                open.attempts += 1;
                let files = std::mem::take(&mut open.edited_since);
                let approach = if files.is_empty() {
                    format!("ran {name} again without editing a file")
                } else {
                    format!("edited {}", files.join(", "))
                };
                let attempt = proto::RecordFixAttemptRequest {
                    attempt_id: Uuid::now_v7().to_string(),
                    failure_id: open.failure_id.to_string(),
                    attempt_number: open.attempts,
                    approach: approach.clone(),
                    files_changed: files,
                    summary: approach,
                    outcome: if failed { proto::FixOutcome::Failure } else { proto::FixOutcome::Success } as i32,
                    qa_result: if failed {
                        crate::failure_lines::error_lines(&input.tool_output()).join("\n")
                    } else {
                        format!("{name} passes")
                    },
                };
                self.send(vec![Write::RecordFixAttempt(attempt)]).await?;
                if !failed {
                    state.open_checks.remove(&key);
                    if state.open_checks.is_empty() {
                        state.passed = true;
                        return self.task_result(name, None).await;
                    }
                }
                Ok(())
            }
        }
    }

    /// The session's task passed or failed QA: the warnings it was given are
    /// scored by it.
    pub(super) async fn task_result(&self, check: &str, failure_id: Option<Uuid>) -> Result<(), AgentError> {
        let result = requests::task_result(
            &self.identity.project,
            requests::session_task(self.session_id),
            self.session_id,
            check,
            failure_id,
        );
        self.send(vec![Write::RecordTaskResult(result)]).await
    }

    /// The repository's files lessons cite that are gone (none without
    /// Lore).
    pub(super) async fn missing_cited_files(&self) -> Vec<String> {
        match &self.connection {
            Some(connection) => staleness::missing_cited_files(connection, &self.identity.project, &self.dir).await,
            None => Vec::new(),
        }
    }

    /// The recognizers of typed actions: the project's file first when one
    /// is set; a file that cannot be used is logged and Lore's are used.
    pub(super) fn recognizers(&self) -> typed::Recognizers {
        let Some(path) = &self.args.action_types else { return typed::Recognizers::shipped() };
        typed::Recognizers::with_file(path).unwrap_or_else(|problem| {
            self.log.write(self.args.event, Some(self.session_id), &format!("LORE_ACTION_TYPES: {problem}"));
            typed::Recognizers::shipped()
        })
    }

    pub(super) fn checks(&self) -> Result<Checks, AgentError> {
        let mut patterns = self.args.check_patterns.clone();
        if let Ok(extra) = std::env::var("LORE_CHECK_PATTERNS") {
            patterns.extend(extra.lines().map(str::trim).filter(|line| !line.is_empty()).map(str::to_owned));
        }
        Checks::new(&patterns).map_err(AgentError::Setup)
    }
}
