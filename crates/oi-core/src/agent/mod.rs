//! The session task: takes ops, runs tasks, emits events.
//!
//! [`Agent::spawn`] starts two tasks: a router that reads ops as they
//! arrive (interrupts cancel at once, approvals reach the task waiting for
//! them) and the session, which runs one task at a time. Its work is split
//! by job:
//!
//! - `task`: the turn loop of a task, and the one place a task ends;
//! - `execute`: proposed code: its language, risk, approval, checkpoint,
//!   run and result; `screen`: OS mode's screen actions, the same way;
//! - `approval`: the rule for when the user is asked, and waiting for them;
//! - `coach`: what small models are told when they stop short;
//! - `first_look`: what a small model is shown of the folder with a task;
//! - `one_input`: a result written from one of several inputs of one shape;
//! - `runaway`: noticing a reply that repeats itself without end;
//! - `resample`: asking again when a small model's reply repeats the last code;
//! - `save_as`: writing the script a small model's reply runs but never saved;
//! - `script`: the earlier runs a block that wrote a result builds on;
//! - `context_fit`: keeping the conversation within the context window;
//! - `history`: the user's message, images in the conversation;
//! - `control`: the ops handled between tasks (undo, save, load …).

mod absent_key;
mod ages;
mod approval;
mod coach;
mod context_fit;
mod control;
pub(crate) use control::ConversationFile;
mod edit;
mod empty_table;
mod error_hint;
mod execute;
mod first_look;
mod history;
mod kept_folders;
mod markdown;
mod mcp_call;
mod one_input;
mod pattern;
mod pyline;
mod records;
mod resample;
mod runaway;
mod save_as;
mod screen;
mod script;
mod shadow;
mod splice;
mod suffix_case;
mod table;
mod task;
mod traceback;
mod typed;
mod walk;

use task::Reply;

use std::sync::{Arc, Mutex};
use std::time::Instant;

use oi_kernels::KernelManager;
use oi_protocol::{Event, HarnessKind, Message, Op, ReviewDecision, RunId, Usage};
use oi_providers::{ModelClient, ModelRequest, ReplyForm};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::config::{AgentConfig, OsMode};
use crate::environment;
use crate::harness::{Action, Harness, PromptEnv};
use crate::loop_guard::LoopGuard;
use crate::transcript::Transcript;

/// Told to the model with the first message after a session is resumed.
const RESUMED_NOTE: &str = "[This session was resumed: the kernels were restarted, so variables, imports, functions and the working directory from before are gone. Files on disk are as they are now. Rebuild any state you need before relying on it.]";

/// Where `Op::Input` text goes: the run waiting for it, if any.
type InputTarget = Arc<Mutex<Option<(RunId, mpsc::UnboundedSender<String>)>>>;

/// Starts sessions. See the crate docs.
#[derive(Debug)]
pub struct Agent;

impl Agent {
    /// Starts a session on the current tokio runtime and returns its channel
    /// pair. The session ends on `Op::Shutdown` or when the op sender is
    /// dropped; it stops its kernels and sends `ShutdownComplete` last.
    pub fn spawn(
        mut config: AgentConfig,
        client: Arc<dyn ModelClient>,
        kernels: KernelManager,
    ) -> (mpsc::UnboundedSender<Op>, mpsc::UnboundedReceiver<Event>) {
        let (op_tx, op_rx) = mpsc::unbounded_channel();
        let (event_tx, event_rx) = mpsc::unbounded_channel();
        let (work_tx, work_rx) = mpsc::unbounded_channel();
        let (approval_tx, approval_rx) = mpsc::unbounded_channel();
        let current = Arc::new(Mutex::new(CancellationToken::new()));
        let input_target: InputTarget = Arc::new(Mutex::new(None));
        tokio::spawn(route_ops(
            op_rx,
            work_tx,
            approval_tx,
            Arc::clone(&current),
            Arc::clone(&input_target),
        ));

        let kernels = match &config.os {
            Some(os) => kernels.with_computer(os.kernel_handler()),
            None => kernels,
        };
        // MCP servers start now, beside everything else; the first task
        // waits for them before its first request.
        let mcp: mcp_call::McpSlot = Arc::default();
        let mcp_gate = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (kernels, mcp_starting) = match config.mcp.clone() {
            Some(setup) if !setup.servers.is_empty() => (
                kernels.with_tools(mcp_call::kernel_handler(
                    Arc::clone(&mcp),
                    Arc::clone(&mcp_gate),
                    tokio::runtime::Handle::current(),
                )),
                Some(tokio::spawn(crate::mcp::McpTools::start(setup))),
            ),
            _ => (kernels, None),
        };
        let languages: Vec<String> = kernels.languages().iter().map(|l| l.name.clone()).collect();
        let harness = Harness::new(config.harness).with_os(config.os.as_ref().map(OsMode::shown));
        let env = PromptEnv {
            os: environment::os_description(),
            cwd: kernels.cwd().display().to_string(),
            languages: languages.clone(),
            date: environment::today(),
            project_instructions: config.project_instructions.clone(),
            custom_instructions: config.custom_instructions.clone(),
            system_message: config.system_message.clone(),
            compact: config.small_model,
        };
        // The conversation to start from (a resumed session's, or one
        // brought from a file), its dangling calls closed; the model is
        // told the kernels are new.
        let mut history = config.initial_history.take().unwrap_or_default();
        let given = history.len();
        crate::transcript::close_dangling_calls(&mut history);
        let mut pending_notes = Vec::new();
        if !history.is_empty() {
            pending_notes.push(RESUMED_NOTE.to_owned());
        }
        // Written whole: a repaired conversation, or one a new transcript
        // has not recorded yet.
        let continued = config.transcript.as_ref().is_some_and(|t| t.continued);
        let history_epoch = u64::from(if continued {
            history.len() != given
        } else {
            !history.is_empty()
        });
        let mut warnings = Vec::new();
        // The transcript: continued for a resumed session, else started.
        let transcript = config.transcript.as_ref().and_then(|setup| {
            let opened = if setup.continued {
                Transcript::append(&setup.path, history.len(), &setup.secrets)
            } else {
                Transcript::create(&setup.path, &setup.header, &setup.secrets)
            };
            opened
                .map_err(|e| warnings.push(format!("{e}; this session is not recorded")))
                .ok()
        });
        let session = Session {
            system_prompt: harness.system_prompt(&env),
            tools: harness.tools(&languages),
            harness,
            env,
            verbose: false,
            undo_points: std::collections::HashMap::new(),
            config,
            client,
            kernels,
            languages,
            history,
            events: event_tx.clone(),
            approvals: approval_rx,
            current,
            input_target,
            session_id: format!("oi-{:016x}", fastrand::u64(..)),
            next_run_id: 1,
            approve_all: false,
            total_usage: Usage::default(),
            total_cost: 0.0,
            requests_sent: 0,
            guard: LoopGuard::default(),
            task_started: Instant::now(),
            pending_notes,
            checkpoint_warned: false,
            transcript: Mutex::new(transcript),
            history_epoch,
            task_index: None,
            probed_window: None,
            mcp,
            mcp_starting,
            mcp_gate,
            mcp_stopped: std::collections::HashSet::new(),
        };
        for message in warnings {
            let _ = event_tx.send(Event::Warning { message });
        }
        tokio::spawn(session.run(work_rx));
        (op_tx, event_rx)
    }
}

enum Work {
    Input {
        text: String,
        images: Vec<String>,
    },
    /// An op handled between tasks.
    Control(Op),
    Shutdown,
}

/// Reads ops as they come, even while a task runs: interrupts cancel the
/// running task at once, approvals go to the task waiting for them, inputs
/// queue up.
async fn route_ops(
    mut ops: mpsc::UnboundedReceiver<Op>,
    work: mpsc::UnboundedSender<Work>,
    approvals: mpsc::UnboundedSender<(RunId, ReviewDecision)>,
    current: Arc<Mutex<CancellationToken>>,
    input_target: InputTarget,
) {
    let cancel_current = || {
        if let Ok(token) = current.lock() {
            token.cancel();
        }
    };
    while let Some(op) = ops.recv().await {
        match op {
            Op::UserInput { text, images } => {
                let _ = work.send(Work::Input { text, images });
            }
            Op::Approve { id, decision } => {
                let _ = approvals.send((id, decision));
            }
            Op::Input { id, text } => {
                if let Ok(target) = input_target.lock()
                    && let Some((waiting, input)) = target.as_ref()
                    && *waiting == id
                {
                    let _ = input.send(text);
                }
            }
            Op::Interrupt => cancel_current(),
            op @ (Op::Undo
            | Op::Compact
            | Op::SetModel { .. }
            | Op::SetHarness { .. }
            | Op::SetApproval { .. }
            | Op::Reset
            | Op::Stats
            | Op::Save { .. }
            | Op::Export { .. }
            | Op::Load { .. }
            | Op::Restore { .. }
            | Op::Run { .. }
            | Op::SystemPrompt
            | Op::SetVerbose { .. }) => {
                let _ = work.send(Work::Control(op));
            }
            Op::Shutdown => {
                cancel_current();
                let _ = work.send(Work::Shutdown);
                return;
            }
        }
    }
    // Every sender is gone: nobody can talk to the session any more.
    cancel_current();
    let _ = work.send(Work::Shutdown);
}

struct Session {
    config: AgentConfig,
    client: Arc<dyn ModelClient>,
    kernels: KernelManager,
    harness: Harness,
    system_prompt: String,
    tools: Vec<oi_providers::ToolSpec>,
    /// What the system prompt says about the machine.
    env: PromptEnv,
    /// Whether requests are also sent as `RawRequest` events.
    verbose: bool,
    /// Checkpoint id → where in the history the reply that ran after it
    /// starts (this session's only): an undo to it drops that exchange.
    undo_points: std::collections::HashMap<String, usize>,
    languages: Vec<String>,
    history: Vec<Message>,
    events: mpsc::UnboundedSender<Event>,
    approvals: mpsc::UnboundedReceiver<(RunId, ReviewDecision)>,
    current: Arc<Mutex<CancellationToken>>,
    input_target: InputTarget,
    /// Random per session; sent as the prompt cache key.
    session_id: String,
    next_run_id: u64,
    approve_all: bool,
    total_usage: Usage,
    /// USD spent in this session (when the model's prices are known).
    total_cost: f64,
    /// Requests that completed, for the average reply size.
    requests_sent: u32,
    /// What the current task has repeated.
    guard: LoopGuard,
    task_started: Instant,
    /// Things to tell the model with the user's next message (an undo).
    pending_notes: Vec<String>,
    /// Whether a failed checkpoint was already reported.
    checkpoint_warned: bool,
    /// The session's transcript; taken out when writing it fails.
    transcript: Mutex<Option<Transcript>>,
    /// Moves on whenever the conversation is replaced (load, compaction),
    /// so the transcript writes it whole.
    history_epoch: u64,
    /// Where the current task's message is in the history.
    task_index: Option<usize>,
    /// The context window the server said it serves the model with (asked
    /// once, when neither the configuration nor the catalog knew).
    probed_window: Option<Option<u32>>,
    /// The MCP servers, once started (shared with the Python kernel's
    /// `mcp_tools` module).
    mcp: mcp_call::McpSlot,
    /// Whether the code running now may call MCP tools that are not
    /// read-only (a person approved it, or the policy never asks).
    mcp_gate: Arc<std::sync::atomic::AtomicBool>,
    /// The MCP servers found stopped (reported once, their tools gone).
    mcp_stopped: std::collections::HashSet<String>,
    /// The MCP servers while they start.
    mcp_starting: Option<tokio::task::JoinHandle<(crate::mcp::McpTools, Vec<String>)>>,
}

impl Session {
    fn emit(&self, event: Event) {
        self.record(&event);
        // A front end that stopped listening is not the agent's failure.
        let _ = self.events.send(event);
    }

    /// Brings the transcript up to date, then writes `event` to it. A
    /// transcript that cannot be written is given up, with a warning.
    fn record(&self, event: &Event) {
        let Ok(mut slot) = self.transcript.lock() else {
            return;
        };
        let Some(transcript) = slot.as_mut() else {
            return;
        };
        let written = transcript
            .sync(&self.history, self.history_epoch)
            .and_then(|()| transcript.event(event));
        if let Err(error) = written {
            *slot = None;
            let _ = self.events.send(Event::Warning {
                message: format!("{error}; the rest of this session is not recorded"),
            });
        }
    }

    async fn run(mut self, mut work: mpsc::UnboundedReceiver<Work>) {
        self.emit(Event::SessionConfigured {
            session_id: self.config.transcript.as_ref().map(|t| t.header.id.clone()),
            model: self.config.model.clone(),
            harness: self.harness.kind(),
            languages: self.languages.clone(),
            cwd: self.kernels.cwd().display().to_string(),
            transcript: self
                .transcript
                .lock()
                .ok()
                .and_then(|t| t.as_ref().map(|t| t.path().display().to_string())),
        });
        self.prestart_kernel();
        while let Some(item) = work.recv().await {
            match item {
                Work::Input { text, images } => self.run_task(text, images).await,
                Work::Control(op) => self.control(op).await,
                Work::Shutdown => break,
            }
        }
        self.kernels.shutdown().await;
        if let Some(starting) = self.mcp_starting.take() {
            starting.abort();
        }
        if let Some(tools) = self.mcp.get() {
            tools.shutdown().await;
        }
        self.emit(Event::ShutdownComplete);
    }

    /// Starts the kernel the model most likely runs code in (the first
    /// language: Python where it is installed) in the background, so a
    /// first run does not wait for the interpreter while the user types
    /// or the model is asked.
    fn prestart_kernel(&mut self) {
        if let Some(first) = self.languages.first() {
            self.kernels.prestart(first);
        }
    }

    fn fresh_cancel_token(&self) -> CancellationToken {
        let token = CancellationToken::new();
        if let Ok(mut current) = self.current.lock() {
            *current = token.clone();
        }
        token
    }

    /// The request the next model call would send.
    fn request(&self) -> ModelRequest {
        ModelRequest {
            model: self.config.model.clone(),
            system: self.system_prompt.clone(),
            messages: self.history.clone(),
            tools: self.tools.clone(),
            max_tokens: self.config.max_tokens,
            temperature: self.config.temperature,
            cache_key: Some(self.session_id.clone()),
            form: (self.config.reply_grammar && self.harness.kind() == HarnessKind::Markdown)
                .then_some(ReplyForm::OneCodeBlock),
        }
    }

    /// The form of a reply that must run code: one block, tagged with a
    /// language the session runs (its name or one of its aliases).
    fn code_step_form(&self) -> ReplyForm {
        let mut tags: Vec<String> = Vec::new();
        for tag in self
            .kernels
            .languages()
            .iter()
            .flat_map(|l| std::iter::once(&l.name).chain(&l.aliases))
        {
            if !tags.contains(tag) {
                tags.push(tag.clone());
            }
        }
        ReplyForm::CodeStep(tags)
    }

    /// Output tokens of a typical reply in this session (at least 500, at
    /// most `max_tokens`).
    fn typical_reply_tokens(&self) -> u64 {
        let average = self
            .total_usage
            .output_tokens
            .checked_div(u64::from(self.requests_sent))
            .unwrap_or(0);
        let mut output = average.max(500);
        if let Some(max) = self.config.max_tokens {
            output = output.min(u64::from(max));
        }
        output
    }

    /// The estimated size of the next request, without building it.
    fn next_request_tokens(&self) -> u64 {
        crate::context::estimate(&self.system_prompt, &self.history, &self.tools)
    }

    fn set_harness(&mut self, kind: HarnessKind) {
        self.rebuild_harness(kind);
        self.emit(Event::HarnessChanged { harness: kind });
    }

    /// The harness of `kind` with what the session has (OS mode, the tools
    /// of the MCP servers still running), and the prompt and tools it
    /// gives.
    fn rebuild_harness(&mut self, kind: HarnessKind) {
        let mcp = self
            .mcp
            .get()
            .map(|t| {
                t.tools()
                    .iter()
                    .filter(|tool| !self.mcp_stopped.contains(&tool.server))
                    .cloned()
                    .collect()
            })
            .unwrap_or_default();
        self.harness = Harness::new(kind)
            .with_os(self.config.os.as_ref().map(OsMode::shown))
            .with_mcp(mcp);
        self.system_prompt = self.harness.system_prompt(&self.env);
        self.tools = self.harness.tools(&self.languages);
    }

    /// With the harness chosen automatically, a model that answers the
    /// native harness with code written as text (fenced blocks, calls
    /// printed as JSON) is moved to the markdown harness, which runs such
    /// code; this reply is then read the markdown way.
    fn adapt_harness(&mut self, reply: &Reply) {
        if !self.config.harness_auto
            || self.harness.kind() != HarnessKind::Native
            || !reply.tool_calls.is_empty()
        {
            return;
        }
        let runs = |kind| {
            let (_, actions) =
                Harness::new(kind).interpret(reply.text.clone(), Vec::new(), Vec::new());
            actions.iter().any(|a| matches!(a, Action::Run(_)))
        };
        // Calls printed as JSON are recovered by the native harness itself;
        // only code it would leave unrun (fenced blocks) moves the model.
        if runs(HarnessKind::Native) || !runs(HarnessKind::Markdown) {
            return;
        }
        self.config.harness_auto = false;
        self.emit(Event::Warning {
            message: format!(
                "`{}` wrote its code as text instead of calling the tool, so it now gets the markdown harness (its code blocks run); `--harness native` keeps the tool",
                self.config.model
            ),
        });
        self.set_harness(HarnessKind::Markdown);
    }

    /// When the task must end (`max_time`), if it has a limit.
    fn deadline(&self) -> Option<Instant> {
        self.config.max_time.map(|limit| self.task_started + limit)
    }
}

/// Waits until `deadline`, or forever without one.
async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline.into()).await,
        None => std::future::pending().await,
    }
}
