//! The evaluation harness behind `lore eval …`: how well Lore's parts work,
//! measured on data sets through the real server (redaction, retrieval,
//! grouping, routes, replay) or in this process with each source left out
//! of every choice (the screen, naming, and the `--leave-one-out`, `--people`
//! and `--corrections` forms). The `lore` binary only parses the command
//! line and connects; everything an evaluation does is here, apart from
//! the commands people use every day.

mod bars;
pub mod embedding_progress;
mod grouping;
mod leave_one_out;
mod naming;
mod redaction;
mod replay;
mod retrieval;
mod routes;
mod screening;

use clap::Subcommand;

/// A connection to lore-server whose every call carries the bearer token.
pub type Channel = lore_proto::auth::AuthChannel;

#[derive(Subcommand)]
pub enum Command {
    /// Redaction recall and over-redaction, through the real LogAction, or
    /// in this process with each source left out (`--leave-one-out`).
    Redaction(redaction::Args),
    /// nDCG@10, Recall@10 and MRR@10 of knowledge search on a BEIR-format
    /// set, per mode, through the real RPCs.
    Retrieval(retrieval::Args),
    /// Group accuracy of CaptureFailure's pattern grouping on LogHub
    /// `*_structured.csv` files or on agents' failing commands (`--runs`),
    /// through the real RPC, or in this process with each file's set left
    /// out (`--leave-one-out`).
    Grouping(grouping::Args),
    /// Recall and false-quarantine rate of the injection screen, each
    /// source left out of the fit in turn (needs no server).
    Screening(screening::Args),
    /// Whether Lore would have warned real agent runs before a failure
    /// earlier runs of the same repository hit: runs replayed in time
    /// order into the server through the hooks (or `--in-process`, with
    /// no server), the setting chosen with each repository left out.
    Replay(replay::Args),
    /// Whether a failure is named by the line that explains it (not a
    /// summary or an exit code), on real agent runs and real tool failure
    /// lines, per source (needs no server).
    Naming(naming::Args),
    /// Whether payloads written as an agent writes (a fix, a lesson, a
    /// session's summary, a check's output) reach the next agent's
    /// briefing, through the real RPCs, per source and route.
    Routes(routes::Args),
}

/// How an evaluation runs: in this process, or against a server.
pub enum Run {
    /// Needs no server: the result.
    Done(anyhow::Result<()>),
    /// Needs the server: run it with [`Command::run`] once connected.
    Connect(Command),
}

impl Command {
    /// Runs what needs no server at once; the rest waits for a connection.
    pub fn run_offline(self) -> Run {
        Run::Done(match self {
            Command::Screening(args) => screening::run(args),
            Command::Naming(args) => naming::run(args),
            Command::Replay(args) if args.in_process => replay::run_in_process(args),
            Command::Grouping(args) if args.leave_one_out => grouping::leave_one_out(args),
            Command::Grouping(args) if args.corrections => grouping::corrections(args),
            Command::Grouping(args) if args.people.is_some() => {
                let people = args.people.unwrap_or_default();
                grouping::people(args, people)
            }
            Command::Redaction(args) if args.leave_one_out => redaction::leave_one_out(args),
            command => return Run::Connect(command),
        })
    }

    /// Runs against the server `channel` reaches (`server` and `token` are
    /// handed to the hooks a replay runs).
    pub async fn run(self, channel: Channel, server: &str, token: Option<&str>) -> anyhow::Result<()> {
        match self {
            Command::Redaction(args) => redaction::run(channel, args).await,
            Command::Retrieval(args) => retrieval::run(channel, args).await,
            Command::Grouping(args) => grouping::run(channel, args).await,
            Command::Routes(args) => routes::run(channel, args).await,
            Command::Replay(args) => replay::run(channel, server, token, args).await,
            Command::Screening(args) => screening::run(args),
            Command::Naming(args) => naming::run(args),
        }
    }
}
