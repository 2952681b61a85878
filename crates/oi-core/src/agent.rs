//! The session task: takes ops, runs tasks, emits events.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::Engine as _;
use futures::StreamExt;
use oi_kernels::{KernelManager, RunControl, RunEvent};
use oi_protocol::{
    ApprovalPolicy, ContentPart, Event, HarnessKind, Message, Op, OutputStream, ReviewDecision,
    RunId, RunStatus, SkipReason, StopReason, ToolCall, Usage,
};
use oi_providers::{FinishReason, ModelClient, ModelRequest, ProviderError, StreamEvent};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::config::{AgentConfig, OsMode};
use crate::environment;
use crate::harness::{Action, Harness, PromptEnv, ProposedRun, Report, language};
use crate::loop_guard::LoopGuard;
use crate::output::{DisplayPacer, HeadTail, Shown, describe_run};
use crate::transcript::Transcript;

/// Images kept in the conversation: older ones are replaced by a note, so
/// a session that plots a lot does not pay for every plot on every request.
const MAX_IMAGES_IN_HISTORY: usize = 3;

/// Told to the model with the first message after a session is resumed.
const RESUMED_NOTE: &str = "[This session was resumed: the kernels were restarted, so variables, imports, functions and the working directory from before are gone. Files on disk are as they are now. Rebuild any state you need before relying on it.]";
/// Images of one run sent to the model (the last ones made).
const MAX_IMAGES_PER_RUN: usize = 3;
/// Larger image files are not sent (providers refuse them).
const MAX_IMAGE_BYTES: u64 = 5 * 1024 * 1024;

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
        config: AgentConfig,
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
        let languages: Vec<String> = kernels.languages().iter().map(|l| l.name.clone()).collect();
        let harness = Harness::new(config.harness).with_os(config.os.as_ref().map(OsMode::shown));
        let env = PromptEnv {
            os: environment::os_description(),
            cwd: kernels.cwd().display().to_string(),
            languages: languages.clone(),
            date: environment::today(),
            custom_instructions: config.custom_instructions.clone(),
            compact: config.small_model,
        };
        // The transcript: continued for a resumed session, else started.
        let mut history = Vec::new();
        let mut pending_notes = Vec::new();
        let mut warnings = Vec::new();
        let mut history_epoch = 0;
        let transcript = config.transcript.as_ref().and_then(|setup| {
            let opened = match &setup.resume {
                Some(messages) => {
                    history = messages.clone();
                    crate::transcript::close_dangling_calls(&mut history);
                    if history.len() != messages.len() {
                        // The repaired conversation is written whole.
                        history_epoch = 1;
                    }
                    pending_notes.push(RESUMED_NOTE.to_owned());
                    Transcript::append(&setup.path, history.len(), &setup.secrets)
                }
                None => Transcript::create(&setup.path, &setup.header, &setup.secrets),
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
            | Op::Load { .. }
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
}

/// A complete reply of the model.
struct Reply {
    text: String,
    tool_calls: Vec<ToolCall>,
    reasoning: Vec<serde_json::Value>,
    finish_reason: FinishReason,
}

enum ReplyError {
    Interrupted {
        partial: String,
    },
    /// The task's `max_time` passed while the model was answering.
    TimeLimit {
        partial: String,
    },
    Failed(ProviderError),
}

/// Why a batch of runs stopped early.
#[derive(PartialEq, Eq)]
enum Halt {
    Interrupted,
    /// OS mode's fail-safe: the mouse was thrown into a screen corner.
    FailSafe,
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
        while let Some(item) = work.recv().await {
            match item {
                Work::Input { text, images } => self.run_task(text, images).await,
                Work::Control(op) => self.control(op).await,
                Work::Shutdown => break,
            }
        }
        self.kernels.shutdown().await;
        self.emit(Event::ShutdownComplete);
    }

    fn fresh_cancel_token(&self) -> CancellationToken {
        let token = CancellationToken::new();
        if let Ok(mut current) = self.current.lock() {
            *current = token.clone();
        }
        token
    }

    /// Ops handled between tasks.
    async fn control(&mut self, op: Op) {
        match op {
            Op::Undo => self.undo().await,
            Op::SetModel { model } => {
                self.config.model = model.clone();
                self.probed_window = None;
                self.emit(Event::ModelChanged { model });
            }
            Op::SetHarness { harness } => {
                // The user chose: no more switching on their behalf.
                self.config.harness_auto = false;
                self.set_harness(harness);
            }
            Op::SetApproval {
                policy: ApprovalPolicy::Never,
            } if self.config.approval != ApprovalPolicy::Never => {
                self.emit(Event::Error {
                    message: "approval `never` cannot be switched to during a session: it runs even risky code without asking".to_owned(),
                    hint: Some("use `ask` or `auto`; `never` is only chosen when a session starts, with `--dangerously-allow-all`".to_owned()),
                });
            }
            Op::SetApproval { policy } => {
                self.config.approval = policy;
                self.approve_all = false;
                self.emit(Event::ApprovalChanged { policy });
            }
            Op::Compact => {
                let cancel = self.fresh_cancel_token();
                if self.history.len() <= crate::context::KEEP_RECENT {
                    self.emit(Event::Error {
                        message: "nothing to compact yet: the conversation is short".to_owned(),
                        hint: None,
                    });
                } else if let Err(message) = self.fit_context(true, &cancel).await {
                    self.emit(Event::Error {
                        message,
                        hint: None,
                    });
                }
            }
            Op::Reset => {
                self.history.clear();
                self.task_index = None;
                self.pending_notes.clear();
                self.undo_points.clear();
                self.approve_all = false;
                self.kernels.shutdown().await;
                self.emit(Event::SessionReset);
            }
            Op::Stats => {
                let window = self.context_window().await;
                let context_tokens = self.next_request_tokens();
                let next_request_usd = self.config.pricing.map(|p| {
                    p.cost(&Usage {
                        input_tokens: context_tokens,
                        output_tokens: self.typical_reply_tokens(),
                        ..Usage::default()
                    })
                });
                self.emit(Event::Stats {
                    context_tokens,
                    context_window: Some(window),
                    next_request_usd,
                    total: self.total_usage,
                    cost_usd: self.config.pricing.map(|_| self.total_cost),
                    requests: self.requests_sent,
                    messages: self.history.len(),
                });
            }
            Op::Save { path } => match self.save(Path::new(&path)) {
                Ok(()) => self.emit(Event::Saved {
                    path,
                    messages: self.history.len(),
                }),
                Err(message) => self.emit(Event::Error {
                    message,
                    hint: None,
                }),
            },
            Op::Load { path } => match load_conversation(Path::new(&path)) {
                Ok(messages) => {
                    self.history = messages;
                    self.history_epoch += 1;
                    self.undo_points.clear();
                    self.emit(Event::Loaded {
                        path,
                        messages: self.history.len(),
                    });
                }
                Err(message) => self.emit(Event::Error {
                    message,
                    hint: Some("give the name of a conversation saved with /save".to_owned()),
                }),
            },
            Op::SetVerbose { verbose } => self.verbose = verbose,
            // Routed elsewhere.
            Op::UserInput { .. }
            | Op::Approve { .. }
            | Op::Input { .. }
            | Op::Interrupt
            | Op::Shutdown => {}
        }
    }

    /// Writes the conversation as JSON.
    fn save(&self, path: &Path) -> Result<(), String> {
        let file = ConversationFile {
            version: 1,
            model: self.config.model.clone(),
            harness: self.harness.kind().to_string(),
            messages: self.history.clone(),
        };
        let text = serde_json::to_string_pretty(&file).map_err(|e| e.to_string())?;
        if let Some(parent) = path.parent() {
            fs_err::create_dir_all(parent).map_err(|e| e.to_string())?;
        }
        fs_err::write(path, text).map_err(|e| e.to_string())
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
        }
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

    /// The user's message: their words after any pending notes, and the
    /// images they attached (as images for a model that reads them).
    fn user_message(&mut self, text: String, images: &[String]) -> Message {
        let mut text = if self.pending_notes.is_empty() {
            text
        } else {
            let notes = std::mem::take(&mut self.pending_notes).join("\n");
            format!("{notes}\n\n{text}")
        };
        let mut parts = Vec::new();
        for image in images {
            let path = Path::new(image);
            if !self.config.vision {
                text.push_str(&format!(
                    "\n[The user attached the image {image}, but this model cannot see images.]"
                ));
                continue;
            }
            match image_part(path, media_type_of(path)) {
                Ok(part) => parts.push(part),
                Err(problem) => {
                    text.push_str(&format!(
                        "\n[The image {image} could not be attached: {problem}]"
                    ));
                    self.emit(Event::Warning {
                        message: format!("{image} was not attached: {problem}"),
                    });
                }
            }
        }
        let mut content = vec![ContentPart::text(text)];
        content.extend(parts);
        Message::User { content }
    }

    async fn run_task(&mut self, text: String, images: Vec<String>) {
        let cancel = self.fresh_cancel_token();
        self.emit(Event::TaskStarted);
        let message = self.user_message(text, &images);
        self.task_index = Some(self.history.len());
        self.history.push(message);
        self.guard = LoopGuard::default();
        self.task_started = Instant::now();
        let mut turn = 0;
        let mut retried_overflow = false;
        let mut nudged = false;
        let mut checked_outputs = false;
        // Whether code ran in this task, and whether a small model that
        // ended without running anything was told so.
        let mut ran_any = false;
        let mut nudged_idle = false;
        // The files the task names, as last shown to a small model.
        let mut shown_files: std::collections::HashMap<
            String,
            (u64, Option<std::time::SystemTime>),
        > = std::collections::HashMap::new();
        // Files the task names that do not exist yet: likely what it asks
        // to make (a small model often ends without making them).
        let task_text = text_of_task(&self.history, self.task_index);
        let expected: Vec<String> = if self.config.small_model {
            named_files(&task_text)
                .into_iter()
                .filter(|name| !self.kernels.cwd().join(name).exists())
                .collect()
        } else {
            Vec::new()
        };
        loop {
            if let Some(limit) = self.config.max_time
                && self.task_started.elapsed() >= limit
            {
                self.emit(Event::TaskComplete {
                    reason: StopReason::TimeLimit {
                        limit_secs: limit.as_secs(),
                    },
                    final_message: None,
                });
                return;
            }
            if turn >= self.config.max_turns {
                self.emit(Event::TaskComplete {
                    reason: StopReason::MaxTurns {
                        limit: self.config.max_turns,
                    },
                    final_message: None,
                });
                return;
            }
            if let Err(message) = self.fit_context(false, &cancel).await {
                if self.deadline().is_some_and(|d| Instant::now() >= d) {
                    self.emit(Event::TaskComplete {
                        reason: StopReason::TimeLimit {
                            limit_secs: self.config.max_time.map_or(0, |l| l.as_secs()),
                        },
                        final_message: None,
                    });
                    return;
                }
                self.emit(Event::Error {
                    message,
                    hint: Some("set `context_window` (or `[models.\"NAME\"] context_window`) if the model allows more, lower `max_tokens`, or start a new conversation with /reset".to_owned()),
                });
                self.emit(Event::TaskComplete {
                    reason: StopReason::Failed,
                    final_message: None,
                });
                return;
            }
            turn += 1;
            self.emit(Event::ModelRequest { turn });
            let request = self.request();
            if self.verbose {
                self.emit(Event::RawRequest {
                    body: self.client.request_body(&request),
                });
            }
            if let Some(stop) = self.over_budget(&request) {
                self.emit(Event::TaskComplete {
                    reason: stop,
                    final_message: None,
                });
                return;
            }
            let reply = match self.stream_reply(request, &cancel).await {
                Ok(reply) => reply,
                Err(ReplyError::TimeLimit { partial }) => {
                    if !partial.is_empty() {
                        self.history.push(Message::Assistant {
                            text: partial,
                            tool_calls: Vec::new(),
                            reasoning: Vec::new(),
                        });
                    }
                    self.emit(Event::TaskComplete {
                        reason: StopReason::TimeLimit {
                            limit_secs: self.config.max_time.map_or(0, |l| l.as_secs()),
                        },
                        final_message: None,
                    });
                    return;
                }
                Err(ReplyError::Interrupted { partial }) => {
                    if !partial.is_empty() {
                        self.history.push(Message::Assistant {
                            text: partial,
                            tool_calls: Vec::new(),
                            reasoning: Vec::new(),
                        });
                    }
                    self.emit(Event::TaskComplete {
                        reason: StopReason::Interrupted,
                        final_message: None,
                    });
                    return;
                }
                // The server says it does not fit after all: make it
                // smaller and ask once more.
                Err(ReplyError::Failed(ProviderError::ContextLength { message, .. }))
                    if !retried_overflow =>
                {
                    retried_overflow = true;
                    self.emit(Event::Warning {
                        message: format!(
                            "the server found the request longer than the context window ({message}); making the conversation smaller and trying again"
                        ),
                    });
                    if let Err(problem) = self.fit_context(true, &cancel).await {
                        // Nothing older to cut: the request is too long as
                        // it is (a long task, or the last reply or output).
                        self.emit(Event::Error {
                            message: format!(
                                "the model server refused the request as longer than its context window, and it cannot be made smaller ({problem})"
                            ),
                            hint: Some("give the model a larger context window on the server (llama.cpp `-c`, Ollama `num_ctx`, LM Studio's context length), lower `max_tokens`, or start over with /reset".to_owned()),
                        });
                        self.emit(Event::TaskComplete {
                            reason: StopReason::Failed,
                            final_message: None,
                        });
                        return;
                    }
                    turn -= 1;
                    continue;
                }
                Err(ReplyError::Failed(error)) => {
                    self.emit(Event::Error {
                        message: error.to_string(),
                        hint: error.hint(),
                    });
                    self.emit(Event::TaskComplete {
                        reason: StopReason::Failed,
                        final_message: None,
                    });
                    return;
                }
            };
            self.emit(Event::AssistantMessage {
                text: reply.text.clone(),
            });
            if reply.finish_reason == FinishReason::Length {
                self.emit(Event::Warning {
                    message: "the model's reply was cut off at its output token limit".to_owned(),
                });
            }
            let final_text = reply.text.clone();
            self.adapt_harness(&reply);
            let (message, actions) =
                self.harness
                    .interpret(reply.text, reply.tool_calls, reply.reasoning);
            self.history.push(message);
            if final_text.trim_start().starts_with("[oi:") {
                // A small model that repeats oi's note back instead of acting
                // on it: more notes only cost turns.
                nudged = true;
                checked_outputs = true;
                nudged_idle = true;
            }
            if actions.is_empty() && !nudged && self.describes_code(&final_text) {
                // A small model that tells the user what to run: once per
                // task, it is asked to run it itself.
                nudged = true;
                let how = match self.harness.kind() {
                    HarnessKind::Native => "call the `execute` tool with it",
                    HarnessKind::Markdown => {
                        "write it in a fenced code block tagged with its language (```python … ```)"
                    }
                };
                self.history.push(Message::user(format!(
                    "[oi: you described code instead of running it. Run it yourself: {how}. You will see its output.]"
                )));
                continue;
            }
            if actions.is_empty() && !checked_outputs && !expected.is_empty() {
                checked_outputs = true;
                let missing: Vec<&String> = expected
                    .iter()
                    .filter(|name| !self.kernels.cwd().join(name.as_str()).exists())
                    .collect();
                if !missing.is_empty() {
                    let names: Vec<String> = missing.iter().map(|n| format!("`{n}`")).collect();
                    self.history.push(Message::user(format!(
                        "[oi: the task names {}, which does not exist yet. If the task asks you to write it, do that now with code; if it does not, give your answer again.]",
                        names.join(", ")
                    )));
                    continue;
                }
            }
            if actions.is_empty()
                && self.config.small_model
                && !ran_any
                && !nudged_idle
                && !is_question(&task_text)
            {
                // A small model that says it did the task without running
                // anything: nothing was done, and it is told so once.
                nudged_idle = true;
                self.history.push(Message::user(
                    "[oi: you have not run any code for this task, so nothing has been done yet. Do the task now by running code, then answer.]",
                ));
                continue;
            }
            if actions.is_empty() {
                self.emit(Event::TaskComplete {
                    reason: StopReason::Done,
                    final_message: Some(final_text),
                });
                return;
            }
            let (reports, halt) = self.execute(actions, &cancel).await;
            ran_any |= reports.iter().any(|r| !r.language.is_empty());
            let mut results = self.harness.results(reports);
            // A small model sees what its code made of the files the task
            // names, so it can tell a wrong result from a right one.
            let previews: Vec<String> = expected
                .iter()
                .filter_map(|name| {
                    let path = self.kernels.cwd().join(name);
                    let meta = fs_err::metadata(&path).ok()?;
                    let stamp = (meta.len(), meta.modified().ok());
                    if shown_files.get(name) == Some(&stamp) {
                        return None;
                    }
                    shown_files.insert(name.clone(), stamp);
                    file_preview(name, &path, meta.len())
                })
                .collect();
            if !previews.is_empty()
                && let Some(Message::Tool { content, .. } | Message::User { content }) =
                    results.last_mut()
            {
                content.push(ContentPart::text(previews.join("\n")));
            }
            if let Some(warning) = self.guard.warning(self.config.loop_guard_max_repeats)
                && let Some(Message::Tool { content, .. } | Message::User { content }) =
                    results.last_mut()
            {
                content.push(ContentPart::text(warning));
            }
            self.history.extend(results);
            bound_images(&mut self.history, MAX_IMAGES_IN_HISTORY);
            if let Some(halt) = halt {
                let reason = match halt {
                    Halt::Interrupted => StopReason::Interrupted,
                    Halt::FailSafe => {
                        // Tripped by the tool or by code: said once, here.
                        self.emit(Event::Error {
                            message: oi_computer::ComputerError::FailSafe.to_string(),
                            hint: Some(
                                "move the mouse away from the corners, then give the next task"
                                    .to_owned(),
                            ),
                        });
                        StopReason::FailSafe
                    }
                };
                self.emit(Event::TaskComplete {
                    reason,
                    final_message: None,
                });
                return;
            }
            if let Some((repeats, summary)) = self.guard.tripped(self.config.loop_guard_max_repeats)
            {
                self.emit(Event::TaskComplete {
                    reason: StopReason::LoopGuard { repeats, summary },
                    final_message: None,
                });
                return;
            }
        }
    }

    /// The stop reason when the next request would take the session past
    /// its budget: its input is estimated at four characters per token, its
    /// output at the session's average so far (at least 500 tokens).
    fn over_budget(&self, request: &ModelRequest) -> Option<StopReason> {
        let limit = self.config.max_budget?;
        let pricing = self.config.pricing?;
        let input = estimate_tokens(request);
        let output = self.typical_reply_tokens();
        let next = pricing.cost(&Usage {
            input_tokens: input,
            output_tokens: output,
            ..Usage::default()
        });
        (self.total_cost + next > limit).then_some(StopReason::Budget {
            limit_usd: limit,
            spent_usd: self.total_cost,
            next_usd: next,
        })
    }

    /// Counts a completed model request and its tokens and cost, and says
    /// so with a `Usage` event.
    fn request_completed(&mut self, usage: Option<Usage>) {
        self.requests_sent += 1;
        let Some(usage) = usage else { return };
        self.total_usage += usage;
        let cost_usd = self.config.pricing.map(|p| {
            self.total_cost += p.cost(&usage);
            self.total_cost
        });
        self.emit(Event::Usage {
            last: usage,
            total: self.total_usage,
            cost_usd,
        });
    }

    /// The estimated size of the next request, without building it.
    fn next_request_tokens(&self) -> u64 {
        crate::context::estimate(&self.system_prompt, &self.history, &self.tools)
    }

    /// Whether a small model's reply, which ran nothing, tells the user to
    /// run code ("you can run", "run the following" …).
    fn describes_code(&self, text: &str) -> bool {
        if !self.config.small_model {
            return false;
        }
        let lower = text.to_lowercase();
        [
            "you can run",
            "you can use the following",
            "run the following",
            "execute the following",
            "run this command",
            "use this command",
            "copy and paste",
            "save this code",
            "you can use",
            "you need to",
            "text editor",
            "follow these steps",
            "here's how you can",
            "here is how you can",
            "please provide",
            "not yet completed",
            "not yet complete",
        ]
        .iter()
        .any(|p| lower.contains(p))
    }

    fn set_harness(&mut self, kind: HarnessKind) {
        self.harness = Harness::new(kind).with_os(self.config.os.as_ref().map(OsMode::shown));
        self.system_prompt = self.harness.system_prompt(&self.env);
        self.tools = self.harness.tools(&self.languages);
        self.emit(Event::HarnessChanged { harness: kind });
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

    /// The model's context window: configured; else what the server says
    /// (asked once, if `ask_server_window`); else the catalog's; else 8192.
    async fn context_window(&mut self) -> u32 {
        if let Some(window) = self.config.context_window {
            return window;
        }
        if self.config.ask_server_window && self.probed_window.is_none() {
            let model = self.config.model.clone();
            self.probed_window = Some(self.client.context_window(&model).await);
        }
        self.probed_window
            .flatten()
            .or(self.config.catalog_window)
            .unwrap_or(crate::context::DEFAULT_CONTEXT_WINDOW)
    }

    /// Makes the conversation fit the context window (see
    /// [`crate::context`]); with `force`, makes it smaller even if it fits.
    /// An error when it cannot be made to fit.
    async fn fit_context(&mut self, force: bool, cancel: &CancellationToken) -> Result<(), String> {
        use crate::context::{KEEP_RECENT, input_budget, rebuild, shrink_outputs, split_point};
        let window = self.context_window().await;
        let budget = input_budget(window, self.config.max_tokens);
        let before = self.next_request_tokens();
        if !force && before <= budget {
            return Ok(());
        }
        // Forced (the server refused, or /compact): only the last exchange
        // stays as it is.
        let keep = if force { 2 } else { KEEP_RECENT };
        let recent_start = self.history.len().saturating_sub(keep);
        let mut shrunk = shrink_outputs(&mut self.history, recent_start, self.task_index);
        let mut now = self.next_request_tokens();
        let mut summarized = 0;
        if (force || now > budget)
            && let Some(keep_from) = split_point(&self.history, keep)
        {
            let old: Vec<Message> = self.history[..keep_from]
                .iter()
                .enumerate()
                .filter(|(i, _)| Some(*i) != self.task_index)
                .map(|(_, m)| m.clone())
                .collect();
            if !old.is_empty() {
                let summary = self.summarize(&old, window, cancel).await?;
                let first_kept_is_user =
                    matches!(self.history.get(keep_from), Some(Message::User { .. }));
                self.history = rebuild(&self.history, keep_from, self.task_index, &summary);
                self.task_index = self.task_index.map(|task| {
                    if task < keep_from || first_kept_is_user {
                        task.saturating_sub(keep_from)
                    } else {
                        task - keep_from + 1
                    }
                });
                self.history_epoch += 1;
                self.undo_points.clear();
                summarized = old.len();
                now = self.next_request_tokens();
            }
        }
        if now > budget {
            // Last resort: the recent outputs too.
            let all = self.history.len();
            shrunk += shrink_outputs(&mut self.history, all, self.task_index);
            now = self.next_request_tokens();
        }
        if shrunk > 0 || summarized > 0 {
            self.emit(Event::Compacted {
                before_tokens: before,
                after_tokens: now,
                context_window: window,
                shrunk_outputs: shrunk,
                summarized_messages: summarized,
            });
        } else if force {
            return Err(
                "nothing to compact: no old outputs or earlier turns to summarize".to_owned(),
            );
        }
        if now > budget {
            return Err(format!(
                "the conversation is about {now} tokens even after compaction, more than the {budget} a context window of {window} tokens leaves for it"
            ));
        }
        Ok(())
    }

    /// A summary of `messages` by the model; if the model cannot make one,
    /// a list of what the user asked.
    async fn summarize(
        &mut self,
        messages: &[Message],
        window: u32,
        cancel: &CancellationToken,
    ) -> Result<String, String> {
        const SUMMARY_TOKENS: u32 = 600;
        let budget = crate::context::input_budget(window, Some(SUMMARY_TOKENS));
        // 3 characters per token, less the instructions.
        let chars = usize::try_from(budget.saturating_mul(3))
            .unwrap_or(usize::MAX)
            .saturating_sub(2000);
        let text = crate::context::render_for_summary(messages, 2000, chars);
        let request = crate::context::summary_request(&self.config.model, &text, SUMMARY_TOKENS);
        let mut stream = self.client.stream(request);
        let mut summary = String::new();
        let deadline = self.deadline();
        let failure = loop {
            let item = tokio::select! {
                item = stream.next() => item,
                () = cancel.cancelled() => return Err("interrupted while summarizing the conversation".to_owned()),
                () = sleep_until(deadline) => return Err("the task's time limit (`max_time`) passed while summarizing the conversation".to_owned()),
            };
            match item {
                Some(Ok(StreamEvent::TextDelta(delta))) => summary.push_str(&delta),
                Some(Ok(StreamEvent::Restart)) => summary.clear(),
                Some(Ok(StreamEvent::Completed { usage, .. })) => {
                    self.request_completed(usage);
                    break None;
                }
                Some(Ok(_)) => {}
                Some(Err(error)) => break Some(error.to_string()),
                None => break Some("the reply ended early".to_owned()),
            }
        };
        let summary = summary.trim().to_owned();
        if failure.is_none() && !summary.is_empty() {
            return Ok(summary);
        }
        let asked: Vec<String> = messages
            .iter()
            .filter_map(|m| match m {
                Message::User { content } => content.first().and_then(ContentPart::as_text),
                _ => None,
            })
            .map(|t| t.chars().take(200).collect())
            .collect();
        self.emit(Event::Warning {
            message: format!(
                "the model could not summarize the earlier conversation ({}); it is replaced by a list of what was asked",
                failure.unwrap_or_else(|| "its summary was empty".to_owned())
            ),
        });
        Ok(format!(
            "Earlier, the user asked:\n- {}",
            asked.join("\n- ")
        ))
    }

    async fn stream_reply(
        &mut self,
        request: ModelRequest,
        cancel: &CancellationToken,
    ) -> Result<Reply, ReplyError> {
        let mut stream = self.client.stream(request);
        let mut text = String::new();
        let mut tool_calls = Vec::new();
        let mut reasoning = Vec::new();
        let deadline = self.deadline();
        loop {
            let item = tokio::select! {
                item = stream.next() => item,
                () = cancel.cancelled() => return Err(ReplyError::Interrupted { partial: text }),
                () = sleep_until(deadline) => return Err(ReplyError::TimeLimit { partial: text }),
            };
            match item {
                Some(Ok(StreamEvent::TextDelta(delta))) => {
                    text.push_str(&delta);
                    self.emit(Event::TextDelta { delta });
                }
                Some(Ok(StreamEvent::ToolCall(call))) => tool_calls.push(call),
                Some(Ok(StreamEvent::Reasoning(item))) => reasoning.push(item),
                Some(Ok(StreamEvent::Restart)) => {
                    text.clear();
                    self.emit(Event::ReplyRestarted);
                }
                Some(Ok(StreamEvent::Retrying {
                    attempt,
                    max_attempts,
                    delay,
                    reason,
                })) => self.emit(Event::Retrying {
                    attempt,
                    max_attempts,
                    delay_ms: delay.as_millis() as u64,
                    reason,
                }),
                Some(Ok(StreamEvent::Completed {
                    finish_reason,
                    usage,
                })) => {
                    self.request_completed(usage);
                    return Ok(Reply {
                        text,
                        tool_calls,
                        reasoning,
                        finish_reason,
                    });
                }
                Some(Err(error)) => return Err(ReplyError::Failed(error)),
                None => {
                    return Err(ReplyError::Failed(ProviderError::StreamCut {
                        provider: "the model server".to_owned(),
                        detail: "the reply ended without completing".to_owned(),
                    }));
                }
            }
        }
    }

    /// When the task must end (`max_time`), if it has a limit.
    fn deadline(&self) -> Option<Instant> {
        self.config.max_time.map(|limit| self.task_started + limit)
    }

    /// Runs (or declines, or reports as invalid) each action in order.
    async fn execute(
        &mut self,
        actions: Vec<Action>,
        cancel: &CancellationToken,
    ) -> (Vec<Report>, Option<Halt>) {
        let mut reports = Vec::new();
        // Once the user declines (or cannot be asked), the rest of the reply,
        // which likely builds on the declined run, is not run either.
        let mut skip_rest: Option<SkipReason> = None;
        for action in actions {
            let proposed = match action {
                Action::Invalid { call_id, message } => {
                    reports.push(Report {
                        call_id,
                        language: String::new(),
                        text: message,
                        images: Vec::new(),
                    });
                    continue;
                }
                Action::Run(proposed) => proposed,
                Action::Computer { call_id, action } => {
                    let (report, halt) = self
                        .computer_step(call_id, action, &mut skip_rest, cancel)
                        .await;
                    reports.push(report);
                    if halt.is_some() {
                        return (reports, halt);
                    }
                    continue;
                }
            };
            let id = RunId(self.next_run_id);
            self.next_run_id += 1;
            let ProposedRun {
                call_id,
                language,
                code,
            } = proposed;
            let report = |language: &str, text: String| Report {
                call_id: call_id.clone(),
                language: language.to_owned(),
                text,
                images: Vec::new(),
            };

            let asked = language
                .clone()
                .or_else(|| language::guess(&code).map(str::to_owned))
                .unwrap_or_else(|| "python".to_owned());
            let Some(language) = self.language_for(&asked, &code) else {
                let message = format!(
                    "Not run: `{asked}` cannot run here. Available languages: {}.",
                    self.languages.join(", ")
                );
                self.emit(Event::CodeProposed {
                    id,
                    language: asked.clone(),
                    code: code.clone(),
                });
                self.emit(Event::RunSkipped {
                    id,
                    reason: SkipReason::Unavailable {
                        message: message.clone(),
                    },
                });
                reports.push(report(&asked, message));
                continue;
            };
            self.emit(Event::CodeProposed {
                id,
                language: language.clone(),
                code: code.clone(),
            });
            self.guard.proposed(&language, &code);

            if let Some(reason) = &skip_rest {
                self.emit(Event::RunSkipped {
                    id,
                    reason: reason.clone(),
                });
                let text = match reason {
                    SkipReason::NoApprover => {
                        "Not run: it needed the user's approval, which could not be asked for."
                    }
                    _ => "Not run: the user declined an earlier run of this reply.",
                };
                reports.push(report(&language, text.to_owned()));
                continue;
            }

            let risks: Vec<String> =
                oi_sandbox::assess(&language, &code, &self.risk_context(&language))
                    .iter()
                    .map(ToString::to_string)
                    .collect();
            let ask = match self.config.approval {
                ApprovalPolicy::Ask => !self.approve_all || !risks.is_empty(),
                ApprovalPolicy::Auto => !risks.is_empty(),
                ApprovalPolicy::Never => false,
            };
            if !ask && !risks.is_empty() {
                self.emit(Event::Warning {
                    message: format!(
                        "running risky code without asking (approval = \"never\"): {}",
                        risks.join("; ")
                    ),
                });
            }
            let decision = if !ask {
                ReviewDecision::Approve
            } else {
                self.emit(Event::ApprovalRequested {
                    id,
                    language: language.clone(),
                    code: code.clone(),
                    risks: risks.clone(),
                });
                match self.wait_for_decision(id, cancel).await {
                    Some(decision) => decision,
                    None => {
                        reports.push(report(
                            &language,
                            "Not run: the user interrupted the task.".to_owned(),
                        ));
                        return (reports, Some(Halt::Interrupted));
                    }
                }
            };
            let (code, edited) = match decision {
                ReviewDecision::Approve => (code, false),
                ReviewDecision::ApproveForSession => {
                    self.approve_all = true;
                    (code, false)
                }
                ReviewDecision::Edit { code: edited } => (edited, true),
                ReviewDecision::Decline => {
                    self.emit(Event::RunSkipped {
                        id,
                        reason: SkipReason::Declined,
                    });
                    reports.push(report(
                        &language,
                        "The user declined to run this code.".to_owned(),
                    ));
                    skip_rest = Some(SkipReason::Declined);
                    continue;
                }
                ReviewDecision::NoApprover => {
                    self.emit(Event::RunSkipped {
                        id,
                        reason: SkipReason::NoApprover,
                    });
                    let text = if risks.is_empty() {
                        "Not run: this session cannot ask the user for approval (it has no terminal), and running code without approval was not allowed. The user can rerun with `--yes` to let code run.".to_owned()
                    } else {
                        format!(
                            "Not run: this code looks risky — {} — so it needs the user's approval, which cannot be asked for in this session (no terminal). Do the task without that step if you can; otherwise say what you would run and why, and let the user decide.",
                            risks.join("; ")
                        )
                    };
                    reports.push(report(&language, text));
                    skip_rest = Some(SkipReason::NoApprover);
                    continue;
                }
            };

            let (status, text, images) = self.run_code(id, &language, &code, cancel).await;
            if self.config.os.as_ref().is_some_and(OsMode::take_tripped) {
                reports.push(report(
                    &language,
                    format!("{text}\n[Stopped by the user with the fail-safe.]"),
                ));
                return (reports, Some(Halt::FailSafe));
            }
            if let Some(status) = &status {
                self.guard.ran(status, &text);
            }
            let text = if edited {
                format!(
                    "The user edited the code before running it. It ran as:\n```\n{code}\n```\n{text}"
                )
            } else {
                text
            };
            reports.push(Report {
                images,
                ..report(&language, text)
            });
            if status == Some(RunStatus::Interrupted) || cancel.is_cancelled() {
                return (reports, Some(Halt::Interrupted));
            }
        }
        (reports, None)
    }

    /// OS mode: one action of the `computer` tool, shown and approved like
    /// code (as language `computer`), then done on the desktop.
    async fn computer_step(
        &mut self,
        call_id: String,
        action: oi_computer::Action,
        skip_rest: &mut Option<SkipReason>,
        cancel: &CancellationToken,
    ) -> (Report, Option<Halt>) {
        const LANGUAGE: &str = oi_protocol::SCREEN_LANGUAGE;
        let report = |text: String, images: Vec<ContentPart>| Report {
            call_id: Some(call_id.clone()),
            language: LANGUAGE.to_owned(),
            text,
            images,
        };
        let id = RunId(self.next_run_id);
        self.next_run_id += 1;
        let Some(os) = self.config.os.clone() else {
            return (
                report(
                    "Error: OS mode is off, so the screen cannot be used.".to_owned(),
                    Vec::new(),
                ),
                None,
            );
        };
        let description = match os.desktop.lock() {
            Ok(desktop) => desktop.describe(&action),
            Err(_) => action.describe(&|p| format!("({}, {})", p.x, p.y)),
        };
        self.emit(Event::CodeProposed {
            id,
            language: LANGUAGE.to_owned(),
            code: description.clone(),
        });
        // Clicking or typing the same thing again is going in circles;
        // looking, pressing a key or scrolling again is not.
        if !action.observes()
            && !matches!(
                action,
                oi_computer::Action::Key { .. } | oi_computer::Action::Scroll { .. }
            )
        {
            self.guard.proposed(LANGUAGE, &description);
        }
        if let Some(reason) = skip_rest.as_ref() {
            self.emit(Event::RunSkipped {
                id,
                reason: reason.clone(),
            });
            return (
                report(
                    "Not done: an earlier action of this reply was not approved.".to_owned(),
                    Vec::new(),
                ),
                None,
            );
        }
        let ask = match self.config.approval {
            ApprovalPolicy::Ask => !self.approve_all,
            ApprovalPolicy::Auto | ApprovalPolicy::Never => false,
        };
        if ask {
            self.emit(Event::ApprovalRequested {
                id,
                language: LANGUAGE.to_owned(),
                code: description.clone(),
                risks: Vec::new(),
            });
            let decision = match self.wait_for_decision(id, cancel).await {
                Some(decision) => decision,
                None => {
                    return (
                        report(
                            "Not done: the user interrupted the task.".to_owned(),
                            Vec::new(),
                        ),
                        Some(Halt::Interrupted),
                    );
                }
            };
            match decision {
                ReviewDecision::Approve | ReviewDecision::Edit { .. } => {}
                ReviewDecision::ApproveForSession => self.approve_all = true,
                ReviewDecision::Decline | ReviewDecision::NoApprover => {
                    let reason = if decision == ReviewDecision::Decline {
                        SkipReason::Declined
                    } else {
                        SkipReason::NoApprover
                    };
                    self.emit(Event::RunSkipped {
                        id,
                        reason: reason.clone(),
                    });
                    let text = if reason == SkipReason::Declined {
                        "The user declined this action."
                    } else {
                        "Not done: this session cannot ask the user to approve screen actions (no terminal). The user can rerun with `--yes`."
                    };
                    *skip_rest = Some(reason);
                    return (report(text.to_owned(), Vec::new()), None);
                }
            }
        }
        self.emit(Event::RunStarted {
            id,
            language: LANGUAGE.to_owned(),
            code: description,
        });
        let started = Instant::now();
        let stop = cancel.clone();
        let desktop = std::sync::Arc::clone(&os.desktop);
        let done = tokio::task::spawn_blocking(move || {
            let mut desktop = desktop.lock().map_err(|_| {
                oi_computer::ComputerError::Protocol(
                    "the desktop is unusable after an earlier failure".to_owned(),
                )
            })?;
            desktop.perform(&action, oi_computer::Perform::for_model(), &|| {
                stop.is_cancelled()
            })
        })
        .await
        .unwrap_or_else(|e| Err(oi_computer::ComputerError::Protocol(e.to_string())));
        let (status, text, images, halt) = match done {
            Ok(outcome) => {
                let mut images = Vec::new();
                if let Some(shot) = &outcome.screenshot {
                    self.emit(Event::Image {
                        id,
                        path: shot.path.display().to_string(),
                        media_type: "image/png".to_owned(),
                    });
                    if self.config.vision {
                        images.push(ContentPart::Image {
                            media_type: "image/png".to_owned(),
                            data: base64::engine::general_purpose::STANDARD.encode(&shot.png),
                        });
                    }
                }
                (RunStatus::Ok, outcome.text, images, None)
            }
            Err(oi_computer::ComputerError::Stopped) => (
                RunStatus::Interrupted,
                "Stopped: the user interrupted the action.".to_owned(),
                Vec::new(),
                Some(Halt::Interrupted),
            ),
            Err(error @ oi_computer::ComputerError::FailSafe) => {
                let message = error.to_string();
                (
                    RunStatus::Failed {
                        exit_code: None,
                        error: Some(message.clone()),
                    },
                    format!("Stopped by the user: {message}"),
                    Vec::new(),
                    Some(Halt::FailSafe),
                )
            }
            Err(error) => {
                let message = error.to_string();
                (
                    RunStatus::Failed {
                        exit_code: None,
                        error: Some(message.clone()),
                    },
                    format!("Error: {message}"),
                    Vec::new(),
                    None,
                )
            }
        };
        self.guard.ran(&status, &text);
        self.emit(Event::RunFinished {
            id,
            status,
            duration_ms: started.elapsed().as_millis() as u64,
            output_bytes: 0,
        });
        (report(text, images), halt)
    }

    /// Saves the workspace before run `id` (a failure is reported once and
    /// does not stop the run).
    async fn checkpoint_before(&mut self, id: RunId, code: &str) {
        let Some(checkpoints) = self.config.checkpoints.clone() else {
            return;
        };
        let message = crate::checkpoint::before_run_message(id.0, code);
        match checkpoints.snapshot(&message).await {
            Ok(snapshot) => {
                // The reply that proposed this run is the last message.
                let reply = self.history.len().saturating_sub(1);
                self.undo_points
                    .entry(snapshot.checkpoint.id.clone())
                    .or_insert(reply);
                if snapshot.created || !snapshot.skipped.is_empty() {
                    self.emit(Event::CheckpointSaved {
                        id,
                        checkpoint: snapshot.checkpoint.short_id().to_owned(),
                        skipped: snapshot
                            .skipped
                            .iter()
                            .map(|(path, size)| format!("{path} ({size} bytes)"))
                            .collect(),
                    });
                }
            }
            Err(error) if !self.checkpoint_warned => {
                self.checkpoint_warned = true;
                self.emit(Event::Warning {
                    message: format!(
                        "could not save a checkpoint, so this run cannot be undone: {error}"
                    ),
                });
            }
            Err(_) => {}
        }
    }

    /// `Op::Undo`: the workspace goes back to before the last run that
    /// changed it; the model hears of it with the user's next message.
    async fn undo(&mut self) {
        let Some(checkpoints) = self.config.checkpoints.clone() else {
            self.emit(Event::Error {
                message: "undo is not available: checkpoints are off in this session".to_owned(),
                hint: Some("turn them on with `checkpoints = true` (it needs `git`)".to_owned()),
            });
            return;
        };
        match checkpoints.undo().await {
            Ok(restored) => {
                let changes: Vec<String> =
                    restored.changes.iter().map(ToString::to_string).collect();
                let files = if changes.is_empty() {
                    "none changed".to_owned()
                } else {
                    changes.join("; ")
                };
                // Runs of this session: their exchange leaves the conversation.
                if let Some(&start) = self.undo_points.get(&restored.checkpoint.id) {
                    self.history.truncate(start);
                    self.undo_points.retain(|_, at| *at < start);
                    self.pending_notes.push(format!(
                        "[The user undid your last run(s): the files are back as they were before them ({files}), and that part of the conversation was removed. Variables in the kernels were not rolled back.]"
                    ));
                } else {
                    self.pending_notes.push(format!(
                        "[The user undid the last changes: the workspace is back to its state {} ({}). Files: {files}. Kernels kept their state; files may differ from what earlier output showed.]",
                        restored.checkpoint.message,
                        restored.checkpoint.short_id(),
                    ));
                }
                self.emit(restored.event());
            }
            Err(error) => self.emit(Event::Error {
                message: error.to_string(),
                hint: None,
            }),
        }
    }

    /// Where code of `language` would run, for judging the paths it names.
    fn risk_context(&self, language: &str) -> oi_sandbox::RiskContext {
        let workspace = self
            .kernels
            .sandbox()
            .map_or_else(|| self.kernels.cwd().to_path_buf(), |p| p.workspace.clone());
        let mut ctx = oi_sandbox::RiskContext::new(workspace);
        ctx.cwd = self.kernels.current_dir(language);
        if let Some(policy) = self.kernels.sandbox() {
            ctx.protected = policy.protected_roots.clone();
        }
        ctx
    }

    /// The canonical language to run `code` in, if it can run here: the
    /// model's choice, corrected when the code is plainly the other language.
    fn language_for(&self, asked: &str, code: &str) -> Option<String> {
        let spec = self.kernels.resolve(asked)?;
        let corrected = language::correct(&spec.name, code);
        if corrected != spec.name && self.kernels.resolve(corrected).is_some() {
            return Some(corrected.to_owned());
        }
        Some(spec.name.clone())
    }

    async fn wait_for_decision(
        &mut self,
        id: RunId,
        cancel: &CancellationToken,
    ) -> Option<ReviewDecision> {
        loop {
            tokio::select! {
                answer = self.approvals.recv() => match answer {
                    Some((answered, decision)) if answered == id => return Some(decision),
                    // An answer to an earlier, already settled request.
                    Some(_) => continue,
                    None => return None,
                },
                () = cancel.cancelled() => return None,
            }
        }
    }

    /// Runs approved code, streaming its output as events; returns its
    /// status (None if the kernel could not be used), the result for the
    /// model, and the images it made (for a model that reads them).
    async fn run_code(
        &mut self,
        id: RunId,
        language: &str,
        code: &str,
        cancel: &CancellationToken,
    ) -> (Option<RunStatus>, String, Vec<ContentPart>) {
        if let Err(error) = self.kernels.start(language).await {
            let message = error.to_string();
            self.emit(Event::RunSkipped {
                id,
                reason: SkipReason::Unavailable {
                    message: message.clone(),
                },
            });
            return (None, format!("Not run: {message}"), Vec::new());
        }
        self.checkpoint_before(id, code).await;
        self.emit(Event::RunStarted {
            id,
            language: language.to_owned(),
            code: code.to_owned(),
        });
        let started = Instant::now();
        // Stops this run alone (the task goes on), e.g. when it waits for
        // input nobody can give.
        let run_cancel = cancel.child_token();
        let (input_tx, mut input_rx) = mpsc::unbounded_channel();
        let user_input = self.config.user_input;
        if user_input && let Ok(mut target) = self.input_target.lock() {
            *target = Some((id, input_tx));
        }
        let mut collected = HeadTail::new(self.config.max_output);
        let mut pacer = DisplayPacer::new(started);
        let mut images: Vec<(PathBuf, String)> = Vec::new();
        let mut waiting: Option<String> = None;
        let mut last_stream = OutputStream::Stdout;
        let events = self.events.clone();
        let show = |events: &mpsc::UnboundedSender<Event>, stream, shown: Vec<Shown>| {
            for piece in shown {
                let event = match piece {
                    Shown::Text(text) => Event::OutputDelta { id, stream, text },
                    Shown::Skipped(bytes) => Event::OutputSkipped { id, bytes },
                };
                let _ = events.send(event);
            }
        };
        let mut sink = |event: RunEvent| match event {
            RunEvent::Output { stream, text } => {
                collected.push(&text);
                last_stream = stream;
                show(&events, stream, pacer.offer(&text, Instant::now()));
            }
            RunEvent::InputWritten { text } => collected.push(&text),
            RunEvent::WaitingForInput { prompt } => {
                if user_input {
                    let _ = events.send(Event::InputRequested { id, prompt });
                } else if waiting.is_none() {
                    waiting = Some(prompt);
                    run_cancel.cancel();
                }
            }
            RunEvent::Image { path, media_type } => {
                let _ = events.send(Event::Image {
                    id,
                    path: path.display().to_string(),
                    media_type: media_type.clone(),
                });
                images.push((path, media_type));
            }
        };
        // A run may not outlast the task's own time limit.
        let remaining = self
            .config
            .max_time
            .map(|limit| limit.saturating_sub(self.task_started.elapsed()));
        let timeout = match (self.config.run_timeout, remaining) {
            (Some(run), Some(left)) => Some(run.min(left.max(Duration::from_secs(1)))),
            (run, left) => run.or(left),
        };
        let control = RunControl {
            cancel: &run_cancel,
            timeout,
            input: user_input.then_some(&mut input_rx),
        };
        let result = self.kernels.run(language, code, &mut sink, control).await;
        if let Ok(mut target) = self.input_target.lock() {
            *target = None;
        }
        show(&events, last_stream, pacer.finish());
        let (mut status, output_bytes) = match result {
            Ok(outcome) => (outcome.status, outcome.output_bytes),
            // The kernel was started just above, so this is rare: a kernel
            // that died between runs and failed to restart.
            Err(error) => (
                RunStatus::Crashed {
                    reason: error.to_string(),
                },
                0,
            ),
        };
        if let Some(prompt) = waiting
            && status == RunStatus::Interrupted
            && !cancel.is_cancelled()
        {
            status = RunStatus::WaitingForInput { prompt };
        }
        self.emit(Event::RunFinished {
            id,
            status: status.clone(),
            duration_ms: started.elapsed().as_millis() as u64,
            output_bytes,
        });
        let mut text = if images.is_empty() || status != RunStatus::Ok || !collected.is_empty() {
            describe_run(language, &collected, &status)
        } else {
            String::new()
        };
        if let Some(policy) = self.kernels.sandbox() {
            let cwd = self.kernels.current_dir(language);
            for denial in oi_sandbox::explain(policy, &text, &cwd) {
                if !text.is_empty() && !text.ends_with('\n') {
                    text.push('\n');
                }
                text.push_str(&format!(
                    "[{}. Do not try to get around it; if it is needed, tell the user, who can allow it: {}]",
                    denial.message, denial.hint
                ));
                self.emit(Event::SandboxDenied {
                    id,
                    message: denial.message,
                    hint: denial.hint,
                });
            }
        }
        for (path, _) in &images {
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str(&format!("[image saved: {}]", path.display()));
        }
        let mut parts = Vec::new();
        if self.config.vision {
            let first = images.len().saturating_sub(MAX_IMAGES_PER_RUN);
            for (path, media_type) in &images[first..] {
                match image_part(path, media_type) {
                    Ok(part) => parts.push(part),
                    Err(problem) => {
                        text.push_str(&format!("\n[{} not sent: {problem}]", path.display()));
                    }
                }
            }
        }
        (Some(status), text, parts)
    }
}

/// A saved conversation.
#[derive(serde::Serialize, serde::Deserialize)]
struct ConversationFile {
    version: u32,
    model: String,
    harness: String,
    messages: Vec<Message>,
}

fn load_conversation(path: &Path) -> Result<Vec<Message>, String> {
    let text = fs_err::read_to_string(path).map_err(|e| e.to_string())?;
    let file: ConversationFile = serde_json::from_str(&text)
        .map_err(|e| format!("{} is not a conversation saved by oi: {e}", path.display()))?;
    Ok(file.messages)
}

/// The media type of an image file, from its extension.
fn media_type_of(path: &Path) -> &'static str {
    match path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("gif") => "image/gif",
        Some("webp") => "image/webp",
        _ => "image/png",
    }
}

/// An image file as message content.
fn image_part(path: &Path, media_type: &str) -> Result<ContentPart, String> {
    let size = fs_err::metadata(path).map_err(|e| e.to_string())?.len();
    if size > MAX_IMAGE_BYTES {
        return Err(format!(
            "it is {size} bytes, more than the {MAX_IMAGE_BYTES} a model accepts"
        ));
    }
    let bytes = fs_err::read(path).map_err(|e| e.to_string())?;
    Ok(ContentPart::Image {
        media_type: media_type.to_owned(),
        data: base64::engine::general_purpose::STANDARD.encode(bytes),
    })
}

/// Replaces all but the last `keep` images of the conversation with a note.
fn bound_images(history: &mut [Message], keep: usize) {
    let mut seen = 0;
    for message in history.iter_mut().rev() {
        let (Message::User { content } | Message::Tool { content, .. }) = message else {
            continue;
        };
        for part in content.iter_mut().rev() {
            if matches!(part, ContentPart::Image { .. }) {
                seen += 1;
                if seen > keep {
                    *part = ContentPart::text(
                        "[an image shown earlier was removed from the conversation to save tokens]",
                    );
                }
            }
        }
    }
}

/// The size of a request in tokens, estimated at four characters per token.
use crate::context::estimate_tokens;

/// The text of the task's message.
fn text_of_task(history: &[Message], task: Option<usize>) -> String {
    match task.and_then(|t| history.get(t)) {
        Some(Message::User { content }) => content
            .iter()
            .filter_map(ContentPart::as_text)
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// The line breaks in `bytes`.
fn bytecount(bytes: &[u8]) -> usize {
    bytes.iter().filter(|&&b| b == b'\n').count()
}

/// Whether a task asks a question (which a model may answer without code)
/// rather than asks for something to be done.
fn is_question(text: &str) -> bool {
    let text = text.trim();
    if text.ends_with('?') {
        return true;
    }
    let first = text
        .split_whitespace()
        .next()
        .unwrap_or("")
        .trim_matches(|c: char| !c.is_alphanumeric())
        .to_lowercase();
    matches!(
        first.as_str(),
        "what"
            | "why"
            | "how"
            | "who"
            | "when"
            | "where"
            | "which"
            | "is"
            | "are"
            | "does"
            | "do"
            | "can"
            | "could"
            | "explain"
            | "describe"
            | "tell"
    )
}

/// What a file the task names now holds, for a small model: its size and
/// first lines (a binary file: its size only).
fn file_preview(name: &str, path: &Path, len: u64) -> Option<String> {
    use std::io::Read as _;
    const LINES: usize = 3;
    const WIDTH: usize = 100;
    /// Only the start is read whole; the rest of a big file is only counted.
    const HEAD: u64 = 64 * 1024;
    let mut file = fs_err::File::open(path).ok()?;
    let mut head = Vec::new();
    (&mut file).take(HEAD).read_to_end(&mut head).ok()?;
    // Text: valid UTF-8 without NUL bytes, though the head may end inside
    // a character.
    let text = match std::str::from_utf8(&head) {
        Ok(text) => Some(text),
        Err(e) if e.error_len().is_none() => std::str::from_utf8(&head[..e.valid_up_to()]).ok(),
        Err(_) => None,
    };
    let Some(text) = text.filter(|t| !t.contains('\0')) else {
        return Some(format!(
            "[oi: `{name}` now exists ({len} bytes). Check that it is what the task asks for.]"
        ));
    };
    if text.trim().is_empty() && len <= HEAD {
        return Some(format!(
            "[oi: `{name}` now exists but is empty. Check that it is what the task asks for.]"
        ));
    }
    // Lines as `str::lines` counts them: the line breaks, and an unended
    // last line.
    let mut breaks = bytecount(&head);
    let mut last = head.last().copied();
    let mut buf = vec![0; 64 * 1024];
    loop {
        match file.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                breaks += bytecount(&buf[..n]);
                last = Some(buf[n - 1]);
            }
        }
    }
    let count = breaks + usize::from(last.is_some_and(|b| b != b'\n'));
    let shown: Vec<String> = text
        .lines()
        .take(LINES)
        .map(|line| {
            let cut: String = line.chars().take(WIDTH).collect();
            if cut.len() < line.len() {
                format!("{cut}…")
            } else {
                cut
            }
        })
        .collect();
    let more = if count > LINES { "\n…" } else { "" };
    let lines = if count == 1 { "line" } else { "lines" };
    Some(format!(
        "[oi: `{name}` now has {count} {lines}:\n{}{more}\nCheck that it holds exactly what the task asks for.]",
        shown.join("\n")
    ))
}

/// File names a task mentions (`count.txt`, `out/sum.txt`, `chart.png` …).
fn named_files(text: &str) -> Vec<String> {
    const EXTENSIONS: &[&str] = &[
        "txt", "csv", "json", "md", "png", "jpg", "jpeg", "svg", "pdf", "zip", "tar", "gz", "py",
        "sh", "js", "html", "xml", "yaml", "yml", "log", "ini", "toml", "db", "xlsx",
    ];
    let mut found: Vec<String> = Vec::new();
    for word in text.split_whitespace() {
        let word = word.trim_matches(|c: char| {
            matches!(
                c,
                '`' | '"' | '\'' | ',' | ';' | ':' | '(' | ')' | '[' | ']' | '<' | '>'
            )
        });
        let word = word.strip_suffix('.').unwrap_or(word);
        let Some((stem, ext)) = word.rsplit_once('.') else {
            continue;
        };
        let plain = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '/' | '.');
        if stem.is_empty()
            || word.starts_with('/')
            || word.contains("..")
            || !word.chars().all(plain)
            || !EXTENSIONS.contains(&ext.to_ascii_lowercase().as_str())
        {
            continue;
        }
        if !found.iter().any(|f| f == word) {
            found.push(word.to_owned());
        }
    }
    found
}

/// Waits until `deadline`, or forever without one.
async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline.into()).await,
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn questions_are_told_from_tasks() {
        assert!(is_question("What is 2 ** 20?"));
        assert!(is_question("how many CPUs does this machine have"));
        assert!(!is_question("Delete the temporary files in cache/."));
        assert!(!is_question(
            "Write the message of the latest commit to last.txt."
        ));
    }

    #[test]
    fn previews_show_the_start_of_a_file_the_task_names() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("emails.txt");
        fs_err::write(&path, "Ann <ann@x.org>\nBob <bob@x.org>\nCy\nDee\n").unwrap();
        assert_eq!(
            file_preview("emails.txt", &path, 36).unwrap(),
            "[oi: `emails.txt` now has 4 lines:\nAnn <ann@x.org>\nBob <bob@x.org>\nCy\n…\nCheck that it holds exactly what the task asks for.]"
        );
        // A big file: its start shown, all of its lines counted.
        let big: String = (0..20_000).map(|i| format!("line {i}\n")).collect();
        fs_err::write(&path, &big).unwrap();
        assert!(big.len() > 64 * 1024);
        let preview = file_preview("emails.txt", &path, big.len() as u64).unwrap();
        assert!(
            preview
                .starts_with("[oi: `emails.txt` now has 20000 lines:\nline 0\nline 1\nline 2\n…\n"),
            "{preview}"
        );
        fs_err::write(&path, "").unwrap();
        assert!(
            file_preview("emails.txt", &path, 0)
                .unwrap()
                .contains("is empty")
        );
        fs_err::write(&path, b"\x89PNG\0\0").unwrap();
        assert_eq!(
            file_preview("chart.png", &path, 6).unwrap(),
            "[oi: `chart.png` now exists (6 bytes). Check that it is what the task asks for.]"
        );
    }

    #[test]
    fn the_files_a_task_names_are_found() {
        assert_eq!(
            named_files("Count the lines of data.csv and write the number to count.txt."),
            ["data.csv", "count.txt"]
        );
        assert_eq!(
            named_files(
                "write the squares to out/squares.txt, then `out/sum.txt` (see /etc/hosts, v1.2 and e.g. this)"
            ),
            ["out/squares.txt", "out/sum.txt"]
        );
        assert!(named_files("no files here, version 3.11.7").is_empty());
    }

    fn image(n: u8) -> ContentPart {
        ContentPart::Image {
            media_type: "image/png".into(),
            data: format!("{n}"),
        }
    }

    #[test]
    fn only_the_last_images_stay_in_the_conversation() {
        let mut history = vec![
            Message::User {
                content: vec![ContentPart::text("plot"), image(1), image(2)],
            },
            Message::Tool {
                call_id: "c".into(),
                content: vec![ContentPart::text("out"), image(3), image(4)],
            },
        ];
        bound_images(&mut history, 3);
        let removed = ContentPart::text(
            "[an image shown earlier was removed from the conversation to save tokens]",
        );
        assert_eq!(
            history,
            vec![
                Message::User {
                    content: vec![ContentPart::text("plot"), removed, image(2)],
                },
                Message::Tool {
                    call_id: "c".into(),
                    content: vec![ContentPart::text("out"), image(3), image(4)],
                },
            ]
        );
    }

    #[test]
    fn image_files_become_base64_content() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.png");
        fs_err::write(&path, b"\x89PNG").unwrap();
        assert_eq!(
            image_part(&path, "image/png").unwrap(),
            ContentPart::Image {
                media_type: "image/png".into(),
                data: "iVBORw==".into(),
            }
        );
        assert!(
            image_part(&dir.path().join("missing.png"), "image/png")
                .unwrap_err()
                .contains("missing.png")
        );
    }
}
