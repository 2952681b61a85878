//! One ACP session: an oi agent, and the mapping of its events for one
//! prompt to `session/update` notifications and permission requests.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    AvailableCommand, AvailableCommandsUpdate, ContentBlock, ContentChunk, CurrentModeUpdate,
    EmbeddedResourceResource, McpServer, PermissionOption, PermissionOptionKind, PromptResponse,
    RequestPermissionOutcome, RequestPermissionRequest, SessionConfigOption,
    SessionConfigOptionCategory, SessionConfigOptionValue, SessionConfigSelectOption, SessionId,
    SessionMode, SessionModeState, SessionNotification, SessionUpdate, StopReason as AcpStop,
    TextContent, ToolCall, ToolCallContent, ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields,
    ToolKind, UsageUpdate,
};
use agent_client_protocol::{Client, Error};
use oi_codex::{AggregatedOutput, exit_code, stop_message};
use oi_core::SessionRequest;
use oi_core::setup::{Given, Resume};
use oi_protocol::{
    ApprovalPolicy, ContentPart, Event, Message, Op, ReviewDecision, RunId, RunStatus, SkipReason,
    StopReason,
};
use serde_json::json;
use tokio::sync::mpsc;

/// The loaded sessions, by id.
pub(crate) type Sessions = Arc<Mutex<HashMap<String, Arc<AcpSession>>>>;

/// How often a running tool call is updated with its output.
const OUTPUT_UPDATES: Duration = Duration::from_millis(200);

/// The session modes: oi's approval policies a person can choose.
pub fn modes() -> Vec<SessionMode> {
    vec![
        SessionMode::new("ask", "Ask").description("Ask before every run of code"),
        SessionMode::new("auto", "Auto")
            .description("Run code without asking, except risky code, which always asks"),
    ]
}

/// The commands a prompt may be (`available_commands_update`).
const COMMANDS: &[(&str, &str)] = &[
    (
        "undo",
        "Put the workspace back as it was before the last run that changed it",
    ),
    (
        "compact",
        "Make the conversation smaller now (old outputs cut, older turns summarized)",
    ),
    (
        "reset",
        "Start a new conversation: forget the history and restart the kernels",
    ),
    (
        "tokens",
        "Show the context used, the tokens spent and the cost",
    ),
];

pub(crate) fn find(sessions: &Sessions, id: &SessionId) -> Result<Arc<AcpSession>, Error> {
    sessions
        .lock()
        .ok()
        .and_then(|s| s.get(id.0.as_ref()).cloned())
        .ok_or_else(|| {
            Error::invalid_params().data(json!({
                "sessionId": id.0.as_ref(),
                "message": format!("no session `{}`: create one with session/new, or load a recorded one with session/load", id.0),
            }))
        })
}

/// An error a person can read: the message, and how to fix it.
fn failure(message: impl Into<String>, hint: Option<String>) -> Error {
    let error = Error::new(-32603, message.into());
    match hint {
        Some(hint) => error.data(json!({ "hint": hint })),
        None => error,
    }
}

#[derive(Debug)]
pub(crate) struct AcpSession {
    pub(crate) id: String,
    ops: mpsc::UnboundedSender<Op>,
    /// The agent's events: held by the prompt under way.
    events: tokio::sync::Mutex<mpsc::UnboundedReceiver<Event>>,
    policy: Mutex<ApprovalPolicy>,
    /// The model asked now, and the models the configuration names.
    model: Mutex<String>,
    models: Vec<String>,
    context_window: Option<u32>,
    /// The conversation taken up again (`session/load`), to replay.
    resumed: Vec<Message>,
}

/// The kind of tool call a run of `language` is, for the editor's icons.
fn tool_kind(language: &str) -> ToolKind {
    match language {
        oi_protocol::EDIT_LANGUAGE => ToolKind::Edit,
        oi_protocol::MCP_LANGUAGE => ToolKind::Other,
        _ => ToolKind::Execute,
    }
}

/// The client's MCP servers as oi's settings (stdio and HTTP; SSE, which
/// oi does not speak, is left out with a note).
fn mcp_settings(servers: &[McpServer]) -> (Vec<oi_config::McpServerSettings>, Vec<String>) {
    use oi_config::{McpServerSettings, McpTransport};
    let mut settings = Vec::new();
    let mut notes = Vec::new();
    for server in servers {
        match server {
            McpServer::Stdio(s) => settings.push(McpServerSettings::new(
                &s.name,
                McpTransport::Stdio {
                    command: s.command.display().to_string(),
                    args: s.args.clone(),
                    env: s.env.iter().map(|v| (v.name.clone(), v.value.clone())).collect(),
                    env_vars: Vec::new(),
                    cwd: None,
                },
            )),
            McpServer::Http(s) => settings.push(McpServerSettings::new(
                &s.name,
                McpTransport::Http {
                    url: s.url.clone(),
                    bearer_token_env_var: None,
                    http_headers: s
                        .headers
                        .iter()
                        .map(|h| (h.name.clone(), h.value.clone()))
                        .collect(),
                    env_http_headers: std::collections::BTreeMap::new(),
                },
            )),
            McpServer::Sse(s) => notes.push(format!(
                "MCP server `{}` was not started: oi speaks MCP over stdio and streamable HTTP, not the older SSE transport",
                s.name
            )),
            _ => notes.push("an MCP server of a transport oi does not know was not started".to_owned()),
        }
    }
    (settings, notes)
}

impl AcpSession {
    /// Sets up an oi session in `cwd` (a recorded one when `resume` names
    /// it) and starts its agent; also returns what the user should know.
    pub(crate) async fn start(
        base: &SessionRequest,
        cwd: &Path,
        mcp_servers: &[McpServer],
        resume: Option<&str>,
    ) -> Result<(Arc<Self>, Vec<String>), Error> {
        if !cwd.is_absolute() || !cwd.is_dir() {
            return Err(Error::invalid_params().data(json!({
                "cwd": cwd.display().to_string(),
                "message": format!("`cwd` must be an absolute path of a folder on this machine, not {}", cwd.display()),
            })));
        }
        let mut request = base.clone();
        request.user_input = false;
        let (servers, mut skipped) = mcp_settings(mcp_servers);
        request.mcp_servers = servers;
        request.cwd = Some(cwd.to_path_buf());
        request.workspace = Some(Given::new(PathBuf::from(cwd), "`cwd` of the ACP session"));
        if !request.settings.iter().any(|s| s.key == "approval") {
            // A person answers in the editor, so by default only risky code
            // is asked about.
            request.defaults.push(oi_config::FlagSetting::new(
                "the ACP server's default (the editor asks about risky code)",
                "approval",
                "auto",
            ));
        }
        if let Some(id) = resume {
            request.resume = Some(Given::new(
                Resume::Id(id.to_owned()),
                "`sessionId` of session/load",
            ));
        }
        let setup = tokio::task::spawn_blocking(move || oi_core::setup(&request))
            .await
            .map_err(Error::into_internal_error)?
            .map_err(|e| failure(e.to_string(), e.hint()))?;
        let mut notes: Vec<String> = setup.notices.iter().map(ToString::to_string).collect();
        notes.append(&mut skipped);
        let id = setup.session_id.clone();
        let policy = setup.config.approval;
        let model = setup.config.model.clone();
        let mut models: Vec<String> = setup.loaded.config.models.keys().cloned().collect();
        if !models.contains(&model) {
            models.insert(0, model.clone());
        }
        let context_window = setup.config.context_window;
        let resumed = setup
            .resumed
            .as_ref()
            .map(|r| r.messages.clone())
            .unwrap_or_default();
        let (ops, mut events) = setup.spawn();
        match events.recv().await {
            Some(Event::SessionConfigured { .. }) => {}
            _ => return Err(failure("the session did not start", None)),
        }
        Ok((
            Arc::new(Self {
                id,
                ops,
                events: tokio::sync::Mutex::new(events),
                policy: Mutex::new(policy),
                model: Mutex::new(model),
                models,
                context_window,
                resumed,
            }),
            notes,
        ))
    }

    fn update(&self, cx: &ConnectionTo<Client>, update: SessionUpdate) -> Result<(), Error> {
        cx.send_notification(SessionNotification::new(self.id.clone(), update))
    }

    fn text(&self, cx: &ConnectionTo<Client>, text: impl Into<String>) -> Result<(), Error> {
        self.update(
            cx,
            SessionUpdate::AgentMessageChunk(ContentChunk::new(ContentBlock::Text(
                TextContent::new(text),
            ))),
        )
    }

    pub(crate) fn mode_state(&self) -> SessionModeState {
        SessionModeState::new(self.mode(), modes())
    }

    fn mode(&self) -> &'static str {
        match self.policy.lock().map(|p| *p) {
            Ok(ApprovalPolicy::Ask) => "ask",
            _ => "auto",
        }
    }

    /// Tells the client the commands it may offer, and the notices.
    pub(crate) fn announce(
        &self,
        cx: &ConnectionTo<Client>,
        notes: &[String],
    ) -> Result<(), Error> {
        self.update(
            cx,
            SessionUpdate::AvailableCommandsUpdate(AvailableCommandsUpdate::new(
                COMMANDS
                    .iter()
                    .map(|(name, description)| AvailableCommand::new(*name, *description))
                    .collect(),
            )),
        )?;
        for note in notes {
            self.update(
                cx,
                SessionUpdate::AgentThoughtChunk(ContentChunk::new(ContentBlock::Text(
                    TextContent::new(format!("{note}\n")),
                ))),
            )?;
        }
        Ok(())
    }

    /// Replays the conversation taken up again.
    pub(crate) fn replay(&self, cx: &ConnectionTo<Client>) -> Result<(), Error> {
        for message in &self.resumed {
            match message {
                Message::User { content } => {
                    for text in content.iter().filter_map(ContentPart::as_text) {
                        self.update(
                            cx,
                            SessionUpdate::UserMessageChunk(ContentChunk::new(ContentBlock::Text(
                                TextContent::new(text),
                            ))),
                        )?;
                    }
                }
                Message::Assistant { text, .. } if !text.is_empty() => {
                    self.text(cx, text.clone())?
                }
                _ => {}
            }
        }
        Ok(())
    }

    pub(crate) fn set_mode(&self, mode: &str) -> Result<(), Error> {
        let policy = match mode {
            "ask" => ApprovalPolicy::Ask,
            "auto" => ApprovalPolicy::Auto,
            other => {
                return Err(Error::invalid_params().data(json!({
                    "modeId": other,
                    "message": format!("unknown mode `{other}`: `ask` or `auto`"),
                })));
            }
        };
        if let Ok(mut p) = self.policy.lock() {
            *p = policy;
        }
        let _ = self.ops.send(Op::SetApproval { policy });
        Ok(())
    }

    pub(crate) fn mode_changed(&self, cx: &ConnectionTo<Client>) -> Result<(), Error> {
        self.update(
            cx,
            SessionUpdate::CurrentModeUpdate(CurrentModeUpdate::new(self.mode())),
        )
    }

    /// The session's settings a client can change: the model.
    pub(crate) fn config_options(&self) -> Vec<SessionConfigOption> {
        let current = self.model.lock().map(|m| m.clone()).unwrap_or_default();
        let options: Vec<SessionConfigSelectOption> = self
            .models
            .iter()
            .map(|m| SessionConfigSelectOption::new(m.clone(), m.clone()))
            .collect();
        vec![
            SessionConfigOption::select("model", "Model", current, options)
                .category(SessionConfigOptionCategory::Model)
                .description("The model oi asks (from the next request on; the same provider)"),
        ]
    }

    /// `session/set_config_option`: `model` takes any model id of the
    /// session's provider.
    pub(crate) fn set_option(
        &self,
        id: &str,
        value: &SessionConfigOptionValue,
    ) -> Result<(), Error> {
        let Some(model) = value.as_value_id().filter(|_| id == "model") else {
            return Err(Error::invalid_params().data(json!({
                "configId": id,
                "message": format!("unknown setting `{id}`: oi's session has `model` (a model id)"),
            })));
        };
        let model = model.0.to_string();
        if let Ok(mut current) = self.model.lock() {
            current.clone_from(&model);
        }
        let _ = self.ops.send(Op::SetModel { model });
        Ok(())
    }

    pub(crate) fn cancel(&self) {
        let _ = self.ops.send(Op::Interrupt);
    }

    pub(crate) async fn shut_down(&self) {
        let _ = self.ops.send(Op::Shutdown);
        let mut events = self.events.lock().await;
        let _ = tokio::time::timeout(Duration::from_secs(5), async {
            while let Some(event) = events.recv().await {
                if matches!(event, Event::ShutdownComplete) {
                    break;
                }
            }
        })
        .await;
    }

    /// Runs one prompt to its end.
    pub(crate) async fn prompt(
        &self,
        cx: &ConnectionTo<Client>,
        prompt: Vec<ContentBlock>,
    ) -> Result<PromptResponse, Error> {
        let Ok(mut events) = self.events.try_lock() else {
            return Err(Error::invalid_request().data(json!({
                "message": "a prompt is already running in this session: wait for it, or send session/cancel",
            })));
        };
        // What happened between prompts needs no answer now.
        while events.try_recv().is_ok() {}
        let (text, images) = read_prompt(&prompt)?;
        if let Some(command) = text.trim().strip_prefix('/') {
            return self.command(cx, &mut events, command.trim()).await;
        }
        let _ = self.ops.send(Op::UserInput { text, images });
        let mut turn = Turn::default();
        while let Some(event) = events.recv().await {
            if let Some(done) = self.event(cx, &mut turn, event).await? {
                return done;
            }
        }
        Err(failure("the session ended during the prompt", None))
    }

    /// A prompt that is one of [`COMMANDS`].
    async fn command(
        &self,
        cx: &ConnectionTo<Client>,
        events: &mut mpsc::UnboundedReceiver<Event>,
        command: &str,
    ) -> Result<PromptResponse, Error> {
        let op = match command {
            "undo" => Op::Undo,
            "compact" => Op::Compact,
            "reset" => Op::Reset,
            "tokens" => Op::Stats,
            other => {
                return Err(Error::invalid_params().data(json!({
                    "message": format!(
                        "unknown command `/{other}`: {}",
                        COMMANDS.iter().map(|(n, _)| format!("/{n}")).collect::<Vec<_>>().join(", ")
                    ),
                })));
            }
        };
        let _ = self.ops.send(op);
        while let Some(event) = events.recv().await {
            let said = match event {
                Event::Undone {
                    message, changes, ..
                } => format!(
                    "Restored the workspace to its state {message}{}.",
                    if changes.is_empty() {
                        String::new()
                    } else {
                        format!(" ({} files changed back)", changes.len())
                    }
                ),
                Event::Compacted {
                    before_tokens,
                    after_tokens,
                    ..
                } => {
                    format!(
                        "The conversation was made smaller: about {before_tokens} → {after_tokens} tokens."
                    )
                }
                Event::SessionReset => {
                    "A new conversation: the history is forgotten and the kernels restart."
                        .to_owned()
                }
                Event::Stats {
                    context_tokens,
                    context_window,
                    total,
                    cost_usd,
                    ..
                } => format!(
                    "Context: about {context_tokens} tokens{}. Spent: {} input and {} output tokens{}.",
                    context_window
                        .map(|w| format!(" of {w}"))
                        .unwrap_or_default(),
                    total.input_tokens,
                    total.output_tokens,
                    cost_usd.map(|c| format!(", ${c:.4}")).unwrap_or_default()
                ),
                Event::Error { message, hint } => return Err(failure(message, hint)),
                _ => continue,
            };
            self.text(cx, said)?;
            return Ok(PromptResponse::new(AcpStop::EndTurn));
        }
        Err(failure("the session ended during the command", None))
    }

    /// Maps one event; `Some` when the prompt is over.
    async fn event(
        &self,
        cx: &ConnectionTo<Client>,
        turn: &mut Turn,
        event: Event,
    ) -> Result<Option<Result<PromptResponse, Error>>, Error> {
        match event {
            Event::TextDelta { delta } => self.text(cx, delta)?,
            Event::ReasoningDelta { delta } => self.update(
                cx,
                SessionUpdate::AgentThoughtChunk(ContentChunk::new(ContentBlock::Text(
                    TextContent::new(delta),
                ))),
            )?,
            Event::CodeProposed { id, language, code } => {
                let run = Run::new(language, code);
                self.update(
                    cx,
                    SessionUpdate::ToolCall(
                        ToolCall::new(tool_call_id(id), run.title())
                            .kind(tool_kind(&run.language))
                            .status(ToolCallStatus::Pending)
                            .content(run.content(None))
                            .raw_input(json!({ "language": run.language, "code": run.code })),
                    ),
                )?;
                turn.runs.insert(id, run);
            }
            Event::ApprovalRequested { id, risks, .. } => {
                let decision = self.ask(cx, id, turn.runs.get(&id), &risks).await;
                let _ = self.ops.send(Op::Approve { id, decision });
            }
            Event::RunStarted { id, code, .. } => {
                if let Some(run) = turn.runs.get_mut(&id) {
                    run.code = code;
                    run.sent = Instant::now();
                    self.update(
                        cx,
                        SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                            tool_call_id(id),
                            ToolCallUpdateFields::new()
                                .status(ToolCallStatus::InProgress)
                                .content(run.content(None)),
                        )),
                    )?;
                }
            }
            Event::OutputDelta { id, text, .. } => {
                if let Some(run) = turn.runs.get_mut(&id) {
                    run.output.push(&text);
                    if run.sent.elapsed() >= OUTPUT_UPDATES {
                        run.sent = Instant::now();
                        self.update(
                            cx,
                            SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                                tool_call_id(id),
                                ToolCallUpdateFields::new().content(run.content(None)),
                            )),
                        )?;
                    }
                }
            }
            Event::SandboxDenied { id, message, hint } => {
                if let Some(run) = turn.runs.get_mut(&id) {
                    run.output.push(&format!("\n{message}\nhint: {hint}\n"));
                }
            }
            Event::RunFinished {
                id,
                status,
                duration_ms,
                ..
            } => {
                if let Some(run) = turn.runs.remove(&id) {
                    let (exit, ok) = exit_code(&status);
                    let note = match &status {
                        RunStatus::Crashed { reason } => Some(format!("the kernel died: {reason}")),
                        RunStatus::TimedOut { seconds, .. } => {
                            Some(format!("stopped after {seconds} s"))
                        }
                        RunStatus::WaitingForInput { prompt } => {
                            Some(format!("stopped: it waited for input ({prompt})"))
                        }
                        _ => None,
                    };
                    self.update(
                        cx,
                        SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                            tool_call_id(id),
                            ToolCallUpdateFields::new()
                                .status(if ok {
                                    ToolCallStatus::Completed
                                } else {
                                    ToolCallStatus::Failed
                                })
                                .content(run.content(note.as_deref()))
                                .raw_output(json!({
                                    "exit_code": exit,
                                    "duration_ms": duration_ms,
                                    "output": run.output.text(),
                                })),
                        )),
                    )?;
                }
            }
            Event::RunSkipped { id, reason } => {
                if let Some(run) = turn.runs.remove(&id) {
                    let note = match reason {
                        SkipReason::Declined => "not run: declined".to_owned(),
                        SkipReason::NoApprover => "not run: it needed approval".to_owned(),
                        SkipReason::Unavailable { message } => format!("not run: {message}"),
                    };
                    self.update(
                        cx,
                        SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                            tool_call_id(id),
                            ToolCallUpdateFields::new()
                                .status(ToolCallStatus::Failed)
                                .content(run.content(Some(&note))),
                        )),
                    )?;
                }
            }
            Event::Usage { last, .. } => {
                if let Some(size) = self.context_window {
                    self.update(
                        cx,
                        SessionUpdate::UsageUpdate(UsageUpdate::new(
                            last.input_tokens + last.output_tokens,
                            u64::from(size),
                        )),
                    )?;
                }
            }
            Event::Error { message, hint } => turn.error = Some((message, hint)),
            Event::TaskComplete { reason, .. } => {
                return Ok(Some(match reason {
                    StopReason::Done => Ok(PromptResponse::new(AcpStop::EndTurn)),
                    StopReason::Interrupted | StopReason::FailSafe => {
                        Ok(PromptResponse::new(AcpStop::Cancelled))
                    }
                    StopReason::MaxTurns { .. } => {
                        Ok(PromptResponse::new(AcpStop::MaxTurnRequests))
                    }
                    other => {
                        let (message, hint) = turn.error.take().unwrap_or_else(|| {
                            (
                                stop_message(&other)
                                    .unwrap_or_else(|| "the prompt failed".to_owned()),
                                None,
                            )
                        });
                        Err(failure(message, hint))
                    }
                }));
            }
            _ => {}
        }
        Ok(None)
    }

    /// Asks the client whether run `id` may run.
    async fn ask(
        &self,
        cx: &ConnectionTo<Client>,
        id: RunId,
        run: Option<&Run>,
        risks: &[String],
    ) -> ReviewDecision {
        let mut fields = ToolCallUpdateFields::new().status(ToolCallStatus::Pending);
        if let Some(run) = run {
            let note = (!risks.is_empty()).then(|| format!("risky: {}", risks.join("; ")));
            fields = fields
                .title(run.title())
                .kind(tool_kind(&run.language))
                .content(run.content(note.as_deref()));
        }
        let options = vec![
            PermissionOption::new("allow_once", "Run", PermissionOptionKind::AllowOnce),
            PermissionOption::new(
                "allow_always",
                "Run, and don't ask again this session",
                PermissionOptionKind::AllowAlways,
            ),
            PermissionOption::new("reject_once", "Don't run", PermissionOptionKind::RejectOnce),
            PermissionOption::new(
                "reject_always",
                "Don't run, and ask before every run",
                PermissionOptionKind::RejectAlways,
            ),
        ];
        let answer = cx
            .send_request(RequestPermissionRequest::new(
                self.id.clone(),
                ToolCallUpdate::new(tool_call_id(id), fields),
                options,
            ))
            .block_task()
            .await;
        match answer.map(|a| a.outcome) {
            Ok(RequestPermissionOutcome::Selected(selected)) => match selected.option_id.0.as_ref()
            {
                "allow_once" => ReviewDecision::Approve,
                "allow_always" => ReviewDecision::ApproveForSession,
                "reject_always" => {
                    let _ = self.set_mode("ask");
                    let _ = self.mode_changed(cx);
                    ReviewDecision::Decline
                }
                _ => ReviewDecision::Decline,
            },
            Ok(_) => {
                // Cancelled: the prompt is being cancelled too.
                self.cancel();
                ReviewDecision::Decline
            }
            // No answer: not run.
            Err(_) => ReviewDecision::Decline,
        }
    }
}

/// What one prompt keeps track of.
#[derive(Debug, Default)]
struct Turn {
    runs: HashMap<RunId, Run>,
    error: Option<(String, Option<String>)>,
}

/// A run of code as a tool call.
#[derive(Debug)]
struct Run {
    language: String,
    code: String,
    output: AggregatedOutput,
    sent: Instant,
}

impl Run {
    fn new(language: String, code: String) -> Self {
        Self {
            language,
            code,
            output: AggregatedOutput::default(),
            sent: Instant::now(),
        }
    }

    /// `python: print(6 * 7)`: the language and the code's first line.
    fn title(&self) -> String {
        let first = self
            .code
            .lines()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("")
            .trim();
        let mut first: String = first.chars().take(72).collect();
        if self.code.trim().lines().count() > 1 || first.len() < self.code.trim().len() {
            first.push_str(" …");
        }
        format!("{}: {first}", self.language)
    }

    /// The code, the output so far and a note, as the tool call shows them.
    fn content(&self, note: Option<&str>) -> Vec<ToolCallContent> {
        let fence =
            |lang: &str, text: &str| format!("```{lang}\n{}\n```", text.trim_end_matches('\n'));
        let mut blocks = vec![fence(&self.language, &self.code)];
        let output = self.output.text();
        if !output.is_empty() {
            blocks.push(fence("", &output));
        }
        blocks.extend(note.map(str::to_owned));
        blocks
            .into_iter()
            .map(|text| ToolCallContent::from(ContentBlock::Text(TextContent::new(text))))
            .collect()
    }
}

fn tool_call_id(id: RunId) -> String {
    format!("run-{id}")
}

/// The words of a prompt, and its images written to files.
fn read_prompt(prompt: &[ContentBlock]) -> Result<(String, Vec<String>), Error> {
    let mut text = Vec::new();
    let mut images = Vec::new();
    for block in prompt {
        match block {
            ContentBlock::Text(t) => text.push(t.text.clone()),
            ContentBlock::Image(image) => {
                // An image type oi does not know is sent on as PNG.
                let media_type =
                    if oi_core::attachments::image_extension(&image.mime_type).is_some() {
                        image.mime_type.as_str()
                    } else {
                        "image/png"
                    };
                let file = oi_core::attachments::save_base64_image(&image.data, media_type)
                    .map_err(|e| {
                        Error::invalid_params().data(json!({ "message": e.to_string() }))
                    })?;
                images.push(file.display().to_string());
            }
            ContentBlock::ResourceLink(link) => {
                text.push(format!("[{}]({})", link.name, link.uri));
            }
            ContentBlock::Resource(resource) => match &resource.resource {
                EmbeddedResourceResource::TextResourceContents(t) => {
                    text.push(format!("{}:\n```\n{}\n```", t.uri, t.text));
                }
                _ => text.push("(an attached file oi cannot read: not text)".to_owned()),
            },
            _ => text.push("(an attachment oi cannot read: audio)".to_owned()),
        }
    }
    let text = text.join("\n\n");
    if text.trim().is_empty() && images.is_empty() {
        return Err(Error::invalid_params()
            .data(json!({ "message": "the prompt has no text and no image" })));
    }
    Ok((text, images))
}
