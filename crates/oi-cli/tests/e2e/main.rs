//! End-to-end tests: the real `interpreter` binary against the mock LLM
//! server and real Python and bash kernels.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    reason = "test code: a panic is a test failure"
)]

mod config;
mod errors;
mod exec;
mod interactive;
mod support;
