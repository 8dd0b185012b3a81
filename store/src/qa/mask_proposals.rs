//! Masks proposed from a person's merges (migration 0028).

use sqlx::{PgConnection, PgPool, Row as _};
use uuid::Uuid;

use lore_types::Error;
use lore_types::actions::StoredName as _;
use lore_types::qa::GroupingMask;
use lore_types::qa::mask_proposals::{MaskProposal, ProposalState};

const COLUMNS: &str = "proposal_id, project, name, pattern, examples, pattern_ids, proposed_by, proposed_at, state, \
                       decided_by, decided_at, mask_name";

/// Proposals one listing returns, newest first.
const MAX_LISTED: i64 = 200;

fn proposal_from_row(row: &sqlx::postgres::PgRow) -> Result<MaskProposal, Error> {
    Ok(MaskProposal {
        proposal_id: row.try_get("proposal_id")?,
        project: row.try_get("project")?,
        name: row.try_get("name")?,
        pattern: row.try_get("pattern")?,
        examples: row.try_get("examples")?,
        pattern_ids: row.try_get("pattern_ids")?,
        proposed_by: row.try_get("proposed_by")?,
        proposed_at: row.try_get("proposed_at")?,
        state: super::proposal_state(row)?,
        decided_by: row.try_get("decided_by")?,
        decided_at: row.try_get("decided_at")?,
        mask_name: row.try_get("mask_name")?,
    })
}

/// Stores a proposal in the caller's transaction (the merge's), unless the
/// project was already offered the same expression (open, accepted or
/// rejected) or already has it as a mask. `None` when nothing was stored.
pub async fn propose(connection: &mut PgConnection, proposal: &MaskProposal) -> Result<Option<MaskProposal>, Error> {
    let row = sqlx::query(sqlx::AssertSqlSafe(format!(
        "INSERT INTO qa_mask_proposals (proposal_id, project, name, pattern, examples, pattern_ids, proposed_by)
         SELECT $1, $2, $3, $4, $5, $6, $7
         WHERE NOT EXISTS (SELECT 1 FROM qa_grouping_masks WHERE project = $2 AND pattern = $4)
         ON CONFLICT (project, pattern) DO NOTHING
         RETURNING {COLUMNS}"
    )))
    .bind(proposal.proposal_id)
    .bind(&proposal.project)
    .bind(&proposal.name)
    .bind(&proposal.pattern)
    .bind(&proposal.examples)
    .bind(&proposal.pattern_ids)
    .bind(&proposal.proposed_by)
    .fetch_optional(connection)
    .await?;
    row.as_ref().map(proposal_from_row).transpose()
}

/// A project's proposals, newest first: the open ones, or all of them.
pub async fn proposals(pool: &PgPool, project: &str, decided_too: bool) -> Result<Vec<MaskProposal>, Error> {
    let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM qa_mask_proposals WHERE project = $1 AND ($2 OR state = 'open')
         ORDER BY proposed_at DESC, proposal_id DESC LIMIT $3"
    )))
    .bind(project)
    .bind(decided_too)
    .bind(MAX_LISTED)
    .fetch_all(pool)
    .await?;
    rows.iter().map(proposal_from_row).collect()
}

/// One proposal of `project`, locked for the transaction with `lock`.
async fn select(
    connection: &mut PgConnection,
    project: &str,
    proposal_id: Uuid,
    lock: bool,
) -> Result<MaskProposal, Error> {
    let for_update = if lock { "FOR UPDATE" } else { "" };
    let row = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM qa_mask_proposals WHERE proposal_id = $1 AND project = $2 {for_update}"
    )))
    .bind(proposal_id)
    .bind(project)
    .fetch_optional(connection)
    .await?
    .ok_or_else(|| Error::NotFound(format!("mask proposal {proposal_id} of project {project}")))?;
    proposal_from_row(&row)
}

/// Locks an open proposal of `project`; fails naming why it cannot be
/// decided (unknown, another project's, decided already).
async fn lock_open(connection: &mut PgConnection, project: &str, proposal_id: Uuid) -> Result<MaskProposal, Error> {
    let proposal = select(connection, project, proposal_id, true).await?;
    super::require_open("mask proposal", proposal_id, proposal.state, &proposal.decided_by)?;
    Ok(proposal)
}

async fn close(
    connection: &mut PgConnection,
    proposal_id: Uuid,
    state: ProposalState,
    by: &str,
    mask_name: &str,
) -> Result<MaskProposal, Error> {
    let row = sqlx::query(sqlx::AssertSqlSafe(format!(
        "UPDATE qa_mask_proposals SET state = $2, decided_by = $3, decided_at = now(), mask_name = $4
         WHERE proposal_id = $1 RETURNING {COLUMNS}"
    )))
    .bind(proposal_id)
    .bind(state.as_str())
    .bind(by)
    .bind(mask_name)
    .fetch_one(connection)
    .await?;
    proposal_from_row(&row)
}

/// Accepts an open proposal: `mask` (the proposal's expression under the
/// name chosen) is added and the proposal closed in one transaction.
/// `allowed` sees the masks the project would hold. A mask of that name
/// already there is not replaced: the person picks another name.
pub async fn accept(
    pool: &PgPool,
    proposal_id: Uuid,
    mask: &GroupingMask,
    allowed: impl FnOnce(&[GroupingMask]) -> Result<(), Error>,
) -> Result<(MaskProposal, GroupingMask), Error> {
    let mut transaction = pool.begin().await?;
    let proposal = lock_open(&mut transaction, &mask.project, proposal_id).await?;
    debug_assert_eq!(proposal.pattern, mask.pattern);
    let (stored, created) = crate::qa::masks::put_mask_in(&mut transaction, mask, allowed).await?;
    if !created {
        return Err(Error::AlreadyExists(format!(
            "name: the project already has a mask named {}; accept the proposal under another name",
            mask.name
        )));
    }
    let closed = close(&mut transaction, proposal_id, ProposalState::Accepted, &mask.updated_by, &stored.name).await?;
    transaction.commit().await?;
    Ok((closed, stored))
}

/// Rejects an open proposal: it stays, so its expression is not proposed
/// to the project again.
pub async fn reject(pool: &PgPool, project: &str, proposal_id: Uuid, by: &str) -> Result<MaskProposal, Error> {
    let mut transaction = pool.begin().await?;
    lock_open(&mut transaction, project, proposal_id).await?;
    let closed = close(&mut transaction, proposal_id, ProposalState::Rejected, by, "").await?;
    transaction.commit().await?;
    Ok(closed)
}

/// The proposal as it is now.
pub async fn proposal(pool: &PgPool, project: &str, proposal_id: Uuid) -> Result<MaskProposal, Error> {
    select(&mut *pool.acquire().await?, project, proposal_id, false).await
}
