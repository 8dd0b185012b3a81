//! AgentService handlers: validate and convert the request, ask the
//! briefing domain, convert the answer.

pub mod convert;

use tonic::{Request, Response, Status};

use lore_proto::v1 as proto;
use lore_proto::v1::agent_service_server::AgentService;

use super::request_scope;
use crate::Error;
use crate::briefing::Briefer;

/// Handlers of `lore.v1.AgentService`.
#[derive(Debug, Clone)]
pub struct AgentApi {
    briefer: Briefer,
}

impl AgentApi {
    pub fn new(briefer: Briefer) -> Self {
        Self { briefer }
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
}
