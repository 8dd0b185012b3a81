//! `lore hook stop` and `session-end`: the session ends, with the agent's
//! last message as its summary.

use super::Hook;
use super::input::HookInput;
use crate::AgentError;
use lore_proto::v1 as proto;
use lore_spool::entry::Write;

impl Hook<'_> {
    pub(super) async fn stop(&self, input: &HookInput) -> Result<(), AgentError> {
        let summary: String = input.last_assistant_message.as_deref().unwrap_or_default().chars().take(2000).collect();
        self.end(summary).await
    }

    pub(super) async fn session_end(&self, input: &HookInput) -> Result<(), AgentError> {
        let reason = if input.reason.is_empty() { "other" } else { &input.reason };
        self.end(format!("the agent session ended ({reason})")).await
    }

    /// Ends the Lore session (ending an ended one changes nothing).
    pub(super) async fn end(&self, summary: String) -> Result<(), AgentError> {
        let mut locked = self.state().await?;
        let end = proto::EndSessionRequest {
            session_id: self.session_id.to_string(),
            reason: proto::EndReason::Normal as i32,
            summary,
        };
        self.send(vec![Write::EndSession(end)]).await?;
        locked.state.ended = true;
        self.save(locked).await
    }
}
