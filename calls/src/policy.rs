//! Commands Lore never offers as "what worked", however often they did.
//!
//! What worked after a failure is learned from what agents ran, and agents
//! run what tool output told them to. A recovery is offered to every later
//! session of the project, so one that lowers a defence would spread it:
//! a download or a decoder piped into an interpreter, anything that reads
//! credentials, a switched-off verification, rewritten remotes, registries
//! or hooks, widened permissions. The policy reads the command as the
//! shell would, its program, options and pipes, not the text around it.

use lore_screen::policy::Risk;

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

/// Why `command` is never offered, or `None` when it may be. The command
/// is read by the injection screen's command policy (lore-screen's
/// `policy`): parsed as the shell parses it, so `grep -rn base64 src` is
/// no decoder and `chmod 600 ~/.ssh/id_rsa` reads no key, and the same
/// rules hold a lesson or a fix that asks for the command.
pub fn refusal(command: &str) -> Option<Refusal> {
    let canonical = lore_screen::canonical::canonical(command);
    let finding = lore_screen::policy::asked(&canonical.text, &[]).into_iter().next()?;
    Some(match finding.risk {
        Risk::RunsUnseenCode => Refusal::RunsFetchedCode,
        Risk::ReadsCredentials => Refusal::Credentials,
        Risk::DisablesVerification => Refusal::NoVerification,
        Risk::ChangesSource | Risk::ChangesGlobalConfig => Refusal::Rewires,
        Risk::BypassesChecks | Risk::WidensPermissions | Risk::DeletesCi => Refusal::Bypass,
    })
}

#[cfg(test)]
mod tests;
