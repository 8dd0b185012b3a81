//! `record_fix`: an attempt to fix a reported failure; one that works becomes a lesson.

use lore_proto::v1 as proto;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use uuid::Uuid;

use lore_spool::entry::Write;

use super::{ToolContext, ToolOutput, ToolSpec, list, parse, required_text, schema, uuid};
use crate::AgentError;
use crate::requests;

pub const TOOL: ToolSpec = ToolSpec {
    name: "record_fix",
    description: "Record an attempt to fix a failure you reported: what you changed and whether the check \
     passes now. Record failed attempts too. A fix that works becomes a lesson for the next agent.",
    read_only: false,
    schema: schema::<RecordFixArgs>,
    call: |arguments, context| Box::pin(async move { run(parse(arguments)?, context).await }),
};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RecordFixArgs {
    /// The failure_id report_failure returned.
    pub failure_id: String,
    /// Whether the check passes now.
    pub worked: bool,
    /// What you changed, in a sentence or two.
    #[schemars(length(min = 1, max = 4000))]
    pub approach: String,
    /// Files the fix changed, relative to the repository root.
    #[serde(default)]
    #[schemars(length(max = 200))]
    pub files_changed: Vec<String>,
    /// Which attempt this is (1 for the first); the next one when left out.
    #[serde(default)]
    #[schemars(range(min = 1, max = 1000))]
    pub attempt: Option<u32>,
}

async fn run(args: RecordFixArgs, context: &ToolContext<'_>) -> Result<ToolOutput, AgentError> {
    let failure_id = uuid("failure_id", &args.failure_id)?;
    let approach = required_text("approach", &args.approach, 4000)?;
    let files = list("files_changed", &args.files_changed, 200)?;
    let attempt = match args.attempt {
        Some(0) => return Err(AgentError::invalid("attempt", "attempts count from 1")),
        Some(number) => number,
        None => {
            context.failures.lock().expect("reported failures").get(&failure_id).map_or(1, |seen| seen.attempts + 1)
        }
    };
    let attempt_id = Uuid::now_v7();
    let outcome = if args.worked { proto::FixOutcome::Success } else { proto::FixOutcome::Failure };
    let request = proto::RecordFixAttemptRequest {
        attempt_id: attempt_id.to_string(),
        failure_id: failure_id.to_string(),
        attempt_number: attempt,
        approach: approach.clone(),
        files_changed: files,
        summary: approach,
        outcome: outcome as i32,
        qa_result: if args.worked { "passes".into() } else { "still fails".into() },
    };
    let sent = context
        .write(
            Write::RecordFixAttempt(request.clone()),
            |lore| async move { lore.qa().record_fix_attempt(request).await },
        )
        .await?;
    let reported = {
        let mut failures = context.failures.lock().expect("reported failures");
        let reported = failures.entry(failure_id).or_default();
        reported.attempts = attempt;
        reported.clone()
    };
    if args.worked {
        // The task passed: its warnings are scored. A failure reported
        // elsewhere stands for this session's task.
        let task_id =
            if reported.task_id.is_empty() { requests::session_task(context.session_id) } else { reported.task_id };
        let check = if reported.check.is_empty() { "qa" } else { &reported.check };
        let result = requests::task_result(&context.identity.project, task_id, context.session_id, check, None);
        context
            .write(
                Write::RecordTaskResult(result.clone()),
                |lore| async move { lore.qa().record_task_result(result).await },
            )
            .await?;
    }
    let (queued, note) = (sent.queued, sent.note());
    let recorded = sent.answer;
    let text = match (args.worked, queued, recorded.resolved) {
        (true, false, true) => format!(
            "Recorded fix attempt {attempt} for failure {failure_id}: it resolved the failure, and the fix is now a lesson for the next agent."
        ),
        (true, _, _) => format!("Recorded fix attempt {attempt} for failure {failure_id} as working.{note}"),
        (false, _, _) => format!("Recorded fix attempt {attempt} for failure {failure_id} as not working yet."),
    };
    Ok(ToolOutput {
        text,
        structured: json!({
            "attempt_id": attempt_id,
            "attempt": attempt,
            "resolved": recorded.resolved,
            "gotcha_entry_ids": recorded.gotcha_entry_ids,
            "queued": queued,
        }),
        summary: json!({ "attempt_id": attempt_id, "failure_id": failure_id }),
    })
}
