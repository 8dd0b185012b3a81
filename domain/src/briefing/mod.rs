//! Briefings: what an agent should know before it works on a task, in one
//! call (AgentService.Brief), and the learnings and warnings a Resume sends.
//!
//! A briefing reads three things side by side: where the agent's last
//! session stopped (the Resume summary), the lessons a hybrid search finds
//! for the task, and the QA warnings ranked for it. It keeps the lessons
//! that really matched (a lesson found only by meaning must be close in
//! meaning), leaves out what the session was already given when asked to,
//! and renders the most relevant items within a size budget
//! ([`render`]). Only what it shows is recorded: each warning as a QA
//! delivery (so its outcome can be scored), and the whole as a briefing of
//! the session (so the next one can leave it out).
//!
//! The query for the lessons is the task's own words; a task without any
//! (a session that has just started) is briefed on what the last session
//! left unfinished.
//!
//! Every item a briefing considers goes into the injection ledger
//! ([`crate::injections`]), shown or withheld with the reason: stale (the
//! files it cites are gone from the agent's checkout), already given,
//! over the briefing's budget, or over the session's (past
//! `session_budget_chars`, only new reviewed items of high relevance are
//! shown), or unreviewed (an agent's written text waits for a person).

pub mod frequent;
pub mod render;
pub mod screened;
pub mod similar;

use std::collections::HashSet;

use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::Error;
use crate::actions::resume::ResumeSummary;
use crate::actions::{ActionLog, ResumeEvent};
use crate::injections::{self, Given, InjectedItem, Injection, InjectionLedger, Surface, Withheld};
use crate::knowledge::KnowledgeBase;
use crate::knowledge::search::{Hit, SearchMode, SearchQuery};
use crate::qa::QaLearning;
use lore_store::knowledge::search::SearchFilter;
use lore_types::actions::Session;
use lore_types::knowledge::rank::{Relevance, Signal};
use lore_types::qa::hotspots::HotSpot;
use lore_types::qa::{Task, Warning, WarningRequest};
use lore_types::scope::ProjectScope;
use lore_types::trust::Author;
use similar::SimilarSession;

/// Lessons and warnings a briefing considers unless asked otherwise: five
/// of each fit a 4,000-character budget with room for the last session.
pub const DEFAULT_ITEMS: usize = 5;
/// The lessons query: the task's words, not a whole document (a long query
/// dilutes both full text and the embedding).
const MAX_QUERY_CHARS: usize = 1_200;
/// Unfinished work items of the last session that make a query.
const QUERY_WORK_ITEMS: usize = 3;
/// Files whose names join the query.
const QUERY_FILES: usize = 10;
/// What a Resume sends beside the summary.
const RESUME_LESSONS: usize = 3;
const RESUME_WARNINGS: usize = 5;
/// A warning this relevant to the task is "high" past the session budget,
/// as a lesson of [`Relevance::High`] (fused similarity >= 0.8) is; so is
/// the best match of either kind.
const HIGH_RELEVANCE: f64 = 0.8;
/// A session with less than this left of its budget has spent it: only
/// new reviewed items of high relevance are shown, within the
/// briefing's own budget (what a lesson of a few lines needs).
const SESSION_SPENT_BELOW_CHARS: usize = 500;

/// Bounds on what a Brief or Resume request may carry, in one place.
pub mod limits {
    /// The smallest and largest budget a request may ask for: below 100
    /// characters (25 tokens) not even one line fits; above 50,000 a
    /// briefing is no longer a briefing.
    pub const MIN_BUDGET_CHARS: usize = 100;
    pub const MAX_BUDGET_CHARS: usize = 50_000;
    /// Lessons or warnings one briefing may be asked for.
    pub const MAX_ITEMS: usize = 20;
    /// Cited files a briefing may name as missing.
    pub const MAX_MISSING_FILES: usize = 5_000;
    /// Failures a hook may name as given at the call, and their length.
    pub const MAX_AT_CALL: usize = 200;
    pub const MAX_AT_CALL_CHARS: usize = 500;
    /// The task a briefing is for: its title, description, files (each a
    /// path), category and labels.
    pub const MAX_TITLE_CHARS: usize = 512;
    pub const MAX_DESCRIPTION_CHARS: usize = 8_000;
    pub const MAX_FILES: usize = 200;
    pub const MAX_PATH_CHARS: usize = 1_024;
    pub const MAX_LABELS: usize = 20;
    pub const MAX_NAME_CHARS: usize = 128;
    /// Failures earlier sessions hit that a hook may send.
    pub const MAX_FREQUENT_FAILURES: usize = 10;
}

use limits::{MAX_BUDGET_CHARS, MAX_ITEMS, MAX_MISSING_FILES, MIN_BUDGET_CHARS};

/// `[briefing]` settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BriefingConfig {
    /// Size of a briefing's markdown when the request does not say.
    pub budget_chars: usize,
    /// A lesson found by meaning alone (no word of the task in it) is shown
    /// only when its embedding is at least this similar to the task's;
    /// nearest neighbours of an unrelated task are noise to a model.
    pub min_semantic_similarity: f64,
    /// What one session is given in total, in characters (briefings and
    /// reads together, ~4 characters a token). Past it, a briefing shows
    /// only new reviewed items of high relevance: a long
    /// session is not fed the same context at every prompt.
    pub session_budget_chars: usize,
    /// What an item must be worth to be said: the chance this run hits
    /// what it tells of, times its value (`lore_calls::select`). Below it,
    /// silence.
    pub min_worth: f64,
}

impl Default for BriefingConfig {
    fn default() -> Self {
        Self {
            budget_chars: 4_000,
            min_semantic_similarity: 0.3,
            session_budget_chars: 40_000,
            min_worth: lore_calls::select::MIN_WORTH,
        }
    }
}

impl BriefingConfig {
    pub fn check(&self) -> Result<(), String> {
        if !(MIN_BUDGET_CHARS..=MAX_BUDGET_CHARS).contains(&self.budget_chars) {
            return Err(format!("briefing.budget_chars must be {MIN_BUDGET_CHARS} to {MAX_BUDGET_CHARS}"));
        }
        if !(0.0..=1.0).contains(&self.min_semantic_similarity) {
            return Err("briefing.min_semantic_similarity must be 0 to 1".into());
        }
        if !(0.0..=2.0).contains(&self.min_worth) {
            return Err("briefing.min_worth must be 0 to 2".into());
        }
        if self.session_budget_chars < MIN_BUDGET_CHARS {
            return Err(format!("briefing.session_budget_chars must be at least {MIN_BUDGET_CHARS}"));
        }
        Ok(())
    }
}

/// What the agent is about to do; every field may be empty.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BriefTask {
    pub task_id: Option<String>,
    pub title: String,
    pub description: String,
    pub files: Vec<String>,
    pub category: String,
    pub labels: Vec<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct BriefRequest {
    pub project: String,
    /// Required unless `session_id` names a stored session.
    pub agent_id: Option<String>,
    pub session_id: Option<Uuid>,
    pub task: BriefTask,
    /// `None`: the configured budget.
    pub budget_chars: Option<usize>,
    pub max_lessons: usize,
    pub max_warnings: usize,
    pub omit_given: bool,
    /// Say nothing of where the last session stopped (a briefing in the
    /// middle of a session).
    pub omit_last_session: bool,
    /// Session start, prompt, or another briefing.
    pub surface: Surface,
    /// Cited files gone from the agent's checkout.
    pub missing_files: Vec<String>,
    /// Failures the agent's hooks warn of at the call, by template: their
    /// QA warnings belong to that call, not to the briefing.
    pub at_call: Vec<String>,
    /// Failures many recent sessions hit that no call is warned of, as the
    /// agent's hooks counted them: the briefing names them.
    pub frequent_failures: Vec<FrequentFailure>,
}

/// A failure many of a project's recent sessions hit, as the agent's hooks
/// counted it (tool output: data).
#[derive(Debug, Clone, PartialEq)]
pub struct FrequentFailure {
    pub failure: String,
    pub sessions: u32,
    pub of_sessions: u32,
    /// The chance this session hits it, as the hooks estimated it
    /// (`lore_calls::CallMemory::chance`).
    pub chance: f64,
}

/// A lesson as a briefing shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct Lesson {
    pub hit: Hit,
    /// Why it matched, in words.
    pub why: String,
    /// Pooled over its solutions: successful / applied.
    pub success_rate: f64,
    pub times_applied: i64,
}

impl Lesson {
    fn of(hit: Hit) -> Self {
        let times_applied: i64 = hit.entry.solutions.iter().map(|solution| solution.times_applied).sum();
        let times_successful: i64 = hit.entry.solutions.iter().map(|solution| solution.times_successful).sum();
        let success_rate = if times_applied == 0 { 0.0 } else { times_successful as f64 / times_applied as f64 };
        Self { why: why_matched(&hit), hit, success_rate, times_applied }
    }

    /// How to see all of it: by key when it has one, else by id.
    pub fn handle(&self) -> String {
        self.hit.entry.key.clone().unwrap_or_else(|| self.hit.entry.entry_id.to_string())
    }

    /// The CLI command and the MCP tool call that show the whole entry.
    pub fn expand(&self) -> String {
        format!(
            "get_lesson {{\"entry\": \"{}\"}} or `lore entry show {} --project {}`",
            self.handle(),
            self.handle(),
            self.hit.entry.project
        )
    }
}

/// What Brief answers.
#[derive(Debug, Clone, PartialEq)]
pub struct Briefing {
    pub briefing_id: Uuid,
    pub last_session: Option<ResumeSummary>,
    pub lessons: Vec<Lesson>,
    pub warnings: Vec<Warning>,
    pub warnings_held_out: bool,
    pub markdown: String,
    pub omitted_for_budget: usize,
    pub omitted_as_given: usize,
    pub omitted_as_stale: usize,
    pub omitted_for_session_budget: usize,
    /// QA warnings left out because the hooks give them at the call.
    pub omitted_for_call: usize,
    /// What the session was given before this briefing.
    pub session_chars_before: usize,
    pub degraded: Option<String>,
    /// The similar past sessions it tells of.
    pub similar_sessions: Vec<SimilarSession>,
    /// The hot areas among the task's files it names.
    pub hot_spots: Vec<HotSpot>,
}

/// What a Resume sends after the recent actions.
#[derive(Debug, Clone, PartialEq)]
pub struct Related {
    pub lessons: Vec<Hit>,
    pub warnings: Vec<Warning>,
}

/// One event of a Resume stream: the action log's, or a learning or warning
/// for the work in progress, sent after the recent actions.
#[derive(Debug, Clone, PartialEq)]
pub enum ResumeItem {
    Log(ResumeEvent),
    Learning(Box<Hit>),
    Warning(Box<Warning>),
}

/// Builds briefings over the three services' domains.
#[derive(Debug, Clone)]
pub struct Briefer {
    actions: ActionLog,
    knowledge: KnowledgeBase,
    qa: QaLearning,
    ledger: InjectionLedger,
    config: BriefingConfig,
}

impl Briefer {
    pub fn new(
        actions: ActionLog,
        knowledge: KnowledgeBase,
        qa: QaLearning,
        ledger: InjectionLedger,
        config: BriefingConfig,
    ) -> Self {
        Self { actions, knowledge, qa, ledger, config }
    }

    pub fn ledger(&self) -> &InjectionLedger {
        &self.ledger
    }

    /// The files the project's lessons and warnings cite, for a hook to
    /// check against its checkout (most recently written first).
    pub async fn cited_files(&self, scope: &ProjectScope, project: &str) -> Result<Vec<String>, Error> {
        scope.require(project)?;
        lore_store::briefing::cited_files::list(self.actions.pool(), scope, project, MAX_MISSING_FILES as i64).await
    }

    pub async fn brief(&self, scope: &ProjectScope, request: &BriefRequest) -> Result<Briefing, Error> {
        scope.require(&request.project)?;
        let task_id = request.task.task_id.clone().unwrap_or_else(|| default_task_id(request));
        // Room for what the session's record and its checkout may leave out.
        let filtering = request.omit_given || !request.missing_files.is_empty() || !request.at_call.is_empty();
        let warning_request = warning_request(request, &task_id, filtering);
        let lessons_wanted = if filtering { MAX_ITEMS * 2 } else { request.max_lessons * 2 };
        let Gathered { last_session, hits, degraded, chosen, given, hot_spots, mut similar } =
            self.gather(scope, request, &warning_request, lessons_wanted).await?;

        let remaining = self.config.session_budget_chars.saturating_sub(given.chars);
        let gate = Gate::of(request, &given, remaining);
        let mut withheld: Vec<InjectedItem> = Vec::new();
        let last_session = match last_session {
            Some(summary) if !request.omit_last_session => {
                self.admit_last_session(summary, &gate, &mut withheld).await?
            }
            _ => None,
        };
        // The last session is told where it stopped; as a similar session
        // it would be told twice.
        if let Some(last) = &last_session {
            similar.retain(|past| past.session_id != last.session.session_id);
        }
        let lessons = admit(hits.into_iter().map(Lesson::of), request.max_lessons, &mut withheld, |lesson, best| {
            gate.lesson(lesson, best)
                .map(|why| injections::hit_item(&lesson.hit, Some(&lesson.why), None).withheld(why))
        });
        let warnings = admit(chosen.warnings, request.max_warnings, &mut withheld, |warning, best| {
            gate.warning(warning, best).map(|why| injections::warning_item(warning, None).withheld(why))
        });
        let shown_warnings: &[Warning] = if chosen.held_out { &[] } else { &warnings };
        let budget = gate.budget(request.budget_chars.unwrap_or(self.config.budget_chars), remaining);
        let (frequent, mut held_frequent) =
            frequent::screened(self.knowledge.screening(), &request.project, &request.frequent_failures);
        withheld.append(&mut held_frequent);
        // A search without a provider configured is how this server runs,
        // not something it could not read.
        let failed_search = degraded.as_deref().filter(|_| self.knowledge.embedder().is_some());
        let left_out = left_out(chosen.held_out && !warnings.is_empty(), failed_search);
        let contents = render::Contents::now(last_session.as_ref(), &lessons, shown_warnings)
            .with_history(&hot_spots, &similar)
            .with_frequent(&frequent)
            .with_left_out(&left_out)
            .with_min_worth(self.config.min_worth);
        let rendered = render::render(&contents, budget);
        let briefing_id = Uuid::now_v7();
        let mut items = rendered_items(last_session.as_ref(), &lessons, &warnings, chosen.held_out, &rendered);
        items.extend(history_items(&request.project, &similar, &frequent, &rendered));
        let similar_sessions = pick(similar, &rendered.similar);
        let hot_spots = pick(hot_spots, &rendered.hot_spots);
        let [omitted_as_given, omitted_as_stale, omitted_for_session_budget, omitted_for_call] =
            withheld_counts(&withheld);
        items.append(&mut withheld);
        let lessons: Vec<Lesson> = pick(lessons, &rendered.lessons);
        let shown: Vec<Warning> = pick(shown_warnings.to_vec(), &rendered.warnings);
        // Held out: the warnings chosen are recorded as held out, so the
        // comparison has its control group; shown: what the model saw.
        let delivered = if chosen.held_out { warnings } else { shown.clone() };
        let injection = injection(request, briefing_id, task_id, &rendered.markdown, items);
        let deliveries = crate::qa::warnings::Warnings { warnings: delivered, held_out: chosen.held_out };
        self.record(&injection, &warning_request, &deliveries).await?;
        Ok(Briefing {
            briefing_id,
            last_session,
            lessons,
            warnings: shown,
            warnings_held_out: chosen.held_out,
            markdown: rendered.markdown,
            omitted_for_budget: rendered.omitted,
            omitted_as_given,
            omitted_as_stale,
            omitted_for_session_budget,
            omitted_for_call,
            session_chars_before: given.chars,
            degraded,
            similar_sessions,
            hot_spots,
        })
    }

    /// What the briefing gave (the ledger) and which warnings it delivered
    /// (their outcomes are scored later), side by side.
    async fn record(
        &self,
        injection: &Injection,
        warning_request: &WarningRequest,
        deliveries: &crate::qa::warnings::Warnings,
    ) -> Result<(), Error> {
        let (recorded, delivered) =
            tokio::join!(self.ledger.record(injection), self.qa.record_deliveries(warning_request, deliveries));
        recorded?;
        delivered.map(drop)
    }

    /// What a briefing reads, side by side: the last session, the lessons
    /// for the task (or for where the last session stopped), the warnings,
    /// and what the session was already given.
    async fn gather(
        &self,
        scope: &ProjectScope,
        request: &BriefRequest,
        warning_request: &WarningRequest,
        lessons_wanted: usize,
    ) -> Result<Gathered, Error> {
        let session_and_lessons = async {
            match task_query(&request.task) {
                Some(text) if request.omit_last_session => {
                    Ok::<_, Error>((None, self.lessons(scope, &request.project, &text, lessons_wanted).await?))
                }
                Some(text) => {
                    let (last, found) = tokio::join!(
                        self.last_session(scope, request),
                        self.lessons(scope, &request.project, &text, lessons_wanted)
                    );
                    Ok((last?, found?))
                }
                None => {
                    let last = self.last_session(scope, request).await?;
                    let found = match last.as_ref().and_then(summary_query) {
                        Some(text) => self.lessons(scope, &request.project, &text, lessons_wanted).await?,
                        None => (Vec::new(), None),
                    };
                    Ok((last, found))
                }
            }
        };
        let given = async {
            match request.session_id {
                Some(session_id) => self.ledger.given(&request.project, session_id).await,
                None => Ok(Given::default()),
            }
        };
        // The hot areas among the task's files, and, where the agent starts
        // on a task (not at each prompt), what happened in similar sessions.
        let hot_spots = self.qa.hot_areas_of(scope, &request.project, &request.task.files);
        let similar = async {
            if request.omit_last_session {
                return Ok(Vec::new());
            }
            let text = format!("{} {}", request.task.title, request.task.description);
            similar::find(self.actions.pool(), scope, &request.project, request.session_id, &text, &request.task.files)
                .await
        };
        let (session_and_lessons, chosen, given, hot_spots, similar) = tokio::join!(
            session_and_lessons,
            self.qa.choose_warnings(scope, warning_request),
            given,
            hot_spots,
            similar
        );
        let (last_session, (hits, degraded)) = session_and_lessons?;
        Ok(Gathered {
            last_session,
            hits,
            degraded,
            chosen: chosen?,
            given: given?,
            hot_spots: hot_spots?,
            similar: similar?,
        })
    }

    /// The last session as the briefing shows it: its held parts withheld,
    /// and itself withheld past the session's budget.
    async fn admit_last_session(
        &self,
        summary: ResumeSummary,
        gate: &Gate<'_>,
        withheld: &mut Vec<InjectedItem>,
    ) -> Result<Option<ResumeSummary>, Error> {
        let (mut summary, held) = screened::summary(self.actions.pool(), self.knowledge.screening(), summary).await?;
        for part in held {
            withheld.push(last_session_item(&summary, &part, 0).withheld(Withheld::Quarantined));
        }
        for part in screened::without_written_words(&mut summary) {
            withheld.push(last_session_item(&summary, part, 0).withheld(Withheld::Unreviewed));
        }
        if gate.past_budget {
            withheld.push(last_session_item(&summary, "", 0).withheld(Withheld::SessionBudget));
            return Ok(None);
        }
        Ok(Some(summary))
    }

    /// A Resume stream (see [`ActionLog::resume`]) with the learnings and
    /// warnings for the session's unfinished work just before `caught_up`.
    /// An agent `reader` reads the summary without the words its agent
    /// wrote ([`screened::without_written_words`]); a person reads them.
    pub fn resume(
        &self,
        scope: ProjectScope,
        session: Session,
        agent_filter: Option<String>,
        recent: usize,
        follow: bool,
        reader: Author,
    ) -> impl futures_util::Stream<Item = Result<ResumeItem, Error>> + Send + 'static {
        let briefer = self.clone();
        let events = self.actions.resume(scope.clone(), session, agent_filter, recent, follow);
        let pool = self.actions.pool().clone();
        let screening = self.knowledge.screening().clone();
        async_stream::try_stream! {
            futures_util::pin_mut!(events);
            let mut summary = None;
            while let Some(event) = futures_util::StreamExt::next(&mut events).await {
                // What the agents wrote reaches the resuming agent screened.
                let event = match event? {
                    ResumeEvent::Summary(opening) => {
                        let mut opening = screened::summary(&pool, &screening, *opening).await?.0;
                        if reader != Author::Person {
                            screened::without_written_words(&mut opening);
                        }
                        ResumeEvent::Summary(Box::new(opening))
                    }
                    ResumeEvent::Action(action) => {
                        let mut action = screened::action(&pool, &screening, *action).await?;
                        if reader != Author::Person {
                            screened::action_without_written_words(&mut action);
                        }
                        ResumeEvent::Action(Box::new(action))
                    }
                    other => other,
                };
                match &event {
                    ResumeEvent::Summary(opening) => summary = Some(opening.clone()),
                    ResumeEvent::CaughtUp(_) => {
                        if let Some(opening) = summary.take() {
                            let related = briefer.related(&scope, &opening).await?;
                            for lesson in related.lessons {
                                yield ResumeItem::Learning(Box::new(lesson));
                            }
                            for warning in related.warnings {
                                yield ResumeItem::Warning(Box::new(warning));
                            }
                        }
                    }
                    _ => {}
                }
                yield ResumeItem::Log(event);
            }
        }
    }

    /// The lessons and warnings a Resume of `summary`'s session sends after
    /// its recent actions: those for its unfinished work, recorded against
    /// the session like a briefing's.
    pub async fn related(&self, scope: &ProjectScope, summary: &ResumeSummary) -> Result<Related, Error> {
        let session = &summary.session;
        let Some(text) = summary_query(summary) else {
            return Ok(Related { lessons: Vec::new(), warnings: Vec::new() });
        };
        let task_id = summary.active_epic_id.clone().unwrap_or_else(|| format!("session:{}", session.session_id));
        let warning_request = WarningRequest {
            project: session.project.clone(),
            task: Task { task_id: task_id.clone(), title: text.clone(), ..Task::default() },
            session_id: Some(session.session_id),
            limit: RESUME_WARNINGS,
        };
        let (found, chosen) = tokio::join!(
            self.lessons(scope, &session.project, &text, RESUME_LESSONS),
            self.qa.choose_warnings(scope, &warning_request)
        );
        let ((lessons, _), chosen) = (found?, chosen?);
        // An agent's written lesson waits for a person, here as in a briefing.
        let (lessons, unreviewed): (Vec<Hit>, Vec<Hit>) =
            lessons.into_iter().take(RESUME_LESSONS).partition(|hit| hit.entry.trust.speaks());
        let shown: Vec<Warning> = if chosen.held_out { Vec::new() } else { chosen.warnings.clone() };
        let mut items: Vec<InjectedItem> =
            lessons.iter().map(|hit| injections::hit_item(hit, Some(&why_matched(hit)), None)).collect();
        items.extend(
            unreviewed
                .iter()
                .map(|hit| injections::hit_item(hit, Some(&why_matched(hit)), None).withheld(Withheld::Unreviewed)),
        );
        items.extend(chosen.warnings.iter().map(|warning| {
            let item = injections::warning_item(warning, None);
            if chosen.held_out { item.withheld(Withheld::HeldOut) } else { item }
        }));
        let mut injection = Injection::read(&session.project, session.session_id, Surface::Resume, items);
        injection.agent_id = session.agent_id.clone();
        injection.task_id = task_id.clone();
        let (recorded, delivered) =
            tokio::join!(self.ledger.record(&injection), self.qa.record_deliveries(&warning_request, &chosen));
        recorded?;
        delivered?;
        Ok(Related { lessons, warnings: shown })
    }

    /// Where the agent stopped: the briefing's own session when it left
    /// work unfinished (a resumed or compacted agent session, whose model
    /// lost the context), else the agent's previous session.
    async fn last_session(&self, scope: &ProjectScope, request: &BriefRequest) -> Result<Option<ResumeSummary>, Error> {
        let mut agent_id = request.agent_id.clone();
        if let Some(session_id) = request.session_id {
            match self.actions.session(scope, session_id).await {
                Ok(session) if session.action_count > 0 => {
                    agent_id = agent_id.or_else(|| Some(session.agent_id.clone()));
                    let current = self.actions.summary(scope, session).await?;
                    if !current.work_in_progress.is_empty() {
                        return Ok(Some(current));
                    }
                }
                Ok(session) => agent_id = agent_id.or(Some(session.agent_id)),
                // Not shipped yet by a sidecar, or never started.
                Err(Error::NotFound(_)) => {}
                Err(error) => return Err(error),
            }
        }
        let Some(agent_id) = agent_id else { return Ok(None) };
        match self.actions.previous_session(scope, &request.project, &agent_id, request.session_id).await? {
            Some(session) => self.actions.summary(scope, session).await.map(Some),
            None => Ok(None),
        }
    }

    /// Hybrid search for `text`, keeping the hits that matched for a reason
    /// a model would accept; and why search degraded, if it did.
    async fn lessons(
        &self,
        scope: &ProjectScope,
        project: &str,
        text: &str,
        limit: usize,
    ) -> Result<(Vec<Hit>, Option<String>), Error> {
        let query = SearchQuery {
            filter: SearchFilter { project: project.to_owned(), ..SearchFilter::default() },
            text: text.to_owned(),
            limit: limit.clamp(1, 100),
            min_similarity: None,
            mode: SearchMode::Hybrid,
            category: None,
        };
        let outcome = self.knowledge.search(scope, &query).await?;
        let floor = self.config.min_semantic_similarity;
        let hits = outcome.hits.into_iter().filter(|hit| matched_enough(hit, floor)).collect();
        Ok((hits, outcome.degraded))
    }
}

/// The warnings a briefing asks QA for: the task's, and more than it shows
/// when some may be left out for the session.
fn warning_request(request: &BriefRequest, task_id: &str, filtering: bool) -> WarningRequest {
    WarningRequest {
        project: request.project.clone(),
        task: Task {
            task_id: task_id.to_owned(),
            title: request.task.title.clone(),
            category: request.task.category.clone(),
            files: request.task.files.clone(),
            description: request.task.description.clone(),
        },
        session_id: request.session_id,
        limit: if filtering { MAX_ITEMS } else { request.max_warnings },
    }
}

/// How many items were withheld as already given, as stale, for the
/// session's budget and because the hooks warn of them at the call.
fn withheld_counts(withheld: &[InjectedItem]) -> [usize; 4] {
    [Withheld::AlreadyGiven, Withheld::Stale, Withheld::SessionBudget, Withheld::AtCall]
        .map(|why| withheld.iter().filter(|item| item.withheld == Some(why)).count())
}

/// The ledger's record of a briefing: what it put into the agent's context.
fn injection(
    request: &BriefRequest,
    briefing_id: Uuid,
    task_id: String,
    markdown: &str,
    items: Vec<InjectedItem>,
) -> Injection {
    Injection {
        injection_id: briefing_id,
        project: request.project.clone(),
        session_id: request.session_id,
        agent_id: request.agent_id.clone().unwrap_or_default(),
        task_id,
        surface: request.surface,
        chars: markdown.chars().count(),
        items,
        created_at: None,
    }
}

/// What a briefing read before choosing what to show.
struct Gathered {
    last_session: Option<ResumeSummary>,
    hits: Vec<Hit>,
    degraded: Option<String>,
    chosen: crate::qa::warnings::Warnings,
    given: Given,
    hot_spots: Vec<HotSpot>,
    similar: Vec<SimilarSession>,
}

/// The first `max` of `items` the gate lets through, in order; what it
/// holds back goes to `withheld` with why (the best item is judged as
/// such).
fn admit<T>(
    items: impl IntoIterator<Item = T>,
    max: usize,
    withheld: &mut Vec<InjectedItem>,
    held: impl Fn(&T, bool) -> Option<InjectedItem>,
) -> Vec<T> {
    let mut admitted = Vec::new();
    for (rank, item) in items.into_iter().enumerate() {
        if admitted.len() >= max {
            break;
        }
        match held(&item, rank == 0) {
            Some(item) => withheld.push(item),
            None => admitted.push(item),
        }
    }
    admitted
}

/// What decides, before rendering, whether a lesson or warning may be
/// shown to this session.
struct Gate<'a> {
    /// Files the agent's checkout does not hold.
    missing: HashSet<&'a str>,
    /// Templates of failures the hooks warn of at the call.
    at_call: HashSet<&'a str>,
    given: &'a Given,
    omit_given: bool,
    past_budget: bool,
    /// The briefing belongs to a session, whose budget it spends.
    in_session: bool,
}

impl<'a> Gate<'a> {
    /// The request's gate: what the checkout lacks, what the hooks warn of
    /// at the call, what the session was given, and whether the session's
    /// budget is spent (`remaining` of it left).
    fn of(request: &'a BriefRequest, given: &'a Given, remaining: usize) -> Self {
        Gate {
            missing: request.missing_files.iter().map(String::as_str).collect(),
            at_call: request.at_call.iter().map(String::as_str).collect(),
            given,
            omit_given: request.omit_given,
            past_budget: request.session_id.is_some() && remaining < SESSION_SPENT_BELOW_CHARS,
            in_session: request.session_id.is_some(),
        }
    }

    /// The briefing's budget: what was `asked`, and no more than the
    /// session has `remaining` while the session's budget is not spent.
    fn budget(&self, asked: usize, remaining: usize) -> usize {
        if self.in_session && !self.past_budget { asked.min(remaining) } else { asked }
    }

    /// `best`: the task's best match. Past the session budget a lesson
    /// must be highly relevant or the best match: a fresh entry has no
    /// vector yet, and one signal alone never makes "high".
    fn lesson(&self, lesson: &Lesson, best: bool) -> Option<Withheld> {
        let entry = &lesson.hit.entry;
        if !entry.trust.speaks() {
            return Some(Withheld::Unreviewed);
        }
        // A pattern's gotcha says its failure again.
        let given = self.given.entries.contains(&entry.entry_id)
            || crate::qa::fixes::gotcha_pattern(entry).is_some_and(|pattern| self.given.patterns.contains(&pattern));
        let high = best || lesson.hit.relevance == Relevance::High;
        self.why_not(&entry.cited_files, given, high)
    }

    fn warning(&self, warning: &Warning, best: bool) -> Option<Withheld> {
        let given = self.given.patterns.contains(&warning.pattern_id);
        let speaks = warning.fix_trust.is_some_and(|trust| trust.speaks());
        let high = best || warning.relevance >= HIGH_RELEVANCE;
        if !is_stale(&warning.cited_files, &self.missing) && self.at_call.contains(warning.template.as_str()) {
            return Some(Withheld::AtCall);
        }
        self.why_not(&warning.cited_files, given, speaks && high)
    }

    fn why_not(&self, cited_files: &[String], given: bool, trusted_and_high: bool) -> Option<Withheld> {
        if is_stale(cited_files, &self.missing) {
            Some(Withheld::Stale)
        } else if given && self.omit_given {
            Some(Withheld::AlreadyGiven)
        } else if self.past_budget && (given || !trusted_and_high) {
            Some(Withheld::SessionBudget)
        } else {
            None
        }
    }
}

/// An item citing files, every one of which is gone from the checkout.
fn is_stale(cited_files: &[String], missing: &HashSet<&str>) -> bool {
    !cited_files.is_empty() && cited_files.iter().all(|file| missing.contains(file.as_str()))
}

/// The ledger's record of the last session's lines (`part`: a part of it
/// the screen held).
fn last_session_item(summary: &ResumeSummary, part: &str, chars: usize) -> InjectedItem {
    let session = &summary.session;
    let short: String = session.session_id.simple().to_string().chars().take(8).collect();
    let label = if part.is_empty() { format!("session {short}") } else { format!("session {short}: {part}") };
    InjectedItem {
        kind: injections::ItemKind::LastSession,
        item_id: session.session_id,
        label,
        trust: Some(lore_types::trust::Trust::Observed),
        chars,
        score: 1.0,
        score_parts: Default::default(),
        why: "where the agent's last session stopped".to_owned(),
        withheld: None,
    }
}

/// The items of the similar sessions and frequent failures a briefing
/// rendered, and of those the budget left out.
fn history_items(
    project: &str,
    similar: &[SimilarSession],
    frequent: &[FrequentFailure],
    rendered: &render::Rendered,
) -> Vec<InjectedItem> {
    let shown_if = |item: InjectedItem, shown: bool| if shown { item } else { item.withheld(Withheld::OverBudget) };
    let similar = similar.iter().enumerate().map(|(index, session)| {
        shown_if(similar_session_item(session, rendered.similar_chars[index]), rendered.similar.contains(&index))
    });
    let frequent = frequent.iter().enumerate().map(|(index, failure)| {
        shown_if(frequent::item(project, failure, rendered.frequent_chars[index]), rendered.frequent.contains(&index))
    });
    similar.chain(frequent).collect()
}

fn similar_session_item(session: &SimilarSession, chars: usize) -> InjectedItem {
    let short: String = session.session_id.simple().to_string().chars().take(8).collect();
    InjectedItem {
        kind: injections::ItemKind::SimilarSession,
        item_id: session.session_id,
        label: format!("session {short}"),
        trust: Some(lore_types::trust::Trust::Observed),
        chars,
        score: session.score,
        score_parts: Default::default(),
        why: "a past session like the task, by its files and text".to_owned(),
        withheld: None,
    }
}

/// The ledger's items for what went to rendering: shown with what its block
/// took, or over the briefing's budget.
fn rendered_items(
    last_session: Option<&ResumeSummary>,
    lessons: &[Lesson],
    warnings: &[Warning],
    held_out: bool,
    rendered: &render::Rendered,
) -> Vec<InjectedItem> {
    let mut items = Vec::new();
    if let Some(summary) = last_session {
        let item = last_session_item(summary, "", rendered.session_chars);
        items.push(if rendered.session_chars > 0 { item } else { item.withheld(Withheld::OverBudget) });
    }
    for (index, lesson) in lessons.iter().enumerate() {
        let item = injections::hit_item(&lesson.hit, Some(&lesson.why), Some(rendered.lesson_chars[index]));
        items.push(if rendered.lessons.contains(&index) { item } else { item.withheld(Withheld::OverBudget) });
    }
    for (index, warning) in warnings.iter().enumerate() {
        let chars = rendered.warning_chars.get(index).copied();
        let item = injections::warning_item(warning, chars);
        items.push(match () {
            _ if held_out => item.withheld(Withheld::HeldOut),
            _ if rendered.warnings.contains(&index) => item,
            _ => item.withheld(Withheld::OverBudget),
        });
    }
    items
}

/// A matched symptom is quoted up to this many characters.
const SYMPTOM_CHARS: usize = 120;

/// A hit found by the task's words, or close enough in meaning.
fn matched_enough(hit: &Hit, min_semantic_similarity: f64) -> bool {
    hit.reasons.iter().any(|reason| match reason.signal {
        Signal::Keyword | Signal::Fuzzy | Signal::Symptom => true,
        Signal::Semantic => reason.score >= min_semantic_similarity,
    })
}

/// The warnings of a briefing without a task id are delivered against its
/// session, so an agent session counts as one task.
fn default_task_id(request: &BriefRequest) -> String {
    match (request.session_id, &request.agent_id) {
        (Some(session_id), _) => format!("session:{session_id}"),
        (None, Some(agent_id)) => format!("agent:{agent_id}"),
        (None, None) => "briefing".to_owned(),
    }
}

/// The task's words: title, labels, category, the start of the
/// description and the names of its files. `None` when it has none.
fn task_query(task: &BriefTask) -> Option<String> {
    let file_names = task.files.iter().take(QUERY_FILES).filter_map(|file| {
        let name = file.rsplit(['/', '\\']).next()?;
        let stem = name.split('.').next().unwrap_or(name);
        (!stem.is_empty()).then_some(stem)
    });
    let parts: Vec<&str> = [task.title.as_str(), task.category.as_str()]
        .into_iter()
        .chain(task.labels.iter().map(String::as_str))
        .chain([task.description.as_str()])
        .chain(file_names)
        .map(str::trim)
        .filter(|part| !part.is_empty())
        .collect();
    bounded_query(&parts.join("\n"))
}

/// What the session left unfinished, as a query; `None` when nothing.
fn summary_query(summary: &ResumeSummary) -> Option<String> {
    let parts: Vec<&str> =
        summary.work_in_progress.iter().take(QUERY_WORK_ITEMS).map(|item| item.description.as_str()).collect();
    bounded_query(&parts.join("\n"))
}

fn bounded_query(text: &str) -> Option<String> {
    let text = text.trim();
    if text.is_empty() {
        return None;
    }
    Some(match text.char_indices().nth(MAX_QUERY_CHARS) {
        Some((cut, _)) => text[..cut].to_owned(),
        None => text.to_owned(),
    })
}

/// Why a hit matched, in words a model reads: the words it shares with the
/// task, and how close it is in meaning.
fn why_matched(hit: &Hit) -> String {
    let mut words: Vec<&str> = Vec::new();
    let mut parts: Vec<String> = Vec::new();
    for reason in &hit.reasons {
        match reason.signal {
            Signal::Keyword | Signal::Fuzzy => {
                for term in &reason.matched_terms {
                    if !words.contains(&term.as_str()) {
                        words.push(term);
                    }
                }
            }
            Signal::Semantic => parts.push(format!("close in meaning ({:.2})", reason.score)),
            Signal::Symptom => {
                for symptom in &reason.matched_terms {
                    let symptom: String = render::one_line(symptom).chars().take(SYMPTOM_CHARS).collect();
                    parts.push(format!("shows the known error {}", lore_screen::fence::quoted(&symptom)));
                }
            }
        }
    }
    if !words.is_empty() {
        let quoted: Vec<String> = words.iter().take(6).map(|word| format!("\"{word}\"")).collect();
        parts.insert(0, format!("shares {}", quoted.join(", ")));
    }
    if parts.is_empty() { "ranked by the fused search".to_owned() } else { parts.join("; ") }
}

/// The items at `indices` (ascending), in that order.
fn pick<T>(items: Vec<T>, indices: &[usize]) -> Vec<T> {
    let wanted: HashSet<usize> = indices.iter().copied().collect();
    items.into_iter().enumerate().filter(|(index, _)| wanted.contains(index)).map(|(_, item)| item).collect()
}

/// What a briefing says it leaves out. A task in the control group gets no
/// warnings (that is how their effect is measured); a briefing that said
/// nothing of the warnings it held back would read as "nothing is known to
/// fail here". Said only when some were held back: their text stays out,
/// and a task with none to hold back reads as it always did.
fn left_out(warnings_held_back: bool, search_degraded: Option<&str>) -> Vec<String> {
    let mut notes = Vec::new();
    if warnings_held_back {
        notes.push(
            "QA warnings that match this task are held back (the control group, qa.holdout_fraction): \
             their absence does not mean nothing is known to fail."
                .to_owned(),
        );
    }
    if let Some(reason) = search_degraded {
        notes.push(format!("Lessons were found by keyword alone: the query could not be embedded ({reason})."));
    }
    notes
}

#[cfg(test)]
mod tests;
