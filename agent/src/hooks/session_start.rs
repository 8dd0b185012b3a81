//! `lore hook session-start`: the agent session's Lore session started (or,
//! resumed, reopened) and the briefing for the repository, while the
//! repository's instructions file is brought to the project's standing
//! instructions.

use super::input::HookInput;
use super::{Hook, HookEvent, chars_of, context_answer, typed};
use crate::AgentError;
use crate::connection::Connection;
use crate::requests::{self};
use lore_proto::v1 as proto;
use lore_spool::entry::Write;
use serde_json::json;
use std::path::Path;
use std::time::Duration;

impl Hook<'_> {
    /// Starts the Lore session, or reopens it when Stop ended it (a resumed
    /// or continued agent session goes on in the same Lore session).
    pub(super) async fn start_session(&self, source: &str, model: Option<String>) -> Result<(), AgentError> {
        let mut metadata = json!({ "agent_session_id": self.agent_session, "cwd": self.dir.display().to_string() });
        if !source.is_empty() {
            metadata["source"] = json!(source);
        }
        if let Some(model) = model {
            metadata["model"] = json!(model);
        }
        let start = proto::StartSessionRequest {
            session_id: self.session_id.to_string(),
            project: self.identity.project.clone(),
            agent_id: self.identity.agent_id.clone(),
            supervisor_type: self.identity.kind.as_str().to_owned(),
            metadata: Some(lore_proto::json::to_struct(&metadata)),
            reopen: true,
            ..Default::default()
        };
        self.send(vec![Write::StartSession(start)]).await
    }

    pub(super) async fn session_start(&self, input: &HookInput) -> Result<Option<String>, AgentError> {
        self.note_session();
        // The session starts while git is asked for the branch, whose issue
        // the state keeps: one lock and one save.
        let started = async {
            let locked = self.state().await?;
            self.start_session(&input.source, input.model_name()).await?;
            Ok::<_, AgentError>(locked)
        };
        let ((branch, files), missing_files, started) =
            tokio::join!(git_context(&self.dir), self.missing_cited_files(), started);
        let mut locked = started?;
        locked.state.started = true;
        locked.state.ended = false;
        if let Some(issue) = branch.as_deref().and_then(typed::issue_of_branch) {
            locked.state.issue = issue;
        }
        if let Some(epic) = self.args.epic.clone().or_else(|| branch.as_deref().and_then(typed::epic_of_branch)) {
            locked.state.epic = epic;
        }
        self.save(locked).await?;
        let Some(connection) = &self.connection else { return Ok(None) };
        let task = proto::BriefTask { files, labels: branch.into_iter().collect(), ..Default::default() };
        // The briefing names what the call index, refreshed first, counts
        // in many sessions and no call is warned of.
        let briefing = async {
            self.refresh_calls(connection, true).await;
            let (at_call, frequent_failures) = crate::call_index::session_start_hints(
                &crate::home::state_dir(),
                &self.identity.project,
                self.args.agent.as_str(),
            );
            let request = proto::BriefRequest {
                budget_chars: chars_of(self.args.start_tokens),
                surface: proto::InjectionSurface::SessionStart as i32,
                missing_files,
                at_call,
                frequent_failures,
                ..requests::brief(&self.identity, self.session_id, task)
            };
            connection.agent().brief(request).await
        };
        let (briefing, ()) = tokio::join!(briefing, self.sync_instructions(connection));
        Ok(context_answer(self.args.agent, HookEvent::SessionStart, &briefing?.into_inner().markdown))
    }

    /// Brings the repository's instructions file to the project's standing
    /// instructions. What goes wrong is logged, never the agent's problem.
    pub(super) async fn sync_instructions(&self, connection: &Connection) {
        if self.args.instructions == "off" {
            return;
        }
        let Some(path) = crate::instructions::file_for(&self.dir, self.args.agent) else { return };
        let list = match crate::instructions::fetch(connection.channel(), &self.identity.project).await {
            Ok(list) => list,
            Err(error) => {
                self.log.write(self.args.event, Some(self.session_id), &format!("standing instructions: {error}"));
                return;
            }
        };
        let written = {
            let path = path.clone();
            tokio::task::spawn_blocking(move || crate::instructions::sync_file(&path, &list)).await
        };
        let message = match written {
            Ok(Ok(synced)) if synced.conflicts.is_empty() && synced.text.is_none() => return,
            Ok(Ok(synced)) => {
                let mut message = crate::instructions::summary(&path, &synced);
                for conflict in &synced.conflicts {
                    message.push_str(&format!("; {conflict}"));
                }
                message
            }
            Ok(Err(error)) => format!("cannot write {}: {error}", path.display()),
            Err(error) => format!("writing {} stopped: {error}", path.display()),
        };
        self.log.write(self.args.event, Some(self.session_id), &format!("standing instructions: {message}"));
    }

    /// Notes the agent session as the one the repository is in now, for
    /// an MCP server its agent told nothing (see [`crate::current_session`]).
    pub(super) fn note_session(&self) {
        let repository = crate::identity::repository_root(&self.dir).unwrap_or_else(|| self.dir.clone());
        let noted = crate::current_session::remember(
            &crate::home::state_dir(),
            self.args.agent,
            &repository,
            &self.agent_session,
        );
        if let Err(error) = noted {
            self.log.write(
                self.args.event,
                Some(self.session_id),
                &format!("cannot note the current session: {error}"),
            );
        }
    }
}

/// The branch and the changed files of the repository at `dir` (for the
/// warnings of those files), each read by git within a second; nothing
/// when it is not a repository.
async fn git_context(dir: &Path) -> (Option<String>, Vec<String>) {
    let git = |args: &'static [&'static str]| {
        let mut command = tokio::process::Command::new("git");
        command.arg("-C").arg(dir).args(args).stdin(std::process::Stdio::null()).stderr(std::process::Stdio::null());
        command.kill_on_drop(true);
        async move {
            let output = tokio::time::timeout(Duration::from_secs(1), command.output()).await.ok()?.ok()?;
            output.status.success().then(|| String::from_utf8_lossy(&output.stdout).into_owned())
        }
    };
    // symbolic-ref, not rev-parse: a branch with no commit yet has a name.
    let (branch, status) =
        tokio::join!(git(&["symbolic-ref", "--short", "-q", "HEAD"]), git(&["status", "--porcelain"]));
    let branch = branch.map(|branch| branch.trim().to_owned()).filter(|branch| !branch.is_empty() && branch != "HEAD");
    let files = status
        .unwrap_or_default()
        .lines()
        .filter_map(|line| line.get(3..))
        .map(|path| path.rsplit(" -> ").next().unwrap_or(path).trim_matches('"').to_owned())
        .filter(|path| !path.is_empty())
        .take(50)
        .collect();
    (branch, files)
}
