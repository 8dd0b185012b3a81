//! AgentService handlers: validate and convert the request, ask the
//! briefing domain or the quarantine, convert the answer.

pub mod convert;
pub mod injections;

use tonic::{Request, Response, Status};

use lore_proto::v1 as proto;
use lore_proto::v1::agent_service_server::AgentService;

use super::request_scope;
use crate::Error;
use lore_domain::briefing::Briefer;
use lore_domain::trust::quarantine::Quarantine;
use lore_types::trust::quarantine::Decision;

/// Handlers of `lore.v1.AgentService`.
#[derive(Debug, Clone)]
pub struct AgentApi {
    briefer: Briefer,
    quarantine: Quarantine,
}

impl AgentApi {
    pub fn new(briefer: Briefer, quarantine: Quarantine) -> Self {
        Self { briefer, quarantine }
    }

    async fn decide(
        &self,
        request: Request<proto::DecideQuarantinedRequest>,
        decision: Decision,
    ) -> Result<Response<proto::QuarantinedItem>, Status> {
        let scope = request_scope(&request);
        let by = super::request_origin(&request).token;
        let (quarantine_id, note) = convert::decision(request.get_ref(), decision).map_err(Error::from)?;
        let by = if by.is_empty() { "someone (auth off)".to_owned() } else { by };
        let item = self.quarantine.decide(&scope, quarantine_id, decision, &by, &note).await?;
        Ok(Response::new(convert::quarantined_to_proto(&item)))
    }
}

#[tonic::async_trait]
impl AgentService for AgentApi {
    async fn brief(&self, request: Request<proto::BriefRequest>) -> Result<Response<proto::BriefResponse>, Status> {
        let scope = request_scope(&request);
        let brief = convert::brief_request(request.get_ref()).map_err(Error::from)?;
        let briefing = self.briefer.brief(&scope, &brief).await?;
        Ok(Response::new(convert::briefing_to_proto(&briefing)))
    }

    async fn list_quarantined(
        &self,
        request: Request<proto::ListQuarantinedRequest>,
    ) -> Result<Response<proto::ListQuarantinedResponse>, Status> {
        let scope = request_scope(&request);
        let message = request.get_ref();
        let filter = convert::quarantine_filter(message).map_err(Error::from)?;
        let (limit, after) = super::convert::page("page", message.page.as_ref()).map_err(Error::from)?;
        let (items, held) = tokio::try_join!(
            self.quarantine.list(&scope, &filter, limit, after),
            self.quarantine.held_count(&scope, &filter.project)
        )?;
        let next_cursor = super::convert::next_cursor(&items, limit, |last| lore_types::actions::query::Position {
            occurred_at: last.caught_at,
            action_id: last.quarantine_id,
        });
        Ok(Response::new(proto::ListQuarantinedResponse {
            items: items.iter().map(convert::quarantined_to_proto).collect(),
            next_cursor,
            held: held.max(0) as u64,
        }))
    }

    async fn record_call_injection(
        &self,
        request: Request<proto::RecordCallInjectionRequest>,
    ) -> Result<Response<proto::RecordCallInjectionResponse>, Status> {
        let scope = request_scope(&request);
        let given = injections::call_given(request.get_ref()).map_err(Error::from)?;
        let recorded = self.briefer.ledger().record_call(&scope, &given).await?;
        Ok(Response::new(proto::RecordCallInjectionResponse { recorded }))
    }

    async fn list_injections(
        &self,
        request: Request<proto::ListInjectionsRequest>,
    ) -> Result<Response<proto::ListInjectionsResponse>, Status> {
        let scope = request_scope(&request);
        let message = request.get_ref();
        let filter = injections::filter(message).map_err(Error::from)?;
        let (limit, after) = super::convert::page("page", message.page.as_ref()).map_err(Error::from)?;
        let ledger = self.briefer.ledger();
        let (listed, totals) =
            tokio::try_join!(ledger.list(&scope, &filter, limit, after), ledger.totals(&scope, &filter))?;
        let next_cursor = super::convert::next_cursor(&listed, limit, |last| lore_types::actions::query::Position {
            occurred_at: last.created_at.unwrap_or_default(),
            action_id: last.injection_id,
        });
        Ok(Response::new(proto::ListInjectionsResponse {
            injections: listed.iter().map(injections::injection_to_proto).collect(),
            next_cursor,
            totals: Some(injections::totals_to_proto(&totals)),
        }))
    }

    async fn list_cited_files(
        &self,
        request: Request<proto::ListCitedFilesRequest>,
    ) -> Result<Response<proto::ListCitedFilesResponse>, Status> {
        let scope = request_scope(&request);
        let project = super::convert::project("project", &request.get_ref().project).map_err(Error::from)?;
        let paths = self.briefer.cited_files(&scope, &project).await?;
        Ok(Response::new(proto::ListCitedFilesResponse { paths }))
    }

    async fn release_quarantined(
        &self,
        request: Request<proto::DecideQuarantinedRequest>,
    ) -> Result<Response<proto::QuarantinedItem>, Status> {
        self.decide(request, Decision::Release).await
    }

    async fn erase_quarantined(
        &self,
        request: Request<proto::DecideQuarantinedRequest>,
    ) -> Result<Response<proto::QuarantinedItem>, Status> {
        self.decide(request, Decision::Erase).await
    }
}
