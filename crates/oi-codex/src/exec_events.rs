//! The JSON lines `codex exec --json` prints, as oi prints them: a thread,
//! its turns, and the items of a turn (the agent's messages, commands it
//! ran, errors). The shapes follow Codex's own (`thread.started`,
//! `item.completed` with a flattened `item` …) so that Codex's SDKs and
//! tools read oi's stream unchanged; what oi knows beyond them (a run's
//! language, duration, images, checkpoint; a turn's cost) is in extra
//! fields, which those clients ignore.

use serde::{Deserialize, Serialize};

/// One line of the stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum ThreadEvent {
    /// First: the thread (an oi session) exists; `resume THREAD_ID` takes
    /// it up again.
    #[serde(rename = "thread.started")]
    ThreadStarted { thread_id: String },
    /// A turn (one prompt) began.
    #[serde(rename = "turn.started")]
    TurnStarted {},
    /// The turn ended with the model's answer.
    #[serde(rename = "turn.completed")]
    TurnCompleted { usage: Usage },
    /// The turn ended without one: an error, a limit, an interrupt.
    #[serde(rename = "turn.failed")]
    TurnFailed { error: ErrorMessage },
    #[serde(rename = "item.started")]
    ItemStarted { item: ThreadItem },
    #[serde(rename = "item.updated")]
    ItemUpdated { item: ThreadItem },
    #[serde(rename = "item.completed")]
    ItemCompleted { item: ThreadItem },
    /// An error of the stream itself (the session could not go on).
    #[serde(rename = "error")]
    Error { message: String },
}

/// What went wrong, in words.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorMessage {
    pub message: String,
}

/// Tokens of a turn. `input_tokens` includes the cached ones.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Usage {
    pub input_tokens: u64,
    pub cached_input_tokens: u64,
    pub output_tokens: u64,
    /// Input tokens written to the provider's cache (part of
    /// `input_tokens`).
    pub cache_write_input_tokens: u64,
    /// Output tokens spent reasoning (part of `output_tokens`), when the
    /// server says.
    pub reasoning_output_tokens: u64,
    /// oi: what the turn cost in USD, when the model's prices are known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
}

/// An item of a turn: its id (`item_0`, `item_1` … for the whole thread)
/// and what it is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThreadItem {
    pub id: String,
    #[serde(flatten)]
    pub details: ItemDetails,
}

/// The kinds of items oi reports.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ItemDetails {
    /// A reply of the model (the last one of a turn is its answer; JSON
    /// text when an output schema was asked for).
    AgentMessage { text: String },
    /// The model's reasoning before a reply, in words (its thinking text,
    /// or the summary the server gives).
    Reasoning { text: String },
    /// A run of code. For the shell, `command` is the command line; for
    /// the other languages it is the code, and `language` says which.
    CommandExecution(CommandExecution),
    /// The files a run of code changed, found by comparing the workspace
    /// with the checkpoint taken before the run.
    FileChange {
        changes: Vec<FileUpdateChange>,
        status: PatchStatus,
    },
    /// A call of an MCP server's tool.
    McpToolCall(McpToolCall),
    /// Something the user should know that did not stop the turn.
    Error { message: String },
}

/// A call of an MCP server's tool, from when it starts to its end.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct McpToolCall {
    pub server: String,
    pub tool: String,
    pub arguments: serde_json::Value,
    /// What the tool gave back, once it has (its text as one text block).
    pub result: Option<McpToolCallResult>,
    pub error: Option<ErrorMessage>,
    pub status: McpToolCallStatus,
    /// oi: how long it took.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    /// oi: the checkpoint of the workspace taken before the call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoint: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct McpToolCallResult {
    pub content: Vec<serde_json::Value>,
    pub structured_content: Option<serde_json::Value>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum McpToolCallStatus {
    InProgress,
    Completed,
    Failed,
}

/// One file a run changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileUpdateChange {
    pub path: String,
    pub kind: PatchChangeKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PatchChangeKind {
    Add,
    Delete,
    Update,
}

/// Whether the change happened (a run's changes are reported once they
/// are there, so always `completed`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PatchStatus {
    Completed,
    Failed,
}

/// A run of code, from when it starts to its end.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CommandExecution {
    pub command: String,
    /// stdout and stderr, as they came (the start and the end of it when
    /// there was more than [`crate::ExecMapper`] keeps).
    pub aggregated_output: String,
    /// The shell's exit code; for other languages 0 when the code ran to
    /// its end and 1 when it raised; 130 when interrupted, 124 when it hit
    /// its time limit. Left out while it runs, and when the kernel died or
    /// the run did not happen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    pub status: CommandStatus,
    /// oi: the language the code ran in (`python`, `shell` …).
    pub language: String,
    /// oi: how long it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    /// oi: images the run made (files).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<String>,
    /// oi: the checkpoint of the workspace taken before the run (`interpreter
    /// checkpoints restore ID` goes back to it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoint: Option<String>,
    /// oi: what the sandbox refused, and why the run did not happen.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// Where a run is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CommandStatus {
    InProgress,
    Completed,
    Failed,
    /// It was not run (declined, or approval could not be asked for).
    Declined,
}
