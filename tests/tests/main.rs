//! End-to-end tests: the real binaries, real gRPC over TCP, a real
//! PostgreSQL. One test binary, one module per concern.

mod auth;
mod book_commands;
mod claude_code;
mod cli;
mod codex;
mod console;
mod crate_table;
mod deploy_examples;
mod fleet;
mod folders;
mod function_length;
mod gemini;
mod grpc_surface;
mod grpcurl_recipes;
mod hooks;
mod image;
mod knowledge;
mod lifecycle;
mod mcp;
mod python_agent;
mod reports;
mod self_contained;
mod setup_mirror;
mod sidecar;
mod telemetry;
mod tls;
