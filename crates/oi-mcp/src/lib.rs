//! oi over the Model Context Protocol.
//!
//! `interpreter mcp-server` serves MCP on stdin/stdout with two tools, so
//! that another agent or a desktop app can hand a task to oi on this
//! machine:
//!
//! - `interpreter` starts a session and runs a task in it to the end: the
//!   model writes code, oi runs it (sandboxed, risky code held), and the
//!   answer comes back with the runs it took and the session's id;
//! - `interpreter-reply` continues that session with the next message (its
//!   kernels, variables and conversation are still there).
//!
//! The caller cannot answer approvals, so code runs without asking unless
//! the configuration says otherwise; risky code is never run and the model
//! is told why. A cancelled call interrupts its task.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use oi_config::FlagSetting;
use oi_core::SessionRequest;
use oi_core::setup::Given;
use oi_protocol::{Event, Op, ReviewDecision, RunStatus, SkipReason, StopReason};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, Implementation, ServerCapabilities, ServerConfig};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler, ServiceExt, tool, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{Mutex, mpsc};

/// Why the server could not run.
#[derive(Debug, thiserror::Error)]
pub enum McpError {
    #[error("the MCP connection failed: {0}")]
    Connection(String),
}

/// The reason given for the approval default.
const APPROVAL_DEFAULT: &str = "the default of `interpreter mcp-server`, whose caller cannot answer approvals (risky code is still held)";

/// Output of one run kept for the caller, in characters (head and tail).
const RUN_OUTPUT_CHARS: usize = 2000;

/// The arguments of the `interpreter` tool.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunArgs {
    /// The task, in words: what oi should do on this machine.
    pub prompt: String,
    /// The folder to work in: an absolute path (default: where the server was started).
    #[serde(default)]
    pub cwd: Option<String>,
    /// The model (default: the configured one).
    #[serde(default)]
    pub model: Option<String>,
    /// How far code may reach: `read-only`, `workspace-write` or `full-access` (default: the configured sandbox).
    #[serde(default)]
    pub sandbox: Option<String>,
    /// More configuration for this session, as `interpreter -c KEY=VALUE` takes it, e.g. `{"max_turns": 10}`.
    #[serde(default)]
    pub config: Option<serde_json::Map<String, Value>>,
}

/// The arguments of the `interpreter-reply` tool.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ReplyArgs {
    /// The session to continue: the `sessionId` an `interpreter` call returned.
    pub session_id: String,
    /// The next message of the conversation.
    pub prompt: String,
}

/// One run of code, as the caller sees it.
#[derive(Debug, Clone, Serialize)]
struct Run {
    language: String,
    code: String,
    /// `ok`, `failed`, `interrupted`, `timed_out`, `crashed`,
    /// `waiting_for_input`, or `not_run`.
    status: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    exit_code: Option<i32>,
    output: String,
}

/// A live session: the agent's inputs and events.
#[derive(Debug)]
struct Session {
    ops: mpsc::UnboundedSender<Op>,
    events: mpsc::UnboundedReceiver<Event>,
}

/// The MCP server: one oi session per `interpreter` call, kept for replies.
#[derive(Debug, Clone)]
pub struct Server {
    base: Arc<SessionRequest>,
    sessions: Arc<Mutex<HashMap<String, Arc<Mutex<Session>>>>>,
    tool_router: ToolRouter<Self>,
}

/// Serves MCP on stdin/stdout until the caller closes it. `base` is what
/// the command line set (profile, `-c`, flags); each call may add to it.
pub async fn serve_stdio(base: SessionRequest) -> Result<(), McpError> {
    serve(base, tokio::io::stdin(), tokio::io::stdout()).await
}

/// Serves MCP on `input` and `output`, one JSON-RPC message per line. A
/// line that is not JSON is answered with a parse error (id `null`) and
/// the server goes on.
pub async fn serve<R, W>(base: SessionRequest, input: R, output: W) -> Result<(), McpError>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (to_server, server_in) = tokio::io::duplex(64 * 1024);
    let (server_out, from_server) = tokio::io::duplex(64 * 1024);
    let (errors_tx, errors_rx) = mpsc::unbounded_channel::<String>();
    let reader = tokio::spawn(filter_lines(input, to_server, errors_tx));
    let writer = tokio::spawn(merge_lines(from_server, errors_rx, output));
    let server = Server::new(base);
    let result = match server.serve((server_in, server_out)).await {
        Ok(running) => running
            .waiting()
            .await
            .map(|_| ())
            .map_err(|e| McpError::Connection(e.to_string())),
        Err(e) => Err(McpError::Connection(e.to_string())),
    };
    reader.abort();
    let _ = writer.await;
    result
}

/// Passes each line of `input` that is JSON on to the server; answers the
/// others with a parse error.
async fn filter_lines<R: AsyncRead + Unpin>(
    input: R,
    mut server: tokio::io::DuplexStream,
    errors: mpsc::UnboundedSender<String>,
) {
    let mut lines = BufReader::new(input).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        if line.trim().is_empty() {
            continue;
        }
        if let Err(error) = serde_json::from_str::<Value>(&line) {
            let reply = json!({
                "jsonrpc": "2.0",
                "id": null,
                "error": {
                    "code": -32700,
                    "message": format!("parse error: the line is not JSON ({error}); send one JSON-RPC message per line"),
                },
            });
            let _ = errors.send(reply.to_string());
            continue;
        }
        if server.write_all(line.as_bytes()).await.is_err()
            || server.write_all(b"\n").await.is_err()
        {
            return;
        }
    }
    // End of input: the server sees its input close and ends.
}

/// Writes the server's lines and the parse errors to `output`, whole lines
/// only, until the server's side closes.
async fn merge_lines<W: AsyncWrite + Unpin>(
    from_server: tokio::io::DuplexStream,
    mut errors: mpsc::UnboundedReceiver<String>,
    mut output: W,
) {
    let mut lines = BufReader::new(from_server).lines();
    loop {
        let line = tokio::select! {
            line = lines.next_line() => match line {
                Ok(Some(line)) => line,
                _ => break,
            },
            Some(error) = errors.recv() => error,
        };
        if output.write_all(line.as_bytes()).await.is_err()
            || output.write_all(b"\n").await.is_err()
            || output.flush().await.is_err()
        {
            break;
        }
    }
    let _ = output.flush().await;
}

fn invalid(field: &str, message: String) -> ErrorData {
    ErrorData::invalid_params(message, Some(json!({ "field": field })))
}

#[tool_router]
impl Server {
    pub fn new(mut base: SessionRequest) -> Self {
        if !base.settings.iter().any(|s| s.key == "approval") {
            base.defaults
                .push(FlagSetting::new(APPROVAL_DEFAULT, "approval", "auto"));
        }
        Self {
            base: Arc::new(base),
            sessions: Arc::default(),
            tool_router: Self::tool_router(),
        }
    }

    /// Runs a task on this machine with oi: the model writes code, oi runs
    /// it in a sandbox and shows the model the output, until the task is
    /// done. Returns the answer, the runs, and a sessionId for
    /// `interpreter-reply`.
    #[tool(
        name = "interpreter",
        description = "Run a task on this machine with Open Interpreter (oi): a model writes code (Python, shell, JavaScript and more), oi runs it in a sandbox in a persistent session and shows the model the output, until the task is done. Returns the answer, the code that ran with its output, and a sessionId to continue with `interpreter-reply`."
    )]
    async fn interpreter(
        &self,
        Parameters(args): Parameters<RunArgs>,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let request = self.request(&args)?;
        let setup = tokio::task::spawn_blocking(move || oi_core::setup(&request))
            .await
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        let setup = match setup {
            Ok(setup) => setup,
            Err(error) => {
                let mut text = error.to_string();
                if let Some(hint) = error.hint() {
                    text.push_str(&format!(" ({hint})"));
                }
                return Ok(CallToolResult::error(vec![ContentBlock::text(text)]));
            }
        };
        let id = setup.session_id.clone();
        let notices: Vec<String> = setup.notices.iter().map(ToString::to_string).collect();
        let (ops, events) = setup.spawn();
        let session = Arc::new(Mutex::new(Session { ops, events }));
        self.sessions
            .lock()
            .await
            .insert(id.clone(), Arc::clone(&session));
        let mut session = session.lock().await;
        Ok(run_task(&mut session, &id, args.prompt, notices, &context).await)
    }

    /// Continues a session with its next message.
    #[tool(
        name = "interpreter-reply",
        description = "Continue an Open Interpreter session started by the `interpreter` tool with the next message: its conversation, kernels and variables are still there. Returns the answer and the code that ran."
    )]
    async fn interpreter_reply(
        &self,
        Parameters(args): Parameters<ReplyArgs>,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let Some(session) = self.sessions.lock().await.get(&args.session_id).cloned() else {
            return Err(invalid(
                "sessionId",
                format!(
                    "no session `{}` in this server: use the sessionId an `interpreter` call returned (sessions last as long as the server)",
                    args.session_id
                ),
            ));
        };
        let Ok(mut session) = session.try_lock() else {
            return Err(invalid(
                "sessionId",
                format!(
                    "session `{}` is still working on a task: wait for that call to return, or cancel it",
                    args.session_id
                ),
            ));
        };
        Ok(run_task(
            &mut session,
            &args.session_id,
            args.prompt,
            Vec::new(),
            &context,
        )
        .await)
    }
}

impl Server {
    /// The session request for one `interpreter` call.
    fn request(&self, args: &RunArgs) -> Result<SessionRequest, ErrorData> {
        let mut request = (*self.base).clone();
        if let Some(cwd) = &args.cwd {
            let path = PathBuf::from(cwd);
            if !path.is_absolute() {
                return Err(invalid(
                    "cwd",
                    format!("`cwd` must be an absolute path, not `{cwd}`"),
                ));
            }
            if !path.is_dir() {
                return Err(invalid(
                    "cwd",
                    format!("`cwd` {cwd} is not a folder on this machine"),
                ));
            }
            request.cwd = Some(path.clone());
            request.workspace = Some(Given::new(path, "`cwd` of the interpreter tool"));
        }
        if let Some(model) = &args.model {
            request.settings.push(FlagSetting::new(
                "`model` of the interpreter tool",
                "model",
                model.as_str(),
            ));
        }
        if let Some(sandbox) = &args.sandbox {
            request.settings.push(FlagSetting::new(
                "`sandbox` of the interpreter tool",
                "sandbox",
                sandbox.as_str(),
            ));
        }
        for (key, value) in args.config.iter().flatten() {
            let value = match value {
                Value::String(text) => Value::String(text.clone()),
                other => other.clone(),
            };
            request.settings.push(FlagSetting::new(
                &format!("`config.{key}` of the interpreter tool"),
                key,
                value,
            ));
        }
        Ok(request)
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        let mut info = Implementation::new("oi", env!("CARGO_PKG_VERSION"));
        info.title = Some("Open Interpreter".to_owned());
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(info)
            .with_instructions(
                "`interpreter` runs a task on this machine (code written by a model, run by oi in a sandbox); `interpreter-reply` continues its session.",
            )
    }
}

/// What a step of the task is, for a caller that follows its progress.
fn progress_message(event: &Event) -> Option<String> {
    let first_line = |code: &str| {
        let line = code.lines().next().unwrap_or("").trim();
        let short: String = line.chars().take(80).collect();
        if short.len() < line.len() {
            format!("{short}…")
        } else {
            short
        }
    };
    Some(match event {
        Event::ModelRequest { turn } => format!("asking the model (turn {turn})"),
        Event::RunStarted { language, code, .. } => {
            format!("running {language}: {}", first_line(code))
        }
        Event::RunFinished { status, .. } => format!("finished: {}", status_of(status).0),
        _ => return None,
    })
}

/// Sends `prompt` to the session and gathers what happens until the task
/// ends; a cancelled call interrupts it.
async fn run_task(
    session: &mut Session,
    id: &str,
    prompt: String,
    notices: Vec<String>,
    context: &RequestContext<RoleServer>,
) -> CallToolResult {
    if session.ops.send(Op::input(prompt)).is_err() {
        return CallToolResult::error(vec![ContentBlock::text(format!(
            "session `{id}` has ended; start a new one with `interpreter`"
        ))]);
    }
    let mut runs: Vec<Run> = Vec::new();
    let mut errors: Vec<String> = Vec::new();
    let mut warnings: Vec<String> = notices;
    let mut interrupted = false;
    // A caller that asked for progress (`_meta.progressToken`) hears of
    // each step: the model asked, code run, code finished.
    let progress_token = context.meta.get_progress_token();
    let mut steps = 0.0;
    let progress = |steps: f64, message: String| {
        let peer = context.peer.clone();
        let token = progress_token.clone();
        async move {
            if let Some(token) = token {
                let _ = peer
                    .notify_progress(
                        rmcp::model::ProgressNotificationParam::new(token, steps)
                            .with_message(message),
                    )
                    .await;
            }
        }
    };
    let (reason, answer) = loop {
        let event = tokio::select! {
            event = session.events.recv() => event,
            () = context.ct.cancelled(), if !interrupted => {
                interrupted = true;
                let _ = session.ops.send(Op::Interrupt);
                continue;
            }
        };
        let Some(event) = event else {
            break (StopReason::Failed, None);
        };
        if let Some(message) = progress_message(&event) {
            steps += 1.0;
            progress(steps, message).await;
        }
        match event {
            Event::CodeProposed { language, code, .. } => runs.push(Run {
                language,
                code,
                status: "not_run".to_owned(),
                exit_code: None,
                output: String::new(),
            }),
            Event::RunStarted { code, .. } => {
                if let Some(run) = runs.last_mut() {
                    run.code = code;
                }
            }
            Event::ApprovalRequested { id, .. } => {
                let _ = session.ops.send(Op::Approve {
                    id,
                    decision: ReviewDecision::NoApprover,
                });
            }
            Event::OutputDelta { text, .. } => {
                if let Some(run) = runs.last_mut() {
                    run.output.push_str(&text);
                }
            }
            Event::RunFinished { status, .. } => {
                if let Some(run) = runs.last_mut() {
                    (run.status, run.exit_code) = status_of(&status);
                }
            }
            Event::RunSkipped { reason, .. } => {
                if let Some(run) = runs.last_mut() {
                    run.output = match reason {
                        SkipReason::Declined => "not run: declined".to_owned(),
                        SkipReason::NoApprover => "not run: it needs a person's approval (risky code, or `approval = \"ask\"`), and this caller cannot give it".to_owned(),
                        SkipReason::Unavailable { message } => format!("not run: {message}"),
                    };
                }
            }
            Event::Warning { message } => warnings.push(message),
            Event::Error { message, hint } => errors.push(match hint {
                Some(hint) => format!("{message} ({hint})"),
                None => message,
            }),
            Event::TaskComplete {
                reason,
                final_message,
            } => break (reason, final_message),
            Event::ShutdownComplete => break (StopReason::Failed, None),
            _ => {}
        }
    };
    for run in &mut runs {
        run.output = head_and_tail(&run.output, RUN_OUTPUT_CHARS);
    }
    let answer = answer.unwrap_or_default();
    let done = reason == StopReason::Done;
    let mut text = if answer.trim().is_empty() {
        stopped_text(&reason, &errors)
    } else {
        answer.trim().to_owned()
    };
    if !done && !answer.trim().is_empty() {
        text.push_str(&format!("\n\n({})", stopped_text(&reason, &errors)));
    }
    let structured = json!({
        "sessionId": id,
        "answer": answer,
        "stop": reason,
        "runs": runs,
        "errors": errors,
        "warnings": warnings,
    });
    let mut result = if done {
        CallToolResult::success(vec![ContentBlock::text(text)])
    } else {
        CallToolResult::error(vec![ContentBlock::text(text)])
    };
    result.structured_content = Some(structured);
    result
}

/// How a run ended, in a word, and its exit code.
fn status_of(status: &RunStatus) -> (String, Option<i32>) {
    let word = match status {
        RunStatus::Ok => "ok",
        RunStatus::Failed { .. } => "failed",
        RunStatus::Crashed { .. } => "crashed",
        RunStatus::Interrupted => "interrupted",
        RunStatus::TimedOut { .. } => "timed_out",
        RunStatus::WaitingForInput { .. } => "waiting_for_input",
    };
    let code = match status {
        RunStatus::Ok => Some(0),
        RunStatus::Failed { exit_code, .. } => *exit_code,
        _ => None,
    };
    (word.to_owned(), code)
}

/// Why a task ended without an answer, in a sentence.
fn stopped_text(reason: &StopReason, errors: &[String]) -> String {
    match reason {
        StopReason::Done => "The task ended without an answer.".to_owned(),
        StopReason::MaxTurns { limit } => {
            format!("The task was stopped after {limit} model requests (max_turns).")
        }
        StopReason::Budget { limit_usd, .. } => {
            format!("The task was stopped at its budget of ${limit_usd} (max_budget).")
        }
        StopReason::LoopGuard { summary, .. } => {
            format!("The task was stopped by the loop guard: {summary}")
        }
        StopReason::TimeLimit { limit_secs } => {
            format!("The task was stopped after {limit_secs} s (max_time).")
        }
        StopReason::Interrupted => "The task was interrupted.".to_owned(),
        StopReason::FailSafe => "The task was stopped by the fail-safe.".to_owned(),
        StopReason::Failed => match errors.last() {
            Some(error) => format!("The task failed: {error}"),
            None => "The task failed.".to_owned(),
        },
    }
}

/// `text` cut to about `limit` characters, keeping its start and end.
fn head_and_tail(text: &str, limit: usize) -> String {
    let count = text.chars().count();
    if count <= limit {
        return text.to_owned();
    }
    let half = limit / 2;
    let head: String = text.chars().take(half).collect();
    let tail: String = text.chars().skip(count - half).collect();
    format!(
        "{head}\n[… {} characters left out …]\n{tail}",
        count - 2 * half
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_output_keeps_its_head_and_tail() {
        let text = format!("{}{}", "a".repeat(3000), "b".repeat(3000));
        let cut = head_and_tail(&text, 100);
        assert!(cut.starts_with(&"a".repeat(50)) && cut.ends_with(&"b".repeat(50)));
        assert!(cut.contains("5900 characters left out"));
        assert_eq!(head_and_tail("short", 100), "short");
    }

    #[test]
    fn the_approval_default_is_auto_unless_the_command_line_set_one() {
        let server = Server::new(SessionRequest::default());
        assert_eq!(server.base.defaults[0].key, "approval");
        let mut base = SessionRequest::default();
        base.settings.push(FlagSetting::new(
            "--dangerously-allow-all",
            "approval",
            "never",
        ));
        let server = Server::new(base);
        assert!(server.base.defaults.is_empty());
    }

    #[test]
    fn a_relative_or_missing_cwd_is_refused_naming_the_field() {
        let server = Server::new(SessionRequest::default());
        let args = |cwd: &str| RunArgs {
            prompt: "x".into(),
            cwd: Some(cwd.into()),
            model: None,
            sandbox: None,
            config: None,
        };
        let error = server.request(&args("rel/dir")).unwrap_err();
        assert!(error.message.contains("absolute path"), "{error:?}");
        assert_eq!(error.data, Some(json!({"field": "cwd"})));
        let error = server.request(&args("/no/such/folder")).unwrap_err();
        assert!(error.message.contains("not a folder"), "{error:?}");
    }

    #[test]
    fn run_statuses_have_a_word_and_an_exit_code() {
        assert_eq!(status_of(&RunStatus::Ok), ("ok".to_owned(), Some(0)));
        assert_eq!(
            status_of(&RunStatus::Failed {
                exit_code: Some(2),
                error: None
            }),
            ("failed".to_owned(), Some(2))
        );
    }
}
