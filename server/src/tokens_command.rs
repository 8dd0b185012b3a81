//! `lore-server token create|list|revoke`: token management straight on the
//! database, for operators (and the Helm chart's bootstrap) before any token
//! exists to call the server with.

use std::io::Write as _;

use anyhow::Context as _;
use chrono::Utc;

use crate::auth::{self, Role};
use crate::{Config, Database};
use lore_store::tokens::{self, NewToken, TokenInfo};
use lore_types::validate;

#[derive(Debug, clap::Subcommand)]
pub enum TokenCommand {
    /// Create a token and print it (once: only its hash is stored).
    Create(CreateArgs),
    /// List tokens (never their secrets).
    List {
        /// Include revoked tokens.
        #[arg(long)]
        all: bool,
    },
    /// Revoke a token by id or name; every replica stops accepting it at
    /// once.
    Revoke {
        /// Token id (from `list`) or name.
        token: String,
    },
}

#[derive(Debug, clap::Args)]
pub struct CreateArgs {
    /// A name to recognize the token by (unique among live tokens).
    #[arg(long)]
    name: String,
    /// agent (write actions and failures, read), sidecar (ship actions
    /// only), reader (read only) or admin (everything).
    #[arg(long)]
    role: Role,
    /// A project the token may touch (repeat for several).
    #[arg(long = "project", required_unless_present = "all_projects")]
    projects: Vec<String>,
    /// Every project, present and future.
    #[arg(long, conflicts_with = "projects")]
    all_projects: bool,
    /// Lifetime, e.g. 30d or 12h; no expiry when not given.
    #[arg(long, value_parser = humantime::parse_duration)]
    expires_in: Option<std::time::Duration>,
}

pub async fn run(config: &Config, command: TokenCommand) -> anyhow::Result<()> {
    let database = Database::open(config).await?;
    // The token table may not exist yet on a fresh database.
    let result = match config.database.migrate_on_start {
        true => lore_store::migrate(&database.pool).await.context("cannot apply migrations"),
        false => Ok(()),
    };
    let result = match result {
        Ok(()) => execute(&database, command).await,
        Err(error) => Err(error),
    };
    database.close().await;
    result
}

async fn execute(database: &Database, command: TokenCommand) -> anyhow::Result<()> {
    let pool = &database.pool;
    match command {
        TokenCommand::Create(args) => {
            let token = new_token(args)?;
            let (token_id, secret) = auth::create_token(pool, &token).await?;
            eprintln!(
                "created {} token {} ({token_id}) for {}",
                token.role,
                token.name,
                describe_projects(token.projects.as_deref())
            );
            // Only the secret on stdout, so `TOKEN=$(lore-server token create ...)` works.
            println!("{secret}");
        }
        TokenCommand::List { all } => {
            let listed = tokens::list(pool, all).await?;
            let mut out = std::io::stdout().lock();
            writeln!(
                out,
                "{:<36}  {:<20}  {:<7}  {:<24}  {:<16}  {:<16}  status",
                "id", "name", "role", "projects", "created", "last used"
            )?;
            for token in &listed {
                writeln!(out, "{}", describe(token))?;
            }
        }
        TokenCommand::Revoke { token } => {
            let revoked = tokens::revoke(pool, &token).await?;
            eprintln!("revoked {} token {} ({})", revoked.role, revoked.name, revoked.token_id);
        }
    }
    Ok(())
}

fn new_token(args: CreateArgs) -> anyhow::Result<NewToken> {
    let name = validate::text("name", &args.name, 128, true)?;
    let projects = if args.all_projects {
        None
    } else {
        let checked =
            args.projects.iter().map(|project| validate::project("project", project)).collect::<Result<Vec<_>, _>>()?;
        Some(checked)
    };
    let expires_at = args
        .expires_in
        .map(|lifetime| chrono::Duration::from_std(lifetime).map(|lifetime| Utc::now() + lifetime))
        .transpose()
        .context("--expires-in is too long")?;
    Ok(NewToken { name: name.trim().to_owned(), role: args.role, projects, expires_at })
}

fn describe_projects(projects: Option<&[String]>) -> String {
    projects.map_or_else(|| "every project".to_owned(), |projects| projects.join(","))
}

fn describe(token: &TokenInfo) -> String {
    let minutes = |at: chrono::DateTime<Utc>| at.format("%Y-%m-%d %H:%M").to_string();
    let status = match (token.revoked_at, token.expires_at) {
        (Some(at), _) => format!("revoked {}", minutes(at)),
        (None, Some(at)) if at <= Utc::now() => format!("expired {}", minutes(at)),
        (None, Some(at)) => format!("live until {}", minutes(at)),
        (None, None) => "live".to_owned(),
    };
    format!(
        "{:<36}  {:<20}  {:<7}  {:<24}  {:<16}  {:<16}  {status}",
        token.token_id,
        token.name,
        token.role,
        describe_projects(token.projects.as_deref()),
        minutes(token.created_at),
        token.last_used_at.map_or_else(|| "never".to_owned(), minutes),
    )
}
