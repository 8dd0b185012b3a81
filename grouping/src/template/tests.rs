use super::*;

fn text(message: &str) -> String {
    Template::of(message).text()
}

#[test]
fn variables_become_wildcards() {
    assert_eq!(
        text("Connection to 10.0.0.12:5432 refused after 3 retries (id 7f9c2a1e-1d2b-4c3a-9e8f-0a1b2c3d4e5f)"),
        "Connection to <*> refused after <*> retries (id <*>"
    );
    assert_eq!(text("Cannot find module 'react-dom' from src/app.tsx"), "Cannot find module <*> from <*>");
    assert_eq!(text("GET https://api.example.com/v1/users?id=3 failed"), "GET <*> failed");
    assert_eq!(text("at /home/agent/repo/lib.rs line 12"), "at <*> line <*>");
    assert_eq!(text("checksum 0xdeadbeef mismatch at 2026-11-23T10:00:00Z"), "checksum <*> mismatch at <*>");
}

#[test]
fn a_list_of_variables_is_one_wildcard_whatever_its_length() {
    let versions = |list: &str| {
        Template::of(&format!(
            "ERROR: Could not find a version that satisfies the requirement numpy==9.9 (from versions: {list})"
        ))
    };
    let (none, two, five) = (versions(""), versions("1.0.1, 1.2.0"), versions("1.0, 1.1, 1.2, 2.0, 2.1"));
    assert_eq!(two, five);
    assert_eq!(two.route(), five.route());
    assert!(text("files missing: src/a.rs src/b/c.rs ./d.rs").ends_with("missing: <*>"));
    // Constant tokens between variables keep them apart, and two variables
    // of different kinds (a host, then its address) are not a list.
    assert_eq!(text("took 3 ms of 10 ms"), "took <*> ms of <*> ms");
    assert_eq!(text("for host-7.example.com [10.0.0.7] failed"), "for <*> <*> failed");
    assert_ne!(none, two, "an empty list is a different message");
}

#[test]
fn error_codes_and_ordinary_words_are_kept() {
    assert_eq!(
        text("error TS2322: Type \"string\" is not assignable to type 'number'."),
        "error TS2322: Type <*> is not assignable to type <*>"
    );
    assert_eq!(text("error[E0308]: mismatched types"), "error[E0308]: mismatched types");
    assert_eq!(text("don't use and/or here"), "don't use and/or here");
}

#[test]
fn huge_messages_are_cut() {
    let message = "word ".repeat(100_000);
    assert_eq!(Template::of(&message).tokens.len(), MAX_TOKENS);
}

#[test]
fn similarity_counts_fitting_positions() {
    let template = Template::of("timeout after <*> waiting for db");
    assert_eq!(template.similarity(&Template::of("timeout after 30s waiting for db")), 1.0);
    assert_eq!(template.similarity(&Template::of("timeout after 30s waiting for cache")), 5.0 / 6.0);
    assert_eq!(template.similarity(&Template::of("timeout after 30s")), 0.0);
    let widened = template.generalize(&Template::of("timeout after 30s waiting for cache"));
    assert_eq!(widened.text(), "timeout after <*> waiting for <*>");
    assert_eq!(widened.wildcards(), 2);
    assert_eq!(widened.route(), "6 timeout after");
}

#[test]
fn a_project_mask_applies_before_the_generic_masks() {
    use crate::masks::{MaskSpec, Masks};
    let masks = Masks::compile(&[MaskSpec { name: "service".into(), pattern: r"svc-[a-z]+".into() }]).unwrap();
    let billing = Template::of_masked("worker svc-billing lost its lease", &masks);
    assert_eq!(billing, Template::of_masked("worker svc-search lost its lease", &masks));
    assert_eq!(billing.text(), "worker <*> lost its lease");
    // Without it the two differ where the generic masks see no variable.
    assert_ne!(Template::of("worker svc-billing lost its lease"), Template::of("worker svc-search lost its lease"));
    // A match inside a token makes the token a variable, as a quoted value does.
    assert_eq!(Template::of_masked("at svc-billing: lease lost", &masks).text(), "at <*> lease lost");
    let message = "Connection to 10.0.0.12:5432 refused after 3 retries";
    assert_eq!(Template::of_masked(message, &Masks::none()), Template::of(message));
}
