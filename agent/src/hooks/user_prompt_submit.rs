//! `lore hook user-prompt-submit`: a briefing for what was asked, leaving
//! out what the session was already given, and the call index refreshed
//! when it is due.

use super::input::HookInput;
use super::{Hook, HookEvent, context_answer, pre_tool_use};
use crate::AgentError;
use crate::connection::Connection;
use crate::requests::{self};
use lore_proto::v1 as proto;
use tokio::time::Instant;

impl Hook<'_> {
    pub(super) async fn user_prompt_submit(&self, input: &HookInput) -> Result<Option<String>, AgentError> {
        self.note_session();
        let prompt = input.prompt.trim();
        let title: String = prompt.lines().next().unwrap_or_default().chars().take(200).collect();
        let mut locked = self.state().await?;
        if !locked.state.started || locked.state.ended {
            self.start_session(&input.source, input.model_name()).await?;
            locked.state.started = true;
            locked.state.ended = false;
        }
        if locked.state.task_title.is_empty() {
            locked.state.task_title = title.clone();
        }
        self.save(locked).await?;
        let Some(connection) = self.connection.as_ref().filter(|_| !prompt.is_empty()) else { return Ok(None) };
        let description: String = prompt.chars().take(8000).collect();
        let missing_files = self.missing_cited_files().await;
        let task = proto::BriefTask { title, description, ..Default::default() };
        let request = proto::BriefRequest {
            budget_chars: super::chars_of(self.args.prompt_tokens),
            omit_given: true,
            omit_last_session: true,
            surface: proto::InjectionSurface::Prompt as i32,
            missing_files,
            at_call: self.at_call(),
            ..requests::brief(&self.identity, self.session_id, task)
        };
        let mut agent = connection.agent();
        let (briefing, ()) = tokio::join!(agent.brief(request), self.refresh_calls(connection, false));
        Ok(context_answer(self.args.agent, HookEvent::UserPromptSubmit, &briefing?.into_inner().markdown))
    }

    /// What the briefing leaves to the call: the failures the call index
    /// warns of, from the index as it stands.
    pub(super) fn at_call(&self) -> Vec<String> {
        crate::call_index::at_call(&crate::home::state_dir(), &self.identity.project, self.args.agent.as_str())
    }

    /// Refreshes the project's call index, which `pre-tool-use` answers
    /// from: always at session start, later only when this session has not
    /// or it is stale. What goes wrong is logged; the old index stays.
    pub(super) async fn refresh_calls(&self, connection: &Connection, always: bool) {
        let project = &self.identity.project;
        let path = crate::call_index::path(&crate::home::state_dir(), project);
        if !always && crate::call_index::load(&path, project).is_some_and(|index| !index.needs_refresh(self.session_id))
        {
            return;
        }
        // A quarter of what is left stays for answering the agent.
        let deadline = Instant::now() + self.deadline.saturating_duration_since(Instant::now()) * 3 / 4;
        let message = match crate::call_index::refresh(connection, project, self.session_id, deadline).await {
            Ok(index) => match tokio::task::spawn_blocking(move || {
                pre_tool_use::prune_given(&crate::home::state_dir());
                crate::call_index::save(&path, &index)
            })
            .await
            {
                Ok(Ok(())) => return,
                Ok(Err(error)) => format!("cannot write the call index: {error}"),
                Err(error) => format!("writing the call index stopped: {error}"),
            },
            Err(error) => format!("the call index was not refreshed: {error}"),
        };
        self.log.write(self.args.event, Some(self.session_id), &message);
    }
}
