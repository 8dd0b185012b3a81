//! What is not a secret although it sits where one would: template
//! variables, stand-ins written in documentation, references to where the
//! secret really is, and the names of secrets.

use std::sync::LazyLock;

use regex::Regex;

/// Template variables and stand-ins that are not secrets: `$API_KEY`,
/// `${NPM_TOKEN}`, `%s`, `%(name)s`, `<token>`, `{{ secret }}`, `<%= x %>`,
/// `insert_key_here`, `your-api-key`, `xxxxxxxx`, `********`.
pub fn looks_like_placeholder(value: &str) -> bool {
    static PLACEHOLDER: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"(?ix)^(?:
                \$\{[^}]*\}? | \$[A-Z_][A-Z0-9_]* | %[sd] | %\([a-z_]+\)[sd] | <[^>]*>? | \{\{.*\}\}? | <%.*
                | (?:insert|your|enter|put|add)[_-].*(?:here|key|token|secret|password)
                | .*[_-]here | x{4,} | \*{3,} | \.{3,} | changeme | example | placeholder | redacted | \[redacted\]
            )$",
        )
        .expect("placeholder regex compiles")
    });
    PLACEHOLDER.is_match(value.trim_matches(|character| matches!(character, '"' | '\'')))
}

/// A provider-format match that is a documented stand-in: an example key
/// (`AKIAIOSFODNN7EXAMPLE`), a long masked run (`sk_live_xxxx…` filled to
/// its length), or stand-in words. Shorter runs are left to the format
/// (`AKIAZZZZZZZZZZZZZZZZ` has the shape of a real key id), and to the
/// catalog's rule for that format, whose entropy floor spares this one.
pub(crate) fn is_format_stand_in(secret: &str) -> bool {
    static STAND_IN: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"(?x)
              EXAMPLE$ | (?i:^example) | (?i:x{16,}) | \*{4,} | \.{3} | …
            | (?i:your[_-]?(?:api[_-]?)?(?:key|token|secret|password)) | (?i:[_-]here$)
            ",
        )
        .expect("format stand-in regex compiles")
    });
    looks_like_placeholder(secret) || STAND_IN.is_match(secret)
}

/// A secret a rule found that is a stand-in: a placeholder, a documented
/// example (`AKIAIOSFODNN7EXAMPLE`), a masked run (`sk_live_xxxxxxxxxxxx`,
/// `****`), a run of one character, or a counting sequence.
pub(crate) fn is_stand_in(secret: &str) -> bool {
    static STAND_IN: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"(?x)
              EXAMPLE$ | (?i:^example)
            | (?i:x{5,}|\*{4,}|\#{4,}|\.{3,}|…|_{5,}|•{3,})
            | (?i:your[_-]?(?:api[_-]?)?(?:key|token|secret|password))
            | (?i:[_-]here$) | (?i:^(?:dummy|fake|sample|placeholder|redacted|changeme|replace[_-]?me|todo)\b)
            | 0123456789 | 123456789 | (?i:abcdefg)
            | (?i:^(?:password|passwd|secret|token|pass|apikey|api_key)$)
            ",
        )
        .expect("stand-in regex compiles")
    });
    looks_like_placeholder(secret) || STAND_IN.is_match(secret) || has_long_run(secret)
}

/// Eight times the same character: a real random secret almost never.
fn has_long_run(secret: &str) -> bool {
    let bytes = secret.as_bytes();
    bytes.windows(8).any(|window| window.iter().all(|byte| *byte == window[0]))
}

/// A value that points at the secret instead of being it: an environment
/// or template reference (`$X`, `%X%`, `env.X`, `secrets.X`,
/// `process.env.X`, `os.environ["X"]`, `System.getenv("X")`), a call, or a
/// dotted path of names (`config.db.password`).
pub(crate) fn is_reference(value: &str) -> bool {
    static REFERENCE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"(?x)^(?:
                [$%@&\#] | \{ | <
              | (?i:(?:vault|ssm|arn|op|secretsmanager|keyvault|gcpsm|awssm|file|env|k8s|kubernetes)[:/])
              | (?i:(?:process\.)?env\.|os\.environ|os\.getenv|getenv|system\.getenv|secrets\.|vars\.|var\.|local\.|data\.|settings\.|config\.|params\.|values\.|props\.|this\.|self\.)
              | [A-Za-z_][A-Za-z0-9_]*\(
              | [A-Za-z_][A-Za-z_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+$
            )",
        )
        .expect("reference regex compiles")
    });
    // Code, not a value: a call, a concatenation, an index (`sys.argv[2]`),
    // a format string (`%s`, `{}`, `{0}`).
    static CODE: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"\(\)| \+ |^[A-Za-z_][\w.]*\[|%[sdrf]|\{\d*\}").expect("code regex compiles"));
    REFERENCE.is_match(value) || CODE.is_match(value) || is_prose(value)
}

/// Words with spaces (`Enter Password: `): a prompt or a sentence.
fn is_prose(value: &str) -> bool {
    let words: Vec<&str> = value.split_whitespace().collect();
    words.len() >= 2
        && words.iter().all(|word| {
            let word = word.trim_end_matches([':', '.', ',', '!', '?']);
            !word.is_empty() && word.chars().all(char::is_alphabetic)
        })
}

/// The name of a secret, not the secret: `K8S_CRED`, `DB_PASSWORD`,
/// `prod-api-token` (words joined, no digit run or mixed case of a random
/// string).
pub(crate) fn is_secret_name(value: &str) -> bool {
    static NAME: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^(?:[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|[a-z][a-z0-9]*(?:[-_][a-z][a-z0-9]*)+)$")
            .expect("secret name regex compiles")
    });
    NAME.is_match(value) && value.bytes().filter(u8::is_ascii_digit).count() <= 2
}

/// A value of a generic rule must look random to be redacted: not a
/// placeholder, at least 6 characters, and either a digit or symbol in it or
/// mixed case beyond a capital letter. `notapassword`, `String` and
/// `insert_key_here` are not secrets.
pub(crate) fn looks_random(value: &str) -> bool {
    if value.chars().count() < 6 || looks_like_placeholder(value) {
        return false;
    }
    let has_digit = value.bytes().any(|byte| byte.is_ascii_digit());
    let has_inner_upper = value.bytes().skip(1).any(|byte| byte.is_ascii_uppercase());
    let has_lower = value.bytes().any(|byte| byte.is_ascii_lowercase());
    let has_symbol = value.bytes().any(|byte| !byte.is_ascii_alphanumeric() && byte != b'_');
    has_digit || has_symbol || (has_inner_upper && has_lower)
}
