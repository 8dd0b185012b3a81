//! Who is calling, and what they may do.
//!
//! Every call to a Lore service carries a bearer token in its
//! `authorization` metadata. A token has a role, which decides which methods
//! it may call ([`method_access`]), and a set of projects, which becomes the
//! call's [`ProjectScope`]: the handlers pass it to every store function,
//! which applies it in SQL. Health and reflection stay open so probes and
//! grpcurl's `list` work without a token.
//!
//! Tokens are stored only as BLAKE3 hashes ([`lore_store::tokens`]). A
//! replica caches the tokens it verified; any change to the token table
//! NOTIFYs every replica to forget them, so a revocation takes effect at
//! once everywhere, and a TTL bounds how long a missed notification could
//! matter.

mod layer;
mod methods;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use base64::Engine as _;
use hashlink::LruCache;
use sqlx::PgPool;
use uuid::Uuid;

pub use layer::AuthLayer;
pub use methods::{Access, method_access, served_methods};

pub use lore_types::tokens::{Caller, Role};

use crate::Error;
use lore_store::tokens::{self, NewToken};

/// Prefix of every token, so one pasted in the wrong place is recognizable
/// (and secret scanners can match it).
const TOKEN_PREFIX: &str = "lore_";
/// Longer than any token we issue; longer values are not worth hashing.
const MAX_TOKEN_CHARS: usize = 256;
/// Distinct tokens a replica remembers.
const CACHE_CAPACITY: usize = 10_000;
/// The NOTIFY channel of the token table's trigger (migration 0013).
const CHANGE_CHANNEL: &str = "lore_tokens";

/// A new token's secret, shown once. 256 random bits from the OS.
pub fn generate_secret() -> Result<String, Error> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)
        .map_err(|error| Error::Unavailable(format!("no randomness from the operating system: {error}")))?;
    Ok(format!("{TOKEN_PREFIX}{}", base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)))
}

pub fn hash_secret(secret: &str) -> [u8; 32] {
    *blake3::hash(secret.as_bytes()).as_bytes()
}

/// Creates a token and returns its id with the secret, which is not stored.
pub async fn create_token(pool: &PgPool, token: &NewToken) -> Result<(Uuid, String), Error> {
    let secret = generate_secret()?;
    let token_id = tokens::insert(pool, token, &hash_secret(&secret)).await?;
    Ok((token_id, secret))
}

/// Dev mode: makes sure `path` holds a live admin token for this database,
/// creating one (and replacing a stale file) when needed, so `make run`
/// followed by any `lore` command works with no extra step.
pub async fn ensure_dev_token(pool: &PgPool, path: &Path) -> anyhow::Result<PathBuf> {
    use anyhow::Context as _;
    let path = std::path::absolute(path).with_context(|| format!("cannot resolve {}", path.display()))?;
    if let Ok(existing) = std::fs::read_to_string(&path)
        && tokens::find_live(pool, &hash_secret(existing.trim())).await?.is_some()
    {
        return Ok(path);
    }
    let secret = generate_secret()?;
    // A fresh secret: nothing to look up before replacing the old token.
    replace_admin_token(pool, "dev-admin", &hash_secret(&secret)).await?;
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).with_context(|| format!("cannot create {}", parent.display()))?;
    }
    write_private(&path, &secret).with_context(|| format!("cannot write the dev token to {}", path.display()))?;
    Ok(path)
}

/// Makes `secret` the live admin token called `name` (for every project),
/// replacing a previous one of that name: the dev token, and the bootstrap
/// token a deployment keeps in a Secret (`auth.bootstrap_admin_token`).
pub async fn ensure_admin_token(pool: &PgPool, name: &str, secret: &str) -> Result<(), Error> {
    let hash = hash_secret(secret);
    if tokens::find_live(pool, &hash).await?.is_some() {
        return Ok(());
    }
    replace_admin_token(pool, name, &hash).await
}

/// Revokes the live token called `name`, if any, and stores `hash` as an
/// admin token of that name.
async fn replace_admin_token(pool: &PgPool, name: &str, hash: &[u8; 32]) -> Result<(), Error> {
    tokens::revoke_by_name(pool, name).await?;
    let token = NewToken { name: name.into(), role: Role::Admin, projects: None, expires_at: None };
    tokens::insert(pool, &token, hash).await?;
    Ok(())
}

/// Writes a file only its owner can read.
fn write_private(path: &Path, contents: &str) -> std::io::Result<()> {
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let _ = std::fs::remove_file(path);
    let mut file = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(path)?;
    file.write_all(contents.as_bytes())?;
    file.write_all(b"\n")
}

struct Cached {
    caller: Arc<Caller>,
    valid_until: Instant,
}

/// Verifies tokens against the database, with a per-replica cache that
/// the token table's NOTIFY clears.
pub struct Authenticator {
    pool: PgPool,
    ttl: Duration,
    cache: std::sync::Mutex<LruCache<[u8; 32], Cached>>,
    /// The generation of the cache, bumped on every clear (every change to
    /// the token table): open streams watch it, and a lookup that raced
    /// with a change does not put what it read back into the cache.
    changes: tokio::sync::watch::Sender<u64>,
    /// The token table's listener, which ends with the authenticator.
    listener: lore_domain::background::Background,
}

impl std::fmt::Debug for Authenticator {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("Authenticator").field("ttl", &self.ttl).finish_non_exhaustive()
    }
}

impl Authenticator {
    /// Starts listening for token changes; call inside the runtime.
    pub fn start(pool: PgPool, ttl: Duration) -> Arc<Self> {
        let authenticator = Arc::new(Self {
            pool,
            ttl,
            cache: std::sync::Mutex::new(LruCache::new(CACHE_CAPACITY)),
            changes: tokio::sync::watch::Sender::new(0),
            listener: Default::default(),
        });
        authenticator.listener.spawn(forget_on_change(Arc::downgrade(&authenticator)));
        authenticator
    }

    /// The caller of a call to `method` (a gRPC path) with these headers:
    /// `Ok(None)` for the open services, an error naming what is wrong
    /// otherwise.
    pub async fn authorize(&self, method: &str, headers: &http::HeaderMap) -> Result<Option<Arc<Caller>>, Error> {
        if methods::is_open(method) {
            return Ok(None);
        }
        let secret = bearer_token(headers)?;
        let caller = self.verify(secret).await?;
        let access = method_access(method)
            .ok_or_else(|| Error::PermissionDenied(format!("{method} is not a method a token may call")))?;
        if !caller.role.permits(access) {
            return Err(Error::PermissionDenied(format!(
                "a {} token may not call {method} ({access} access)",
                caller.role
            )));
        }
        Ok(Some(caller))
    }

    /// The live token whose secret this is, whatever it may call: the web
    /// console signs in with it and checks each action against
    /// [`method_access`] itself.
    pub async fn verify(&self, secret: &str) -> Result<Arc<Caller>, Error> {
        if secret.is_empty() || secret.len() > MAX_TOKEN_CHARS {
            return Err(Error::Unauthenticated("invalid, expired or revoked token".into()));
        }
        let hash = hash_secret(secret);
        let now = Instant::now();
        if let Some(cached) = self.lock().get(&hash)
            && cached.valid_until > now
        {
            return Ok(Arc::clone(&cached.caller));
        }
        let generation = *self.changes.borrow();
        let found = tokens::find_live(&self.pool, &hash).await?;
        let Some(live) = found else {
            return Err(Error::Unauthenticated("invalid, expired or revoked token".into()));
        };
        let caller = Arc::new(live.caller);
        let until_expiry = live.expires_in.unwrap_or(self.ttl);
        let mut cache = self.lock();
        if *self.changes.borrow() == generation {
            cache.insert(hash, Cached { caller: Arc::clone(&caller), valid_until: now + self.ttl.min(until_expiry) });
        }
        Ok(caller)
    }

    fn forget_all(&self) {
        // Under the cache's lock, so no lookup compares generations between
        // the clear and the bump.
        let mut cache = self.lock();
        cache.clear();
        self.changes.send_modify(|generation| *generation += 1);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, LruCache<[u8; 32], Cached>> {
        // The cache holds nothing a panic could leave half-written.
        self.cache.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// The token of `authorization: Bearer <token>`.
fn bearer_token(headers: &http::HeaderMap) -> Result<&str, Error> {
    let value = headers
        .get(http::header::AUTHORIZATION)
        .ok_or_else(|| Error::Unauthenticated("missing token: send `authorization: Bearer <token>` metadata".into()))?;
    let value = value.to_str().map_err(|_| Error::Unauthenticated("authorization: not ASCII".into()))?;
    let (scheme, token) = value.split_once(' ').unwrap_or((value, ""));
    let token = token.trim();
    if !scheme.eq_ignore_ascii_case("bearer") || token.is_empty() {
        return Err(Error::Unauthenticated("authorization: expected `Bearer <token>`".into()));
    }
    Ok(token)
}

/// Clears the cache on every change to the token table, and whenever the
/// listening connection was lost (changes may have been missed meanwhile).
async fn forget_on_change(authenticator: std::sync::Weak<Authenticator>) {
    loop {
        let Some(pool) = authenticator.upgrade().map(|strong| strong.pool.clone()) else { return };
        let listening = async {
            let mut listener = sqlx::postgres::PgListener::connect_with(&pool).await?;
            listener.listen(CHANGE_CHANNEL).await?;
            loop {
                let Some(strong) = authenticator.upgrade() else { return Ok(()) };
                strong.forget_all();
                drop(strong);
                // Ok(None): the connection dropped; the next call reconnects
                // and listens again, and the loop clears once more.
                listener.try_recv().await?;
            }
        };
        let result: Result<(), sqlx::Error> = listening.await;
        match result {
            Ok(()) => return,
            Err(error) => tracing::warn!(%error, "token change listener failed; retrying"),
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

/// The scope the auth layer put in a request's extensions; every project
/// when there is none (auth switched off).
pub(crate) fn scope_of(extensions: &http::Extensions) -> lore_types::scope::ProjectScope {
    use lore_types::scope::ProjectScope;
    extensions.get::<ProjectScope>().cloned().unwrap_or(ProjectScope::All)
}
