use super::*;

/// Every secret of `findings`, of a format or not.
fn found(findings: &Findings) -> Vec<Range<usize>> {
    findings.formats.iter().chain(&findings.secrets).cloned().collect()
}

fn secrets(catalog: &Catalog, text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for rule in &catalog.rules {
        let mut findings = Findings::default();
        catalog.find_rule(rule, text, &mut findings);
        out.extend(found(&findings).into_iter().map(|span| (rule.id.clone(), text[span].to_owned())));
    }
    out
}

#[test]
fn every_rule_in_use_compiles_and_each_left_out_says_why() {
    for (catalog, at_least) in [(&*GITLEAKS, 190), (&*CREDSWEEPER, 100), (&*KINGFISHER, 400)] {
        assert!(catalog.rules.len() >= at_least, "{}: {} rules", catalog.name, catalog.rules.len());
        // Compiled on first use at run time; every one must compile.
        let broken: Vec<&str> =
            catalog.rules.iter().filter(|rule| rule.compiled().is_none()).map(|rule| rule.id.as_str()).collect();
        assert!(broken.is_empty(), "{}: {broken:?}", catalog.name);
        // So must every allowlist's regexes, also compiled on first use.
        let allowlists = catalog.global.iter().chain(catalog.rules.iter().flat_map(|rule| &rule.allowlists));
        let broken: Vec<&str> = allowlists.flat_map(|allowlist| allowlist.regexes.broken()).collect();
        assert!(broken.is_empty(), "{}: {broken:?}", catalog.name);
        assert!(catalog.skipped.iter().all(|(_, why)| !why.is_empty()));
    }
    let crate::CatalogSummary { rules, unused: skipped, .. } = summary(Catalogs::ALL);
    assert_eq!(rules, GITLEAKS.rules.len() + CREDSWEEPER.rules.len() + KINGFISHER.rules.len());
    assert!(skipped.iter().any(|(id, why)| id.starts_with("credsweeper:") && why.contains("machine-learning")));
}

#[test]
fn a_rule_yields_its_secret_group_not_its_whole_match() {
    let found = secrets(&GITLEAKS, "export GITHUB_TOKEN=ghp_XIxB7KMNdAr3zqWtQqhE94qglHqOzn1D1stg\n");
    assert!(found.iter().any(|(rule, secret)| rule == "github-pat" && secret.starts_with("ghp_")), "{found:?}");
    let found = secrets(&GITLEAKS, "aws_secret_access_key = \"wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY\"");
    assert!(found.iter().all(|(_, secret)| !secret.contains("aws_secret")), "{found:?}");
    // CredSweeper's secret is its group `value`, found by a pattern that
    // looks ahead (compiled by fancy-regex).
    let found = secrets(&CREDSWEEPER, "client_secret: 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\n");
    assert!(found.iter().any(|(_, secret)| secret == "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"), "{found:?}");
}

#[test]
fn a_curl_user_keeps_its_name_and_loses_its_password_quoted_or_not() {
    for text in ["curl -u deploy:S3cr3tPa55 https://nexus", "curl -u \"deploy:S3cr3tPa55\" https://nexus"] {
        let found = secrets(&GITLEAKS, text);
        assert!(found.iter().any(|(rule, secret)| rule == "curl-auth-user" && secret == "S3cr3tPa55"), "{found:?}");
    }
}

#[test]
fn keywords_wake_rules_case_insensitively_and_allowlists_spare_what_they_name() {
    let find = |text: &str| {
        let mut findings = Findings::default();
        find(text, Catalogs::ALL, &mut findings);
        found(&findings)
    };
    assert!(!find("API_KEY=sk_live_ReTllpYQYfIZu2Jnf2lAPFjD").is_empty());
    assert!(find("nothing to see: cargo build --release").is_empty());
    // gitleaks' global allowlist: template variables are not secrets.
    let mut findings = Findings::default();
    GITLEAKS.find("password = \"${DATABASE_PASSWORD}\"", &mut findings);
    assert!(found(&findings).is_empty(), "{findings:?}");
    // A rule's allowlist marks what it spares: AWS's documentation key.
    let mut findings = Findings::default();
    GITLEAKS.find("aws_access_key_id = AKIAIOSFODNN7EXAMPLE", &mut findings);
    assert!(found(&findings).is_empty(), "{findings:?}");
    assert!(!findings.spared.is_empty(), "{findings:?}");
}

#[test]
fn a_line_too_short_for_the_rule_holds_no_secret() {
    let rule = CREDSWEEPER.rules.iter().find(|rule| rule.min_line_len > 20).expect("a rule with a minimum");
    assert!(!rule.line_qualifies(b"short"));
    assert!(rule.line_qualifies(&vec![b'x'; rule.min_line_len]) || rule.line_pattern.is_some());
}

/// Kingfisher's examples and negative examples, as the converted file holds them.
fn kingfisher_examples() -> Vec<(String, Vec<String>, Vec<String>)> {
    #[derive(serde::Deserialize)]
    struct Line {
        id: String,
        #[serde(default)]
        examples: Vec<String>,
        #[serde(default)]
        negative_examples: Vec<String>,
    }
    KINGFISHER_RULES
        .lines()
        .skip(1)
        .map(|line| serde_json::from_str::<Line>(line).expect("a rule line"))
        .filter(|line| !line.examples.is_empty() || !line.negative_examples.is_empty())
        .map(|line| (line.id, line.examples, line.negative_examples))
        .collect()
}

#[test]
fn every_kingfisher_rule_finds_its_examples_and_spares_its_negative_examples() {
    let examples = kingfisher_examples();
    assert!(examples.len() >= 5, "{} rules with examples", examples.len());
    for (id, positives, negatives) in examples {
        let rule = KINGFISHER.rules.iter().find(|rule| rule.id == id).expect("a rule in use");
        for example in positives {
            let mut findings = Findings::default();
            KINGFISHER.find_rule(rule, &example, &mut findings);
            assert!(!found(&findings).is_empty(), "{id} misses its example {example:?}");
        }
        for example in negatives {
            let mut findings = Findings::default();
            KINGFISHER.find_rule(rule, &example, &mut findings);
            assert!(
                found(&findings).is_empty(),
                "{id} finds {:?} in its negative example {example:?}",
                &example[found(&findings)[0].clone()]
            );
        }
    }
}

#[test]
fn betterleaks_filters_discard_what_they_name_and_an_unknown_never_spares() {
    let rule = |id: &str| KINGFISHER.rules.iter().find(|rule| rule.id == id).expect("a rule in use");
    let found = |id: &str, text: &str| {
        let mut findings = Findings::default();
        KINGFISHER.find_rule(rule(id), text, &mut findings);
        found(&findings).into_iter().map(|span| text[span].to_owned()).collect::<Vec<_>>()
    };
    // The global allowlist (a template variable) and the rule's own entropy
    // floor spare; a random key of the same shape is found.
    let key = "adafruit_key = \"q8Zk3vX9bT5mK2pL8rW1zY4nC7dE0fHj\"";
    assert_eq!(found("betterleaks.adafruit-api-key", key), ["q8Zk3vX9bT5mK2pL8rW1zY4nC7dE0fHj"]);
    assert!(found("betterleaks.adafruit-api-key", "adafruit_key = \"aaaaaaaaaaaaaaaabbbbbbbbbbbbbbbb\"").is_empty());
    // `entropy(s) < 3.5 || tokenRatio(s) >= 2.5`: tokenRatio is not
    // evaluated, so a word-like value of high entropy is still redacted.
    let (_, unknown) =
        KINGFISHER.unevaluated.iter().find(|(what, _)| what == "tokenRatio()").expect("tokenRatio is listed");
    assert!(*unknown > 50, "{unknown}");
    assert_eq!(
        found("betterleaks.adafruit-api-key", "adafruit_key = \"the-quick-brown-fox-jumps-overit\""),
        ["the-quick-brown-fox-jumps-overit"]
    );
    // An AWS example key is what betterleaks' own rule allowlists.
    assert!(found("betterleaks.aws-access-token", "AKIAIOSFODNN7EXAMPLE").is_empty());
    assert_eq!(found("betterleaks.aws-access-token", "AKIAZ52Q4XL3VN7HBK2D"), ["AKIAZ52Q4XL3VN7HBK2D"]);
}

#[test]
fn every_kingfisher_filter_pattern_compiles_and_what_is_not_evaluated_is_named() {
    let mut patterns = Vec::new();
    for filter in KINGFISHER.rules.iter().filter_map(|rule| rule.filter.as_ref()) {
        filter.tree().patterns(&mut patterns);
    }
    assert!(patterns.len() > 400, "{} pattern lists", patterns.len());
    let broken: Vec<&str> = patterns.iter().flat_map(|patterns| patterns.broken()).collect();
    assert!(broken.is_empty(), "{broken:?}");
    let unevaluated = &KINGFISHER.unevaluated;
    let touched: usize = unevaluated.iter().map(|(_, rules)| rules).sum();
    assert!(touched < KINGFISHER.rules.len() / 2, "{unevaluated:?}");
    assert!(unevaluated.contains(&("tokenRatio()".to_owned(), 119)), "{unevaluated:?}");
    let summary = summary(Catalogs::KINGFISHER);
    assert!(
        summary.unevaluated.iter().any(|(what, why)| what == "kingfisher:tokenRatio()" && why.contains("119 rules")),
        "{:?}",
        summary.unevaluated
    );
    assert!(KINGFISHER.skipped.iter().any(|(_, why)| why.contains("file")));
}

#[test]
#[ignore = "prints the catalogs' rules in use and those left out"]
fn print_summary() {
    for catalog in [&*GITLEAKS, &*CREDSWEEPER, &*KINGFISHER] {
        let fancy = catalog.rules.iter().filter(|rule| matches!(rule.compiled(), Some(Compiled::Fancy(_)))).count();
        eprintln!(
            "{}: {} rules ({fancy} with look-around), {} left out",
            catalog.name,
            catalog.rules.len(),
            catalog.skipped.len()
        );
        for (id, why) in &catalog.skipped {
            eprintln!("  {id}: {why}");
        }
    }
}
