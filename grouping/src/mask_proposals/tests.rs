use super::*;

fn pattern(survivor: &str, sources: &[&str]) -> Option<String> {
    propose(survivor, sources).map(|proposal| proposal.pattern)
}

#[test]
fn a_word_of_one_shape_gets_its_prefix_and_class() {
    let proposal = propose("connect to svc-billing failed", &["connect to svc-payments failed"]).unwrap();
    assert_eq!(proposal.pattern, r"\bsvc-[a-z]+\b");
    assert_eq!(proposal.name, "svc-values");
    assert_eq!(proposal.examples, ["svc-billing", "svc-payments"]);
    let masks = Masks::compile(&[MaskSpec { name: proposal.name, pattern: proposal.pattern }]).unwrap();
    assert_eq!(
        Template::of_masked("connect to svc-ledger failed", &masks),
        Template::of_masked("connect to svc-billing failed", &masks)
    );
}

#[test]
fn the_prefix_stops_at_punctuation_and_keeps_a_shared_suffix() {
    assert_eq!(pattern("job job#qxa: lost", &["job job#qab: lost"]).unwrap(), r"\bjob#[a-z]+:");
    assert_eq!(pattern("user-alice left", &["user-anna left"]).unwrap(), r"\buser-[a-z]+\b");
}

#[test]
fn every_differing_position_and_every_source_must_be_covered() {
    assert_eq!(
        pattern("svc-billing timeout in eu-west", &["svc-payments timeout in us-east"]).unwrap(),
        r"\b[a-z]+-[a-z]+\b"
    );
    assert_eq!(
        pattern("queue alpha-x is full", &["queue beta-y is full", "queue gamma-z is full"]).unwrap(),
        r"\b[a-z]+-[a-z]+\b"
    );
}

#[test]
fn nothing_is_proposed_that_would_mask_a_word_the_patterns_share() {
    // Any expression for "alice" and "bob" also masks "login".
    assert_eq!(pattern("login failed for alice", &["login failed for bob"]), None);
    // The shared svc-auth has the differing words' own shape.
    assert_eq!(pattern("svc-billing calls svc-auth", &["svc-payments calls svc-auth"]), None);
}

#[test]
fn a_bare_class_is_never_proposed_even_with_nothing_shared_to_spare() {
    // All variables but one word: `[a-z]+` would fit, and would mask every
    // word of every other message.
    assert_eq!(pattern("<*> <*> cart", &["<*> <*> retry"]), None);
    assert_eq!(pattern("cart", &["retry"]), None);
}

#[test]
fn nothing_is_proposed_without_a_difference_a_mask_could_explain() {
    assert_eq!(pattern("disk full on <*>", &["disk full on <*>"]), None);
    assert_eq!(pattern("disk full on <*>", &["disk full on sda"]), None);
    assert_eq!(pattern("disk full on sda", &["disk is full on sdb"]), None);
    // A source of another length is left out; the one of the same length counts.
    assert_eq!(pattern("disk svc-a full", &["disk is full now", "disk svc-b full"]).unwrap(), r"\bsvc-[a-z]+\b");
}

#[test]
fn any_text_is_safe() {
    for (survivor, source) in
        [("café-ä x", "café-ö x"), ("ü", "ö"), ("-", "--"), ("a", "ab"), ("[(*", "[(+"), ("\\b \\d", "\\w \\d")]
    {
        if let Some(proposal) = propose(survivor, &[source]) {
            (MaskSpec { name: proposal.name, pattern: proposal.pattern }).compile().unwrap();
        }
    }
}

#[test]
fn words_with_control_characters_propose_nothing() {
    assert_eq!(pattern("svc-\u{1b}[31mred x", &["svc-blue x"]), None);
}
