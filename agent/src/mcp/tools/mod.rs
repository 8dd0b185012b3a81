//! The tools: their arguments (with JSON Schemas a model reads), their
//! descriptions, and what each asks of Lore, one file each, listed in
//! [`TOOLS`]. Adding a tool is a file with its [`ToolSpec`] and a line in
//! the table.
//!
//! Each tool is a thin translation: check the arguments, call one or two
//! RPCs, and answer with a short text for the model and the same facts as
//! structured content for programs. Names are bare (`briefing`, not
//! `lore_briefing`): clients namespace tools by server name.

mod acknowledge_warning;
mod briefing;
mod get_lesson;
mod lessons;
mod log_action;
mod propose_lesson;
mod record_fix;
mod record_lesson_use;
mod report_failure;
mod resume;
mod search_lessons;
mod triage;

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;
use uuid::Uuid;

use lore_spool::entry::Write;
use tokio::time::Instant;

use crate::AgentError;
use crate::connection::Connection;
use crate::identity::Identity;
use crate::outbox::Outbox;

pub use briefing::briefing_output;
pub use lessons::solution_json;

/// The tools, in the order a model is told about them.
pub const TOOLS: &[&ToolSpec] = &[
    &briefing::TOOL,
    &search_lessons::TOOL,
    &triage::TOOL,
    &get_lesson::TOOL,
    &record_lesson_use::TOOL,
    &log_action::TOOL,
    &resume::TOOL,
    &report_failure::TOOL,
    &record_fix::TOOL,
    &acknowledge_warning::TOOL,
    &propose_lesson::TOOL,
];

/// What a tool's call returns, borrowing its context.
pub type ToolFuture<'a> = Pin<Box<dyn Future<Output = Result<ToolOutput, AgentError>> + Send + 'a>>;

/// One tool: what `tools/list` shows of it, and its call.
pub struct ToolSpec {
    pub name: &'static str,
    pub description: &'static str,
    /// True for the tools that only read.
    pub read_only: bool,
    /// Its arguments' JSON Schema.
    pub schema: fn() -> Arc<JsonObject>,
    /// Parses the arguments (an error names the field) and runs the tool.
    pub call: for<'a> fn(JsonObject, &'a ToolContext<'a>) -> ToolFuture<'a>,
}

impl std::fmt::Debug for ToolSpec {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("ToolSpec").field("name", &self.name).finish_non_exhaustive()
    }
}

impl ToolSpec {
    /// The tool named `name`.
    pub fn find(name: &str) -> Option<&'static ToolSpec> {
        TOOLS.iter().copied().find(|tool| tool.name == name)
    }

    /// The tool as `tools/list` shows it.
    pub fn definition(&self) -> Tool {
        let annotations = ToolAnnotations::new().read_only(self.read_only).destructive(false).open_world(false);
        Tool::new(self.name, self.description, (self.schema)()).annotate(annotations)
    }
}

fn schema<T: JsonSchema + 'static>() -> Arc<JsonObject> {
    rmcp::handler::server::tool::schema_for_input::<T>().expect("tool argument types are objects")
}

/// What a tool answers: a short text for the model, the same facts for
/// programs, and what the action log keeps of the result.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput {
    pub text: String,
    pub structured: Value,
    pub summary: Value,
}

/// What a tool call needs around its arguments.
pub struct ToolContext<'a> {
    /// `Err`: why neither the sidecar nor the server answered; only a
    /// write tool runs so, its writes kept in the outbox.
    pub connection: Result<&'a Connection, &'a AgentError>,
    pub identity: &'a Identity,
    pub session_id: Uuid,
    /// Sent ahead of writes kept in the outbox: the server has not heard
    /// of the session when the first of them arrives.
    pub session_start: &'a lore_proto::v1::StartSessionRequest,
    /// The failures reported through this server: their task, for the task
    /// result of a working fix, and the fix attempts recorded, for the next
    /// attempt's number.
    pub failures: &'a Mutex<HashMap<Uuid, ReportedFailure>>,
}

impl ToolContext<'_> {
    /// Lore, for a call that needs its answer.
    fn lore(&self) -> Result<&Connection, AgentError> {
        self.connection.map_err(|error| AgentError::Unreachable(error.to_string()))
    }

    /// Sends one write: `call` sends it when Lore answers, once the writes
    /// kept in this machine's outbox have gone ahead of it (a fix must not
    /// reach the server before the failure it fixes). When Lore is
    /// unreachable, or older writes still wait, it is kept in the outbox
    /// behind them (and behind the session's start), and the next hook,
    /// `lore` command or sidecar start sends it.
    async fn write<T, Call, Answer>(&self, write: Write, call: Call) -> Result<Sent<T>, AgentError>
    where
        T: Default,
        Call: FnOnce(Connection) -> Answer,
        Answer: Future<Output = Result<tonic::Response<T>, tonic::Status>>,
    {
        let outbox = Outbox::local();
        let connection = match self.connection {
            Ok(connection) => connection,
            Err(_) => return self.keep(&outbox, write, Kept::Unreachable).await,
        };
        if !outbox.is_empty() {
            let drained = outbox.drain(&connection.channel(), Instant::now() + OUTBOX_DRAIN_BUDGET).await?;
            if drained.waiting {
                return self.keep(&outbox, write, Kept::BehindOlderWrites).await;
            }
        }
        let response = call(connection.clone()).await?;
        let spooled = is_spooled(response.metadata());
        Ok(Sent { answer: response.into_inner(), queued: spooled, kept: None })
    }

    async fn keep<T: Default>(&self, outbox: &Outbox, write: Write, why: Kept) -> Result<Sent<T>, AgentError> {
        let start = Write::StartSession(self.session_start.clone());
        outbox.append(vec![start, write], "mcp").await?;
        Ok(Sent { answer: T::default(), queued: true, kept: Some(why) })
    }
}

/// How long a write tool lets the outbox send what waits ahead of its
/// write, out of the call's 20 s.
const OUTBOX_DRAIN_BUDGET: Duration = Duration::from_secs(5);

/// How a write went: answered (perhaps only spooled by the sidecar), or
/// kept in the outbox (`answer` is then empty).
struct Sent<T> {
    answer: T,
    queued: bool,
    kept: Option<Kept>,
}

/// Why a write waits in the outbox.
#[derive(Debug, Clone, Copy)]
enum Kept {
    Unreachable,
    /// Lore answers, but older writes kept on this machine could not all
    /// go within the budget (or another process is sending them).
    BehindOlderWrites,
}

impl<T> Sent<T> {
    /// What the model is told about where the write waits, if it waits.
    fn note(&self) -> &'static str {
        match (self.kept, self.queued) {
            (Some(Kept::Unreachable), _) => {
                " Lore is unreachable: it is kept on this machine and sent when Lore answers."
            }
            (Some(Kept::BehindOlderWrites), _) => {
                " Older writes kept on this machine are still on their way to Lore: it waits behind them and is sent after them."
            }
            (None, true) => " The sidecar on this machine keeps it and delivers it to the server.",
            (None, false) => "",
        }
    }
}

#[derive(Debug, Clone, Default)]
pub struct ReportedFailure {
    pub task_id: String,
    pub check: String,
    pub attempts: u32,
}

/// The arguments as `T`, or an error that names the field.
fn parse<T: DeserializeOwned>(arguments: JsonObject) -> Result<T, AgentError> {
    serde_path_to_error::deserialize(Value::Object(arguments)).map_err(|error| {
        let message = error.inner().to_string();
        let path = error.path().to_string();
        // "missing field `task`" names its field in the message, at the root.
        let named = ["missing field `", "unknown field `"]
            .iter()
            .find_map(|prefix| message.strip_prefix(prefix))
            .and_then(|rest| rest.split('`').next());
        let field = match (path.as_str(), named) {
            (".", Some(name)) => name.to_owned(),
            (".", None) => "arguments".to_owned(),
            (path, _) => path.to_owned(),
        };
        let reason = match message.split_once(" at line ") {
            Some((reason, _)) => reason.to_owned(),
            None => message,
        };
        AgentError::invalid(field, reason)
    })
}

fn required_text(field: &str, value: &str, max_chars: usize) -> Result<String, AgentError> {
    let value = value.trim();
    if value.is_empty() {
        return Err(AgentError::invalid(field, "required, and must not be blank"));
    }
    optional_text(field, value, max_chars)
}

fn optional_text(field: &str, value: &str, max_chars: usize) -> Result<String, AgentError> {
    if value.contains('\0') {
        return Err(AgentError::invalid(field, "must not contain NUL characters"));
    }
    if value.chars().count() > max_chars {
        return Err(AgentError::invalid(field, format!("longer than {max_chars} characters")));
    }
    Ok(value.to_owned())
}

fn uuid(field: &str, value: &str) -> Result<Uuid, AgentError> {
    Uuid::parse_str(value.trim()).map_err(|_| AgentError::invalid(field, format!("{value:?} is not a UUID")))
}

fn list(field: &str, values: &[String], max_items: usize) -> Result<Vec<String>, AgentError> {
    if values.len() > max_items {
        return Err(AgentError::invalid(field, format!("{} items, at most {max_items}", values.len())));
    }
    values.iter().enumerate().map(|(index, value)| required_text(&format!("{field}[{index}]"), value, 1024)).collect()
}

fn is_spooled(metadata: &tonic::metadata::MetadataMap) -> bool {
    metadata.get(lore_proto::metadata::SPOOLED).is_some()
}

#[cfg(test)]
mod tests;
