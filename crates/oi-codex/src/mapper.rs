//! oi's events as `codex exec --json` lines. One [`ExecMapper`] follows a
//! session: it numbers the items, gathers a run's output until it ends
//! (reporting it as it grows, at most once per update interval), and sums
//! a turn's tokens.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use oi_protocol::{Event, FileChangeKind, RunId, RunStatus, SkipReason, StopReason};

use crate::exec_events::{
    CommandExecution, CommandStatus, ErrorMessage, FileUpdateChange, ItemDetails, McpToolCall,
    McpToolCallResult, McpToolCallStatus, PatchChangeKind, PatchStatus, ThreadEvent, ThreadItem,
    Usage,
};

/// How often a running command's item is updated with its output so far.
pub const UPDATE_INTERVAL: Duration = Duration::from_secs(1);

/// Bytes of a run's output an item keeps: the first and the last half,
/// with a note of what was left out between them.
pub const MAX_AGGREGATED_OUTPUT: usize = 1024 * 1024;

/// A run's output as Codex items carry it: all of it up to
/// [`MAX_AGGREGATED_OUTPUT`] bytes, else its first and last halves with a
/// note of what was left out between them. Shared by every Codex front end.
#[derive(Debug, Default, Clone)]
pub struct AggregatedOutput {
    head: String,
    tail: String,
    left_out: u64,
}

impl AggregatedOutput {
    pub fn push(&mut self, text: &str) {
        let half = MAX_AGGREGATED_OUTPUT / 2;
        if self.left_out == 0 && self.tail.is_empty() && self.head.len() + text.len() <= half {
            self.head.push_str(text);
            return;
        }
        self.tail.push_str(text);
        if self.tail.len() > half {
            let mut cut = self.tail.len() - half;
            while !self.tail.is_char_boundary(cut) {
                cut += 1;
            }
            self.left_out += cut as u64;
            self.tail.drain(..cut);
        }
    }

    /// The output as it stands.
    pub fn text(&self) -> String {
        let mut text = self.head.clone();
        if self.left_out > 0 {
            text.push_str(&format!(
                "\n[… {} bytes of output left out …]\n",
                self.left_out
            ));
        }
        text.push_str(&self.tail);
        text
    }
}

/// A run under way: its item, what it printed, and when its item was last
/// sent.
#[derive(Debug)]
struct Running {
    item_id: String,
    run: CommandExecution,
    output: AggregatedOutput,
    sent_at: Instant,
    changed: bool,
}

impl Running {
    fn push(&mut self, text: &str) {
        self.output.push(text);
        self.changed = true;
    }

    /// The item as it stands.
    fn item(&self) -> ThreadItem {
        let mut run = self.run.clone();
        run.aggregated_output = self.output.text();
        ThreadItem {
            id: self.item_id.clone(),
            details: ItemDetails::CommandExecution(run),
        }
    }
}

/// Turns oi's event stream into Codex's.
#[derive(Debug)]
pub struct ExecMapper {
    /// How often a running command's item is updated (`item.updated`).
    update_interval: Duration,
    next_item: u64,
    /// Code proposed, by run: its language and code (a run that never
    /// starts is still reported, as declined).
    proposed: HashMap<RunId, (String, String)>,
    /// Runs under way.
    running: HashMap<RunId, Running>,
    /// MCP tool calls under way: their item id, the item, their output.
    calls: HashMap<RunId, (String, McpToolCall, String)>,
    /// Checkpoints taken before runs that have not started yet.
    checkpoints: HashMap<RunId, String>,
    /// The model's last reply, held until it is clear whether it is the
    /// turn's answer (which an output schema may replace).
    pending_message: Option<String>,
    /// The answer to report instead of the last reply (structured output).
    answer: Option<String>,
    usage: Usage,
    /// The session's cost when the turn began.
    cost_at_start: Option<f64>,
    cost_now: Option<f64>,
    /// The last error, for a failed turn.
    error: Option<String>,
}

impl Default for ExecMapper {
    fn default() -> Self {
        Self::new()
    }
}

impl ExecMapper {
    pub fn new() -> Self {
        Self::with_update_interval(UPDATE_INTERVAL)
    }

    /// A mapper that updates a running command's item at most once per
    /// `interval` (zero: on every piece of output).
    pub fn with_update_interval(interval: Duration) -> Self {
        Self {
            update_interval: interval,
            next_item: 0,
            proposed: HashMap::new(),
            running: HashMap::new(),
            calls: HashMap::new(),
            checkpoints: HashMap::new(),
            pending_message: None,
            answer: None,
            usage: Usage::default(),
            cost_at_start: None,
            cost_now: None,
            error: None,
        }
    }

    /// The updates due for running commands (call it now and then while
    /// nothing else happens, so output that stops coming is still sent).
    pub fn tick(&mut self) -> Vec<ThreadEvent> {
        let interval = self.update_interval;
        let mut out = Vec::new();
        for running in self.running.values_mut() {
            if running.changed && running.sent_at.elapsed() >= interval {
                running.changed = false;
                running.sent_at = Instant::now();
                out.push(ThreadEvent::ItemUpdated {
                    item: running.item(),
                });
            }
        }
        out
    }

    /// The turn's answer is `text` (the JSON a schema asked for), not the
    /// model's last reply as written.
    pub fn set_answer(&mut self, text: String) {
        self.answer = Some(text);
    }

    fn item(&mut self, details: ItemDetails) -> ThreadItem {
        let id = format!("item_{}", self.next_item);
        self.next_item += 1;
        ThreadItem { id, details }
    }

    /// The held reply, as an item (when there is one).
    fn flush_message(&mut self, out: &mut Vec<ThreadEvent>) {
        if let Some(text) = self.pending_message.take()
            && !text.trim().is_empty()
        {
            let item = self.item(ItemDetails::AgentMessage { text });
            out.push(ThreadEvent::ItemCompleted { item });
        }
    }

    /// The Codex lines for `event` (often none).
    pub fn event(&mut self, event: &Event) -> Vec<ThreadEvent> {
        let mut out = Vec::new();
        match event {
            Event::SessionConfigured { session_id, .. } => {
                out.push(ThreadEvent::ThreadStarted {
                    thread_id: session_id.clone().unwrap_or_default(),
                });
            }
            Event::TaskStarted => {
                self.usage = Usage::default();
                self.cost_at_start = self.cost_now;
                self.error = None;
                self.answer = None;
                out.push(ThreadEvent::TurnStarted {});
            }
            Event::AssistantMessage { text } => {
                self.flush_message(&mut out);
                self.pending_message = Some(text.clone());
            }
            Event::Reasoning { text } => {
                self.flush_message(&mut out);
                let item = self.item(ItemDetails::Reasoning { text: text.clone() });
                out.push(ThreadEvent::ItemCompleted { item });
            }
            Event::FilesChanged { changes, .. } => {
                let changes = changes
                    .iter()
                    .map(|c| FileUpdateChange {
                        path: c.path.clone(),
                        kind: match c.kind {
                            FileChangeKind::Added => PatchChangeKind::Add,
                            FileChangeKind::Modified => PatchChangeKind::Update,
                            FileChangeKind::Deleted => PatchChangeKind::Delete,
                        },
                    })
                    .collect();
                let item = self.item(ItemDetails::FileChange {
                    changes,
                    status: PatchStatus::Completed,
                });
                out.push(ThreadEvent::ItemCompleted { item });
            }
            Event::CodeProposed { id, language, code } => {
                self.flush_message(&mut out);
                self.proposed.insert(*id, (language.clone(), code.clone()));
            }
            Event::CheckpointSaved { id, checkpoint, .. } => {
                self.checkpoints.insert(*id, checkpoint.clone());
            }
            // A file edit is its `file_change` item (from `FilesChanged`),
            // not a command.
            Event::RunStarted { id, language, .. } if language == oi_protocol::EDIT_LANGUAGE => {
                self.proposed.remove(id);
                self.checkpoints.remove(id);
            }
            Event::RunStarted { id, language, code }
                if language == oi_protocol::MCP_LANGUAGE
                    && oi_protocol::parse_mcp_call_text(code).is_some() =>
            {
                self.proposed.remove(id);
                let (server, tool, arguments) =
                    oi_protocol::parse_mcp_call_text(code).unwrap_or_default();
                let call = McpToolCall {
                    server,
                    tool,
                    arguments,
                    result: None,
                    error: None,
                    status: McpToolCallStatus::InProgress,
                    duration_ms: None,
                    checkpoint: self.checkpoints.remove(id),
                };
                let item = self.item(ItemDetails::McpToolCall(call.clone()));
                out.push(ThreadEvent::ItemStarted { item: item.clone() });
                self.calls.insert(*id, (item.id, call, String::new()));
            }
            Event::RunStarted { id, language, code } => {
                self.proposed.remove(id);
                let run = CommandExecution {
                    command: code.clone(),
                    aggregated_output: String::new(),
                    exit_code: None,
                    status: CommandStatus::InProgress,
                    language: language.clone(),
                    duration_ms: None,
                    images: Vec::new(),
                    checkpoint: self.checkpoints.remove(id),
                    notes: Vec::new(),
                };
                let item = self.item(ItemDetails::CommandExecution(run.clone()));
                out.push(ThreadEvent::ItemStarted { item: item.clone() });
                self.running.insert(
                    *id,
                    Running {
                        item_id: item.id,
                        run,
                        output: AggregatedOutput::default(),
                        sent_at: Instant::now(),
                        changed: false,
                    },
                );
            }
            Event::OutputDelta { id, text, .. } => {
                if let Some(running) = self.running.get_mut(id) {
                    running.push(text);
                }
                if let Some((_, _, output)) = self.calls.get_mut(id) {
                    output.push_str(text);
                }
                out.extend(self.tick());
            }
            Event::OutputSkipped { id, bytes } => {
                if let Some(running) = self.running.get_mut(id) {
                    running.push(&format!("\n[… {bytes} bytes of output skipped …]\n"));
                }
            }
            Event::Image { id, path, .. } => {
                if let Some(running) = self.running.get_mut(id) {
                    running.run.images.push(path.clone());
                }
            }
            Event::SandboxDenied { id, message, .. } => {
                if let Some(running) = self.running.get_mut(id) {
                    running.run.notes.push(message.clone());
                }
            }
            Event::RunFinished {
                id,
                status,
                duration_ms,
                ..
            } => {
                if let Some((item_id, mut call, output)) = self.calls.remove(id) {
                    let output = output.trim_end().to_owned();
                    call.duration_ms = Some(*duration_ms);
                    if *status == RunStatus::Ok {
                        call.status = McpToolCallStatus::Completed;
                        call.result = Some(McpToolCallResult {
                            content: vec![serde_json::json!({"type": "text", "text": output})],
                            structured_content: None,
                        });
                    } else {
                        call.status = McpToolCallStatus::Failed;
                        call.error = Some(ErrorMessage {
                            message: if output.is_empty() {
                                format!("{status:?}")
                            } else {
                                output
                            },
                        });
                    }
                    out.push(ThreadEvent::ItemCompleted {
                        item: ThreadItem {
                            id: item_id,
                            details: ItemDetails::McpToolCall(call),
                        },
                    });
                }
                if let Some(mut running) = self.running.remove(id) {
                    let (exit_code, ok) = exit_code(status);
                    running.run.exit_code = exit_code;
                    running.run.status = if ok {
                        CommandStatus::Completed
                    } else {
                        CommandStatus::Failed
                    };
                    running.run.duration_ms = Some(*duration_ms);
                    out.push(ThreadEvent::ItemCompleted {
                        item: running.item(),
                    });
                }
            }
            Event::RunSkipped { id, reason } => {
                if let Some((language, code)) = self.proposed.remove(id) {
                    let note = match reason {
                        SkipReason::Declined => "declined by the user".to_owned(),
                        SkipReason::NoApprover => {
                            "not run: it needed a person's approval, which could not be asked for"
                                .to_owned()
                        }
                        SkipReason::Unavailable { message } => message.clone(),
                    };
                    if language == oi_protocol::EDIT_LANGUAGE {
                        let item = self.item(ItemDetails::FileChange {
                            changes: diff_changes(&code),
                            status: PatchStatus::Failed,
                        });
                        out.push(ThreadEvent::ItemCompleted { item });
                        return out;
                    }
                    if language == oi_protocol::MCP_LANGUAGE
                        && let Some((server, tool, arguments)) =
                            oi_protocol::parse_mcp_call_text(&code)
                    {
                        let item = self.item(ItemDetails::McpToolCall(McpToolCall {
                            server,
                            tool,
                            arguments,
                            result: None,
                            error: Some(ErrorMessage { message: note }),
                            status: McpToolCallStatus::Failed,
                            duration_ms: None,
                            checkpoint: None,
                        }));
                        out.push(ThreadEvent::ItemCompleted { item });
                        return out;
                    }
                    let item = self.item(ItemDetails::CommandExecution(CommandExecution {
                        command: code,
                        aggregated_output: String::new(),
                        exit_code: None,
                        status: CommandStatus::Declined,
                        language,
                        duration_ms: None,
                        images: Vec::new(),
                        checkpoint: None,
                        notes: vec![note],
                    }));
                    out.push(ThreadEvent::ItemCompleted { item });
                }
            }
            Event::Usage { last, cost_usd, .. } => {
                self.usage.input_tokens += last.input_tokens;
                self.usage.cached_input_tokens += last.cached_input_tokens;
                self.usage.output_tokens += last.output_tokens;
                self.usage.cache_write_input_tokens += last.cache_write_input_tokens;
                self.usage.reasoning_output_tokens += last.reasoning_output_tokens;
                self.cost_now = *cost_usd;
            }
            Event::Warning { message } => {
                let item = self.item(ItemDetails::Error {
                    message: message.clone(),
                });
                out.push(ThreadEvent::ItemCompleted { item });
            }
            Event::Error { message, hint } => {
                self.error = Some(match hint {
                    Some(hint) => format!("{message} (hint: {hint})"),
                    None => message.clone(),
                });
            }
            Event::TaskComplete { reason, .. } => {
                if let Some(answer) = self.answer.take() {
                    self.pending_message = Some(answer);
                }
                self.flush_message(&mut out);
                out.push(match stop_message(reason) {
                    None => ThreadEvent::TurnCompleted {
                        usage: Usage {
                            cost_usd: self.turn_cost(),
                            ..self.usage
                        },
                    },
                    Some(message) => ThreadEvent::TurnFailed {
                        error: ErrorMessage {
                            message: self.error.take().unwrap_or(message),
                        },
                    },
                });
            }
            _ => {}
        }
        out
    }

    fn turn_cost(&self) -> Option<f64> {
        let now = self.cost_now?;
        Some(now - self.cost_at_start.unwrap_or(0.0))
    }
}

/// The files a unified diff changes, from its `---`/`+++` headers.
fn diff_changes(diff: &str) -> Vec<FileUpdateChange> {
    let mut changes = Vec::new();
    let mut from: Option<&str> = None;
    for line in diff.lines() {
        if let Some(path) = line.strip_prefix("--- ") {
            from = Some(path.trim());
        } else if let (Some(to), Some(old)) = (line.strip_prefix("+++ "), from.take()) {
            let to = to.trim();
            let (path, kind) = if old == "/dev/null" {
                (to, PatchChangeKind::Add)
            } else if to == "/dev/null" {
                (old, PatchChangeKind::Delete)
            } else {
                (to, PatchChangeKind::Update)
            };
            let path = path
                .strip_prefix("a/")
                .or_else(|| path.strip_prefix("b/"))
                .unwrap_or(path);
            changes.push(FileUpdateChange {
                path: path.to_owned(),
                kind,
            });
        }
    }
    changes
}

/// A run's exit code as Codex reports it, and whether it ran well: the
/// shell's own code; for other languages 0, or 1 when the code raised; 130
/// when interrupted, 124 at its time limit; none when the kernel died or
/// the program waited for input.
pub fn exit_code(status: &RunStatus) -> (Option<i32>, bool) {
    match status {
        RunStatus::Ok => (Some(0), true),
        RunStatus::Failed {
            exit_code: Some(code),
            ..
        } => (Some(*code), false),
        RunStatus::Failed {
            exit_code: None, ..
        } => (Some(1), false),
        RunStatus::Interrupted => (Some(130), false),
        RunStatus::TimedOut { .. } => (Some(124), false),
        RunStatus::Crashed { .. } | RunStatus::WaitingForInput { .. } => (None, false),
    }
}

/// Why a turn failed, in words, when it did not end with the model's
/// answer (`None` for [`StopReason::Done`]).
pub fn stop_message(reason: &StopReason) -> Option<String> {
    Some(match reason {
        StopReason::Done => return None,
        StopReason::Failed => "the turn failed".to_owned(),
        StopReason::MaxTurns { limit } => {
            format!("stopped after {limit} model requests (the max_turns limit)")
        }
        StopReason::Budget { limit_usd, .. } => {
            format!("stopped: the next request would pass the budget of ${limit_usd:.2}")
        }
        StopReason::LoopGuard { summary, .. } => {
            format!("stopped: the task was going in circles: {summary}")
        }
        StopReason::TimeLimit { limit_secs } => {
            format!("stopped: the turn reached its time limit of {limit_secs} s")
        }
        StopReason::Interrupted => "interrupted".to_owned(),
        StopReason::FailSafe => {
            "stopped: the mouse was moved into a corner of the screen (OS mode's fail-safe)"
                .to_owned()
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use oi_protocol::{HarnessKind, OutputStream, Usage as OiUsage};
    use pretty_assertions::assert_eq;

    fn lines(mapper: &mut ExecMapper, events: &[Event]) -> Vec<String> {
        events
            .iter()
            .flat_map(|e| mapper.event(e))
            .map(|e| serde_json::to_string(&e).unwrap())
            .collect()
    }

    /// Regression: once output went to the tail, a later small piece went
    /// back to the head when it fitted there, out of order.
    #[test]
    fn aggregated_output_keeps_order_and_says_what_it_left_out() {
        let half = MAX_AGGREGATED_OUTPUT / 2;
        let mut out = AggregatedOutput::default();
        out.push(&"a".repeat(half - 10));
        out.push(&"b".repeat(20));
        out.push("c");
        let text = out.text();
        assert_eq!(text.len(), half - 10 + 21);
        assert!(text.ends_with(&format!("{}c", "b".repeat(20))), "in order");
        out.push(&"d".repeat(half));
        let text = out.text();
        assert!(text.starts_with(&"a".repeat(half - 10)));
        assert!(
            text.contains("[… 21 bytes of output left out …]"),
            "{}",
            &text[half - 20..half + 40]
        );
        assert!(text.ends_with(&"d".repeat(half)));
    }

    fn usage(input: u64, output: u64) -> OiUsage {
        OiUsage {
            input_tokens: input,
            output_tokens: output,
            ..OiUsage::default()
        }
    }

    #[test]
    fn a_turn_with_a_run_reads_as_codex_prints_it() {
        let mut m = ExecMapper::new();
        let id = RunId(1);
        let got = lines(
            &mut m,
            &[
                Event::SessionConfigured {
                    session_id: Some("20261201-101500-3fa9".into()),
                    model: "m".into(),
                    harness: HarnessKind::Native,
                    languages: vec!["python".into()],
                    cwd: "/w".into(),
                    transcript: None,
                },
                Event::TaskStarted,
                Event::ModelRequest { turn: 1 },
                Event::Reasoning {
                    text: "Six sevens.".into(),
                },
                Event::AssistantMessage {
                    text: "Let me count.".into(),
                },
                Event::Usage {
                    last: usage(100, 10),
                    total: usage(100, 10),
                    cost_usd: Some(0.001),
                },
                Event::CodeProposed {
                    id,
                    language: "python".into(),
                    code: "print(6 * 7)".into(),
                },
                Event::CheckpointSaved {
                    id,
                    checkpoint: "3fa9c0d2e1b4".into(),
                    skipped: Vec::new(),
                },
                Event::RunStarted {
                    id,
                    language: "python".into(),
                    code: "print(6 * 7)".into(),
                },
                Event::OutputDelta {
                    id,
                    stream: OutputStream::Stdout,
                    text: "42\n".into(),
                },
                Event::RunFinished {
                    id,
                    status: RunStatus::Ok,
                    duration_ms: 12,
                    output_bytes: 3,
                },
                Event::FilesChanged {
                    id,
                    changes: vec![
                        oi_protocol::FileChange {
                            path: "out.txt".into(),
                            kind: FileChangeKind::Added,
                        },
                        oi_protocol::FileChange {
                            path: "data.csv".into(),
                            kind: FileChangeKind::Modified,
                        },
                    ],
                },
                Event::AssistantMessage {
                    text: "It is 42.".into(),
                },
                Event::Usage {
                    last: usage(150, 5),
                    total: usage(250, 15),
                    cost_usd: Some(0.003),
                },
                Event::TaskComplete {
                    reason: StopReason::Done,
                    final_message: Some("It is 42.".into()),
                },
            ],
        );
        assert_eq!(
            got,
            [
                r#"{"type":"thread.started","thread_id":"20261201-101500-3fa9"}"#,
                r#"{"type":"turn.started"}"#,
                r#"{"type":"item.completed","item":{"id":"item_0","type":"reasoning","text":"Six sevens."}}"#,
                r#"{"type":"item.completed","item":{"id":"item_1","type":"agent_message","text":"Let me count."}}"#,
                r#"{"type":"item.started","item":{"id":"item_2","type":"command_execution","command":"print(6 * 7)","aggregated_output":"","status":"in_progress","language":"python","checkpoint":"3fa9c0d2e1b4"}}"#,
                r#"{"type":"item.completed","item":{"id":"item_2","type":"command_execution","command":"print(6 * 7)","aggregated_output":"42\n","exit_code":0,"status":"completed","language":"python","duration_ms":12,"checkpoint":"3fa9c0d2e1b4"}}"#,
                r#"{"type":"item.completed","item":{"id":"item_3","type":"file_change","changes":[{"path":"out.txt","kind":"add"},{"path":"data.csv","kind":"update"}],"status":"completed"}}"#,
                r#"{"type":"item.completed","item":{"id":"item_4","type":"agent_message","text":"It is 42."}}"#,
                r#"{"type":"turn.completed","usage":{"input_tokens":250,"cached_input_tokens":0,"output_tokens":15,"cache_write_input_tokens":0,"reasoning_output_tokens":0,"cost_usd":0.003}}"#,
            ]
        );
    }

    #[test]
    fn failures_declines_and_limits_are_said() {
        let mut m = ExecMapper::new();
        let got = lines(
            &mut m,
            &[
                Event::TaskStarted,
                Event::CodeProposed {
                    id: RunId(1),
                    language: "shell".into(),
                    code: "git push --force".into(),
                },
                Event::RunSkipped {
                    id: RunId(1),
                    reason: SkipReason::NoApprover,
                },
                Event::CodeProposed {
                    id: RunId(2),
                    language: "shell".into(),
                    code: "false".into(),
                },
                Event::RunStarted {
                    id: RunId(2),
                    language: "shell".into(),
                    code: "false".into(),
                },
                Event::RunFinished {
                    id: RunId(2),
                    status: RunStatus::Failed {
                        exit_code: Some(1),
                        error: None,
                    },
                    duration_ms: 1,
                    output_bytes: 0,
                },
                Event::TaskComplete {
                    reason: StopReason::MaxTurns { limit: 2 },
                    final_message: None,
                },
                Event::TaskStarted,
                Event::Error {
                    message: "the server said no".into(),
                    hint: Some("check the key".into()),
                },
                Event::TaskComplete {
                    reason: StopReason::Failed,
                    final_message: None,
                },
            ],
        );
        let values: Vec<serde_json::Value> = got
            .iter()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(values[1]["item"]["status"], "declined");
        assert_eq!(
            values[1]["item"]["notes"][0],
            "not run: it needed a person's approval, which could not be asked for"
        );
        assert_eq!(values[3]["item"]["status"], "failed");
        assert_eq!(values[3]["item"]["exit_code"], 1);
        assert_eq!(
            values[4],
            serde_json::json!({"type": "turn.failed", "error": {"message": "stopped after 2 model requests (the max_turns limit)"}})
        );
        assert_eq!(
            values[6],
            serde_json::json!({"type": "turn.failed", "error": {"message": "the server said no (hint: check the key)"}})
        );
    }

    #[test]
    fn running_output_is_updated_and_kept_to_its_head_and_tail() {
        let id = RunId(1);
        let start = [
            Event::CodeProposed {
                id,
                language: "shell".into(),
                code: "yes".into(),
            },
            Event::RunStarted {
                id,
                language: "shell".into(),
                code: "yes".into(),
            },
        ];
        let delta = |text: &str| Event::OutputDelta {
            id,
            stream: OutputStream::Stdout,
            text: text.into(),
        };
        let mut m = ExecMapper::with_update_interval(Duration::ZERO);
        m.event(&start[0]);
        m.event(&start[1]);
        let updated = m.event(&delta("a\n"));
        let [ThreadEvent::ItemUpdated { item }] = updated.as_slice() else {
            panic!("{updated:?}");
        };
        assert!(
            matches!(&item.details, ItemDetails::CommandExecution(run) if run.aggregated_output == "a\n" && run.status == CommandStatus::InProgress)
        );
        // Nothing new, nothing sent.
        assert!(m.tick().is_empty());

        // With the usual interval, a burst of output is one update later.
        let mut m = ExecMapper::new();
        m.event(&start[0]);
        m.event(&start[1]);
        let half = MAX_AGGREGATED_OUTPUT / 2;
        let mut sent = Vec::new();
        sent.extend(m.event(&delta(&"h".repeat(half))));
        sent.extend(m.event(&delta(&"m".repeat(3 * half))));
        sent.extend(m.event(&delta(&"é".repeat(half / 2))));
        assert!(sent.is_empty(), "updated before the interval");
        let done = m.event(&Event::RunFinished {
            id,
            status: RunStatus::Ok,
            duration_ms: 5,
            output_bytes: 0,
        });
        let [ThreadEvent::ItemCompleted { item }] = done.as_slice() else {
            panic!("{done:?}");
        };
        let ItemDetails::CommandExecution(run) = &item.details else {
            panic!("{item:?}");
        };
        let output = &run.aggregated_output;
        assert!(output.starts_with(&"h".repeat(half)));
        assert!(output.ends_with(&"é".repeat(half / 2)));
        assert!(output.contains(&format!("[… {} bytes of output left out …]", 3 * half)));
        assert!(output.len() < MAX_AGGREGATED_OUTPUT + 100);
    }

    #[test]
    fn a_structured_answer_replaces_the_last_reply() {
        let mut m = ExecMapper::new();
        let mut got = lines(
            &mut m,
            &[
                Event::TaskStarted,
                Event::AssistantMessage {
                    text: "```json\n{\"n\": 42}\n```".into(),
                },
            ],
        );
        m.set_answer("{\"n\":42}".into());
        got.extend(lines(
            &mut m,
            &[Event::TaskComplete {
                reason: StopReason::Done,
                final_message: None,
            }],
        ));
        assert_eq!(
            got[1],
            r#"{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"{\"n\":42}"}}"#
        );
    }

    #[test]
    fn mcp_tool_calls_are_mcp_tool_call_items() {
        let mut m = ExecMapper::new();
        let code = r#"docs.search {"q":"x"}"#.to_owned();
        let started = m.event(&Event::RunStarted {
            id: RunId(1),
            language: "mcp".into(),
            code: code.clone(),
        });
        let started = serde_json::to_value(&started[0]).unwrap();
        assert_eq!(started["type"], "item.started");
        assert_eq!(started["item"]["type"], "mcp_tool_call");
        assert_eq!(started["item"]["server"], "docs");
        assert_eq!(started["item"]["tool"], "search");
        assert_eq!(started["item"]["arguments"], serde_json::json!({"q": "x"}));
        assert_eq!(started["item"]["status"], "in_progress");
        m.event(&Event::OutputDelta {
            id: RunId(1),
            stream: oi_protocol::OutputStream::Stdout,
            text: "found\n".into(),
        });
        let done = m.event(&Event::RunFinished {
            id: RunId(1),
            status: RunStatus::Ok,
            duration_ms: 4,
            output_bytes: 6,
        });
        let done = serde_json::to_value(&done[0]).unwrap();
        assert_eq!(done["item"]["status"], "completed");
        assert_eq!(
            done["item"]["result"]["content"],
            serde_json::json!([{"type": "text", "text": "found"}])
        );
        assert_eq!(done["item"]["error"], serde_json::Value::Null);
        // Not approved: a failed call, saying why.
        m.event(&Event::CodeProposed {
            id: RunId(2),
            language: "mcp".into(),
            code: code.clone(),
        });
        let skipped = m.event(&Event::RunSkipped {
            id: RunId(2),
            reason: SkipReason::Declined,
        });
        let skipped = serde_json::to_value(&skipped[0]).unwrap();
        assert_eq!(skipped["item"]["status"], "failed");
        assert_eq!(skipped["item"]["error"]["message"], "declined by the user");
    }

    #[test]
    fn file_edits_are_file_change_items_not_commands() {
        let mut m = ExecMapper::new();
        let diff = "--- a/app.py\n+++ b/app.py\n@@ -1 +1 @@\n-x\n+y\n--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+hi\n".to_owned();
        let mut out = Vec::new();
        for event in [
            Event::CodeProposed {
                id: RunId(1),
                language: "edit".into(),
                code: diff.clone(),
            },
            Event::RunStarted {
                id: RunId(1),
                language: "edit".into(),
                code: diff.clone(),
            },
            Event::RunFinished {
                id: RunId(1),
                status: RunStatus::Ok,
                duration_ms: 1,
                output_bytes: 0,
            },
            Event::FilesChanged {
                id: RunId(1),
                changes: vec![oi_protocol::FileChange {
                    path: "app.py".into(),
                    kind: FileChangeKind::Modified,
                }],
            },
        ] {
            out.extend(m.event(&event));
        }
        let out: Vec<serde_json::Value> = out
            .iter()
            .map(|e| serde_json::to_value(e).unwrap())
            .collect();
        assert_eq!(out.len(), 1, "{out:#?}");
        assert_eq!(out[0]["item"]["type"], "file_change");
        assert_eq!(out[0]["item"]["status"], "completed");
        // Declined: a failed file_change naming the files.
        m.event(&Event::CodeProposed {
            id: RunId(2),
            language: "edit".into(),
            code: diff,
        });
        let skipped = m.event(&Event::RunSkipped {
            id: RunId(2),
            reason: SkipReason::Declined,
        });
        let skipped = serde_json::to_value(&skipped[0]).unwrap();
        assert_eq!(skipped["item"]["status"], "failed");
        assert_eq!(
            skipped["item"]["changes"],
            serde_json::json!([{"path": "app.py", "kind": "update"}, {"path": "new.txt", "kind": "add"}])
        );
    }
}
