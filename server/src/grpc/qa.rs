//! QaLearningService handlers. Every RPC answers UNIMPLEMENTED (the generated
//! default) until the QA-learning issue builds it.

use sqlx::PgPool;

use lore_proto::v1::qa_learning_service_server::QaLearningService;

/// Handlers of `lore.v1.QaLearningService`.
#[derive(Debug, Clone)]
pub struct QaLearningApi {
    #[allow(dead_code)] // used by the handlers of the QA-learning issue
    pool: PgPool,
}

impl QaLearningApi {
    pub fn new(pool: PgPool) -> Self {
        Self { pool }
    }
}

#[tonic::async_trait]
impl QaLearningService for QaLearningApi {}
