//! The risks of a pipeline, one function each. Every rule reads a
//! program and its arguments as the program would: `chmod`'s mode,
//! `git config`'s key and scope, `pip`'s options. The lists name what the
//! programs' own manuals say the switch does, not phrasings of attacks.

use super::{Command, Pipeline, Risk, is_interpreter};

/// The programs the rules read, and the wrappers and builtins before them:
/// each starts a command wherever it stands in prose.
pub const PROGRAMS: &[&str] = &[
    "curl",
    "wget",
    "iwr",
    "irm",
    "invoke-webrequest",
    "invoke-restmethod",
    "git",
    "gh",
    "npm",
    "npx",
    "yarn",
    "pnpm",
    "pip",
    "pip3",
    "pipx",
    "uv",
    "poetry",
    "conda",
    "gem",
    "bundle",
    "cargo",
    "go",
    "chmod",
    "chown",
    "security",
    "gcloud",
    "tee",
    "ln",
    "setenforce",
    "add-apt-repository",
    "setfacl",
    "icacls",
    "rm",
    "del",
    "rmdir",
    "remove-item",
    "unlink",
    "mv",
    "cat",
    "less",
    "more",
    "head",
    "tail",
    "type",
    "get-content",
    "cp",
    "scp",
    "rsync",
    "base64",
    "xxd",
    "openssl",
    "gunzip",
    "zcat",
    "uudecode",
    "printenv",
    "nc",
    "ncat",
    "socat",
    "sudo",
    "doas",
    "env",
    "export",
    "set",
    "setx",
    "declare",
    "local",
    "nohup",
    "xargs",
    "pre-commit",
    "ssh",
    "apt",
    "apt-get",
    "yum",
    "dnf",
    "rpm",
    "helm",
    "kubectl",
    "docker",
    "aws",
    "gsutil",
    "claude",
    "codex",
    "gemini",
    "echo",
    "printf",
    "tar",
    "zip",
    "truncate",
];

/// Every risk of one pipeline; `own_hosts` are the hosts the project
/// already uses (its remotes and registries), which no change of source
/// to them is.
pub fn risks(pipeline: &Pipeline, own_hosts: &[String]) -> Vec<Risk> {
    let mut found = Vec::new();
    if pipeline.iter().any(|command| changes_source(command, own_hosts)) {
        found.push(Risk::ChangesSource);
    }
    if runs_unseen_code(pipeline) {
        found.push(Risk::RunsUnseenCode);
    }
    if reads_credentials(pipeline) {
        found.push(Risk::ReadsCredentials);
    }
    for command in pipeline {
        for (risk, rule) in [
            (Risk::DisablesVerification, disables_verification as fn(&Command) -> bool),
            (Risk::ChangesGlobalConfig, changes_global_config),
            (Risk::BypassesChecks, bypasses_checks),
            (Risk::WidensPermissions, widens_permissions),
            (Risk::DeletesCi, deletes_ci),
        ] {
            if rule(command) && !found.contains(&risk) {
                found.push(risk);
            }
        }
    }
    found
}

fn is_download(command: &Command) -> bool {
    matches!(command.program(), "curl" | "wget" | "iwr" | "irm" | "invoke-webrequest" | "invoke-restmethod")
}

fn is_decoder(command: &Command) -> bool {
    match command.program() {
        "base64" | "openssl" => command.args().any(|arg| matches!(arg, "-d" | "-D" | "--decode" | "-a" | "enc")),
        "xxd" => command.has("-r") || command.has("-p") && command.has("-r"),
        "gunzip" | "zcat" | "uudecode" => true,
        _ => false,
    }
}

/// An interpreter that reads its program from the pipe (`| sh`, `| python
/// -`), not one that runs a file it is given.
fn reads_program_from_pipe(command: &Command) -> bool {
    is_interpreter(command.program())
        && command.args().all(|arg| arg.starts_with('-') || arg == "/dev/stdin" || arg.starts_with("$("))
}

/// `curl … | sh`, `base64 -d | bash`, `bash -c "$(curl …)"`,
/// `bash <(wget -qO- …)`, `eval "$(echo … | base64 -d)"`.
fn runs_unseen_code(pipeline: &Pipeline) -> bool {
    let fed = pipeline.iter().position(|command| is_download(command) || is_decoder(command));
    if let Some(feeder) = fed
        && pipeline[feeder + 1..].iter().any(reads_program_from_pipe)
    {
        return true;
    }
    if pipeline.iter().any(runs_encoded_code) {
        return true;
    }
    pipeline.iter().any(|command| {
        is_interpreter(command.program())
            && command.args().any(|arg| {
                (arg.starts_with("$(") || arg.starts_with("<(") || arg.contains("$(")) && {
                    let inner: Vec<_> =
                        super::pipelines(arg.trim_start_matches(['$', '<', '(']).trim_end_matches([')', '"', '\'']));
                    inner.iter().flatten().any(|command| is_download(command) || is_decoder(command))
                }
            })
    })
}

/// PowerShell's encoded command, or inline code that decodes a blob and
/// runs it (`python -c "…os.system(base64.b64decode(…))"`).
fn runs_encoded_code(command: &Command) -> bool {
    let program = command.program();
    let encoded_option = |arg: &str| matches!(arg, "-enc" | "-encodedcommand" | "-e" | "-ec" | "-en" | "-encoded");
    if matches!(program, "powershell" | "pwsh" | "powershell.exe" | "pwsh.exe") && command.args().any(encoded_option) {
        return true;
    }
    is_interpreter(program)
        && command.args().any(|arg| {
            let decodes = ["b64decode", "base64", "fromhex", "unhexlify", "atob(", "buffer.from("]
                .iter()
                .any(|call| arg.contains(call));
            let runs = ["system(", "exec(", "eval(", "popen(", "subprocess", "execsync(", "spawn("]
                .iter()
                .any(|call| arg.contains(call));
            decodes && runs
        })
}

/// The files that hold credentials, by where tools keep them.
pub fn is_credential_path(path: &str) -> bool {
    let path = path.trim_start_matches('@').trim_matches(['"', '\'']);
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    if name.ends_with(".pub") || name.ends_with(".example") || name.ends_with(".sample") || name.ends_with(".template")
    {
        return false;
    }
    matches!(
        name,
        ".env"
            | ".netrc"
            | "_netrc"
            | ".npmrc"
            | ".pypirc"
            | ".git-credentials"
            | "id_rsa"
            | "id_ed25519"
            | "id_ecdsa"
            | "id_dsa"
            | "shadow"
            | "credentials"
            | "credentials.json"
            | "hosts.yml"
            | "kubeconfig"
            | ".dockercfg"
            | "secrets.yml"
            | "secrets.yaml"
            | ".vault-token"
    ) && (name != "shadow" || path.contains("/etc/"))
        && (name != "hosts.yml" || path.contains("gh/"))
        && (name != "credentials" || path.contains(".aws") || path.contains(".docker"))
        || name.starts_with(".env.") && !name.ends_with(".example")
        || path.contains(".ssh/") && !name.starts_with("known_hosts") && !name.starts_with("config")
        || path.contains(".kube/config")
        || path.contains(".docker/config.json")
        || path.contains(".gnupg/")
}

fn is_sender(command: &Command) -> bool {
    is_download(command)
        || matches!(command.program(), "nc" | "ncat" | "socat" | "scp" | "rsync" | "mail" | "sendmail" | "ssh")
}

/// A credential file read out (`cat ~/.aws/credentials`), sent (`curl -d
/// @.env`, `scp ~/.ssh/id_rsa host:`), or the whole environment sent
/// (`printenv | curl …`).
fn reads_credentials(pipeline: &Pipeline) -> bool {
    let sends = pipeline.iter().any(is_sender);
    pipeline.iter().any(|command| {
        let args: Vec<&str> = command.args().collect();
        // The commands that print a stored credential, by their manuals.
        let prints_stored = match command.program() {
            "gh" => args.starts_with(&["auth", "token"]),
            "git" => args.starts_with(&["credential", "fill"]),
            "security" => args.first().is_some_and(|verb| verb.starts_with("find-") && verb.ends_with("-password")),
            "gcloud" => args.windows(2).any(|pair| pair == ["auth", "print-access-token"]),
            "aws" => args.starts_with(&["configure", "get"]) || args.starts_with(&["sts", "get-session-token"]),
            _ => false,
        };
        // A credential written into the command line, where shell history
        // and process lists keep it.
        let literal_secret = command.words.iter().any(|word| {
            word.text.split_once('=').is_some_and(|(name, value)| {
                super::is_assignment(&word.text)
                    && ["token", "secret", "password", "passwd", "api_key", "apikey"]
                        .iter()
                        .any(|part| name.contains(part))
                    && !value.is_empty()
                    && !value.starts_with('$')
            })
        });
        if prints_stored || literal_secret {
            return true;
        }
        let readers =
            ["cat", "less", "more", "head", "tail", "type", "get-content", "base64", "xxd", "cp", "tar", "zip"];
        // What `cp` and `scp` write to is their last argument.
        let copies = matches!(command.program(), "cp" | "scp" | "rsync");
        let read: Vec<&str> = command.args().filter(|arg| !arg.starts_with('-')).collect();
        let sources = if copies && read.len() > 1 { &read[..read.len() - 1] } else { &read[..] };
        let touches = sources.iter().any(|arg| is_credential_path(arg));
        (touches && (readers.contains(&command.program()) || is_sender(command)))
            || (sends && matches!(command.program(), "printenv" | "env" | "set") && command.args().next().is_none())
    })
}

/// The value of `NAME=value` or `setx NAME value` for one of `names`.
fn assigned<'a>(command: &'a Command, names: &[&str]) -> Option<&'a str> {
    let words: Vec<&str> = command.words.iter().map(|word| word.text.as_str()).collect();
    for (index, word) in words.iter().enumerate() {
        if let Some((name, value)) = word.split_once('=') {
            if names.contains(&name) {
                return Some(value);
            }
        } else if names.contains(word) && index == 0 {
            return Some(words.get(1).copied().unwrap_or(""));
        }
    }
    None
}

/// A setting switched off, in any of the spellings tools accept.
pub(super) fn is_off(value: &str) -> bool {
    matches!(value.trim_matches(['"', '\'']), "0" | "false" | "no" | "off" | "none" | "")
}

/// Variables whose value off switches verification off.
pub(super) const VERIFY_SWITCHES: [&str; 2] = ["node_tls_reject_unauthorized", "pythonhttpsverify"];
/// Variables that switch verification off by being set at all (git reads
/// `GIT_SSL_NO_VERIFY` whatever its value).
pub(super) const NO_VERIFY_FLAGS: [&str; 4] = ["git_ssl_no_verify", "gonosumcheck", "goinsecure", "gonosumdb"];

/// TLS, certificate, host-key and signature checks switched off, by the
/// variables and options the tools document for it.
fn disables_verification(command: &Command) -> bool {
    if assigned(command, &VERIFY_SWITCHES).is_some_and(is_off)
        || assigned(command, &NO_VERIFY_FLAGS).is_some()
        || assigned(command, &["gosumdb"]).is_some_and(|value| value.trim_matches(['"', '\'']) == "off")
        || assigned(command, &["requests_ca_bundle", "curl_ca_bundle", "ssl_cert_file"])
            .is_some_and(|value| value.trim_matches(['"', '\'']).is_empty() || value.contains("/dev/null"))
        || assigned(command, &["pip_trusted_host", "npm_config_strict_ssl"])
            .is_some_and(|value| value.trim_matches(['"', '\'']) != "true")
    {
        return true;
    }
    let args: Vec<&str> = command.args().collect();
    let key_set_false = |keys: &[&str]| {
        args.windows(2).any(|pair| keys.contains(&pair[0]) && is_off(pair[1]))
            || args
                .iter()
                .any(|arg| arg.split_once('=').is_some_and(|(key, value)| keys.contains(&key) && is_off(value)))
    };
    match command.program() {
        "git" => key_set_false(&["http.sslverify", "http.sslverify=false"]) || args.contains(&"http.sslverify=false"),
        "npm" | "yarn" | "pnpm" => key_set_false(&["strict-ssl", "strict_ssl"]) || args.contains(&"--strict-ssl=false"),
        "pip" | "pip3" | "uv" | "poetry" => {
            args.iter().any(|arg| arg.starts_with("--trusted-host") || arg.starts_with("global.trusted-host"))
        }
        "conda" => key_set_false(&["ssl_verify"]),
        "curl" => args.iter().any(|arg| {
            matches!(*arg, "-k" | "--insecure")
                || arg.starts_with('-') && !arg.starts_with("--") && arg.len() <= 6 && arg.contains('k')
        }),
        "wget" => args.contains(&"--no-check-certificate"),
        "helm" | "kubectl" => args.iter().any(|arg| arg.starts_with("--insecure-skip-tls-verify")),
        "ssh" | "scp" | "rsync" => args
            .iter()
            .any(|arg| arg.contains("stricthostkeychecking=no") || arg.contains("userknownhostsfile=/dev/null")),
        "apt" | "apt-get" => args.iter().any(|arg| matches!(*arg, "--allow-unauthenticated" | "--no-check-gpg")),
        "yum" | "dnf" | "rpm" => args.iter().any(|arg| matches!(*arg, "--nogpgcheck" | "--nosignature" | "--nodigest")),
        "setenforce" => args.first().is_some_and(|mode| matches!(*mode, "0" | "permissive")),
        program if is_interpreter(program) => args.iter().any(|arg| arg.replace(' ', "").contains("verify=false")),
        _ => false,
    }
}

/// Hosts every project may use: the public registries and forges.
/// Pointing a tool back at one of these undoes a change rather than makes
/// one.
const PUBLIC_SOURCES: [&str; 12] = [
    "registry.npmjs.org",
    "registry.yarnpkg.com",
    "pypi.org",
    "pypi.python.org",
    "files.pythonhosted.org",
    "crates.io",
    "index.crates.io",
    "proxy.golang.org",
    "rubygems.org",
    "repo.maven.apache.org",
    "github.com",
    "gitlab.com",
];

/// A public source, or one of the project's own hosts (or a host under
/// one).
pub fn is_known_source(url: &str, own_hosts: &[String]) -> bool {
    crate::hosts::host_of(url.trim_matches(['"', '\'']))
        .is_some_and(|host| PUBLIC_SOURCES.contains(&host) || crate::hosts::is_own(host, own_hosts))
}

/// The environment variables that name where packages come from.
const SOURCE_VARIABLES: &[&str] = &[
    "pip_index_url",
    "pip_extra_index_url",
    "npm_config_registry",
    "goproxy",
    "uv_index_url",
    "uv_extra_index_url",
    "cargo_registries_crates_io_index",
];

/// A pip or uv option that names an index, its value after it or inline.
fn is_index_option(arg: &str) -> bool {
    matches!(
        arg,
        "-i" | "--index-url" | "--extra-index-url" | "--index" | "global.index-url" | "global.extra-index-url"
    ) || arg.starts_with("--index-url=")
        || arg.starts_with("--extra-index-url=")
        || arg.starts_with("global.index-url=")
}

/// A registry, an index or a git remote pointed somewhere new.
fn changes_source(command: &Command, own_hosts: &[String]) -> bool {
    let is_known = |url: &str| is_known_source(url, own_hosts);
    let args: Vec<&str> = command.args().collect();
    let url_after = |index: usize| {
        args.get(index..)
            .unwrap_or_default()
            .iter()
            .find(|arg| arg.contains("://") || arg.contains('@') && arg.contains(':'))
    };
    if let Some(value) = assigned(command, SOURCE_VARIABLES) {
        // `setx NAME value` reads its value from the next word: a URL, or
        // prose that only names the variable.
        return value.contains("://") && !is_known(value);
    }
    match command.program() {
        "git" => {
            let remote = args.first() == Some(&"remote") && matches!(args.get(1), Some(&"add") | Some(&"set-url"));
            let rewrite = args.first() == Some(&"config")
                && args.iter().any(|arg| arg.starts_with("url.") && arg.contains("insteadof"));
            (remote && url_after(2).is_none_or(|url| !is_known(url))) || rewrite
        }
        "npm" | "yarn" | "pnpm" => {
            let position = args
                .iter()
                .position(|arg| *arg == "registry" || arg.starts_with("--registry") || arg.ends_with(":registry"));
            position.is_some_and(|at| {
                let inline = args[at].split_once('=').map(|(_, value)| value);
                inline.or_else(|| url_after(at + 1).copied()).is_none_or(|url| !is_known(url))
            }) && (args
                .first()
                .is_some_and(|first| matches!(*first, "config" | "set" | "install" | "i" | "add" | "publish")))
        }
        "pip" | "pip3" | "uv" | "pipx" => {
            let position = args.iter().position(|arg| is_index_option(arg));
            position.is_some_and(|at| {
                let inline = args[at].split_once('=').map(|(_, value)| value);
                inline.or_else(|| url_after(at + 1).copied()).is_none_or(|url| !is_known(url))
            })
        }
        "go" => {
            args.first() == Some(&"env")
                && args.iter().any(|arg| {
                    arg.starts_with("goproxy=")
                        || arg.starts_with("goprivate=")
                        || arg.starts_with("gonosumdb=")
                        || arg.starts_with("gosumdb=off")
                })
        }
        "gem" => args.first() == Some(&"sources") && args.iter().any(|arg| matches!(*arg, "--add" | "-a")),
        "bundle" => args.first() == Some(&"config") && args.iter().any(|arg| arg.starts_with("mirror.")),
        "conda" => {
            args.first() == Some(&"config")
                && args.contains(&"channels")
                && args.iter().any(|arg| matches!(*arg, "--add" | "--prepend"))
        }
        "cargo" => args.iter().any(|arg| arg.contains("source.crates-io") || arg.contains("replace-with")),
        "add-apt-repository" => true,
        "tee" | "echo" | "printf" | "cp" | "mv" => args.iter().any(|arg| arg.contains("/etc/apt/sources.list")),
        _ => false,
    }
}

/// Global configuration changed where it matters to security: the keys
/// that run code, keep or send credentials, or route traffic.
fn changes_global_config(command: &Command) -> bool {
    let args: Vec<&str> = command.args().collect();
    match command.program() {
        "git" => {
            let global =
                args.first() == Some(&"config") && args.iter().any(|arg| matches!(*arg, "--global" | "--system"));
            let key = args.iter().skip(1).find(|arg| !arg.starts_with('-')).copied().unwrap_or_default();
            global
                && [
                    "core.hookspath",
                    "core.sshcommand",
                    "core.fsmonitor",
                    "credential.helper",
                    "http.proxy",
                    "https.proxy",
                    "include.path",
                    "protocol.",
                    "safe.directory",
                    "http.sslcainfo",
                    "core.gitproxy",
                ]
                .iter()
                .any(|risky| key.starts_with(risky))
        }
        "npm" | "yarn" | "pnpm" => {
            args.first().is_some_and(|first| matches!(*first, "config" | "set"))
                && args.iter().any(|arg| matches!(*arg, "-g" | "--global" | "--location=global"))
                && args.iter().any(|arg| {
                    arg.starts_with("ignore-scripts")
                        || arg.starts_with("unsafe-perm")
                        || arg.starts_with("proxy")
                        || arg.starts_with("https-proxy")
                        || arg.starts_with("cafile")
                        || *arg == "ca"
                        || arg.starts_with("ca=")
                })
        }
        _ => false,
    }
}

/// Hooks, reviews, protections and an agent's approvals bypassed, by the
/// options and variables that exist to skip them.
fn bypasses_checks(command: &Command) -> bool {
    let set = |value: &str| {
        let value = value.trim_matches(['"', '\'']);
        !value.is_empty() && value != "false"
    };
    if assigned(command, &["husky", "husky_skip_hooks", "pre_commit_allow_no_config", "git_hooks_skip"])
        .is_some_and(set)
    {
        return true;
    }
    // pre-commit's `SKIP=hook git commit`: a name too common in code
    // (`skip=None`) to count without the commit it skips hooks of.
    if assigned(command, &["skip"]).is_some_and(set)
        && command.words.iter().any(|word| matches!(word.text.as_str(), "git" | "pre-commit"))
    {
        return true;
    }
    let args: Vec<&str> = command.args().collect();
    match command.program() {
        "git" => {
            let verb = args.first().copied().unwrap_or_default();
            let no_verify = args.contains(&"--no-verify")
                || (verb == "commit"
                    && args.iter().any(|arg| arg.starts_with('-') && !arg.starts_with("--") && arg.contains('n')));
            let hooks_off = verb == "config"
                && args.iter().any(|arg| arg.starts_with("core.hookspath"))
                && args.iter().any(|arg| arg.contains("/dev/null") || *arg == "''" || arg.ends_with("=/dev/null"));
            // A forced push to a shared branch rewrites what was reviewed.
            let forced = verb == "push"
                && args.iter().any(|arg| matches!(*arg, "-f" | "--force") || arg.starts_with('+'))
                && args.iter().any(|arg| {
                    let branch = arg.trim_start_matches('+');
                    let branch = branch.rsplit(':').next().unwrap_or(branch);
                    PROTECTED_BRANCHES.contains(&branch)
                });
            no_verify
                || hooks_off
                || forced
                || (verb == "-c" && args.iter().any(|arg| arg.starts_with("core.hookspath=")))
        }
        "rm" | "del" | "remove-item" | "rmdir" => {
            args.iter().any(|arg| arg.trim_end_matches('/').ends_with(".git/hooks") || arg.contains(".husky"))
        }
        // A hook written by a command runs on every later commit.
        "cp" | "mv" | "ln" | "tee" | "echo" | "printf" | "cat" => args.iter().any(|arg| arg.contains(".git/hooks/")),
        "pre-commit" => args.first() == Some(&"uninstall"),
        "gh" => {
            (args.starts_with(&["pr", "merge"]) && args.contains(&"--admin"))
                || (args.first() == Some(&"api")
                    && args.iter().any(|arg| arg.ends_with("/protection") || arg.contains("/protection/"))
                    && args.iter().any(|arg| {
                        arg.eq_ignore_ascii_case("delete") || *arg == "--method=delete" || *arg == "-xdelete"
                    }))
        }
        "claude" | "codex" | "gemini" => {
            args.iter().any(|arg| {
                matches!(
                    *arg,
                    "--dangerously-skip-permissions"
                        | "--dangerously-bypass-approvals-and-sandbox"
                        | "--yolo"
                        | "-y"
                        | "--full-auto"
                ) || arg.starts_with("--approval-mode=yolo")
            }) || args
                .windows(2)
                .any(|pair| pair == ["--approval-mode", "yolo"] || pair == ["--permission-mode", "bypasspermissions"])
        }
        _ => false,
    }
}

/// The branches a forced push to rewrites what others rely on.
const PROTECTED_BRANCHES: [&str; 6] = ["main", "master", "trunk", "develop", "release", "production"];

/// A mode that lets everyone write: the others' digit has the write bit.
fn octal_lets_others_write(mode: &str) -> bool {
    mode.len() >= 3
        && mode.chars().all(|character| character.is_digit(8))
        && (mode.chars().last().and_then(|digit| digit.to_digit(8)).is_some_and(|digit| digit & 2 != 0)
            || mode.len() == 4 && mode.starts_with(['4', '6']))
}

fn widens_permissions(command: &Command) -> bool {
    let args: Vec<&str> = command.args().collect();
    match command.program() {
        "chmod" => args.iter().any(|arg| {
            octal_lets_others_write(arg)
                || arg.split(',').any(|clause| {
                    let (who, what) = clause.split_at(clause.find(['+', '=']).unwrap_or(clause.len()));
                    (who.is_empty() || who.contains(['o', 'a']))
                        && what.starts_with(['+', '='])
                        && what.contains('w')
                        && !who.is_empty()
                        || what.starts_with('+') && what.contains('s')
                })
        }),
        "chown" => args.contains(&"-r") && args.last() == Some(&"/"),
        "setfacl" => args.iter().any(|arg| (arg.starts_with("o::") || arg.starts_with("other::")) && arg.contains('w')),
        "icacls" => args.iter().any(|arg| arg.starts_with("everyone:") && arg.contains(['f', 'm', 'w'])),
        "gh" => {
            args.starts_with(&["repo", "edit"])
                && args.iter().any(|arg| arg.contains("visibility") && arg.contains("public"))
                || args.windows(2).any(|pair| pair == ["--visibility", "public"])
        }
        "aws" => args.iter().any(|arg| arg.contains("public-read")),
        "gsutil" => args.iter().any(|arg| arg.contains("allusers")),
        "docker" => {
            args.first() == Some(&"run")
                && args.iter().any(|arg| *arg == "--privileged" || arg.starts_with("--security-opt=seccomp=unconfined"))
        }
        _ => false,
    }
}

/// The files CI runs from, by each service's documented place.
fn is_ci_path(path: &str) -> bool {
    path.contains(".github/workflows")
        || path.ends_with(".gitlab-ci.yml")
        || path.contains(".circleci")
        || path.ends_with("jenkinsfile")
        || path.ends_with("azure-pipelines.yml")
        || path.ends_with(".travis.yml")
        || path.contains(".buildkite")
        || path.ends_with("bitbucket-pipelines.yml")
        || path.contains(".woodpecker")
}

fn deletes_ci(command: &Command) -> bool {
    let args: Vec<&str> = command.args().collect();
    match command.program() {
        "rm" | "del" | "remove-item" | "rmdir" | "unlink" | "truncate" => args.iter().any(|arg| is_ci_path(arg)),
        "git" => args.first() == Some(&"rm") && args.iter().any(|arg| is_ci_path(arg)),
        "mv" => args.iter().rev().skip(1).any(|arg| is_ci_path(arg)),
        "echo" | "printf" | "cat" => args.windows(2).any(|pair| matches!(pair[0], ">" | ">|") && is_ci_path(pair[1])),
        _ => false,
    }
}
