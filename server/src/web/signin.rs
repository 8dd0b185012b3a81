//! Signing in with a Lore token, and out: the page, and the session cookie
//! it sets (what the cookie holds, and who it makes the viewer, is
//! [`super::viewer`]).

use axum::extract::State;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Redirect, Response};
use maud::html;

use super::params::Params;
use super::viewer::{COOKIE, Submitted};
use super::{Console, PageError, layout};
use crate::Error;

pub async fn form(State(console): State<Console>) -> Response {
    sign_in_page(&console, None).into_response()
}

fn sign_in_page(console: &Console, problem: Option<&str>) -> maud::Markup {
    let hint = console.dev_token_file.as_ref().map(|path| path.display().to_string());
    layout::bare(
        "Sign in",
        html! {
            main.signin {
                h1 { "Lore" }
                p.lede { "Sign in with a Lore token. Every role may look; what you may change follows the token's role." }
                @if let Some(problem) = problem {
                    p.problem role="alert" { (problem) }
                }
                form method="post" action="/signin" {
                    label for="token" { "Token" }
                    input #token type="password" name="token" autocomplete="current-password" required autofocus;
                    button type="submit" { "Sign in" }
                }
                @if let Some(hint) = hint {
                    p.hint { "Dev mode: an admin token is in " code { (hint) } "." }
                }
            }
        },
    )
}

/// Sign-in needs no CSRF token: there is no session yet to ride on, and a
/// forged sign-in would only sign the victim in as the attacker's token,
/// which SameSite=Strict and the token's own scope leave harmless.
pub async fn submit(State(console): State<Console>, body: axum::body::Bytes) -> Result<Response, PageError> {
    let fields = Params::parse(&body);
    let token = fields.get("token").unwrap_or_default().trim().to_owned();
    let Some(auth) = &console.auth else { return Ok(Redirect::to("/").into_response()) };
    if token.is_empty() {
        return Ok(
            (axum::http::StatusCode::BAD_REQUEST, sign_in_page(&console, Some("Enter a token."))).into_response()
        );
    }
    match auth.verify(&token).await {
        Ok(_) => {
            let secure = if console.config.secure_cookie { "; Secure" } else { "" };
            let cookie = format!("{COOKIE}={token}; Path=/; HttpOnly; SameSite=Strict{secure}");
            let mut response = Redirect::to("/").into_response();
            response.headers_mut().insert(
                header::SET_COOKIE,
                HeaderValue::from_str(&cookie).map_err(|_| Error::invalid("token", "not a token"))?,
            );
            Ok(response)
        }
        Err(Error::Unauthenticated(_)) => Ok((
            axum::http::StatusCode::UNAUTHORIZED,
            sign_in_page(&console, Some("That token is invalid, expired or revoked.")),
        )
            .into_response()),
        Err(error) => Err(error.into()),
    }
}

pub async fn sign_out(_submitted: Submitted) -> Response {
    let mut response = Redirect::to("/signin").into_response();
    response.headers_mut().insert(
        header::SET_COOKIE,
        HeaderValue::from_static("lore_console=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0"),
    );
    response
}
