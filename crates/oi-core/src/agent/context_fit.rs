//! Keeping the conversation within the model's context window (see
//! [`crate::context`]): the window, and cutting and summarizing when the
//! next request would not fit.

use futures::StreamExt;
use oi_protocol::{ContentPart, Event, Message};
use oi_providers::StreamEvent;
use tokio_util::sync::CancellationToken;

use super::{Session, sleep_until};

impl Session {
    /// The model's context window: configured; else what the server says
    /// (asked once, if `ask_server_window`); else the catalog's; else 8192.
    pub(super) async fn context_window(&mut self) -> u32 {
        if let Some(window) = self.config.context_window {
            return window;
        }
        if self.config.ask_server_window && self.probed_window.is_none() {
            let model = self.config.model.clone();
            self.probed_window = Some(self.client.context_window(&model).await);
        }
        self.probed_window
            .flatten()
            .or(self.config.catalog_window)
            .unwrap_or(crate::context::DEFAULT_CONTEXT_WINDOW)
    }

    /// Makes the conversation fit the context window (see
    /// [`crate::context`]); with `force`, makes it smaller even if it fits.
    /// An error when it cannot be made to fit.
    pub(super) async fn fit_context(
        &mut self,
        force: bool,
        cancel: &CancellationToken,
    ) -> Result<(), String> {
        use crate::context::{KEEP_RECENT, input_budget, rebuild, shrink_outputs, split_point};
        let window = self.context_window().await;
        let budget = input_budget(window, self.config.max_tokens);
        let before = self.next_request_tokens();
        if !force && before <= budget {
            return Ok(());
        }
        // Forced (the server refused, or /compact): only the last exchange
        // stays as it is.
        let keep = if force { 2 } else { KEEP_RECENT };
        let recent_start = self.history.len().saturating_sub(keep);
        let mut shrunk = shrink_outputs(&mut self.history, recent_start, self.task_index);
        let mut now = self.next_request_tokens();
        let mut summarized = 0;
        if (force || now > budget)
            && let Some(keep_from) = split_point(&self.history, keep)
        {
            // The task stays word for word; a summary an earlier
            // compaction put before it, and what followed it, are
            // summarized again.
            let old: Vec<Message> = self.history[..keep_from]
                .iter()
                .enumerate()
                .filter_map(|(i, m)| match m {
                    Message::User { content } if Some(i) == self.task_index => {
                        let others = crate::context::outside_task(content);
                        (!others.is_empty()).then_some(Message::User { content: others })
                    }
                    _ if Some(i) == self.task_index => None,
                    _ => Some(m.clone()),
                })
                .collect();
            if !old.is_empty() {
                let summary = self.summarize(&old, window, cancel).await?;
                let first_kept_is_user =
                    matches!(self.history.get(keep_from), Some(Message::User { .. }));
                self.history = rebuild(&self.history, keep_from, self.task_index, &summary);
                self.task_index = self.task_index.map(|task| {
                    if task < keep_from || first_kept_is_user {
                        task.saturating_sub(keep_from)
                    } else {
                        task - keep_from + 1
                    }
                });
                self.history_epoch += 1;
                self.undo_points.clear();
                summarized = old.len();
                now = self.next_request_tokens();
            }
        }
        if now > budget {
            // Last resort: the recent outputs too.
            let all = self.history.len();
            shrunk += shrink_outputs(&mut self.history, all, self.task_index);
            now = self.next_request_tokens();
        }
        if shrunk > 0 || summarized > 0 {
            self.emit(Event::Compacted {
                before_tokens: before,
                after_tokens: now,
                context_window: window,
                shrunk_outputs: shrunk,
                summarized_messages: summarized,
            });
        } else if force {
            return Err(
                "nothing to compact: no old outputs or earlier turns to summarize".to_owned(),
            );
        }
        if now > budget {
            return Err(format!(
                "the conversation is about {now} tokens even after compaction, more than the {budget} a context window of {window} tokens leaves for it"
            ));
        }
        Ok(())
    }

    /// A summary of `messages` by the model; if the model cannot make one,
    /// a list of what the user asked.
    async fn summarize(
        &mut self,
        messages: &[Message],
        window: u32,
        cancel: &CancellationToken,
    ) -> Result<String, String> {
        const SUMMARY_TOKENS: u32 = 600;
        let budget = crate::context::input_budget(window, Some(SUMMARY_TOKENS));
        // 3 characters per token, less the instructions.
        let chars = usize::try_from(budget.saturating_mul(3))
            .unwrap_or(usize::MAX)
            .saturating_sub(2000);
        let text = crate::context::render_for_summary(messages, 2000, chars);
        let request = crate::context::summary_request(&self.config.model, &text, SUMMARY_TOKENS);
        let mut stream = self.client.stream(request);
        let mut summary = String::new();
        let deadline = self.deadline();
        let failure = loop {
            let item = tokio::select! {
                item = stream.next() => item,
                () = cancel.cancelled() => return Err("interrupted while summarizing the conversation".to_owned()),
                () = sleep_until(deadline) => return Err("the task's time limit (`max_time`) passed while summarizing the conversation".to_owned()),
            };
            match item {
                Some(Ok(StreamEvent::TextDelta(delta))) => summary.push_str(&delta),
                Some(Ok(StreamEvent::Restart)) => summary.clear(),
                Some(Ok(StreamEvent::Completed { usage, .. })) => {
                    self.request_completed(usage);
                    break None;
                }
                Some(Ok(_)) => {}
                Some(Err(error)) => break Some(error.to_string()),
                None => break Some("the reply ended early".to_owned()),
            }
        };
        let summary = summary.trim().to_owned();
        if failure.is_none() && !summary.is_empty() {
            return Ok(summary);
        }
        let asked: Vec<String> = messages
            .iter()
            .filter_map(|m| match m {
                Message::User { content } => content.first().and_then(ContentPart::as_text),
                _ => None,
            })
            .map(|t| t.chars().take(200).collect())
            .collect();
        self.emit(Event::Warning {
            message: format!(
                "the model could not summarize the earlier conversation ({}); it is replaced by a list of what was asked",
                failure.unwrap_or_else(|| "its summary was empty".to_owned())
            ),
        });
        Ok(format!(
            "Earlier, the user asked:\n- {}",
            asked.join("\n- ")
        ))
    }
}
