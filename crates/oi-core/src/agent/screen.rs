//! OS mode: one action of the `computer` tool, shown and approved like
//! code (as language `computer`, described in one line), then done on the
//! desktop on a blocking thread, its screenshot sent back.

use std::time::Instant;

use base64::Engine as _;
use oi_protocol::{ContentPart, Event, RunStatus, SkipReason};
use tokio_util::sync::CancellationToken;

use super::Session;
use super::approval::Gate;
use super::execute::Halt;
use crate::harness::Report;

impl Session {
    /// OS mode: one action of the `computer` tool, shown and approved like
    /// code (as language `computer`), then done on the desktop.
    pub(super) async fn computer_step(
        &mut self,
        call_id: String,
        action: oi_computer::Action,
        skip_rest: &mut Option<SkipReason>,
        cancel: &CancellationToken,
    ) -> (Report, Option<Halt>) {
        const LANGUAGE: &str = oi_protocol::SCREEN_LANGUAGE;
        let report = |text: String, images: Vec<ContentPart>| Report {
            call_id: Some(call_id.clone()),
            language: LANGUAGE.to_owned(),
            text,
            images,
        };
        let Some(os) = self.config.os.clone() else {
            return (
                report(
                    "Error: OS mode is off, so the screen cannot be used.".to_owned(),
                    Vec::new(),
                ),
                None,
            );
        };
        let description = match os.desktop.lock() {
            Ok(desktop) => desktop.describe(&action),
            Err(_) => action.describe(&|p| format!("({}, {})", p.x, p.y)),
        };
        let id = self.propose(LANGUAGE, &description);
        // Clicking or typing the same thing again is going in circles;
        // looking, pressing a key or scrolling again is not.
        if !action.observes()
            && !matches!(
                action,
                oi_computer::Action::Key { .. } | oi_computer::Action::Scroll { .. }
            )
        {
            self.guard.proposed(LANGUAGE, &description);
        }
        // A screen action cannot be edited: an edit is taken as a yes.
        let text = match self
            .gate(id, LANGUAGE, &description, Vec::new(), skip_rest, cancel)
            .await
        {
            Gate::Go { .. } => None,
            Gate::AfterRefusal(_) => {
                Some("Not done: an earlier action of this reply was not approved.")
            }
            Gate::Refused(SkipReason::NoApprover) => Some(
                "Not done: this session cannot ask the user to approve screen actions (no terminal). The user can rerun with `--yes`.",
            ),
            Gate::Refused(_) => Some("The user declined this action."),
            Gate::Interrupted => {
                return (
                    report(
                        "Not done: the user interrupted the task.".to_owned(),
                        Vec::new(),
                    ),
                    Some(Halt::Interrupted),
                );
            }
        };
        if let Some(text) = text {
            return (report(text.to_owned(), Vec::new()), None);
        }
        self.emit(Event::RunStarted {
            id,
            language: LANGUAGE.to_owned(),
            code: description,
        });
        let started = Instant::now();
        let stop = cancel.clone();
        let desktop = std::sync::Arc::clone(&os.desktop);
        let done = tokio::task::spawn_blocking(move || {
            let mut desktop = desktop.lock().map_err(|_| {
                oi_computer::ComputerError::Protocol(
                    "the desktop is unusable after an earlier failure".to_owned(),
                )
            })?;
            desktop.perform(&action, oi_computer::Perform::for_model(), &|| {
                stop.is_cancelled()
            })
        })
        .await
        .unwrap_or_else(|e| Err(oi_computer::ComputerError::Protocol(e.to_string())));
        let (status, text, images, halt) = match done {
            Ok(outcome) => {
                let mut images = Vec::new();
                if let Some(shot) = &outcome.screenshot {
                    self.emit(Event::Image {
                        id,
                        path: shot.path.display().to_string(),
                        media_type: "image/png".to_owned(),
                    });
                    if self.config.vision {
                        images.push(ContentPart::Image {
                            media_type: "image/png".to_owned(),
                            data: base64::engine::general_purpose::STANDARD.encode(&shot.png),
                        });
                    }
                }
                (RunStatus::Ok, outcome.text, images, None)
            }
            Err(oi_computer::ComputerError::Stopped) => (
                RunStatus::Interrupted,
                "Stopped: the user interrupted the action.".to_owned(),
                Vec::new(),
                Some(Halt::Interrupted),
            ),
            Err(error @ oi_computer::ComputerError::FailSafe) => {
                let message = error.to_string();
                (
                    RunStatus::Failed {
                        exit_code: None,
                        error: Some(message.clone()),
                    },
                    format!("Stopped by the user: {message}"),
                    Vec::new(),
                    Some(Halt::FailSafe),
                )
            }
            Err(error) => {
                let message = error.to_string();
                (
                    RunStatus::Failed {
                        exit_code: None,
                        error: Some(message.clone()),
                    },
                    format!("Error: {message}"),
                    Vec::new(),
                    None,
                )
            }
        };
        self.guard.ran(&status, &text);
        self.emit(Event::RunFinished {
            id,
            status,
            duration_ms: started.elapsed().as_millis() as u64,
            output_bytes: 0,
        });
        (report(text, images), halt)
    }
}
