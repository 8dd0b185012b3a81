//! Key material that is public by design: it looks as random as a secret,
//! and is made to be shared. What any layer finds inside it is data.
//!
//! - PEM blocks (RFC 7468) and OpenPGP armor (RFC 4880 §6.2) whose label
//!   names public material: certificates, their requests and revocation
//!   lists, public keys, signatures. A private key's label (`PRIVATE KEY`,
//!   `ENCRYPTED PRIVATE KEY`, `PGP PRIVATE KEY BLOCK`) and an encrypted
//!   message's (`PGP MESSAGE`) are not among them. Only a whole block counts:
//!   a `BEGIN` without its `END` spares nothing, nor does a block with
//!   another `BEGIN` inside it (a private key pasted into a certificate's
//!   body stays a secret).
//! - RFC 4716's SSH2 public keys, and OpenSSH's one-line public keys
//!   (`ssh-ed25519 AAAAC3…`, as in `authorized_keys` and `*.pub`): the
//!   algorithm's name, then its base64 wire encoding, which begins with the
//!   length of that name (`AAAA`).

use std::ops::Range;
use std::sync::LazyLock;

use regex::Regex;

/// The labels of public PEM blocks and OpenPGP armor.
const PUBLIC_LABELS: &[&str] = &[
    "CERTIFICATE",
    "TRUSTED CERTIFICATE",
    "X509 CERTIFICATE",
    "CERTIFICATE REQUEST",
    "NEW CERTIFICATE REQUEST",
    "X509 CRL",
    "ATTRIBUTE CERTIFICATE",
    "PKCS7",
    "CMS",
    "PUBLIC KEY",
    "RSA PUBLIC KEY",
    "PGP PUBLIC KEY BLOCK",
    "PGP SIGNATURE",
];

/// The ranges of `text` that hold public key material.
pub(crate) fn ranges(text: &str) -> Vec<Range<usize>> {
    static BEGIN: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"-----BEGIN ([A-Z0-9 ]+)-----|---- BEGIN (SSH2 PUBLIC KEY) ----").expect("valid regex")
    });
    static OPENSSH: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"\b(?:ssh-(?:ed25519|rsa|dss)|ecdsa-sha2-nistp(?:256|384|521)|sk-(?:ssh-ed25519|ecdsa-sha2-nistp256)@openssh\.com) (AAAA[A-Za-z0-9+/]+=*)",
        )
        .expect("valid regex")
    });
    if !text.contains("BEGIN") && !text.contains("AAAA") {
        return Vec::new();
    }
    let mut ranges = Vec::new();
    for begin in BEGIN.captures_iter(text) {
        let whole = begin.get(0).expect("group 0 always matches");
        let (label, end) = match (begin.get(1), begin.get(2)) {
            (Some(label), _) => (label.as_str(), format!("-----END {}-----", label.as_str())),
            (None, Some(label)) => (label.as_str(), format!("---- END {} ----", label.as_str())),
            (None, None) => continue,
        };
        if begin.get(1).is_some() && !PUBLIC_LABELS.contains(&label) {
            continue;
        }
        let rest = &text[whole.end()..];
        if let Some(at) = rest.find(&end).filter(|at| !rest[..*at].contains("BEGIN ")) {
            ranges.push(whole.start()..whole.end() + at + end.len());
        }
    }
    ranges.extend(OPENSSH.captures_iter(text).filter_map(|line| line.get(1)).map(|key| key.range()));
    ranges
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spared(text: &str) -> Vec<&str> {
        ranges(text).into_iter().map(|range| &text[range]).collect()
    }

    #[test]
    fn public_blocks_and_keys_are_found_and_private_ones_are_not() {
        let certificate = "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIU\n-----END CERTIFICATE-----";
        assert_eq!(spared(&format!("got {certificate} back")), [certificate]);
        let private = "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG\n-----END PRIVATE KEY-----";
        assert!(spared(private).is_empty());
        assert!(spared("-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYI (cut)").is_empty());
        let line = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIMXIlJnQjkraPp6xSTzrQN2Bfx4Bc65nZjSV2GTaEapr ci@host";
        assert_eq!(spared(line), ["AAAAC3NzaC1lZDI1NTE5AAAAIMXIlJnQjkraPp6xSTzrQN2Bfx4Bc65nZjSV2GTaEapr"]);
        assert!(spared("token ssh-ed25519-like Zx9Qm2Lp7Rt4Wv8Ky3Nb6Hc1").is_empty());
        let nested = format!("-----BEGIN CERTIFICATE-----\n{private}\n-----END CERTIFICATE-----");
        assert!(spared(&nested).is_empty());
        let ssh2 = "---- BEGIN SSH2 PUBLIC KEY ----\nAAAAB3NzaC1yc2EAAAADAQABAAABAQ\n---- END SSH2 PUBLIC KEY ----";
        assert_eq!(spared(ssh2), [ssh2]);
    }
}
