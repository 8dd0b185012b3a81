//! Secrets by where they stand: the value of a secret-named key, in the
//! syntaxes an agent's context holds. One reader per syntax, each yielding
//! the key and the value; one judgement for all of them, so that `.env`,
//! YAML, TOML, JSON inside a string, HCL, Makefile `?=`/`::=`, Gradle and
//! Groovy blocks, XML elements and attributes, .NET `add key/value`,
//! command-line flags, `mysql -p…`, and `user, password` pairs agree on
//! what a secret is.
//!
//! The value alone is redacted: `DB_PASSWORD=[REDACTED]`,
//! `<password>[REDACTED]</password>`, `--token [REDACTED]`.

use std::ops::Range;
use std::sync::LazyLock;

use aho_corasick::AhoCorasick;
use regex::{Captures, Regex};

use crate::keys::{is_credential_id, is_key_named, is_password_key, is_secret_key};
use crate::placeholders::{is_reference, is_secret_name, is_stand_in, looks_random};

/// A value: quoted (the quotes kept), or bare up to a delimiter.
const VALUE: &str = r#"(?:["'`](?P<quoted>[^"'`\r\n]+)["'`]|(?P<bare>[^\s"'`,;&|}\]()<>]+))"#;

/// The readers: each captures `key` and a value (`quoted` or `bare`).
/// Unbounded repetitions keep their automata small (bounded ones multiply
/// states); lengths are judged on what they capture.
static READERS: LazyLock<Vec<Regex>> = LazyLock::new(|| {
    [
        // key = value, key: value, key := value, key ?= value, key ::= value,
        // key => value, key <- value (env, YAML, TOML, HCL, Make, JSON, Ruby, R).
        format!(r#"(?P<key>[A-Za-z_][A-Za-z0-9_.-]*)["'\]]?[ \t]*(?:=|:=|::=|\?=|\+=|:|=>|<-)[ \t]*{VALUE}"#),
        // Flags: --password=value, --api-key value, -password value.
        format!(r#"(?:^|[\s(])--?(?P<key>[A-Za-z][A-Za-z0-9_.-]+)(?:=|[ \t]+){VALUE}"#),
        // Gradle, Groovy, Ruby DSLs: password 'value', token "value".
        r#"(?:^|[\s{;(,])(?P<key>[A-Za-z_][A-Za-z0-9_]*)[ \t]+["'](?P<quoted>[^"'\r\n]+)["']"#.to_owned(),
        // Setters and builders: setPassword("value"), .apiKey('value').
        r#"(?P<key>[A-Za-z_][A-Za-z0-9_]*)[ \t]*\([ \t]*["'](?P<quoted>[^"'\r\n]+)["'][ \t]*\)"#.to_owned(),
        // XML elements: <password>value</password>, <entry key="token">value</entry>.
        r#"<(?P<key>[A-Za-z_][A-Za-z0-9_:.-]*)(?:\s[^<>]*)?>(?P<bare>[^<>\r\n]+)</"#.to_owned(),
        r#"\bkey[ \t]*=[ \t]*["'](?P<key>[^"'\r\n]+)["'][^<>]*?>(?P<bare>[^<>\r\n]+)</"#.to_owned(),
        // .NET settings: <add key="ApiKey" value="..."/>.
        r#"\bkey[ \t]*=[ \t]*["'](?P<key>[^"'\r\n]+)["'][ \t]+value[ \t]*=[ \t]*["'](?P<quoted>[^"'\r\n]+)["']"#
            .to_owned(),
        // A user and a password as a pair: auth=("user", "pass"),
        // credentials('user', 'pass'), basicAuth("user", "pass").
        r#"(?P<key>[A-Za-z_][A-Za-z0-9_]*)[ \t]*(?:[=:][ \t]*)?[(\[][ \t]*["'][^"'\r\n]+["'][ \t]*,[ \t]*["'](?P<quoted>[^"'\r\n]+)["']"#
            .to_owned(),
    ]
    .iter()
    .map(|source| Regex::new(source).expect("assignment reader compiles"))
    .collect()
});

/// Commands whose `-p` (or `-a`) is a password: `mysql -pS3cret`,
/// `sshpass -p S3cret`, `docker login -u me -p S3cret`, `redis-cli -a S3cret`.
static PASSWORD_FLAG: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r#"(?i:\b(?:mysql|mysqldump|mysqladmin|mariadb|sshpass|login|mongo|mongosh|mongodump|redis-cli|psexec(?:\.exe)?)\b)[^\n|;&]*?[ \t]-(?:p|a)[ \t]*(?:["'](?P<quoted>[^"'\r\n]{1,300})["']|(?P<bare>[^\s"'`;&|<>-][^\s"'`;&|<>]{0,300}))"#,
    )
    .expect("password flag regex compiles")
});

/// Words one of which every key, pair name or command the readers accept
/// contains (compared case-insensitively).
static SECRET_WORDS: LazyLock<AhoCorasick> = LazyLock::new(|| {
    AhoCorasick::builder()
        .ascii_case_insensitive(true)
        .build([
            "pass",
            "pwd",
            "secret",
            "token",
            "key",
            "auth",
            "credential",
            "cookie",
            "pat",
            "login",
            "dsn",
            "psk",
            "otp",
            "pin",
            "mysql",
            "mariadb",
            "mongo",
            "redis",
            "psexec",
            "client",
            "consumer",
            "reporter",
            "subscription",
        ])
        .expect("secret words build")
});

/// Names of pairs whose second string is a password.
fn is_pair_key(key: &str) -> bool {
    let normalized: String =
        key.chars().filter(|character| character.is_ascii_alphanumeric()).map(|c| c.to_ascii_lowercase()).collect();
    matches!(
        normalized.as_str(),
        "auth"
            | "basicauth"
            | "httpauth"
            | "httpbasicauth"
            | "login"
            | "credentials"
            | "setcredentials"
            | "usernamepassword"
    ) || is_secret_key(key)
}

/// The spans of every secret value these readers find in `text`.
pub(crate) fn find(text: &str, spans: &mut Vec<Range<usize>>) {
    // Every reader reads within a line, and needs a key (or a command) with
    // a secret word in it: only such lines are read, which leaves most of a
    // long tool output alone.
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        if SECRET_WORDS.is_match(line) {
            let before = spans.len();
            find_in_line(line, spans);
            for span in &mut spans[before..] {
                *span = span.start + offset..span.end + offset;
            }
        }
        offset += line.len();
    }
}

fn find_in_line(text: &str, spans: &mut Vec<Range<usize>>) {
    let pair_reader = READERS.len() - 1;
    for (index, reader) in READERS.iter().enumerate() {
        // A value that is no secret may hold a key that has one
        // (`Client(db_pass="...")` read as `client = Client(...`): the
        // search goes on from where such a refused value starts.
        let mut at = 0;
        while let Some(captures) = reader.captures_at(text, at) {
            let whole = captures.get(0).expect("group 0 always matches");
            let (Some(key), Some(value)) = (captures.name("key"), value_of(&captures)) else {
                at = whole.end();
                continue;
            };
            let accepted = SECRET_WORDS.is_match(key.as_str())
                && !(index == 0 && is_not_an_assignment(key.as_str(), value.as_str()))
                && is_secret_of(key.as_str(), value.as_str(), index == pair_reader);
            if accepted {
                spans.push(value.range());
                at = whole.end();
            } else if SECRET_WORDS.is_match(value.as_str()) {
                at = value.start().max(whole.start() + 1);
            } else {
                at = whole.end();
            }
            while !text.is_char_boundary(at) {
                at += 1;
            }
        }
    }
    for captures in PASSWORD_FLAG.captures_iter(text) {
        let secret = |value: &regex::Match<'_>| is_secret_value(value.as_str(), 4) || is_password_word(value.as_str());
        if let Some(value) = value_of(&captures).filter(secret) {
            spans.push(value.range());
        }
    }
}

/// What the `key: value` reader takes for an assignment and is not:
/// - a path of names joined by `::` (Rust, C++, Ruby: `token::tests::x`),
///   whose second colon starts the "value";
/// - a position in a source file, `FILE:LINE[:COLUMN]` (the GNU Coding
///   Standards' form of error messages, which compilers, linters and test
///   runners print): a key that ends with a file extension
///   (`tokenCart.js`), a value of line and column numbers (`79:3`).
fn is_not_an_assignment(key: &str, value: &str) -> bool {
    let path = value.starts_with(':');
    let file = key.rsplit_once('.').is_some_and(|(name, extension)| {
        !name.is_empty()
            && (1..=5).contains(&extension.len())
            && extension.bytes().all(|byte| byte.is_ascii_lowercase() || byte.is_ascii_digit())
            && extension.bytes().next().is_some_and(|byte| byte.is_ascii_lowercase())
    });
    let position = !value.is_empty()
        && value
            .trim_end_matches(':')
            .split(':')
            .all(|part| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()));
    path || (file && position)
}

/// Whether `value` is a secret under `key`: the stronger what the key
/// says, the less the value has to show.
fn is_secret_of(key: &str, value: &str, pair: bool) -> bool {
    if pair {
        is_pair_key(key) && is_secret_value(value, 4)
    } else if is_password_key(key) {
        is_secret_value(value, 6) || is_password_word(value)
    } else if is_secret_key(key) {
        is_secret_value(value, 6)
    } else if is_key_named(key) || is_credential_id(key) {
        is_key_value(value)
    } else {
        false
    }
}

fn value_of<'a>(captures: &Captures<'a>) -> Option<regex::Match<'a>> {
    captures.name("quoted").or_else(|| captures.name("bare"))
}

/// A value that is a secret, given a key that says it may be one: long
/// enough, random-looking, and not a placeholder, a reference, the name of
/// a secret, a type name or the redaction marker.
fn is_secret_value(value: &str, min_chars: usize) -> bool {
    let value = value.trim();
    if value.chars().count() < min_chars || value.contains(crate::REDACTED) {
        return false;
    }
    if is_stand_in(value) || is_reference(value) || is_secret_name(value) || is_type_name(value) {
        return false;
    }
    if min_chars < 6 {
        // A short password of a pair: anything but a plain word.
        return !value.bytes().all(|byte| byte.is_ascii_lowercase());
    }
    looks_random(value)
}

/// Under a name that only ends in `key`, a value must show it is random:
/// long with entropy, or shorter with three kinds of character.
fn is_key_value(value: &str) -> bool {
    let bytes = value.trim().as_bytes();
    let kinds = [
        bytes.iter().any(u8::is_ascii_uppercase),
        bytes.iter().any(u8::is_ascii_lowercase),
        bytes.iter().any(u8::is_ascii_digit),
        bytes.iter().any(|byte| !byte.is_ascii_alphanumeric()),
    ];
    let kinds = kinds.iter().filter(|kind| **kind).count();
    let long_and_random = bytes.len() >= 16 && crate::entropy::shannon(bytes) >= 3.0;
    (long_and_random || (bytes.len() >= 8 && kinds >= 3)) && is_secret_value(value, 8)
}

/// Under a password key, a plain word is a password too (`goodspec`),
/// unless it is a word of code or of a form (`string`, `required`).
fn is_password_word(value: &str) -> bool {
    const NOT_PASSWORDS: &[&str] = &[
        "string",
        "required",
        "optional",
        "boolean",
        "number",
        "integer",
        "hidden",
        "masked",
        "secret",
        "password",
        "passwd",
        "undefined",
        "nullable",
        "changeme",
        "example",
        "sample",
        "dummy",
        "placeholder",
        "redacted",
        "default",
        "unknown",
        "missing",
        "invalid",
        "encrypted",
        "hashed",
        "prompt",
        "readonly",
        "disabled",
        "enabled",
        "text",
        "field",
        "value",
        "input",
        "secure",
        "private",
        "public",
        "generated",
        "random",
        "empty",
    ];
    let value = value.trim();
    value.len() >= 6
        && value.bytes().all(|byte| byte.is_ascii_lowercase())
        && !NOT_PASSWORDS.contains(&value)
        && !crate::placeholders::looks_like_placeholder(value)
}

/// `SecretStr`, `PasswordField`, `Option<String>`: CamelCase words are
/// types and classes, not secrets.
fn is_type_name(value: &str) -> bool {
    static TYPE: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"^(?:[A-Z][a-z]+)+(?:[<\[].*)?$").expect("type name regex compiles"));
    TYPE.is_match(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secrets(text: &str) -> Vec<&str> {
        let mut spans = Vec::new();
        find(text, &mut spans);
        spans.iter().map(|span| &text[span.clone()]).collect()
    }

    #[test]
    fn each_syntax_yields_the_value_alone() {
        for (text, secret) in [
            ("DB_PASSWORD=hunter2!", "hunter2!"),
            ("export API_TOKEN='q8Xv2LpA9sKe'", "q8Xv2LpA9sKe"),
            ("password: \"Tr0ub4dor&3\"", "Tr0ub4dor&3"),
            ("STRIPE_KEY ?= 4f9a8e7d6c5b4a3f2e1d0c9b", "4f9a8e7d6c5b4a3f2e1d0c9b"),
            ("SECRET ::= 9e8d7c6b5a4f3e2d1c0b", "9e8d7c6b5a4f3e2d1c0b"),
            ("  password 'S3cretPa55'", "S3cretPa55"),
            ("<password>Sup3r$ecret</password>", "Sup3r$ecret"),
            ("<entry key=\"apiToken\">a1b2c3d4e5f6g7h8</entry>", "a1b2c3d4e5f6g7h8"),
            ("<add key=\"ClientSecret\" value=\"zQ8-xP2~vL5.nR7\"/>", "zQ8-xP2~vL5.nR7"),
            ("deploy --db-password s3cr3t-V4lue --verbose", "s3cr3t-V4lue"),
            ("mysql -u root -pRootPa55 shop", "RootPa55"),
            ("requests.get(url, auth=('admin', 'pa55word'))", "pa55word"),
            ("heroku_api_key = \"01234567-89ab-4cde-8f01-23456789abcd\"", "01234567-89ab-4cde-8f01-23456789abcd"),
            ("AZURE_CLIENT_ID=9f8e7d6c-5b4a-4c3d-8e2f-1a0b9c8d7e6f", "9f8e7d6c-5b4a-4c3d-8e2f-1a0b9c8d7e6f"),
            (
                "  CC_TEST_REPORTER_ID: 945dfb58a832d233a3caeb84e3e6d3be212e8c7a",
                "945dfb58a832d233a3caeb84e3e6d3be212e8c7a",
            ),
        ] {
            assert_eq!(secrets(text), vec![secret], "{text}");
        }
    }

    #[test]
    fn names_references_types_and_placeholders_are_kept() {
        for text in [
            "CREDENTIALS_ID = \"K8S_CRED\"",
            "password: ${DB_PASSWORD}",
            "token = os.environ[\"GITHUB_TOKEN\"]",
            "api_key: SecretStr = Field(...)",
            "secret: str",
            "password = config.database.password",
            "API_KEY=YOUR_API_KEY_HERE",
            "aws_secret_access_key = xxxxxxxxxxxxxxxxxxxxxxxxxxxx",
            "primary_key = \"a8f5f167f44f4964e6c998dee827110c\"",
            "token_count: 4096",
            "secret_name: prod-db-password",
            "password: required",
            "client_id: my-service",
            "request_id=4f9a8e7d6c5b4a3f",
        ] {
            assert!(secrets(text).is_empty(), "{text}: {:?}", secrets(text));
        }
    }
}
