//! Running what the model proposed: for each piece of code, its language,
//! its risks, the user's approval, a checkpoint, the run in its kernel
//! with output streamed, and the result the model reads (sandbox refusals
//! explained, images attached).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use oi_kernels::{RunControl, RunEvent};
use oi_protocol::{ContentPart, Event, OutputStream, RunId, RunStatus, SkipReason};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::Session;
use super::approval::Gate;
use super::history::{MAX_IMAGES_PER_RUN, image_part};
use crate::config::OsMode;
use crate::harness::{Action, ProposedRun, Report, language};
use crate::output::{DisplayPacer, HeadTail, Shown, describe_run};

/// Why a batch of runs stopped early.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Halt {
    Interrupted,
    /// OS mode's fail-safe: the mouse was thrown into a screen corner.
    FailSafe,
}

impl Session {
    /// Runs (or declines, or reports as invalid) each action in order.
    pub(super) async fn execute(
        &mut self,
        actions: Vec<Action>,
        cancel: &CancellationToken,
    ) -> (Vec<Report>, Option<Halt>) {
        let mut reports = Vec::new();
        // Once the user declines (or cannot be asked), the rest of the reply,
        // which likely builds on the declined run, is not run either.
        let mut skip_rest: Option<SkipReason> = None;
        for action in actions {
            let (report, halt) = match action {
                Action::Run(proposed) => self.run_step(proposed, &mut skip_rest, cancel).await,
                Action::Invalid { call_id, message } => (
                    Report {
                        call_id,
                        language: String::new(),
                        text: message,
                        images: Vec::new(),
                    },
                    None,
                ),
                Action::RestartShell { call_id } => (self.restart_shell(call_id), None),
                Action::Edit {
                    call_id,
                    tool,
                    input,
                } => {
                    self.edit_step(call_id, tool, input, &mut skip_rest, cancel)
                        .await
                }
                Action::Mcp {
                    call_id,
                    tool,
                    arguments,
                } => {
                    self.mcp_step(call_id, &tool, &arguments, &mut skip_rest, cancel)
                        .await
                }
                Action::Computer { call_id, action } => {
                    self.computer_step(call_id, action, &mut skip_rest, cancel)
                        .await
                }
            };
            reports.push(report);
            if halt.is_some() {
                return (reports, halt);
            }
        }
        (reports, None)
    }

    /// One run of code: its language, risks, approval, checkpoint and run.
    async fn run_step(
        &mut self,
        proposed: ProposedRun,
        skip_rest: &mut Option<SkipReason>,
        cancel: &CancellationToken,
    ) -> (Report, Option<Halt>) {
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

        let asked = asked_language(language.as_deref(), &code);
        let Some(language) = self.language_for(&asked, &code) else {
            let message = format!(
                "Not run: `{asked}` cannot run here. Available languages: {}.",
                self.languages.join(", ")
            );
            let id = self.propose(&asked, &code);
            self.emit(Event::RunSkipped {
                id,
                reason: SkipReason::Unavailable {
                    message: message.clone(),
                },
            });
            return (report(&asked, message), None);
        };
        let id = self.propose(&language, &code);
        self.guard.proposed(&language, &code);

        let mut risks: Vec<String> =
            oi_sandbox::assess(&language, &code, &self.risk_context(&language))
                .iter()
                .map(ToString::to_string)
                .collect();
        risks.extend(self.mcp_code_risks(&language, &code));
        let gate = self
            .gate(id, &language, &code, risks.clone(), skip_rest, cancel)
            .await;
        let (code, edited, asked) = match gate {
            Gate::Go {
                edited: None,
                asked,
            } => (code, false, asked),
            Gate::Go {
                edited: Some(edited),
                asked,
            } => (edited, true, asked),
            Gate::AfterRefusal(SkipReason::NoApprover) => {
                let text = "Not run: it needed the user's approval, which could not be asked for.";
                return (report(&language, text.to_owned()), None);
            }
            Gate::AfterRefusal(_) => {
                let text = "Not run: the user declined an earlier run of this reply.";
                return (report(&language, text.to_owned()), None);
            }
            Gate::Refused(SkipReason::NoApprover) => {
                let text = if risks.is_empty() {
                    "Not run: this session cannot ask the user for approval (it has no terminal), and running code without approval was not allowed. The user can rerun with `--yes` to let code run.".to_owned()
                } else {
                    format!(
                        "Not run: this code looks risky — {} — so it needs the user's approval, which cannot be asked for in this session (no terminal). Do the task without that step if you can; otherwise say what you would run and why, and let the user decide.",
                        risks.join("; ")
                    )
                };
                return (report(&language, text), None);
            }
            Gate::Refused(_) => {
                let text = "The user declined to run this code.";
                return (report(&language, text.to_owned()), None);
            }
            Gate::Interrupted => {
                let text = "Not run: the user interrupted the task.";
                return (report(&language, text.to_owned()), Some(Halt::Interrupted));
            }
        };

        // Code may call MCP tools that are not read-only only when a
        // person approved it (or the policy never asks).
        self.mcp_gate.store(
            asked || self.config.approval == oi_protocol::ApprovalPolicy::Never,
            std::sync::atomic::Ordering::SeqCst,
        );
        let (status, text, images) = self.run_code(id, &language, &code, cancel).await;
        self.mcp_gate
            .store(false, std::sync::atomic::Ordering::SeqCst);
        if self.config.os.as_ref().is_some_and(OsMode::take_tripped) {
            let text = format!("{text}\n[Stopped by the user with the fail-safe.]");
            return (report(&language, text), Some(Halt::FailSafe));
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
        let interrupted = status == Some(RunStatus::Interrupted) || cancel.is_cancelled();
        (
            Report {
                images,
                ..report(&language, text)
            },
            interrupted.then_some(Halt::Interrupted),
        )
    }

    /// `Op::Run`: code the user runs themselves, without the model and
    /// without asking (they wrote it); checkpointed like every run. The
    /// conversation does not change.
    pub(super) async fn run_as_user(&mut self, language: &str, code: &str) {
        let id = RunId(self.next_run_id);
        self.next_run_id += 1;
        let Some(language) = self.kernels.resolve(language).map(|l| l.name.clone()) else {
            let known = self.languages.join(", ");
            self.emit(Event::RunSkipped {
                id,
                reason: SkipReason::Unavailable {
                    message: format!(
                        "`{language}` is not a language of this session (it has: {known})"
                    ),
                },
            });
            return;
        };
        self.task_started = Instant::now();
        let cancel = self.fresh_cancel_token();
        self.run_code(id, &language, code, &cancel).await;
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
        // The workspace is saved while the kernel starts (both before the
        // run, neither waiting for the other).
        let checkpoints = self.config.checkpoints.clone();
        let message = crate::checkpoint::before_run_message(id.0, code);
        let snapshot = async {
            match &checkpoints {
                Some(checkpoints) => Some(checkpoints.snapshot(&message).await),
                None => None,
            }
        };
        let (started, snapshot) = tokio::join!(self.kernels.start(language), snapshot);
        if let Err(error) = started {
            let message = error.to_string();
            self.emit(Event::RunSkipped {
                id,
                reason: SkipReason::Unavailable {
                    message: message.clone(),
                },
            });
            return (None, format!("Not run: {message}"), Vec::new());
        }
        // The checkpoint before the run, to tell what the run changed.
        let mut before = None;
        if let Some(snapshot) = snapshot {
            if let Ok(saved) = &snapshot {
                before = Some(saved.checkpoint.id.clone());
            }
            self.checkpoint_saved(id, snapshot);
        }
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
        if let Some(before) = &before {
            self.report_changes(id, before).await;
        }
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

    /// Saves the workspace before run `id` (when checkpoints are on);
    /// returns the checkpoint, to tell later what the run changed.
    pub(super) async fn checkpoint_before(&mut self, id: RunId, what: &str) -> Option<String> {
        let checkpoints = self.config.checkpoints.clone()?;
        let message = crate::checkpoint::before_run_message(id.0, what);
        let snapshot = checkpoints.snapshot(&message).await;
        let before = snapshot.as_ref().ok().map(|s| s.checkpoint.id.clone());
        self.checkpoint_saved(id, snapshot);
        before
    }

    /// Tells which files run `id` changed since checkpoint `before`.
    pub(super) async fn report_changes(&mut self, id: RunId, before: &str) {
        let Some(checkpoints) = self.config.checkpoints.clone() else {
            return;
        };
        match checkpoints.changes_since(before).await {
            Ok(changes) if changes.is_empty() => {}
            Ok(changes) => self.emit(Event::FilesChanged { id, changes }),
            Err(error) if !self.checkpoint_warned => {
                self.checkpoint_warned = true;
                self.emit(Event::Warning {
                    message: format!("could not tell which files the run changed: {error}"),
                });
            }
            Err(_) => {}
        }
    }

    /// Records the checkpoint taken before run `id` (a failure is reported
    /// once and does not stop the run).
    fn checkpoint_saved(
        &mut self,
        id: RunId,
        snapshot: Result<crate::checkpoint::Snapshot, crate::CheckpointError>,
    ) {
        match snapshot {
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

    /// The canonical language `run` would run in, if it can run here.
    pub(super) fn runs_as(&self, run: &ProposedRun) -> Option<String> {
        let asked = asked_language(run.language.as_deref(), &run.code);
        self.language_for(&asked, &run.code)
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
}

/// The language a block asks for: its tag, or what its code looks like,
/// or Python when nothing tells.
fn asked_language(tag: Option<&str>, code: &str) -> String {
    tag.map(str::to_owned)
        .or_else(|| language::guess(code).map(str::to_owned))
        .unwrap_or_else(|| "python".to_owned())
}
