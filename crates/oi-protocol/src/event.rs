//! What the agent tells its front ends, in order, as it works.

use serde::{Deserialize, Serialize};

use crate::{ApprovalPolicy, HarnessKind, Usage};

/// Identifies one proposed run of code within a session (1, 2, 3 …).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct RunId(pub u64);

impl std::fmt::Display for RunId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// One event of the agent's stream. The JSON form (`{"type": "text_delta", …}`)
/// is what `interpreter exec --oi-json` prints, one event per line; every
/// object in it names its kind in `type` (docs/events.md).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    /// The agent is ready; sent once, first.
    SessionConfigured {
        /// The session's id, when it is recorded: `--resume ID` (and a
        /// Codex client's `resume THREAD_ID`) takes it up again.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        session_id: Option<String>,
        model: String,
        harness: HarnessKind,
        /// Languages whose kernels are available, in the order the model sees them.
        languages: Vec<String>,
        cwd: String,
        /// The session's transcript file, when one is written.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        transcript: Option<String>,
    },
    /// The model was changed (`Op::SetModel`); later requests use it.
    ModelChanged { model: String },
    /// The harness was changed (`Op::SetHarness`).
    HarnessChanged { harness: HarnessKind },
    /// The approval policy was changed (`Op::SetApproval`).
    ApprovalChanged { policy: ApprovalPolicy },
    /// `Op::Reset`: the conversation was forgotten and the kernels stopped
    /// (they start afresh on the next run).
    SessionReset,
    /// The conversation was made smaller to fit the context window (or on
    /// `Op::Compact`): `shrunk_outputs` old outputs cut to head and tail,
    /// `summarized_messages` older messages replaced by a summary.
    Compacted {
        before_tokens: u64,
        after_tokens: u64,
        context_window: u32,
        shrunk_outputs: usize,
        summarized_messages: usize,
    },
    /// `Op::Stats`: the session's figures.
    Stats {
        /// The next request's size, estimated (about four characters per
        /// token).
        context_tokens: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        context_window: Option<u32>,
        /// What the next request would cost (its input, and a typical
        /// reply), when prices are known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        next_request_usd: Option<f64>,
        total: Usage,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cost_usd: Option<f64>,
        requests: u32,
        messages: usize,
    },
    /// `Op::Save`: the conversation was written to `path`.
    Saved { path: String, messages: usize },
    /// `Op::Load`: the conversation was read from `path`.
    Loaded { path: String, messages: usize },
    /// `Op::Restore`: the conversation was replaced.
    Restored { messages: usize },
    /// `Op::SystemPrompt`: the system prompt the model is sent now.
    SystemPrompt { text: String },
    /// A model request as sent, in its wire's JSON (after `Op::SetVerbose`).
    RawRequest { body: serde_json::Value },
    /// A task (one user input) has started.
    TaskStarted,
    /// A request to the model is about to be sent; `turn` counts the requests of
    /// the current task from 1.
    ModelRequest { turn: u32 },
    /// The request failed in a way worth retrying; the agent waits `delay_ms`
    /// and tries again.
    Retrying {
        attempt: u32,
        max_attempts: u32,
        delay_ms: u64,
        reason: String,
    },
    /// A piece of the model's reply text, as it streams.
    TextDelta { delta: String },
    /// A piece of the model's reasoning (its thinking text, or a summary
    /// of it), as it streams. Not part of the answer.
    ReasoningDelta { delta: String },
    /// The reasoning of the reply just completed, all of it (sent before
    /// its `AssistantMessage`, when the model reasoned in words).
    Reasoning { text: String },
    /// The reply started over after a broken connection and says something
    /// else: the text shown since the last `ModelRequest` is void.
    ReplyRestarted,
    /// The model's reply is complete; `text` is all of its text.
    AssistantMessage { text: String },
    /// The model proposed code to run.
    CodeProposed {
        id: RunId,
        language: String,
        code: String,
    },
    /// The run waits for the user's decision: answer with `Op::Approve`.
    /// `risks` says why risky code is asked about (even when runs are
    /// otherwise approved automatically).
    ApprovalRequested {
        id: RunId,
        language: String,
        code: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        risks: Vec<String>,
    },
    /// The code starts running (`code` is what really runs, after any edit).
    RunStarted {
        id: RunId,
        language: String,
        code: String,
    },
    /// Output of the running code, as it arrives.
    OutputDelta {
        id: RunId,
        stream: OutputStream,
        text: String,
    },
    /// Output came faster than it can usefully be shown, so `bytes` of it
    /// were skipped here (the model still gets the start and the end, and
    /// the end of the run's output is always shown).
    OutputSkipped { id: RunId, bytes: u64 },
    /// The run has ended.
    RunFinished {
        id: RunId,
        status: RunStatus,
        duration_ms: u64,
        /// Bytes of output the run produced (all of it, though the model and
        /// the screen may get less).
        #[serde(default)]
        output_bytes: u64,
    },
    /// The running program waits for input on stdin: answer with
    /// `Op::Input` (or `Op::Interrupt`). `prompt` is the last line it printed.
    InputRequested { id: RunId, prompt: String },
    /// The run produced an image file (a plot).
    Image {
        id: RunId,
        path: String,
        media_type: String,
    },
    /// The sandbox refused something the run tried (a write outside the
    /// allowed folders, a network connection); the model is told too.
    SandboxDenied {
        id: RunId,
        /// `blocked by sandbox: …`
        message: String,
        /// How the user can allow it.
        hint: String,
    },
    /// The workspace was saved before run `id` (a new checkpoint); files
    /// too large to keep are named in `skipped`.
    CheckpointSaved {
        id: RunId,
        checkpoint: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        skipped: Vec<String>,
    },
    /// Run `id` changed these files of the workspace (what differs from
    /// the checkpoint taken before it; files over the checkpoints' size
    /// limit and ignored ones are not followed).
    FilesChanged { id: RunId, changes: Vec<FileChange> },
    /// `Op::Undo` restored the workspace to `checkpoint` (taken `message`,
    /// e.g. "before run 3: …"); `changes` lists what it changed back.
    /// `previous` is the checkpoint of the state just before, to undo the
    /// undo.
    Undone {
        checkpoint: String,
        message: String,
        changes: Vec<String>,
        previous: String,
    },
    /// The proposed code was not run; the model is told why.
    RunSkipped { id: RunId, reason: SkipReason },
    /// Tokens used by the last request, and by the whole session so far,
    /// with the session's cost in USD when the model's prices are known.
    Usage {
        last: Usage,
        total: Usage,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cost_usd: Option<f64>,
    },
    /// Something the user should know that does not stop the task.
    Warning { message: String },
    /// The task failed; a `TaskComplete` with `StopReason::Failed` follows.
    Error {
        message: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        hint: Option<String>,
    },
    /// The task has ended; the agent waits for the next input.
    TaskComplete {
        reason: StopReason,
        /// The model's last reply (its answer) when the task ended normally.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        final_message: Option<String>,
    },
    /// The agent has stopped and released its kernels; sent last.
    ShutdownComplete,
}

/// A file a run added, changed or deleted (its path relative to the
/// workspace).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileChange {
    pub path: String,
    pub kind: FileChangeKind,
}

/// What happened to a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FileChangeKind {
    Added,
    Modified,
    Deleted,
}

/// Which stream of the running code a piece of output came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OutputStream {
    Stdout,
    Stderr,
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum RunStatus {
    /// The code ran to its end.
    Ok,
    /// The code raised an exception (Python) or exited non-zero (shell).
    Failed {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        exit_code: Option<i32>,
        /// The exception, e.g. `ZeroDivisionError: division by zero`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
    /// The kernel process died during the run; its state is lost and the next
    /// run starts a fresh one. `reason` says how it ended (exit code, signal).
    Crashed { reason: String },
    /// The run was stopped by the user.
    Interrupted,
    /// The run reached its time limit (`run_timeout`) and was stopped; if it
    /// did not stop, its kernel was killed and restarted (state lost).
    TimedOut {
        seconds: u64,
        kernel_restarted: bool,
    },
    /// The program waited for input on stdin that nobody could give, so the
    /// run was stopped; `prompt` is the last line it printed.
    WaitingForInput { prompt: String },
}

/// Why proposed code was not run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum SkipReason {
    /// The user said no.
    Declined,
    /// Approval was needed but nobody could give it (no terminal, no `--yes`).
    NoApprover,
    /// The language cannot run here (unknown, not installed, or its kernel
    /// failed to start); `message` says which and why.
    Unavailable { message: String },
}

/// Why a task ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum StopReason {
    /// The model answered without proposing code.
    Done,
    /// The task reached `max_turns` model requests.
    MaxTurns { limit: u32 },
    /// The next request would have taken the session past `max_budget`.
    Budget {
        limit_usd: f64,
        spent_usd: f64,
        next_usd: f64,
    },
    /// The loop guard stopped a task that kept repeating itself: the same
    /// error, or the same code, `repeats` times in a row.
    LoopGuard { repeats: u32, summary: String },
    /// The task reached its time limit (`max_time`).
    TimeLimit { limit_secs: u64 },
    /// An error stopped the task (see the preceding `Error` event).
    Failed,
    /// The user interrupted the task.
    Interrupted,
    /// OS mode: the user threw the mouse into a corner of the screen, which
    /// stops every action at once.
    FailSafe,
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn events_serialize_with_a_type_tag() {
        let events = [
            Event::RunFinished {
                id: RunId(3),
                status: RunStatus::Failed {
                    exit_code: Some(1),
                    error: None,
                },
                duration_ms: 12,
                output_bytes: 0,
            },
            Event::TaskComplete {
                reason: StopReason::MaxTurns { limit: 5 },
                final_message: None,
            },
            Event::RunSkipped {
                id: RunId(1),
                reason: SkipReason::NoApprover,
            },
        ];
        let lines: Vec<String> = events
            .iter()
            .map(|e| serde_json::to_string(e).unwrap())
            .collect();
        assert_eq!(
            lines,
            [
                r#"{"type":"run_finished","id":3,"status":{"type":"failed","exit_code":1},"duration_ms":12,"output_bytes":0}"#,
                r#"{"type":"task_complete","reason":{"type":"max_turns","limit":5}}"#,
                r#"{"type":"run_skipped","id":1,"reason":{"type":"no_approver"}}"#,
            ]
        );
        for (line, event) in lines.iter().zip(&events) {
            assert_eq!(&serde_json::from_str::<Event>(line).unwrap(), event);
        }
    }

    #[test]
    fn the_documented_example_is_the_real_stream() {
        // docs/events.md is the public contract: its example must be what
        // the types read and write, byte for byte.
        let doc = include_str!("../../../docs/events.md");
        let block = doc
            .split("```json\n")
            .nth(1)
            .and_then(|rest| rest.split("```").next())
            .unwrap();
        let mut lines = 0;
        for line in block.lines() {
            let event: Event = serde_json::from_str(line).unwrap_or_else(|e| panic!("{line}: {e}"));
            assert_eq!(serde_json::to_string(&event).unwrap(), line);
            lines += 1;
        }
        assert!(lines >= 10, "{lines} lines");
    }
}
