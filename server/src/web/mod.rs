//! The web console: server-rendered pages for the people who supervise a
//! fleet, on their own HTTP port (`web.listen`).
//!
//! # Layout
//! - [`signin`]: the session cookie, who is looking ([`viewer::Viewer`]), and
//!   the CSRF check every form post passes before its handler runs.
//! - [`params`]: query strings and form bodies, read leniently and checked
//!   field by field.
//! - [`layout`]: the page shell and the small pieces every page uses.
//! - [`charts`]: SVG charts drawn on the server.
//! - [`markdown`]: markdown made safe to show (reports, lessons, drafts).
//! - [`assets`]: the stylesheet and scripts, embedded in the binary.
//! - [`fleet`], [`activity`], [`sessions`], [`knowledge`], [`qa`],
//!   [`quarantine`], [`reports`]: the pages, each a thin handler over the
//!   domain modules.
//!
//! The handlers call the same domain modules as gRPC, with the caller's
//! [`ProjectScope`], and check every change against the same per-method
//! access table ([`crate::auth::method_access`]). Pages carry a strict
//! Content-Security-Policy: no inline script or style, so text an agent
//! wrote can only ever be text.

mod activity;
mod assets;
mod charts;
mod fix_reviews;
mod fleet;
mod grouping_masks;
mod guards;
mod injections;
mod knowledge;
mod layout;
mod lesson_reviews;
mod markdown;
mod mask_proposals;
mod params;
mod qa;
mod quarantine;
mod regrouping_proposals;
mod reports;
mod review_queue;
mod sessions;
mod signin;
mod viewer;

use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;

use axum::Router;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use tokio::net::TcpListener;

use crate::Error;
use lore_types::scope::ProjectScope;

pub use crate::config::WebConfig;

/// What the console's handlers share.
#[derive(Clone)]
pub struct Console {
    /// The fleet and activity pages' own reads.
    reads: lore_domain::console::ConsoleReads,
    actions: lore_domain::actions::ActionLog,
    knowledge: lore_domain::knowledge::KnowledgeBase,
    qa: lore_domain::qa::QaLearning,
    reports: lore_domain::reports::Reports,
    quarantine: lore_domain::trust::quarantine::Quarantine,
    ledger: lore_domain::injections::InjectionLedger,
    erasure: lore_domain::trust::erasure::Erasure,
    /// `None` when auth is switched off: everyone is an admin of every
    /// project, as on gRPC.
    auth: Option<Arc<crate::auth::Authenticator>>,
    config: WebConfig,
    /// Shown on the sign-in page in dev mode, where the token is.
    dev_token_file: Option<PathBuf>,
    /// The CSRF secret when there is no sign-in (auth switched off).
    open_csrf: Arc<str>,
}

impl std::fmt::Debug for Console {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("Console").field("config", &self.config).finish_non_exhaustive()
    }
}

impl Console {
    /// Fails only when the operating system gives no randomness for the
    /// CSRF secret of a console without sign-in.
    pub fn new(
        services: &crate::services::Services,
        config: WebConfig,
        dev_token_file: Option<PathBuf>,
    ) -> Result<Self, Error> {
        Ok(Self {
            reads: lore_domain::console::ConsoleReads::new(services.reads.clone()),
            actions: services.actions.clone(),
            knowledge: services.knowledge.clone(),
            qa: services.qa.clone(),
            reports: services.reports.clone(),
            quarantine: services.quarantine.clone(),
            ledger: services.briefer.ledger().clone(),
            erasure: services.erasure.clone(),
            auth: services.auth.clone(),
            config,
            dev_token_file,
            open_csrf: crate::auth::generate_secret()?.into(),
        })
    }

    /// Every page and form of the console.
    pub fn router(self) -> Router {
        Router::new()
            .route("/", get(fleet::page))
            .route("/fleet/sessions", get(fleet::live_sessions))
            .route("/signin", get(signin::form).post(signin::submit))
            .route("/signout", post(signin::sign_out))
            .route("/assets/{file}", get(assets::serve))
            .route("/favicon.ico", get(assets::favicon))
            .route("/projects/{project}", get(activity::page))
            .route("/projects/{project}/export", get(activity::export))
            .route("/actions/{action_id}", get(activity::action))
            .route("/sessions/{session_id}", get(sessions::page))
            .route("/sessions/{session_id}/live", get(sessions::live))
            .route("/sessions/{session_id}/injections", get(injections::session))
            .route("/projects/{project}/injections", get(injections::project))
            .route("/projects/{project}/knowledge", get(knowledge::search))
            .route("/entries/{entry_id}", get(knowledge::entry))
            .route("/entries/{entry_id}/erase", post(knowledge::erase))
            .route("/projects/{project}/drafts", get(knowledge::drafts))
            .route("/drafts/{draft_id}/review", post(knowledge::review))
            .route("/projects/{project}/qa", get(qa::dashboard))
            .route("/projects/{project}/masks", get(grouping_masks::page).post(grouping_masks::put))
            .route("/projects/{project}/masks/delete", post(grouping_masks::delete))
            .route("/projects/{project}/masks/proposals", post(grouping_masks::decide))
            .route("/projects/{project}/masks/regroupings", post(grouping_masks::decide_regrouping))
            .route("/projects/{project}/guards", get(guards::page).post(guards::put))
            .route("/projects/{project}/guards/remove", post(guards::remove))
            .route("/projects/{project}/guards/switch", post(guards::switch))
            .route("/patterns/{pattern_id}", get(qa::pattern))
            .route("/patterns/{pattern_id}/merge", post(qa::merge))
            .route("/patterns/{pattern_id}/split", post(qa::split))
            .route("/projects/{project}/promotions", get(qa::promotions))
            .route("/promotions/{promotion_id}/review", post(qa::review_promotion))
            .route("/projects/{project}/fixes", get(fix_reviews::queue))
            .route("/projects/{project}/fixes/approve", post(fix_reviews::approve_ticked))
            .route("/fixes/{attempt_id}/review", post(fix_reviews::review))
            .route("/projects/{project}/lessons", get(lesson_reviews::queue))
            .route("/projects/{project}/lessons/approve", post(lesson_reviews::approve_ticked))
            .route("/lessons/{entry_id}/review", post(lesson_reviews::review))
            .route("/projects/{project}/quarantine", get(quarantine::page))
            .route("/quarantine/{quarantine_id}/decide", post(quarantine::decide))
            .route("/projects/{project}/reports", get(reports::project))
            .route("/reports", get(reports::fleet))
            .fallback(not_found)
            .layer(axum::middleware::map_response(secure_headers))
            .with_state(self)
    }
}

/// Serves the console on `listener` until `shutdown` resolves.
pub async fn serve(
    console: Console,
    listener: TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let address = listener.local_addr()?;
    tracing::info!(addr = %address, url = %format!("http://{address}/"), "web console serving");
    axum::serve(listener, console.router()).with_graceful_shutdown(shutdown).await
}

/// The strict policy of every response: scripts and styles from this
/// server's own files only, no frames, forms post only here.
const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; \
     connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

async fn secure_headers(mut response: Response) -> Response {
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CONTENT_SECURITY_POLICY));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("same-origin"));
    headers.entry(header::CACHE_CONTROL).or_insert(HeaderValue::from_static("no-store"));
    response
}

async fn not_found() -> PageError {
    PageError::from(Error::NotFound("this page".into()))
}

/// Why a page could not be shown.
#[derive(Debug)]
pub enum PageError {
    /// No session, or its token stopped being valid: sign in first.
    SignIn,
    /// The CSRF token of a form post is missing or wrong.
    Forged,
    Domain(Error),
}

impl From<Error> for PageError {
    fn from(error: Error) -> Self {
        Self::Domain(error)
    }
}

impl From<sqlx::Error> for PageError {
    fn from(error: sqlx::Error) -> Self {
        Self::Domain(Error::Database(error))
    }
}

impl IntoResponse for PageError {
    fn into_response(self) -> Response {
        let (status, message) = match self {
            PageError::SignIn => return Redirect::to("/signin").into_response(),
            PageError::Forged => (
                StatusCode::FORBIDDEN,
                "This form was refused: its security token is missing or stale. Reload the page and try again."
                    .to_owned(),
            ),
            // The one mapping of domain errors stays the gRPC one; the
            // console turns its code into the HTTP equivalent.
            PageError::Domain(error) => {
                let status = tonic::Status::from(error);
                (http_status(status.code()), sentence(status.message()))
            }
        };
        (status, layout::error_page(status, &message)).into_response()
    }
}

fn http_status(code: tonic::Code) -> StatusCode {
    use tonic::Code;
    match code {
        Code::InvalidArgument | Code::OutOfRange => StatusCode::BAD_REQUEST,
        Code::NotFound => StatusCode::NOT_FOUND,
        Code::AlreadyExists | Code::Aborted | Code::FailedPrecondition => StatusCode::CONFLICT,
        Code::Unauthenticated => StatusCode::UNAUTHORIZED,
        Code::PermissionDenied => StatusCode::FORBIDDEN,
        Code::ResourceExhausted => StatusCode::TOO_MANY_REQUESTS,
        Code::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

/// A domain message ("pattern_ids: must not ...") as a sentence.
fn sentence(message: &str) -> String {
    let mut characters = message.trim().chars();
    let mut text: String = match characters.next() {
        Some(first) => first.to_uppercase().chain(characters).collect(),
        None => "Something went wrong".into(),
    };
    if !text.ends_with(['.', '!', '?']) {
        text.push('.');
    }
    text
}

/// A page of one project (`/projects/{project}/...`): who is looking, the
/// project, already checked against their scope, and the query string.
pub struct ProjectView {
    pub viewer: viewer::Viewer,
    pub scope: ProjectScope,
    pub project: String,
    pub params: params::Params,
}

impl axum::extract::FromRequestParts<Console> for ProjectView {
    type Rejection = PageError;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        console: &Console,
    ) -> Result<Self, Self::Rejection> {
        let viewer = viewer::Viewer::from_request_parts(parts, console).await?;
        let axum::extract::Path(project) = axum::extract::Path::<String>::from_request_parts(parts, console)
            .await
            .map_err(|_| Error::invalid("project", "not a project name"))?;
        let scope = viewer.scope();
        check_project(&scope, &project)?;
        let params = params::Params::from_query(parts.uri.query());
        Ok(Self { viewer, scope, project, params })
    }
}

/// An id in a page's path, checked as gRPC checks ids.
fn path_id(field: &str, raw: &str) -> Result<uuid::Uuid, Error> {
    lore_types::validate::required_uuid(field, raw).map_err(Error::from)
}

/// Refuses a project outside the viewer's scope the way a missing one is
/// refused, so a URL edited to another project learns nothing about it.
fn check_project(scope: &ProjectScope, project: &str) -> Result<(), Error> {
    if scope.allows(project) { Ok(()) } else { Err(Error::NotFound(format!("project {project}"))) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn domain_messages_read_as_sentences() {
        assert_eq!(sentence("pattern_ids: must not be empty"), "Pattern_ids: must not be empty.");
        assert_eq!(sentence("Done."), "Done.");
        assert_eq!(sentence(""), "Something went wrong.");
    }
}
