//! The console's stylesheet and scripts, embedded in the binary (see
//! `assets/README.md` for where each comes from). Their URLs carry a hash
//! of their bytes, so browsers may keep them for a year and still never
//! run a stale one after an upgrade.

use std::sync::LazyLock;

use axum::extract::Path;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

struct Asset {
    name: &'static str,
    content_type: &'static str,
    bytes: &'static [u8],
}

const ASSETS: [Asset; 3] = [
    Asset { name: "console.css", content_type: "text/css; charset=utf-8", bytes: include_bytes!("assets/console.css") },
    Asset {
        name: "console.js",
        content_type: "text/javascript; charset=utf-8",
        bytes: include_bytes!("assets/console.js"),
    },
    Asset {
        name: "htmx.min.js",
        content_type: "text/javascript; charset=utf-8",
        bytes: include_bytes!("assets/htmx.min.js"),
    },
];

static VERSIONS: LazyLock<Vec<String>> =
    LazyLock::new(|| ASSETS.iter().map(|asset| blake3::hash(asset.bytes).to_hex()[..12].to_owned()).collect());

/// The URL of an asset, versioned by its content.
pub fn path(name: &str) -> String {
    let index = ASSETS.iter().position(|asset| asset.name == name).expect("a known asset");
    format!("/assets/{name}?v={}", VERSIONS[index])
}

pub async fn serve(Path(file): Path<String>) -> Response {
    let Some(asset) = ASSETS.iter().find(|asset| asset.name == file) else {
        return (StatusCode::NOT_FOUND, "no such asset").into_response();
    };
    let mut response = asset.bytes.into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(asset.content_type));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("public, max-age=31536000, immutable"));
    response
}

/// Browsers ask for it on every site; there is none, and saying so with
/// 204 keeps their consoles free of 404s.
pub async fn favicon() -> StatusCode {
    StatusCode::NO_CONTENT
}
