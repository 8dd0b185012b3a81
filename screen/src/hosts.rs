//! Hosts in addresses, and whether one is the project's own: the command
//! policy's change of source and the cues' outside address ask the same.

/// The host of a URL (`https://host/…`) or of an scp-like address
/// (`git@host:path`).
pub fn host_of(address: &str) -> Option<&str> {
    let rest =
        address.split_once("://").map(|(_, rest)| rest).or_else(|| address.split_once('@').map(|(_, rest)| rest))?;
    let host = rest.split(['/', ':', '?', '\n']).next()?;
    (!host.is_empty()).then_some(host)
}

/// `host` is one of the project's own hosts or a host under one
/// (`git.acme.internal` under `acme.internal`, not under `me.internal`).
pub fn is_own(host: &str, own_hosts: &[String]) -> bool {
    own_hosts.iter().any(|own| host == own || host.strip_suffix(own.as_str()).is_some_and(|sub| sub.ends_with('.')))
}
