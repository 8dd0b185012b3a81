//! QaLearningService handlers: validate and convert the request, call the
//! QA-learning domain, convert the answer.

pub mod convert;
mod mask_proposals;
mod regrouping_proposals;

use chrono::Utc;
use tonic::{Request, Response, Status};

use lore_proto::v1 as proto;
use lore_proto::v1::qa_learning_service_server::QaLearningService;

use super::request_scope;
use crate::Error;
use lore_domain::injections::{self, InjectionLedger, Surface};
use lore_domain::qa::{QaLearning, patterns};
use lore_domain::settings::{Settings, Switches};
use lore_types::actions::query::Position;
use lore_types::qa::{ChangedBy, Merge, PromotionDecision};

use lore_types::qa::limits::{
    MAX_ACKNOWLEDGED, MAX_IDS, MAX_MASK_NAME_CHARS, MAX_NAME_CHARS, MAX_NOTE_CHARS, MAX_REMINE_WINDOW, MAX_TEXT_CHARS,
};
const DEFAULT_OCCURRENCES: u32 = 20;
const DEFAULT_CANDIDATES: u32 = 20;

/// Handlers of `lore.v1.QaLearningService`.
#[derive(Debug, Clone)]
pub struct QaLearningApi {
    qa: QaLearning,
    ledger: InjectionLedger,
    settings: Settings,
}

impl QaLearningApi {
    pub fn new(qa: QaLearning, ledger: InjectionLedger, settings: Settings) -> Self {
        Self { qa, ledger, settings }
    }

    async fn review(
        &self,
        request: Request<proto::ReviewPromotionRequest>,
        decision: PromotionDecision,
    ) -> Result<Response<proto::Promotion>, Status> {
        let scope = request_scope(&request);
        let note_required = decision != PromotionDecision::Approve;
        let review = convert::review(request.get_ref(), note_required).map_err(Error::from)?;
        let (promotion_id, actor, note) = (review.promotion_id, review.actor, review.note);
        let promotion = self.qa.review_promotion(&scope, promotion_id, decision, &actor, &note).await?;
        Ok(Response::new(convert::promotion_to_proto(&promotion)))
    }
}

fn field<T>(result: Result<T, lore_types::validate::FieldError>) -> Result<T, Status> {
    result.map_err(|error| Error::from(error).into())
}

fn switches_to_proto(switches: &Switches) -> proto::Switches {
    proto::Switches { warnings_enabled: switches.warnings(), learning_enabled: switches.learning() }
}

#[tonic::async_trait]
impl QaLearningService for QaLearningApi {
    async fn capture_failure(
        &self,
        request: Request<proto::CaptureFailureRequest>,
    ) -> Result<Response<proto::CaptureFailureResponse>, Status> {
        let scope = request_scope(&request);
        let mut failure = field(convert::new_failure(request.get_ref(), Utc::now()))?;
        failure.origin = super::request_origin(&request).in_session(None, failure.session_id).tool_output();
        let outcome = self.qa.capture(&scope, failure).await?;
        Ok(Response::new(proto::CaptureFailureResponse {
            ack: Some(proto::WriteAck { id: outcome.failure_id.to_string(), duplicate: outcome.duplicate }),
            category: outcome.category,
            category_rule_id: outcome.category_rule_id.unwrap_or_default(),
            links: outcome.links.iter().map(convert::link_to_proto).collect(),
            quarantined: outcome
                .held
                .iter()
                .map(|(index, reason)| proto::QuarantinedMessage {
                    message_index: *index as u32,
                    reason: reason.clone(),
                })
                .collect(),
        }))
    }

    async fn record_fix_attempt(
        &self,
        request: Request<proto::RecordFixAttemptRequest>,
    ) -> Result<Response<proto::RecordFixAttemptResponse>, Status> {
        let scope = request_scope(&request);
        let mut attempt = field(convert::fix_attempt(request.get_ref(), Utc::now()))?;
        attempt.origin = super::request_origin(&request);
        attempt.trust = attempt.origin.trust();
        let recorded = self.qa.record_fix(&scope, &attempt).await?;
        let gotchas: Vec<String> = recorded.gotcha_entry_ids.iter().map(ToString::to_string).collect();
        Ok(Response::new(proto::RecordFixAttemptResponse {
            ack: Some(proto::WriteAck { id: recorded.attempt_id.to_string(), duplicate: recorded.duplicate }),
            resolved: recorded.resolved,
            attempts: recorded.attempts,
            gotcha_entry_id: gotchas.first().cloned().unwrap_or_default(),
            gotcha_entry_ids: gotchas,
            quarantined: recorded.held.is_some(),
            quarantine_reason: recorded.held.unwrap_or_default(),
        }))
    }

    async fn get_warnings(
        &self,
        request: Request<proto::GetWarningsRequest>,
    ) -> Result<Response<proto::GetWarningsResponse>, Status> {
        let scope = request_scope(&request);
        let warning_request = field(convert::warning_request(request.get_ref()))?;
        let warnings = self.qa.warnings(&scope, &warning_request).await?;
        let items = warnings.warnings.iter().map(|warning| injections::warning_item(warning, None)).collect();
        self.ledger.record_read(&warning_request.project, warning_request.session_id, Surface::Warnings, items).await?;
        Ok(Response::new(proto::GetWarningsResponse {
            warnings: warnings.warnings.iter().map(convert::warning_to_proto).collect(),
            held_out: warnings.held_out,
        }))
    }

    async fn record_outcome(
        &self,
        request: Request<proto::RecordOutcomeRequest>,
    ) -> Result<Response<proto::RecordOutcomeResponse>, Status> {
        let scope = request_scope(&request);
        let message = request.get_ref();
        let delivery_ids = field(convert::uuids("delivery_ids", &message.delivery_ids, MAX_IDS))?;
        let outcome = field(convert::warning_outcome("outcome", message.outcome))?;
        let note = field(lore_types::validate::text("note", &message.note, MAX_TEXT_CHARS, false))?;
        let (updated, standings) = self.qa.record_outcome(&scope, &delivery_ids, outcome, &note).await?;
        Ok(Response::new(proto::RecordOutcomeResponse {
            updated: updated as u32,
            patterns: standings
                .iter()
                .map(|standing| proto::PatternEffectiveness {
                    pattern_id: standing.pattern_id.to_string(),
                    effectiveness: standing.effectiveness,
                    confidence: standing.confidence,
                })
                .collect(),
        }))
    }

    async fn record_task_result(
        &self,
        request: Request<proto::RecordTaskResultRequest>,
    ) -> Result<Response<proto::RecordTaskResultResponse>, Status> {
        let scope = request_scope(&request);
        let mut result = field(convert::task_result(request.get_ref(), Utc::now()))?;
        result.origin = super::request_origin(&request).in_session(None, result.session_id);
        let recorded = self.qa.record_result(&scope, result).await?;
        Ok(Response::new(convert::task_result_to_proto(&recorded)))
    }

    async fn list_patterns(
        &self,
        request: Request<proto::ListPatternsRequest>,
    ) -> Result<Response<proto::ListPatternsResponse>, Status> {
        let scope = request_scope(&request);
        let (filter, limit, after) = field(convert::pattern_filter(request.get_ref()))?;
        let reader = super::request_origin(&request);
        let patterns = self.qa.list_patterns(&scope, &filter, limit, after).await?;
        let next_cursor = match patterns.last() {
            Some(last) if patterns.len() as i64 == limit => convert::pattern_cursor(last),
            _ => String::new(),
        };
        let patterns = patterns.into_iter().map(|pattern| patterns::as_read_by(pattern, &reader));
        Ok(Response::new(proto::ListPatternsResponse {
            patterns: patterns.map(|pattern| convert::pattern_to_proto(&pattern)).collect(),
            next_cursor,
        }))
    }

    async fn get_pattern(
        &self,
        request: Request<proto::GetPatternRequest>,
    ) -> Result<Response<proto::GetPatternResponse>, Status> {
        let scope = request_scope(&request);
        let message = request.get_ref();
        let pattern_id = field(super::convert::required_uuid("pattern_id", &message.pattern_id))?;
        let limit = match message.occurrence_limit {
            0 => DEFAULT_OCCURRENCES,
            limit => limit.min(500),
        };
        let reader = super::request_origin(&request);
        let report = self.qa.pattern(&scope, pattern_id, i64::from(limit)).await?;
        let pattern = patterns::as_read_by(report.pattern, &reader);
        let fixes = report.fixes.into_iter().map(|fix| patterns::fix_as_read_by(fix, &reader));
        Ok(Response::new(proto::GetPatternResponse {
            pattern: Some(convert::pattern_to_proto(&pattern)),
            occurrences: report.occurrences.iter().map(convert::occurrence_to_proto).collect(),
            fixes: fixes.map(|fix| convert::fix_to_proto(&fix)).collect(),
        }))
    }

    async fn update_pattern(
        &self,
        request: Request<proto::UpdatePatternRequest>,
    ) -> Result<Response<proto::Pattern>, Status> {
        let scope = request_scope(&request);
        let (pattern_id, edits) = field(convert::pattern_edits(request.get_ref()))?;
        let pattern = self.qa.update_pattern(&scope, pattern_id, &edits, &super::request_origin(&request)).await?;
        Ok(Response::new(convert::pattern_to_proto(&pattern)))
    }

    async fn list_fixes_to_review(
        &self,
        request: Request<proto::ListFixesToReviewRequest>,
    ) -> Result<Response<proto::ListFixesToReviewResponse>, Status> {
        let scope = request_scope(&request);
        let (project, limit) = field(convert::fixes_to_review_request(request.get_ref()))?;
        let fixes = self.qa.fixes_to_review(&scope, &project, limit).await?;
        Ok(Response::new(proto::ListFixesToReviewResponse {
            fixes: fixes.iter().map(convert::fix_to_review_to_proto).collect(),
        }))
    }

    async fn review_fix(
        &self,
        request: Request<proto::ReviewFixRequest>,
    ) -> Result<Response<proto::FixAttempt>, Status> {
        let scope = request_scope(&request);
        let (attempt_id, approved, note) = field(convert::fix_review(request.get_ref()))?;
        let reviewer = super::request_origin(&request);
        let (_, attempt) = self.qa.review_fix(&scope, attempt_id, approved, &reviewer, &note).await?;
        Ok(Response::new(convert::fix_to_proto(&attempt)))
    }

    async fn merge_patterns(
        &self,
        request: Request<proto::MergePatternsRequest>,
    ) -> Result<Response<proto::Pattern>, Status> {
        let scope = request_scope(&request);
        let message = request.get_ref();
        let into = field(super::convert::required_uuid("into_pattern_id", &message.into_pattern_id))?;
        let sources = field(convert::uuids("pattern_ids", &message.pattern_ids, MAX_IDS))?;
        let reason = field(lore_types::validate::text("reason", &message.reason, MAX_TEXT_CHARS, false))?;
        let actor = super::request_origin(&request).token;
        let merge = Merge { into, sources, reason, by: ChangedBy::Person, actor };
        let merged = self.qa.merge_patterns(&scope, &merge).await?;
        Ok(Response::new(convert::pattern_to_proto(&merged.pattern)))
    }

    async fn remine_project(
        &self,
        request: Request<proto::RemineProjectRequest>,
    ) -> Result<Response<proto::RemineProjectResponse>, Status> {
        let scope = request_scope(&request);
        let message = request.get_ref();
        let project = field(lore_types::validate::project("project", &message.project))?;
        let window = match message.window {
            0 => self.qa.config().remine_window,
            window => i64::from(window).min(MAX_REMINE_WINDOW),
        };
        let done = self.qa.remine(&scope, &project, window).await?;
        Ok(Response::new(convert::remined_to_proto(&done)))
    }

    async fn list_regrouping_proposals(
        &self,
        request: Request<proto::ListRegroupingProposalsRequest>,
    ) -> Result<Response<proto::ListRegroupingProposalsResponse>, Status> {
        let scope = request_scope(&request);
        let message = request.get_ref();
        let project = field(lore_types::validate::project("project", &message.project))?;
        let proposals = self.qa.regrouping_proposals(&scope, &project, message.include_decided).await?;
        Ok(Response::new(proto::ListRegroupingProposalsResponse {
            proposals: proposals.iter().map(regrouping_proposals::proposal_to_proto).collect(),
        }))
    }

    async fn decide_regrouping_proposal(
        &self,
        request: Request<proto::DecideRegroupingProposalRequest>,
    ) -> Result<Response<proto::DecideRegroupingProposalResponse>, Status> {
        let scope = request_scope(&request);
        let by = super::request_origin(&request).token;
        let (project, proposal_id, decision) = field(regrouping_proposals::decision(request.get_ref()))?;
        let decided = self.qa.decide_regrouping_proposal(&scope, &project, proposal_id, decision, &by).await?;
        Ok(Response::new(proto::DecideRegroupingProposalResponse {
            proposal: Some(regrouping_proposals::proposal_to_proto(&decided.proposal)),
            made: Some(convert::remined_to_proto(&decided.remined)),
        }))
    }

    async fn list_grouping_masks(
        &self,
        request: Request<proto::ListGroupingMasksRequest>,
    ) -> Result<Response<proto::ListGroupingMasksResponse>, Status> {
        let scope = request_scope(&request);
        let project = field(lore_types::validate::project("project", &request.get_ref().project))?;
        let masks = self.qa.grouping_masks(&scope, &project).await?;
        Ok(Response::new(proto::ListGroupingMasksResponse {
            masks: masks.iter().map(convert::grouping_mask_to_proto).collect(),
        }))
    }

    async fn put_grouping_mask(
        &self,
        request: Request<proto::PutGroupingMaskRequest>,
    ) -> Result<Response<proto::PutGroupingMaskResponse>, Status> {
        let scope = request_scope(&request);
        let by = super::request_origin(&request).token;
        let mask = field(convert::grouping_mask(request.get_ref().mask.as_ref(), &by))?;
        let (mask, created, remined) = self.qa.put_grouping_mask(&scope, &mask).await?;
        Ok(Response::new(proto::PutGroupingMaskResponse {
            mask: Some(convert::grouping_mask_to_proto(&mask)),
            created,
            remined: Some(convert::remined_to_proto(&remined)),
        }))
    }

    async fn delete_grouping_mask(
        &self,
        request: Request<proto::DeleteGroupingMaskRequest>,
    ) -> Result<Response<proto::DeleteGroupingMaskResponse>, Status> {
        let scope = request_scope(&request);
        let message = request.get_ref();
        let project = field(lore_types::validate::project("project", &message.project))?;
        let name = field(lore_types::validate::name("name", &message.name, MAX_MASK_NAME_CHARS, true))?;
        let (deleted, remined) = self.qa.delete_grouping_mask(&scope, &project, &name).await?;
        Ok(Response::new(proto::DeleteGroupingMaskResponse {
            deleted,
            remined: Some(convert::remined_to_proto(&remined)),
        }))
    }

    async fn list_mask_proposals(
        &self,
        request: Request<proto::ListMaskProposalsRequest>,
    ) -> Result<Response<proto::ListMaskProposalsResponse>, Status> {
        let scope = request_scope(&request);
        let message = request.get_ref();
        let project = field(lore_types::validate::project("project", &message.project))?;
        let proposals = self.qa.mask_proposals(&scope, &project, message.include_decided).await?;
        Ok(Response::new(proto::ListMaskProposalsResponse {
            proposals: proposals.iter().map(mask_proposals::proposal_to_proto).collect(),
        }))
    }

    async fn decide_mask_proposal(
        &self,
        request: Request<proto::DecideMaskProposalRequest>,
    ) -> Result<Response<proto::DecideMaskProposalResponse>, Status> {
        let scope = request_scope(&request);
        let by = super::request_origin(&request).token;
        let (project, proposal_id, decision) = field(mask_proposals::decision(request.get_ref()))?;
        let decided = self.qa.decide_mask_proposal(&scope, &project, proposal_id, &decision, &by).await?;
        Ok(Response::new(proto::DecideMaskProposalResponse {
            proposal: Some(mask_proposals::proposal_to_proto(&decided.proposal)),
            mask: decided.mask.as_ref().map(convert::grouping_mask_to_proto),
            remined: Some(convert::remined_to_proto(&decided.remined)),
        }))
    }

    async fn list_guards(
        &self,
        request: Request<proto::ListGuardsRequest>,
    ) -> Result<Response<proto::ListGuardsResponse>, Status> {
        let scope = request_scope(&request);
        let project = field(lore_types::validate::project("project", &request.get_ref().project))?;
        Ok(Response::new(convert::guards_to_proto(&self.qa.guards(&scope, &project).await?)))
    }

    async fn put_guard(&self, request: Request<proto::PutGuardRequest>) -> Result<Response<proto::Guard>, Status> {
        let scope = request_scope(&request);
        let by = super::request_origin(&request).token;
        let guard = field(convert::guard(request.get_ref().guard.as_ref(), &by))?;
        Ok(Response::new(convert::guard_to_proto(&self.qa.put_guard(&scope, &guard).await?)))
    }

    async fn remove_guard(
        &self,
        request: Request<proto::RemoveGuardRequest>,
    ) -> Result<Response<proto::RemoveGuardResponse>, Status> {
        let scope = request_scope(&request);
        let message = request.get_ref();
        let project = field(lore_types::validate::project("project", &message.project))?;
        let guard_id = field(lore_types::validate::required_uuid("guard_id", &message.guard_id))?;
        let removed = self.qa.remove_guard(&scope, &project, guard_id).await?;
        Ok(Response::new(proto::RemoveGuardResponse { removed }))
    }

    async fn set_guards_enabled(
        &self,
        request: Request<proto::SetGuardsEnabledRequest>,
    ) -> Result<Response<proto::ListGuardsResponse>, Status> {
        let scope = request_scope(&request);
        let by = super::request_origin(&request).token;
        let message = request.get_ref();
        let project = field(lore_types::validate::project("project", &message.project))?;
        let guards = self.qa.set_guards_enabled(&scope, &project, message.enabled, &by).await?;
        Ok(Response::new(convert::guards_to_proto(&guards)))
    }

    async fn set_call_warning_mode(
        &self,
        request: Request<proto::SetCallWarningModeRequest>,
    ) -> Result<Response<proto::ListGuardsResponse>, Status> {
        let scope = request_scope(&request);
        let by = super::request_origin(&request).token;
        let message = request.get_ref();
        let project = field(lore_types::validate::project("project", &message.project))?;
        let mode = field(convert::call_warning_mode("mode", message.mode))?;
        let guards = self.qa.set_call_warning_mode(&scope, &project, mode, &by).await?;
        Ok(Response::new(convert::guards_to_proto(&guards)))
    }

    async fn split_pattern(
        &self,
        request: Request<proto::SplitPatternRequest>,
    ) -> Result<Response<proto::SplitPatternResponse>, Status> {
        let scope = request_scope(&request);
        let split = field(convert::split(request.get_ref()))?;
        let (original, new) = self.qa.split_pattern(&scope, &split).await?;
        Ok(Response::new(proto::SplitPatternResponse {
            original: Some(convert::pattern_to_proto(&original)),
            split: Some(convert::pattern_to_proto(&new)),
        }))
    }

    async fn dashboard(
        &self,
        request: Request<proto::DashboardRequest>,
    ) -> Result<Response<proto::DashboardResponse>, Status> {
        let scope = request_scope(&request);
        let query = field(convert::dashboard_query(request.get_ref(), Utc::now()))?;
        let dashboard = self.qa.dashboard(&scope, &query).await?;
        Ok(Response::new(convert::dashboard_to_proto(&dashboard)))
    }

    async fn list_promotion_candidates(
        &self,
        request: Request<proto::ListPromotionCandidatesRequest>,
    ) -> Result<Response<proto::ListPromotionCandidatesResponse>, Status> {
        let scope = request_scope(&request);
        let message = request.get_ref();
        let project = field(super::convert::project("project", &message.project))?;
        let limit = match message.limit {
            0 => DEFAULT_CANDIDATES,
            limit => limit.min(200),
        };
        let candidates = self.qa.promotion_candidates(&scope, &project, i64::from(limit)).await?;
        Ok(Response::new(proto::ListPromotionCandidatesResponse {
            candidates: candidates.iter().map(|(pattern, _)| convert::pattern_to_proto(pattern)).collect(),
            ranked: candidates
                .iter()
                .map(|(pattern, evidence)| proto::PromotionCandidate {
                    pattern: Some(convert::pattern_to_proto(pattern)),
                    evidence: Some(convert::comparison_to_proto(evidence)),
                })
                .collect(),
        }))
    }

    async fn propose_promotion(
        &self,
        request: Request<proto::ProposePromotionRequest>,
    ) -> Result<Response<proto::Promotion>, Status> {
        let scope = request_scope(&request);
        let message = request.get_ref();
        let promotion_id = field(super::convert::required_uuid("promotion_id", &message.promotion_id))?;
        let pattern_id = field(super::convert::required_uuid("pattern_id", &message.pattern_id))?;
        let actor = field(lore_types::validate::name("actor", &message.actor, MAX_NAME_CHARS, true))?;
        let promotion = self.qa.propose(&scope, promotion_id, pattern_id, &actor).await?;
        Ok(Response::new(convert::promotion_to_proto(&promotion)))
    }

    async fn standing_instructions(
        &self,
        request: Request<proto::StandingInstructionsRequest>,
    ) -> Result<Response<proto::StandingInstructionsResponse>, Status> {
        let scope = request_scope(&request);
        let project = field(super::convert::project("project", &request.get_ref().project))?;
        let standing = self.qa.standing_instructions(&scope, &project).await?;
        Ok(Response::new(proto::StandingInstructionsResponse {
            instructions: standing
                .instructions
                .into_iter()
                .map(|(promotion_id, instruction)| proto::StandingInstruction {
                    key: instruction.key,
                    text: instruction.body,
                    promotion_id: promotion_id.to_string(),
                })
                .collect(),
            withdrawn: standing.withdrawn,
        }))
    }

    async fn list_promotions(
        &self,
        request: Request<proto::ListPromotionsRequest>,
    ) -> Result<Response<proto::ListPromotionsResponse>, Status> {
        let scope = request_scope(&request);
        let message = request.get_ref();
        let project = field(super::convert::project("project", &message.project))?;
        let statuses = field(
            message
                .statuses
                .iter()
                .enumerate()
                .map(|(index, value)| convert::promotion_status(&format!("statuses[{index}]"), *value))
                .collect::<Result<Vec<_>, _>>(),
        )?;
        let (limit, after) = field(super::convert::page("page", message.page.as_ref()))?;
        let after = after.map(|position| (position.occurred_at, position.action_id));
        let promotions = self.qa.list_promotions(&scope, &project, &statuses, limit, after).await?;
        let next_cursor = super::convert::next_cursor(&promotions, limit, |(promotion, created_at)| Position {
            occurred_at: *created_at,
            action_id: promotion.promotion_id,
        });
        Ok(Response::new(proto::ListPromotionsResponse {
            promotions: promotions.iter().map(|(promotion, _)| convert::promotion_to_proto(promotion)).collect(),
            next_cursor,
        }))
    }

    async fn approve_promotion(
        &self,
        request: Request<proto::ReviewPromotionRequest>,
    ) -> Result<Response<proto::Promotion>, Status> {
        self.review(request, PromotionDecision::Approve).await
    }

    async fn reject_promotion(
        &self,
        request: Request<proto::ReviewPromotionRequest>,
    ) -> Result<Response<proto::Promotion>, Status> {
        self.review(request, PromotionDecision::Reject).await
    }

    async fn rollback_promotion(
        &self,
        request: Request<proto::ReviewPromotionRequest>,
    ) -> Result<Response<proto::Promotion>, Status> {
        self.review(request, PromotionDecision::Rollback).await
    }

    async fn list_category_rules(
        &self,
        request: Request<proto::ListCategoryRulesRequest>,
    ) -> Result<Response<proto::ListCategoryRulesResponse>, Status> {
        let scope = request_scope(&request);
        let project = field(super::convert::project("project", &request.get_ref().project))?;
        let rules = self.qa.category_rules(&scope, &project).await?;
        Ok(Response::new(proto::ListCategoryRulesResponse {
            rules: rules.iter().map(convert::category_rule_to_proto).collect(),
        }))
    }

    async fn get_switches(
        &self,
        _request: Request<proto::GetSwitchesRequest>,
    ) -> Result<Response<proto::Switches>, Status> {
        Ok(Response::new(switches_to_proto(&self.settings.switches())))
    }

    async fn set_switches(
        &self,
        request: Request<proto::SetSwitchesRequest>,
    ) -> Result<Response<proto::Switches>, Status> {
        let message = request.get_ref();
        if message.warnings_enabled.is_none() && message.learning_enabled.is_none() {
            return Err(Status::invalid_argument("warnings_enabled: set warnings_enabled, learning_enabled or both"));
        }
        let origin = super::request_origin(&request);
        let by = if origin.token.is_empty() { "auth off".to_owned() } else { origin.token };
        let switches = self.settings.set(message.warnings_enabled, message.learning_enabled, &by).await?;
        tracing::info!(warnings = switches.warnings(), learning = switches.learning(), by, "the QA switches were set");
        Ok(Response::new(switches_to_proto(&switches)))
    }

    async fn acknowledge_warning(
        &self,
        request: Request<proto::AcknowledgeWarningRequest>,
    ) -> Result<Response<proto::AcknowledgeWarningResponse>, Status> {
        let scope = request_scope(&request);
        let message = request.get_ref();
        let delivery_ids = field(lore_types::validate::uuids("delivery_ids", &message.delivery_ids, MAX_ACKNOWLEDGED))?;
        let note = field(lore_types::validate::text("note", &message.note, MAX_NOTE_CHARS, false))?;
        let acknowledged = self.qa.acknowledge(&scope, &delivery_ids, &note).await?;
        Ok(Response::new(proto::AcknowledgeWarningResponse { acknowledged: acknowledged as u32 }))
    }

    async fn hot_spots(
        &self,
        request: Request<proto::HotSpotsRequest>,
    ) -> Result<Response<proto::HotSpotsResponse>, Status> {
        let scope = request_scope(&request);
        let query = field(convert::hot_spot_query(request.get_ref(), Utc::now()))?;
        let spots = self.qa.hot_spots(&scope, &query).await?;
        Ok(Response::new(convert::hot_spots_to_proto(&spots)))
    }

    async fn upsert_category_rule(
        &self,
        request: Request<proto::UpsertCategoryRuleRequest>,
    ) -> Result<Response<proto::CategoryRule>, Status> {
        let scope = request_scope(&request);
        let rule = field(convert::category_rule(request.get_ref().rule.as_ref()))?;
        let stored = self.qa.upsert_category_rule(&scope, &rule).await?;
        Ok(Response::new(convert::category_rule_to_proto(&stored)))
    }
}
