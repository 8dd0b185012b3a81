//! Standing instructions: an approved promotion is written into a block of
//! a repository's instructions file (CLAUDE.md, AGENTS.md), which agents
//! read at every start; a rollback takes exactly its entry out again.
//!
//! The file is edited where the repository lives: on the agent's machine by
//! `lore instructions sync` and the SessionStart hook ([`sync`] applies the
//! project's whole list at once), or, for a single host, by the server.
//!
//! The block is delimited by marker comments, and each promotion is an entry
//! of its own between two more, whose opening marker carries a hash of the
//! text Lore wrote. Lines outside the block are never touched. An entry
//! whose text no longer has its hash was edited by a person: Lore leaves it
//! as it is and reports the conflict instead of clobbering the edit.

use std::path::Path;

const BLOCK_BEGIN: &str = "<!-- lore:standing-instructions begin";
const BLOCK_END: &str = "<!-- lore:standing-instructions end -->";
const ENTRY_BEGIN: &str = "<!-- lore:entry ";
const ENTRY_END: &str = "<!-- lore:end ";
const BLOCK_HEADER: &str = "<!-- lore:standing-instructions begin: written by Lore from approved QA promotions. \
                            Lines outside this block are yours; an entry you edit is left alone. -->";
const HEADING: &str = "## Standing instructions (from Lore)";

/// What an edit of the file came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Edit {
    /// The new text of the file.
    Changed(String),
    /// Nothing to do: the entry is already as asked.
    Unchanged,
    /// Left as it is, and why.
    Conflict(String),
}

/// Writes `body` as the entry `key`: added at the end of the block (the
/// block is added at the end of the file when missing), or replacing the
/// entry Lore wrote before, unless a person edited it.
pub fn upsert(text: &str, key: &str, body: &str) -> Edit {
    let block = match Block::find(text) {
        Ok(block) => block,
        Err(problem) => return Edit::Conflict(problem),
    };
    let entry = render_entry(key, body);
    let Some(block) = block else {
        let mut text = text.to_owned();
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(&format!("{BLOCK_HEADER}\n{HEADING}\n\n{entry}{BLOCK_END}\n"));
        return Edit::Changed(text);
    };
    match block.entry(text, key) {
        Err(problem) => Edit::Conflict(problem),
        Ok(Some(found)) if found.edited => Edit::Conflict(edited(key)),
        Ok(Some(found)) if text[found.start..found.end] == entry => Edit::Unchanged,
        Ok(Some(found)) => Edit::Changed(format!("{}{entry}{}", &text[..found.start], &text[found.end..])),
        Ok(None) => Edit::Changed(format!("{}{entry}{}", &text[..block.end], &text[block.end..])),
    }
}

/// Takes the entry `key` out, exactly its lines, unless a person edited it.
pub fn remove(text: &str, key: &str) -> Edit {
    let block = match Block::find(text) {
        Ok(Some(block)) => block,
        Ok(None) => return Edit::Unchanged,
        Err(problem) => return Edit::Conflict(problem),
    };
    match block.entry(text, key) {
        Err(problem) => Edit::Conflict(problem),
        Ok(None) => Edit::Unchanged,
        Ok(Some(found)) if found.edited => Edit::Conflict(edited(key)),
        Ok(Some(found)) => Edit::Changed(format!("{}{}", &text[..found.start], &text[found.end..])),
    }
}

fn edited(key: &str) -> String {
    format!("the entry {key} was edited by hand since Lore wrote it; it is left as it is")
}

fn render_entry(key: &str, body: &str) -> String {
    let body = body.trim_end().replace("<!--", "&lt;!--");
    format!("{ENTRY_BEGIN}{key} hash={} -->\n{body}\n{ENTRY_END}{key} -->\n", digest(&body))
}

fn digest(body: &str) -> String {
    blake3::hash(body.as_bytes()).to_hex()[..16].to_owned()
}

/// The managed block: byte offsets of its first line and of its end marker
/// line (entries go before it).
struct Block {
    start: usize,
    end: usize,
}

/// An entry within the block: its byte range (whole lines) and whether its
/// text still has the hash Lore wrote.
struct Found {
    start: usize,
    end: usize,
    edited: bool,
}

/// The lines of `text` with the byte offset of each.
fn lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.split_inclusive('\n').scan(0, |offset, line| {
        let start = *offset;
        *offset += line.len();
        Some((start, line))
    })
}

impl Block {
    fn find(text: &str) -> Result<Option<Self>, String> {
        let begins: Vec<usize> =
            lines(text).filter(|(_, line)| line.trim_start().starts_with(BLOCK_BEGIN)).map(|(at, _)| at).collect();
        let ends: Vec<usize> = lines(text).filter(|(_, line)| line.trim() == BLOCK_END).map(|(at, _)| at).collect();
        match (begins.as_slice(), ends.as_slice()) {
            ([], []) => Ok(None),
            ([start], [end]) if start < end => Ok(Some(Self { start: *start, end: *end })),
            _ => Err("the markers of Lore's block are missing, doubled or out of order; fix them by hand".into()),
        }
    }

    fn entry(&self, text: &str, key: &str) -> Result<Option<Found>, String> {
        let opening = format!("{ENTRY_BEGIN}{key} hash=");
        let closing = format!("{ENTRY_END}{key} -->");
        let inside = || lines(text).filter(|(at, _)| (self.start..self.end).contains(at));
        let Some((start, first)) = inside().find(|(_, line)| line.trim_start().starts_with(&opening)) else {
            return Ok(None);
        };
        let Some((close, last)) = inside().find(|(at, line)| *at > start && line.trim() == closing) else {
            return Err(format!("the entry {key} has lost its closing marker; fix it by hand"));
        };
        let hash = first.trim().trim_start_matches(&opening).trim_end_matches("-->").trim();
        let body = &text[start + first.len()..close];
        let edited = digest(body.strip_suffix('\n').unwrap_or(body)) != hash;
        Ok(Some(Found { start, end: close + last.len(), edited }))
    }
}

/// One standing instruction as the server lists it: its entry's key
/// (`QA-1a2b3c4d5e6f`) and its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Instruction {
    pub key: String,
    pub body: String,
}

/// What bringing a file to the project's list came to.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Synced {
    /// The new text of the file; `None` when nothing changed.
    pub text: Option<String>,
    /// Keys of the entries added or rewritten.
    pub written: Vec<String>,
    /// Keys of the entries taken out.
    pub removed: Vec<String>,
    /// What was left as it is, and why, one sentence each.
    pub conflicts: Vec<String>,
}

/// Brings Lore's block to the project's list: each instruction written as
/// given, each withdrawn key taken out. Entries a person edited, and
/// markers someone broke, are left as they are and reported. Applying the
/// same list twice changes nothing the second time.
pub fn sync(text: &str, instructions: &[Instruction], withdrawn: &[String]) -> Synced {
    let mut synced = Synced::default();
    let mut current = text.to_owned();
    for instruction in instructions {
        if !valid_key(&instruction.key) {
            synced.conflicts.push(format!("the key {:?} is not one Lore writes; it is skipped", instruction.key));
            continue;
        }
        let edit = upsert(&current, &instruction.key, &instruction.body);
        take(edit, &instruction.key, &mut current, &mut synced.written, &mut synced.conflicts);
    }
    for key in withdrawn {
        if valid_key(key) && !instructions.iter().any(|instruction| &instruction.key == key) {
            let edit = remove(&current, key);
            take(edit, key, &mut current, &mut synced.removed, &mut synced.conflicts);
        }
    }
    if current != text {
        synced.text = Some(current);
    }
    synced
}

/// Keeps an edit's outcome: the new text and the key done, or the conflict.
fn take(edit: Edit, key: &str, current: &mut String, done: &mut Vec<String>, conflicts: &mut Vec<String>) {
    match edit {
        Edit::Changed(text) => {
            *current = text;
            done.push(key.to_owned());
        }
        Edit::Unchanged => {}
        Edit::Conflict(reason) => conflicts.push(reason),
    }
}

/// A key is a marker's word: it must not be able to end the marker.
fn valid_key(key: &str) -> bool {
    (1..=64).contains(&key.len()) && key.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// `before` to `after` as a unified diff of `name`, for `git apply` or a
/// pull request; empty when they are the same. A file that does not exist
/// yet (`before` is `None`) is diffed from `/dev/null`.
pub fn diff(name: &str, before: Option<&str>, after: &str) -> String {
    let old = before.unwrap_or_default();
    if old == after && before.is_some() {
        return String::new();
    }
    let from = if before.is_some() { format!("a/{name}") } else { "/dev/null".to_owned() };
    similar::TextDiff::from_lines(old, after)
        .unified_diff()
        .context_radius(3)
        .header(&from, &format!("b/{name}"))
        .to_string()
}

/// The file's text: `None` when it does not exist, an `InvalidData` error
/// when it is not UTF-8.
pub fn read(path: &Path) -> std::io::Result<Option<String>> {
    match std::fs::read(path) {
        Ok(bytes) => String::from_utf8(bytes).map(Some).map_err(|_| {
            std::io::Error::new(std::io::ErrorKind::InvalidData, format!("{} is not UTF-8 text", path.display()))
        }),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(error),
    }
}

/// Reads the file (empty when missing), applies `edit` and writes the result
/// through a temporary file and a rename, so an agent never reads half of
/// it. `before_write` sees the new content before it lands (the watcher is
/// told to ignore it). Returns what happened and the bytes written, if any.
pub fn apply(
    path: &Path,
    edit: impl FnOnce(&str) -> Edit,
    before_write: impl FnOnce(&[u8]),
) -> std::io::Result<(Edit, Option<Vec<u8>>)> {
    let text = match read(path) {
        Ok(text) => text.unwrap_or_default(),
        Err(error) if error.kind() == std::io::ErrorKind::InvalidData => {
            return Ok((Edit::Conflict("the file is not UTF-8 text".into()), None));
        }
        Err(error) => return Err(error),
    };
    let outcome = edit(&text);
    let Edit::Changed(new_text) = &outcome else { return Ok((outcome, None)) };
    let folder = path.parent().filter(|parent| !parent.as_os_str().is_empty()).unwrap_or(Path::new("."));
    std::fs::create_dir_all(folder)?;
    let mut temporary = tempfile::NamedTempFile::new_in(folder)?;
    std::io::Write::write_all(&mut temporary, new_text.as_bytes())?;
    if let Ok(metadata) = std::fs::metadata(path) {
        temporary.as_file().set_permissions(metadata.permissions())?;
    }
    let bytes = new_text.clone().into_bytes();
    before_write(&bytes);
    temporary.persist(path).map_err(|error| error.error)?;
    Ok((outcome, Some(bytes)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn changed(edit: Edit) -> String {
        match edit {
            Edit::Changed(text) => text,
            other => panic!("expected a change, got {other:?}"),
        }
    }

    const MINE: &str = "# Agents\n\nRun `make test` before you push.\n";

    fn instruction(key: &str, body: &str) -> Instruction {
        Instruction { key: key.into(), body: body.into() }
    }

    #[test]
    fn a_sync_writes_the_list_takes_withdrawn_entries_out_and_is_idempotent() {
        let list = [instruction("QA-1", "**First**: do this."), instruction("QA-2", "**Second**: do that.")];
        let once = sync(MINE, &list, &[]);
        let text = once.text.clone().unwrap();
        assert_eq!(once.written, ["QA-1", "QA-2"]);
        assert!(text.starts_with(MINE) && text.contains("do this.") && text.contains("do that."), "{text}");
        assert_eq!(sync(&text, &list, &[]), Synced::default(), "the second sync changes nothing");

        // QA-2 is rolled back; QA-1's text changes.
        let list = [instruction("QA-1", "**First**: do this, now.")];
        let later = sync(&text, &list, &["QA-2".into(), "QA-9".into()]);
        let later_text = later.text.unwrap();
        assert_eq!((later.written, later.removed), (vec!["QA-1".to_owned()], vec!["QA-2".to_owned()]));
        assert!(!later_text.contains("do that.") && later_text.contains("do this, now."), "{later_text}");

        // Nothing to write and no block: the file is not touched.
        assert_eq!(sync(MINE, &[], &["QA-1".into()]), Synced::default());
    }

    #[test]
    fn a_sync_keeps_hand_edits_and_skips_keys_that_could_break_a_marker() {
        let text = sync(MINE, &[instruction("QA-1", "x")], &[]).text.unwrap();
        let edited = text.replace("\nx\n", "\nx, but only on Fridays\n");
        let synced = sync(&edited, &[instruction("QA-1", "y"), instruction("QA-2", "z")], &[]);
        assert_eq!(synced.written, ["QA-2"]);
        assert!(synced.conflicts[0].contains("edited by hand"), "{:?}", synced.conflicts);
        assert!(synced.text.unwrap().contains("only on Fridays"));
        let sneaky = sync(MINE, &[instruction("QA-1 -->", "x")], &[]);
        assert!(sneaky.text.is_none() && sneaky.conflicts.len() == 1, "{sneaky:?}");
    }

    #[test]
    fn the_diff_is_a_patch_of_the_file() {
        let after = sync(MINE, &[instruction("QA-1", "do this")], &[]).text.unwrap();
        let patch = diff("CLAUDE.md", Some(MINE), &after);
        assert!(patch.starts_with("--- a/CLAUDE.md\n+++ b/CLAUDE.md\n@@"), "{patch}");
        assert!(patch.contains("+do this\n"), "{patch}");
        assert!(diff("CLAUDE.md", None, "x\n").starts_with("--- /dev/null\n+++ b/CLAUDE.md"));
        assert_eq!(diff("CLAUDE.md", Some(MINE), MINE), "");
    }

    #[test]
    fn the_block_is_added_after_what_is_there_and_entries_follow_in_order() {
        let once = changed(upsert(MINE, "QA-1", "**First**: do this."));
        assert!(once.starts_with(MINE), "{once}");
        let twice = changed(upsert(&once, "QA-2", "**Second**: do that."));
        let first = twice.find("do this").unwrap();
        let second = twice.find("do that").unwrap();
        assert!(first < second && second < twice.find(BLOCK_END).unwrap(), "{twice}");
        assert_eq!(upsert(&twice, "QA-2", "**Second**: do that."), Edit::Unchanged);
        // Into an empty or missing file.
        assert!(changed(upsert("", "QA-1", "x")).starts_with(BLOCK_BEGIN));
    }

    #[test]
    fn removing_an_entry_takes_exactly_its_lines() {
        let one = changed(upsert(MINE, "QA-1", "**First**: do this."));
        let two = changed(upsert(&one, "QA-2", "**Second**: do that."));
        assert_eq!(changed(remove(&two, "QA-2")), one);
        assert_eq!(remove(&one, "QA-9"), Edit::Unchanged);
        assert_eq!(remove(MINE, "QA-1"), Edit::Unchanged);
    }

    #[test]
    fn lines_a_person_adds_outside_or_between_entries_stay() {
        let one = changed(upsert(MINE, "QA-1", "**First**: do this."));
        let with_mine = format!("{one}\nA line after the block.\n").replace(HEADING, &format!("{HEADING}\nMy note."));
        let two = changed(upsert(&with_mine, "QA-2", "**Second**"));
        let back = changed(remove(&two, "QA-2"));
        assert_eq!(back, with_mine);
        let none = changed(remove(&back, "QA-1"));
        assert!(none.contains("My note.") && none.contains("A line after the block.") && none.starts_with(MINE));
    }

    #[test]
    fn an_entry_edited_by_hand_is_neither_replaced_nor_removed() {
        let one = changed(upsert(MINE, "QA-1", "**First**: do this."));
        let edited = one.replace("do this.", "do this, except on Fridays.");
        assert!(
            matches!(upsert(&edited, "QA-1", "**First**: new text."), Edit::Conflict(reason) if reason.contains("edited by hand"))
        );
        assert!(matches!(remove(&edited, "QA-1"), Edit::Conflict(_)));
    }

    #[test]
    fn broken_markers_are_reported_not_guessed_at() {
        let one = changed(upsert(MINE, "QA-1", "x"));
        let no_end = one.replace(BLOCK_END, "");
        assert!(matches!(upsert(&no_end, "QA-2", "y"), Edit::Conflict(reason) if reason.contains("markers")));
        let lost_close = one.replace("<!-- lore:end QA-1 -->\n", "");
        assert!(matches!(remove(&lost_close, "QA-1"), Edit::Conflict(reason) if reason.contains("closing marker")));
        // A body cannot forge markers of its own.
        let sneaky = changed(upsert(MINE, "QA-1", "<!-- lore:standing-instructions end -->"));
        assert!(Block::find(&sneaky).unwrap().is_some());
    }

    #[test]
    fn the_file_is_written_whole_and_a_missing_one_is_created() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("AGENTS.md");
        let mut seen = Vec::new();
        let (edit, written) = apply(&path, |text| upsert(text, "QA-1", "x"), |bytes| seen = bytes.to_vec()).unwrap();
        assert!(matches!(edit, Edit::Changed(_)));
        assert_eq!(std::fs::read(&path).unwrap(), written.unwrap());
        assert_eq!(std::fs::read(&path).unwrap(), seen);
        let (edit, written) = apply(&path, |text| upsert(text, "QA-1", "x"), |_| panic!("nothing to write")).unwrap();
        assert_eq!((edit, written), (Edit::Unchanged, None));
    }
}
