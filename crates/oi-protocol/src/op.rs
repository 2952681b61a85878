//! What a front end asks the agent to do.

use serde::{Deserialize, Serialize};

use crate::RunId;

/// An operation submitted to the agent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Op {
    /// Start a task with the user's words (queued if a task is running).
    UserInput { text: String },
    /// Answer an `ApprovalRequested` event.
    Approve { id: RunId, decision: ReviewDecision },
    /// Text for the standard input of the running program (after an
    /// `InputRequested` event); a line break is not added.
    Input { id: RunId, text: String },
    /// Stop the running task: the model request or the running code.
    Interrupt,
    /// Restore the workspace to its state before the last run that changed
    /// it (answered with `Undone` or `Error`).
    Undo,
    /// Use another model from the next request on (same provider).
    SetModel { model: String },
    /// Stop everything, release the kernels, send `ShutdownComplete`.
    Shutdown,
}

/// The user's answer to a proposed run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum ReviewDecision {
    /// Run it.
    Approve,
    /// Run it, and every later run of this session, without asking.
    ApproveForSession,
    /// Run this code instead (the user edited it).
    Edit { code: String },
    /// Do not run it; the model is told the user declined.
    Decline,
    /// Nobody can answer (no terminal): do not run it, and tell the model so.
    NoApprover,
}
