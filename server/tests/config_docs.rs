//! The book's option tables (`docs/guide/*.md`) are the configuration's:
//! every option a table names is one the server reads, every option the
//! server reads is named in a table, and a default written as one plain
//! value is the default the server takes. An option renamed, added or
//! given another default without its page fails here.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

/// Every option of the configuration, by its TOML path, with its default.
fn options() -> BTreeMap<String, Value> {
    fn walk(prefix: &str, value: &Value, out: &mut BTreeMap<String, Value>) {
        match value {
            Value::Object(fields) if !fields.is_empty() => {
                for (key, field) in fields {
                    let path = if prefix.is_empty() { key.clone() } else { format!("{prefix}.{key}") };
                    walk(&path, field, out);
                }
            }
            _ => {
                out.insert(prefix.to_owned(), value.clone());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk("", &serde_json::to_value(lore_server::Config::default()).unwrap(), &mut out);
    out
}

/// One documented row: the options its first cell names (a `.key` or a
/// bare `key` after the first is a sibling of the first) and its default
/// cell.
fn documented() -> Vec<(String, Vec<String>, String)> {
    let guide = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/guide");
    let mut rows = Vec::new();
    for entry in std::fs::read_dir(&guide).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        let page = path.file_name().unwrap().to_string_lossy().into_owned();
        let mut default_column = None;
        for line in text.lines() {
            let cells: Vec<&str> = line.trim().trim_matches('|').split('|').map(str::trim).collect();
            if line.starts_with("| Option") || line.starts_with("| Key") || line.starts_with("| Setting") {
                default_column = cells.iter().position(|cell| *cell == "Default");
                continue;
            }
            let (Some(column), true) = (default_column, line.starts_with("| `")) else {
                if !line.starts_with('|') {
                    default_column = None;
                }
                continue;
            };
            let names: Vec<&str> = cells[0].split('`').skip(1).step_by(2).collect();
            let Some(first) = names.first() else { continue };
            // `[[qa.instructions]]`: a list of tables, documented whole.
            if let Some(list) = first.strip_prefix("[[").and_then(|list| list.strip_suffix("]]")) {
                rows.push((page.clone(), vec![list.to_owned()], String::new()));
                continue;
            }
            if first.starts_with('-') {
                continue;
            }
            let parent = first.rsplit_once('.').map_or("", |(parent, _)| parent);
            let keys = names
                .iter()
                .enumerate()
                .map(|(index, name)| {
                    let name = name.trim_start_matches('.');
                    if index == 0 || parent.is_empty() || name.contains('.') {
                        name.to_owned()
                    } else {
                        format!("{parent}.{name}")
                    }
                })
                .collect();
            rows.push((page.clone(), keys, cells.get(column).copied().unwrap_or_default().to_owned()));
        }
    }
    rows
}

#[test]
fn every_option_is_on_a_page_with_its_default_and_every_option_on_a_page_is_read() {
    let options = options();
    let rows = documented();
    assert!(rows.len() > 60, "the option tables were not read: {rows:?}");
    let mut named = std::collections::BTreeSet::new();
    let mut problems = Vec::new();
    for (page, keys, default) in &rows {
        // One plain value for one option: the default the server takes.
        let plain: Vec<&str> = default.split('`').skip(1).step_by(2).collect();
        for (index, key) in keys.iter().enumerate() {
            // An option that holds a table or a list is documented whole.
            let known =
                options.contains_key(key) || options.keys().any(|option| option.starts_with(&format!("{key}.")));
            if !known {
                problems.push(format!("{page}: `{key}` is not an option of the server"));
                continue;
            }
            named.insert(key.clone());
            let (Some(value), Some(written)) = (options.get(key), plain.get(index)) else { continue };
            if plain.len() != keys.len() {
                continue;
            }
            let actual = match value {
                Value::String(text) => text.clone(),
                Value::Null => continue,
                other => other.to_string(),
            };
            let same = actual == *written
                || written.parse::<f64>().ok().zip(actual.parse::<f64>().ok()).is_some_and(|(a, b)| a == b);
            // Paths under the cache are written relative to it.
            if !same && !written.contains('<') && !written.starts_with('[') {
                problems.push(format!("{page}: `{key}` defaults to {actual}, the page says {written}"));
            }
        }
    }
    for option in options.keys() {
        let documented = named.iter().any(|key| option == key || option.starts_with(&format!("{key}.")));
        if !documented {
            problems.push(format!("`{option}` is on no page of docs/guide/"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
