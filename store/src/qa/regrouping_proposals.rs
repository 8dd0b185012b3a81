//! Moves re-mining proposes to a person instead of making (migration
//! 0034): open ones replaced at every re-mining, decided ones kept so that
//! a rejected move is not proposed again.

use sqlx::{PgPool, Row as _};
use uuid::Uuid;

use lore_types::Error;
use lore_types::actions::StoredName as _;
use lore_types::qa::remining::{ProposalState, RegroupingProposal, RegroupingStep};

const COLUMNS: &str = "proposal_id, project, move_key, steps, template, pattern_ids, occurrences, proposed_at, \
                       state, decided_by, decided_at";

/// Proposals one listing returns, newest first.
const MAX_LISTED: i64 = 200;

fn proposal_from_row(row: &sqlx::postgres::PgRow) -> Result<RegroupingProposal, Error> {
    let steps: sqlx::types::Json<Vec<RegroupingStep>> = row.try_get("steps")?;
    Ok(RegroupingProposal {
        proposal_id: row.try_get("proposal_id")?,
        project: row.try_get("project")?,
        move_key: row.try_get("move_key")?,
        steps: steps.0,
        template: row.try_get("template")?,
        pattern_ids: row.try_get("pattern_ids")?,
        occurrences: row.try_get::<i32, _>("occurrences")?.max(0) as usize,
        proposed_at: row.try_get("proposed_at")?,
        state: super::proposal_state(row)?,
        decided_by: row.try_get("decided_by")?,
        decided_at: row.try_get("decided_at")?,
    })
}

/// Replaces `project`'s open proposals with `proposals`, in one
/// transaction; a move decided before is not proposed again. How many
/// are open now.
pub async fn replace_open(pool: &PgPool, project: &str, proposals: &[RegroupingProposal]) -> Result<usize, Error> {
    let mut transaction = pool.begin().await?;
    sqlx::query("DELETE FROM qa_regrouping_proposals WHERE project = $1 AND state = 'open'")
        .bind(project)
        .execute(&mut *transaction)
        .await?;
    let mut open = 0;
    for proposal in proposals {
        let occurrences = i32::try_from(proposal.occurrences).unwrap_or(i32::MAX);
        open += sqlx::query(
            "INSERT INTO qa_regrouping_proposals
                 (proposal_id, project, move_key, steps, template, pattern_ids, occurrences)
             VALUES ($1, $2, $3, $4, $5, $6, $7)
             ON CONFLICT (project, move_key) DO NOTHING",
        )
        .bind(proposal.proposal_id)
        .bind(project)
        .bind(&proposal.move_key)
        .bind(sqlx::types::Json(&proposal.steps))
        .bind(&proposal.template)
        .bind(&proposal.pattern_ids)
        .bind(occurrences)
        .execute(&mut *transaction)
        .await?
        .rows_affected() as usize;
    }
    transaction.commit().await?;
    Ok(open)
}

/// A project's proposals, newest first: the open ones, or all of them.
pub async fn proposals(pool: &PgPool, project: &str, decided_too: bool) -> Result<Vec<RegroupingProposal>, Error> {
    let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM qa_regrouping_proposals WHERE project = $1 AND ($2 OR state = 'open')
         ORDER BY proposed_at DESC, occurrences DESC, proposal_id LIMIT $3"
    )))
    .bind(project)
    .bind(decided_too)
    .bind(MAX_LISTED)
    .fetch_all(pool)
    .await?;
    rows.iter().map(proposal_from_row).collect()
}

/// One open proposal of `project`; fails naming why it cannot be decided
/// (unknown, another project's, decided already).
pub async fn open_proposal(pool: &PgPool, project: &str, proposal_id: Uuid) -> Result<RegroupingProposal, Error> {
    let row = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM qa_regrouping_proposals WHERE proposal_id = $1 AND project = $2"
    )))
    .bind(proposal_id)
    .bind(project)
    .fetch_optional(pool)
    .await?
    .ok_or_else(|| Error::NotFound(format!("regrouping proposal {proposal_id} of project {project}")))?;
    let proposal = proposal_from_row(&row)?;
    super::require_open("regrouping proposal", proposal_id, proposal.state, &proposal.decided_by)?;
    Ok(proposal)
}

/// Closes an open proposal as `state`, by `by`. Fails when a re-mining
/// replaced it or someone decided it in the meantime.
pub async fn close(
    pool: &PgPool,
    project: &str,
    proposal_id: Uuid,
    state: ProposalState,
    by: &str,
) -> Result<RegroupingProposal, Error> {
    let row = sqlx::query(sqlx::AssertSqlSafe(format!(
        "UPDATE qa_regrouping_proposals SET state = $3, decided_by = $4, decided_at = now()
         WHERE proposal_id = $1 AND project = $2 AND state = 'open' RETURNING {COLUMNS}"
    )))
    .bind(proposal_id)
    .bind(project)
    .bind(state.as_str())
    .bind(by)
    .fetch_optional(pool)
    .await?
    .ok_or_else(|| {
        Error::FailedPrecondition(format!(
            "regrouping proposal {proposal_id} is no longer open: a re-mining replaced it or someone decided it"
        ))
    })?;
    proposal_from_row(&row)
}
