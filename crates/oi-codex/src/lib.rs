//! Codex compatibility. Programs written for OpenAI's Codex — its SDKs,
//! and tools that read `codex exec --json` — drive oi unchanged:
//! [`ExecMapper`] turns oi's events into Codex's JSON lines,
//! [`config::translate`] reads Codex's configuration keys as oi's, and
//! [`structured`] makes a final answer JSON that validates against a
//! schema (`--output-schema`).

pub mod config;
pub mod exec_events;
mod mapper;
pub mod structured;

pub use mapper::{
    AggregatedOutput, ExecMapper, MAX_AGGREGATED_OUTPUT, UPDATE_INTERVAL, exit_code, stop_message,
};
