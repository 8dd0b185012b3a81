//! `report_failure`: a failing check, captured so the next agents are warned.

use lore_proto::v1 as proto;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use uuid::Uuid;

use lore_spool::entry::Write;

use super::{ReportedFailure, ToolContext, ToolOutput, ToolSpec, list, optional_text, parse, required_text, schema};
use crate::AgentError;
use crate::requests::{self, FailedCheck};

pub const TOOL: ToolSpec = ToolSpec {
    name: "report_failure",
    description: "Report a failing check (tests, build, type check, linter) with its error output. Lore groups \
     it with the same failure seen in other tasks and warns the next agents before they hit it. \
     Keep the failure_id it returns and call record_fix once the check passes.",
    read_only: false,
    schema: schema::<ReportFailureArgs>,
    call: |arguments, context| Box::pin(async move { run(parse(arguments)?, context).await }),
};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReportFailureArgs {
    /// The check that failed, e.g. "cargo test", "npm run lint", "mypy".
    #[schemars(length(min = 1, max = 256))]
    pub check: String,
    /// Its error output; the lines that say what failed matter most (at
    /// most 64 KiB).
    #[schemars(length(min = 1, max = 65536))]
    pub output: String,
    /// The check's exit code.
    #[serde(default)]
    pub exit_code: Option<i32>,
    /// The task's ticket or issue id; this session stands for the task when
    /// left out.
    #[serde(default)]
    pub task_id: Option<String>,
    /// The task's title, e.g. "Add invoices table".
    #[serde(default)]
    pub task_title: String,
    /// Files you changed for the task, relative to the repository root.
    #[serde(default)]
    #[schemars(length(max = 200))]
    pub files: Vec<String>,
}

async fn run(args: ReportFailureArgs, context: &ToolContext<'_>) -> Result<ToolOutput, AgentError> {
    let check = required_text("check", &args.check, 256)?;
    if args.output.len() > 64 * 1024 {
        return Err(AgentError::invalid("output", "over 64 KiB; send the lines that say what failed"));
    }
    let output = required_text("output", &args.output, usize::MAX)?;
    let files = list("files", &args.files, 200)?;
    let failure_id = Uuid::now_v7();
    let task_id = args.task_id.unwrap_or_else(|| requests::session_task(context.session_id));
    let task = proto::Task {
        task_id: task_id.clone(),
        title: optional_text("task_title", &args.task_title, 512)?,
        files: files.clone(),
        ..Default::default()
    };
    let failed = FailedCheck { name: &check, output: &output, exit_code: args.exit_code.unwrap_or(1) };
    let request = requests::capture_failure(context.identity, context.session_id, failure_id, task, &failed, files);
    let sent = context
        .write(Write::CaptureFailure(request.clone()), |lore| async move { lore.qa().capture_failure(request).await })
        .await?;
    let (queued, note) = (sent.queued, sent.note());
    let captured = sent.answer;
    let result =
        requests::task_result(&context.identity.project, task_id.clone(), context.session_id, &check, Some(failure_id));
    context
        .write(
            Write::RecordTaskResult(result.clone()),
            |lore| async move { lore.qa().record_task_result(result).await },
        )
        .await?;
    context
        .failures
        .lock()
        .expect("reported failures")
        .insert(failure_id, ReportedFailure { task_id, check: check.clone(), attempts: 0 });
    let mut text = if queued {
        format!("Recorded the {check} failure as {failure_id}.{note} Its pattern is known once the server has it.")
    } else {
        let patterns: Vec<String> = captured
            .links
            .iter()
            .map(|link| {
                let seen = if link.new_pattern { "a new pattern" } else { "a pattern seen before" };
                format!("{} ({seen})", lore_screen::fence::quoted(&link.pattern_name))
            })
            .collect();
        format!(
            "Captured the {check} failure as {failure_id}, category {}; it joins {}.",
            captured.category,
            patterns.join(", ")
        )
    };
    text.push_str(&format!(" When the check passes, call record_fix with failure_id \"{failure_id}\"."));
    Ok(ToolOutput {
        text,
        structured: json!({
            "failure_id": failure_id,
            "category": captured.category,
            "patterns": captured.links.iter().map(|link| json!({"pattern_id": link.pattern_id, "name": link.pattern_name, "new": link.new_pattern})).collect::<Vec<_>>(),
            "queued": queued,
        }),
        summary: json!({ "failure_id": failure_id }),
    })
}
