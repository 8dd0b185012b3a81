//! What re-mining reads: a project's recent occurrences with the live
//! pattern and category each is in, and the patterns people corrected.

use std::collections::BTreeSet;

use sqlx::{PgPool, Row as _};
use uuid::Uuid;

use lore_types::Error;
use lore_types::qa::remining::{Agreement, LiteralEvidence, RemineRun, Remined, Verdict};
use lore_types::scope::ProjectScope;

/// One recent occurrence: its id, its live pattern, the pattern's
/// category, the message as stored and its normalized template.
#[derive(Debug, Clone, PartialEq)]
pub struct RecentOccurrence {
    pub occurrence_id: Uuid,
    pub pattern_id: Uuid,
    pub category: String,
    pub message: String,
    pub template: String,
}

/// The newest `limit` occurrences of `project`'s live patterns.
pub async fn recent_occurrences(pool: &PgPool, project: &str, limit: i64) -> Result<Vec<RecentOccurrence>, Error> {
    let rows = sqlx::query(
        "SELECT o.occurrence_id, o.pattern_id, p.category, o.message, o.template
         FROM qa_pattern_occurrences o JOIN qa_patterns p USING (pattern_id)
         WHERE o.project = $1 AND p.status IN ('candidate', 'active', 'promoted')
         ORDER BY o.occurred_at DESC, o.occurrence_id DESC LIMIT $2",
    )
    .bind(project)
    .bind(limit)
    .fetch_all(pool)
    .await?;
    rows.iter()
        .map(|row| {
            Ok(RecentOccurrence {
                occurrence_id: row.try_get("occurrence_id")?,
                pattern_id: row.try_get("pattern_id")?,
                category: row.try_get("category")?,
                message: row.try_get("message")?,
                template: row.try_get("template")?,
            })
        })
        .collect::<Result<_, sqlx::Error>>()
        .map_err(Error::from)
}

/// Patterns a person merged or split (either side): re-mining leaves them
/// as they are. Re-mining's own corrections carry `reason_prefix`.
pub async fn corrected_by_people(pool: &PgPool, project: &str, reason_prefix: &str) -> Result<BTreeSet<Uuid>, Error> {
    let rows = sqlx::query(
        "SELECT from_pattern_id, to_pattern_id FROM qa_grouping_corrections
         WHERE project = $1 AND NOT starts_with(reason, $2)",
    )
    .bind(project)
    .bind(reason_prefix)
    .fetch_all(pool)
    .await?;
    let mut pinned = BTreeSet::new();
    for row in &rows {
        pinned.insert(row.try_get::<Uuid, _>("from_pattern_id")?);
        pinned.insert(row.try_get::<Uuid, _>("to_pattern_id")?);
    }
    Ok(pinned)
}

/// One of a person's corrections of a project's grouping.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PersonCorrection {
    /// True for a merge (`from` went into `to`), false for a split (`to`
    /// was split out of `from`).
    pub merge: bool,
    pub from: Uuid,
    pub to: Uuid,
    /// The occurrences it moved from `from` to `to` (the newest).
    pub occurrences: Vec<Uuid>,
}

/// A project's corrections by people (re-mining's own carry
/// `reason_prefix`), oldest first: the evidence re-mining is judged by.
pub async fn people_corrections(
    pool: &PgPool,
    project: &str,
    reason_prefix: &str,
) -> Result<Vec<PersonCorrection>, Error> {
    let rows = sqlx::query(
        "SELECT kind, from_pattern_id, to_pattern_id, occurrence_ids FROM qa_grouping_corrections
         WHERE project = $1 AND NOT starts_with(reason, $2) ORDER BY created_at, correction_id",
    )
    .bind(project)
    .bind(reason_prefix)
    .fetch_all(pool)
    .await?;
    rows.iter()
        .map(|row| {
            Ok(PersonCorrection {
                merge: row.try_get::<&str, _>("kind")? == "merge",
                from: row.try_get("from_pattern_id")?,
                to: row.try_get("to_pattern_id")?,
                occurrences: row.try_get("occurrence_ids")?,
            })
        })
        .collect::<Result<_, sqlx::Error>>()
        .map_err(Error::from)
}

/// Projects with an occurrence newer than `since`: those worth re-mining.
pub async fn projects_captured_since(
    pool: &PgPool,
    since: chrono::DateTime<chrono::Utc>,
) -> Result<Vec<String>, Error> {
    let projects = sqlx::query_scalar(
        "SELECT DISTINCT project FROM qa_pattern_occurrences WHERE occurred_at > $1 ORDER BY project",
    )
    .bind(since)
    .fetch_all(pool)
    .await?;
    Ok(projects)
}

/// Says why re-mining moved these occurrences: what GetPattern shows as
/// the reason each joined its pattern.
pub async fn note_regrouped(pool: &PgPool, occurrence_ids: &[Uuid], reason: &str) -> Result<(), Error> {
    sqlx::query("UPDATE qa_pattern_occurrences SET reason = $2 WHERE occurrence_id = ANY($1)")
        .bind(occurrence_ids)
        .bind(reason)
        .execute(pool)
        .await?;
    Ok(())
}

/// Stores the templates occurrences have under the project's masks now.
pub async fn retemplate_occurrences(pool: &PgPool, templates: &[(Uuid, String)]) -> Result<(), Error> {
    if templates.is_empty() {
        return Ok(());
    }
    let (ids, texts): (Vec<Uuid>, Vec<&str>) = templates.iter().map(|(id, text)| (*id, text.as_str())).unzip();
    sqlx::query(
        "UPDATE qa_pattern_occurrences o SET template = new.template
         FROM unnest($1::uuid[], $2::text[]) AS new (occurrence_id, template)
         WHERE o.occurrence_id = new.occurrence_id",
    )
    .bind(&ids)
    .bind(&texts)
    .execute(pool)
    .await?;
    Ok(())
}

/// A live pattern's template as grouping compares it, and its route.
#[derive(Debug, Clone, PartialEq)]
pub struct PatternTemplate {
    pub pattern_id: Uuid,
    pub tokens: Vec<String>,
    pub route: String,
}

/// The templates of those of `pattern_ids` that are live.
pub async fn live_templates(pool: &PgPool, pattern_ids: &[Uuid]) -> Result<Vec<PatternTemplate>, Error> {
    let rows = sqlx::query(
        "SELECT pattern_id, template_tokens, route FROM qa_patterns
         WHERE pattern_id = ANY($1) AND status IN ('candidate', 'active', 'promoted')",
    )
    .bind(pattern_ids)
    .fetch_all(pool)
    .await?;
    rows.iter()
        .map(|row| {
            Ok(PatternTemplate {
                pattern_id: row.try_get("pattern_id")?,
                tokens: row.try_get("template_tokens")?,
                route: row.try_get("route")?,
            })
        })
        .collect::<Result<_, sqlx::Error>>()
        .map_err(Error::from)
}

/// Gives a pattern another template and route, unless a capture changed
/// its template since `was` was read (the next round sees the new one).
/// The route trigger (migration 0012) bumps both routes' generations, so
/// every replica reads them again.
pub async fn move_pattern(pool: &PgPool, was: &PatternTemplate, tokens: &[String], route: &str) -> Result<bool, Error> {
    let moved = sqlx::query(
        "UPDATE qa_patterns SET template = array_to_string($3::text[], ' '), template_tokens = $3, route = $4,
             last_change = 're_mining', updated_at = now()
         WHERE pattern_id = $1 AND template_tokens = $2 AND status IN ('candidate', 'active', 'promoted')",
    )
    .bind(was.pattern_id)
    .bind(&was.tokens)
    .bind(tokens)
    .bind(route)
    .execute(pool)
    .await?
    .rows_affected();
    Ok(moved == 1)
}

/// Keeps `remined` as `project`'s last re-mining.
pub async fn record_run(pool: &PgPool, project: &str, remined: &Remined) -> Result<(), Error> {
    let count = |value: usize| i32::try_from(value).unwrap_or(i32::MAX);
    sqlx::query(
        "INSERT INTO qa_remining_runs
             (project, occurrences, merges, splits, rejected, moves, bits_before, bits_after,
              corrected_pairs, kept_before, kept_replay, regressions, automatic, proposed,
              literal_agreeing, literal_against, read_literally)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)
         ON CONFLICT (project) DO UPDATE SET remined_at = now(), occurrences = EXCLUDED.occurrences,
             merges = EXCLUDED.merges, splits = EXCLUDED.splits, rejected = EXCLUDED.rejected,
             moves = EXCLUDED.moves, bits_before = EXCLUDED.bits_before, bits_after = EXCLUDED.bits_after,
             corrected_pairs = EXCLUDED.corrected_pairs, kept_before = EXCLUDED.kept_before,
             kept_replay = EXCLUDED.kept_replay, regressions = EXCLUDED.regressions,
             automatic = EXCLUDED.automatic, proposed = EXCLUDED.proposed,
             literal_agreeing = EXCLUDED.literal_agreeing, literal_against = EXCLUDED.literal_against,
             read_literally = EXCLUDED.read_literally",
    )
    .bind(project)
    .bind(count(remined.occurrences))
    .bind(count(remined.merges))
    .bind(count(remined.splits))
    .bind(count(remined.rejected))
    .bind(count(remined.moves))
    .bind(remined.bits_before)
    .bind(remined.bits_after)
    .bind(remined.evidence.before.pairs)
    .bind(remined.evidence.before.kept)
    .bind(remined.evidence.replay.kept)
    .bind(count(remined.evidence.regressions))
    .bind(remined.automatic)
    .bind(count(remined.proposed))
    .bind(count(remined.literal.agreeing))
    .bind(count(remined.literal.against))
    .bind(remined.read_literally)
    .execute(pool)
    .await?;
    Ok(())
}

/// `project`'s last re-mining, if it was ever re-mined.
pub async fn last_run(pool: &PgPool, scope: &ProjectScope, project: &str) -> Result<Option<RemineRun>, Error> {
    let row = sqlx::query(
        "SELECT project, remined_at, occurrences, merges, splits, rejected, moves, bits_before, bits_after,
             corrected_pairs, kept_before, kept_replay, regressions, automatic, proposed,
             literal_agreeing, literal_against, read_literally
         FROM qa_remining_runs WHERE project = $1 AND ($2::text[] IS NULL OR project = ANY($2))",
    )
    .bind(project)
    .bind(scope.sql_filter())
    .fetch_optional(pool)
    .await?;
    let Some(row) = row else { return Ok(None) };
    let count = |column: &str| -> Result<usize, Error> { Ok(row.try_get::<i32, _>(column)?.max(0) as usize) };
    Ok(Some(RemineRun {
        project: row.try_get("project")?,
        remined_at: row.try_get("remined_at")?,
        remined: Remined {
            occurrences: count("occurrences")?,
            merges: count("merges")?,
            splits: count("splits")?,
            rejected: count("rejected")?,
            moves: count("moves")?,
            bits_before: row.try_get("bits_before")?,
            bits_after: row.try_get("bits_after")?,
            evidence: Verdict {
                before: Agreement { pairs: row.try_get("corrected_pairs")?, kept: row.try_get("kept_before")? },
                replay: Agreement { pairs: row.try_get("corrected_pairs")?, kept: row.try_get("kept_replay")? },
                regressions: count("regressions")?,
            },
            automatic: row.try_get("automatic")?,
            proposed: count("proposed")?,
            literal: LiteralEvidence {
                agreeing: count("literal_agreeing")?,
                against: count("literal_against")?,
                ..LiteralEvidence::default()
            },
            read_literally: row.try_get("read_literally")?,
        },
    }))
}
