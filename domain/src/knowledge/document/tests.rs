use super::*;

const FULL: &str = "---
id: PAT-004
title: RLS blocks INSERT
category: Database
tags: [postgres, rls]
keywords: row level security, policies
status: active
severity: high
solutions:
  - Add a WITH CHECK clause to the policy
  - description: Insert through a SECURITY DEFINER function
author: ada
---
# Ignored heading

Inserts fail with `new row violates row-level security policy` when the policy
has only a USING clause.

## Fix
Add WITH CHECK.
";

#[test]
fn front_matter_supplies_id_title_category_tags_status_severity_and_solutions() {
    let document = parse("rls.md", FULL).unwrap();
    assert_eq!(document.key.as_deref(), Some("PAT-004"));
    assert_eq!(document.title, "RLS blocks INSERT");
    assert_eq!(document.category, "database");
    assert_eq!(document.tags, ["postgres", "rls", "row level security", "policies"]);
    assert_eq!(document.status, EntryStatus::Active);
    assert_eq!(document.severity, Some(Severity::High));
    assert_eq!(
        document.solutions.as_deref(),
        Some(
            &["Add a WITH CHECK clause to the policy".to_owned(), "Insert through a SECURITY DEFINER function".into()]
                [..]
        )
    );
    assert_eq!(document.front_matter["author"], "ada");
    assert!(document.body.starts_with("# Ignored heading"), "{}", document.body);
    assert_eq!(
        document.summary,
        "Inserts fail with new row violates row-level security policy when the policy has only a USING clause."
    );
}

#[test]
fn without_front_matter_the_first_h1_is_the_title_and_the_first_paragraph_the_summary() {
    let text = "Intro line before any heading.\n\n## Setup\n\n# Deploy keys rotate monthly\n\nMore.\n";
    let document = parse("keys.md", text).unwrap();
    assert_eq!(document.title, "Deploy keys rotate monthly");
    assert_eq!(document.summary, "Intro line before any heading.");
    assert_eq!(document.key, None);
    assert_eq!(document.solutions, None, "no solutions key: the entry's solutions stay");
    assert!(document.front_matter.is_empty());
    assert_eq!(document.body, text);
}

#[test]
fn without_any_heading_the_file_name_is_the_title() {
    assert_eq!(parse("notes/flaky-ci_runners.md", "just text").unwrap().title, "flaky ci runners");
    assert_eq!(parse("x.md", "").unwrap().title, "x");
}

#[test]
fn a_long_first_paragraph_is_cut_at_a_word() {
    let text = format!("# T\n\n{}", "word ".repeat(200));
    let summary = parse("t.md", &text).unwrap().summary;
    assert!(summary.ends_with("word..."), "{summary}");
    assert!(summary.chars().count() <= DERIVED_SUMMARY_CHARS + 3);
}

#[test]
fn the_hash_follows_the_content_and_numbers_are_accepted_as_ids() {
    let one = parse("a.md", "---\nid: 42\n---\n# A\n").unwrap();
    let two = parse("b.md", "---\nid: 42\n---\n# A\n").unwrap();
    let three = parse("a.md", "---\nid: 42\n---\n# B\n").unwrap();
    assert_eq!(one.key.as_deref(), Some("42"));
    assert_eq!(one.hash, two.hash);
    assert_ne!(one.hash, three.hash);
}

#[test]
fn broken_front_matter_is_reported_with_what_is_wrong() {
    let cases = [
        ("---\ntitle: [unclosed\n---\nbody", "front matter: "),
        ("---\ntitle: x\nno end", "no closing '---' line"),
        ("---\n- a\n- b\n---\n", "must be a mapping"),
        ("---\ntags: {a: 1}\n---\n", "tags must be a list"),
        ("---\nstatus: [verified]\n---\n", "status must be a string"),
        ("---\nusage_count: -3\n---\n", "usage_count must be a whole number of 0 or more"),
        ("---\nusage_count: 1.5\n---\n", "usage_count must be a whole number of 0 or more"),
        ("---\nlast_used: yesterday\n---\n", "last_used \"yesterday\" is not a date"),
        ("---\nsymptoms: {a: b}\n---\n", "symptoms must be a string or a list of strings"),
        ("---\nsymptoms: ['']\n---\n", "front matter symptoms[0]: required"),
        ("---\nroot_causes: [[1]]\n---\n", "root_causes must be a string or a list of strings"),
        ("---\nkb_id: [1]\n---\n", "kb_id must be a string or a number"),
        ("---\nseverity: 9\n---\n", "severity \"9\" is not one of"),
        ("---\nid: [1]\n---\n", "id must be a string or a number"),
        ("---\nsolutions: fix it\n---\n", "solutions must be a list"),
        ("---\nsolutions: ['']\n---\n", "front matter solutions[0]: required"),
        ("---\ntitle: {a: b}\n---\n", "title must be a string"),
        ("---\ncategory: \"a\\u0000b\"\n---\n", "category: must not contain control characters"),
    ];
    for (text, expected) in cases {
        let error = parse("x.md", text).unwrap_err().to_string();
        assert!(error.contains(expected), "{text:?}: {error}");
    }
}

#[test]
fn binary_invalid_utf8_huge_and_nul_documents_are_refused() {
    assert_eq!(parse_bytes("x.md", b"# a\0b", 1024), Err(DocumentError::Binary(3)));
    assert_eq!(parse_bytes("x.md", b"# caf\xe9", 1024), Err(DocumentError::NotUtf8(5)));
    assert_eq!(parse_bytes("x.md", &[b'a'; 2048], 1024), Err(DocumentError::TooLarge { bytes: 2048, limit: 1024 }));
    assert!(matches!(parse("x.md", &"a".repeat(MAX_BODY_BYTES + 1)), Err(DocumentError::TooLarge { .. })));
    assert_eq!(parse("x.md", "a\0"), Err(DocumentError::Binary(1)));
}

#[test]
fn a_byte_order_mark_and_crlf_line_ends_are_fine() {
    let document = parse("x.md", "\u{feff}---\r\nid: A-1\r\n---\r\n# Title\r\n").unwrap();
    assert_eq!(document.key.as_deref(), Some("A-1"));
    assert_eq!(document.title, "Title");
}

#[test]
fn a_multi_line_title_becomes_one_line() {
    let document = parse("x.md", "---\ntitle: |\n  first\n  second\n---\n").unwrap();
    assert_eq!(document.title, "first second");
}

#[test]
fn a_debugger_knowledge_base_document_is_read_whole() {
    let text = "---
kb_id: KB-build-001
title: TypeScript module resolution failure
category: missing_dependency
severity: medium
status: verified
symptoms:
  - \"TS2307: Cannot find module '@/components/Button' or its corresponding type declarations.\"
  - Module not found, can't resolve './Button'
root_causes:
  - The path alias is missing from tsconfig.json
usage_count: 12
last_used: 2026-10-02
verified: true
---
# TypeScript module resolution failure

## Solution
Add the alias to `compilerOptions.paths`.
";
    let document = parse("kb/KB-build-001.md", text).unwrap();
    assert_eq!(document.key.as_deref(), Some("KB-build-001"));
    assert_eq!(document.status, EntryStatus::Active, "verified is in search");
    assert_eq!(document.symptoms.len(), 2);
    assert!(document.symptoms[1].contains(", can't resolve"), "a comma stays in a symptom: {:?}", document.symptoms);
    assert_eq!(document.root_causes, ["The path alias is missing from tsconfig.json"]);
    assert_eq!(document.usage_count, 12);
    assert_eq!(document.last_used_at.unwrap().to_rfc3339(), "2026-10-02T00:00:00+00:00");
    assert_eq!(document.front_matter["status"], "verified", "the word itself is kept");
    for retired in ["deprecated", "Obsolete", "superseded"] {
        let document = parse("x.md", &format!("---\nstatus: {retired}\n---\n# x\n")).unwrap();
        assert_eq!(document.status, EntryStatus::Obsolete, "{retired}");
    }
    let one_string = parse(
        "x.md",
        "---\nsymptoms: disk full\nroot_cause: logs never rotated\nlast_used: 2026-10-02T08:30:00+02:00\n---\n",
    )
    .unwrap();
    assert_eq!(
        (one_string.symptoms, one_string.root_causes),
        (vec!["disk full".to_owned()], vec!["logs never rotated".to_owned()])
    );
    assert_eq!(one_string.last_used_at.unwrap().to_rfc3339(), "2026-10-02T06:30:00+00:00");
    let id_wins = parse("x.md", "---\nid: A\nkb_id: B\n---\n").unwrap();
    assert_eq!(id_wins.key.as_deref(), Some("A"));
}
