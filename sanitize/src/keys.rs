//! Which names name a secret: JSON keys, config keys, flags. Compared
//! lowercase with `-`, `_`, `.` and spaces removed, so `API-Key`, `api_key`
//! and `apiKey` agree.

/// Whole names that are secrets on their own.
const EXACT: &[&str] = &["pwd", "pass", "auth", "pin", "otp", "psk", "dsn"];
/// Words that make any name containing them a secret.
const CONTAINS: &[&str] = &[
    "password",
    "passwd",
    "passphrase",
    "secret",
    "apikey",
    "accesskey",
    "privatekey",
    "signingkey",
    "encryptionkey",
    "credential",
    "authorization",
    "cookie",
    "connectionstring",
];
/// "token" is a secret in auth_token or csrfToken, not in max_tokens,
/// token_count or tokenizer.
const TOKEN_NOT_SECRET: &[&str] = &["tokens", "tokencount", "tokenizer", "tokenlimit", "tokentype", "tokenusage"];
/// Names ending in "pass" that are no password (`db_pass` is one).
const PASS_NOT_SECRET: &[&str] =
    &["bypass", "compass", "overpass", "underpass", "firstpass", "onepass", "multipass", "getpass", "askpass"];
/// Names that contain a secret word but hold something else: the secret's
/// name, its id, its length, where it is.
const NOT_SECRET: &[&str] = &[
    "secretname",
    "secretref",
    "secretid",
    "secretkeyref",
    "credentialsid",
    "credentialid",
    "credentialsname",
    "credentialname",
    "passwordlength",
    "passwordpolicy",
    "passwordfile",
    "passwordpath",
    "secretfile",
    "secretpath",
    "secretlength",
    "tokenfile",
    "tokenpath",
    "tokenurl",
    "tokenendpoint",
    "keyfile",
    "keypath",
    "keyid",
    "withcredentials",
];

fn normalize(key: &str) -> String {
    key.chars().filter(|character| !matches!(character, '-' | '_' | '.' | ' ')).flat_map(char::to_lowercase).collect()
}

/// True when a key names a secret (its value is redacted whole).
pub(crate) fn is_secret_key(key: &str) -> bool {
    let normalized = normalize(key);
    if NOT_SECRET.iter().any(|word| normalized.ends_with(word)) {
        return false;
    }
    EXACT.contains(&normalized.as_str())
        // A personal access token (`ado_pat`, `GITHUB_PAT`), not `compat`.
        || (normalized.ends_with("pat") && !normalized.ends_with("compat") && normalized.len() > 3)
        || (normalized.ends_with("pass") && !PASS_NOT_SECRET.iter().any(|word| normalized.ends_with(word)))
        || CONTAINS.iter().any(|word| normalized.contains(word))
        || (normalized.contains("token") && !TOKEN_NOT_SECRET.iter().any(|word| normalized.contains(word)))
}

/// True when a key names a password (`DB_PASSWORD`, `pwd`, `db_pass`),
/// whose values may be plain words.
pub(crate) fn is_password_key(key: &str) -> bool {
    let normalized = normalize(key);
    !NOT_SECRET.iter().any(|word| normalized.ends_with(word))
        && (["password", "passwd", "passphrase"].iter().any(|word| normalized.contains(word))
            || ["pwd", "pass"].iter().any(|word| normalized.ends_with(word))
                && !PASS_NOT_SECRET.iter().any(|word| normalized.ends_with(word)))
}

/// True when a key names an identifier that works as a credential: an OAuth
/// client id or consumer key, a CI reporter id, a subscription key. Weaker
/// than a secret name, so the value must show it is random.
pub(crate) fn is_credential_id(key: &str) -> bool {
    const WORDS: &[&str] = &["clientid", "consumerkey", "consumerid", "reporterid", "subscriptionkey", "appsecret"];
    let normalized = normalize(key);
    WORDS.iter().any(|word| normalized.ends_with(word))
}

/// True when a key ends in `key` (`STRIPE_KEY`, `appKey`, `license.key`):
/// a weaker sign, which the value must back with length and randomness.
/// Keys of data structures are not (`primary_key`, `sort_key`).
pub(crate) fn is_key_named(key: &str) -> bool {
    const DATA_KEYS: &[&str] = &[
        "primarykey",
        "foreignkey",
        "sortkey",
        "partitionkey",
        "hashkey",
        "rangekey",
        "cachekey",
        "idempotencykey",
        "publickey",
        "routingkey",
        "shardkey",
        "lookupkey",
        "mapkey",
        "dictkey",
        "groupkey",
        "objectkey",
        "s3key",
        "bucketkey",
        "storagekey",
        "hotkey",
        "monkey",
        "turkey",
        "donkey",
    ];
    let normalized = normalize(key);
    normalized.len() > 3 && normalized.ends_with("key") && !DATA_KEYS.iter().any(|word| normalized.ends_with(word))
}
