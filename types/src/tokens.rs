//! Who calls: a token's role and the caller of one request.

use uuid::Uuid;

use crate::scope::ProjectScope;

/// The kind of access a method needs; [`Role::permits`] maps roles to
/// them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::Display)]
#[strum(serialize_all = "snake_case")]
pub enum Access {
    /// Reads a project's data.
    Read,
    /// Writes the action log and sessions: what a sidecar ships.
    Ingest,
    /// Records what an agent learned or hit: failures, fixes, outcomes,
    /// lessons and their use, and the markdown documents of its folders.
    Write,
    /// Curation and maintenance: deleting and erasing knowledge, reviewing
    /// drafts and promotions, editing patterns and rules, retention.
    Admin,
}

/// What a token may do (the server lists each method's access).
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::EnumString, strum::Display, strum::IntoStaticStr)]
#[strum(serialize_all = "snake_case")]
pub enum Role {
    /// Writes actions, failures and lessons; reads its projects.
    Agent,
    /// Ships actions and sessions, nothing else (lore-sidecar).
    Sidecar,
    /// Reads its projects, writes nothing.
    Reader,
    /// Everything, curation and maintenance included.
    Admin,
}

impl Role {
    pub fn permits(self, access: Access) -> bool {
        match self {
            Role::Admin => true,
            Role::Agent => matches!(access, Access::Read | Access::Ingest | Access::Write),
            Role::Sidecar => access == Access::Ingest,
            Role::Reader => access == Access::Read,
        }
    }
}

/// The authenticated caller of one request, in its extensions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    pub token_id: Uuid,
    pub name: String,
    pub role: Role,
    pub scope: ProjectScope,
}
