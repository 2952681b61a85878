//! The requests the server answers, and the loop that reads them.
//!
//! Requests are handled concurrently (a thread's set-up does not hold up
//! another thread's turn); every message out goes through one writer, in
//! order. A malformed line is answered with a JSON-RPC error and the server
//! keeps reading. When the client closes its end, every thread is shut
//! down (kernels stopped) before `serve` returns.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use oi_codex::structured::{OutputSchema, StructuredAnswer};
use oi_config::FlagSetting;
use oi_core::setup::{Given, Resume};
use oi_core::transcript::{self, Loaded as Recorded};
use oi_core::{SessionRequest, Setup};
use oi_protocol::{ApprovalPolicy, ContentPart, Event, Message, Op, SandboxMode};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWrite, AsyncWriteExt};
use tokio::task::JoinHandle;

use crate::protocol::{
    AskForApproval, InitializeResponse, SandboxPolicy, ServerInfo, ThreadListParams,
    ThreadReadParams, ThreadResumeParams, ThreadSession, ThreadStartParams, ThreadStatus, Turn,
    TurnInterruptParams, TurnStartParams, TurnStatus, UserInput,
};
use crate::rpc::{self, Incoming, Outgoing, RpcError, code};
use crate::thread::{ActiveTurn, Approvals, Mapper, ThreadHandle, ThreadInfo, now_ms};
use crate::{ThreadItem, images};

/// How long the threads get to stop their kernels when the client leaves.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// The server: what the command line gave (every thread's request starts
/// from it), the loaded threads, and the way out.
#[derive(Debug)]
struct Server {
    base: SessionRequest,
    out: Outgoing,
    initialized: AtomicBool,
    threads: Mutex<HashMap<String, ThreadHandle>>,
    /// The tasks following the threads' events (awaited at the end).
    followers: Mutex<Vec<JoinHandle<()>>>,
}

/// Serves the app-server protocol on `input` and `output` until the
/// client closes `input`. `base` is the session the command line asks for;
/// each thread starts from it, with what `thread/start` says on top.
pub async fn serve<R, W>(input: R, mut output: W, base: SessionRequest) -> std::io::Result<()>
where
    R: AsyncBufRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (out, mut lines) = Outgoing::new();
    let writer = tokio::spawn(async move {
        while let Some(message) = lines.recv().await {
            let mut line = message.to_string();
            line.push('\n');
            output.write_all(line.as_bytes()).await?;
            output.flush().await?;
        }
        std::io::Result::Ok(())
    });
    let server = Arc::new(Server {
        base,
        out: out.clone(),
        initialized: AtomicBool::new(false),
        threads: Mutex::default(),
        followers: Mutex::default(),
    });
    let mut input = input.lines();
    // Requests being answered: all of them finish before the threads are
    // shut down (a thread still being set up when stdin closes is shut
    // down too).
    let mut answering = tokio::task::JoinSet::new();
    let read = loop {
        while answering.try_join_next().is_some() {}
        let line = match input.next_line().await {
            Ok(Some(line)) => line,
            Ok(None) => break Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::InvalidData => {
                out.error(
                    Value::Null,
                    RpcError::new(code::PARSE_ERROR, "the line is not UTF-8 text"),
                );
                continue;
            }
            Err(e) => break Err(e),
        };
        if line.trim().is_empty() {
            continue;
        }
        match rpc::parse(&line) {
            Err(unreadable) => {
                let (id, error) = *unreadable;
                out.error(id, error);
            }
            Ok(Incoming::Response { id, result }) => {
                // An answer nobody waits for (a turn that already ended)
                // needs nothing more.
                out.resolve(&id, result);
            }
            Ok(Incoming::Notification { .. }) => {}
            Ok(Incoming::Request { id, method, params }) => {
                // The handshake is answered in order, before the next line
                // is read: a client may send its first requests right
                // behind `initialize` without waiting for the answer.
                if let Some(answer) = server.admit(&method) {
                    match answer {
                        Ok(result) => out.respond(id, result),
                        Err(error) => out.error(id, error),
                    }
                    continue;
                }
                let server = server.clone();
                answering.spawn(async move {
                    match server.handle(&id, &method, params).await {
                        Ok(Some(result)) => server.out.respond(id, result),
                        Ok(None) => {}
                        Err(error) => server.out.error(id, error),
                    }
                });
            }
        }
    };
    while answering.join_next().await.is_some() {}
    server.shut_down().await;
    drop(server);
    drop(out);
    // The writer ends when the last message is written; a thread that did
    // not stop in time must not keep the process alive.
    match tokio::time::timeout(SHUTDOWN_GRACE, writer).await {
        Ok(Ok(Err(e))) if e.kind() != std::io::ErrorKind::BrokenPipe => return Err(e),
        _ => {}
    }
    read
}

/// `params` read as `T`, or an invalid-params error naming what is wrong.
fn params<T: DeserializeOwned>(method: &str, params: Value) -> Result<T, RpcError> {
    let params = if params.is_null() { json!({}) } else { params };
    serde_json::from_value(params)
        .map_err(|e| RpcError::new(code::INVALID_PARAMS, format!("{method}: {e}")))
}

fn to_value(value: impl serde::Serialize) -> Result<Value, RpcError> {
    serde_json::to_value(value).map_err(|e| RpcError::internal(e.to_string()))
}

impl Server {
    /// Answers one request: `Some(result)`, or `None` when the handler has
    /// answered itself (to send notifications after its answer).
    async fn handle(
        self: &Arc<Self>,
        id: &Value,
        method: &str,
        raw: Value,
    ) -> Result<Option<Value>, RpcError> {
        let result = match method {
            "thread/start" | "thread/resume" => {
                let (session, after) = if method == "thread/start" {
                    self.start_thread(params(method, raw)?, None).await?
                } else {
                    self.resume_thread(params(method, raw)?).await?
                };
                // The thread's notifications come after the answer.
                self.out.respond(id.clone(), to_value(session)?);
                for (method, params) in after {
                    self.out.notify(method, params);
                }
                return Ok(None);
            }
            "thread/list" => self.list_threads(params(method, raw)?).await?,
            "thread/read" => self.read_thread(params(method, raw)?).await?,
            "turn/start" => {
                self.start_turn(id, params(method, raw)?)?;
                return Ok(None);
            }
            "turn/interrupt" => self.interrupt(params(method, raw)?)?,
            other => {
                return Err(RpcError::new(
                    code::METHOD_NOT_FOUND,
                    format!(
                        "unknown method `{other}`: oi's app-server answers initialize, thread/start, thread/resume, thread/list, thread/read, turn/start and turn/interrupt"
                    ),
                ));
            }
        };
        Ok(Some(result))
    }

    /// The handshake, checked as each request is read: the answer to
    /// `initialize`, or the error for a request before it; `None` for a
    /// request to handle.
    fn admit(&self, method: &str) -> Option<Result<Value, RpcError>> {
        if method == "initialize" {
            if self.initialized.swap(true, Ordering::SeqCst) {
                return Some(Err(RpcError::invalid_request(
                    "`initialize` was already sent",
                )));
            }
            return Some(to_value(self.initialize()));
        }
        if !self.initialized.load(Ordering::SeqCst) {
            return Some(Err(RpcError::invalid_request(format!(
                "{method}: not initialized: send `initialize` first"
            ))));
        }
        None
    }

    fn initialize(&self) -> InitializeResponse {
        let env: std::collections::BTreeMap<String, String> = std::env::vars().collect();
        let home = oi_config::home_dir(&env)
            .map(|h| h.display().to_string())
            .unwrap_or_default();
        let version = env!("CARGO_PKG_VERSION");
        InitializeResponse {
            user_agent: format!("oi/{version}"),
            codex_home: home,
            platform_family: std::env::consts::FAMILY.to_owned(),
            platform_os: std::env::consts::OS.to_owned(),
            server_info: ServerInfo {
                name: "oi".to_owned(),
                version: version.to_owned(),
            },
        }
    }

    fn thread(&self, id: &str) -> Result<ThreadHandle, RpcError> {
        self.threads
            .lock()
            .ok()
            .and_then(|threads| threads.get(id).cloned())
            .ok_or_else(|| {
                RpcError::invalid_params(
                    "threadId",
                    format!(
                        "no loaded thread `{id}`: start one with thread/start, or take a recorded one up with thread/resume"
                    ),
                )
            })
    }

    /// The session request for a thread: the command line's, with what
    /// the client asked for on top (each setting named by its field).
    fn request(
        &self,
        p: &ThreadStartParams,
        method: &str,
    ) -> Result<(SessionRequest, Approvals), RpcError> {
        let mut request = self.base.clone();
        request.user_input = false;
        request.ephemeral = p.ephemeral.unwrap_or(false);
        let from = |field: &str| format!("`{field}` of {method}");
        if let Some(cwd) = &p.cwd {
            let path = PathBuf::from(cwd);
            if !path.is_absolute() {
                return Err(RpcError::invalid_params(
                    "cwd",
                    format!("`cwd` must be an absolute path, not `{cwd}`"),
                ));
            }
            if !path.is_dir() {
                return Err(RpcError::invalid_params(
                    "cwd",
                    format!("`cwd` {cwd} is not a folder on this machine"),
                ));
            }
            request.cwd = Some(path.clone());
            request.workspace = Some(Given::new(path, from("cwd")));
        }
        let mut set = |field: &str, key: &str, value: &str| {
            request
                .settings
                .push(FlagSetting::new(&from(field), key, value));
        };
        if let Some(model) = &p.model {
            set("model", "model", model);
        }
        if let Some(provider) = &p.model_provider {
            set("modelProvider", "model_provider", provider);
        }
        if let Some(sandbox) = &p.sandbox {
            let mode: SandboxMode = sandbox.parse().map_err(|e: oi_protocol::UnknownWord| {
                RpcError::invalid_params("sandbox", e.to_string())
            })?;
            set("sandbox", "sandbox", mode.as_str());
        }
        let instructions: Vec<&str> = [&p.base_instructions, &p.developer_instructions]
            .into_iter()
            .flatten()
            .map(String::as_str)
            .filter(|s| !s.trim().is_empty())
            .collect();
        if !instructions.is_empty() {
            set(
                "developerInstructions",
                "custom_instructions",
                &instructions.join("\n\n"),
            );
        }
        let mut approvals = Approvals::AskClient;
        if let Some(policy) = &p.approval_policy {
            let word = codex_approval(policy)
                .map_err(|e| RpcError::invalid_params("approvalPolicy", e))?;
            if word == "never" {
                approvals = Approvals::Never;
            }
            request
                .overrides
                .push(format!("approval_policy=\"{word}\""));
        } else if !request.settings.iter().any(|s| s.key == "approval") {
            // The client answers approvals, so by default it is asked only
            // about risky code, as Codex asks on request.
            request.defaults.push(FlagSetting::new(
                "the app-server's default (its client is asked about risky code)",
                "approval",
                "auto",
            ));
        }
        for (key, value) in p.config.iter().flatten() {
            // JSON's text of a string, number, boolean or array of them is
            // also TOML's.
            request.overrides.push(format!("{key}={value}"));
        }
        Ok((request, approvals))
    }

    async fn resume_thread(self: &Arc<Self>, p: ThreadResumeParams) -> Result<Started, RpcError> {
        if let Ok(thread) = self.thread(&p.thread_id) {
            // Loaded already: the same thread, as it stands.
            let shared = thread.lock();
            let info = shared.info.clone();
            let status = shared.status();
            drop(shared);
            let turns = if p.exclude_turns {
                Vec::new()
            } else {
                recorded_turns(info.path.as_deref())
            };
            return Ok((session(&info, info.thread(status, turns)), Vec::new()));
        }
        self.start_thread(p.start, Some(p.thread_id)).await
    }

    async fn start_thread(
        self: &Arc<Self>,
        p: ThreadStartParams,
        resume: Option<String>,
    ) -> Result<Started, RpcError> {
        let method = if resume.is_some() {
            "thread/resume"
        } else {
            "thread/start"
        };
        let (mut request, approvals) = self.request(&p, method)?;
        if let Some(id) = &resume {
            request.resume = Some(Given::new(
                Resume::Id(id.clone()),
                "`threadId` of thread/resume",
            ));
        }
        let setup = tokio::task::spawn_blocking(move || oi_core::setup(&request))
            .await
            .map_err(|e| RpcError::internal(e.to_string()))?
            .map_err(|e| RpcError {
                code: code::INVALID_REQUEST,
                message: format!("{method}: {e}"),
                data: e.hint().map(|hint| json!({ "hint": hint })),
            })?;
        let Setup {
            session_id,
            loaded,
            sandbox,
            notices,
            resumed,
            ..
        } = &setup;
        let now = now_ms() / 1000;
        let approval = match &p.approval_policy {
            Some(policy) => policy.clone(),
            None => AskForApproval::Word(
                match loaded.config.approval {
                    ApprovalPolicy::Ask => "untrusted",
                    ApprovalPolicy::Auto => "on-request",
                    ApprovalPolicy::Never => "never",
                }
                .to_owned(),
            ),
        };
        let mut info = ThreadInfo {
            id: session_id.clone(),
            model: setup.config.model.clone(),
            model_provider: loaded.config.model_provider.clone(),
            cwd: sandbox.workspace.display().to_string(),
            approval,
            sandbox: sandbox_policy(sandbox),
            created_at: now,
            updated_at: now,
            preview: String::new(),
            path: setup
                .config
                .transcript
                .as_ref()
                .map(|t| t.path.display().to_string()),
            ephemeral: setup.config.transcript.is_none(),
        };
        let mut turns = Vec::new();
        if let Some(r) = resumed {
            info.created_at = oi_core::parse_rfc3339(&r.header.started).map_or(now, |s| s as i64);
            info.preview = r.first_prompt.clone().unwrap_or_default();
            turns = turns_of(&r.messages);
        }
        let warnings: Vec<String> = notices.iter().map(ToString::to_string).collect();
        let (ops, mut events) = setup.spawn();
        // The first event says the agent is ready.
        match events.recv().await {
            Some(Event::SessionConfigured { .. }) => {}
            _ => return Err(RpcError::internal("the session did not start")),
        }
        let handle = ThreadHandle::new(ops, info.clone(), approvals);
        if let Ok(mut threads) = self.threads.lock() {
            threads.insert(info.id.clone(), handle.clone());
        }
        let follower = tokio::spawn(Mapper::new(handle, self.out.clone()).run(events));
        if let Ok(mut followers) = self.followers.lock() {
            followers.push(follower);
        }
        let mut after = vec![(
            "thread/started",
            json!({ "thread": info.thread(ThreadStatus::Idle, Vec::new()) }),
        )];
        after.extend(warnings.into_iter().map(|message| {
            (
                "warning",
                json!({ "threadId": info.id, "message": message }),
            )
        }));
        Ok((
            session(&info, info.thread(ThreadStatus::Idle, turns)),
            after,
        ))
    }

    async fn list_threads(&self, p: ThreadListParams) -> Result<Value, RpcError> {
        let offset = match &p.cursor {
            Some(cursor) => cursor.parse::<usize>().map_err(|_| {
                RpcError::invalid_params(
                    "cursor",
                    format!("`cursor` {cursor:?} is not one this server gave"),
                )
            })?,
            None => 0,
        };
        let limit = p.limit.unwrap_or(25).clamp(1, 200) as usize;
        let recorded = self.recorded().await?;
        let loaded: HashMap<String, ThreadStatus> = self
            .threads
            .lock()
            .map(|t| {
                t.iter()
                    .map(|(id, h)| (id.clone(), h.lock().status()))
                    .collect()
            })
            .unwrap_or_default();
        let cwds: Option<Vec<String>> = p.cwd.map(|c| match c {
            crate::protocol::CwdFilter::One(one) => vec![one],
            crate::protocol::CwdFilter::Many(many) => many,
        });
        let search = p.search_term.map(|s| s.to_lowercase());
        let matching: Vec<&Recorded> = recorded
            .iter()
            .filter(|_| p.archived != Some(true))
            .filter(|r| cwds.as_ref().is_none_or(|c| c.contains(&r.header.cwd)))
            .filter(|r| {
                p.model_providers
                    .as_ref()
                    .is_none_or(|m| m.is_empty() || m.contains(&r.header.provider))
            })
            .filter(|r| {
                search.as_ref().is_none_or(|s| {
                    r.first_prompt
                        .as_deref()
                        .is_some_and(|f| f.to_lowercase().contains(s))
                })
            })
            .collect();
        let data: Vec<_> = matching
            .iter()
            .skip(offset)
            .take(limit)
            .map(|r| {
                let status = loaded
                    .get(&r.header.id)
                    .cloned()
                    .unwrap_or(ThreadStatus::NotLoaded);
                recorded_info(r).thread(status, Vec::new())
            })
            .collect();
        let next = (matching.len() > offset + limit).then(|| (offset + limit).to_string());
        Ok(json!({ "data": data, "nextCursor": next }))
    }

    async fn read_thread(&self, p: ThreadReadParams) -> Result<Value, RpcError> {
        if let Ok(thread) = self.thread(&p.thread_id) {
            let shared = thread.lock();
            let info = shared.info.clone();
            let status = shared.status();
            drop(shared);
            let turns = if p.include_turns {
                recorded_turns(info.path.as_deref())
            } else {
                Vec::new()
            };
            return Ok(json!({ "thread": info.thread(status, turns) }));
        }
        let recorded = self.recorded().await?;
        let r = recorded
            .iter()
            .find(|r| r.header.id == p.thread_id)
            .ok_or_else(|| {
                RpcError::invalid_params(
                    "threadId",
                    format!(
                        "no recorded thread `{}` (thread/list lists them)",
                        p.thread_id
                    ),
                )
            })?;
        let turns = if p.include_turns {
            turns_of(&r.messages)
        } else {
            Vec::new()
        };
        Ok(json!({ "thread": recorded_info(r).thread(ThreadStatus::NotLoaded, turns) }))
    }

    /// The recorded sessions, most recent first.
    async fn recorded(&self) -> Result<Vec<Recorded>, RpcError> {
        let base = self.base.clone();
        tokio::task::spawn_blocking(move || {
            let loaded = oi_core::setup::load_config(&base)?;
            Ok::<_, oi_core::SetupError>(transcript::list(&loaded.home.join("sessions")))
        })
        .await
        .map_err(|e| RpcError::internal(e.to_string()))?
        .map_err(|e| RpcError::internal(e.to_string()))
    }

    /// `turn/start`: answered here, then `turn/started` and the user's
    /// message follow, and only then does the agent get the input (so no
    /// item of the turn can come before its start).
    fn start_turn(&self, id: &Value, p: TurnStartParams) -> Result<(), RpcError> {
        let thread = self.thread(&p.thread_id)?;
        let (text, image_paths) = images::read_input(&p.input)?;
        let schema = match &p.output_schema {
            Some(Value::Null) | None => None,
            Some(schema) => Some(StructuredAnswer::new(
                OutputSchema::new(schema.clone()).map_err(|e| {
                    RpcError::invalid_params(
                        "outputSchema",
                        format!("`outputSchema` is not a usable JSON Schema: {e}"),
                    )
                })?,
            )),
        };
        let mut shared = thread.lock();
        if let Some(turn) = &shared.turn {
            return Err(RpcError::invalid_request(format!(
                "a turn is already running on thread {}: {}; wait for its turn/completed, or send turn/interrupt",
                p.thread_id, turn.id
            )));
        }
        if let Some(cwd) = &p.cwd
            && *cwd != shared.info.cwd
        {
            return Err(RpcError::invalid_params(
                "cwd",
                format!(
                    "a thread works in the folder it started in ({}); start a new thread for {cwd}",
                    shared.info.cwd
                ),
            ));
        }
        if let Some(policy) = &p.sandbox_policy
            && sandbox_mode(policy) != sandbox_mode(&shared.info.sandbox)
        {
            return Err(RpcError::invalid_params(
                "sandboxPolicy",
                "a thread's sandbox is set when it starts; start a new thread with the `sandbox` you want",
            ));
        }
        if let Some(model) = &p.model
            && *model != shared.info.model
        {
            let _ = thread.ops.send(Op::SetModel {
                model: model.clone(),
            });
            shared.info.model = model.clone();
        }
        if let Some(policy) = &p.approval_policy {
            let word = codex_approval(policy)
                .map_err(|e| RpcError::invalid_params("approvalPolicy", e))?;
            let oi = if word == "untrusted" {
                ApprovalPolicy::Ask
            } else {
                ApprovalPolicy::Auto
            };
            let _ = thread.ops.send(Op::SetApproval { policy: oi });
            shared.approvals = if word == "never" {
                Approvals::Never
            } else {
                Approvals::AskClient
            };
            shared.info.approval = policy.clone();
        }
        let turn_id = shared.turn_id();
        let started_ms = now_ms();
        let instructions = schema.as_ref().map(StructuredAnswer::instructions);
        shared.turn = Some(ActiveTurn {
            id: turn_id.clone(),
            started_ms,
            schema,
        });
        if shared.info.preview.is_empty() {
            shared.info.preview = text.clone();
        }
        let item_id = shared.item_id();
        let thread_id = shared.info.id.clone();
        drop(shared);

        let turn = Turn {
            id: turn_id.clone(),
            items: Vec::new(),
            items_view: "notLoaded",
            status: TurnStatus::InProgress,
            error: None,
            started_at: Some(started_ms / 1000),
            completed_at: None,
            duration_ms: None,
        };
        self.out.respond(id.clone(), json!({ "turn": turn }));
        self.out.notify(
            "turn/started",
            json!({ "threadId": thread_id, "turn": turn }),
        );
        let item = ThreadItem::UserMessage {
            id: item_id,
            content: p.input.clone(),
        };
        for (method, at) in [
            ("item/started", "startedAtMs"),
            ("item/completed", "completedAtMs"),
        ] {
            self.out.notify(
                method,
                json!({ "threadId": thread_id, "turnId": turn_id, "item": item, at: now_ms() }),
            );
        }
        let mut text = text;
        text.extend(instructions);
        let _ = thread.ops.send(Op::UserInput {
            text,
            images: image_paths,
        });
        Ok(())
    }

    fn interrupt(&self, p: TurnInterruptParams) -> Result<Value, RpcError> {
        let thread = self.thread(&p.thread_id)?;
        let running = thread.lock().turn.as_ref().map(|t| t.id.clone());
        if running.as_deref() != Some(p.turn_id.as_str()) {
            return Err(RpcError::invalid_params(
                "turnId",
                format!(
                    "turn {} is not running on thread {}",
                    p.turn_id, p.thread_id
                ),
            ));
        }
        let _ = thread.ops.send(Op::Interrupt);
        Ok(json!({}))
    }

    /// Every thread is asked to stop; their kernels are stopped before
    /// this returns (or the grace period ends).
    async fn shut_down(&self) {
        // Approvals nobody will answer now are noes.
        self.out.cancel_pending();
        let threads: Vec<ThreadHandle> = self
            .threads
            .lock()
            .map(|mut t| t.drain().map(|(_, h)| h).collect())
            .unwrap_or_default();
        for thread in &threads {
            let _ = thread.ops.send(Op::Shutdown);
        }
        drop(threads);
        let followers: Vec<JoinHandle<()>> = self
            .followers
            .lock()
            .map(|mut f| f.drain(..).collect())
            .unwrap_or_default();
        let _ = tokio::time::timeout(SHUTDOWN_GRACE, async {
            for follower in followers {
                let _ = follower.await;
            }
        })
        .await;
    }
}

/// A thread started: the answer, and the notifications to send after it.
type Started = (ThreadSession, Vec<(&'static str, Value)>);

/// The answer to `thread/start` and `thread/resume`.
fn session(info: &ThreadInfo, thread: crate::protocol::Thread) -> ThreadSession {
    ThreadSession {
        thread,
        model: info.model.clone(),
        model_provider: info.model_provider.clone(),
        cwd: info.cwd.clone(),
        approval_policy: info.approval.clone(),
        approvals_reviewer: "user",
        sandbox: info.sandbox.clone(),
        reasoning_effort: None,
        service_tier: None,
    }
}

/// Codex's approval word for `policy`; a granular policy is read as
/// `on-request` (oi asks about risky code, whatever the categories say).
fn codex_approval(policy: &AskForApproval) -> Result<&'static str, String> {
    match policy {
        AskForApproval::Word(word) => match word.as_str() {
            "untrusted" => Ok("untrusted"),
            "on-failure" => Ok("on-failure"),
            "on-request" => Ok("on-request"),
            "never" => Ok("never"),
            other => Err(format!(
                "unknown `approvalPolicy` {other:?}: one of untrusted, on-failure, on-request, never"
            )),
        },
        AskForApproval::Granular { .. } => Ok("on-request"),
    }
}

fn sandbox_policy(policy: &oi_sandbox::Policy) -> SandboxPolicy {
    match policy.mode {
        SandboxMode::ReadOnly => SandboxPolicy::ReadOnly {
            network_access: policy.network,
        },
        SandboxMode::WorkspaceWrite => SandboxPolicy::WorkspaceWrite {
            writable_roots: policy
                .writable_roots
                .iter()
                .map(|p| p.display().to_string())
                .collect(),
            network_access: policy.network,
        },
        SandboxMode::FullAccess => SandboxPolicy::DangerFullAccess,
        // Confined by the container engine, outside this process.
        SandboxMode::Container => SandboxPolicy::ExternalSandbox {
            network_access: Value::from(if policy.network {
                "enabled"
            } else {
                "restricted"
            }),
        },
    }
}

/// The mode a protocol sandbox policy names (an external sandbox counts
/// as full access: oi would add nothing).
fn sandbox_mode(policy: &SandboxPolicy) -> SandboxMode {
    match policy {
        SandboxPolicy::ReadOnly { .. } => SandboxMode::ReadOnly,
        SandboxPolicy::WorkspaceWrite { .. } => SandboxMode::WorkspaceWrite,
        SandboxPolicy::DangerFullAccess | SandboxPolicy::ExternalSandbox { .. } => {
            SandboxMode::FullAccess
        }
    }
}

/// What a `Thread` says of a recorded session.
fn recorded_info(r: &Recorded) -> ThreadInfo {
    let at = |text: &str| oi_core::parse_rfc3339(text).map_or(0, |s| s as i64);
    ThreadInfo {
        id: r.header.id.clone(),
        model: r.header.model.clone(),
        model_provider: r.header.provider.clone(),
        cwd: r.header.cwd.clone(),
        approval: AskForApproval::Word("on-request".to_owned()),
        sandbox: SandboxPolicy::WorkspaceWrite {
            writable_roots: Vec::new(),
            network_access: true,
        },
        created_at: at(&r.header.started),
        updated_at: at(&r.last_active),
        preview: r.first_prompt.clone().unwrap_or_default(),
        path: Some(r.path.display().to_string()),
        ephemeral: false,
    }
}

/// The turns of the recorded conversation at `path` (none when there is
/// no transcript, or it cannot be read).
fn recorded_turns(path: Option<&str>) -> Vec<Turn> {
    path.and_then(|p| transcript::read(std::path::Path::new(p)).ok())
        .map(|r| turns_of(&r.messages))
        .unwrap_or_default()
}

/// A conversation as turns: each message of the user starts one, with the
/// model's replies after it as agent messages.
fn turns_of(messages: &[Message]) -> Vec<Turn> {
    let mut turns: Vec<Turn> = Vec::new();
    let mut items = 0;
    let mut next_id = || {
        items += 1;
        format!("item_r{items}")
    };
    for message in messages {
        match message {
            Message::User { content } => {
                let text: Vec<&str> = content.iter().filter_map(ContentPart::as_text).collect();
                if text.is_empty() {
                    continue;
                }
                turns.push(Turn {
                    id: format!("turn_r{}", turns.len() + 1),
                    items: vec![ThreadItem::UserMessage {
                        id: next_id(),
                        content: vec![UserInput::Text {
                            text: text.join("\n"),
                        }],
                    }],
                    items_view: "full",
                    status: TurnStatus::Completed,
                    error: None,
                    started_at: None,
                    completed_at: None,
                    duration_ms: None,
                });
            }
            Message::Assistant { text, .. } if !text.trim().is_empty() => {
                if let Some(turn) = turns.last_mut() {
                    turn.items.push(ThreadItem::AgentMessage {
                        id: next_id(),
                        text: text.clone(),
                    });
                }
            }
            _ => {}
        }
    }
    turns
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_conversation_reads_as_turns_of_the_users_messages() {
        let messages = vec![
            Message::user("count the lines"),
            Message::Assistant {
                text: String::new(),
                tool_calls: Vec::new(),
                reasoning: Vec::new(),
            },
            Message::tool("call_1", "3"),
            Message::Assistant {
                text: "3 lines.".into(),
                tool_calls: Vec::new(),
                reasoning: Vec::new(),
            },
            Message::user("thanks"),
        ];
        let turns = turns_of(&messages);
        let shape: Vec<Vec<Value>> = turns
            .iter()
            .map(|t| {
                t.items
                    .iter()
                    .map(|i| serde_json::to_value(i).unwrap())
                    .collect()
            })
            .collect();
        assert_eq!(
            shape,
            vec![
                vec![
                    json!({"type": "userMessage", "id": "item_r1", "content": [{"type": "text", "text": "count the lines"}]}),
                    json!({"type": "agentMessage", "id": "item_r2", "text": "3 lines."}),
                ],
                vec![
                    json!({"type": "userMessage", "id": "item_r3", "content": [{"type": "text", "text": "thanks"}]})
                ],
            ]
        );
    }

    /// Regression: requests were handled concurrently from the first line
    /// on, so one sent right behind `initialize` was sometimes handled
    /// first and refused as "not initialized".
    #[test]
    fn a_request_right_behind_initialize_is_never_refused() {
        use tokio::io::AsyncReadExt;
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(4)
            .enable_all()
            .build()
            .unwrap();
        let input = concat!(
            r#"{"id": 1, "method": "initialize", "params": {"clientInfo": {"name": "t"}}}"#,
            "\n",
            r#"{"id": 2, "method": "turn/interrupt", "params": {"threadId": "x", "turnId": "y"}}"#,
            "\n",
        );
        for _ in 0..300 {
            let out = rt.block_on(async {
                let (writer, mut reader) = tokio::io::duplex(1 << 16);
                serve(input.as_bytes(), writer, SessionRequest::default())
                    .await
                    .unwrap();
                let mut out = String::new();
                reader.read_to_string(&mut out).await.unwrap();
                out
            });
            assert!(out.contains("no loaded thread `x`"), "{out}");
        }
    }

    #[test]
    fn approval_words_are_codexs_and_nothing_else() {
        let word = |w: &str| codex_approval(&AskForApproval::Word(w.into()));
        assert_eq!(word("never"), Ok("never"));
        assert_eq!(word("on-request"), Ok("on-request"));
        assert!(
            word("sometimes")
                .unwrap_err()
                .contains("untrusted, on-failure")
        );
        assert_eq!(
            codex_approval(&AskForApproval::Granular {
                granular: json!({})
            }),
            Ok("on-request")
        );
    }
}
