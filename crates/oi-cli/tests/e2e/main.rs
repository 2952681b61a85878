//! End-to-end tests: the real `interpreter` binary against the mock LLM
//! server and real Python and bash kernels.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    clippy::print_stderr,
    reason = "test code: a panic is a test failure; skips are explained on stderr"
)]

mod acp;
mod appserver;
mod appserver_sdk;
mod codex;
mod codex_sdk;
mod coming_from;
mod completion;
mod config;
mod container;
mod context;
mod errors;
mod eval;
mod exec;
mod families;
mod first_run;
mod interactive;
mod kernels;
mod local;
mod mcp;
mod mcp_client;
mod mcp_sdk;
mod os;
mod pty;
mod python_api;
mod sandbox;
mod server;
mod sessions;
mod snapshots;
mod support;
mod tui;
