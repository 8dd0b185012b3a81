//! Commands Lore never offers as "what worked", however often they did.
//!
//! What worked after a failure is learned from what agents ran, and agents
//! run what tool output told them to. A recovery is offered to every later
//! session of the project, so one that lowers a defence would spread it:
//! a download or a decoder piped into an interpreter, anything that reads
//! credentials, a switched-off verification, rewritten remotes, registries
//! or hooks, widened permissions. The policy reads the command's words and
//! its pipes, not the text around it.

use std::sync::LazyLock;

use regex::Regex;

/// Why a command is never offered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// A download or a decoded payload run by an interpreter.
    RunsFetchedCode,
    /// It reads or writes credentials.
    Credentials,
    /// It switches TLS or signature verification off.
    NoVerification,
    /// It changes where code, packages or hooks come from.
    Rewires,
    /// It bypasses hooks or review, or widens permissions.
    Bypass,
}

impl Refusal {
    pub fn reason(self) -> &'static str {
        match self {
            Self::RunsFetchedCode => "it runs downloaded or decoded code",
            Self::Credentials => "it touches credentials",
            Self::NoVerification => "it switches verification off",
            Self::Rewires => "it changes a remote, a registry or hooks",
            Self::Bypass => "it bypasses hooks or review, or widens permissions",
        }
    }
}

const INTERPRETERS: &str = r"(?:ba|z|da|k|fi)?sh|python[0-9.]*|perl|ruby|node|php|pwsh|powershell|iex|lua|Rscript";

static RULES: LazyLock<Vec<(Refusal, Regex)>> = LazyLock::new(|| {
    let rules: &[(Refusal, String)] = &[
        // curl … | sh, base64 -d | bash, bash <(curl …), sh -c "$(wget …)"
        (
            Refusal::RunsFetchedCode,
            format!(
                r"(?:\b(?:curl|wget|fetch|iwr|Invoke-WebRequest)\b|\bbase64\s+(?:-d|--decode|-D)\b|\bxxd\s+-r\b|\bopenssl\s+(?:enc|base64)\b[^|]*\s-d\b|\bgunzip\b|\bzcat\b)[^|;&]*\|\s*(?:sudo\s+)?(?:env\s+\S+\s+)*(?:\S*/)?(?:{INTERPRETERS})\b"
            ),
        ),
        (Refusal::RunsFetchedCode, format!(r"\b(?:{INTERPRETERS})\b[^|;&]*(?:<\(|\$\(|`)\s*(?:curl|wget|base64)\b")),
        (Refusal::RunsFetchedCode, r"\beval\b[^|;&]*(?:\$\(|`)\s*(?:curl|wget|base64)\b".to_owned()),
        // Credentials: key files, token stores, cloud credentials, shadow.
        (
            Refusal::Credentials,
            r"(?:\.ssh/|\bid_(?:rsa|ed25519|ecdsa|dsa)\b|\.aws/credentials|\.netrc\b|\.git-credentials|\.pypirc|\.npmrc|\.docker/config\.json|\.kube/config|/etc/shadow|\bgh\s+auth\s+token\b|\bgit\s+credential\b|\bsecurity\s+find-(?:generic|internet)-password\b|\bgcloud\s+auth\s+print-access-token\b|\b[A-Z0-9_]*(?:TOKEN|SECRET|PASSWORD|API_KEY)\s*=\s*\S)"
                .to_owned(),
        ),
        // Verification switched off.
        (
            Refusal::NoVerification,
            r"(?i:NODE_TLS_REJECT_UNAUTHORIZED\s*=\s*0|PYTHONHTTPSVERIFY\s*=\s*0|GIT_SSL_NO_VERIFY|http\.sslVerify\s*=?\s*false|strict-ssl\s*=?\s*false|--no-check-certificate|--trusted-host\b|--insecure\b|\bcurl\b[^|;&]*\s-k\b|--no-verify-ssl|verify\s*=\s*False|--allow-unauthenticated|--nogpgcheck|gpgcheck\s*=\s*0|--skip-signature|--disable-pip-version-check\s+--trusted)"
                .to_owned(),
        ),
        // Where code, packages and hooks come from.
        (
            Refusal::Rewires,
            r"(?:\bgit\s+remote\s+(?:add|set-url|rename)\b|\bgit\s+config\b[^|;&]*\b(?:remote\.|url\.|core\.hooksPath|credential\.|http\.proxy|includeIf|insteadOf)|\.git/hooks/|\bgit\s+config\s+--global\b|\b(?:npm|pnpm|yarn)\s+config\s+set\b|\bpip3?\s+config\s+set\b|--(?:extra-)?index-url\b|--registry\b|\bregistry\s*=|\bcargo\b[^|;&]*--config\b|/etc/apt/sources\.list|\bupdate-alternatives\b)"
                .to_owned(),
        ),
        // Hooks, review and permissions.
        (
            Refusal::Bypass,
            r"(?:--no-verify\b|\bgit\s+push\b[^|;&]*\s(?:-f|--force)\b|\bchmod\s+(?:-R\s+)?(?:0?777|a\+rwx|o\+w)\b|\bchown\s+-R\s+\S+\s+/(?:\s|$)|\brm\s+[^|;&]*\.github/workflows|\bsetenforce\s+0\b|\bHUSKY\s*=\s*0\b|\bSKIP\s*=\S)"
                .to_owned(),
        ),
    ];
    rules.iter().map(|(refusal, pattern)| (*refusal, Regex::new(pattern).expect("a policy pattern compiles"))).collect()
});

/// Why `command` is never offered, or `None` when it may be.
pub fn refusal(command: &str) -> Option<Refusal> {
    RULES.iter().find(|(_, pattern)| pattern.is_match(command)).map(|(refusal, _)| *refusal)
}

#[cfg(test)]
mod tests;
