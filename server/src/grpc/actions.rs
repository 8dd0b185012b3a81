//! ActionService handlers: validate and convert the request, call the action
//! log, convert the answer. Every RPC is served (`tests/api/auth.rs` calls
//! each and refuses an UNIMPLEMENTED).

use chrono::Utc;
use tokio_stream::StreamExt as _;
use tonic::codegen::BoxStream;
use tonic::{Request, Response, Status, Streaming};

use lore_proto::v1 as proto;
use lore_proto::v1::action_service_server::ActionService;

use super::convert::{self, FieldError};
use super::request_scope;
use crate::Error;
use lore_domain::actions::ActionLog;
use lore_domain::briefing::{Briefer, ResumeItem};
use lore_domain::reports::{Period, Report, Reports};
use lore_proto::limits::MAX_BATCH_ACTIONS;
use lore_store::actions::sessions::LastSessionFilter;
use lore_types::actions::limits::MAX_RECENT_LIMIT;
use lore_types::actions::query::{ActionFilter, Position};

/// Actions returned by GetRecentActions when the request says 0.
const DEFAULT_RECENT_LIMIT: u32 = 20;
/// Activity reports cover the last week unless the request says otherwise.
const DEFAULT_REPORT_DAYS: i64 = 7;
const DEFAULT_RECENT_FAILURES: u32 = 10;

/// Handlers of `lore.v1.ActionService`.
#[derive(Debug, Clone)]
pub struct ActionsApi {
    log: ActionLog,
    /// Resume's learnings and warnings come from the briefing.
    briefer: Briefer,
    reports: Reports,
}

impl ActionsApi {
    pub fn new(log: ActionLog, briefer: Briefer, reports: Reports) -> Self {
        Self { log, briefer, reports }
    }
}

fn resume_item_to_proto(item: &ResumeItem) -> proto::ResumeEvent {
    use proto::resume_event::Event;
    match item {
        ResumeItem::Log(event) => convert::resume_event_to_proto(event),
        ResumeItem::Learning(hit) => {
            proto::ResumeEvent { event: Some(Event::Learning(crate::grpc::knowledge::convert::hit_to_proto(hit))) }
        }
        ResumeItem::Warning(warning) => {
            proto::ResumeEvent { event: Some(Event::Warning(crate::grpc::qa::convert::warning_to_proto(warning))) }
        }
    }
}

fn non_empty(value: &str) -> Option<&str> {
    (!value.is_empty()).then_some(value)
}

#[tonic::async_trait]
impl ActionService for ActionsApi {
    async fn start_session(
        &self,
        request: Request<proto::StartSessionRequest>,
    ) -> Result<Response<proto::StartSessionResponse>, Status> {
        let scope = request_scope(&request);
        let session = convert::new_session(request.get_ref(), Utc::now()).map_err(Error::from)?;
        let (session, duplicate) = self.log.start_session(&scope, session).await?;
        Ok(Response::new(proto::StartSessionResponse { session: Some(convert::session_to_proto(&session)), duplicate }))
    }

    async fn heartbeat(
        &self,
        request: Request<proto::HeartbeatRequest>,
    ) -> Result<Response<proto::HeartbeatResponse>, Status> {
        let scope = request_scope(&request);
        let session_id = convert::required_uuid("session_id", &request.get_ref().session_id).map_err(Error::from)?;
        let session = self.log.heartbeat(&scope, session_id).await?;
        Ok(Response::new(proto::HeartbeatResponse {
            last_activity_at: Some(convert::to_timestamp(session.last_activity_at)),
            status: convert::session_status_to_proto(session.status) as i32,
        }))
    }

    async fn end_session(
        &self,
        request: Request<proto::EndSessionRequest>,
    ) -> Result<Response<proto::EndSessionResponse>, Status> {
        let scope = request_scope(&request);
        let message = request.get_ref();
        let session_id = convert::required_uuid("session_id", &message.session_id).map_err(Error::from)?;
        let reason = convert::end_reason("reason", message.reason).map_err(Error::from)?;
        let session = self.log.end_session(&scope, session_id, reason, &message.summary).await?;
        Ok(Response::new(proto::EndSessionResponse { session: Some(convert::session_to_proto(&session)) }))
    }

    async fn get_last_session(
        &self,
        request: Request<proto::GetLastSessionRequest>,
    ) -> Result<Response<proto::GetLastSessionResponse>, Status> {
        let scope = request_scope(&request);
        let message = request.get_ref();
        let project = convert::project("project", &message.project).map_err(Error::from)?;
        let filter = LastSessionFilter {
            agent_id: non_empty(&message.agent_id),
            supervisor_type: non_empty(&message.supervisor_type),
            ..Default::default()
        };
        let (session, last_action) = self.log.last_session(&scope, &project, &filter).await?;
        Ok(Response::new(proto::GetLastSessionResponse {
            session: Some(convert::session_to_proto(&session)),
            last_action: last_action.as_ref().map(convert::action_to_proto),
        }))
    }

    async fn log_action(
        &self,
        request: Request<proto::LogActionRequest>,
    ) -> Result<Response<proto::LogActionResponse>, Status> {
        let scope = request_scope(&request);
        let action = request.get_ref().action.as_ref().ok_or_else(|| Error::invalid("action", "required"))?;
        let action = convert::new_action(action).map_err(|error| Error::from(error.within("action")))?;
        let logged = self.log.log(&scope, action).await?;
        Ok(Response::new(proto::LogActionResponse {
            ack: Some(proto::WriteAck { id: logged.action_id.to_string(), duplicate: logged.duplicate }),
            redaction_count: logged.redaction_count.max(0) as u32,
        }))
    }

    async fn ingest(
        &self,
        request: Request<Streaming<proto::IngestRequest>>,
    ) -> Result<Response<BoxStream<proto::IngestAck>>, Status> {
        let scope = request_scope(&request);
        let mut batches = request.into_inner();
        let log = self.log.clone();
        // Batches are stored one after the other, so a session's actions are
        // chained in the order the client sent them and acks come back in
        // order. Each ack is sent only after its batch committed.
        let acks = async_stream::try_stream! {
            let mut last_sequence: Option<u64> = None;
            while let Some(batch) = batches.next().await {
                let batch = batch?;
                if let Some(last) = last_sequence.filter(|last| batch.sequence <= *last) {
                    let reason = format!("{} is not greater than the previous batch's {last}", batch.sequence);
                    Err(Status::from(Error::from(FieldError { field: "sequence".into(), reason })))?;
                }
                last_sequence = Some(batch.sequence);
                if batch.actions.len() > MAX_BATCH_ACTIONS {
                    let reason = format!("{} actions, over the limit of {MAX_BATCH_ACTIONS} per batch", batch.actions.len());
                    Err(Status::from(Error::invalid("actions", reason)))?;
                }
                let actions = batch.actions.iter().enumerate().map(|(index, action)| convert::batch_action(index, action)).collect();
                let outcome = log.ingest(&scope, actions).await.map_err(Status::from)?;
                yield proto::IngestAck {
                    sequence: batch.sequence,
                    stored: outcome.stored,
                    duplicates: outcome.duplicates,
                    rejected: outcome
                        .rejected
                        .iter()
                        .map(|rejection| proto::RejectedAction {
                            index: rejection.index as u32,
                            action_id: rejection.action_id.clone(),
                            reason: rejection.message(),
                        })
                        .collect(),
                };
            }
        };
        Ok(Response::new(Box::pin(acks) as BoxStream<proto::IngestAck>))
    }

    async fn get_recent_actions(
        &self,
        request: Request<proto::GetRecentActionsRequest>,
    ) -> Result<Response<proto::GetRecentActionsResponse>, Status> {
        let scope = request_scope(&request);
        let message = request.get_ref();
        let limit = match message.limit {
            0 => DEFAULT_RECENT_LIMIT,
            limit => limit.min(MAX_RECENT_LIMIT),
        };
        let session = match convert::optional_uuid("session_id", &message.session_id).map_err(Error::from)? {
            Some(session_id) => self.log.session(&scope, session_id).await?,
            None => {
                let project = convert::project("project", &message.project).map_err(Error::from)?;
                let filter = LastSessionFilter { agent_id: non_empty(&message.agent_id), ..Default::default() };
                self.log.last_session(&scope, &project, &filter).await?.0
            }
        };
        let mut actions = self.log.recent_actions(&scope, session.session_id, i64::from(limit)).await?;
        actions.reverse();
        Ok(Response::new(proto::GetRecentActionsResponse {
            session: Some(convert::session_to_proto(&session)),
            actions: actions.iter().map(convert::action_to_proto).collect(),
        }))
    }

    async fn search_actions(
        &self,
        request: Request<proto::SearchActionsRequest>,
    ) -> Result<Response<proto::SearchActionsResponse>, Status> {
        let scope = request_scope(&request);
        let (filter, limit, after) = convert::search_filter(request.get_ref()).map_err(Error::from)?;
        // One row more than asked tells whether there is a next page.
        let mut actions = self.log.search(&scope, &filter, after, limit + 1).await?;
        let next_cursor = if actions.len() as i64 > limit {
            actions.truncate(limit as usize);
            actions.last().map(|last| {
                Position { occurred_at: last.action.occurred_at, action_id: last.action.action_id }.encode()
            })
        } else {
            None
        };
        Ok(Response::new(proto::SearchActionsResponse {
            actions: actions.iter().map(convert::action_to_proto).collect(),
            next_cursor: next_cursor.unwrap_or_default(),
        }))
    }

    async fn periodic_report(
        &self,
        request: Request<proto::PeriodicReportRequest>,
    ) -> Result<Response<proto::PeriodicReportResponse>, Status> {
        let scope = request_scope(&request);
        let message = request.get_ref();
        let period = report_period(message.period)?;
        let day = match message.day.as_str() {
            "" => period.last_complete(Utc::now()).0,
            day => report_day("day", day)?,
        };
        let project = report_project(&message.project)?;
        let report = self.reports.report(&scope, project.as_deref(), period, day).await?;
        Ok(Response::new(report_to_proto(report)))
    }

    async fn list_periodic_reports(
        &self,
        request: Request<proto::ListPeriodicReportsRequest>,
    ) -> Result<Response<proto::ListPeriodicReportsResponse>, Status> {
        let scope = request_scope(&request);
        let message = request.get_ref();
        let period = report_period(message.period)?;
        let before = match message.before.as_str() {
            "" => None,
            day => Some(report_day("before", day)?),
        };
        let limit = match message.limit {
            0 => 30,
            limit @ 1..=366 => i64::from(limit),
            limit => return Err(Error::invalid("limit", format!("{limit} is more than 366")).into()),
        };
        let project = report_project(&message.project)?;
        let reports = self.reports.history(&scope, project.as_deref(), period, before, limit).await?;
        Ok(Response::new(proto::ListPeriodicReportsResponse {
            reports: reports.into_iter().map(report_to_proto).collect(),
        }))
    }

    async fn activity_report(
        &self,
        request: Request<proto::ActivityReportRequest>,
    ) -> Result<Response<proto::ActivityReportResponse>, Status> {
        let scope = request_scope(&request);
        let message = request.get_ref();
        let project = convert::project("project", &message.project).map_err(Error::from)?;
        let (from, until) = convert::time_range("window", message.window.as_ref()).map_err(Error::from)?;
        let until = until.unwrap_or_else(Utc::now);
        let from = from.unwrap_or(until - chrono::Duration::days(DEFAULT_REPORT_DAYS));
        if from >= until {
            return Err(Error::invalid("window", "start must be before end").into());
        }
        let filter = ActionFilter {
            project,
            agent_id: non_empty(&message.agent_id).map(str::to_owned),
            from: Some(from),
            until: Some(until),
            ..ActionFilter::default()
        };
        let failures_limit = match message.recent_failures_limit {
            0 => DEFAULT_RECENT_FAILURES,
            limit => limit.min(MAX_RECENT_LIMIT),
        };
        let report = self.log.activity_report(&scope, &filter, i64::from(failures_limit)).await?;
        let counts = &report.counts;
        Ok(Response::new(proto::ActivityReportResponse {
            window: Some(proto::TimeRange {
                start: Some(convert::to_timestamp(report.from)),
                end: Some(convert::to_timestamp(report.until)),
            }),
            totals: Some(convert::activity_counts_to_proto(&counts.totals)),
            by_day: counts.by_day.iter().map(convert::activity_counts_to_proto).collect(),
            by_action_type: counts.by_action_type.iter().map(convert::activity_counts_to_proto).collect(),
            by_outcome: counts.by_outcome.iter().map(convert::activity_counts_to_proto).collect(),
            most_common_action_type: report.most_common_action_type().unwrap_or_default().to_owned(),
            busiest_day: report.busiest_day().unwrap_or_default().to_owned(),
            recent_failures: report.recent_failures.iter().map(convert::action_to_proto).collect(),
            markdown: if message.render_markdown { report.to_markdown() } else { String::new() },
        }))
    }

    async fn resume(
        &self,
        request: Request<proto::ResumeRequest>,
    ) -> Result<Response<BoxStream<proto::ResumeEvent>>, Status> {
        let scope = request_scope(&request);
        let reader = super::request_origin(&request).author;
        let message = request.get_ref();
        let target = convert::resume_target(message).map_err(Error::from)?;
        let recent = match message.recent_limit {
            0 => DEFAULT_RECENT_LIMIT,
            limit => limit.min(MAX_RECENT_LIMIT),
        };
        let session = self.log.resume_session(&scope, &target).await?;
        let events = self
            .briefer
            .resume(scope, session, target.agent_id, recent as usize, message.follow, reader)
            .map(|item| item.map(|item| resume_item_to_proto(&item)).map_err(Status::from));
        Ok(Response::new(Box::pin(events) as BoxStream<proto::ResumeEvent>))
    }

    async fn export(
        &self,
        request: Request<proto::ExportRequest>,
    ) -> Result<Response<BoxStream<proto::ExportChunk>>, Status> {
        let scope = request_scope(&request);
        let plan = convert::export_plan(request.get_ref()).map_err(Error::from)?;
        let chunks =
            self.log.export(scope, plan.format, plan.filter, plan.resume, plan.as_of, plan.chunk_rows).map(|chunk| {
                chunk
                    .map(|chunk| proto::ExportChunk {
                        data: chunk.data,
                        rows: chunk.rows,
                        cursor: chunk.cursor,
                        last: chunk.last,
                    })
                    .map_err(Status::from)
            });
        Ok(Response::new(Box::pin(chunks) as BoxStream<proto::ExportChunk>))
    }

    async fn get_retention_status(
        &self,
        _request: Request<proto::GetRetentionStatusRequest>,
    ) -> Result<Response<proto::RetentionStatus>, Status> {
        let report = self.log.run_retention(true).await?;
        Ok(Response::new(convert::retention_status_to_proto(&report)))
    }

    async fn run_retention(
        &self,
        request: Request<proto::RunRetentionRequest>,
    ) -> Result<Response<proto::RetentionStatus>, Status> {
        let report = self.log.run_retention(request.get_ref().dry_run).await?;
        Ok(Response::new(convert::retention_status_to_proto(&report)))
    }

    async fn verify_chain(
        &self,
        request: Request<proto::VerifyChainRequest>,
    ) -> Result<Response<proto::VerifyChainResponse>, Status> {
        let scope = request_scope(&request);
        let session_id = convert::required_uuid("session_id", &request.get_ref().session_id).map_err(Error::from)?;
        let report = self.log.verify_chain(&scope, session_id).await?;
        Ok(Response::new(proto::VerifyChainResponse {
            intact: report.first_broken.is_none(),
            checked: report.checked,
            first_broken: report.first_broken.map(|link| proto::BrokenLink {
                chain_seq: link.chain_seq.max(0) as u64,
                action_id: link.action_id.map(|id| id.to_string()).unwrap_or_default(),
                expected_hash: link.expected_hash,
                stored_hash: link.stored_hash,
                reason: link.reason,
            }),
        }))
    }
}

fn report_period(value: i32) -> Result<Period, Status> {
    match convert::enum_value::<proto::ReportPeriod>("period", value).map_err(Error::from)? {
        proto::ReportPeriod::Unspecified => Err(Error::invalid("period", "required: daily or weekly").into()),
        proto::ReportPeriod::Daily => Ok(Period::Daily),
        proto::ReportPeriod::Weekly => Ok(Period::Weekly),
    }
}

/// A report's project; `None`, the fleet, when empty.
fn report_project(project: &str) -> Result<Option<String>, Status> {
    match project {
        "" => Ok(None),
        project => Ok(Some(convert::project("project", project).map_err(Error::from)?)),
    }
}

fn report_day(field: &str, day: &str) -> Result<chrono::NaiveDate, Status> {
    chrono::NaiveDate::parse_from_str(day, "%Y-%m-%d")
        .map_err(|_| Error::invalid(field, format!("{day:?} is not a date like 2026-11-23")).into())
}

fn report_to_proto(report: Report) -> proto::PeriodicReportResponse {
    proto::PeriodicReportResponse {
        title: report.title,
        window: Some(proto::TimeRange {
            start: Some(convert::to_timestamp(report.from)),
            end: Some(convert::to_timestamp(report.until)),
        }),
        markdown: report.markdown,
        written_at: report.written_at.map(convert::to_timestamp),
    }
}
