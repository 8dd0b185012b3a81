//! The action log: sessions, actions, their sanitization and hash chain.
//!
//! [`ActionLog`] is what the gRPC handlers call: it sanitizes what agents
//! send, then hands validated domain values to the store.

pub mod export;
pub mod feed;
pub mod group_commit;
pub mod report;
pub mod resume;

use serde_json::{Value, json};
use sqlx::PgPool;
use uuid::Uuid;

use lore_sanitize::{Report, Sanitizer, merge_reports};

use crate::Error;
use export::{ExportCursor, ExportFormat, ExportWriter};
use lore_store as store;
use lore_store::actions::Direction;
use lore_store::actions::sessions::LastSessionFilter;
use lore_store::replicas::ReadPools;
use lore_types::actions::chain;
use lore_types::actions::query::{ActionFilter, Position};
use lore_types::actions::{
    self as model, Action, BatchOutcome, EndReason, NewAction, NewSession, Rejection, RejectionKind, Session,
};
use lore_types::scope::ProjectScope;
use report::ActivityReport;

/// A context larger than this after sanitization is replaced by a preview:
/// one action must not carry a whole file or log into the audit table.
pub const DEFAULT_MAX_CONTEXT_BYTES: usize = 64 * 1024;

/// Limits and timings of the action log.
#[derive(Debug, Clone)]
pub struct ActionLimits {
    /// See [`DEFAULT_MAX_CONTEXT_BYTES`].
    pub max_context_bytes: usize,
    /// How often a following Resume sends a heartbeat (and looks for new
    /// actions even without a notification).
    pub follow_heartbeat: std::time::Duration,
    pub retention: RetentionPolicy,
}

/// How long actions stay live and archived.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetentionPolicy {
    pub archive_after_days: u32,
    pub drop_after_days: u32,
}

/// The retention policy, the partitions, and what a pass did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetentionReport {
    pub policy: RetentionPolicy,
    pub partitions: Vec<store::actions::retention::Partition>,
    pub outcome: store::actions::retention::RetentionOutcome,
}

impl Default for ActionLimits {
    fn default() -> Self {
        Self {
            max_context_bytes: DEFAULT_MAX_CONTEXT_BYTES,
            follow_heartbeat: std::time::Duration::from_secs(5),
            retention: RetentionPolicy { archive_after_days: 90, drop_after_days: 365 },
        }
    }
}

/// Writer tasks of the LogAction group commit. One wins on a 2-core machine
/// (docs/BENCHMARKS.md, "LogAction latency"): larger groups beat parallel
/// transactions when the cores are shared with PostgreSQL.
const GROUP_COMMIT_WRITERS: usize = 1;

/// How many of a session's latest actions a resume summary reads.
const SUMMARY_WINDOW: i64 = 500;
/// Followers look this far behind the newest action they saw: a batch's
/// received_at is read before it commits, so it can become visible after
/// rows received later.
const FOLLOW_LOOKBACK: chrono::TimeDelta = chrono::TimeDelta::seconds(5);
/// Most actions a follower reads per look; it looks again at once when full.
const FOLLOW_PAGE: i64 = 1000;

/// Which session to resume.
#[derive(Debug, Clone, Default)]
pub struct ResumeTarget {
    pub session_id: Option<Uuid>,
    /// Required when `session_id` is not given.
    pub project: Option<String>,
    pub agent_id: Option<String>,
    pub supervisor_type: Option<String>,
}

/// One event of a Resume stream.
#[derive(Debug, Clone, PartialEq)]
pub enum ResumeEvent {
    Summary(Box<resume::ResumeSummary>),
    Action(Box<Action>),
    CaughtUp(chrono::DateTime<chrono::Utc>),
    Heartbeat(chrono::DateTime<chrono::Utc>),
}

/// What LogAction stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Logged {
    pub action_id: Uuid,
    /// Values sanitization redacted.
    pub redaction_count: i32,
    /// True when the action was a replay of a stored one.
    pub duplicate: bool,
}

/// One piece of an export.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportChunk {
    pub data: Vec<u8>,
    pub rows: u32,
    /// Resume after this chunk by sending this back.
    pub cursor: String,
    pub last: bool,
}

/// The first broken link of a chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrokenLink {
    pub chain_seq: i64,
    pub action_id: Option<Uuid>,
    pub expected_hash: Vec<u8>,
    pub stored_hash: Vec<u8>,
    pub reason: String,
}

/// What VerifyChain found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChainReport {
    pub checked: u64,
    pub first_broken: Option<BrokenLink>,
}

/// Sessions and actions over PostgreSQL.
#[derive(Debug, Clone)]
pub struct ActionLog {
    pool: PgPool,
    /// Where reports and exports read (a replica when one is fresh enough).
    reads: ReadPools,
    sanitizer: Sanitizer,
    limits: ActionLimits,
    feed: feed::ActionFeed,
    group_commit: group_commit::GroupCommit,
}

impl ActionLog {
    /// Must run inside the Tokio runtime: it starts the live action feed.
    pub fn new(pool: PgPool, sanitizer: Sanitizer, limits: ActionLimits) -> Self {
        let feed = feed::ActionFeed::start(pool.clone());
        let group_commit = group_commit::GroupCommit::start(pool.clone(), GROUP_COMMIT_WRITERS);
        Self { reads: ReadPools::primary_only(pool.clone()), pool, sanitizer, limits, feed, group_commit }
    }

    /// Reports and exports read through `reads` (`database.read_urls`).
    pub fn with_reads(mut self, reads: ReadPools) -> Self {
        self.reads = reads;
        self
    }

    pub fn pool(&self) -> &PgPool {
        &self.pool
    }

    pub async fn start_session(&self, scope: &ProjectScope, mut session: NewSession) -> Result<(Session, bool), Error> {
        self.sanitizer.sanitize_value(&mut session.metadata);
        store::actions::sessions::start(&self.pool, scope, &session).await
    }

    pub async fn session(&self, scope: &ProjectScope, session_id: Uuid) -> Result<Session, Error> {
        store::actions::sessions::get(&self.pool, scope, session_id).await
    }

    pub async fn heartbeat(&self, scope: &ProjectScope, session_id: Uuid) -> Result<Session, Error> {
        store::actions::sessions::heartbeat(&self.pool, scope, session_id).await
    }

    pub async fn end_session(
        &self,
        scope: &ProjectScope,
        session_id: Uuid,
        reason: EndReason,
        summary: &str,
    ) -> Result<Session, Error> {
        let (summary, _) = self.sanitizer.sanitize_text(summary);
        store::actions::sessions::end(&self.pool, scope, session_id, reason, &summary).await
    }

    /// The latest session matching the filter, with its last action.
    pub async fn last_session(
        &self,
        scope: &ProjectScope,
        project: &str,
        filter: &LastSessionFilter<'_>,
    ) -> Result<(Session, Option<Action>), Error> {
        let session = store::actions::sessions::last(&self.pool, scope, project, filter).await?;
        let last_action = store::actions::recent_in_session(&self.pool, scope, session.session_id, 1).await?.pop();
        Ok((session, last_action))
    }

    /// Stores one action, in a transaction shared with other LogAction calls
    /// of the moment (see [`group_commit`]).
    pub async fn log(&self, scope: &ProjectScope, action: NewAction) -> Result<Logged, Error> {
        let action = self.sanitize(action);
        let (action_id, redaction_count) = (action.action_id, action.redaction_count);
        let duplicate = match self.group_commit.write(scope.clone(), action).await? {
            group_commit::Written::Stored => false,
            group_commit::Written::Duplicate => true,
            group_commit::Written::Rejected(rejection) => return Err(rejection_error(rejection)),
        };
        count_stored(u64::from(!duplicate), u64::from(duplicate));
        Ok(Logged { action_id, redaction_count, duplicate })
    }

    /// Stores a batch whose actions were validated one by one: the invalid
    /// ones arrive as rejections and are reported with the store's own.
    pub async fn ingest(
        &self,
        scope: &ProjectScope,
        batch: Vec<Result<NewAction, Rejection>>,
    ) -> Result<BatchOutcome, Error> {
        let mut invalid = Vec::new();
        let mut valid = Vec::with_capacity(batch.len());
        let mut positions = Vec::with_capacity(batch.len());
        for (index, item) in batch.into_iter().enumerate() {
            match item {
                Ok(action) => {
                    positions.push(index);
                    valid.push(self.sanitize(action));
                }
                Err(rejection) => invalid.push(rejection),
            }
        }
        let mut outcome = store::actions::insert_batch(&self.pool, scope, &valid).await?;
        // The store numbers rejections within the valid actions; report
        // positions in the batch as the client sent it.
        for rejection in &mut outcome.rejected {
            rejection.index = positions[rejection.index];
        }
        for index in &mut outcome.duplicate_indexes {
            *index = positions[*index];
        }
        outcome.rejected.extend(invalid);
        outcome.rejected.sort_by_key(|rejection| rejection.index);
        count_stored(u64::from(outcome.stored), u64::from(outcome.duplicates));
        Ok(outcome)
    }

    /// The last `limit` actions of a session, oldest first.
    pub async fn recent_actions(
        &self,
        scope: &ProjectScope,
        session_id: Uuid,
        limit: i64,
    ) -> Result<Vec<Action>, Error> {
        store::actions::recent_in_session(&self.pool, scope, session_id, limit).await
    }

    /// One page of actions matching `filter`, newest first, after `after`.
    pub async fn search(
        &self,
        scope: &ProjectScope,
        filter: &ActionFilter,
        after: Option<Position>,
        limit: i64,
    ) -> Result<Vec<Action>, Error> {
        store::actions::page(&self.pool, scope, filter, after, Direction::Descending, limit).await
    }

    /// Aggregates and recent failures of the actions matching `filter`,
    /// whose window must be set.
    pub async fn activity_report(
        &self,
        scope: &ProjectScope,
        filter: &ActionFilter,
        recent_failures: i64,
    ) -> Result<ActivityReport, Error> {
        let (Some(from), Some(until)) = (filter.from, filter.until) else {
            return Err(Error::invalid("window", "a report needs a start and an end"));
        };
        // A report may be as old as a replica is allowed to lag.
        let pool = self.reads.bounded();
        let counts = store::actions::activity_counts(&pool, scope, filter).await?;
        let failures = ActionFilter { outcomes: vec![model::Outcome::Failure], ..filter.clone() };
        let recent_failures =
            store::actions::page(&pool, scope, &failures, None, Direction::Descending, recent_failures).await?;
        Ok(ActivityReport { project: filter.project.clone(), from, until, counts, recent_failures })
    }

    /// The session a resume is about: the one named, or the latest matching
    /// the filters.
    pub async fn resume_session(&self, scope: &ProjectScope, target: &ResumeTarget) -> Result<Session, Error> {
        match (target.session_id, &target.project) {
            (Some(session_id), _) => self.session(scope, session_id).await,
            (None, Some(project)) => {
                let filter = LastSessionFilter {
                    agent_id: target.agent_id.as_deref(),
                    supervisor_type: target.supervisor_type.as_deref(),
                    ..Default::default()
                };
                store::actions::sessions::last(&self.pool, scope, project, &filter).await
            }
            (None, None) => Err(Error::invalid("project", "required when session_id is empty")),
        }
    }

    /// The agent's latest session other than `exclude` that did something,
    /// if it has one.
    pub async fn previous_session(
        &self,
        scope: &ProjectScope,
        project: &str,
        agent_id: &str,
        exclude: Option<Uuid>,
    ) -> Result<Option<Session>, Error> {
        let filter = LastSessionFilter { agent_id: Some(agent_id), exclude, with_actions: true, ..Default::default() };
        match store::actions::sessions::last(&self.pool, scope, project, &filter).await {
            Ok(session) => Ok(Some(session)),
            Err(Error::NotFound(_)) => Ok(None),
            Err(error) => Err(error),
        }
    }

    /// Where `session` stopped: its unfinished work and next steps, read
    /// from its latest actions.
    pub async fn summary(&self, scope: &ProjectScope, session: Session) -> Result<resume::ResumeSummary, Error> {
        let actions = store::actions::recent_in_session(&self.pool, scope, session.session_id, SUMMARY_WINDOW).await?;
        Ok(resume::summarize(session, &actions))
    }

    /// Streams a resume of `session` (see the Resume RPC): summary, the last
    /// `recent` actions oldest first, caught-up, then (with `follow`) new
    /// actions of the project and heartbeats until the stream is dropped.
    pub fn resume(
        &self,
        scope: ProjectScope,
        session: Session,
        agent_filter: Option<String>,
        recent: usize,
        follow: bool,
    ) -> impl futures_util::Stream<Item = Result<ResumeEvent, Error>> + Send + 'static + use<> {
        let pool = self.pool.clone();
        let feed = self.feed.clone();
        let heartbeat_every = self.limits.follow_heartbeat;
        async_stream::try_stream! {
            // Subscribe before reading, so nothing stored meanwhile is missed.
            let mut notifications = feed.subscribe();
            let project = session.project.clone();
            let actions = store::actions::recent_in_session(&pool, &scope, session.session_id, SUMMARY_WINDOW).await?;
            let summary = resume::summarize(session, &actions);
            yield ResumeEvent::Summary(Box::new(summary));
            for action in &actions[actions.len().saturating_sub(recent)..] {
                yield ResumeEvent::Action(Box::new(action.clone()));
            }
            let caught_up = store::actions::database_now(&pool).await?;
            yield ResumeEvent::CaughtUp(caught_up);
            if follow {
                // ids already sent, with when they were stored, pruned to the
                // lookback window.
                let mut sent: std::collections::HashMap<Uuid, chrono::DateTime<chrono::Utc>> =
                    actions.iter().map(|action| (action.action.action_id, action.received_at)).collect();
                let mut newest_seen = caught_up;
                let mut ticker = tokio::time::interval(heartbeat_every);
                ticker.tick().await;
                let mut heartbeat_due = false;
                loop {
                    loop {
                        let since = newest_seen - FOLLOW_LOOKBACK;
                        let fresh = store::actions::received_since(&pool, &scope, &project, agent_filter.as_deref(), since, FOLLOW_PAGE).await?;
                        let page_full = fresh.len() as i64 == FOLLOW_PAGE;
                        for action in fresh {
                            newest_seen = newest_seen.max(action.received_at);
                            if sent.insert(action.action.action_id, action.received_at).is_none() {
                                yield ResumeEvent::Action(Box::new(action));
                            }
                        }
                        sent.retain(|_, received_at| *received_at >= newest_seen - FOLLOW_LOOKBACK);
                        if !page_full {
                            break;
                        }
                    }
                    if heartbeat_due {
                        yield ResumeEvent::Heartbeat(store::actions::database_now(&pool).await?);
                    }
                    heartbeat_due = wait_for_news(&mut notifications, &mut ticker, &project).await;
                }
            }
        }
    }

    /// Streams an export in chunks (see [`export`]). `cursor` is where a
    /// resumed export continues; a new export starts at `as_of` (now when
    /// unset).
    pub fn export(
        &self,
        scope: ProjectScope,
        format: ExportFormat,
        filter: ActionFilter,
        resume: Option<ExportCursor>,
        as_of: Option<chrono::DateTime<chrono::Utc>>,
        chunk_rows: i64,
    ) -> impl futures_util::Stream<Item = Result<ExportChunk, Error>> + Send + 'static + use<> {
        let (primary, reads) = (self.pool.clone(), self.reads.clone());
        async_stream::try_stream! {
            let fingerprint = export::fingerprint(format, &filter);
            let cursor = match resume {
                Some(cursor) => {
                    if cursor.fingerprint != fingerprint {
                        Err(Error::invalid("resume_after", "the cursor belongs to a different export (other filters or format)"))?;
                    }
                    cursor
                }
                None => {
                    let settled = store::actions::export_as_of(&primary).await?;
                    let as_of = as_of.map_or(settled, |requested| requested.min(settled));
                    ExportCursor { as_of, fingerprint, after: None }
                }
            };
            // Every row the export covers is committed by now: a replica
            // that has replayed the primary's present position holds them
            // all (else the primary answers).
            let pool = reads.at_least(reads.primary_position().await?).await;
            let filter = ActionFilter { received_by: Some(cursor.as_of), ..filter };
            let mut writer = ExportWriter::new(format, cursor.after.is_some());
            let mut after = cursor.after;
            loop {
                let rows = store::actions::page(&pool, &scope, &filter, after, Direction::Ascending, chunk_rows).await?;
                let exhausted = (rows.len() as i64) < chunk_rows;
                let mut data = Vec::new();
                let mut count = 0_u32;
                for (index, row) in rows.iter().enumerate() {
                    writer.write_row(&mut data, row);
                    count += 1;
                    after = Some(Position { occurred_at: row.action.occurred_at, action_id: row.action.action_id });
                    if data.len() >= export::MAX_CHUNK_BYTES && index + 1 < rows.len() {
                        let cursor = ExportCursor { after, ..cursor }.encode();
                        yield ExportChunk { data: std::mem::take(&mut data), rows: count, cursor, last: false };
                        count = 0;
                    }
                }
                if exhausted {
                    writer.finish(&mut data);
                    yield ExportChunk { data, rows: count, cursor: ExportCursor { after, ..cursor }.encode(), last: true };
                    break;
                }
                if count > 0 {
                    yield ExportChunk { data, rows: count, cursor: ExportCursor { after, ..cursor }.encode(), last: false };
                }
            }
        }
    }

    /// Marks the sessions silent since before `silent_since` disconnected
    /// (the leader's sweep); how many.
    pub async fn disconnect_silent_sessions(&self, silent_since: chrono::DateTime<chrono::Utc>) -> Result<u64, Error> {
        store::actions::sessions::mark_silent_sessions_disconnected(&self.pool, silent_since).await
    }

    /// Applies the retention policy (or, with `dry_run`, says what it would
    /// do). Also creates the coming months' partitions.
    pub async fn run_retention(&self, dry_run: bool) -> Result<RetentionReport, Error> {
        let policy = self.limits.retention;
        let now = chrono::Utc::now();
        let archive_before = now - chrono::Duration::days(i64::from(policy.archive_after_days));
        let drop_before = now - chrono::Duration::days(i64::from(policy.drop_after_days));
        if !dry_run {
            store::ensure_action_partitions(&self.pool).await?;
        }
        let outcome = store::actions::retention::apply(&self.pool, archive_before, drop_before, dry_run).await?;
        let partitions = store::actions::retention::partitions(&self.pool).await?;
        Ok(RetentionReport { policy, partitions, outcome })
    }

    /// Recomputes a session's chain and reports the first link that does not
    /// hold: a gap, an edited row, a wrong predecessor, or a missing tail.
    pub async fn verify_chain(&self, scope: &ProjectScope, session_id: Uuid) -> Result<ChainReport, Error> {
        let (recorded_head, recorded_length) = store::actions::chain_head(&self.pool, scope, session_id).await?;
        let mut checked = 0_u64;
        let mut previous_hash: Vec<u8> = Vec::new();
        let mut first_broken = None;
        store::actions::for_each_in_chain(&self.pool, scope, session_id, |action| {
            let expected_seq = checked as i64 + 1;
            let seq = action.chain_seq.unwrap_or_default();
            let broken = |expected_hash: Vec<u8>, reason: &str| BrokenLink {
                chain_seq: seq,
                action_id: Some(action.action.action_id),
                expected_hash,
                stored_hash: action.chain_hash.clone(),
                reason: reason.to_owned(),
            };
            if seq != expected_seq {
                first_broken = Some(BrokenLink {
                    chain_seq: expected_seq,
                    action_id: None,
                    expected_hash: Vec::new(),
                    stored_hash: Vec::new(),
                    reason: format!("missing action: chain jumps from {} to {seq}", expected_seq - 1),
                });
                return false;
            }
            let recomputed =
                chain::action_hash(&previous_hash, Some(seq), &action.action, action.received_at.timestamp_micros())
                    .to_vec();
            if action.prev_hash.as_deref().unwrap_or_default() != previous_hash.as_slice() {
                first_broken = Some(broken(recomputed, "predecessor hash mismatch"));
                return false;
            }
            if recomputed != action.chain_hash {
                first_broken = Some(broken(recomputed, "content changed"));
                return false;
            }
            previous_hash = action.chain_hash;
            checked += 1;
            true
        })
        .await?;
        if first_broken.is_none()
            && (checked as i64 != recorded_length
                || (checked > 0 && recorded_head.as_deref() != Some(previous_hash.as_slice())))
        {
            first_broken = Some(BrokenLink {
                chain_seq: checked as i64 + 1,
                action_id: None,
                expected_hash: recorded_head.unwrap_or_default(),
                stored_hash: previous_hash,
                reason: format!("missing action: the session recorded {recorded_length} actions, {checked} remain"),
            });
        }
        Ok(ChainReport { checked, first_broken })
    }

    /// Redacts secrets in context and error, cuts long strings, and replaces
    /// an oversized context with a marked preview.
    fn sanitize(&self, mut action: NewAction) -> NewAction {
        let context_report = self.sanitizer.sanitize_value(&mut action.context);
        let (error, error_report) = self.sanitizer.sanitize_text(&action.error);
        action.error = error;
        let Report { redactions, truncated, .. } = merge_reports([context_report, error_report]);
        let mut truncated = truncated;
        let encoded = chain::canonical_json(&action.context);
        if encoded.len() > self.limits.max_context_bytes {
            let preview: String = encoded.chars().take(self.sanitizer.config().max_string_chars).collect();
            action.context = json!({
                "_truncated": true,
                "_original_bytes": encoded.len(),
                "_preview": Value::String(preview),
            });
            truncated = true;
        }
        action.redaction_count = i32::try_from(redactions).unwrap_or(i32::MAX);
        action.truncated = truncated;
        action
    }
}

fn count_stored(stored: u64, duplicates: u64) {
    let metrics = crate::metrics::metrics();
    metrics.actions_stored.add(stored, &[]);
    metrics.actions_duplicate.add(duplicates, &[]);
}

/// The rejection of the only action of a LogAction call, as an error that
/// names the field.
fn rejection_error(rejection: Rejection) -> Error {
    let field = format!("action.{}", rejection.field);
    match rejection.kind {
        RejectionKind::Invalid => Error::invalid(field, rejection.reason),
        RejectionKind::NotFound => Error::NotFound(format!("{field}: {}", rejection.reason)),
        RejectionKind::OutOfScope => Error::PermissionDenied(format!("{field}: {}", rejection.reason)),
    }
}

/// Waits for a notification of `project` (false) or the next heartbeat tick
/// (true). A lagging or closed feed counts as news: the follower looks at the
/// table, which is the truth.
async fn wait_for_news(
    notifications: &mut tokio::sync::broadcast::Receiver<String>,
    ticker: &mut tokio::time::Interval,
    project: &str,
) -> bool {
    loop {
        tokio::select! {
            notified = notifications.recv() => match notified {
                Ok(notified_project) if notified_project != project => continue,
                Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => return false,
                // No more notifications will come: fall back to the ticker.
                Err(tokio::sync::broadcast::error::RecvError::Closed) => {
                    ticker.tick().await;
                    return true;
                }
            },
            _ = ticker.tick() => return true,
        }
    }
}
