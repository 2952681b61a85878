//! Command-line arguments.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// oi — Open Interpreter: let a language model run code on your machine, with you in control.
#[derive(Debug, Parser)]
#[command(name = "interpreter", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,

    /// A task to start the interactive session with (`exec` runs one
    /// task and exits). Piped input is added to it as a `<stdin>` block.
    #[arg(value_name = "TASK")]
    pub prompt: Option<String>,

    /// List the profiles `--profile` takes (oi's own, yours, Open
    /// Interpreter's) and the folder yours go in.
    #[arg(long, visible_alias = "list-profiles")]
    pub profiles: bool,

    /// Pick a recorded session and take it up again (as `interpreter
    /// resume`).
    #[arg(long)]
    pub conversations: bool,

    /// The models of the servers running on this machine and those the
    /// built-in model can use (as `interpreter models --local`).
    #[arg(long = "local-models", visible_alias = "local_models")]
    pub local_models: bool,

    #[command(flatten)]
    pub options: SessionOptions,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run one task without the interactive session and exit.
    ///
    /// Progress (code, output) goes to stderr; the model's final answer goes
    /// to stdout. `--json` prints Codex's event stream instead (what the
    /// Codex SDK reads), `--oi-json` oi's own; `exec resume ID` continues a
    /// recorded session.
    Exec(ExecArgs),
    /// Serve Codex's app-server protocol (JSON-RPC as JSON lines on
    /// stdin/stdout), so programs written for it — Codex's SDKs, editors —
    /// drive oi: threads are oi sessions, turns are tasks
    /// (docs/integrations.md).
    #[command(name = "app-server")]
    AppServer {
        /// Where to listen: only `stdio://` (the default) is served.
        #[arg(long, default_value = "stdio://", value_name = "URL")]
        listen: String,
    },
    /// Serve the Agent Client Protocol (ACP v1) on stdin/stdout, for
    /// editors such as Zed: sessions are oi sessions, prompts are tasks,
    /// runs of code are tool calls (docs/integrations.md).
    Acp,
    /// Serve the Model Context Protocol on stdin/stdout with oi as a tool:
    /// `interpreter` runs a task on this machine, `interpreter-reply`
    /// continues its session — for other agents and desktop apps
    /// (docs/integrations.md).
    #[command(name = "mcp-server")]
    McpServer,
    /// Serve oi over HTTP and WebSocket: Open Interpreter's endpoints and
    /// an OpenAI-compatible chat completions endpoint; every conversation
    /// its own session; the key in INTERPRETER_API_KEY, or one generated
    /// and printed once (docs/server.md).
    Server(ServerArgs),
    /// Serve one session as Open Interpreter's LMC messages (JSON lines on
    /// stdin/stdout): what the Python package (`from interpreter import
    /// interpreter`) runs (docs/python.md).
    Lmc,
    /// List, inspect, add and remove the MCP servers whose tools the
    /// model gets (`[mcp_servers.NAME]`, docs/tools.md).
    Mcp {
        #[command(subcommand)]
        action: McpAction,
    },
    /// Show or change the configuration.
    Config {
        #[command(subcommand)]
        action: ConfigAction,
    },
    /// List the models the active provider offers; with `--local`, the
    /// models of the servers running on this machine and those the
    /// built-in model has downloaded or can download.
    Models {
        /// Download a model for the built-in engine into the cache
        /// (`qwen2.5-coder-1.5b`, `qwen2.5-coder-0.5b`), resuming a broken
        /// download.
        #[arg(long, value_name = "NAME")]
        download: Option<String>,
    },
    /// Choose how oi reaches a language model — paste an API key, a model
    /// server on this machine, or the built-in model — and save the choice
    /// (what the first start asks).
    Setup,
    /// Measure how often the tasks of a suite succeed, in how many steps and
    /// for how much: `interpreter eval [SUITE_DIR]`, or `interpreter eval
    /// compare A.json B.json`.
    Eval(EvalArgs),
    /// List the recorded sessions, most recent first (`--resume ID` takes
    /// one up again).
    Sessions {
        /// Only the sessions of this folder (default: all).
        #[arg(long)]
        here: bool,
        /// How many to list.
        #[arg(long, short = 'n', default_value_t = 20)]
        limit: usize,
    },
    /// Run a command under the sandbox the session's code gets, to see what
    /// it allows: `interpreter sandbox [--sandbox MODE] -- CMD ARGS…`.
    Sandbox {
        /// The command and its arguments.
        #[arg(required = true, last = true, value_name = "CMD")]
        command: Vec<String>,
    },
    /// Print the shell completion script for `interpreter`: load it with
    /// `source <(interpreter completion bash)` (zsh: the same; fish:
    /// `interpreter completion fish | source`).
    Completion {
        /// The shell: bash, zsh, fish, elvish or powershell.
        shell: clap_complete::Shell,
    },
    /// Take up a recorded session again in the interactive session: pick
    /// one from a list, name it, or `--last` for this folder's latest.
    Resume {
        /// The session (its id, or a unique prefix).
        session_id: Option<String>,
        /// The most recent session of this folder, without asking.
        #[arg(long, conflicts_with = "session_id")]
        last: bool,
        /// Only list the sessions of this folder to pick from.
        #[arg(long)]
        here: bool,
    },
    /// What oi sees on this machine: the configuration, the model and
    /// whether it answers, API keys, model servers running here, languages,
    /// what the sandbox can enforce, a display for OS mode — each with a
    /// hint. Exits with 1 when something stops tasks from running.
    Doctor {
        /// As JSON.
        #[arg(long)]
        json: bool,
    },
    /// Restore the workspace to its state before the last run that changed
    /// it (each undo goes one run further back).
    Undo,
    /// List the workspace's checkpoints, or restore one.
    Checkpoints {
        #[command(subcommand)]
        action: Option<CheckpointAction>,
    },
    /// Trust a project, so that its `.openinterpreter/config.toml` files apply.
    Trust {
        /// A folder of the project (default: the current one). Its repository
        /// root (the nearest folder upward with `.git`) is what gets trusted.
        path: Option<PathBuf>,
        /// Mark the project untrusted instead (its files are ignored, and oi
        /// stops mentioning them).
        #[arg(long)]
        untrust: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum CheckpointAction {
    /// Make the workspace match checkpoint ID (a prefix is enough); the
    /// current state is saved first, so this can be undone too.
    Restore { id: String },
}

#[derive(Debug, Subcommand)]
pub enum McpAction {
    /// The configured servers: name, how they are reached, whether enabled.
    List {
        /// As JSON.
        #[arg(long)]
        json: bool,
    },
    /// One server's settings, and the tools it offers (it is started to
    /// ask it).
    Get {
        name: String,
        /// As JSON.
        #[arg(long)]
        json: bool,
    },
    /// Add a server to the user configuration (replacing one of that name):
    /// `interpreter mcp add NAME -- COMMAND ARGS…` for a program started on
    /// stdio, or `interpreter mcp add NAME --url URL` for streamable HTTP.
    Add {
        name: String,
        /// The server's URL (streamable HTTP), instead of a command.
        #[arg(long, conflicts_with = "command")]
        url: Option<String>,
        /// The NAME of the variable that holds a bearer token for `--url`.
        #[arg(long, requires = "url", value_name = "VAR")]
        bearer_token_env_var: Option<String>,
        /// A variable set for the server: KEY=VALUE (repeatable).
        #[arg(long = "env", value_name = "KEY=VALUE", conflicts_with = "url")]
        env: Vec<String>,
        /// The program and its arguments.
        #[arg(last = true, value_name = "COMMAND")]
        command: Vec<String>,
    },
    /// Remove a server from the user configuration.
    Remove { name: String },
}

#[derive(Debug, Subcommand)]
pub enum ConfigAction {
    /// Print the effective configuration, each value with where it came from.
    Show,
    /// Set KEY to VALUE in the user file, keeping its comments and layout.
    ///
    /// KEY may be dotted (`model_providers.kunavo.wire_api`); VALUE is read as
    /// TOML where it fits the key (`20`, `true`, `["a", "b"]`), else as text.
    Set { key: String, value: String },
}

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct EvalArgs {
    #[command(subcommand)]
    pub action: Option<EvalAction>,

    /// The suite: a folder of task folders (default: `evals/basic`).
    pub suite: Option<PathBuf>,

    /// Tasks run at once, each in its own workspace with its own kernels.
    #[arg(long, short = 'j', default_value_t = 1)]
    pub jobs: usize,

    /// Attempts at each task.
    #[arg(long, default_value_t = 1)]
    pub repeat: u32,

    /// Where the results go (JSON), written after every attempt
    /// (default: `eval-results.json`, or the `--resume FILE` file, whose
    /// finished attempts are then skipped).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,

    /// Only the tasks with this tag (repeatable).
    #[arg(long = "tag", value_name = "TAG")]
    pub tags: Vec<String>,
}

#[derive(Debug, Subcommand)]
pub enum EvalAction {
    /// Compare two results files: the change in success rate, and the
    /// tasks that changed.
    Compare { before: PathBuf, after: PathBuf },
}

#[derive(Debug, Args)]
pub struct ExecArgs {
    #[command(subcommand)]
    pub command: Option<ExecCommand>,

    /// The task. Read from stdin when it is `-` or missing.
    pub prompt: Option<String>,

    #[command(flatten)]
    pub options: ExecOptions,
}

/// What `exec` can do besides a new task.
#[derive(Debug, Subcommand)]
pub enum ExecCommand {
    /// Continue a recorded session with a new task: `interpreter exec
    /// resume ID "next task"`, or `--last` for this folder's most recent.
    Resume(ResumeArgs),
}

#[derive(Debug, Args)]
pub struct ResumeArgs {
    /// The session (its id, or a unique prefix; `interpreter sessions`
    /// lists them). With `--last`, a single argument is the task.
    pub session_id: Option<String>,

    /// The task. Read from stdin when it is `-` or missing.
    pub prompt: Option<String>,

    /// The most recent session of this folder.
    #[arg(long)]
    pub last: bool,
}

/// The options of `exec` (also after `exec resume ID`).
#[derive(Debug, Clone, Args)]
pub struct ExecOptions {
    /// Print Codex's JSON event stream on stdout (`thread.started`,
    /// `item.completed` …), as `codex exec --json` does: what the Codex
    /// SDK and other Codex clients read (docs/integrations.md). Without an
    /// approval setting, code runs without asking except risky code
    /// (`approval = "auto"`): the reading program cannot answer.
    #[arg(long, visible_alias = "experimental-json", global = true)]
    pub json: bool,

    /// Print oi's own event stream as JSON lines on stdout (every event of
    /// docs/events.md, richer than Codex's).
    #[arg(long = "oi-json", global = true, conflicts_with = "json")]
    pub oi_json: bool,

    /// Make the final answer a JSON document that validates against the
    /// JSON Schema in FILE: the model is asked for it, the answer checked,
    /// and the model asked once more when it does not validate.
    #[arg(long = "output-schema", global = true, value_name = "FILE")]
    pub output_schema: Option<PathBuf>,

    /// Show the model this image with the task (repeatable, or several
    /// separated by commas).
    #[arg(
        long = "image",
        short = 'i',
        global = true,
        value_name = "FILE",
        value_delimiter = ','
    )]
    pub images: Vec<PathBuf>,

    /// Also write the final answer to FILE.
    #[arg(
        long = "output-last-message",
        short = 'o',
        global = true,
        value_name = "FILE"
    )]
    pub output_last_message: Option<PathBuf>,

    /// Accepted for Codex clients; oi works in any folder, a git
    /// repository or not (its checkpoints never touch the folder's own
    /// `.git`).
    #[arg(long = "skip-git-repo-check", global = true)]
    pub skip_git_repo_check: bool,

    /// Accepted for Codex clients (what started the thread); not used.
    #[arg(
        long = "thread-source",
        global = true,
        hide = true,
        value_name = "SOURCE"
    )]
    pub thread_source: Option<String>,

    /// Accepted for Codex clients (an OpenAI account program); oi notes
    /// that it does not apply.
    #[arg(
        long = "cyber-access-program",
        global = true,
        hide = true,
        value_name = "PROGRAM"
    )]
    pub cyber_access_program: Option<String>,
}

/// Options of every command.
#[derive(Debug, Clone, Args)]
pub struct SessionOptions {
    /// Apply a profile: `[profiles.NAME]` in the user file,
    /// `~/.openinterpreter/profiles/NAME.toml`, an Open Interpreter YAML
    /// profile, one of oi's own (`fast`, `local`, `os`, `vision`), or a
    /// file's path (`--profiles` lists them).
    #[arg(long, short = 'p', global = true, value_name = "NAME|FILE")]
    pub profile: Option<String>,

    /// Open Interpreter's shortcut for `--profile fast`: a quick, cheap
    /// model, asked to be brief.
    #[arg(long, short = 'f', global = true, conflicts_with_all = ["profile", "vision"])]
    pub fast: bool,

    /// Open Interpreter's shortcut for `--profile vision`: a model that
    /// reads images.
    #[arg(long, global = true, conflicts_with = "profile")]
    pub vision: bool,

    /// Set a configuration value for this run, e.g. `-c model=gpt-5` or
    /// `-c model_providers.kunavo.wire_api=chat` (repeatable).
    #[arg(short = 'c', long = "config", global = true, value_name = "KEY=VALUE")]
    pub config: Vec<String>,

    /// The model to use.
    #[arg(long, short = 'm', global = true)]
    pub model: Option<String>,

    /// The base URL of the model server, e.g. `http://localhost:11434/v1`.
    /// Without a configured `model_provider` it selects an OpenAI-compatible
    /// (chat) server; with one, it moves that provider.
    #[arg(
        long = "api-base",
        visible_alias = "api_base",
        global = true,
        value_name = "URL"
    )]
    pub api_base: Option<String>,

    /// The API key, instead of the provider's `env_key` variable (also
    /// read from `OI_API_KEY`, which keeps it out of the process list).
    #[arg(
        long = "api-key",
        visible_alias = "api_key",
        global = true,
        value_name = "KEY",
        env = "OI_API_KEY",
        hide_env_values = true
    )]
    pub api_key: Option<String>,

    /// Use a model server running on this machine (Ollama, LM Studio,
    /// llama.cpp, vLLM, Jan): found on its usual port, its model picked
    /// (or `--model`), its context window asked, the harness suited to it.
    /// With no server running, the built-in model runs in oi's process.
    #[arg(long, short = 'l', global = true)]
    pub local: bool,

    /// OS mode: the model may see the screen and use the mouse and keyboard
    /// (a `computer` tool; X11 on Linux). Needs a model that reads images.
    #[arg(long, global = true)]
    pub os: bool,

    /// No network traffic but to the model server: code runs with
    /// `network = false` (refused where that cannot be enforced).
    #[arg(long, global = true)]
    pub offline: bool,

    /// Take up a recorded session again: its conversation is restored and
    /// its transcript continued (the kernels start afresh). Without an ID,
    /// the most recent session of this folder. `interpreter sessions` lists
    /// them. A FILE (a path, or a name ending in `.json`) starts a new
    /// session from a conversation saved with `/save` or by Open
    /// Interpreter.
    #[arg(long, global = true, value_name = "ID|FILE", num_args = 0..=1, default_missing_value = "", conflicts_with = "continue_session")]
    pub resume: Option<String>,

    /// Take up the most recent session of this folder again (as `--resume`
    /// without an ID).
    #[arg(long = "continue", global = true)]
    pub continue_session: bool,

    /// Run code without asking for approval, except risky code
    /// (`approval = "auto"`); also agrees to download the built-in model
    /// when it is not downloaded yet.
    #[arg(long, short = 'y', visible_alias = "auto_run", global = true)]
    pub yes: bool,

    /// Run all code without asking, risky code included (`approval =
    /// "never"`). Only for throwaway machines.
    #[arg(
        long = "dangerously-allow-all",
        visible_alias = "dangerously-bypass-approvals-and-sandbox",
        global = true
    )]
    pub dangerously_allow_all: bool,

    /// When code may run without asking, in Codex's words: `untrusted`
    /// (always ask: `approval = "ask"`), `on-request` or `on-failure`
    /// (ask only for risky code: `"auto"`), `never` (never ask, risky code
    /// included: `"never"`, still inside the sandbox).
    #[arg(
        long = "ask-for-approval",
        short = 'a',
        global = true,
        value_name = "POLICY",
        conflicts_with_all = ["yes", "dangerously_allow_all"]
    )]
    pub ask_for_approval: Option<CodexApproval>,

    /// Codex's low-friction mode: code runs without asking except risky
    /// code, sandboxed to the workspace (`-a on-request --sandbox
    /// workspace-write`).
    #[arg(long = "full-auto", global = true, conflicts_with_all = ["ask_for_approval", "dangerously_allow_all"])]
    pub full_auto: bool,

    /// Keep no transcript of this session: it cannot be resumed and is not
    /// listed by `interpreter sessions`.
    #[arg(long, global = true)]
    pub ephemeral: bool,

    /// Show each model request and event as sent (also `--debug`; in the
    /// session, `/verbose` turns it on and off).
    #[arg(long, short = 'v', visible_alias = "debug", global = true)]
    pub verbose: bool,

    /// Accepted for Open Interpreter's scripts: oi sends no usage data.
    #[arg(
        long = "disable-telemetry",
        alias = "disable_telemetry",
        global = true,
        hide = true
    )]
    pub disable_telemetry: bool,

    /// How far code may reach: `read-only`, `workspace-write` (default) or
    /// `full-access` (also spelled `danger-full-access`).
    #[arg(long, global = true, value_name = "MODE")]
    pub sandbox: Option<oi_protocol::SandboxMode>,

    /// The folder the task works in, and where code may write (default:
    /// the current folder). `-C`/`--cd` is the spelling Codex clients use.
    #[arg(
        long,
        short = 'C',
        visible_alias = "cd",
        global = true,
        value_name = "DIR"
    )]
    pub workspace: Option<PathBuf>,

    /// Let code also write in DIR (repeatable; adds to `writable_roots`).
    #[arg(long = "add-dir", global = true, value_name = "DIR")]
    pub add_dir: Vec<PathBuf>,

    /// Model requests allowed per task before it is stopped.
    // The numeric flags take any number, so that a wrong one (`-5`) is
    // refused by the configuration's own check, naming the flag and the
    // range, instead of being read as an unknown option.
    #[arg(
        long = "max-turns",
        visible_alias = "max_turns",
        global = true,
        allow_negative_numbers = true,
        value_name = "N"
    )]
    pub max_turns: Option<i64>,

    /// The most the session may spend on the model, in USD (`max_budget`).
    #[arg(
        long = "max-budget",
        visible_alias = "max_budget",
        short = 'b',
        global = true,
        allow_negative_numbers = true,
        value_name = "USD"
    )]
    pub max_budget: Option<f64>,

    /// Replace oi's system prompt with TEXT (`system_message`); project
    /// instructions and custom instructions still follow it.
    #[arg(
        long = "system-message",
        visible_alias = "system_message",
        short = 's',
        global = true,
        value_name = "TEXT"
    )]
    pub system_message: Option<String>,

    /// Add TEXT to the end of the system prompt (`custom_instructions`;
    /// Open Interpreter's `-ci`).
    #[arg(
        long = "custom-instructions",
        visible_alias = "custom_instructions",
        global = true,
        value_name = "TEXT"
    )]
    pub custom_instructions: Option<String>,

    /// The model's context window in tokens (`context_window`; Open
    /// Interpreter's `-cw`), where oi cannot learn it from the server.
    #[arg(
        long = "context-window",
        visible_alias = "context_window",
        global = true,
        allow_negative_numbers = true,
        value_name = "TOKENS"
    )]
    pub context_window: Option<i64>,

    /// The most tokens the model may write per reply (`max_tokens`).
    #[arg(
        long = "max-tokens",
        visible_alias = "max_tokens",
        short = 'x',
        global = true,
        allow_negative_numbers = true,
        value_name = "TOKENS"
    )]
    pub max_tokens: Option<i64>,

    /// The model's sampling temperature, 0 to 2 (`temperature`).
    #[arg(
        long,
        short = 't',
        global = true,
        allow_negative_numbers = true,
        value_name = "T"
    )]
    pub temperature: Option<f64>,

    /// Characters of each run's output sent to the model (head and tail are kept).
    #[arg(
        long = "max-output",
        visible_alias = "max_output",
        global = true,
        allow_negative_numbers = true,
        value_name = "CHARS"
    )]
    pub max_output: Option<i64>,

    /// Seconds a whole task may take before it is stopped (`max_time`; 0:
    /// no limit).
    #[arg(
        long = "max-time",
        visible_alias = "max_time",
        global = true,
        allow_negative_numbers = true,
        value_name = "SECONDS"
    )]
    pub max_time: Option<i64>,

    /// Seconds a run of code may take before it is stopped (`run_timeout`;
    /// 0: no limit).
    #[arg(
        long = "run-timeout",
        visible_alias = "run_timeout",
        global = true,
        allow_negative_numbers = true,
        value_name = "SECONDS"
    )]
    pub run_timeout: Option<i64>,

    /// The interactive session without the live display: plain lines, no
    /// colours or cursor movement (also when stdout is not a terminal, or
    /// with `NO_COLOR`).
    #[arg(long, global = true)]
    pub plain: bool,

    /// Run the HTTP server with its defaults (as `interpreter server`, Open
    /// Interpreter's spelling).
    #[arg(long)]
    pub server: bool,

    /// How the model is asked to run code: `native` (a function tool),
    /// `markdown` (fenced code blocks) or `auto`.
    #[arg(long, global = true, value_name = "HARNESS")]
    pub harness: Option<String>,
}

/// `interpreter server`
#[derive(Debug, Clone, Args)]
pub struct ServerArgs {
    /// The address to listen on: 127.0.0.1 (this machine only) unless you
    /// mean to expose oi, e.g. `0.0.0.0`.
    #[arg(long, default_value = "127.0.0.1")]
    pub host: String,
    /// The port.
    #[arg(long, default_value_t = 8000)]
    pub port: u16,
    /// Seconds a conversation may go unused before it ends (its kernels
    /// stop).
    #[arg(long = "idle-timeout", default_value_t = 1800, value_name = "SECONDS")]
    pub idle_timeout: u64,
    /// Where each conversation gets its workspace folder (default:
    /// `$INTERPRETER_HOME/server`).
    #[arg(long, value_name = "DIR")]
    pub workspaces: Option<PathBuf>,
}

impl Default for ServerArgs {
    fn default() -> Self {
        Self {
            host: "127.0.0.1".to_owned(),
            port: 8000,
            idle_timeout: 1800,
            workspaces: None,
        }
    }
}

/// Codex's approval policies (`-a`), as oi's `approval` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CodexApproval {
    /// Ask before every run.
    Untrusted,
    /// Run without asking, except risky code.
    OnRequest,
    /// As `on-request` (Codex no longer distinguishes them).
    OnFailure,
    /// Never ask (risky code too), still inside the sandbox.
    Never,
}

impl CodexApproval {
    /// oi's `approval` value.
    pub fn approval(self) -> &'static str {
        match self {
            Self::Untrusted => "ask",
            Self::OnRequest | Self::OnFailure => "auto",
            Self::Never => "never",
        }
    }

    /// The value as typed.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Untrusted => "untrusted",
            Self::OnRequest => "on-request",
            Self::OnFailure => "on-failure",
            Self::Never => "never",
        }
    }
}
