//! The oi agent.
//!
//! [`Agent::spawn`] starts a session and returns its channel pair: front ends
//! send [`Op`](oi_protocol::Op)s and receive [`Event`](oi_protocol::Event)s,
//! and never reach into the agent otherwise. A task runs as a loop: ask the
//! model (through the chosen [`HarnessKind`](oi_protocol::HarnessKind)), show the code it proposes, get
//! the user's approval, run it in a persistent kernel, send the output back,
//! and repeat until the model answers without code or a limit stops it.
//!
//! [`setup()`] is how every front end gets a session: from what it knows
//! (a [`SessionRequest`]) to the parts `Agent::spawn` takes, with the
//! configuration loaded and checked and the session's policy decided.

mod agent;
pub mod attachments;
pub mod checkpoint;
mod config;
pub mod context;
pub mod doctor;
mod edits;
mod environment;
pub mod export;
mod harness;
pub mod lmc;
mod loop_guard;
pub mod mcp;
mod output;
pub mod setup;
pub mod transcript;

pub use agent::Agent;
pub use checkpoint::{Checkpoint, CheckpointError, Checkpoints};
pub use config::{AgentConfig, OsMode, TranscriptSetup};
pub use environment::{format_rfc3339, format_utc, new_session_id, now_rfc3339, parse_rfc3339};
pub use setup::{SessionRequest, Setup, SetupError, setup};
