//! Integration tests of the gRPC API: the real server stack in process, real
//! gRPC over TCP, a real PostgreSQL with pgvector. One binary, one module per
//! service.

mod actions;
mod documents;
mod drafts;
mod knowledge;
mod scope;
mod search;
mod watch;
