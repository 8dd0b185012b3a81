//! KnowledgeService handlers. Every RPC answers UNIMPLEMENTED (the generated
//! default) until the knowledge issue builds it.

use sqlx::PgPool;

use lore_proto::v1::knowledge_service_server::KnowledgeService;

/// Handlers of `lore.v1.KnowledgeService`.
#[derive(Debug, Clone)]
pub struct KnowledgeApi {
    #[allow(dead_code)] // used by the handlers of the knowledge issue
    pool: PgPool,
}

impl KnowledgeApi {
    pub fn new(pool: PgPool) -> Self {
        Self { pool }
    }
}

#[tonic::async_trait]
impl KnowledgeService for KnowledgeApi {}
