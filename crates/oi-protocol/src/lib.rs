//! Plain data shared by every part of oi.
//!
//! This crate is the contract between the agent (`oi-core`) and its front ends
//! (the terminal session, `exec`, the JSONL stream, tests): the conversation
//! [`Message`]s, the agent's [`Event`] stream and the [`Op`]s a front end sends.
//! It does no I/O; everything here is serde data whose JSON form is stable.
//! The words of oi's settings ([`SandboxMode`], [`ApprovalPolicy`],
//! [`HarnessKind`], [`WireApi`]) are defined here once, for every crate.

mod event;
mod message;
mod op;
mod secrets;
mod vocabulary;

pub use event::{
    Event, FileChange, FileChangeKind, OutputStream, RunId, RunStatus, SkipReason, StopReason,
};
pub use message::{ContentPart, Message, ToolCall, Usage};
pub use op::{Op, ReviewDecision};
pub use secrets::{REDACTED, Secrets};
pub use vocabulary::{ApprovalPolicy, HarnessKind, SandboxMode, UnknownWord, WireApi};

/// The language of OS mode's screen actions in run events
/// (`CodeProposed`, `ApprovalRequested` …): the code is the action,
/// described in one line. It is also the name of the model's tool.
pub const SCREEN_LANGUAGE: &str = "computer";
