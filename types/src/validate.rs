//! Checks on input that name the offending field. The gRPC conversions and
//! the console's forms use them for requests, and document indexing for
//! what it reads from files, so a document on disk meets the same limits as
//! an UpsertEntry.

use uuid::Uuid;

use crate::Error;

/// A problem with one field of the input.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {reason}")]
pub struct FieldError {
    pub field: String,
    pub reason: String,
}

impl FieldError {
    pub fn new(field: impl Into<String>, reason: impl Into<String>) -> Self {
        Self { field: field.into(), reason: reason.into() }
    }

    /// The same error under a parent field: `occurred_at` -> `action.occurred_at`.
    pub fn within(self, parent: &str) -> Self {
        Self { field: format!("{parent}.{}", self.field), reason: self.reason }
    }
}

impl From<FieldError> for Error {
    fn from(error: FieldError) -> Self {
        Error::invalid(error.field, error.reason)
    }
}

pub type FieldResult<T> = Result<T, FieldError>;

/// Identifiers (agent, epic, issue, supervisor) are at most this long.
const MAX_IDENTIFIER_CHARS: usize = 256;

/// A project name: 1 to 128 characters of A-Z, a-z, 0-9, '.', '_' or '-'.
pub fn project(field: &str, value: &str) -> FieldResult<String> {
    // The request's own project names its span; nested ones (an Ingest
    // batch's actions) do not.
    if field == "project" {
        tracing::Span::current().record("lore.project", value);
    }
    if value.is_empty() {
        return Err(FieldError::new(field, "required"));
    }
    let valid = value.len() <= 128
        && value.bytes().all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'.' | b'_' | b'-'));
    if !valid {
        return Err(FieldError::new(field, "must be 1 to 128 characters of A-Z, a-z, 0-9, '.', '_' or '-'"));
    }
    Ok(value.to_owned())
}

/// Free text (markdown allowed): bounded, and no NUL, which PostgreSQL
/// cannot store in text.
pub fn text(field: &str, value: &str, max_chars: usize, required: bool) -> FieldResult<String> {
    if required && value.trim().is_empty() {
        return Err(FieldError::new(field, "required"));
    }
    if value.contains('\0') {
        return Err(FieldError::new(field, "must not contain NUL bytes"));
    }
    if value.len() > max_chars && value.chars().count() > max_chars {
        return Err(FieldError::new(field, format!("longer than {max_chars} characters")));
    }
    Ok(value.to_owned())
}

/// A one-line name (title, category, tag, key): bounded, no control
/// characters.
pub fn name(field: &str, value: &str, max_chars: usize, required: bool) -> FieldResult<String> {
    let value = value.trim();
    if required && value.is_empty() {
        return Err(FieldError::new(field, "required"));
    }
    if value.chars().any(char::is_control) {
        return Err(FieldError::new(field, "must not contain control characters (NUL, newline, ...)"));
    }
    if value.chars().count() > max_chars {
        return Err(FieldError::new(field, format!("longer than {max_chars} characters")));
    }
    Ok(value.to_owned())
}

pub fn optional_name(field: &str, value: &str, max_chars: usize) -> FieldResult<Option<String>> {
    let value = name(field, value, max_chars, false)?;
    Ok((!value.is_empty()).then_some(value))
}

/// A list of free-text items.
pub fn list(field: &str, values: &[String], max_items: usize, max_chars: usize) -> FieldResult<Vec<String>> {
    if values.len() > max_items {
        return Err(FieldError::new(field, format!("{} items, over the limit of {max_items}", values.len())));
    }
    values.iter().enumerate().map(|(index, value)| text(&format!("{field}[{index}]"), value, max_chars, true)).collect()
}

/// A list of free-text items, each trimmed, duplicates dropped (symptoms,
/// root causes).
pub fn distinct_texts(field: &str, values: &[String], max_items: usize, max_chars: usize) -> FieldResult<Vec<String>> {
    let mut distinct: Vec<String> = Vec::with_capacity(values.len());
    for item in list(field, values, max_items, max_chars)? {
        let item = item.trim().to_owned();
        if !distinct.contains(&item) {
            distinct.push(item);
        }
    }
    Ok(distinct)
}

/// Tags: names, lowercased, duplicates dropped.
pub fn tags(field: &str, values: &[String], max_tags: usize, max_chars: usize) -> FieldResult<Vec<String>> {
    if values.len() > max_tags {
        return Err(FieldError::new(field, format!("{} tags, over the limit of {max_tags}", values.len())));
    }
    let mut tags = Vec::with_capacity(values.len());
    for (index, value) in values.iter().enumerate() {
        let tag = name(&format!("{field}[{index}]"), value, max_chars, true)?.to_lowercase();
        if !tags.contains(&tag) {
            tags.push(tag);
        }
    }
    Ok(tags)
}

pub fn required_uuid(field: &str, value: &str) -> FieldResult<Uuid> {
    if value.is_empty() {
        return Err(FieldError::new(field, "required"));
    }
    Uuid::parse_str(value).map_err(|_| FieldError::new(field, format!("{value:?} is not a UUID")))
}

pub fn optional_uuid(field: &str, value: &str) -> FieldResult<Option<Uuid>> {
    if value.is_empty() { Ok(None) } else { required_uuid(field, value).map(Some) }
}

/// A free identifier: no NUL or other control characters, bounded length.
pub fn identifier(field: &str, value: &str, required: bool) -> FieldResult<String> {
    if required && value.is_empty() {
        return Err(FieldError::new(field, "required"));
    }
    if value.chars().count() > MAX_IDENTIFIER_CHARS {
        return Err(FieldError::new(field, format!("longer than {MAX_IDENTIFIER_CHARS} characters")));
    }
    if value.chars().any(char::is_control) {
        return Err(FieldError::new(field, "must not contain control characters (NUL, newline, ...)"));
    }
    Ok(value.to_owned())
}

/// An action type: lowercase identifier `[a-z0-9_.-]{1,64}` (input is
/// trimmed and lowercased first).
pub fn action_type(field: &str, value: &str) -> FieldResult<String> {
    let normalized = value.trim().to_ascii_lowercase();
    let valid = (1..=64).contains(&normalized.len())
        && normalized
            .bytes()
            .all(|byte| byte.is_ascii_lowercase() || byte.is_ascii_digit() || matches!(byte, b'_' | b'.' | b'-'));
    if !valid {
        return Err(FieldError::new(field, "must be 1 to 64 characters of a-z, 0-9, '_', '.' or '-'"));
    }
    Ok(normalized)
}

pub fn action_types(field: &str, values: &[String]) -> FieldResult<Vec<String>> {
    values.iter().enumerate().map(|(index, value)| action_type(&format!("{field}[{index}]"), value)).collect()
}

pub fn optional_text(field: &str, value: &str) -> FieldResult<Option<String>> {
    if value.is_empty() { Ok(None) } else { identifier(field, value, false).map(Some) }
}

/// Distinct ids, at most `max`, each named by its index when malformed.
pub fn uuids(field: &str, values: &[String], max: usize) -> FieldResult<Vec<Uuid>> {
    if values.is_empty() {
        return Err(FieldError::new(field, "at least one is required"));
    }
    if values.len() > max {
        return Err(FieldError::new(field, format!("{} ids, over the limit of {max}", values.len())));
    }
    let mut ids = Vec::with_capacity(values.len());
    for (index, value) in values.iter().enumerate() {
        let id = required_uuid(&format!("{field}[{index}]"), value)?;
        if ids.contains(&id) {
            return Err(FieldError::new(format!("{field}[{index}]"), format!("{id} is listed twice")));
        }
        ids.push(id);
    }
    Ok(ids)
}
