//! The effective configuration, typed.

use std::collections::BTreeMap;

use oi_protocol::{ApprovalPolicy, HarnessKind, SandboxMode, WireApi};

/// Whether a project's own configuration file is applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrustLevel {
    Trusted,
    Untrusted,
}

/// A model provider: where requests go and how they are authenticated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderInfo {
    pub id: String,
    /// A name for messages, e.g. `Kunavo`.
    pub name: String,
    pub base_url: String,
    /// The NAME of the environment variable that holds the bearer token.
    pub env_key: Option<String>,
    pub wire_api: WireApi,
    pub http_headers: BTreeMap<String, String>,
    /// Header name → NAME of the environment variable holding its value.
    pub env_http_headers: BTreeMap<String, String>,
    pub query_params: BTreeMap<String, String>,
    pub request_max_retries: Option<u32>,
    pub stream_idle_timeout_ms: Option<u64>,
    /// The longest one reply may stream, in milliseconds.
    pub stream_max_duration_ms: Option<u64>,
    /// The model used when none is configured.
    pub default_model: Option<String>,
    /// Whether requests fail without a key (`env_key` must then be set).
    pub key_required: bool,
    pub built_in: bool,
}

/// What the configuration says about one model (`[models."<id>"]`); it
/// overrides oi's model catalog field by field.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ModelSettings {
    pub context_window: Option<u32>,
    pub max_output_tokens: Option<u32>,
    /// USD per million input tokens.
    pub input_price: Option<f64>,
    pub output_price: Option<f64>,
    pub cached_input_price: Option<f64>,
    pub cache_write_price: Option<f64>,
    pub tools: Option<bool>,
    pub vision: Option<bool>,
}

/// The effective configuration after every layer was applied.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// The id of the active provider.
    pub model_provider: String,
    /// The active provider (also in `providers`).
    pub provider: ProviderInfo,
    /// The model; `None` when neither the config nor the provider names one.
    pub model: Option<String>,
    pub harness: HarnessKind,
    pub approval: ApprovalPolicy,
    /// How far code may reach (enforced on Linux).
    pub sandbox: SandboxMode,
    /// Refuse to run code when the sandbox cannot be enforced.
    pub sandbox_required: bool,
    /// Whether code may use the network (TCP/UDP); default true.
    pub network: bool,
    /// More folders code may write to in workspace-write mode.
    pub writable_roots: Vec<String>,
    /// Variables kernels get even though oi keeps them from code by
    /// default (see [`crate::Loaded::hidden_env`]).
    pub pass_env: Vec<String>,
    pub max_output: usize,
    pub max_turns: u32,
    /// Seconds a run may take before it is stopped; 0 means no limit.
    pub run_timeout: u64,
    /// Seconds a task may take in all; 0 means no limit.
    pub max_time: u64,
    /// Whether the workspace is saved before each run (for undo).
    pub checkpoints: bool,
    /// OS mode: the model may see the screen and use the mouse and
    /// keyboard (`--os`).
    pub os: bool,
    /// Files larger than this many megabytes are left out of checkpoints.
    pub checkpoint_max_file_mb: u64,
    /// The same error (or the same code) this many times in a row stops a
    /// task (`[loop_guard] max_repeats`).
    pub loop_guard_max_repeats: u32,
    pub context_window: Option<u32>,
    /// The built-in model (`[builtin]`).
    pub builtin: BuiltinSettings,
    /// Where code runs with `sandbox = "container"` (`[container]`).
    pub container: ContainerSettings,
    pub max_tokens: Option<u32>,
    pub temperature: Option<f64>,
    /// Whether the model is held to one step per reply (prose, then at
    /// most one code block) where the server can constrain sampling; `None`:
    /// for small models on this machine with the markdown harness.
    pub reply_grammar: Option<bool>,
    pub custom_instructions: Option<String>,
    /// Replaces oi's own system prompt (custom instructions are still
    /// added after it).
    pub system_message: Option<String>,
    /// The most bytes of `AGENTS.md` instructions the model gets; 0 reads none.
    pub project_doc_max_bytes: u64,
    /// More file names read, after `AGENTS.override.md` and `AGENTS.md`, in
    /// each folder that has neither.
    pub project_doc_fallback_filenames: Vec<String>,
    /// The most a session may spend, in USD.
    pub max_budget: Option<f64>,
    /// Model id → what the configuration says about it.
    pub models: BTreeMap<String, ModelSettings>,
    /// Language name → the interpreter command that runs it.
    pub languages: BTreeMap<String, Vec<String>>,
    pub providers: BTreeMap<String, ProviderInfo>,
    /// `[mcp_servers.NAME]`: MCP servers whose tools the model gets.
    pub mcp_servers: BTreeMap<String, McpServerSettings>,
    /// Project root → trust.
    pub projects: BTreeMap<String, TrustLevel>,
}

/// One MCP server (`[mcp_servers.NAME]`, the keys Codex uses).
#[derive(Debug, Clone, PartialEq)]
pub struct McpServerSettings {
    pub name: String,
    pub transport: McpTransport,
    /// `false` keeps the server configured but not started.
    pub enabled: bool,
    /// How long the server may take to start and list its tools.
    pub startup_timeout_sec: f64,
    /// How long one tool call may take.
    pub tool_timeout_sec: f64,
    /// Only these tools are offered (all when `None`).
    pub enabled_tools: Option<Vec<String>>,
    /// These tools are never offered.
    pub disabled_tools: Vec<String>,
}

/// How oi reaches an MCP server.
#[derive(Debug, Clone, PartialEq)]
pub enum McpTransport {
    /// A program oi starts, spoken to on its standard input and output.
    Stdio {
        command: String,
        args: Vec<String>,
        /// Variables set for the server.
        env: BTreeMap<String, String>,
        /// Variables passed on from oi's environment.
        env_vars: Vec<String>,
        cwd: Option<String>,
    },
    /// A server at a URL (streamable HTTP).
    Http {
        url: String,
        /// The NAME of the variable holding a bearer token.
        bearer_token_env_var: Option<String>,
        http_headers: BTreeMap<String, String>,
        /// Header name → NAME of the variable holding its value.
        env_http_headers: BTreeMap<String, String>,
    },
}

impl McpServerSettings {
    pub const DEFAULT_STARTUP_TIMEOUT_SEC: f64 = 10.0;
    pub const DEFAULT_TOOL_TIMEOUT_SEC: f64 = 60.0;

    /// A server reached by `transport`, enabled, with the default timeouts
    /// and every tool offered.
    pub fn new(name: impl Into<String>, transport: McpTransport) -> Self {
        Self {
            name: name.into(),
            transport,
            enabled: true,
            startup_timeout_sec: Self::DEFAULT_STARTUP_TIMEOUT_SEC,
            tool_timeout_sec: Self::DEFAULT_TOOL_TIMEOUT_SEC,
            enabled_tools: None,
            disabled_tools: Vec::new(),
        }
    }

    /// Whether the model may be offered the tool `name` of this server.
    pub fn offers(&self, name: &str) -> bool {
        self.enabled_tools
            .as_ref()
            .is_none_or(|only| only.iter().any(|t| t == name))
            && !self.disabled_tools.iter().any(|t| t == name)
    }
}

/// `[builtin]`: how oi runs a model in its own process.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BuiltinSettings {
    /// Threads that generate (`None` or 0: the physical cores, one left
    /// free on machines with more than four).
    pub threads: Option<u32>,
    /// The context window to allocate (default: the model's own, at most
    /// 16384 tokens).
    pub context: Option<u32>,
    /// Where models are downloaded from instead of Hugging Face (a mirror
    /// with the same paths).
    pub mirror: Option<String>,
}

/// `[container]`: the container code runs in with `sandbox = "container"`.
#[derive(Debug, Clone, PartialEq)]
pub struct ContainerSettings {
    /// `auto` (Podman, else Docker), `docker` or `podman`.
    pub engine: String,
    pub image: String,
    /// A remote engine (`unix://`, `tcp://`, `ssh://`); `None`: the
    /// engine's own default (which honours `CONTAINER_HOST`/`DOCKER_HOST`).
    pub host: Option<String>,
    /// A memory limit as the engines write it (`2g`).
    pub memory: Option<String>,
    pub cpus: Option<f64>,
    /// The most processes the container may have.
    pub pids: Option<u32>,
    /// The container's network: `none` (the default) or one of the
    /// engine's (`bridge`, `host`, a network's name).
    pub network: String,
    /// More folders mounted: `SOURCE:TARGET[:ro|rw]`.
    pub mounts: Vec<String>,
    /// Variables set in the container.
    pub env: BTreeMap<String, String>,
    /// With a remote engine: files larger than this many megabytes are not
    /// copied to the container or back.
    pub sync_max_file_mb: u64,
}

impl ContainerSettings {
    pub const DEFAULT_IMAGE: &str = "docker.io/library/python:3.12-slim";
    pub const DEFAULT_SYNC_MAX_FILE_MB: u64 = 50;
}

impl Default for ContainerSettings {
    fn default() -> Self {
        Self {
            engine: "auto".to_owned(),
            image: Self::DEFAULT_IMAGE.to_owned(),
            host: None,
            memory: None,
            cpus: None,
            pids: None,
            network: "none".to_owned(),
            mounts: Vec::new(),
            env: BTreeMap::new(),
            sync_max_file_mb: Self::DEFAULT_SYNC_MAX_FILE_MB,
        }
    }
}

impl Config {
    pub const DEFAULT_MAX_OUTPUT: usize = 4000;
    pub const DEFAULT_MAX_TURNS: u32 = 50;
    pub const DEFAULT_RUN_TIMEOUT: u64 = 600;
    pub const DEFAULT_LOOP_GUARD_MAX_REPEATS: u32 = 3;
    pub const DEFAULT_CHECKPOINT_MAX_FILE_MB: u64 = 50;
}
