//! Open Interpreter's LMC messages in front of the oi agent.
//!
//! `interpreter lmc` serves one session on stdin/stdout, one JSON object
//! per line: the caller sends requests (`{"op": "chat", "message": …}` and
//! the others of [`Request`]), oi answers with LMC chunks — the stream
//! Open Interpreter's `chat(stream=True)` yields — and `role: "server"`
//! lines, the last of each answer being `{"role": "server", "type":
//! "status", "content": "complete"}`. The Python package (`from
//! interpreter import interpreter`) runs one such process per
//! `OpenInterpreter`. See docs/python.md.

pub mod chunks;
pub mod messages;

use oi_core::SessionRequest;
use oi_protocol::{ApprovalPolicy, Event, Op, ReviewDecision, RunId, SkipReason};
use serde::Deserialize;
use std::collections::VecDeque;

use serde_json::{Value, json};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;

pub use chunks::Chunker;
pub use messages::{ChatInput, MessageError, UserTurn, chat_input, to_history};

/// What went wrong serving a session.
#[derive(Debug, thiserror::Error)]
pub enum LmcError {
    #[error("{0}")]
    Setup(#[from] oi_core::SetupError),
    #[error("the session's agent stopped unexpectedly")]
    AgentGone,
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// A caller's answer to a confirmation chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    Approve,
    ApproveForSession,
    Decline,
    /// Nobody can answer (a front end without a person): not run, and the
    /// model is told so.
    NoApprover,
}

impl From<Decision> for ReviewDecision {
    fn from(decision: Decision) -> Self {
        match decision {
            Decision::Approve => Self::Approve,
            Decision::ApproveForSession => Self::ApproveForSession,
            Decision::Decline => Self::Decline,
            Decision::NoApprover => Self::NoApprover,
        }
    }
}

/// One line from the caller.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
pub enum Request {
    /// A task: `message` is a string, an LMC message, or a list of them
    /// (which replaces the conversation, its last user messages being the
    /// task). With `append`, a list is the user's new messages, added to
    /// the conversation.
    Chat {
        message: Value,
        #[serde(default)]
        append: bool,
    },
    /// Answer the confirmation chunk with this `id` (while a chat runs).
    Approve {
        id: u64,
        decision: Decision,
    },
    /// Stop the chat or run under way.
    Interrupt,
    /// Replace the conversation (LMC messages).
    Messages {
        messages: Vec<Value>,
    },
    /// Forget the conversation and restart the kernels.
    Reset,
    /// Run code in the session's kernels, without the model.
    Run {
        language: String,
        code: String,
    },
    /// The system prompt the model is sent now.
    SystemPrompt,
    /// `ask` (`auto_run = False`) or `auto`.
    SetApproval {
        policy: ApprovalPolicy,
    },
    SetModel {
        model: String,
    },
}

/// What the request under way waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Waiting {
    /// A chat: its `task_complete`.
    Task,
    /// A run: its `run_finished` or `run_skipped`.
    Run,
    /// A control op's answer.
    Answer,
}

/// The session's side of the stream: what is under way.
struct Session<'a> {
    ops: &'a mpsc::UnboundedSender<Op>,
    chunker: Chunker,
    waiting: Option<Waiting>,
}

impl Session<'_> {
    fn send(&self, op: Op) -> Result<(), LmcError> {
        self.ops.send(op).map_err(|_| LmcError::AgentGone)
    }

    /// Starts a request (or answers it at once: a bad one).
    async fn start<W: AsyncWrite + Unpin>(
        &mut self,
        request: Result<Request, Value>,
        out: &mut Lines<W>,
    ) -> Result<(), LmcError> {
        let refused = |e: MessageError| chunks::refusal(e.to_string(), Some(e.hint().to_owned()));
        let waiting = match request {
            Err(line) => {
                out.send(&line).await?;
                None
            }
            Ok(Request::Chat { message, append }) => match chat_input(&message, append) {
                Ok(input) => {
                    if let Some(history) = input.restore {
                        self.send(Op::Restore { messages: history })?;
                    }
                    self.send(Op::UserInput {
                        text: input.turn.text,
                        images: input.turn.images,
                    })?;
                    Some(Waiting::Task)
                }
                Err(e) => {
                    out.send(&refused(e)).await?;
                    None
                }
            },
            Ok(Request::Messages { messages }) => match to_history(&messages) {
                Ok(history) => {
                    self.send(Op::Restore { messages: history })?;
                    Some(Waiting::Answer)
                }
                Err(e) => {
                    out.send(&refused(e)).await?;
                    None
                }
            },
            Ok(Request::Run { language, code }) => {
                self.send(Op::Run { language, code })?;
                Some(Waiting::Run)
            }
            Ok(Request::Reset) => {
                self.send(Op::Reset)?;
                Some(Waiting::Answer)
            }
            Ok(Request::SystemPrompt) => {
                self.send(Op::SystemPrompt)?;
                Some(Waiting::Answer)
            }
            Ok(Request::SetApproval { policy }) => {
                self.send(Op::SetApproval { policy })?;
                Some(Waiting::Answer)
            }
            Ok(Request::SetModel { model }) => {
                self.send(Op::SetModel { model })?;
                Some(Waiting::Answer)
            }
            // Acted on when read.
            Ok(Request::Approve { .. } | Request::Interrupt) => None,
        };
        self.waiting = waiting;
        if waiting.is_none() {
            out.send(&chunks::complete()).await?;
        }
        Ok(())
    }

    /// Sends an event's chunks, and `complete` when it ends the request
    /// under way.
    async fn event<W: AsyncWrite + Unpin>(
        &mut self,
        event: &Event,
        out: &mut Lines<W>,
    ) -> Result<(), LmcError> {
        out.send_all(self.chunker.event(event)).await?;
        let done = match (event, self.waiting) {
            (Event::TaskComplete { .. }, Some(Waiting::Task)) => true,
            (
                Event::RunSkipped {
                    reason: SkipReason::Unavailable { message },
                    ..
                },
                Some(Waiting::Run),
            ) => {
                out.send(&chunks::refusal(
                    message.clone(),
                    Some(
                        "name one of the languages the session has (`ready` lists them)".to_owned(),
                    ),
                ))
                .await?;
                true
            }
            (Event::RunFinished { .. } | Event::RunSkipped { .. }, Some(Waiting::Run)) => true,
            (Event::SystemPrompt { text }, Some(Waiting::Answer)) => {
                out.send(&chunks::server("system_prompt", text.clone()))
                    .await?;
                true
            }
            (Event::Restored { messages }, Some(Waiting::Answer)) => {
                out.send(&chunks::server("restored", *messages)).await?;
                true
            }
            (
                Event::SessionReset
                | Event::ApprovalChanged { .. }
                | Event::ModelChanged { .. }
                | Event::Error { .. },
                Some(Waiting::Answer),
            ) => true,
            _ => false,
        };
        if done {
            out.send_all(self.chunker.close()).await?;
            out.send(&chunks::complete()).await?;
            self.waiting = None;
        }
        Ok(())
    }
}

struct Lines<W> {
    out: W,
}

impl<W: AsyncWrite + Unpin> Lines<W> {
    async fn send(&mut self, line: &Value) -> std::io::Result<()> {
        let mut text = line.to_string();
        text.push('\n');
        self.out.write_all(text.as_bytes()).await?;
        self.out.flush().await
    }

    async fn send_all(&mut self, lines: Vec<Value>) -> std::io::Result<()> {
        for line in &lines {
            self.send(line).await?;
        }
        Ok(())
    }
}

/// Serves one session until the input ends: sets it up from `request`
/// (a failure is sent as an error line, then returned), sends `ready`,
/// then answers requests.
pub async fn serve<R, W>(input: R, output: W, request: SessionRequest) -> Result<(), LmcError>
where
    R: AsyncBufRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin,
{
    let mut out = Lines { out: output };
    let mut request = request;
    request.user_input = false;
    let setup = match tokio::task::spawn_blocking(move || oi_core::setup(&request)).await {
        Ok(Ok(setup)) => setup,
        Ok(Err(error)) => {
            out.send(&chunks::error(error.to_string(), error.hint()))
                .await?;
            return Err(error.into());
        }
        Err(join) => return Err(LmcError::Io(std::io::Error::other(join.to_string()))),
    };
    for notice in &setup.notices {
        out.send(&chunks::server("notice", notice.to_string()))
            .await?;
    }
    let (ops, mut events) = setup.spawn();
    let Some(Event::SessionConfigured {
        session_id,
        model,
        harness,
        languages,
        cwd,
        ..
    }) = events.recv().await
    else {
        return Err(LmcError::AgentGone);
    };
    out.send(&chunks::server(
        "ready",
        json!({
            "session_id": session_id,
            "model": model,
            "harness": harness,
            "languages": languages,
            "cwd": cwd,
        }),
    ))
    .await?;

    let (lines_tx, mut lines) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut input = input.lines();
        while let Ok(Some(line)) = input.next_line().await {
            if lines_tx.send(line).is_err() {
                return;
            }
        }
    });
    let mut session = Session {
        ops: &ops,
        chunker: Chunker::new(),
        waiting: None,
    };
    let mut queue: VecDeque<Result<Request, Value>> = VecDeque::new();
    let mut line_number = 0usize;
    let mut input_open = true;
    loop {
        // Start what is queued, in order, while nothing is under way.
        while session.waiting.is_none()
            && let Some(next) = queue.pop_front()
        {
            session.start(next, &mut out).await?;
        }
        if !input_open && session.waiting.is_none() {
            break;
        }
        tokio::select! {
            line = lines.recv(), if input_open => {
                let Some(line) = line else {
                    input_open = false;
                    continue;
                };
                line_number += 1;
                if line.trim().is_empty() {
                    continue;
                }
                match serde_json::from_str::<Request>(&line) {
                    Ok(Request::Approve { id, decision }) => session.send(Op::Approve {
                        id: RunId(id),
                        decision: decision.into(),
                    })?,
                    Ok(Request::Interrupt) => {
                        queue.clear();
                        session.send(Op::Interrupt)?;
                    }
                    Ok(request) => queue.push_back(Ok(request)),
                    Err(e) => queue.push_back(Err(chunks::refusal(
                        format!("line {line_number}: not a request oi knows: {e}"),
                        Some("send one JSON object per line, e.g. {\"op\": \"chat\", \"message\": \"hello\"}; the ops are chat, approve, interrupt, messages, reset, run, system_prompt, set_approval, set_model".to_owned()),
                    ))),
                }
            }
            event = events.recv() => {
                let Some(event) = event else { return Err(LmcError::AgentGone) };
                session.event(&event, &mut out).await?;
            }
        }
    }
    // The caller is gone: stop what runs and let the kernels go.
    let _ = ops.send(Op::Shutdown);
    while let Some(event) = events.recv().await {
        if matches!(event, Event::ShutdownComplete) {
            break;
        }
    }
    Ok(())
}
