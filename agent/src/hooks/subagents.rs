//! `lore hook subagent-start` and `subagent-stop`: a sub-agent's action gets
//! its id at the start, and the stop writes it when no tool call spawned it.

use super::input::HookInput;
use super::{Hook, state};
use crate::AgentError;
use crate::checks::{self};
use crate::identity::AgentKind;
use crate::requests::{self};
use lore_proto::v1 as proto;
use lore_spool::entry::Write;
use serde_json::json;

impl Hook<'_> {
    /// A sub-agent starts: the id of the `subagent` action it will be is
    /// chosen now, so what it does can name it as its parent. Nothing is
    /// sent.
    pub(super) async fn subagent_start(&self, input: &HookInput) -> Result<(), AgentError> {
        if input.agent_id.trim().is_empty() {
            return Err(AgentError::invalid("agent_id", "SubagentStart needs the sub-agent's id"));
        }
        let mut locked = self.state().await?;
        locked.state.start_subagent(&input.agent_id, &input.agent_type);
        self.save(locked).await
    }

    /// A sub-agent stops. Claude Code records the Task tool call that
    /// spawned it next, and that call becomes its `subagent` action; other
    /// agents spawn without such a call, so the action is written now.
    pub(super) async fn subagent_stop(&self, input: &HookInput) -> Result<(), AgentError> {
        if input.agent_id.trim().is_empty() {
            return Err(AgentError::invalid("agent_id", "SubagentStop needs the sub-agent's id"));
        }
        let mut locked = self.state().await?;
        let summary = checks::cut(input.last_assistant_message.as_deref().unwrap_or_default(), 500).to_owned();
        let spawn = locked.state.stop_subagent(&input.agent_id, &input.agent_type, summary);
        if spawn.recorded {
            // Launched in the background: its tool call is its action.
        } else if self.args.agent == AgentKind::ClaudeCode {
            locked.state.push_stopped(spawn);
        } else {
            let action = proto::Action {
                action_id: spawn.action_id.to_string(),
                session_id: self.session_id.to_string(),
                project: self.identity.project.clone(),
                agent_id: self.identity.agent_id.clone(),
                action_type: "subagent".into(),
                issue_id: locked.state.issue.clone(),
                epic_id: self.args.epic.clone().unwrap_or_else(|| locked.state.epic.clone()),
                category: "agent".into(),
                context: Some(lore_proto::json::to_struct(&json!({
                    "agent_session_id": self.agent_session,
                    "details": spawn_details(&spawn),
                }))),
                outcome: proto::Outcome::Success as i32,
                occurred_at: Some(requests::now()),
                ..Default::default()
            };
            self.send(vec![Write::Action(action)]).await?;
        }
        self.save(locked).await
    }
}

/// What a `subagent` action says of its sub-agent.
pub(super) fn spawn_details(spawn: &state::Spawn) -> serde_json::Map<String, serde_json::Value> {
    let mut details = serde_json::Map::new();
    details.insert("agent_id".into(), json!(spawn.agent_id));
    if !spawn.agent_type.is_empty() {
        details.insert("agent_type".into(), json!(spawn.agent_type));
    }
    if !spawn.summary.is_empty() {
        details.insert("summary".into(), json!(spawn.summary));
    }
    details
}
