use super::*;

fn secrets(catalog: &Catalog, text: &str) -> Vec<(String, String)> {
    let mut findings = Vec::new();
    let mut ids = Vec::new();
    for rule in &catalog.rules {
        let before = findings.len();
        catalog.find_rule(rule, text, &mut findings);
        ids.extend(std::iter::repeat_n(rule.id.clone(), findings.len() - before));
    }
    ids.into_iter().zip(findings).map(|(id, secret)| (id, text[secret].to_owned())).collect()
}

#[test]
fn every_rule_in_use_compiles_and_each_left_out_says_why() {
    for (catalog, at_least) in [(&*GITLEAKS, 190), (&*CREDSWEEPER, 100)] {
        assert!(catalog.rules.len() >= at_least, "{}: {} rules", catalog.name, catalog.rules.len());
        // Compiled on first use at run time; every one must compile.
        let broken: Vec<&str> =
            catalog.rules.iter().filter(|rule| rule.compiled().is_none()).map(|rule| rule.id.as_str()).collect();
        assert!(broken.is_empty(), "{}: {broken:?}", catalog.name);
        assert!(catalog.skipped.iter().all(|(_, why)| !why.is_empty()));
    }
    let (rules, skipped) = summary(Catalogs::ALL);
    assert_eq!(rules, GITLEAKS.rules.len() + CREDSWEEPER.rules.len());
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
        let mut findings = Vec::new();
        find(text, Catalogs::ALL, &mut findings);
        findings
    };
    assert!(!find("API_KEY=sk_live_ReTllpYQYfIZu2Jnf2lAPFjD").is_empty());
    assert!(find("nothing to see: cargo build --release").is_empty());
    // gitleaks' global allowlist: template variables are not secrets.
    let mut findings = Vec::new();
    GITLEAKS.find("password = \"${DATABASE_PASSWORD}\"", &mut findings);
    assert!(findings.is_empty(), "{findings:?}");
}

#[test]
fn a_line_too_short_for_the_rule_holds_no_secret() {
    let rule = CREDSWEEPER.rules.iter().find(|rule| rule.min_line_len > 20).expect("a rule with a minimum");
    assert!(!rule.line_qualifies(b"short"));
    assert!(rule.line_qualifies(&vec![b'x'; rule.min_line_len]) || rule.line_pattern.is_some());
}

#[test]
#[ignore = "prints the catalogs' rules in use and those left out"]
fn print_summary() {
    for catalog in [&*GITLEAKS, &*CREDSWEEPER] {
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
