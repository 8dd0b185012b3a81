//! Markdown documents as knowledge entries: YAML front matter, title,
//! summary and body.
//!
//! # Front matter
//! YAML between a first line `---` and the next line `---` (or `...`). Keys
//! read, all optional:
//! - `id` (or `kb_id`, as a debugger's knowledge base names it; a string or
//!   number): the entry's key, which keeps its identity when the file is
//!   renamed or moved;
//! - `title`, `category`, `summary` (or `description`);
//! - `tags` and `keywords`: a list of strings or one comma-separated string;
//! - `status`: `obsolete`, `deprecated`, `archived`, `superseded`,
//!   `retired` or `outdated` take the entry out of search; any other word
//!   (`active`, `verified`, `resolved`, `draft`...) keeps it in, and the word
//!   itself stays in the front matter;
//! - `severity`: `low`, `medium`, `high` or `critical`;
//! - `symptoms` (the error messages it is known by) and `root_causes` (or
//!   `root_cause`): a list of strings or one string;
//! - `usage_count`: uses before Lore (a whole number), and `last_used`: when
//!   (a date or an RFC 3339 time);
//! - `solutions`: a list of strings or of `{description: ...}`; when the key
//!   is absent, the entry's solutions stay as they are.
//!
//! Other keys are kept as the entry's front matter. Without a title in the
//! front matter, the first heading is the title, and failing that the file
//! name. Without a summary, the first paragraph is.
//!
//! Nothing here calls a model: indexing is parse, chunk, embed, store.

use pulldown_cmark::{Event, HeadingLevel, Parser, Tag, TagEnd};
use serde_json::{Map, Value};

use lore_types::actions::StoredName as _;
use lore_types::knowledge::limits::{
    MAX_BODY_BYTES, MAX_CATEGORY_CHARS, MAX_CITED_FILES, MAX_KEY_CHARS, MAX_PATH_CHARS, MAX_SOLUTION_CHARS,
    MAX_SOLUTIONS, MAX_SUMMARY_CHARS, MAX_SUPERSEDES, MAX_SYMPTOM_CHARS, MAX_SYMPTOMS, MAX_TAG_CHARS, MAX_TAGS,
    MAX_TITLE_CHARS,
};
use lore_types::knowledge::{EntryStatus, Severity};
use lore_types::validate::{self, FieldError};

/// Statuses that take a document out of search; any other keeps it in.
const RETIRED: [&str; 6] = ["obsolete", "deprecated", "archived", "superseded", "retired", "outdated"];

/// A summary taken from the first paragraph is cut near this many characters.
const DERIVED_SUMMARY_CHARS: usize = 500;

/// A markdown document: the front matter, then the body. JSON is YAML:
/// each value on its own line is valid YAML flow syntax.
pub fn with_front_matter(front_matter: &Map<String, Value>, body: &str) -> String {
    let mut text = String::from("---\n");
    for (key, value) in front_matter {
        text.push_str(&format!("{key}: {value}\n"));
    }
    text.push_str("---\n");
    text.push_str(body);
    if !body.ends_with('\n') {
        text.push('\n');
    }
    text
}

/// A markdown document, parsed and checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Document {
    pub key: Option<String>,
    pub title: String,
    pub category: String,
    pub tags: Vec<String>,
    pub status: EntryStatus,
    pub severity: Option<Severity>,
    pub summary: String,
    /// The markdown after the front matter.
    pub body: String,
    /// `None` when the front matter has no `solutions` key.
    pub solutions: Option<Vec<String>>,
    pub symptoms: Vec<String>,
    pub root_causes: Vec<String>,
    pub usage_count: i64,
    pub last_used_at: Option<chrono::DateTime<chrono::Utc>>,
    /// Repository files it cites (`files:`): it is stale where all are gone.
    pub cited_files: Vec<String>,
    /// Entries it replaces (`supersedes:`, ids or keys).
    pub supersedes: Vec<String>,
    /// The whole front matter, as JSON.
    pub front_matter: Map<String, Value>,
    /// BLAKE3 of the document as given: unchanged documents are not
    /// indexed again.
    pub hash: Vec<u8>,
}

/// Why a document cannot be indexed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DocumentError {
    #[error("{bytes} bytes, over the limit of {limit}")]
    TooLarge { bytes: usize, limit: usize },
    #[error("a binary file (NUL byte at offset {0})")]
    Binary(usize),
    #[error("not UTF-8 text (invalid byte at offset {0})")]
    NotUtf8(usize),
    #[error("front matter: {0}")]
    FrontMatter(String),
    #[error("front matter {}: {}", .0.field, .0.reason)]
    Field(FieldError),
}

impl From<FieldError> for DocumentError {
    fn from(error: FieldError) -> Self {
        Self::Field(error)
    }
}

/// A document read from a file: checks size, NUL bytes and UTF-8 before
/// parsing. `max_bytes` is capped at the body limit.
pub fn parse_bytes(file_name: &str, bytes: &[u8], max_bytes: usize) -> Result<Document, DocumentError> {
    let limit = max_bytes.min(MAX_BODY_BYTES);
    if bytes.len() > limit {
        return Err(DocumentError::TooLarge { bytes: bytes.len(), limit });
    }
    if let Some(offset) = bytes.iter().position(|&byte| byte == 0) {
        return Err(DocumentError::Binary(offset));
    }
    let text = std::str::from_utf8(bytes).map_err(|error| DocumentError::NotUtf8(error.valid_up_to()))?;
    parse(file_name, text)
}

/// A document given as text (IndexDocument, or a file already read).
/// `file_name` is the fallback title.
pub fn parse(file_name: &str, text: &str) -> Result<Document, DocumentError> {
    if text.len() > MAX_BODY_BYTES {
        return Err(DocumentError::TooLarge { bytes: text.len(), limit: MAX_BODY_BYTES });
    }
    if let Some(offset) = text.find('\0') {
        return Err(DocumentError::Binary(offset));
    }
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let (front_matter, body) = split_front_matter(text)?;
    let fields = FrontMatter(&front_matter);
    let (heading, first_paragraph) = outline(body);

    let title = match fields.string("title")? {
        Some(title) => title,
        None => heading.unwrap_or_else(|| title_from_file_name(file_name)),
    };
    let summary = match fields.string("summary")?.or(fields.string("description")?) {
        Some(summary) => summary,
        None => cut(&first_paragraph.unwrap_or_default(), DERIVED_SUMMARY_CHARS),
    };
    let mut tags = fields.strings("tags")?.unwrap_or_default();
    tags.extend(fields.strings("keywords")?.unwrap_or_default());
    let key = key_of(&front_matter)?;
    let status = match fields.string("status")? {
        Some(status) if RETIRED.contains(&status.trim().to_lowercase().as_str()) => EntryStatus::Obsolete,
        _ => EntryStatus::Active,
    };
    let mut root_causes = fields.strings_or_lines("root_causes")?;
    root_causes.extend(fields.strings_or_lines("root_cause")?);
    let severity = fields.string("severity")?.map(|severity| severity_of(&severity)).transpose()?;
    Ok(Document {
        key,
        title: validate::name("title", &single_line(&title), MAX_TITLE_CHARS, true)?,
        category: validate::name(
            "category",
            &fields.string("category")?.unwrap_or_default(),
            MAX_CATEGORY_CHARS,
            false,
        )?
        .to_lowercase(),
        tags: validate::tags("tags", &tags, MAX_TAGS, MAX_TAG_CHARS)?,
        status,
        severity,
        summary: validate::text("summary", &summary, MAX_SUMMARY_CHARS, false)?,
        body: body.to_owned(),
        solutions: fields.solutions()?,
        symptoms: validate::distinct_texts(
            "symptoms",
            &fields.strings_or_lines("symptoms")?,
            MAX_SYMPTOMS,
            MAX_SYMPTOM_CHARS,
        )?,
        root_causes: validate::distinct_texts("root_causes", &root_causes, MAX_SYMPTOMS, MAX_SYMPTOM_CHARS)?,
        usage_count: fields.count("usage_count")?,
        last_used_at: fields.time("last_used")?,
        cited_files: validate::list(
            "files",
            &fields.strings("files")?.unwrap_or_default(),
            MAX_CITED_FILES,
            MAX_PATH_CHARS,
        )?,
        supersedes: validate::list(
            "supersedes",
            &fields.strings("supersedes")?.unwrap_or_default(),
            MAX_SUPERSEDES,
            MAX_KEY_CHARS,
        )?,
        hash: blake3::hash(text.as_bytes()).as_bytes().to_vec(),
        front_matter,
    })
}

/// The document's key: its front matter's `id`, else its `kb_id`.
fn key_of(front_matter: &Map<String, Value>) -> Result<Option<String>, DocumentError> {
    let id_key = if front_matter.get("id").is_some_and(|id| !id.is_null()) { "id" } else { "kb_id" };
    Ok(match front_matter.get(id_key) {
        None | Some(Value::Null) => None,
        Some(Value::String(id)) => validate::optional_name(id_key, id, MAX_KEY_CHARS)?,
        Some(Value::Number(id)) => Some(id.to_string()),
        Some(_) => return Err(DocumentError::FrontMatter(format!("{id_key} must be a string or a number"))),
    })
}

fn severity_of(severity: &str) -> Result<Severity, DocumentError> {
    Severity::parse(&severity.to_lowercase()).ok_or_else(|| {
        DocumentError::FrontMatter(format!("severity {severity:?} is not one of low, medium, high, critical"))
    })
}

/// The front matter as a JSON object, and the rest of the text.
fn split_front_matter(text: &str) -> Result<(Map<String, Value>, &str), DocumentError> {
    let mut lines = text.split_inclusive('\n');
    let Some(first) = lines.next() else { return Ok((Map::new(), text)) };
    if first.trim_end() != "---" {
        return Ok((Map::new(), text));
    }
    let mut offset = first.len();
    for line in lines {
        if matches!(line.trim_end(), "---" | "...") {
            let yaml = &text[first.len()..offset];
            let body = &text[offset + line.len()..];
            return Ok((parse_yaml(yaml)?, body));
        }
        offset += line.len();
    }
    Err(DocumentError::FrontMatter("no closing '---' line".into()))
}

fn parse_yaml(yaml: &str) -> Result<Map<String, Value>, DocumentError> {
    if yaml.trim().is_empty() {
        return Ok(Map::new());
    }
    match serde_saphyr::from_str::<Value>(yaml) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(Value::Null) => Ok(Map::new()),
        Ok(_) => Err(DocumentError::FrontMatter("must be a mapping of keys to values".into())),
        Err(error) => Err(DocumentError::FrontMatter(first_line(&error.to_string()))),
    }
}

fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or_default().trim().to_owned()
}

/// Typed reads of front matter keys, with errors that name the key.
struct FrontMatter<'a>(&'a Map<String, Value>);

impl FrontMatter<'_> {
    fn string(&self, key: &str) -> Result<Option<String>, DocumentError> {
        match self.0.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(value)) => Ok(Some(value.clone())),
            Some(Value::Number(value)) => Ok(Some(value.to_string())),
            Some(Value::Bool(value)) => Ok(Some(value.to_string())),
            Some(_) => Err(DocumentError::FrontMatter(format!("{key} must be a string"))),
        }
    }

    /// A list of strings, or one comma-separated string.
    fn strings(&self, key: &str) -> Result<Option<Vec<String>>, DocumentError> {
        let invalid =
            || DocumentError::FrontMatter(format!("{key} must be a list of strings or a comma-separated string"));
        match self.0.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(value)) => {
                Ok(Some(value.split(',').map(str::trim).filter(|item| !item.is_empty()).map(str::to_owned).collect()))
            }
            Some(Value::Array(items)) => string_items(items, invalid).map(Some),
            Some(_) => Err(invalid()),
        }
    }

    /// A list of strings or one string, each kept whole (symptoms are
    /// messages: a comma is part of them).
    fn strings_or_lines(&self, key: &str) -> Result<Vec<String>, DocumentError> {
        let invalid = || DocumentError::FrontMatter(format!("{key} must be a string or a list of strings"));
        match self.0.get(key) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::String(value)) => Ok(vec![value.clone()]),
            Some(Value::Array(items)) => string_items(items, invalid),
            Some(_) => Err(invalid()),
        }
    }

    /// A whole number of 0 or more (also as a string of digits).
    fn count(&self, key: &str) -> Result<i64, DocumentError> {
        let invalid = || DocumentError::FrontMatter(format!("{key} must be a whole number of 0 or more"));
        match self.0.get(key) {
            None | Some(Value::Null) => Ok(0),
            Some(Value::Number(number)) => {
                number.as_u64().and_then(|count| i64::try_from(count).ok()).ok_or_else(invalid)
            }
            Some(Value::String(text)) => text.trim().parse::<u32>().map(i64::from).map_err(|_| invalid()),
            Some(_) => Err(invalid()),
        }
    }

    /// A date (`2026-03-01`, midnight UTC) or an RFC 3339 time.
    fn time(&self, key: &str) -> Result<Option<chrono::DateTime<chrono::Utc>>, DocumentError> {
        let Some(text) = self.string(key)? else { return Ok(None) };
        let text = text.trim();
        if let Ok(time) = chrono::DateTime::parse_from_rfc3339(text) {
            return Ok(Some(time.with_timezone(&chrono::Utc)));
        }
        chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d")
            .map(|date| Some(date.and_time(chrono::NaiveTime::MIN).and_utc()))
            .map_err(|_| {
                DocumentError::FrontMatter(format!("{key} {text:?} is not a date (2026-03-01) or an RFC 3339 time"))
            })
    }

    fn solutions(&self) -> Result<Option<Vec<String>>, DocumentError> {
        let Some(value) = self.0.get("solutions") else { return Ok(None) };
        let invalid =
            || DocumentError::FrontMatter("solutions must be a list of strings or of {description: ...}".into());
        let items = match value {
            Value::Null => return Ok(Some(Vec::new())),
            Value::Array(items) => items,
            _ => return Err(invalid()),
        };
        if items.len() > MAX_SOLUTIONS {
            return Err(FieldError::new(
                "solutions",
                format!("{} solutions, over the limit of {MAX_SOLUTIONS}", items.len()),
            )
            .into());
        }
        let mut solutions = Vec::with_capacity(items.len());
        for (index, item) in items.iter().enumerate() {
            let description = match item {
                Value::String(description) => description,
                Value::Object(fields) => match fields.get("description") {
                    Some(Value::String(description)) => description,
                    _ => return Err(invalid()),
                },
                _ => return Err(invalid()),
            };
            let description =
                validate::text(&format!("solutions[{index}]"), description.trim(), MAX_SOLUTION_CHARS, true)?;
            if !solutions.contains(&description) {
                solutions.push(description);
            }
        }
        Ok(Some(solutions))
    }
}

/// The text of the first heading (the first level-1 heading when there is
/// one) and of the first paragraph.
fn outline(markdown: &str) -> (Option<String>, Option<String>) {
    let mut first_heading: Option<(HeadingLevel, String)> = None;
    let mut first_paragraph: Option<String> = None;
    let mut current: Option<String> = None;
    let mut in_heading = None;
    for event in Parser::new(markdown) {
        match event {
            Event::Start(Tag::Heading { level, .. }) => {
                in_heading = Some(level);
                current = Some(String::new());
            }
            Event::Start(Tag::Paragraph) if first_paragraph.is_none() => current = Some(String::new()),
            Event::Text(text) | Event::Code(text) => {
                if let Some(current) = &mut current {
                    current.push_str(&text);
                }
            }
            Event::SoftBreak | Event::HardBreak => {
                if let Some(current) = &mut current {
                    current.push(' ');
                }
            }
            Event::End(TagEnd::Heading(level)) => {
                let text = current.take().unwrap_or_default().trim().to_owned();
                in_heading = None;
                let better = match &first_heading {
                    None => true,
                    Some((known, _)) => level == HeadingLevel::H1 && *known != HeadingLevel::H1,
                };
                if better && !text.is_empty() {
                    first_heading = Some((level, text));
                }
            }
            Event::End(TagEnd::Paragraph) if in_heading.is_none() => {
                if let Some(text) = current.take() {
                    let text = text.trim().to_owned();
                    if first_paragraph.is_none() && !text.is_empty() {
                        first_paragraph = Some(text);
                    }
                }
            }
            _ => {}
        }
    }
    (first_heading.map(|(_, text)| text), first_paragraph)
}

/// `deploy-keys_rotation.md` -> `deploy keys rotation`.
fn title_from_file_name(file_name: &str) -> String {
    let stem = std::path::Path::new(file_name).file_stem().and_then(|stem| stem.to_str()).unwrap_or(file_name);
    let title = stem.replace(['-', '_'], " ");
    if title.trim().is_empty() { "untitled".into() } else { title.trim().to_owned() }
}

/// Control characters (newlines in a YAML block scalar) become spaces.
fn single_line(text: &str) -> String {
    text.split(char::is_control).filter(|part| !part.trim().is_empty()).map(str::trim).collect::<Vec<_>>().join(" ")
}

/// At most about `max` characters, cut at a word boundary, marked with `...`.
fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let head: String = text.chars().take(max).collect();
    let head = match head.rfind(char::is_whitespace) {
        Some(space) if space > max / 2 => &head[..space],
        _ => &head,
    };
    format!("{}...", head.trim_end())
}

/// A front-matter list's items as strings (numbers as written), or the
/// `invalid` error for any other item.
fn string_items(items: &[Value], invalid: impl Fn() -> DocumentError) -> Result<Vec<String>, DocumentError> {
    items
        .iter()
        .map(|item| match item {
            Value::String(value) => Ok(value.clone()),
            Value::Number(value) => Ok(value.to_string()),
            _ => Err(invalid()),
        })
        .collect()
}

#[cfg(test)]
mod tests;
