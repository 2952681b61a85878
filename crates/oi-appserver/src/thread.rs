//! One thread: an oi session with its own agent and kernels, and the
//! mapping of its events to the protocol's notifications — items that
//! start and complete, deltas while they stream, turns that end — and of
//! its approval requests to requests to the client.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{SystemTime, UNIX_EPOCH};

use oi_codex::structured::{StructuredAnswer, Verdict};
use oi_codex::{AggregatedOutput, exit_code, stop_message};
use oi_protocol::{Event, FileChangeKind, Op, ReviewDecision, RunId, SkipReason, StopReason};
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::protocol::{
    AskForApproval, CommandStatus, FileUpdateChange, PatchChangeKind, SandboxPolicy, Thread,
    ThreadItem, ThreadStatus, TokenUsageBreakdown, Turn, TurnError, TurnStatus,
};
use crate::rpc::Outgoing;

/// Milliseconds since 1970.
pub(crate) fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

fn base36(mut n: u64) -> String {
    let mut digits = Vec::new();
    loop {
        digits.push(char::from_digit((n % 36) as u32, 36).unwrap_or('0'));
        n /= 36;
        if n == 0 {
            break;
        }
    }
    digits.iter().rev().collect()
}

/// What a `Thread` object says of a loaded thread, beside its status.
#[derive(Debug, Clone)]
pub(crate) struct ThreadInfo {
    pub id: String,
    pub model: String,
    pub model_provider: String,
    pub cwd: String,
    pub approval: AskForApproval,
    pub sandbox: SandboxPolicy,
    pub created_at: i64,
    pub updated_at: i64,
    pub preview: String,
    pub path: Option<String>,
    pub ephemeral: bool,
}

impl ThreadInfo {
    pub(crate) fn thread(&self, status: ThreadStatus, turns: Vec<Turn>) -> Thread {
        Thread {
            id: self.id.clone(),
            session_id: self.id.clone(),
            preview: self.preview.clone(),
            ephemeral: self.ephemeral,
            model_provider: self.model_provider.clone(),
            model: Some(self.model.clone()),
            created_at: self.created_at,
            updated_at: self.updated_at,
            status,
            path: self.path.clone(),
            cwd: self.cwd.clone(),
            cli_version: env!("CARGO_PKG_VERSION").to_owned(),
            source: "appServer",
            project_id: None,
            name: None,
            turns,
        }
    }
}

/// The turn under way.
#[derive(Debug)]
pub(crate) struct ActiveTurn {
    pub id: String,
    /// When it started (ms since 1970).
    pub started_ms: i64,
    /// The answer must validate against this schema.
    pub schema: Option<StructuredAnswer>,
}

/// Whether code that needs approval is asked about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Approvals {
    /// The client is asked (`item/commandExecution/requestApproval`).
    AskClient,
    /// Nobody is asked (`approvalPolicy: never`): such code is not run, and
    /// the model is told.
    Never,
}

/// What the request handlers and the event mapper share.
#[derive(Debug)]
pub(crate) struct Shared {
    pub info: ThreadInfo,
    pub turn: Option<ActiveTurn>,
    pub approvals: Approvals,
    next_turn: u64,
    next_item: u64,
    /// When the thread was loaded (ms, base 36): ids stay unique when the
    /// same thread is loaded again later.
    epoch: String,
}

impl Shared {
    pub(crate) fn item_id(&mut self) -> String {
        self.next_item += 1;
        format!("item_{}_{}", self.epoch, self.next_item)
    }

    pub(crate) fn turn_id(&mut self) -> String {
        self.next_turn += 1;
        format!("turn_{}_{}", self.epoch, self.next_turn)
    }

    pub(crate) fn status(&self) -> ThreadStatus {
        match self.turn {
            Some(_) => ThreadStatus::Active {
                active_flags: Vec::new(),
            },
            None => ThreadStatus::Idle,
        }
    }
}

/// A loaded thread.
#[derive(Debug, Clone)]
pub(crate) struct ThreadHandle {
    pub ops: mpsc::UnboundedSender<Op>,
    pub shared: Arc<Mutex<Shared>>,
}

impl ThreadHandle {
    pub(crate) fn new(
        ops: mpsc::UnboundedSender<Op>,
        info: ThreadInfo,
        approvals: Approvals,
    ) -> Self {
        Self {
            ops,
            shared: Arc::new(Mutex::new(Shared {
                info,
                turn: None,
                approvals,
                next_turn: 0,
                next_item: 0,
                epoch: base36(now_ms().unsigned_abs()),
            })),
        }
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, Shared> {
        // A panic while holding the lock is a bug elsewhere; the data is
        // still whole, so go on with it.
        self.shared
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// A run of code under way, as an item.
#[derive(Debug)]
struct RunItem {
    item_id: String,
    language: String,
    command: String,
    output: AggregatedOutput,
}

/// Follows one thread's events and tells the client.
#[derive(Debug)]
pub(crate) struct Mapper {
    thread: ThreadHandle,
    out: Outgoing,
    /// The agent message streaming now: its item and text so far.
    message: Option<(String, String)>,
    /// A finished reply held until the turn ends (when a schema may
    /// replace it by the validated JSON).
    held: Option<(String, String)>,
    /// The reasoning streaming now (its item).
    reasoning: Option<String>,
    /// Code proposed, not yet started.
    proposed: HashMap<RunId, (String, String)>,
    /// Runs with an item (started, or waiting for approval).
    runs: HashMap<RunId, RunItem>,
    /// The last error of the turn.
    error: Option<TurnError>,
}

impl Mapper {
    pub(crate) fn new(thread: ThreadHandle, out: Outgoing) -> Self {
        Self {
            thread,
            out,
            message: None,
            held: None,
            reasoning: None,
            proposed: HashMap::new(),
            runs: HashMap::new(),
            error: None,
        }
    }

    /// Follows the events until the agent stops.
    pub(crate) async fn run(mut self, mut events: mpsc::UnboundedReceiver<Event>) {
        while let Some(event) = events.recv().await {
            if matches!(event, Event::ShutdownComplete) {
                break;
            }
            self.event(event);
        }
        // The agent is gone (shut down, or failed): a turn still under way
        // ends here.
        if self.thread.lock().turn.is_some() {
            self.error.get_or_insert(TurnError {
                message: "the session ended during the turn".to_owned(),
                additional_details: None,
            });
            self.finish(TurnStatus::Failed);
        }
        let thread = self.thread.lock().info.id.clone();
        self.out
            .notify("thread/closed", json!({ "threadId": thread }));
    }

    /// The thread id and the turn under way (`None` between turns: events
    /// then belong to no turn and are not reported).
    fn ids(&self) -> Option<(String, String)> {
        let shared = self.thread.lock();
        let turn = shared.turn.as_ref()?;
        Some((shared.info.id.clone(), turn.id.clone()))
    }

    fn item_id(&self) -> String {
        self.thread.lock().item_id()
    }

    fn started(&self, item: &ThreadItem) {
        if let Some((thread, turn)) = self.ids() {
            self.out.notify(
                "item/started",
                json!({ "threadId": thread, "turnId": turn, "item": item, "startedAtMs": now_ms() }),
            );
        }
    }

    fn completed(&self, item: &ThreadItem) {
        if let Some((thread, turn)) = self.ids() {
            self.out.notify(
                "item/completed",
                json!({ "threadId": thread, "turnId": turn, "item": item, "completedAtMs": now_ms() }),
            );
        }
    }

    fn delta(&self, method: &str, item_id: &str, delta: &str, extra: Value) {
        if let Some((thread, turn)) = self.ids() {
            let mut params =
                json!({ "threadId": thread, "turnId": turn, "itemId": item_id, "delta": delta });
            if let (Some(params), Value::Object(extra)) = (params.as_object_mut(), extra) {
                params.extend(extra);
            }
            self.out.notify(method, params);
        }
    }

    /// Ends the streaming message: held when the turn may replace it,
    /// completed otherwise.
    fn end_message(&mut self, text: Option<String>) {
        if self.message.is_none() && text.as_deref().is_none_or(|t| t.trim().is_empty()) {
            // A reply of tool calls only: no message to report.
            return;
        }
        let Some((id, streamed)) = self.message.take().or_else(|| {
            text.as_ref().map(|_| {
                let id = self.item_id();
                self.started(&ThreadItem::AgentMessage {
                    id: id.clone(),
                    text: String::new(),
                });
                (id, String::new())
            })
        }) else {
            return;
        };
        let text = text.unwrap_or(streamed);
        if let Some((id, text)) = self.held.replace((id, text)) {
            self.completed(&ThreadItem::AgentMessage { id, text });
        }
    }

    /// Completes the held reply, as written or replaced by `text`.
    fn release_held(&mut self, text: Option<String>) {
        if let Some((id, written)) = self.held.take() {
            // Started, so completed, whatever it says.
            let text = text.unwrap_or(written);
            self.completed(&ThreadItem::AgentMessage { id, text });
        }
    }

    fn run_item(
        &self,
        run: &RunItem,
        status: CommandStatus,
        end: Option<(&oi_protocol::RunStatus, u64)>,
    ) -> ThreadItem {
        let (exit, duration) = match end {
            Some((status, duration)) => (exit_code(status).0, Some(duration)),
            None => (None, None),
        };
        let output = run.output.text();
        ThreadItem::CommandExecution {
            id: run.item_id.clone(),
            command: run.command.clone(),
            cwd: self.thread.lock().info.cwd.clone(),
            status,
            command_actions: vec![json!({ "type": "unknown", "command": run.command })],
            aggregated_output: (status != CommandStatus::InProgress || !output.is_empty())
                .then_some(output),
            exit_code: exit,
            duration_ms: duration,
            source: "agent",
            language: run.language.clone(),
        }
    }

    /// A run's item exists from when it is asked about or starts.
    fn open_run(&mut self, id: RunId, language: &str, code: &str) -> String {
        if let Some(run) = self.runs.get(&id) {
            return run.item_id.clone();
        }
        self.proposed.remove(&id);
        let run = RunItem {
            item_id: self.item_id(),
            language: language.to_owned(),
            command: code.to_owned(),
            output: AggregatedOutput::default(),
        };
        self.started(&self.run_item(&run, CommandStatus::InProgress, None));
        let item_id = run.item_id.clone();
        self.runs.insert(id, run);
        item_id
    }

    fn event(&mut self, event: Event) {
        match event {
            Event::TextDelta { delta } => {
                if self.message.is_none() {
                    let id = self.item_id();
                    self.started(&ThreadItem::AgentMessage {
                        id: id.clone(),
                        text: String::new(),
                    });
                    self.message = Some((id, String::new()));
                }
                if let Some((id, text)) = &mut self.message {
                    text.push_str(&delta);
                    let id = id.clone();
                    self.delta("item/agentMessage/delta", &id, &delta, Value::Null);
                }
            }
            Event::ReasoningDelta { delta } => {
                let id = match &self.reasoning {
                    Some(id) => id.clone(),
                    None => {
                        let id = self.item_id();
                        self.started(&ThreadItem::Reasoning {
                            id: id.clone(),
                            summary: Vec::new(),
                            content: Vec::new(),
                        });
                        self.reasoning = Some(id.clone());
                        id
                    }
                };
                self.delta(
                    "item/reasoning/textDelta",
                    &id,
                    &delta,
                    json!({ "contentIndex": 0 }),
                );
            }
            Event::Reasoning { text } => {
                let id = self.reasoning.take().unwrap_or_else(|| {
                    let id = self.item_id();
                    self.started(&ThreadItem::Reasoning {
                        id: id.clone(),
                        summary: Vec::new(),
                        content: Vec::new(),
                    });
                    id
                });
                self.completed(&ThreadItem::Reasoning {
                    id,
                    summary: Vec::new(),
                    content: vec![text],
                });
            }
            Event::AssistantMessage { text } => self.end_message(Some(text)),
            Event::CodeProposed { id, language, code } => {
                self.end_message(None);
                self.release_held(None);
                self.proposed.insert(id, (language, code));
            }
            Event::ApprovalRequested {
                id,
                language,
                code,
                risks,
            } => {
                let item_id = self.open_run(id, &language, &code);
                self.ask(id, item_id, &code, &risks);
            }
            Event::RunStarted { id, language, code } => {
                self.open_run(id, &language, &code);
                if let Some(run) = self.runs.get_mut(&id) {
                    // The code that runs may be an edit of what was asked.
                    run.command = code;
                }
            }
            Event::OutputDelta { id, text, .. } => {
                if let Some(run) = self.runs.get_mut(&id) {
                    run.output.push(&text);
                    let item_id = run.item_id.clone();
                    self.delta(
                        "item/commandExecution/outputDelta",
                        &item_id,
                        &text,
                        Value::Null,
                    );
                }
            }
            Event::OutputSkipped { id, bytes } => {
                if let Some(run) = self.runs.get_mut(&id) {
                    run.output
                        .push(&format!("\n[… {bytes} bytes of output skipped …]\n"));
                }
            }
            Event::RunFinished {
                id,
                status,
                duration_ms,
                ..
            } => {
                if let Some(run) = self.runs.remove(&id) {
                    let state = if exit_code(&status).1 {
                        CommandStatus::Completed
                    } else {
                        CommandStatus::Failed
                    };
                    self.completed(&self.run_item(&run, state, Some((&status, duration_ms))));
                }
            }
            Event::RunSkipped { id, reason } => {
                let run = self.runs.remove(&id).or_else(|| {
                    self.proposed.remove(&id).map(|(language, command)| {
                        let run = RunItem {
                            item_id: self.item_id(),
                            language,
                            command,
                            output: AggregatedOutput::default(),
                        };
                        self.started(&self.run_item(&run, CommandStatus::InProgress, None));
                        run
                    })
                });
                if let Some(mut run) = run {
                    if let SkipReason::Unavailable { message } = &reason {
                        run.output.push(message);
                    }
                    self.completed(&self.run_item(&run, CommandStatus::Declined, None));
                }
            }
            Event::Image { path, .. } => {
                let item = ThreadItem::ImageView {
                    id: self.item_id(),
                    path,
                };
                self.started(&item);
                self.completed(&item);
            }
            Event::FilesChanged { changes, .. } => {
                let item = ThreadItem::FileChange {
                    id: self.item_id(),
                    changes: changes
                        .into_iter()
                        .map(|c| FileUpdateChange {
                            path: c.path,
                            kind: match c.kind {
                                FileChangeKind::Added => PatchChangeKind::Add,
                                FileChangeKind::Deleted => PatchChangeKind::Delete,
                                FileChangeKind::Modified => {
                                    PatchChangeKind::Update { move_path: None }
                                }
                            },
                            diff: String::new(),
                        })
                        .collect(),
                    status: CommandStatus::Completed,
                };
                self.started(&item);
                self.completed(&item);
            }
            Event::Usage { last, total, .. } => {
                if let Some((thread, turn)) = self.ids() {
                    self.out.notify(
                        "thread/tokenUsage/updated",
                        json!({
                            "threadId": thread,
                            "turnId": turn,
                            "tokenUsage": {
                                "last": TokenUsageBreakdown::from(last),
                                "total": TokenUsageBreakdown::from(total),
                            },
                        }),
                    );
                }
            }
            Event::Compacted { .. } => {
                if let Some((thread, turn)) = self.ids() {
                    self.out.notify(
                        "thread/compacted",
                        json!({ "threadId": thread, "turnId": turn }),
                    );
                }
            }
            Event::Warning { message } => {
                let thread = self.thread.lock().info.id.clone();
                self.out
                    .notify("warning", json!({ "threadId": thread, "message": message }));
            }
            Event::SandboxDenied { id, message, hint } => {
                if let Some(run) = self.runs.get_mut(&id) {
                    run.output.push(&format!("\n{message}\nhint: {hint}\n"));
                }
            }
            Event::Error { message, hint } => {
                self.error = Some(TurnError {
                    message,
                    additional_details: hint,
                });
            }
            Event::ReplyRestarted => {
                // The text streamed since the request is void; the message
                // item, completed with the reply's whole text, says what
                // stands.
            }
            Event::TaskComplete {
                reason,
                final_message,
            } => self.task_complete(&reason, final_message),
            _ => {}
        }
    }

    /// Asks the client about a run (or, under `never`, tells the agent that
    /// nobody can be asked).
    fn ask(&self, id: RunId, item_id: String, code: &str, risks: &[String]) {
        let ops = self.thread.ops.clone();
        let (approvals, cwd) = {
            let shared = self.thread.lock();
            (shared.approvals, shared.info.cwd.clone())
        };
        let Some((thread, turn)) = self.ids() else {
            let _ = ops.send(Op::Approve {
                id,
                decision: ReviewDecision::NoApprover,
            });
            return;
        };
        if approvals == Approvals::Never {
            let _ = ops.send(Op::Approve {
                id,
                decision: ReviewDecision::NoApprover,
            });
            return;
        }
        let reason = if risks.is_empty() {
            None
        } else {
            Some(format!("risky: {}", risks.join("; ")))
        };
        let (request_id, answer) = self.out.request(
            "item/commandExecution/requestApproval",
            json!({
                "threadId": thread,
                "turnId": turn,
                "itemId": item_id,
                "startedAtMs": now_ms(),
                "command": code,
                "cwd": cwd,
                "reason": reason,
                "commandActions": [{ "type": "unknown", "command": code }],
            }),
        );
        let out = self.out.clone();
        tokio::spawn(async move {
            let decision = match answer.await {
                Ok(Ok(result)) => result.get("decision").cloned().unwrap_or(Value::Null),
                // An error answer, or a client that went away: not run.
                _ => Value::Null,
            };
            let (decision, interrupt) = review_decision(&decision);
            if interrupt {
                // The turn stops while the run still waits: nothing more
                // is asked of the model.
                let _ = ops.send(Op::Interrupt);
            }
            let _ = ops.send(Op::Approve { id, decision });
            out.notify(
                "serverRequest/resolved",
                json!({ "threadId": thread, "requestId": request_id }),
            );
        });
    }

    fn task_complete(&mut self, reason: &StopReason, final_message: Option<String>) {
        self.end_message(None);
        for (_, run) in std::mem::take(&mut self.runs) {
            self.completed(&self.run_item(&run, CommandStatus::Failed, None));
        }
        let verdict = {
            let mut shared = self.thread.lock();
            match (reason, shared.turn.as_mut().and_then(|t| t.schema.as_mut())) {
                (StopReason::Done, Some(schema)) => {
                    Some(schema.judge(final_message.as_deref().unwrap_or("")))
                }
                _ => None,
            }
        };
        match verdict {
            Some(Verdict::AskAgain(prompt)) => {
                // Same turn: the model is asked once more.
                self.release_held(None);
                let _ = self.thread.ops.send(Op::input(prompt));
            }
            Some(Verdict::Valid(json)) => {
                self.release_held(Some(json));
                self.finish(TurnStatus::Completed);
            }
            Some(Verdict::Invalid(message)) => {
                self.release_held(None);
                self.error = Some(TurnError {
                    message,
                    additional_details: Some(
                        "the model was asked twice; try a more capable model, or a simpler schema"
                            .to_owned(),
                    ),
                });
                self.finish(TurnStatus::Failed);
            }
            None => {
                self.release_held(None);
                match reason {
                    StopReason::Done => self.finish(TurnStatus::Completed),
                    StopReason::Interrupted | StopReason::FailSafe => {
                        self.finish(TurnStatus::Interrupted)
                    }
                    other => {
                        if self.error.is_none() {
                            self.error = stop_message(other).map(|message| TurnError {
                                message,
                                additional_details: None,
                            });
                        }
                        self.finish(TurnStatus::Failed);
                    }
                }
            }
        }
    }

    /// Ends the turn under way with `status`: an `error` notification for
    /// a failed turn, then `turn/completed`.
    fn finish(&mut self, status: TurnStatus) {
        let error = self.error.take();
        let (thread, turn) = {
            let mut shared = self.thread.lock();
            let Some(turn) = shared.turn.take() else {
                return;
            };
            shared.info.updated_at = now_ms() / 1000;
            (shared.info.id.clone(), turn)
        };
        let error = (status == TurnStatus::Failed).then(|| {
            error.unwrap_or(TurnError {
                message: "the turn failed".to_owned(),
                additional_details: None,
            })
        });
        if let Some(error) = &error {
            self.out.notify(
                "error",
                json!({ "threadId": thread, "turnId": turn.id, "error": error, "willRetry": false }),
            );
        }
        let now = now_ms();
        self.out.notify(
            "turn/completed",
            json!({
                "threadId": thread,
                "turn": Turn {
                    id: turn.id,
                    items: Vec::new(),
                    items_view: "notLoaded",
                    status,
                    error,
                    started_at: Some(turn.started_ms / 1000),
                    completed_at: Some(now / 1000),
                    duration_ms: Some(u64::try_from(now - turn.started_ms).unwrap_or(0)),
                },
            }),
        );
    }
}

/// The client's answer to an approval request, as oi's decision, and
/// whether the turn is to stop too (`cancel`). Anything unreadable is a
/// no: code never runs on a misunderstanding.
pub(crate) fn review_decision(decision: &Value) -> (ReviewDecision, bool) {
    match decision {
        Value::String(word) => match word.as_str() {
            "accept" | "approved" => (ReviewDecision::Approve, false),
            "acceptForSession" | "approved_for_session" => {
                (ReviewDecision::ApproveForSession, false)
            }
            "cancel" | "abort" => (ReviewDecision::Decline, true),
            _ => (ReviewDecision::Decline, false),
        },
        Value::Object(map) if map.contains_key("acceptWithExecpolicyAmendment") => {
            (ReviewDecision::Approve, false)
        }
        _ => (ReviewDecision::Decline, false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn every_answer_to_an_approval_means_one_decision() {
        let cases = [
            (json!("accept"), (ReviewDecision::Approve, false)),
            (
                json!("acceptForSession"),
                (ReviewDecision::ApproveForSession, false),
            ),
            (json!("decline"), (ReviewDecision::Decline, false)),
            (json!("cancel"), (ReviewDecision::Decline, true)),
            (
                json!({"acceptWithExecpolicyAmendment": {"execpolicy_amendment": ["ls"]}}),
                (ReviewDecision::Approve, false),
            ),
            (json!("yes please"), (ReviewDecision::Decline, false)),
            (Value::Null, (ReviewDecision::Decline, false)),
        ];
        for (answer, expected) in cases {
            assert_eq!(review_decision(&answer), expected, "{answer}");
        }
    }
}
