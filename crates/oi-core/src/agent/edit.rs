//! File edits of the `claude-code` and `codex` harnesses: a view is
//! answered at once; a change is shown as a diff (language `edit`),
//! confined by the sandbox, approved like code, checkpointed, written, and
//! reported as `files_changed` (so undo takes it back, and `exec --json`
//! shows a `file_change` item).

use std::time::Instant;

use oi_protocol::{
    EDIT_LANGUAGE, Event, FileChange, FileChangeKind, OutputStream, RunStatus, SkipReason,
};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::Session;
use super::approval::Gate;
use super::execute::Halt;
use crate::edits::{self, FileWrite, Plan};
use crate::harness::{EditTool, Report};

impl Session {
    /// `bash` with `restart`: the shell kernel is ended; the next command
    /// gets a fresh one.
    pub(super) fn restart_shell(&mut self, call_id: String) -> Report {
        let text = if self.kernels.stop("shell") {
            "The shell was restarted: the working directory and variables are fresh."
        } else {
            "A fresh shell will start with the next command."
        };
        Report {
            call_id: Some(call_id),
            language: "shell".to_owned(),
            text: text.to_owned(),
            images: Vec::new(),
        }
    }

    /// One call of an edit tool.
    pub(super) async fn edit_step(
        &mut self,
        call_id: String,
        tool: EditTool,
        input: Value,
        skip_rest: &mut Option<SkipReason>,
        cancel: &CancellationToken,
    ) -> (Report, Option<Halt>) {
        let report = |text: String| Report {
            call_id: Some(call_id.clone()),
            language: EDIT_LANGUAGE.to_owned(),
            text,
            images: Vec::new(),
        };
        // Relative paths mean what they mean to the shell.
        let cwd = self.kernels.current_dir("shell");
        let plan = match tool {
            EditTool::TextEditor => edits::text_editor(&cwd, &input),
            EditTool::ApplyPatch => {
                edits::apply_patch(&cwd, input["input"].as_str().unwrap_or_default())
            }
        };
        let writes = match plan {
            Plan::Answer(text) => return (report(text), None),
            Plan::Refused(problem) => return (report(format!("Error: {problem}")), None),
            Plan::Change(writes) => writes,
        };
        let diff = edits::diff(&cwd, &writes);
        let id = self.propose(EDIT_LANGUAGE, &diff);
        self.guard.proposed(EDIT_LANGUAGE, &diff);
        // The sandbox confines edits as it confines code.
        if let Some(policy) = self.kernels.sandbox()
            && let Some(outside) = writes.iter().find(|w| !policy.allows_write(&w.path))
        {
            let message = format!(
                "{} may not be written in this session ({})",
                outside.path.display(),
                policy.summary()
            );
            self.emit(Event::RunSkipped {
                id,
                reason: SkipReason::Unavailable {
                    message: message.clone(),
                },
            });
            return (
                report(format!(
                    "Not changed: {message}. Do not try to get around it; if the change is needed, tell the user."
                )),
                None,
            );
        }
        let refused = match self
            .gate(id, EDIT_LANGUAGE, &diff, Vec::new(), skip_rest, cancel)
            .await
        {
            Gate::Go { edited: None, .. } => None,
            Gate::Go {
                edited: Some(_), ..
            } => {
                self.skip(id, SkipReason::Declined, skip_rest);
                Some(
                    "Not changed: the user edited the diff instead of approving it; ask what they want changed.",
                )
            }
            Gate::AfterRefusal(_) => {
                Some("Not changed: an earlier step of this reply was not approved.")
            }
            Gate::Refused(SkipReason::NoApprover) => Some(
                "Not changed: the change needed the user's approval, which cannot be asked for in this session. The user can rerun with `--yes`.",
            ),
            Gate::Refused(_) => Some("The user declined this change."),
            Gate::Interrupted => {
                return (
                    report("Not changed: the user interrupted the task.".to_owned()),
                    Some(Halt::Interrupted),
                );
            }
        };
        if let Some(text) = refused {
            return (report(text.to_owned()), None);
        }
        let before = self.checkpoint_before(id, &summary(&cwd, &writes)).await;
        self.emit(Event::RunStarted {
            id,
            language: EDIT_LANGUAGE.to_owned(),
            code: diff,
        });
        let started = Instant::now();
        let (status, text) = match edits::write(&writes) {
            Ok(()) => (RunStatus::Ok, summary(&cwd, &writes)),
            Err(problem) => (
                RunStatus::Failed {
                    exit_code: None,
                    error: Some(problem.clone()),
                },
                format!("Error: the change could not be written: {problem}"),
            ),
        };
        self.emit(Event::OutputDelta {
            id,
            stream: if status == RunStatus::Ok {
                OutputStream::Stdout
            } else {
                OutputStream::Stderr
            },
            text: format!("{text}\n"),
        });
        self.guard.ran(&status, &text);
        self.emit(Event::RunFinished {
            id,
            status: status.clone(),
            duration_ms: started.elapsed().as_millis() as u64,
            output_bytes: text.len() as u64,
        });
        match &before {
            Some(before) => self.report_changes(id, before).await,
            // Without checkpoints, what was written is still said.
            None if status == RunStatus::Ok => self.emit(Event::FilesChanged {
                id,
                changes: writes
                    .iter()
                    .map(|w| FileChange {
                        path: w.shown(&cwd),
                        kind: w.kind(),
                    })
                    .collect(),
            }),
            None => {}
        }
        (report(text), None)
    }
}

/// `Edited a.py`, `Created b.txt`, `Deleted c.txt`: one line per file.
fn summary(cwd: &std::path::Path, writes: &[FileWrite]) -> String {
    writes
        .iter()
        .map(|w| {
            let verb = match w.kind() {
                FileChangeKind::Added => "Created",
                FileChangeKind::Deleted => "Deleted",
                FileChangeKind::Modified => "Edited",
            };
            format!("{verb} {}", w.shown(cwd))
        })
        .collect::<Vec<_>>()
        .join("\n")
}
