//! The ops a session handles between tasks: model, harness and approval
//! changes, compaction, reset, figures, saving and loading the
//! conversation, and undo.

use std::path::Path;

use oi_protocol::{ApprovalPolicy, Event, Message, Op, Usage};

use super::Session;

impl Session {
    /// Ops handled between tasks.
    pub(super) async fn control(&mut self, op: Op) {
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
            Op::Export { path, format } => {
                let text = crate::export::render(&self.history, format);
                match fs_err::write(&path, text) {
                    Ok(()) => self.emit(Event::Saved {
                        path,
                        messages: self.history.len(),
                    }),
                    Err(e) => self.emit(Event::Error {
                        message: e.to_string(),
                        hint: Some("give a path in a folder you may write to".to_owned()),
                    }),
                }
            }
            Op::Load { path } => match crate::lmc::read_conversation(Path::new(&path)) {
                Ok((messages, _)) => {
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
                    hint: Some(
                        "give the name of a conversation saved with /save, or the path of one Open Interpreter saved"
                            .to_owned(),
                    ),
                }),
            },
            Op::Restore { messages } => {
                self.history = messages;
                crate::transcript::close_dangling_calls(&mut self.history);
                self.history_epoch += 1;
                self.undo_points.clear();
                self.task_index = None;
                self.emit(Event::Restored {
                    messages: self.history.len(),
                });
            }
            Op::Run { language, code } => self.run_as_user(&language, &code).await,
            Op::SystemPrompt => self.emit(Event::SystemPrompt {
                text: self.system_prompt.clone(),
            }),
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
}

/// A conversation saved with `Op::Save` (read back by
/// [`crate::lmc::read_conversation`]).
#[derive(serde::Serialize, serde::Deserialize)]
pub(crate) struct ConversationFile {
    pub(crate) version: u32,
    pub(crate) model: String,
    pub(crate) harness: String,
    pub(crate) messages: Vec<Message>,
}
