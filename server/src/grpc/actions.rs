//! ActionService handlers. Every RPC answers UNIMPLEMENTED (the generated
//! default) until the actions issue builds it.

use sqlx::PgPool;

use lore_proto::v1::action_service_server::ActionService;

/// Handlers of `lore.v1.ActionService`.
#[derive(Debug, Clone)]
pub struct ActionsApi {
    #[allow(dead_code)] // used by the handlers of the actions issue
    pool: PgPool,
}

impl ActionsApi {
    pub fn new(pool: PgPool) -> Self {
        Self { pool }
    }
}

#[tonic::async_trait]
impl ActionService for ActionsApi {}
