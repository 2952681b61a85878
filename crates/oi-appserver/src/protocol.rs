//! The part of Codex's app-server protocol (v2) oi speaks: request
//! parameters as clients send them, and the responses and notifications
//! oi sends, in the protocol's own field names (camelCase). Fields oi does
//! not use are read and ignored; fields oi cannot fill are sent as their
//! "unknown" value (`null`, `[]`). The shapes are checked against the
//! protocol's published schema by the tests, and by driving the server
//! with the official Python client (`openai-codex`).

use serde::{Deserialize, Serialize};
use serde_json::Value;

// ---------------------------------------------------------------- requests

/// `initialize`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeParams {
    pub client_info: ClientInfo,
}

#[derive(Debug, Clone, Deserialize)]
pub struct ClientInfo {
    pub name: String,
    #[serde(default)]
    pub version: Option<String>,
}

/// Codex's approval policy: a word, or `{"granular": {…}}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum AskForApproval {
    Word(String),
    Granular { granular: Value },
}

/// `thread/start`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ThreadStartParams {
    #[serde(default)]
    pub approval_policy: Option<AskForApproval>,
    #[serde(default)]
    pub base_instructions: Option<String>,
    #[serde(default)]
    pub config: Option<serde_json::Map<String, Value>>,
    #[serde(default)]
    pub cwd: Option<String>,
    #[serde(default)]
    pub developer_instructions: Option<String>,
    #[serde(default)]
    pub ephemeral: Option<bool>,
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub model_provider: Option<String>,
    /// `read-only`, `workspace-write` or `danger-full-access`.
    #[serde(default)]
    pub sandbox: Option<String>,
}

/// `thread/resume`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ThreadResumeParams {
    pub thread_id: String,
    #[serde(flatten)]
    pub start: ThreadStartParams,
    #[serde(default)]
    pub exclude_turns: bool,
}

/// `thread/read`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ThreadReadParams {
    pub thread_id: String,
    #[serde(default)]
    pub include_turns: bool,
}

/// `thread/list`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ThreadListParams {
    #[serde(default)]
    pub archived: Option<bool>,
    /// An offset into the list, as a previous answer's `nextCursor`.
    #[serde(default)]
    pub cursor: Option<String>,
    /// One folder or several.
    #[serde(default)]
    pub cwd: Option<CwdFilter>,
    #[serde(default)]
    pub limit: Option<u32>,
    #[serde(default)]
    pub model_providers: Option<Vec<String>>,
    #[serde(default)]
    pub search_term: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum CwdFilter {
    One(String),
    Many(Vec<String>),
}

/// `turn/start`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TurnStartParams {
    pub thread_id: String,
    pub input: Vec<UserInput>,
    #[serde(default)]
    pub approval_policy: Option<AskForApproval>,
    #[serde(default)]
    pub cwd: Option<String>,
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub output_schema: Option<Value>,
    #[serde(default)]
    pub sandbox_policy: Option<SandboxPolicy>,
}

/// `turn/interrupt`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TurnInterruptParams {
    pub thread_id: String,
    pub turn_id: String,
}

/// One piece of a user's input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum UserInput {
    Text {
        text: String,
    },
    /// An image by URL: `data:` URLs are read; others are refused (oi
    /// fetches nothing on a client's behalf).
    Image {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        url: Option<String>,
    },
    LocalImage {
        path: String,
    },
    /// A skill or a mention: passed to the model as a note naming it.
    Skill {
        name: String,
        path: String,
    },
    Mention {
        name: String,
        path: String,
    },
}

/// The answer to `item/commandExecution/requestApproval`.
#[derive(Debug, Clone, Deserialize)]
pub struct CommandApprovalResponse {
    pub decision: Value,
}

// --------------------------------------------------------------- responses

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeResponse {
    pub user_agent: String,
    /// oi's folder (`$INTERPRETER_HOME`).
    pub codex_home: String,
    pub platform_family: String,
    pub platform_os: String,
    pub server_info: ServerInfo,
}

#[derive(Debug, Clone, Serialize)]
pub struct ServerInfo {
    pub name: String,
    pub version: String,
}

/// How far a thread's code may reach, as the protocol says it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum SandboxPolicy {
    DangerFullAccess,
    #[serde(rename_all = "camelCase")]
    ReadOnly {
        #[serde(default)]
        network_access: bool,
    },
    #[serde(rename_all = "camelCase")]
    WorkspaceWrite {
        #[serde(default)]
        writable_roots: Vec<String>,
        #[serde(default)]
        network_access: bool,
    },
    /// Sandboxed by something outside oi (read, not produced).
    #[serde(rename_all = "camelCase")]
    ExternalSandbox {
        #[serde(default)]
        network_access: Value,
    },
}

/// The answer to `thread/start` and `thread/resume`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ThreadSession {
    pub thread: Thread,
    pub model: String,
    pub model_provider: String,
    pub cwd: String,
    pub approval_policy: AskForApproval,
    pub approvals_reviewer: &'static str,
    pub sandbox: SandboxPolicy,
    pub reasoning_effort: Option<String>,
    pub service_tier: Option<String>,
}

/// A conversation: an oi session.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Thread {
    pub id: String,
    pub session_id: String,
    /// The first thing the user asked.
    pub preview: String,
    pub ephemeral: bool,
    pub model_provider: String,
    pub model: Option<String>,
    pub created_at: i64,
    pub updated_at: i64,
    pub status: ThreadStatus,
    /// The session's transcript.
    pub path: Option<String>,
    pub cwd: String,
    pub cli_version: String,
    pub source: &'static str,
    pub project_id: Option<String>,
    pub name: Option<String>,
    pub turns: Vec<Turn>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum ThreadStatus {
    NotLoaded,
    Idle,
    #[serde(rename_all = "camelCase")]
    Active {
        active_flags: Vec<&'static str>,
    },
}

/// One task of a thread.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Turn {
    pub id: String,
    pub items: Vec<ThreadItem>,
    /// `full` when `items` holds the turn's items, `notLoaded` when they
    /// came as notifications instead.
    pub items_view: &'static str,
    pub status: TurnStatus,
    pub error: Option<TurnError>,
    pub started_at: Option<i64>,
    pub completed_at: Option<i64>,
    pub duration_ms: Option<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum TurnStatus {
    InProgress,
    Completed,
    Interrupted,
    Failed,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TurnError {
    pub message: String,
    /// How to fix it, when oi knows.
    pub additional_details: Option<String>,
}

/// An item of a turn.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(
    tag = "type",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum ThreadItem {
    UserMessage {
        id: String,
        content: Vec<UserInput>,
    },
    AgentMessage {
        id: String,
        text: String,
    },
    Reasoning {
        id: String,
        summary: Vec<String>,
        content: Vec<String>,
    },
    /// A run of code. `command` is the code as it ran (the command line
    /// for the shell); `language` (oi's) says which language.
    CommandExecution {
        id: String,
        command: String,
        cwd: String,
        status: CommandStatus,
        command_actions: Vec<Value>,
        aggregated_output: Option<String>,
        exit_code: Option<i32>,
        duration_ms: Option<u64>,
        source: &'static str,
        language: String,
    },
    FileChange {
        id: String,
        changes: Vec<FileUpdateChange>,
        status: CommandStatus,
    },
    /// An image a run made.
    ImageView {
        id: String,
        path: String,
    },
}

impl ThreadItem {
    pub fn id(&self) -> &str {
        match self {
            Self::UserMessage { id, .. }
            | Self::AgentMessage { id, .. }
            | Self::Reasoning { id, .. }
            | Self::CommandExecution { id, .. }
            | Self::FileChange { id, .. }
            | Self::ImageView { id, .. } => id,
        }
    }
}

/// Where a run (or a file change) is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum CommandStatus {
    InProgress,
    Completed,
    Failed,
    Declined,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileUpdateChange {
    pub path: String,
    pub kind: PatchChangeKind,
    /// A unified diff of the change, when oi has one (else empty).
    pub diff: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum PatchChangeKind {
    Add,
    Delete,
    Update { move_path: Option<String> },
}

/// Tokens, as `thread/tokenUsage/updated` reports them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenUsageBreakdown {
    pub input_tokens: u64,
    pub cached_input_tokens: u64,
    pub cache_write_input_tokens: u64,
    pub output_tokens: u64,
    pub reasoning_output_tokens: u64,
    pub total_tokens: u64,
}

impl From<oi_protocol::Usage> for TokenUsageBreakdown {
    fn from(u: oi_protocol::Usage) -> Self {
        Self {
            input_tokens: u.input_tokens,
            cached_input_tokens: u.cached_input_tokens,
            cache_write_input_tokens: u.cache_write_input_tokens,
            output_tokens: u.output_tokens,
            reasoning_output_tokens: u.reasoning_output_tokens,
            total_tokens: u.input_tokens + u.output_tokens,
        }
    }
}
