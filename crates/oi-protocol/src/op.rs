//! What a front end asks the agent to do.

use serde::{Deserialize, Serialize};

use crate::{ApprovalPolicy, HarnessKind, RunId};

/// An operation submitted to the agent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Op {
    /// Start a task with the user's words (queued if a task is running),
    /// and image files to show the model (paths).
    UserInput {
        text: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        images: Vec<String>,
    },
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
    /// Make the conversation smaller now: old outputs cut, older turns
    /// summarized (answered with `Compacted` or `Error`).
    Compact,
    /// Use another model from the next request on (same provider).
    SetModel { model: String },
    /// Use another harness from the next request on.
    SetHarness { harness: HarnessKind },
    /// Ask before every run (`ask`) or only before risky ones (`auto`).
    /// `never` is refused here: it is only chosen when a session starts,
    /// on purpose (`--dangerously-allow-all`).
    SetApproval { policy: ApprovalPolicy },
    /// Start a new conversation: forget the history and restart the kernels.
    Reset,
    /// Report the session's figures (answered with `Stats`).
    Stats,
    /// Save the conversation to a file (answered with `Saved`).
    Save { path: String },
    /// Write the conversation for people to read, as Markdown or as a
    /// Jupyter notebook (answered with `Saved` or `Error`).
    Export { path: String, format: ExportFormat },
    /// Replace the conversation with one saved before (answered with `Loaded`).
    Load { path: String },
    /// Replace the conversation with these messages (answered with
    /// `Restored`): a front end that keeps the conversation itself gives
    /// it back.
    Restore { messages: Vec<crate::Message> },
    /// Run code in the session's kernels as the user, without the model
    /// and without asking: answered by the run's events, the last being
    /// `RunFinished` or `RunSkipped`. The conversation is not changed.
    Run { language: String, code: String },
    /// Report the system prompt the model is sent now (answered with
    /// `SystemPrompt`).
    SystemPrompt,
    /// Also send each model request as `RawRequest` events.
    SetVerbose { verbose: bool },
    /// Stop everything, release the kernels, send `ShutdownComplete`.
    Shutdown,
}

/// The user's answer to a proposed run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
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

impl Op {
    /// A task with the user's words and no images.
    pub fn input(text: impl Into<String>) -> Self {
        Self::UserInput {
            text: text.into(),
            images: Vec::new(),
        }
    }
}

/// What `Op::Export` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExportFormat {
    /// A Markdown document: the words, each run's code and its output.
    Markdown,
    /// A Jupyter notebook (nbformat 4): the runs as code cells with their
    /// outputs, the words as Markdown cells.
    Jupyter,
}

impl ExportFormat {
    pub const NAMES: &'static [&'static str] = &["markdown", "jupyter"];

    /// The format a word names (`md`, `ipynb` and `notebook` too).
    pub fn parse(word: &str) -> Option<Self> {
        match word.to_ascii_lowercase().as_str() {
            "markdown" | "md" => Some(Self::Markdown),
            "jupyter" | "ipynb" | "notebook" => Some(Self::Jupyter),
            _ => None,
        }
    }

    /// The usual file extension.
    pub fn extension(self) -> &'static str {
        match self {
            Self::Markdown => "md",
            Self::Jupyter => "ipynb",
        }
    }
}
