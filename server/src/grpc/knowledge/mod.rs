//! KnowledgeService handlers: validate and convert the request, call the
//! knowledge base, convert the answer. Every RPC is served
//! (`tests/api/auth.rs` calls each and refuses an UNIMPLEMENTED).

pub mod convert;

use chrono::Utc;
use tonic::{Request, Response, Status};

use lore_proto::v1 as proto;
use lore_proto::v1::knowledge_service_server::KnowledgeService;

use super::request_scope;
use crate::Error;
use convert::EntryRef;
use lore_domain::injections::{self, InjectionLedger, Surface, Withheld};
use lore_domain::knowledge::KnowledgeBase;
use lore_domain::trust::erasure::Erasure;
use lore_types::actions::query::Position;
use lore_types::knowledge::EntryStatus;
use lore_types::knowledge::limits::MAX_SEARCH_QUERIES;

/// Handlers of `lore.v1.KnowledgeService`.
#[derive(Debug, Clone)]
pub struct KnowledgeApi {
    knowledge: KnowledgeBase,
    ledger: InjectionLedger,
    erasure: Erasure,
}

impl KnowledgeApi {
    pub fn new(knowledge: KnowledgeBase, ledger: InjectionLedger, erasure: Erasure) -> Self {
        Self { knowledge, ledger, erasure }
    }
}

#[tonic::async_trait]
impl KnowledgeService for KnowledgeApi {
    async fn upsert_entry(
        &self,
        request: Request<proto::UpsertEntryRequest>,
    ) -> Result<Response<proto::UpsertEntryResponse>, Status> {
        let scope = request_scope(&request);
        let origin = super::request_origin(&request);
        let entry = request.get_ref().entry.as_ref().ok_or_else(|| Error::invalid("entry", "required"))?;
        let mut entry = convert::new_entry(entry).map_err(|error| Error::from(error.within("entry")))?;
        entry.trust = origin.trust();
        entry.origin = origin;
        let (stored, created) = self.knowledge.upsert(&scope, &entry).await?;
        Ok(Response::new(proto::UpsertEntryResponse { entry: Some(convert::entry_to_proto(&stored)), created }))
    }

    async fn list_entries_to_review(
        &self,
        request: Request<proto::ListEntriesToReviewRequest>,
    ) -> Result<Response<proto::ListEntriesToReviewResponse>, Status> {
        let scope = request_scope(&request);
        let (project, limit) = convert::entries_to_review_request(request.get_ref()).map_err(Error::from)?;
        let entries = self.knowledge.entries_to_review(&scope, &project, limit).await?;
        Ok(Response::new(proto::ListEntriesToReviewResponse {
            entries: entries.iter().map(convert::entry_to_proto).collect(),
        }))
    }

    async fn review_entry(
        &self,
        request: Request<proto::ReviewEntryRequest>,
    ) -> Result<Response<proto::Entry>, Status> {
        let scope = request_scope(&request);
        let (entry_id, approved, note) = convert::entry_review(request.get_ref()).map_err(Error::from)?;
        let reviewer = super::request_origin(&request);
        let entry = self.knowledge.review_entry(&scope, entry_id, approved, &reviewer, &note).await?;
        Ok(Response::new(convert::entry_to_proto(&entry)))
    }

    async fn get_entry(
        &self,
        request: Request<proto::GetEntryRequest>,
    ) -> Result<Response<proto::GetEntryResponse>, Status> {
        let scope = request_scope(&request);
        let (reference, history_limit) = convert::entry_ref(request.get_ref()).map_err(Error::from)?;
        let reader = super::convert::optional_uuid("session_id", &request.get_ref().session_id).map_err(Error::from)?;
        let mut report = match reference {
            EntryRef::Id(entry_id) => self.knowledge.get(&scope, entry_id, history_limit).await?,
            EntryRef::Key { project, key } => self.knowledge.get_by_key(&scope, &project, &key, history_limit).await?,
        };
        if !super::is_admin(&request) {
            report.entry = report.entry.withheld();
        }
        let item = injections::entry_item(&report.entry);
        let item =
            if report.entry.status == EntryStatus::Quarantined { item.withheld(Withheld::Quarantined) } else { item };
        self.ledger.record_read(&report.entry.project, reader, Surface::GetEntry, vec![item]).await?;
        Ok(Response::new(convert::entry_report_to_proto(&report)))
    }

    async fn erase_entry(
        &self,
        request: Request<proto::EraseEntryRequest>,
    ) -> Result<Response<proto::EraseEntryResponse>, Status> {
        let scope = request_scope(&request);
        let by = super::request_origin(&request).token;
        let (reference, note) = convert::erase_request(request.get_ref()).map_err(Error::from)?;
        let entry_id = match reference {
            EntryRef::Id(entry_id) => entry_id,
            EntryRef::Key { project, key } => {
                self.knowledge.get_by_key(&scope, &project, &key, 0).await?.entry.entry_id
            }
        };
        let by = if by.is_empty() { "someone (auth off)".to_owned() } else { by };
        let erased = self.erasure.erase_entry(&scope, entry_id, &by, &note).await?;
        Ok(Response::new(convert::erased_to_proto(&erased)))
    }

    async fn list_entries(
        &self,
        request: Request<proto::ListEntriesRequest>,
    ) -> Result<Response<proto::ListEntriesResponse>, Status> {
        let scope = request_scope(&request);
        let message = request.get_ref();
        let filter = convert::entry_filter(message).map_err(Error::from)?;
        let (limit, after) = super::convert::page("page", message.page.as_ref()).map_err(Error::from)?;
        let entries = self.knowledge.list(&scope, &filter, limit, after).await?;
        let next_cursor = super::convert::next_cursor(&entries, limit, |last| Position {
            occurred_at: last.updated_at,
            action_id: last.entry_id,
        });
        Ok(Response::new(proto::ListEntriesResponse {
            entries: entries.iter().map(convert::entry_to_proto).collect(),
            next_cursor,
        }))
    }

    async fn delete_entry(
        &self,
        request: Request<proto::DeleteEntryRequest>,
    ) -> Result<Response<proto::DeleteEntryResponse>, Status> {
        let scope = request_scope(&request);
        let message = request.get_ref();
        let entry_id = super::convert::required_uuid("entry_id", &message.entry_id).map_err(Error::from)?;
        let entry = self.knowledge.delete(&scope, entry_id, message.purge).await?;
        Ok(Response::new(proto::DeleteEntryResponse { entry: entry.as_ref().map(convert::entry_to_proto) }))
    }

    async fn record_occurrence(
        &self,
        request: Request<proto::RecordOccurrenceRequest>,
    ) -> Result<Response<proto::RecordOccurrenceResponse>, Status> {
        let scope = request_scope(&request);
        let occurrence = convert::new_occurrence(request.get_ref(), Utc::now()).map_err(Error::from)?;
        let (entry, duplicate) = self.knowledge.record_occurrence(&scope, &occurrence).await?;
        Ok(Response::new(proto::RecordOccurrenceResponse {
            ack: Some(proto::WriteAck { id: occurrence.occurrence_id.to_string(), duplicate }),
            entry: Some(convert::entry_to_proto(&entry)),
        }))
    }

    async fn record_application(
        &self,
        request: Request<proto::RecordApplicationRequest>,
    ) -> Result<Response<proto::RecordApplicationResponse>, Status> {
        let scope = request_scope(&request);
        let application = convert::new_application(request.get_ref(), Utc::now()).map_err(Error::from)?;
        let (effectiveness, duplicate) = self.knowledge.record_application(&scope, &application).await?;
        Ok(Response::new(proto::RecordApplicationResponse {
            ack: Some(proto::WriteAck { id: application.application_id.to_string(), duplicate }),
            effectiveness: Some(convert::effectiveness_to_proto(&effectiveness)),
        }))
    }

    async fn search(&self, request: Request<proto::SearchRequest>) -> Result<Response<proto::SearchResponse>, Status> {
        let scope = request_scope(&request);
        let message = request.get_ref();
        let project = super::convert::project("project", &message.project).map_err(Error::from)?;
        let query = message.query.as_ref().ok_or_else(|| Error::invalid("query", "required"))?;
        let query = convert::search_query(&project, query, None).map_err(|error| Error::from(error.within("query")))?;
        let reader = super::convert::optional_uuid("session_id", &message.session_id).map_err(Error::from)?;
        let outcome = self.knowledge.search(&scope, &query).await.map_err(|error| within("query", error))?;
        let items = outcome.hits.iter().map(|hit| injections::hit_item(hit, None, None)).collect();
        self.ledger.record_read(&project, reader, Surface::Search, items).await?;
        Ok(Response::new(proto::SearchResponse {
            hits: outcome.hits.iter().map(convert::hit_to_proto).collect(),
            degraded: outcome.degraded.is_some(),
            degraded_reason: outcome.degraded.unwrap_or_default(),
        }))
    }

    async fn search_many(
        &self,
        request: Request<proto::SearchManyRequest>,
    ) -> Result<Response<proto::SearchManyResponse>, Status> {
        let scope = request_scope(&request);
        let message = request.get_ref();
        let project = super::convert::project("project", &message.project).map_err(Error::from)?;
        if message.queries.is_empty() || message.queries.len() > MAX_SEARCH_QUERIES {
            return Err(Error::invalid(
                "queries",
                format!("1 to {MAX_SEARCH_QUERIES} queries, got {}", message.queries.len()),
            )
            .into());
        }
        let reader = super::convert::optional_uuid("session_id", &message.session_id).map_err(Error::from)?;
        let caps = convert::search_many_caps(message);
        let queries = message
            .queries
            .iter()
            .enumerate()
            .map(|(index, query)| {
                convert::search_query(&project, query, Some(caps.per_query as u32))
                    .map_err(|error| Error::from(error.within(&format!("queries[{index}]"))))
            })
            .collect();
        let outcome = self.knowledge.search_many(&scope, &project, queries, caps).await?;
        let items = outcome
            .answers
            .iter()
            .filter_map(|answer| answer.result.as_ref().ok())
            .flatten()
            .map(|hit| injections::hit_item(hit, None, None))
            .collect();
        self.ledger.record_read(&project, reader, Surface::Search, items).await?;
        Ok(Response::new(proto::SearchManyResponse {
            results: message
                .queries
                .iter()
                .zip(outcome.answers)
                .enumerate()
                .map(|(index, (query, answer))| {
                    let (hits, error) = match answer.result {
                        Ok(hits) => (hits.iter().map(convert::hit_to_proto).collect(), None),
                        Err(error) => {
                            let status = Status::from(within(&format!("queries[{index}]"), error));
                            let error =
                                proto::QueryStatus { code: status.code() as i32, message: status.message().to_owned() };
                            (Vec::new(), Some(error))
                        }
                    };
                    proto::SearchManyResult {
                        query_id: query.query_id.clone(),
                        hits,
                        error,
                        cached: answer.cached,
                        capped: answer.capped,
                    }
                })
                .collect(),
            truncated: outcome.truncated,
            degraded: outcome.degraded.is_some(),
            degraded_reason: outcome.degraded.unwrap_or_default(),
        }))
    }

    async fn index_document(
        &self,
        request: Request<proto::IndexDocumentRequest>,
    ) -> Result<Response<proto::IndexDocumentResponse>, Status> {
        let scope = request_scope(&request);
        let message = request.get_ref();
        let source = convert::document_source(&message.project, &message.path).map_err(Error::from)?;
        let (entry, changed) = self.knowledge.index_document(&scope, &source, &message.content).await?;
        Ok(Response::new(proto::IndexDocumentResponse { entry: Some(convert::entry_to_proto(&entry)), changed }))
    }

    async fn remove_document(
        &self,
        request: Request<proto::RemoveDocumentRequest>,
    ) -> Result<Response<proto::RemoveDocumentResponse>, Status> {
        let scope = request_scope(&request);
        let message = request.get_ref();
        let source = convert::document_source(&message.project, &message.path).map_err(Error::from)?;
        let removed = self.knowledge.remove_documents(&scope, &source.project, None, &source.path).await?;
        Ok(Response::new(proto::RemoveDocumentResponse { removed: removed > 0 }))
    }

    async fn get_index_status(
        &self,
        request: Request<proto::GetIndexStatusRequest>,
    ) -> Result<Response<proto::GetIndexStatusResponse>, Status> {
        let scope = request_scope(&request);
        let project = super::convert::project("project", &request.get_ref().project).map_err(Error::from)?;
        let status = self.knowledge.index_status(&scope, &project).await?;
        Ok(Response::new(convert::index_status_to_proto(&status)))
    }

    async fn list_synonyms(
        &self,
        request: Request<proto::ListSynonymsRequest>,
    ) -> Result<Response<proto::ListSynonymsResponse>, Status> {
        let scope = request_scope(&request);
        let project = super::convert::project("project", &request.get_ref().project).map_err(Error::from)?;
        let synonyms = self.knowledge.synonyms(&scope, &project).await?;
        Ok(Response::new(proto::ListSynonymsResponse {
            synonyms: synonyms.iter().map(convert::synonym_to_proto).collect(),
        }))
    }

    async fn put_synonym(
        &self,
        request: Request<proto::PutSynonymRequest>,
    ) -> Result<Response<proto::PutSynonymResponse>, Status> {
        let scope = request_scope(&request);
        let synonym = convert::synonym("synonym", request.get_ref().synonym.as_ref()).map_err(Error::from)?;
        let created = self.knowledge.put_synonym(&scope, &synonym).await?;
        Ok(Response::new(proto::PutSynonymResponse { synonym: Some(convert::synonym_to_proto(&synonym)), created }))
    }

    async fn delete_synonym(
        &self,
        request: Request<proto::DeleteSynonymRequest>,
    ) -> Result<Response<proto::DeleteSynonymResponse>, Status> {
        let scope = request_scope(&request);
        let synonym = convert::synonym("synonym", request.get_ref().synonym.as_ref()).map_err(Error::from)?;
        let deleted = self.knowledge.delete_synonym(&scope, &synonym).await?;
        Ok(Response::new(proto::DeleteSynonymResponse { deleted }))
    }

    async fn list_category_relations(
        &self,
        request: Request<proto::ListCategoryRelationsRequest>,
    ) -> Result<Response<proto::ListCategoryRelationsResponse>, Status> {
        let scope = request_scope(&request);
        let project = super::convert::project("project", &request.get_ref().project).map_err(Error::from)?;
        let relations = self.knowledge.category_relations(&scope, &project).await?;
        Ok(Response::new(proto::ListCategoryRelationsResponse {
            relations: relations.iter().map(convert::category_relation_to_proto).collect(),
        }))
    }

    async fn put_category_relation(
        &self,
        request: Request<proto::PutCategoryRelationRequest>,
    ) -> Result<Response<proto::PutCategoryRelationResponse>, Status> {
        let scope = request_scope(&request);
        let relation =
            convert::category_relation("relation", request.get_ref().relation.as_ref()).map_err(Error::from)?;
        let created = self.knowledge.put_category_relation(&scope, &relation).await?;
        Ok(Response::new(proto::PutCategoryRelationResponse {
            relation: Some(convert::category_relation_to_proto(&relation)),
            created,
        }))
    }

    async fn delete_category_relation(
        &self,
        request: Request<proto::DeleteCategoryRelationRequest>,
    ) -> Result<Response<proto::DeleteCategoryRelationResponse>, Status> {
        let scope = request_scope(&request);
        let relation =
            convert::category_relation("relation", request.get_ref().relation.as_ref()).map_err(Error::from)?;
        let deleted = self.knowledge.delete_category_relation(&scope, &relation).await?;
        Ok(Response::new(proto::DeleteCategoryRelationResponse { deleted }))
    }

    async fn create_draft(
        &self,
        request: Request<proto::CreateDraftRequest>,
    ) -> Result<Response<proto::Draft>, Status> {
        let scope = request_scope(&request);
        let (draft_id, project, source, proposal) = convert::new_draft(request.get_ref()).map_err(Error::from)?;
        let origin = super::request_origin(&request);
        let (draft, _) = self.knowledge.create_draft(&scope, draft_id, &project, source, proposal, origin).await?;
        Ok(Response::new(convert::draft_to_proto(&draft)))
    }

    async fn get_draft(&self, request: Request<proto::GetDraftRequest>) -> Result<Response<proto::Draft>, Status> {
        let scope = request_scope(&request);
        let draft_id = super::convert::required_uuid("draft_id", &request.get_ref().draft_id).map_err(Error::from)?;
        let draft = self.knowledge.draft(&scope, draft_id).await?;
        Ok(Response::new(convert::draft_to_proto(&draft)))
    }

    async fn list_drafts(
        &self,
        request: Request<proto::ListDraftsRequest>,
    ) -> Result<Response<proto::ListDraftsResponse>, Status> {
        let scope = request_scope(&request);
        let message = request.get_ref();
        let project = super::convert::project("project", &message.project).map_err(Error::from)?;
        let status = convert::draft_status("status", message.status).map_err(Error::from)?;
        let (limit, after) = super::convert::page("page", message.page.as_ref()).map_err(Error::from)?;
        let drafts = self.knowledge.list_drafts(&scope, &project, status, limit, after).await?;
        let next_cursor = super::convert::next_cursor(&drafts, limit, |last| Position {
            occurred_at: last.created_at,
            action_id: last.draft_id,
        });
        Ok(Response::new(proto::ListDraftsResponse {
            drafts: drafts.iter().map(convert::draft_to_proto).collect(),
            next_cursor,
        }))
    }

    async fn review_draft(
        &self,
        request: Request<proto::ReviewDraftRequest>,
    ) -> Result<Response<proto::ReviewDraftResponse>, Status> {
        let scope = request_scope(&request);
        let review = convert::review(request.get_ref()).map_err(Error::from)?;
        let (draft, entry) = self.knowledge.review_draft(&scope, &review).await?;
        Ok(Response::new(proto::ReviewDraftResponse {
            draft: Some(convert::draft_to_proto(&draft)),
            entry: entry.as_ref().map(convert::entry_to_proto),
        }))
    }
}

/// A domain error about a query field, named under the request's field
/// (one that already names it is left as it is).
fn within(parent: &str, error: Error) -> Error {
    match error {
        Error::InvalidArgument { field, reason } if !field.starts_with(parent) => {
            Error::InvalidArgument { field: format!("{parent}.{field}"), reason }
        }
        other => other,
    }
}
