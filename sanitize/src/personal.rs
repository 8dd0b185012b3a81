//! Personal data in contexts: payment card numbers, IBANs, national ids,
//! e-mail addresses and phone numbers. Each class is checked the way its
//! issuer defines it, so numbers that merely look alike (ids, timestamps,
//! versions) stay:
//! - cards: an issuer's prefix and length, and a valid Luhn check digit;
//!   13 to 19 digits in groups, or a bare run of 15 or 16 that is not part
//!   of a longer token (`blk_-4980916519894289629` is a block id);
//! - IBANs: a country's length and a valid ISO 7064 mod-97 check;
//! - national ids: US social security numbers (`123-45-6789`, the ranges
//!   the SSA issues) and UK national insurance numbers;
//! - e-mail addresses: the local part (the person); role and no-reply
//!   addresses and the documentation domains (`example.com`, `.test`) stay;
//! - phone numbers: international (`+` and 8 to 15 digits) or the North
//!   American `(555) 123-4567` form.
//!
//! Every class can be switched off (`PersonalData`).

use std::ops::Range;
use std::sync::LazyLock;

use regex::Regex;

/// Which classes of personal data are redacted. All by default. Also the
/// server's `[redaction]` configuration section, as it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PersonalData {
    pub cards: bool,
    pub ibans: bool,
    pub national_ids: bool,
    pub emails: bool,
    pub phones: bool,
}

impl Default for PersonalData {
    fn default() -> Self {
        Self { cards: true, ibans: true, national_ids: true, emails: true, phones: true }
    }
}

impl PersonalData {
    pub const NONE: Self = Self { cards: false, ibans: false, national_ids: false, emails: false, phones: false };

    fn any(&self) -> bool {
        self.cards || self.ibans || self.national_ids || self.emails || self.phones
    }
}

// Digits are ASCII `[0-9]`, not Unicode `\d`: every check below reads
// ASCII digits only (`to_digit`, `parse`, `is_ascii_digit`), so other
// scripts' digits never passed anyway, and `\d`'s Unicode class made these
// automata thirty times larger (1.5 MiB of a sidecar's heap, for nothing).
static CARD: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\b[0-9](?:[ -]?[0-9]){12,18}\b").expect("card regex compiles"));
static IBAN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b[A-Z]{2}[0-9]{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?\b").expect("IBAN regex compiles")
});
static SSN: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\b([0-9]{3})-([0-9]{2})-([0-9]{4})\b").expect("SSN regex compiles"));
static NINO: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z] ?[0-9]{2} ?[0-9]{2} ?[0-9]{2} ?[A-D]\b")
        .expect("NINO regex compiles")
});
static EMAIL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b([A-Za-z0-9._%+-]+)@([A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,})\b")
        .expect("e-mail regex compiles")
});
static PHONE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?:\+[0-9]{1,3}[ .-]?(?:\([0-9]{1,4}\)[ .-]?)?[0-9]{1,4}(?:[ .-]?[0-9]{2,4}){1,4}|\([0-9]{3}\) ?[0-9]{3}-[0-9]{4})\b")
        .expect("phone regex compiles")
});

/// The spans of the personal data in `text` that `classes` asks for.
pub(crate) fn find(text: &str, classes: &PersonalData, spans: &mut Vec<Range<usize>>) {
    if !classes.any() || !text.bytes().any(|byte| byte.is_ascii_digit() || byte == b'@') {
        return;
    }
    if classes.cards {
        let standalone = |found: &regex::Match<'_>| !text[..found.start()].ends_with(['-', '_', '.', '/', ':', '#']);
        spans.extend(
            CARD.find_iter(text)
                .filter(|found| standalone(found) && is_card(found.as_str()))
                .map(|found| found.range()),
        );
    }
    if classes.ibans {
        spans.extend(IBAN.find_iter(text).filter(|found| is_iban(found.as_str())).map(|found| found.range()));
    }
    if classes.national_ids {
        for captures in SSN.captures_iter(text) {
            let part = |index: usize| captures.get(index).map_or(0, |found| found.as_str().parse::<u32>().unwrap_or(0));
            let (area, group, serial) = (part(1), part(2), part(3));
            if area != 0 && area != 666 && area < 900 && group != 0 && serial != 0 {
                spans.push(captures.get(0).expect("group 0 always matches").range());
            }
        }
        spans.extend(NINO.find_iter(text).map(|found| found.range()));
    }
    if classes.emails {
        for captures in EMAIL.captures_iter(text) {
            let (local, domain) = (&captures[1], &captures[2]);
            if !is_role_address(local) && !is_documentation_domain(domain) {
                spans.push(captures.get(1).expect("the local part is a group").range());
            }
        }
    }
    if classes.phones {
        for found in PHONE.find_iter(text) {
            let digits = found.as_str().bytes().filter(u8::is_ascii_digit).count();
            let after = &text[found.end()..];
            // `+1.2.3` and `+05:30` are versions and offsets, not numbers to call.
            if (8..=15).contains(&digits) && !after.starts_with(['.', ':']) {
                spans.push(found.range());
            }
        }
    }
}

/// An issuer's prefix and a valid Luhn check digit.
fn is_card(candidate: &str) -> bool {
    let digits: Vec<u32> = candidate.chars().filter_map(|character| character.to_digit(10)).collect();
    // Long ids are digit runs too: written without separators, only the
    // common lengths (15 and 16) count as cards.
    let grouped = candidate.contains([' ', '-']);
    if !(13..=19).contains(&digits.len()) || (!grouped && !(15..=16).contains(&digits.len())) {
        return false;
    }
    if !has_issuer_prefix(&digits) {
        return false;
    }
    let sum: u32 = digits
        .iter()
        .rev()
        .enumerate()
        .map(|(index, digit)| {
            if index % 2 == 1 {
                let doubled = digit * 2;
                if doubled > 9 { doubled - 9 } else { doubled }
            } else {
                *digit
            }
        })
        .sum();
    sum.is_multiple_of(10)
}

/// Visa, Mastercard, American Express, Discover, JCB, Diners, UnionPay:
/// an issuer's prefix with one of its lengths.
fn has_issuer_prefix(digits: &[u32]) -> bool {
    let prefix = |length: usize| digits[..length].iter().fold(0, |number, digit| number * 10 + digit);
    let (one, two, four) = (prefix(1), prefix(2), prefix(4));
    let length = digits.len();
    let lengths: &[usize] = if one == 4 {
        &[13, 16, 19]
    } else if (51..=55).contains(&two) || (2221..=2720).contains(&four) {
        &[16]
    } else if two == 34 || two == 37 {
        &[15]
    } else if four == 6011 || two == 65 || (6440..=6499).contains(&four) || (3528..=3589).contains(&four) || two == 62 {
        &[16, 17, 18, 19]
    } else if two == 36 || two == 38 || (3000..=3059).contains(&four) {
        &[14, 15, 16, 17, 18, 19]
    } else {
        &[]
    };
    lengths.contains(&length)
}

/// The country's IBAN length and a valid mod-97 check.
fn is_iban(candidate: &str) -> bool {
    let compact: String = candidate.chars().filter(|character| !character.is_whitespace()).collect();
    let Some(length) = iban_length(&compact[..2]) else { return false };
    if compact.len() != length {
        return false;
    }
    let rearranged = compact[4..].chars().chain(compact[..4].chars());
    let mut remainder: u64 = 0;
    for character in rearranged {
        let value = match character.to_digit(36) {
            Some(value) => u64::from(value),
            None => return false,
        };
        remainder = if value >= 10 { (remainder * 100 + value) % 97 } else { (remainder * 10 + value) % 97 };
    }
    remainder == 1
}

/// IBAN lengths of the registry's countries (SWIFT IBAN registry).
fn iban_length(country: &str) -> Option<usize> {
    Some(match country {
        "NO" => 15,
        "BE" => 16,
        "DK" | "FI" | "FO" | "GL" | "NL" => 18,
        "MK" | "SI" => 19,
        "AT" | "BA" | "EE" | "KZ" | "LT" | "LU" | "XK" => 20,
        "CH" | "CR" | "HR" | "LI" | "LV" => 21,
        "BG" | "BH" | "DE" | "GB" | "GE" | "IE" | "ME" | "RS" | "VA" => 22,
        "AE" | "GI" | "IL" | "IQ" | "TL" => 23,
        "AD" | "CZ" | "ES" | "MD" | "PK" | "RO" | "SA" | "SE" | "SK" | "TN" | "VG" => 24,
        "PT" | "ST" => 25,
        "IS" | "TR" => 26,
        "FR" | "GR" | "IT" | "MC" | "MR" | "SM" => 27,
        "AL" | "AZ" | "BY" | "CY" | "DO" | "GT" | "HU" | "LB" | "PL" | "SV" => 28,
        "BR" | "EG" | "PS" | "QA" | "UA" => 29,
        "JO" | "KW" | "MU" => 30,
        "MT" | "SC" => 31,
        "LC" => 32,
        _ => return None,
    })
}

/// Addresses of a role, not a person: no-reply senders, bots, `git@`,
/// mailing lists (`matplotlib-users@…`).
fn is_role_address(local: &str) -> bool {
    const ROLES: &[&str] = &[
        "noreply",
        "no-reply",
        "donotreply",
        "do-not-reply",
        "notifications",
        "notification",
        "git",
        "postmaster",
        "mailer-daemon",
        "root",
        "admin",
        "support",
        "security",
        "info",
        "hello",
        "team",
    ];
    const LISTS: &[&str] = &["-users", "-user", "-dev", "-devel", "-announce", "-discuss", "-list", "-commits"];
    let lower = local.to_ascii_lowercase();
    ROLES.contains(&lower.as_str())
        || lower.ends_with("[bot]")
        || lower.ends_with("+noreply")
        || LISTS.iter().any(|suffix| lower.ends_with(suffix))
}

/// RFC 2606 and RFC 6761 names, kept for documentation.
fn is_documentation_domain(domain: &str) -> bool {
    let lower = domain.to_ascii_lowercase();
    ["example.com", "example.org", "example.net"]
        .iter()
        .any(|name| lower == *name || lower.ends_with(&format!(".{name}")))
        || [".test", ".invalid", ".localhost", ".example", ".local"].iter().any(|suffix| lower.ends_with(suffix))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(text: &str, classes: PersonalData) -> Vec<&str> {
        let mut spans = Vec::new();
        find(text, &classes, &mut spans);
        spans.iter().map(|span| &text[span.clone()]).collect()
    }

    #[test]
    fn each_class_is_found_by_its_own_check() {
        let all = PersonalData::default();
        assert_eq!(found("paid with 4111 1111 1111 1111 today", all), vec!["4111 1111 1111 1111"]);
        assert_eq!(found("card 5500-0000-0000-0004", all), vec!["5500-0000-0000-0004"]);
        assert_eq!(found("IBAN DE89 3704 0044 0532 0130 00 please", all), vec!["DE89 3704 0044 0532 0130 00"]);
        assert_eq!(found("iban=GB82WEST12345698765432", all), vec!["GB82WEST12345698765432"]);
        assert_eq!(found("ssn 219-09-9999 on file", all), vec!["219-09-9999"]);
        assert_eq!(found("NI number AB 12 34 56 C", all), vec!["AB 12 34 56 C"]);
        assert_eq!(found("mail jane.doe+lore@acme.io now", all), vec!["jane.doe+lore"]);
        assert_eq!(found("call +44 20 7946 0958 or (555) 123-4567", all), vec!["+44 20 7946 0958", "(555) 123-4567"]);
    }

    #[test]
    fn look_alikes_are_left_alone() {
        let all = PersonalData::default();
        for text in [
            "4111 1111 1111 1112",
            "order 1234567890123456 shipped",
            "Verification succeeded for blk_-4980916519894289629",
            "snowflake id 4111111111111111111 stored",
            "1700000000000 ms since the epoch",
            "DE89 3704 0044 0532 0130 01",
            "000-12-3456 and 666-12-3456",
            "noreply@github.com, git@github.com, dependabot[bot]@users.noreply.github.com",
            "jane@example.com and ci@build.test",
            "version +1.2.3, offset +05:30, 2026-11-24T08:00:00+01:00",
            "port 50051 pid 123456 exit 101",
        ] {
            assert!(found(text, all).is_empty(), "{text}: {:?}", found(text, all));
        }
    }

    #[test]
    fn a_class_switched_off_is_kept() {
        let text = "jane@acme.io 4111111111111111 +1 415 555 0100";
        assert!(found(text, PersonalData::NONE).is_empty());
        let only_emails = PersonalData { emails: true, ..PersonalData::NONE };
        assert_eq!(found(text, only_emails), vec!["jane"]);
    }
}
