//! CaptureFailure: one transaction stores the failure, categorizes it, and
//! links each of its messages to a pattern, saying why.
//!
//! A message is a tool's output, and a tool's output can carry text aimed
//! at the next agent: each message and its template pass the injection
//! screen first. A held message stays in the stored failure but joins no
//! pattern (so it can reach no warning) until a person releases it, when
//! [`QaLearning::group_released_message`] groups it as a capture would
//! have.

use lore_grouping::masks::Masks;
use uuid::Uuid;

use super::QaLearning;
use super::category;
use super::grouping::{Match, best_match};
use super::routes::CheckedOutRoute;
use super::template::{Template, WILDCARD};
use crate::Error;
use crate::screening::Screening;
use lore_store::qa::{self as store, capture::Counting, capture::Sighting, routes::RouteCandidate};
use lore_types::qa::{CaptureOutcome, NewFailure, PatternLink};
use lore_types::scope::ProjectScope;
use lore_types::trust::Held;
use lore_types::trust::quarantine::ItemKind;

pub const REASON_NEW: &str = "new candidate";
pub const REASON_EXACT: &str = "exact template";
/// A generated pattern name is cut near this many characters.
const NAME_CHARS: usize = 120;

/// Each message's template, and what the screen holds of it: the message as
/// printed, and its template as a briefing shows it (a held part is named
/// by the message's index).
pub fn screen_messages(
    messages: &[String],
    masks: &Masks,
    screening: &Screening,
    project: &str,
) -> (Vec<Template>, Vec<Option<Held>>) {
    let templates: Vec<Template> = messages.iter().map(|message| Template::of_masked(message, masks)).collect();
    let held = messages
        .iter()
        .zip(&templates)
        .enumerate()
        .map(|(index, (message, template))| {
            let template = template.text();
            screening
                .screen(project, [("message".to_owned(), message.as_str()), ("template".to_owned(), &*template)])
                .map(|held| Held { part: index.to_string(), ..held })
        })
        .collect();
    (templates, held)
}

impl QaLearning {
    /// Captures a failure. A replay of a stored `failure_id` answers with
    /// what the first capture decided and stores nothing.
    pub async fn capture(&self, scope: &ProjectScope, failure: NewFailure) -> Result<CaptureOutcome, Error> {
        scope.require(&failure.project)?;
        let failure = self.sanitized(failure);
        let messages = failure.grouped_messages();

        let mut transaction = self.pool.begin().await?;
        let masks = self.ensure_project_with_masks(&mut transaction, &failure.project).await?;
        let (templates, held) = screen_messages(&messages, &masks, self.screening(), &failure.project);
        let rules = category::in_force(store::category::category_rules(&mut transaction, &failure.project).await?);
        let (category, rule) = self.rules.categorize(&rules, &failure.failed_checks, &messages);
        let rule_id = rule.map(|rule| rule.rule_id.clone());
        if !store::capture::insert_failure(&mut transaction, &failure, &category, rule_id.as_deref()).await? {
            transaction.rollback().await?;
            return self.replayed(scope, failure.failure_id).await;
        }
        for held in held.iter().flatten() {
            let kind = ItemKind::FailureMessage;
            lore_store::trust::quarantine::hold(
                &mut transaction,
                &failure.project,
                kind,
                failure.failure_id,
                held,
                &failure.origin,
            )
            .await?;
        }
        // Learning off: the failure is stored, its messages join no pattern.
        let learning = self.switches.learning();
        let grouped = |index: &usize| learning && held[*index].is_none();
        let mut route_names: Vec<String> =
            (0..templates.len()).filter(grouped).map(|index| templates[index].route()).collect();
        route_names.sort();
        route_names.dedup();
        let route_keys: Vec<String> =
            route_names.iter().map(|route| route_key(&failure.project, &category, route)).collect();
        store::routes::lock_routes(&mut transaction, &route_keys).await?;
        let mut routes = self.routes.check_out(&mut transaction, &failure.project, &category, &route_names).await?;

        let mut links = Vec::with_capacity(messages.len());
        for (index, (message, template)) in messages.iter().zip(&templates).enumerate() {
            if !grouped(&index) {
                continue;
            }
            let route = routes.route(&template.route());
            let link =
                self.link(&mut transaction, (&failure, &category, &masks), route, (index, message, template)).await?;
            links.push(link);
        }
        self.routes.settle(&mut transaction, &mut routes).await?;
        transaction.commit().await?;
        self.routes.keep(routes);
        Ok(CaptureOutcome {
            failure_id: failure.failure_id,
            duplicate: false,
            category,
            category_rule_id: rule_id,
            links,
            held: held
                .iter()
                .enumerate()
                .filter_map(|(index, held)| held.as_ref().map(|held| (index, held.reason())))
                .collect(),
        })
    }

    /// Groups a held message of a stored failure that a person released,
    /// inside the caller's transaction, as its capture would have (a
    /// message already grouped is left alone). The route cache is not
    /// updated: the next capture of the route reads it again.
    pub(crate) async fn group_released_message(
        &self,
        transaction: &mut sqlx::PgConnection,
        scope: &ProjectScope,
        failure_id: Uuid,
        message_index: usize,
    ) -> Result<(), Error> {
        let (failure, category) = store::capture::stored_failure(transaction, scope, failure_id).await?;
        let messages = failure.grouped_messages();
        let Some(message) = messages.get(message_index) else {
            return Err(Error::NotFound(format!("message {message_index} of failure {failure_id}")));
        };
        if store::capture::message_grouped(transaction, failure_id, message_index).await? {
            return Ok(());
        }
        let masks = self.masks_of(transaction, &failure.project).await?;
        let template = Template::of_masked(message, &masks);
        let route_name = template.route();
        store::routes::lock_routes(transaction, &[route_key(&failure.project, &category, &route_name)]).await?;
        let mut routes =
            self.routes.check_out(transaction, &failure.project, &category, std::slice::from_ref(&route_name)).await?;
        let route = routes.route(&route_name);
        self.link(transaction, (&failure, &category, &masks), route, (message_index, message, &template)).await?;
        self.routes.settle(transaction, &mut routes).await
    }

    async fn replayed(&self, scope: &ProjectScope, failure_id: Uuid) -> Result<CaptureOutcome, Error> {
        match store::capture::stored_capture(&self.pool, scope, failure_id).await? {
            Some((category, category_rule_id, links)) => {
                let mut connection = self.pool.acquire().await?;
                let held =
                    lore_store::trust::quarantine::held_parts(&mut connection, ItemKind::FailureMessage, failure_id)
                        .await?
                        .into_iter()
                        .filter_map(|part| part.parse().ok())
                        .map(|index| (index, "held by the injection screen".to_owned()))
                        .collect();
                Ok(CaptureOutcome { failure_id, duplicate: true, category, category_rule_id, links, held })
            }
            None => Err(Error::AlreadyExists(format!("failure_id {failure_id} is used by another project"))),
        }
    }

    /// Secrets in what agents captured are redacted before anything is
    /// stored or grouped, as in the action log.
    fn sanitized(&self, mut failure: NewFailure) -> NewFailure {
        let clean = |text: &mut String| *text = self.sanitizer.sanitize_text(text).0;
        failure.error_messages.iter_mut().for_each(clean);
        for check in &mut failure.failed_checks {
            clean(&mut check.output);
        }
        clean(&mut failure.diff_summary);
        clean(&mut failure.task.description);
        failure
    }

    /// Links one message: a split that claimed its template wins, then the
    /// most similar pattern of its route (following a merge), then a new
    /// candidate. A project read literally asks every position to fit.
    async fn link(
        &self,
        transaction: &mut sqlx::PgConnection,
        (failure, category, masks): (&NewFailure, &str, &Masks),
        route: &mut CheckedOutRoute,
        (message_index, message, template): (usize, &str, &Template),
    ) -> Result<PatternLink, Error> {
        let config = &self.config;
        let threshold = lore_grouping::matching::threshold(masks, config.similarity_threshold);
        let counting = Counting {
            recurrence_boost: config.recurrence_boost,
            max_confidence: config.max_confidence,
            activate_at: config.warn_min_occurrences,
        };
        let text = template.text();
        let sighting = |similarity, reason| Sighting { failure, message_index, message, template, similarity, reason };

        let (pattern_id, widened, similarity, reason) =
            if let Some((target, note)) = store::routes::split_target(transaction, &failure.project, &text).await? {
                let reason = with_note("split rule", &note);
                (target, None, 1.0, reason)
            } else {
                let found = best_match(
                    template,
                    route.candidates().iter().map(|candidate| (candidate, &candidate.template)),
                    threshold,
                );
                match found {
                    Some(Match { candidate, similarity }) => joined(candidate, template, similarity, threshold),
                    None => {
                        let name = generated_name(category, template);
                        let sighting = sighting(1.0, REASON_NEW);
                        let pattern_id = store::capture::insert_pattern(
                            transaction,
                            &sighting,
                            category,
                            &name,
                            config.initial_confidence,
                            config.warn_min_occurrences,
                        )
                        .await?;
                        route.added(pattern_id, template.clone());
                        return Ok(link(pattern_id, name, &text, 1.0, true, REASON_NEW, message));
                    }
                }
            };
        let name = store::capture::join_pattern(
            transaction,
            pattern_id,
            widened.as_ref(),
            &sighting(similarity, &reason),
            &counting,
        )
        .await?;
        if let Some(widened) = &widened {
            route.widened(pattern_id, widened);
        }
        store::capture::failed_despite_warning(
            transaction,
            failure,
            pattern_id,
            config.failure_decay,
            config.min_confidence,
        )
        .await?;
        Ok(link(pattern_id, name, &text, similarity, false, &reason, message))
    }
}

/// Where a message that matched `candidate` goes: the survivor of a merge
/// (its template is not widened by a message of another route), or the
/// candidate itself with its template widened.
fn joined(
    candidate: &RouteCandidate,
    template: &Template,
    similarity: f64,
    threshold: f64,
) -> (Uuid, Option<Template>, f64, String) {
    match candidate.merged_into {
        Some(survivor) => {
            (survivor, None, similarity, format!("merged into {survivor} (matched {})", candidate.pattern_id))
        }
        None => {
            let widened = candidate.template.generalize(template);
            let reason = if candidate.template == *template {
                REASON_EXACT.to_owned()
            } else if similarity >= threshold {
                format!("similarity {similarity:.2} >= {threshold:.2}")
            } else {
                format!(
                    "similarity {similarity:.2}: a short template ({} tokens) that differs in one position",
                    template.tokens.len()
                )
            };
            let widened = (widened != candidate.template).then_some(widened);
            (candidate.pattern_id, widened, similarity, reason)
        }
    }
}

fn link(
    pattern_id: Uuid,
    pattern_name: String,
    template: &str,
    similarity: f64,
    new_pattern: bool,
    reason: &str,
    message: &str,
) -> PatternLink {
    PatternLink {
        pattern_id,
        pattern_name,
        template: template.to_owned(),
        similarity,
        new_pattern,
        reason: reason.to_owned(),
        message: message.to_owned(),
    }
}

fn with_note(rule: &str, note: &str) -> String {
    if note.is_empty() { rule.to_owned() } else { format!("{rule}: {note}") }
}

/// The advisory lock key of a route (see `store::qa::lock_routes`).
fn route_key(project: &str, category: &str, route: &str) -> String {
    format!("{project}\u{1f}{category}\u{1f}{route}")
}

/// A readable first name: the category and the template's words, which
/// people can edit and fixes later explain.
pub fn generated_name(category: &str, template: &Template) -> String {
    let mut name = format!("{}: ", category.replace('_', " "));
    for token in &template.tokens {
        if name.chars().count() + token.chars().count() > NAME_CHARS {
            name.push('…');
            break;
        }
        name.push_str(if token == WILDCARD { "…" } else { token });
        name.push(' ');
    }
    let name = name.trim_end().to_owned();
    if name.ends_with(':') { format!("{name} (empty message)") } else { name }
}

impl QaLearning {
    /// The rule table in force for a project, in evaluation order.
    pub async fn category_rules(
        &self,
        scope: &ProjectScope,
        project: &str,
    ) -> Result<Vec<lore_types::qa::CategoryRule>, Error> {
        scope.require(project)?;
        let mut connection = self.pool.acquire().await?;
        Ok(category::in_force(store::category::category_rules(&mut connection, project).await?))
    }

    /// Refuses a category filter that no rule in force can produce, so a
    /// typo is an error rather than an empty answer.
    pub(crate) async fn check_category(
        &self,
        scope: &ProjectScope,
        project: &str,
        category: Option<&str>,
    ) -> Result<(), Error> {
        let Some(category) = category else { return Ok(()) };
        let rules = self.category_rules(scope, project).await?;
        if category == category::OTHER || rules.iter().any(|rule| rule.category == category) {
            return Ok(());
        }
        let mut known: Vec<&str> = rules.iter().map(|rule| rule.category.as_str()).chain([category::OTHER]).collect();
        known.sort_unstable();
        known.dedup();
        Err(Error::invalid(
            "category",
            format!("unknown category {category:?}; the rule table has {}", known.join(", ")),
        ))
    }

    pub async fn upsert_category_rule(
        &self,
        scope: &ProjectScope,
        rule: &lore_types::qa::CategoryRule,
    ) -> Result<lore_types::qa::CategoryRule, Error> {
        store::category::upsert_rule(&self.pool, scope, rule).await
    }
}
