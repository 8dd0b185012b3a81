//! Knowledge entries, their solutions, occurrences and applications.

pub mod auto_drafts;
pub mod changes;
pub mod drafts;
pub mod embeddings;
pub mod reviews;
pub mod search;
pub mod vocabulary;

use std::collections::HashMap;

use sqlx::postgres::PgRow;
use sqlx::types::Json;
use sqlx::{PgConnection, PgPool, Row as _};
use uuid::Uuid;

use crate::sqlstate;
use lore_types::Error;
use lore_types::actions::StoredName as _;
use lore_types::actions::query::Position;
use lore_types::knowledge::{
    Application, Effectiveness, Entry, EntryFilter, EntryKind, EntryStatus, NewEntry, NewOccurrence, Severity,
    Solution, Trend,
};
use lore_types::scope::ProjectScope;
use lore_types::trust::{Origin, Trust};

pub(crate) const ENTRY_COLUMNS: &str = "e.entry_id, e.key, e.project, e.kind, e.title, e.category, e.summary, \
     e.body, e.tags, e.status, e.severity, e.trend, e.occurrence_count, e.last_seen_at, e.prevention_checklist, \
     e.details, e.source_path, e.front_matter, e.symptoms, e.root_causes, e.usage_count, e.last_used_at, \
     e.created_at, e.updated_at, e.trust, e.origin, e.cited_files, e.superseded_by, e.review, e.reviewed_by, \
     e.reviewed_at, e.review_note";

/// Best success rate first, then the most applied, then the order given.
const SOLUTION_ORDER: &str = "CASE WHEN times_applied = 0 THEN 0 ELSE times_successful::float8 / times_applied END \
     DESC, times_applied DESC, position";

fn decode_error(column: &str, value: &str) -> sqlx::Error {
    sqlx::Error::ColumnDecode { index: column.to_owned(), source: format!("unexpected value {value:?}").into() }
}

pub(crate) fn parse<T: lore_types::actions::StoredName>(column: &str, value: &str) -> Result<T, sqlx::Error> {
    T::parse(value).ok_or_else(|| decode_error(column, value))
}

/// An entry row without its solutions.
pub(crate) fn entry_from_row(row: &PgRow) -> Result<Entry, sqlx::Error> {
    let kind: String = row.try_get("kind")?;
    let status: String = row.try_get("status")?;
    let severity: Option<String> = row.try_get("severity")?;
    let trend: Option<String> = row.try_get("trend")?;
    Ok(Entry {
        entry_id: row.try_get("entry_id")?,
        key: row.try_get("key")?,
        project: row.try_get("project")?,
        kind: parse::<EntryKind>("kind", &kind)?,
        title: row.try_get("title")?,
        category: row.try_get("category")?,
        summary: row.try_get("summary")?,
        body: row.try_get("body")?,
        tags: row.try_get("tags")?,
        status: parse::<EntryStatus>("status", &status)?,
        severity: severity.map(|value| parse::<Severity>("severity", &value)).transpose()?,
        trend: trend.map(|value| parse::<Trend>("trend", &value)).transpose()?,
        occurrence_count: row.try_get("occurrence_count")?,
        last_seen_at: row.try_get("last_seen_at")?,
        prevention_checklist: row.try_get("prevention_checklist")?,
        details: row.try_get::<Json<serde_json::Value>, _>("details")?.0,
        source_path: row.try_get("source_path")?,
        front_matter: row.try_get::<Option<Json<serde_json::Value>>, _>("front_matter")?.map(|json| json.0),
        symptoms: row.try_get("symptoms")?,
        root_causes: row.try_get("root_causes")?,
        usage_count: row.try_get("usage_count")?,
        last_used_at: row.try_get("last_used_at")?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
        solutions: Vec::new(),
        origin: Origin::from_json(&row.try_get::<Json<serde_json::Value>, _>("origin")?.0),
        trust: parse::<Trust>("trust", &row.try_get::<String, _>("trust")?)?,
        cited_files: row.try_get("cited_files")?,
        superseded_by: row.try_get("superseded_by")?,
        review: crate::trust::review_from_row(row)?,
    })
}

/// The entries of `rows`, each with its solutions.
pub(crate) async fn entries_with_solutions(pool: &PgPool, rows: &[PgRow]) -> Result<Vec<Entry>, Error> {
    let mut entries = rows.iter().map(entry_from_row).collect::<Result<Vec<_>, _>>()?;
    let mut connection = pool.acquire().await?;
    attach_solutions(&mut connection, &mut entries).await?;
    Ok(entries)
}

/// Fills in the solutions of `entries` (one query for all of them).
pub(crate) async fn attach_solutions(connection: &mut PgConnection, entries: &mut [Entry]) -> Result<(), sqlx::Error> {
    if entries.is_empty() {
        return Ok(());
    }
    let ids: Vec<Uuid> = entries.iter().map(|entry| entry.entry_id).collect();
    let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT entry_id, solution_id, description, times_applied, times_successful, total_resolution_minutes
         FROM knowledge_solutions WHERE entry_id = ANY($1) ORDER BY entry_id, {SOLUTION_ORDER}"
    )))
    .bind(&ids)
    .fetch_all(&mut *connection)
    .await?;
    let mut by_entry: HashMap<Uuid, Vec<Solution>> = HashMap::new();
    for row in rows {
        by_entry.entry(row.try_get("entry_id")?).or_default().push(Solution {
            solution_id: row.try_get("solution_id")?,
            description: row.try_get("description")?,
            times_applied: row.try_get("times_applied")?,
            times_successful: row.try_get("times_successful")?,
            total_resolution_minutes: row.try_get("total_resolution_minutes")?,
        });
    }
    for entry in entries {
        entry.solutions = by_entry.remove(&entry.entry_id).unwrap_or_default();
    }
    Ok(())
}

async fn fetch_entry(connection: &mut PgConnection, scope: &ProjectScope, entry_id: Uuid) -> Result<Entry, Error> {
    let row = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {ENTRY_COLUMNS} FROM knowledge_entries e
         WHERE e.entry_id = $1 AND ($2::text[] IS NULL OR e.project = ANY($2))"
    )))
    .bind(entry_id)
    .bind(scope.sql_filter())
    .fetch_optional(&mut *connection)
    .await?
    .ok_or_else(|| Error::NotFound(format!("entry {entry_id}")))?;
    let mut entries = [entry_from_row(&row)?];
    attach_solutions(connection, &mut entries).await?;
    let [entry] = entries;
    Ok(entry)
}

/// Creates or replaces an entry and its solutions in one transaction.
/// Returns the stored entry and whether it was created.
pub async fn upsert(
    pool: &PgPool,
    scope: &ProjectScope,
    entry: &NewEntry,
    content_hash: &[u8],
    embedding_model: Option<&str>,
) -> Result<(Entry, bool), Error> {
    let mut transaction = pool.begin().await?;
    let stored = upsert_in(&mut transaction, scope, entry, content_hash, embedding_model).await?;
    transaction.commit().await?;
    Ok(stored)
}

/// [`upsert`] inside the caller's transaction.
pub async fn upsert_in(
    transaction: &mut PgConnection,
    scope: &ProjectScope,
    entry: &NewEntry,
    content_hash: &[u8],
    embedding_model: Option<&str>,
) -> Result<(Entry, bool), Error> {
    scope.require(&entry.project)?;
    sqlx::query("INSERT INTO projects (name) VALUES ($1) ON CONFLICT DO NOTHING")
        .bind(&entry.project)
        .execute(&mut *transaction)
        .await?;
    // With an id: that entry. Without: the one with the same key, if any.
    let conflict_target = if entry.entry_id.is_some() || entry.key.is_none() {
        "(entry_id)"
    } else {
        "(project, key) WHERE key IS NOT NULL"
    };
    let upserted = sqlx::query(sqlx::AssertSqlSafe(
        include_str!("upsert_entry.sql").replace("{conflict_target}", conflict_target),
    ))
    .bind(entry.entry_id.unwrap_or_else(Uuid::now_v7))
    .bind(&entry.key)
    .bind(&entry.project)
    .bind(entry.kind.as_str())
    .bind(&entry.title)
    .bind(&entry.category)
    .bind(&entry.summary)
    .bind(&entry.body)
    .bind(&entry.tags)
    .bind(entry.status.as_str())
    .bind(entry.severity.map(|severity| severity.as_str()))
    .bind(&entry.prevention_checklist)
    .bind(Json(&entry.details))
    .bind(&entry.source_path)
    .bind(entry.front_matter.as_ref().map(Json))
    .bind(content_hash)
    .bind(entry.document.as_ref().map(|document| &document.hash))
    .bind(entry.document.as_ref().and_then(|document| document.root.as_ref()))
    .bind(&entry.symptoms)
    .bind(&entry.root_causes)
    .bind(entry.usage_count)
    .bind(entry.last_used_at)
    .bind(entry.trust.as_str())
    .bind(Json(entry.origin.to_json()))
    .bind(&entry.cited_files)
    .fetch_optional(&mut *transaction)
    .await
    .map_err(|error| unique_violation_to_conflict(error, entry))?;
    let Some(row) = upserted else {
        return Err(Error::AlreadyExists(match entry.entry_id {
            Some(id) => format!("entry_id {id} is already used by another entry"),
            None => "key is already used by another entry".into(),
        }));
    };
    let entry_id: Uuid = row.try_get("entry_id")?;
    let created: bool = row.try_get("created")?;
    replace_solutions(&mut *transaction, entry_id, entry).await?;
    if let Some(model) = embedding_model {
        crate::knowledge::embeddings::queue(&mut *transaction, entry_id, model).await?;
    }
    let stored = fetch_entry(&mut *transaction, scope, entry_id).await?;
    Ok((stored, created))
}

fn unique_violation_to_conflict(error: sqlx::Error, entry: &NewEntry) -> Error {
    if let sqlx::Error::Database(database) = &error
        && database.code().as_deref() == Some(sqlstate::UNIQUE_VIOLATION)
    {
        return match database.constraint() {
            Some("knowledge_entries_project_key_idx") => Error::AlreadyExists(format!(
                "key {:?} is already used by another entry of project {}",
                entry.key.as_deref().unwrap_or_default(),
                entry.project
            )),
            Some("knowledge_entries_project_source_idx") => Error::AlreadyExists(format!(
                "source_path {:?} is already indexed as another entry",
                entry.source_path.as_deref().unwrap_or_default()
            )),
            _ => Error::Database(error),
        };
    }
    Error::Database(error)
}

/// Makes the entry's solutions exactly `entry.solutions`, in order; a known
/// `solution_id` keeps its statistics.
async fn replace_solutions(connection: &mut PgConnection, entry_id: Uuid, entry: &NewEntry) -> Result<(), Error> {
    let ids: Vec<Uuid> =
        entry.solutions.iter().map(|solution| solution.solution_id.unwrap_or_else(Uuid::now_v7)).collect();
    let descriptions: Vec<&str> = entry.solutions.iter().map(|solution| solution.description.as_str()).collect();
    sqlx::query("DELETE FROM knowledge_solutions WHERE entry_id = $1 AND solution_id <> ALL($2)")
        .bind(entry_id)
        .bind(&ids)
        .execute(&mut *connection)
        .await?;
    let stored = sqlx::query(
        "INSERT INTO knowledge_solutions AS s (solution_id, entry_id, project, description, position)
         SELECT id, $1, $2, description, position::int - 1
         FROM unnest($3::uuid[], $4::text[]) WITH ORDINALITY AS given (id, description, position)
         ON CONFLICT (solution_id) DO UPDATE SET description = EXCLUDED.description, position = EXCLUDED.position
         WHERE s.entry_id = EXCLUDED.entry_id",
    )
    .bind(entry_id)
    .bind(&entry.project)
    .bind(&ids)
    .bind(&descriptions)
    .execute(&mut *connection)
    .await?
    .rows_affected();
    if stored as usize != ids.len() {
        return Err(Error::invalid("entry.issue_pattern.solutions", "a solution_id belongs to another entry"));
    }
    Ok(())
}

pub async fn get(pool: &PgPool, scope: &ProjectScope, entry_id: Uuid) -> Result<Entry, Error> {
    let mut connection = pool.acquire().await?;
    fetch_entry(&mut connection, scope, entry_id).await
}

pub async fn get_by_key(pool: &PgPool, scope: &ProjectScope, project: &str, key: &str) -> Result<Entry, Error> {
    let entry_id: Uuid = sqlx::query_scalar(
        "SELECT entry_id FROM knowledge_entries
         WHERE project = $1 AND key = $2 AND ($3::text[] IS NULL OR project = ANY($3))",
    )
    .bind(project)
    .bind(key)
    .bind(scope.sql_filter())
    .fetch_optional(pool)
    .await?
    .ok_or_else(|| Error::NotFound(format!("entry {key} in project {project}")))?;
    get(pool, scope, entry_id).await
}

/// A page of entries, most recently updated first.
pub async fn list(
    pool: &PgPool,
    scope: &ProjectScope,
    filter: &EntryFilter,
    limit: i64,
    after: Option<Position>,
) -> Result<Vec<Entry>, Error> {
    let kinds: Vec<&str> = filter.kinds.iter().map(|kind| kind.as_str()).collect();
    let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {ENTRY_COLUMNS} FROM knowledge_entries e
         WHERE e.project = $1 AND ($2::text[] IS NULL OR e.project = ANY($2))
           AND e.status = $3
           AND (cardinality($4::text[]) = 0 OR e.kind = ANY($4))
           AND ($5::text IS NULL OR e.category = $5)
           AND ($6::text IS NULL OR e.tags @> ARRAY[$6])
           AND ($7::timestamptz IS NULL OR (e.updated_at, e.entry_id) < ($7, $8))
         ORDER BY e.updated_at DESC, e.entry_id DESC
         LIMIT $9"
    )))
    .bind(&filter.project)
    .bind(scope.sql_filter())
    .bind(filter.status.as_str())
    .bind(&kinds)
    .bind(&filter.category)
    .bind(&filter.tag)
    .bind(after.map(|position| position.occurred_at))
    .bind(after.map(|position| position.action_id))
    .bind(limit)
    .fetch_all(pool)
    .await?;
    entries_with_solutions(pool, &rows).await
}

/// Marks an entry obsolete, or removes it with everything attached when
/// `purge`. Returns the entry as it stands after (None when purged).
pub async fn delete(pool: &PgPool, scope: &ProjectScope, entry_id: Uuid, purge: bool) -> Result<Option<Entry>, Error> {
    if purge {
        let deleted = sqlx::query(
            "DELETE FROM knowledge_entries WHERE entry_id = $1 AND ($2::text[] IS NULL OR project = ANY($2))",
        )
        .bind(entry_id)
        .bind(scope.sql_filter())
        .execute(pool)
        .await?;
        if deleted.rows_affected() == 0 {
            return Err(Error::NotFound(format!("entry {entry_id}")));
        }
        return Ok(None);
    }
    let updated = sqlx::query(
        "UPDATE knowledge_entries SET status = 'obsolete', updated_at = now()
         WHERE entry_id = $1 AND ($2::text[] IS NULL OR project = ANY($2))",
    )
    .bind(entry_id)
    .bind(scope.sql_filter())
    .execute(pool)
    .await?;
    if updated.rows_affected() == 0 {
        return Err(Error::NotFound(format!("entry {entry_id}")));
    }
    get(pool, scope, entry_id).await.map(Some)
}

/// A quarantined entry released by a person: searchable again.
pub async fn release(connection: &mut PgConnection, entry_id: Uuid) -> Result<(), Error> {
    sqlx::query(
        "UPDATE knowledge_entries SET status = 'active', updated_at = now()
         WHERE entry_id = $1 AND status = 'quarantined'",
    )
    .bind(entry_id)
    .execute(connection)
    .await?;
    Ok(())
}

/// Removes an entry with everything attached, inside the caller's
/// transaction; a missing entry is NOT_FOUND.
pub async fn delete_in(connection: &mut PgConnection, scope: &ProjectScope, entry_id: Uuid) -> Result<(), Error> {
    let deleted =
        sqlx::query("DELETE FROM knowledge_entries WHERE entry_id = $1 AND ($2::text[] IS NULL OR project = ANY($2))")
            .bind(entry_id)
            .bind(scope.sql_filter())
            .execute(connection)
            .await?;
    if deleted.rows_affected() == 0 {
        return Err(Error::NotFound(format!("entry {entry_id}")));
    }
    Ok(())
}

/// The gotchas built from `attempt_ids`, verified with them.
pub async fn verify_gotchas(connection: &mut PgConnection, attempt_ids: &[Uuid]) -> Result<u64, Error> {
    let attempts: Vec<String> = attempt_ids.iter().map(Uuid::to_string).collect();
    Ok(sqlx::query(
        "UPDATE knowledge_entries SET trust = 'verified', updated_at = now()
         WHERE kind = 'gotcha' AND trust = 'observed' AND origin->>'author' = 'lore'
           AND details->>'attempt_id' = ANY($1)",
    )
    .bind(&attempts)
    .execute(connection)
    .await?
    .rows_affected())
}

/// Locks the entry for the rest of the transaction and returns its project
/// and kind.
async fn lock_entry(
    connection: &mut PgConnection,
    scope: &ProjectScope,
    entry_id: Uuid,
) -> Result<(String, EntryKind), Error> {
    let row = sqlx::query(
        "SELECT project, kind FROM knowledge_entries
         WHERE entry_id = $1 AND ($2::text[] IS NULL OR project = ANY($2)) FOR UPDATE",
    )
    .bind(entry_id)
    .bind(scope.sql_filter())
    .fetch_optional(&mut *connection)
    .await?
    .ok_or_else(|| Error::NotFound(format!("entry {entry_id}")))?;
    let kind: String = row.try_get("kind")?;
    Ok((row.try_get("project")?, parse::<EntryKind>("kind", &kind)?))
}

/// Counts one use of a solution of the entry.
async fn count_solution_use(
    connection: &mut PgConnection,
    entry_id: Uuid,
    solution_id: Uuid,
    success: bool,
    resolution_minutes: f64,
) -> Result<(), Error> {
    let updated = sqlx::query(
        "UPDATE knowledge_solutions
         SET times_applied = times_applied + 1,
             times_successful = times_successful + $3::int,
             total_resolution_minutes = total_resolution_minutes + CASE WHEN $3 THEN $4 ELSE 0 END
         WHERE solution_id = $1 AND entry_id = $2",
    )
    .bind(solution_id)
    .bind(entry_id)
    .bind(success)
    .bind(resolution_minutes)
    .execute(&mut *connection)
    .await?;
    if updated.rows_affected() == 0 {
        return Err(Error::invalid("solution_id", format!("{solution_id} is not a solution of entry {entry_id}")));
    }
    Ok(())
}

/// The idempotent records of an entry's use.
#[derive(Debug, Clone, Copy)]
enum Record {
    Occurrence,
    Application,
}

/// An id that was already stored is a replay only if it was stored for the
/// same entry; otherwise the client reused an id.
async fn check_replay(connection: &mut PgConnection, record: Record, id: Uuid, entry_id: Uuid) -> Result<(), Error> {
    let (query, name) = match record {
        Record::Occurrence => ("SELECT entry_id FROM knowledge_occurrences WHERE occurrence_id = $1", "occurrence"),
        Record::Application => ("SELECT entry_id FROM knowledge_applications WHERE application_id = $1", "application"),
    };
    let owner: Option<Uuid> = sqlx::query_scalar(query).bind(id).fetch_optional(&mut *connection).await?;
    if owner != Some(entry_id) {
        return Err(Error::AlreadyExists(format!("{name}_id {id} is already used by another {name}")));
    }
    Ok(())
}

/// Records an issue pattern seen again: the occurrence, the solution's
/// statistics, the count, last seen and the trend, in one transaction.
/// Returns the entry after and whether the occurrence was a replay.
pub async fn record_occurrence(
    pool: &PgPool,
    scope: &ProjectScope,
    occurrence: &NewOccurrence,
) -> Result<(Entry, bool), Error> {
    let mut transaction = pool.begin().await?;
    let (project, kind) = lock_entry(&mut transaction, scope, occurrence.entry_id).await?;
    if kind != EntryKind::IssuePattern {
        return Err(Error::FailedPrecondition(format!(
            "entry {} is a {}, occurrences are recorded on issue patterns",
            occurrence.entry_id,
            kind.as_str()
        )));
    }
    let inserted = sqlx::query(
        "INSERT INTO knowledge_occurrences (occurrence_id, project, entry_id, session_id, solution_id, success,
             resolution_minutes, note, occurred_at, found_via_search)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
         ON CONFLICT (occurrence_id) DO NOTHING",
    )
    .bind(occurrence.occurrence_id)
    .bind(&project)
    .bind(occurrence.entry_id)
    .bind(occurrence.session_id)
    .bind(occurrence.solution_id)
    .bind(occurrence.success)
    .bind(occurrence.resolution_minutes)
    .bind(&occurrence.note)
    .bind(occurrence.occurred_at)
    .bind(occurrence.found_via_search)
    .execute(&mut *transaction)
    .await?
    .rows_affected()
        == 1;
    if !inserted {
        check_replay(&mut transaction, Record::Occurrence, occurrence.occurrence_id, occurrence.entry_id).await?;
        let entry = fetch_entry(&mut transaction, scope, occurrence.entry_id).await?;
        return Ok((entry, true));
    }
    if let Some(solution_id) = occurrence.solution_id {
        count_solution_use(
            &mut transaction,
            occurrence.entry_id,
            solution_id,
            occurrence.success,
            occurrence.resolution_minutes,
        )
        .await?;
    }
    // Trend: occurrences of the last two weeks against the two before,
    // smoothed by one so that a single sighting does not swing it alone.
    sqlx::query(
        "UPDATE knowledge_entries e
         SET occurrence_count = occurrence_count + 1,
             last_seen_at = greatest(last_seen_at, $2),
             trend = CASE WHEN (counts.recent + 1.0) / (counts.previous + 1.0) >= 1.5 THEN 'increasing'
                          WHEN (counts.recent + 1.0) / (counts.previous + 1.0) <= 0.67 THEN 'decreasing'
                          ELSE 'stable' END
         FROM (SELECT count(*) FILTER (WHERE occurred_at >= now() - interval '14 days') AS recent,
                      count(*) FILTER (WHERE occurred_at < now() - interval '14 days'
                                         AND occurred_at >= now() - interval '28 days') AS previous
               FROM knowledge_occurrences WHERE entry_id = $1) AS counts
         WHERE e.entry_id = $1",
    )
    .bind(occurrence.entry_id)
    .bind(occurrence.occurred_at)
    .bind(occurrence.found_via_search)
    .execute(&mut *transaction)
    .await?;
    let entry = fetch_entry(&mut transaction, scope, occurrence.entry_id).await?;
    transaction.commit().await?;
    Ok((entry, false))
}

/// Records an entry applied in a session (and the solution's statistics)
/// in one transaction. Returns whether it was a replay.
pub async fn record_application(pool: &PgPool, scope: &ProjectScope, application: &Application) -> Result<bool, Error> {
    let mut transaction = pool.begin().await?;
    let (project, _) = lock_entry(&mut transaction, scope, application.entry_id).await?;
    let inserted = sqlx::query(
        "INSERT INTO knowledge_applications (application_id, project, entry_id, session_id, solution_id, success,
             resolution_minutes, found_via_search, note, applied_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
         ON CONFLICT (application_id) DO NOTHING",
    )
    .bind(application.application_id)
    .bind(&project)
    .bind(application.entry_id)
    .bind(application.session_id)
    .bind(application.solution_id)
    .bind(application.success)
    .bind(application.resolution_minutes)
    .bind(application.found_via_search)
    .bind(&application.note)
    .bind(application.applied_at)
    .execute(&mut *transaction)
    .await?
    .rows_affected()
        == 1;
    if !inserted {
        check_replay(&mut transaction, Record::Application, application.application_id, application.entry_id).await?;
        return Ok(true);
    }
    if let Some(solution_id) = application.solution_id {
        count_solution_use(
            &mut transaction,
            application.entry_id,
            solution_id,
            application.success,
            application.resolution_minutes,
        )
        .await?;
    }
    sqlx::query("UPDATE knowledge_entries SET last_seen_at = greatest(last_seen_at, $2) WHERE entry_id = $1")
        .bind(application.entry_id)
        .bind(application.applied_at)
        .execute(&mut *transaction)
        .await?;
    transaction.commit().await?;
    Ok(false)
}

/// The entry's applications, newest first.
pub async fn history(pool: &PgPool, entry_id: Uuid, limit: i64) -> Result<Vec<Application>, Error> {
    Ok(recent_applications(pool, &[entry_id], limit).await?.remove(&entry_id).unwrap_or_default())
}

/// The latest `per_entry` applications of each entry, newest first.
pub async fn recent_applications(
    pool: &PgPool,
    ids: &[Uuid],
    per_entry: i64,
) -> Result<HashMap<Uuid, Vec<Application>>, Error> {
    let rows = sqlx::query(
        "SELECT * FROM (
             SELECT application_id, entry_id, session_id, solution_id, success, resolution_minutes,
                    found_via_search, note, applied_at,
                    row_number() OVER (PARTITION BY entry_id ORDER BY applied_at DESC, application_id DESC) AS n
             FROM knowledge_applications WHERE entry_id = ANY($1)) AS ranked
         WHERE n <= $2 ORDER BY entry_id, n",
    )
    .bind(ids)
    .bind(per_entry)
    .fetch_all(pool)
    .await?;
    let mut by_entry: HashMap<Uuid, Vec<Application>> = HashMap::new();
    for row in rows {
        let application = Application {
            application_id: row.try_get("application_id")?,
            entry_id: row.try_get("entry_id")?,
            session_id: row.try_get("session_id")?,
            solution_id: row.try_get("solution_id")?,
            success: row.try_get("success")?,
            resolution_minutes: row.try_get("resolution_minutes")?,
            found_via_search: row.try_get("found_via_search")?,
            note: row.try_get("note")?,
            applied_at: row.try_get("applied_at")?,
        };
        by_entry.entry(application.entry_id).or_default().push(application);
    }
    Ok(by_entry)
}

pub async fn effectiveness(pool: &PgPool, entry_id: Uuid) -> Result<Effectiveness, Error> {
    let row = sqlx::query(
        "SELECT a.*, o.*
         FROM (SELECT count(*) AS applications,
                      count(*) FILTER (WHERE success) AS successes,
                      coalesce(avg(resolution_minutes) FILTER (WHERE success), 0) AS avg_minutes,
                      count(*) FILTER (WHERE found_via_search) AS found_via_search
               FROM knowledge_applications WHERE entry_id = $1) AS a,
              (SELECT count(*) AS occurrences,
                      count(*) FILTER (WHERE found_via_search) AS occurrences_found_via_search
               FROM knowledge_occurrences WHERE entry_id = $1) AS o",
    )
    .bind(entry_id)
    .fetch_one(pool)
    .await?;
    Ok(Effectiveness {
        applications: row.try_get("applications")?,
        successes: row.try_get("successes")?,
        avg_resolution_minutes: row.try_get("avg_minutes")?,
        found_via_search: row.try_get("found_via_search")?,
        occurrences: row.try_get("occurrences")?,
        occurrences_found_via_search: row.try_get("occurrences_found_via_search")?,
    })
}

/// An indexed document's entry, with what tells whether indexing the
/// document again changes anything.
#[derive(Debug, Clone)]
pub struct StoredDocument {
    pub entry: Entry,
    /// `None` once the document was removed.
    pub document_hash: Option<Vec<u8>>,
    pub source_root: Option<String>,
}

/// Serializes document indexing within a project until the transaction
/// ends, so two indexers of one path (or of one id) cannot both create it.
pub async fn lock_documents(connection: &mut PgConnection, project: &str) -> Result<(), Error> {
    sqlx::query("SELECT pg_advisory_xact_lock(hashtextextended('lore.documents:' || $1, 0))")
        .bind(project)
        .execute(connection)
        .await?;
    Ok(())
}

/// The entry a document is indexed into: the one with its key when it has
/// one, else the one at its path, unless that one belongs to another key.
pub async fn find_document(
    connection: &mut PgConnection,
    scope: &ProjectScope,
    project: &str,
    key: Option<&str>,
    path: &str,
) -> Result<Option<StoredDocument>, Error> {
    let row = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {ENTRY_COLUMNS}, e.document_hash, e.source_root FROM knowledge_entries e
         WHERE e.project = $1 AND ($4::text[] IS NULL OR e.project = ANY($4))
           AND (e.key = $2 OR (e.source_path = $3 AND (e.key IS NULL OR $2::text IS NULL)))
         ORDER BY (e.key = $2) DESC NULLS LAST
         LIMIT 1"
    )))
    .bind(project)
    .bind(key)
    .bind(path)
    .bind(scope.sql_filter())
    .fetch_optional(&mut *connection)
    .await?;
    let Some(row) = row else { return Ok(None) };
    let mut entries = [entry_from_row(&row)?];
    attach_solutions(&mut *connection, &mut entries).await?;
    let [entry] = entries;
    Ok(Some(StoredDocument {
        entry,
        document_hash: row.try_get("document_hash")?,
        source_root: row.try_get("source_root")?,
    }))
}

/// Another entry still at `path` (its document now says another id) loses
/// the path and leaves search.
pub async fn detach_document(
    connection: &mut PgConnection,
    project: &str,
    path: &str,
    keep: Option<Uuid>,
) -> Result<(), Error> {
    sqlx::query(
        "UPDATE knowledge_entries
         SET source_path = NULL, source_root = NULL, document_hash = NULL, status = 'obsolete', updated_at = now()
         WHERE project = $1 AND source_path = $2 AND entry_id IS DISTINCT FROM $3",
    )
    .bind(project)
    .bind(path)
    .bind(keep)
    .execute(connection)
    .await?;
    Ok(())
}

/// The document at `path` (or every document under it, as a folder) leaves
/// search: it becomes obsolete and keeps its history and its path, so the
/// same file coming back is the same entry. With `root`, only documents of
/// that watched folder. Returns how many were removed.
pub async fn remove_documents(
    pool: &PgPool,
    scope: &ProjectScope,
    project: &str,
    root: Option<&str>,
    path: &str,
) -> Result<u64, Error> {
    let removed = sqlx::query(
        "UPDATE knowledge_entries
         SET status = 'obsolete', document_hash = NULL, updated_at = now()
         WHERE project = $1 AND ($2::text[] IS NULL OR project = ANY($2))
           AND document_hash IS NOT NULL AND ($3::text IS NULL OR source_root = $3)
           AND (source_path = $4 OR starts_with(source_path, $4 || '/'))",
    )
    .bind(project)
    .bind(scope.sql_filter())
    .bind(root)
    .bind(path)
    .execute(pool)
    .await?
    .rows_affected();
    Ok(removed)
}

/// Paths of the documents indexed from a watched folder.
pub async fn document_paths(pool: &PgPool, project: &str, root: &str) -> Result<Vec<String>, Error> {
    Ok(sqlx::query_scalar(
        "SELECT source_path FROM knowledge_entries
         WHERE project = $1 AND source_root = $2 AND document_hash IS NOT NULL",
    )
    .bind(project)
    .bind(root)
    .fetch_all(pool)
    .await?)
}

/// The id of the entry with this key, if any.
pub async fn entry_id_by_key(
    connection: &mut PgConnection,
    scope: &ProjectScope,
    project: &str,
    key: &str,
) -> Result<Option<Uuid>, Error> {
    Ok(sqlx::query_scalar(
        "SELECT entry_id FROM knowledge_entries
         WHERE project = $1 AND key = $2 AND ($3::text[] IS NULL OR project = ANY($3))",
    )
    .bind(project)
    .bind(key)
    .bind(scope.sql_filter())
    .fetch_optional(connection)
    .await?)
}

/// An entry of `project` by id or key, inside the caller's transaction;
/// `None` when there is none.
pub async fn find_in(
    connection: &mut PgConnection,
    scope: &ProjectScope,
    project: &str,
    handle: &str,
) -> Result<Option<Entry>, Error> {
    let entry_id = match Uuid::parse_str(handle) {
        Ok(entry_id) => {
            sqlx::query_scalar(
                "SELECT entry_id FROM knowledge_entries
             WHERE entry_id = $1 AND project = $2 AND ($3::text[] IS NULL OR project = ANY($3))",
            )
            .bind(entry_id)
            .bind(project)
            .bind(scope.sql_filter())
            .fetch_optional(&mut *connection)
            .await?
        }
        Err(_) => entry_id_by_key(connection, scope, project, handle).await?,
    };
    match entry_id {
        Some(entry_id) => Ok(Some(fetch_entry(connection, scope, entry_id).await?)),
        None => Ok(None),
    }
}

/// `superseded` is replaced by `successor`: kept, found by no search.
pub async fn supersede(connection: &mut PgConnection, superseded: Uuid, successor: Uuid) -> Result<(), Error> {
    sqlx::query(
        "UPDATE knowledge_entries SET status = 'superseded', superseded_by = $2, updated_at = now()
         WHERE entry_id = $1 AND status IN ('active', 'obsolete', 'superseded')",
    )
    .bind(superseded)
    .bind(successor)
    .execute(connection)
    .await?;
    Ok(())
}

/// Gives an entry another key (an older gotcha making room for the newer
/// one of its pattern).
pub async fn rekey(connection: &mut PgConnection, entry_id: Uuid, key: &str) -> Result<(), Error> {
    sqlx::query("UPDATE knowledge_entries SET key = $2, updated_at = now() WHERE entry_id = $1")
        .bind(entry_id)
        .bind(key)
        .execute(connection)
        .await?;
    Ok(())
}

/// The entries `successor` replaced: id, key and title.
pub async fn superseded_by(pool: &PgPool, successor: Uuid) -> Result<Vec<(Uuid, Option<String>, String)>, Error> {
    let rows = sqlx::query(
        "SELECT entry_id, key, title FROM knowledge_entries WHERE superseded_by = $1 ORDER BY updated_at DESC",
    )
    .bind(successor)
    .fetch_all(pool)
    .await?;
    rows.iter()
        .map(|row| Ok((row.try_get("entry_id")?, row.try_get("key")?, row.try_get("title")?)))
        .collect::<Result<_, sqlx::Error>>()
        .map_err(Error::from)
}
