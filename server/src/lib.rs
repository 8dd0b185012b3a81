//! lore-server: one gRPC server over PostgreSQL + pgvector that owns the
//! knowledge, actions and QA-learning services.
//!
//! # Layout
//! - [`app`]: the server's life: the database, the services, the jobs, the
//!   gRPC server and the console, from start to drain ([`run`]).
//! - [`config`]: the one `Config`, from a TOML file and `LORE_*` variables,
//!   composed of each crate's section.
//! - [`services`]: the services the handlers call, built once.
//! - [`grpc`]: the tonic server; thin handlers per service that translate
//!   proto <-> domain types and call lore-domain.
//! - [`web`]: the web console, on its own port (`web.listen`), beside gRPC.
//! - [`jobs`]: what the leader replica runs on a schedule.
//! - [`auth`]: bearer tokens, roles and the layer that checks them.
//! - [`limits`]: calls in flight, deadlines and rates per token.
//! - [`tool_calls`]: Knowledge and QA calls logged as actions of the
//!   caller's session.
//! - [`tls`]: the listener's certificates.
//! - [`telemetry`]: logs, and OTLP traces and metrics.
//! - [`testing`] (feature `testing`): the in-process server of the tests
//!   and benchmarks, started through [`app`] like `lore-server serve`.
//!
//! Below it: lore-domain (what Lore does), lore-store (the only SQL),
//! lore-types (the types all of them speak), lore-embed and lore-pgtest.

pub mod app;
pub mod auth;
pub mod config;
pub mod gate;
pub mod grpc;
pub mod jobs;
pub mod limits;
pub mod services;
pub mod telemetry;
#[cfg(feature = "testing")]
pub mod testing;
pub mod tls;
pub mod tokens_command;
pub mod tool_calls;
pub mod web;

pub use app::{Database, Listeners, migrate, run};
pub use config::Config;
pub use lore_types::Error;
