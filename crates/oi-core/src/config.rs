//! The settings a session runs with, already resolved from flags and files.

use std::time::Duration;

use oi_protocol::{ApprovalPolicy, HarnessKind};

/// Everything the agent needs to know to run a session.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentConfig {
    pub model: String,
    pub harness: HarnessKind,
    pub approval: ApprovalPolicy,
    /// Model requests allowed per task before it is stopped.
    pub max_turns: u32,
    /// Characters of a run's output sent to the model (head and tail kept).
    pub max_output: usize,
    pub max_tokens: Option<u32>,
    /// The model's context window in tokens, when known: a request estimated
    /// to exceed it (less `max_tokens`) draws a warning.
    pub context_window: Option<u32>,
    /// The window oi's model catalog gives the model, used when neither
    /// the configuration nor (if asked) the server says.
    pub catalog_window: Option<u32>,
    /// Whether to ask the server for the window before falling back to the
    /// catalog.
    pub ask_server_window: bool,
    pub temperature: Option<f64>,
    /// The project's `AGENTS.md` files as one block, added to the system
    /// prompt before the custom instructions.
    pub project_instructions: Option<String>,
    /// Added to the end of the system prompt.
    pub custom_instructions: Option<String>,
    /// Replaces the harness's own system prompt.
    pub system_message: Option<String>,
    /// The model's prices; `None` when unknown (costs are then not reported).
    pub pricing: Option<oi_providers::Pricing>,
    /// The most the session may spend, in USD. Needs `pricing`.
    pub max_budget: Option<f64>,
    /// How long one run may take before it is stopped; `None`: no limit.
    pub run_timeout: Option<Duration>,
    /// How long a whole task may take; `None`: no limit.
    pub max_time: Option<Duration>,
    /// The same error, or the same code, this many times in a row stops
    /// the task.
    pub loop_guard_max_repeats: u32,
    /// Whether the model reads images: plots a run makes go to it with the
    /// run's result.
    pub vision: bool,
    /// Where the workspace is saved before each run (for undo); `None`:
    /// no checkpoints.
    pub checkpoints: Option<crate::Checkpoints>,
    /// Whether the front end answers `InputRequested` with `Op::Input` (a
    /// person is there to type). Otherwise a program that waits for input
    /// is stopped at once, and the model is told why.
    pub user_input: bool,
    /// Whether the harness may change on its own: a model that writes its
    /// code as text instead of calling the tool is then moved to the
    /// markdown harness (the CLI sets it when the harness was chosen
    /// automatically for a model served on this machine).
    pub harness_auto: bool,
    /// A small model (a few billion parameters): a short system prompt, and
    /// a nudge when it describes code instead of running it.
    pub small_model: bool,
    /// Whether each reply of the markdown harness is held to one step
    /// (prose, then at most one code block) by the server's sampling.
    pub reply_grammar: bool,
    /// Where the session's transcript is written; `None`: nowhere.
    pub transcript: Option<TranscriptSetup>,
    /// The conversation to start from: a resumed session's (its
    /// transcript continued), or one saved elsewhere (`--resume FILE`: with
    /// `/save`, or by Open Interpreter; a new transcript records it whole).
    /// The model is told the kernels restarted.
    pub initial_history: Option<Vec<oi_protocol::Message>>,
    /// OS mode: the screen, mouse and keyboard the model may use.
    pub os: Option<OsMode>,
    /// The MCP servers whose tools the model gets; `None`: none.
    pub mcp: Option<crate::mcp::McpSetup>,
}

/// The desktop of OS mode, shared by the agent's `computer` tool and the
/// Python kernel's `computer` module.
#[derive(Debug, Clone)]
pub struct OsMode {
    pub desktop: std::sync::Arc<std::sync::Mutex<oi_computer::Desktop>>,
    /// Set when code tripped the fail-safe (the agent then stops the task).
    tripped: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl OsMode {
    pub fn new(desktop: oi_computer::Desktop) -> Self {
        Self {
            desktop: std::sync::Arc::new(std::sync::Mutex::new(desktop)),
            tripped: std::sync::Arc::default(),
        }
    }

    /// Whether code tripped the fail-safe since last asked.
    pub(crate) fn take_tripped(&self) -> bool {
        self.tripped
            .swap(false, std::sync::atomic::Ordering::SeqCst)
    }

    /// Answers the Python kernel's `computer` module: the same desktop, in
    /// real screen pixels.
    pub fn kernel_handler(&self) -> oi_kernels::ComputerHandler {
        use oi_computer::{Action, ComputerError, Perform};
        use serde_json::json;
        let desktop = std::sync::Arc::clone(&self.desktop);
        let tripped = std::sync::Arc::clone(&self.tripped);
        std::sync::Arc::new(move |request, cancel| {
            let failed = |error: ComputerError| {
                if matches!(error, ComputerError::FailSafe) {
                    tripped.store(true, std::sync::atomic::Ordering::SeqCst);
                }
                json!({"ok": false, "error": error.to_string()})
            };
            let Ok(mut desktop) = desktop.lock() else {
                return json!({"ok": false, "error": "the screen is unusable after an earlier failure"});
            };
            match request["action"].as_str() {
                Some("size") => {
                    let real = desktop.scaler().real();
                    json!({"ok": true, "width": real.width, "height": real.height})
                }
                _ => match Action::from_json(&request) {
                    Ok(action) => {
                        let stop = || cancel.is_cancelled();
                        match desktop.perform(&action, Perform::for_script(), &stop) {
                            Ok(outcome) => json!({
                                "ok": true,
                                "x": outcome.pointer.0,
                                "y": outcome.pointer.1,
                                "text": outcome.text,
                                "path": outcome.screenshot.map(|shot| shot.path),
                            }),
                            Err(error) => failed(error),
                        }
                    }
                    Err(problem) => json!({"ok": false, "error": problem}),
                },
            }
        })
    }

    /// The size of the screenshots the model is shown.
    pub fn shown(&self) -> oi_computer::Size {
        self.desktop
            .lock()
            .map(|d| d.scaler().shown())
            .unwrap_or(oi_computer::MAX_SHOWN)
    }
}

impl PartialEq for OsMode {
    fn eq(&self, other: &Self) -> bool {
        std::sync::Arc::ptr_eq(&self.desktop, &other.desktop)
    }
}

/// The session's transcript (see [`crate::transcript`]).
#[derive(Debug, Clone, PartialEq)]
pub struct TranscriptSetup {
    pub path: std::path::PathBuf,
    /// Written first, for a new session.
    pub header: crate::transcript::Header,
    /// Values never to write (API keys).
    pub secrets: Vec<String>,
    /// The transcript is a resumed session's, appended to (the
    /// conversation it holds is `AgentConfig::initial_history`).
    pub continued: bool,
}

impl AgentConfig {
    pub const DEFAULT_MAX_TURNS: u32 = 50;
    pub const DEFAULT_MAX_OUTPUT: usize = 4000;
    pub const DEFAULT_RUN_TIMEOUT: Duration = Duration::from_secs(600);
    pub const DEFAULT_LOOP_GUARD_MAX_REPEATS: u32 = 3;

    pub fn new(model: impl Into<String>) -> Self {
        Self {
            model: model.into(),
            harness: HarnessKind::default(),
            approval: ApprovalPolicy::default(),
            max_turns: Self::DEFAULT_MAX_TURNS,
            max_output: Self::DEFAULT_MAX_OUTPUT,
            max_tokens: None,
            context_window: None,
            catalog_window: None,
            ask_server_window: true,
            temperature: None,
            project_instructions: None,
            custom_instructions: None,
            system_message: None,
            pricing: None,
            max_budget: None,
            run_timeout: Some(Self::DEFAULT_RUN_TIMEOUT),
            max_time: None,
            loop_guard_max_repeats: Self::DEFAULT_LOOP_GUARD_MAX_REPEATS,
            vision: false,
            user_input: false,
            checkpoints: None,
            transcript: None,
            initial_history: None,
            harness_auto: false,
            small_model: false,
            reply_grammar: false,
            os: None,
            mcp: None,
        }
    }
}
