//! proto <-> domain conversions. Every check on client input happens here
//! and fails with the name of the offending field.

use chrono::{DateTime, TimeZone as _, Utc};
use prost::Message as _;
use prost_types::value::Kind;
use serde_json::{Map, Number, Value};
use uuid::Uuid;

use lore_proto::v1 as proto;

use lore_domain::actions::export::{ExportCursor, ExportFormat};
use lore_domain::actions::resume::{ResumeSummary, WorkKind};
use lore_domain::actions::{ResumeEvent, ResumeTarget, RetentionReport};
use lore_types::actions::Counts;
use lore_types::actions::limits::{MAX_CHUNK_ROWS, MAX_JSON_DEPTH, MAX_PAGE_SIZE, MAX_RAW_CONTEXT_BYTES};
use lore_types::actions::query::{ActionFilter, Position};
use lore_types::actions::{
    Action, EndReason, NewAction, NewSession, Outcome, Rejection, RejectionKind, Session, SessionKind, SessionStatus,
};

/// Struct numbers are doubles; integral ones up to 2^53 are stored as JSON
/// integers, which is what clients mean by `3`.
const MAX_EXACT_INTEGER: f64 = 9_007_199_254_740_992.0;

pub(crate) use lore_types::validate::FieldResult;
pub use lore_types::validate::{
    FieldError, action_type, action_types, identifier, optional_text, optional_uuid, project, required_uuid,
};

/// A timestamp PostgreSQL can store, truncated to microseconds.
pub fn timestamp(field: &str, value: &prost_types::Timestamp) -> FieldResult<DateTime<Utc>> {
    if !(0..1_000_000_000).contains(&value.nanos) {
        return Err(FieldError::new(field, format!("nanos {} is out of range 0..1e9", value.nanos)));
    }
    // 0001-01-01 to 9999-12-31, the range of google.protobuf.Timestamp.
    if !(-62_135_596_800..=253_402_300_799).contains(&value.seconds) {
        return Err(FieldError::new(field, format!("seconds {} is outside years 1 to 9999", value.seconds)));
    }
    let micros = value.nanos / 1_000;
    Utc.timestamp_opt(value.seconds, micros as u32 * 1_000)
        .single()
        .ok_or_else(|| FieldError::new(field, "is not a valid instant"))
}

pub fn required_timestamp(field: &str, value: Option<&prost_types::Timestamp>) -> FieldResult<DateTime<Utc>> {
    timestamp(field, value.ok_or_else(|| FieldError::new(field, "required"))?)
}

pub fn optional_timestamp(field: &str, value: Option<&prost_types::Timestamp>) -> FieldResult<Option<DateTime<Utc>>> {
    value.map(|value| timestamp(field, value)).transpose()
}

pub fn to_timestamp(value: DateTime<Utc>) -> prost_types::Timestamp {
    prost_types::Timestamp { seconds: value.timestamp(), nanos: value.timestamp_subsec_nanos() as i32 }
}

/// A Struct as a JSON object, refusing what cannot be stored: NaN and
/// infinities, nesting deeper than [`MAX_JSON_DEPTH`], and encodings over
/// [`MAX_RAW_CONTEXT_BYTES`]. A missing Struct is `{}`.
pub fn json_object(field: &str, value: Option<&prost_types::Struct>) -> FieldResult<Value> {
    let Some(value) = value else {
        return Ok(Value::Object(Map::new()));
    };
    let encoded_len = value.encoded_len();
    if encoded_len > MAX_RAW_CONTEXT_BYTES {
        return Err(FieldError::new(
            field,
            format!("{encoded_len} bytes, over the limit of {MAX_RAW_CONTEXT_BYTES} bytes"),
        ));
    }
    struct_to_json(field, value, 1)
}

fn struct_to_json(field: &str, value: &prost_types::Struct, depth: usize) -> FieldResult<Value> {
    if depth > MAX_JSON_DEPTH {
        return Err(FieldError::new(field, format!("nested deeper than {MAX_JSON_DEPTH} levels")));
    }
    let mut map = Map::with_capacity(value.fields.len());
    for (key, entry) in &value.fields {
        map.insert(key.clone(), value_to_json(field, entry, depth)?);
    }
    Ok(Value::Object(map))
}

fn value_to_json(field: &str, value: &prost_types::Value, depth: usize) -> FieldResult<Value> {
    Ok(match &value.kind {
        None | Some(Kind::NullValue(_)) => Value::Null,
        Some(Kind::BoolValue(flag)) => Value::Bool(*flag),
        Some(Kind::StringValue(text)) => Value::String(text.clone()),
        Some(Kind::NumberValue(number)) => {
            if number.fract() == 0.0 && number.abs() <= MAX_EXACT_INTEGER {
                Value::Number(Number::from(*number as i64))
            } else {
                Value::Number(
                    Number::from_f64(*number)
                        .ok_or_else(|| FieldError::new(field, format!("{number} is not a JSON number")))?,
                )
            }
        }
        Some(Kind::StructValue(inner)) => struct_to_json(field, inner, depth + 1)?,
        Some(Kind::ListValue(list)) => {
            if depth + 1 > MAX_JSON_DEPTH {
                return Err(FieldError::new(field, format!("nested deeper than {MAX_JSON_DEPTH} levels")));
            }
            Value::Array(
                list.values.iter().map(|item| value_to_json(field, item, depth + 1)).collect::<Result<_, _>>()?,
            )
        }
    })
}

/// A JSON value as a Struct (objects) for responses.
pub fn to_struct(value: &Value) -> prost_types::Struct {
    lore_proto::json::to_struct(value)
}

pub(crate) fn enum_value<E: TryFrom<i32>>(field: &str, value: i32) -> FieldResult<E> {
    E::try_from(value).map_err(|_| FieldError::new(field, format!("unknown value {value}")))
}

pub fn outcome(field: &str, value: i32) -> FieldResult<Outcome> {
    match enum_value::<proto::Outcome>(field, value)? {
        proto::Outcome::Unspecified => Err(FieldError::new(field, "required")),
        proto::Outcome::Success => Ok(Outcome::Success),
        proto::Outcome::Failure => Ok(Outcome::Failure),
        proto::Outcome::Blocked => Ok(Outcome::Blocked),
        proto::Outcome::InProgress => Ok(Outcome::InProgress),
    }
}

pub fn outcome_to_proto(value: Outcome) -> proto::Outcome {
    match value {
        Outcome::Success => proto::Outcome::Success,
        Outcome::Failure => proto::Outcome::Failure,
        Outcome::Blocked => proto::Outcome::Blocked,
        Outcome::InProgress => proto::Outcome::InProgress,
    }
}

pub fn session_kind(field: &str, value: i32) -> FieldResult<SessionKind> {
    Ok(match enum_value::<proto::SessionKind>(field, value)? {
        proto::SessionKind::Unspecified | proto::SessionKind::Work => SessionKind::Work,
        proto::SessionKind::Planning => SessionKind::Planning,
        proto::SessionKind::Qa => SessionKind::Qa,
        proto::SessionKind::Supervisor => SessionKind::Supervisor,
        proto::SessionKind::Interactive => SessionKind::Interactive,
    })
}

fn session_kind_to_proto(value: SessionKind) -> proto::SessionKind {
    match value {
        SessionKind::Work => proto::SessionKind::Work,
        SessionKind::Planning => proto::SessionKind::Planning,
        SessionKind::Qa => proto::SessionKind::Qa,
        SessionKind::Supervisor => proto::SessionKind::Supervisor,
        SessionKind::Interactive => proto::SessionKind::Interactive,
    }
}

pub fn session_status_to_proto(value: SessionStatus) -> proto::SessionStatus {
    match value {
        SessionStatus::Active => proto::SessionStatus::Active,
        SessionStatus::Ended => proto::SessionStatus::Ended,
        SessionStatus::Disconnected => proto::SessionStatus::Disconnected,
    }
}

pub fn end_reason(field: &str, value: i32) -> FieldResult<EndReason> {
    match enum_value::<proto::EndReason>(field, value)? {
        proto::EndReason::Unspecified => Err(FieldError::new(field, "required")),
        proto::EndReason::Normal => Ok(EndReason::Normal),
        proto::EndReason::NetworkDisconnect => Ok(EndReason::NetworkDisconnect),
        proto::EndReason::Timeout => Ok(EndReason::Timeout),
        proto::EndReason::Error => Ok(EndReason::Error),
        proto::EndReason::Cancelled => Ok(EndReason::Cancelled),
    }
}

fn end_reason_to_proto(value: EndReason) -> proto::EndReason {
    match value {
        EndReason::Normal => proto::EndReason::Normal,
        EndReason::NetworkDisconnect => proto::EndReason::NetworkDisconnect,
        EndReason::Timeout => proto::EndReason::Timeout,
        EndReason::Error => proto::EndReason::Error,
        EndReason::Cancelled => proto::EndReason::Cancelled,
    }
}

/// A StartSession request as a session to open.
pub fn new_session(request: &proto::StartSessionRequest, now: DateTime<Utc>) -> FieldResult<NewSession> {
    let session_id = match optional_uuid("session_id", &request.session_id)? {
        Some(id) => id,
        None => Uuid::now_v7(),
    };
    Ok(NewSession {
        session_id,
        project: project("project", &request.project)?,
        agent_id: identifier("agent_id", &request.agent_id, true)?,
        supervisor_type: identifier("supervisor_type", &request.supervisor_type, false)?,
        kind: session_kind("kind", request.kind)?,
        metadata: json_object("metadata", request.metadata.as_ref())?,
        started_at: optional_timestamp("started_at", request.started_at.as_ref())?.unwrap_or(now),
        reopen: request.reopen,
    })
}

pub fn session_to_proto(session: &Session) -> proto::Session {
    proto::Session {
        session_id: session.session_id.to_string(),
        project: session.project.clone(),
        agent_id: session.agent_id.clone(),
        supervisor_type: session.supervisor_type.clone(),
        kind: session_kind_to_proto(session.kind) as i32,
        metadata: Some(to_struct(&session.metadata)),
        status: session_status_to_proto(session.status) as i32,
        started_at: Some(to_timestamp(session.started_at)),
        last_activity_at: Some(to_timestamp(session.last_activity_at)),
        ended_at: session.ended_at.map(to_timestamp),
        end_reason: session.end_reason.map_or(proto::EndReason::Unspecified, end_reason_to_proto) as i32,
        action_count: session.action_count.max(0) as u64,
        summary: session.summary.clone(),
    }
}

/// An Action message as an action to store (not yet sanitized). Field names
/// in errors are relative to the Action message.
pub fn new_action(action: &proto::Action) -> FieldResult<NewAction> {
    let action_id = match optional_uuid("action_id", &action.action_id)? {
        Some(id) => id,
        None => Uuid::now_v7(),
    };
    let duration_ms = i64::try_from(action.duration_ms)
        .map_err(|_| FieldError::new("duration_ms", format!("{} is too large", action.duration_ms)))?;
    Ok(NewAction {
        action_id,
        occurred_at: required_timestamp("occurred_at", action.occurred_at.as_ref())?,
        project: project("project", &action.project)?,
        session_id: optional_uuid("session_id", &action.session_id)?,
        agent_id: identifier("agent_id", &action.agent_id, false)?,
        action_type: action_type("action_type", &action.action_type)?,
        category: identifier("category", &action.category, false)?,
        context: json_object("context", action.context.as_ref())?,
        outcome: outcome("outcome", action.outcome)?,
        error: action.error.clone(),
        duration_ms,
        parent_action_id: optional_uuid("parent_action_id", &action.parent_action_id)?,
        epic_id: identifier("epic_id", &action.epic_id, false)?,
        issue_id: identifier("issue_id", &action.issue_id, false)?,
        redaction_count: 0,
        truncated: false,
    })
}

/// One action of an Ingest batch: valid, or the rejection to report.
pub fn batch_action(index: usize, action: &proto::Action) -> Result<NewAction, Rejection> {
    new_action(action).map_err(|error| Rejection {
        index,
        action_id: action.action_id.clone(),
        kind: RejectionKind::Invalid,
        field: field_name(&error.field),
        reason: error.reason,
    })
}

/// The static name of an Action field, for rejections.
fn field_name(field: &str) -> &'static str {
    const FIELDS: &[&str] = &[
        "action_id",
        "occurred_at",
        "project",
        "session_id",
        "agent_id",
        "action_type",
        "category",
        "context",
        "outcome",
        "duration_ms",
        "parent_action_id",
        "epic_id",
        "issue_id",
    ];
    FIELDS.iter().find(|known| **known == field).copied().unwrap_or("action")
}

pub fn action_to_proto(stored: &Action) -> proto::Action {
    let action = &stored.action;
    proto::Action {
        action_id: action.action_id.to_string(),
        session_id: action.session_id.map(|id| id.to_string()).unwrap_or_default(),
        project: action.project.clone(),
        agent_id: action.agent_id.clone(),
        action_type: action.action_type.clone(),
        category: action.category.clone(),
        context: Some(to_struct(&action.context)),
        outcome: outcome_to_proto(action.outcome) as i32,
        error: action.error.clone(),
        duration_ms: action.duration_ms.max(0) as u64,
        parent_action_id: action.parent_action_id.map(|id| id.to_string()).unwrap_or_default(),
        epic_id: action.epic_id.clone(),
        issue_id: action.issue_id.clone(),
        occurred_at: Some(to_timestamp(action.occurred_at)),
        received_at: Some(to_timestamp(stored.received_at)),
        redaction_count: action.redaction_count.max(0) as u32,
        truncated: action.truncated,
        chain_seq: stored.chain_seq.unwrap_or_default().max(0) as u64,
        chain_hash: stored.chain_hash.clone(),
    }
}

/// A window's (start, end); `None` is an open bound.
pub type Window = (Option<DateTime<Utc>>, Option<DateTime<Utc>>);

/// A window as (from, until); an empty window (start >= end) is refused.
pub fn time_range(field: &str, value: Option<&proto::TimeRange>) -> FieldResult<Window> {
    let Some(range) = value else {
        return Ok((None, None));
    };
    let start = optional_timestamp(&format!("{field}.start"), range.start.as_ref())?;
    let end = optional_timestamp(&format!("{field}.end"), range.end.as_ref())?;
    if let (Some(start), Some(end)) = (start, end)
        && start >= end
    {
        return Err(FieldError::new(field, "start must be before end"));
    }
    Ok((start, end))
}

pub fn outcomes(field: &str, values: &[i32]) -> FieldResult<Vec<Outcome>> {
    values.iter().enumerate().map(|(index, value)| outcome(&format!("{field}[{index}]"), *value)).collect()
}

/// Rows per page when the request says 0.
const DEFAULT_PAGE_SIZE: u32 = 50;

/// Page size (clamped) and the position to continue after.
pub fn page(field: &str, value: Option<&proto::PageRequest>) -> FieldResult<(i64, Option<Position>)> {
    let Some(page) = value else {
        return Ok((i64::from(DEFAULT_PAGE_SIZE), None));
    };
    let size = match page.page_size {
        0 => DEFAULT_PAGE_SIZE,
        size => size.min(MAX_PAGE_SIZE),
    };
    let after = if page.cursor.is_empty() {
        None
    } else {
        Some(
            Position::decode(&page.cursor)
                .map_err(|_| FieldError::new(format!("{field}.cursor"), "not a cursor this server issued"))?,
        )
    };
    Ok((i64::from(size), after))
}

/// The cursor after a page of `limit` items: where the last one is, when
/// the page is full (there may be more), else none.
pub fn next_cursor<T>(items: &[T], limit: i64, position: impl Fn(&T) -> Position) -> String {
    match items.last() {
        Some(last) if items.len() as i64 == limit => position(last).encode(),
        _ => String::new(),
    }
}

/// A SearchActions request as a filter and a page.
pub fn search_filter(request: &proto::SearchActionsRequest) -> FieldResult<(ActionFilter, i64, Option<Position>)> {
    let (from, until) = time_range("window", request.window.as_ref())?;
    let context_contains = match &request.context_contains {
        Some(contains) => Some(json_object("context_contains", Some(contains))?),
        None => None,
    };
    let filter = ActionFilter {
        project: project("project", &request.project)?,
        action_types: action_types("action_types", &request.action_types)?,
        agent_id: optional_text("agent_id", &request.agent_id)?,
        session_id: optional_uuid("session_id", &request.session_id)?,
        epic_id: optional_text("epic_id", &request.epic_id)?,
        issue_id: optional_text("issue_id", &request.issue_id)?,
        outcomes: outcomes("outcomes", &request.outcomes)?,
        from,
        until,
        context_contains,
        text: optional_text("text", &request.text)?,
        received_by: None,
    };
    let (limit, after) = page("page", request.page.as_ref())?;
    Ok((filter, limit, after))
}

pub fn activity_counts_to_proto(counts: &Counts) -> proto::ActivityCounts {
    proto::ActivityCounts {
        key: counts.key.clone(),
        total: counts.total.max(0) as u64,
        succeeded: counts.succeeded.max(0) as u64,
        failed: counts.failed.max(0) as u64,
        blocked: counts.blocked.max(0) as u64,
        success_rate: counts.success_rate(),
    }
}

pub fn export_format(field: &str, value: i32) -> FieldResult<ExportFormat> {
    match enum_value::<proto::ExportFormat>(field, value)? {
        proto::ExportFormat::Unspecified => Err(FieldError::new(field, "required")),
        proto::ExportFormat::Jsonl => Ok(ExportFormat::Jsonl),
        proto::ExportFormat::Csv => Ok(ExportFormat::Csv),
        proto::ExportFormat::Json => Ok(ExportFormat::Json),
        proto::ExportFormat::Training => Ok(ExportFormat::Training),
    }
}

/// Rows per export chunk when the request says 0.
const DEFAULT_CHUNK_ROWS: u32 = 500;

/// An Export request as what to export and where to resume.
pub struct ExportPlan {
    pub format: ExportFormat,
    pub filter: ActionFilter,
    pub resume: Option<ExportCursor>,
    pub as_of: Option<DateTime<Utc>>,
    pub chunk_rows: i64,
}

pub fn export_plan(request: &proto::ExportRequest) -> FieldResult<ExportPlan> {
    let (from, until) = time_range("window", request.window.as_ref())?;
    let filter = ActionFilter {
        project: project("project", &request.project)?,
        action_types: action_types("action_types", &request.action_types)?,
        outcomes: outcomes("outcomes", &request.outcomes)?,
        session_id: optional_uuid("session_id", &request.session_id)?,
        from,
        until,
        ..ActionFilter::default()
    };
    let resume = if request.resume_after.is_empty() {
        None
    } else {
        Some(
            ExportCursor::decode(&request.resume_after)
                .map_err(|_| FieldError::new("resume_after", "not a cursor this server issued"))?,
        )
    };
    let as_of = optional_timestamp("as_of", request.as_of.as_ref())?;
    if as_of.is_some_and(|as_of| as_of > Utc::now()) {
        return Err(FieldError::new("as_of", "is in the future"));
    }
    let chunk_rows = match request.chunk_rows {
        0 => DEFAULT_CHUNK_ROWS,
        rows => rows.min(MAX_CHUNK_ROWS),
    };
    Ok(ExportPlan {
        format: export_format("format", request.format)?,
        filter,
        resume,
        as_of,
        chunk_rows: i64::from(chunk_rows),
    })
}

fn work_kind_to_proto(kind: WorkKind) -> proto::WorkKind {
    match kind {
        WorkKind::SpawnRunning => proto::WorkKind::SpawnRunning,
        WorkKind::ValidationFailed => proto::WorkKind::ValidationFailed,
        WorkKind::CommitNotDeployed => proto::WorkKind::CommitNotDeployed,
        WorkKind::Blocked => proto::WorkKind::Blocked,
        WorkKind::InProgress => proto::WorkKind::InProgress,
    }
}

pub fn resume_summary_to_proto(summary: &ResumeSummary) -> proto::ResumeSummary {
    proto::ResumeSummary {
        session: Some(session_to_proto(&summary.session)),
        last_action: summary.last_action.as_ref().map(action_to_proto),
        work_in_progress: summary
            .work_in_progress
            .iter()
            .map(|item| proto::WorkInProgress {
                kind: work_kind_to_proto(item.kind) as i32,
                action: Some(action_to_proto(&item.action)),
                description: item.description.clone(),
            })
            .collect(),
        suggested_next_steps: summary.suggested_next_steps.clone(),
        active_epic_id: summary.active_epic_id.clone().unwrap_or_default(),
    }
}

pub fn resume_event_to_proto(event: &ResumeEvent) -> proto::ResumeEvent {
    use proto::resume_event::Event;
    let event = match event {
        ResumeEvent::Summary(summary) => Event::Summary(resume_summary_to_proto(summary)),
        ResumeEvent::Action(action) => Event::Action(action_to_proto(action)),
        ResumeEvent::CaughtUp(at) => Event::CaughtUp(to_timestamp(*at)),
        ResumeEvent::Heartbeat(at) => Event::Heartbeat(to_timestamp(*at)),
    };
    proto::ResumeEvent { event: Some(event) }
}

/// A Resume request as the session to find and how to stream it.
pub fn resume_target(request: &proto::ResumeRequest) -> FieldResult<ResumeTarget> {
    let session_id = optional_uuid("session_id", &request.session_id)?;
    let project = match (&session_id, request.project.is_empty()) {
        (None, true) => return Err(FieldError::new("project", "required when session_id is empty")),
        (_, true) => None,
        (_, false) => Some(project("project", &request.project)?),
    };
    Ok(ResumeTarget {
        session_id,
        project,
        agent_id: optional_text("agent_id", &request.agent_id)?,
        supervisor_type: optional_text("supervisor_type", &request.supervisor_type)?,
    })
}

pub fn retention_status_to_proto(report: &RetentionReport) -> proto::RetentionStatus {
    proto::RetentionStatus {
        archive_after_days: report.policy.archive_after_days,
        drop_after_days: report.policy.drop_after_days,
        partitions: report
            .partitions
            .iter()
            .map(|partition| proto::PartitionInfo {
                name: partition.name.clone(),
                from: Some(to_timestamp(partition.from)),
                to: Some(to_timestamp(partition.to)),
                archived: partition.archived,
                approx_rows: partition.approx_rows.max(0) as u64,
            })
            .collect(),
        archived: report.outcome.archived.clone(),
        dropped: report.outcome.dropped.clone(),
    }
}

pub fn trust_to_proto(trust: lore_types::trust::Trust) -> proto::Trust {
    match trust {
        lore_types::trust::Trust::Reviewed => proto::Trust::Reviewed,
        lore_types::trust::Trust::Verified => proto::Trust::Verified,
        lore_types::trust::Trust::Observed => proto::Trust::Observed,
    }
}

pub fn review_record_to_proto(review: &lore_types::trust::ReviewRecord) -> proto::ReviewRecord {
    proto::ReviewRecord {
        approved: review.approved,
        reviewed_by: review.by.clone(),
        reviewed_at: Some(to_timestamp(review.at)),
        note: review.note.clone(),
    }
}

pub fn origin_to_proto(origin: &lore_types::trust::Origin) -> proto::Origin {
    proto::Origin {
        author: <&str>::from(origin.author).to_owned(),
        channel: origin.channel.clone(),
        token: origin.token.clone(),
        role: origin.role.clone(),
        agent_id: origin.agent_id.clone().unwrap_or_default(),
        session_id: origin.session_id.map(|session| session.to_string()).unwrap_or_default(),
        description: origin.describe(),
    }
}
