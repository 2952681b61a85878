//! How each agent event is shown: a few lines of text (or a code box, an
//! image, output), grouped by what the event is about — the reply, a run,
//! the session, the end of a task.

use std::io::{self, Write};

use oi_protocol::{
    ApprovalPolicy, Event, FileChangeKind, OutputStream, RunStatus, SkipReason, StopReason,
};

use super::{CYAN, DIM, Mode, RED, View, YELLOW};
use crate::filter::TerminalFilter;
use crate::markdown::MarkdownStream;

impl<W: Write> View<W> {
    /// Shows one event.
    pub fn event(&mut self, event: &Event) -> io::Result<()> {
        if self.thinking && !matches!(event, Event::ReasoningDelta { .. }) {
            self.thought_done()?;
        }
        if matches!(
            event,
            Event::TaskComplete { .. } | Event::ApprovalRequested { .. } | Event::Error { .. }
        ) {
            if self.mode == Mode::Live && !self.reply.is_empty() {
                self.reply_done()?;
            }
            self.flush_partial()?;
            self.clear_status()?;
        }
        match event {
            Event::TaskStarted
            | Event::ModelRequest { .. }
            | Event::TextDelta { .. }
            | Event::ReasoningDelta { .. }
            | Event::AssistantMessage { .. }
            | Event::ReplyRestarted
            | Event::Retrying { .. }
            | Event::RawRequest { .. } => self.reply_event(event),
            Event::CodeProposed { .. }
            | Event::ApprovalRequested { .. }
            | Event::RunStarted { .. }
            | Event::OutputDelta { .. }
            | Event::OutputSkipped { .. }
            | Event::InputRequested { .. }
            | Event::Image { .. }
            | Event::CheckpointSaved { .. }
            | Event::FilesChanged { .. }
            | Event::SandboxDenied { .. }
            | Event::RunFinished { .. }
            | Event::RunSkipped { .. } => self.run_event(event),
            Event::Warning { message } => self.line(YELLOW, &format!("warning: {message}")),
            Event::Error { message, hint } => self.error(message, hint.as_deref()),
            Event::Undone {
                checkpoint,
                message,
                changes,
                previous,
            } => {
                self.line(
                    CYAN,
                    &format!("↶ undone: the workspace is back to {message} ({checkpoint})"),
                )?;
                if changes.is_empty() {
                    self.line(DIM, "  (no file needed changing)")?;
                }
                for change in changes {
                    self.line(DIM, &format!("  {change}"))?;
                }
                self.line(
                    DIM,
                    &format!("  to undo this: interpreter checkpoints restore {previous}"),
                )
            }
            Event::TaskComplete { reason, .. } => match stop_text(reason) {
                Some((message, hint)) => self.error(&message, hint),
                None if *reason == StopReason::Interrupted => self.line(YELLOW, "interrupted"),
                None => Ok(()),
            },
            _ => match session_text(event) {
                Some((style, text)) => self.line(style, &text),
                None => Ok(()),
            },
        }
    }

    /// The model's reply as it streams, and the requests behind it.
    fn reply_event(&mut self, event: &Event) -> io::Result<()> {
        match event {
            Event::TextDelta { delta } => {
                self.streamed_text = true;
                match self.mode {
                    Mode::Plain => self.write_raw(delta),
                    Mode::Live => self.reply_delta(delta),
                }
            }
            Event::ReasoningDelta { delta } => self.thought_delta(delta),
            Event::AssistantMessage { .. } => match self.mode {
                Mode::Plain => self.ensure_line_start(),
                Mode::Live => {
                    self.reply_done()?;
                    self.clear_status()
                }
            },
            Event::TaskStarted | Event::ModelRequest { .. } => {
                self.reply_text.clear();
                self.set_status("thinking")
            }
            Event::ReplyRestarted => {
                self.reply = MarkdownStream::new();
                self.line(
                    YELLOW,
                    "(the connection broke and the reply started over; it continues here)",
                )
            }
            Event::Retrying {
                attempt,
                max_attempts,
                delay_ms,
                reason,
            } => {
                let secs = *delay_ms as f64 / 1000.0;
                self.line(
                    YELLOW,
                    &format!(
                        "⟳ {reason}; retrying in {secs:.1} s (attempt {attempt} of {max_attempts})"
                    ),
                )
            }
            Event::RawRequest { body } => {
                let text = serde_json::to_string_pretty(body).unwrap_or_default();
                self.line(DIM, &format!("→ request:\n{text}"))
            }
            _ => Ok(()),
        }
    }

    /// The model's reasoning as it streams: dimmed, a line at a time, the
    /// first one marked.
    fn thought_delta(&mut self, delta: &str) -> io::Result<()> {
        if !self.thinking {
            self.thinking = true;
            self.set_status("thinking")?;
            self.thought = "thinking: ".to_owned();
        }
        self.thought.push_str(delta);
        while let Some(end) = self.thought.find('\n') {
            let line: String = self.thought.drain(..=end).collect();
            let line = plain_text(line.trim_end());
            if !line.trim().is_empty() {
                self.line(ITALIC_DIM, &line)?;
            }
        }
        Ok(())
    }

    /// The end of the reasoning: its last line is shown.
    fn thought_done(&mut self) -> io::Result<()> {
        self.thinking = false;
        let rest = plain_text(std::mem::take(&mut self.thought).trim_end());
        if rest.trim().is_empty() {
            return Ok(());
        }
        self.line(ITALIC_DIM, &rest)
    }

    /// A run of code: proposed, asked about, running, its output, its end.
    fn run_event(&mut self, event: &Event) -> io::Result<()> {
        match event {
            Event::CodeProposed { language, code, .. } if self.mode == Mode::Live => {
                self.clear_status()?;
                self.code_box(language, code)
            }
            Event::CodeProposed { language, code, .. } => {
                self.ensure_line_start()?;
                let rule = "─".repeat(40usize.saturating_sub(language.chars().count() + 4));
                let mut text = format!("{DIM}── {language} {rule}{DIM:#}\n{code}");
                if !code.ends_with('\n') {
                    text.push('\n');
                }
                text.push_str(&format!("{DIM}{}{DIM:#}\n", "─".repeat(40)));
                self.write_raw(&text)
            }
            Event::ApprovalRequested { risks, .. } => {
                self.asked_risky = !risks.is_empty();
                for risk in risks {
                    self.line(RED, &format!("⚠ risky: {risk}"))?;
                }
                Ok(())
            }
            Event::RunStarted { language, .. } => {
                self.filters = [TerminalFilter::default(), TerminalFilter::default()];
                self.set_status(format!("running {language}"))
            }
            Event::OutputDelta { stream, text, .. } => {
                let index = usize::from(*stream == OutputStream::Stderr);
                let text = self.filters[index].filter(text);
                match (self.mode, stream) {
                    (Mode::Live, _) => self.output(*stream, &text),
                    (Mode::Plain, OutputStream::Stdout) => self.write_raw(&text),
                    (Mode::Plain, OutputStream::Stderr) if text.is_empty() => Ok(()),
                    (Mode::Plain, OutputStream::Stderr) => {
                        self.write_raw(&format!("{RED}{text}{RED:#}"))?;
                        self.at_line_start = text.ends_with('\n');
                        Ok(())
                    }
                }
            }
            Event::OutputSkipped { bytes, .. } => self.line(
                DIM,
                &format!(
                    "[… {} of output skipped here: it came faster than it can be shown …]",
                    human_bytes(*bytes)
                ),
            ),
            Event::InputRequested { .. } => {
                self.flush_partial()?;
                self.clear_status()?;
                self.line(
                    YELLOW,
                    "(the program waits for input: type a line and press Enter; Ctrl-C stops it)",
                )
            }
            Event::Image { path, .. } => {
                self.flush_partial()?;
                self.inline_image(path)?;
                self.line(CYAN, &format!("image: {path}"))
            }
            Event::CheckpointSaved {
                checkpoint,
                skipped,
                ..
            } if !skipped.is_empty() => self.line(
                YELLOW,
                &format!(
                    "checkpoint {checkpoint}: left out for their size (they cannot be undone): {}",
                    skipped.join(", ")
                ),
            ),
            Event::FilesChanged { changes, .. } => {
                let listed: Vec<String> = changes
                    .iter()
                    .map(|c| {
                        let sign = match c.kind {
                            FileChangeKind::Added => '+',
                            FileChangeKind::Modified => '~',
                            FileChangeKind::Deleted => '-',
                        };
                        format!("{sign}{}", c.path)
                    })
                    .collect();
                let shown = listed.iter().take(MAX_FILES_SHOWN).cloned();
                let mut text = format!("changed: {}", shown.collect::<Vec<_>>().join(" "));
                if listed.len() > MAX_FILES_SHOWN {
                    text.push_str(&format!(" … and {} more", listed.len() - MAX_FILES_SHOWN));
                }
                self.line(DIM, &text)
            }
            Event::SandboxDenied { message, hint, .. } => {
                self.line(YELLOW, &format!("⊘ {message}"))?;
                self.line(CYAN, &format!("  hint: {hint}"))
            }
            Event::RunFinished {
                status,
                duration_ms,
                output_bytes,
                ..
            } => {
                self.flush_partial()?;
                self.clear_status()?;
                let (style, text) = finished_text(status, *duration_ms, *output_bytes);
                self.line(style, &text)
            }
            Event::RunSkipped { reason, .. } => {
                self.line(YELLOW, &skipped_text(reason, self.asked_risky))
            }
            _ => Ok(()),
        }
    }
}

const ITALIC_DIM: anstyle::Style = anstyle::Style::new().dimmed().italic();

/// Files a run changed that are named; the rest are counted.
const MAX_FILES_SHOWN: usize = 8;

/// The model's text with the characters that could drive the terminal
/// (escape sequences, other controls) made visible.
fn plain_text(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '\t' => c,
            c if c.is_control() => char::from_u32(0x2400 + c as u32)
                .filter(|_| (c as u32) < 0x20)
                .unwrap_or('\u{fffd}'),
            c => c,
        })
        .collect()
}

/// How a run ended, in one line.
fn finished_text(
    status: &RunStatus,
    duration_ms: u64,
    output_bytes: u64,
) -> (anstyle::Style, String) {
    let secs = duration_ms as f64 / 1000.0;
    let size = if output_bytes >= 1024 * 1024 {
        format!(", {} of output", human_bytes(output_bytes))
    } else {
        String::new()
    };
    match status {
        RunStatus::Ok => (DIM, format!("✓ ran in {secs:.1} s{size}")),
        RunStatus::Failed {
            exit_code: Some(code),
            ..
        } => (RED, format!("✗ exit code {code} ({secs:.1} s)")),
        RunStatus::Failed { error, .. } => (
            RED,
            format!("✗ failed: {}", error.as_deref().unwrap_or("error")),
        ),
        RunStatus::Crashed { reason } => (
            RED,
            format!("✗ {reason}; its state was lost (the next run starts afresh)"),
        ),
        RunStatus::Interrupted => (YELLOW, "✗ interrupted".to_owned()),
        RunStatus::TimedOut {
            seconds,
            kernel_restarted: true,
        } => (
            YELLOW,
            format!("✗ stopped after {seconds} s (run_timeout); it did not respond, so its kernel was restarted and its state lost"),
        ),
        RunStatus::TimedOut { seconds, .. } => {
            (YELLOW, format!("✗ stopped after {seconds} s (run_timeout)"))
        }
        RunStatus::WaitingForInput { .. } => (
            YELLOW,
            "✗ stopped: the program waited for input, which nobody can type here (the model is told)".to_owned(),
        ),
    }
}

/// Why code was not run, in one line; `asked_risky` when the code held
/// was found risky (so `--yes` could not let it through).
fn skipped_text(reason: &SkipReason, asked_risky: bool) -> String {
    match reason {
        SkipReason::Declined => "– not run (declined)".to_owned(),
        SkipReason::NoApprover if asked_risky => {
            "– not run: risky code needs a person's approval, even with `--yes`, and there is no terminal to ask".to_owned()
        }
        SkipReason::NoApprover => {
            "– not run: approval needed, but there is no terminal to ask (pass `--yes` to run code without asking)".to_owned()
        }
        SkipReason::Unavailable { message } => format!("– not run: {message}"),
    }
}

/// A task stopped by a limit or the fail-safe, as an error with its hint
/// (`None` when it ended normally, failed — its error was shown — or was
/// interrupted).
fn stop_text(reason: &StopReason) -> Option<(String, Option<&'static str>)> {
    Some(match reason {
        StopReason::MaxTurns { limit } => (
            format!(
                "stopped after {limit} model requests (the --max-turns limit); the task may be unfinished"
            ),
            Some(
                "raise the limit with `--max-turns N`, or check whether the model is stuck in a loop",
            ),
        ),
        StopReason::Budget {
            limit_usd,
            spent_usd,
            next_usd,
        } => (
            format!(
                "stopped before the next model request: it would take the session past its budget of ${limit_usd:.2} (spent ${spent_usd:.4}, next request about ${next_usd:.4})"
            ),
            Some(
                "raise the budget with `--max-budget USD` (config `max_budget`), or continue in a new session",
            ),
        ),
        StopReason::LoopGuard { summary, .. } => (
            format!("stopped: the task was going in circles: {summary}"),
            Some(
                "rephrase the task or give the model a hint; the limit is `loop_guard.max_repeats`",
            ),
        ),
        StopReason::TimeLimit { limit_secs } => (
            format!("stopped: the task reached its time limit of {limit_secs} s (max_time)"),
            Some("raise it with `--max-time SECONDS` (config `max_time`; 0 means no limit)"),
        ),
        StopReason::FailSafe => (
            "stopped: the mouse was moved into a corner of the screen (the OS-mode fail-safe)"
                .to_owned(),
            Some("move the mouse away from the corners before the next task"),
        ),
        StopReason::Done | StopReason::Failed | StopReason::Interrupted => return None,
    })
}

/// What the session's own events say (the answers to slash commands),
/// in one or a few lines; `None` for events shown elsewhere or not at all.
fn session_text(event: &Event) -> Option<(anstyle::Style, String)> {
    Some(match event {
        Event::ModelChanged { model } => (DIM, format!("model: {model}")),
        Event::HarnessChanged { harness } => (DIM, format!("harness: {harness}")),
        Event::ApprovalChanged { policy } => (
            DIM,
            match policy {
                ApprovalPolicy::Auto => "auto-run on: code runs without asking, except risky code",
                ApprovalPolicy::Ask => "auto-run off: every run asks first",
                ApprovalPolicy::Never => "code runs without asking, risky code included",
            }
            .to_owned(),
        ),
        Event::SessionReset => (
            DIM,
            "new conversation: the history is cleared and the kernels restart on the next run"
                .to_owned(),
        ),
        Event::Compacted {
            before_tokens,
            after_tokens,
            context_window,
            shrunk_outputs,
            summarized_messages,
        } => {
            let mut what = Vec::new();
            if *shrunk_outputs > 0 {
                what.push(format!("{shrunk_outputs} old outputs cut to head and tail"));
            }
            if *summarized_messages > 0 {
                what.push(format!("{summarized_messages} earlier messages summarized"));
            }
            (
                DIM,
                format!(
                    "context: about {before_tokens} → {after_tokens} tokens of {context_window} ({})",
                    what.join(", ")
                ),
            )
        }
        Event::Stats { .. } => (
            DIM,
            [context_text(event), cost_text(event)]
                .into_iter()
                .flatten()
                .collect::<Vec<_>>()
                .join("\n"),
        ),
        Event::Saved { path, messages } => (DIM, format!("saved {messages} messages to {path}")),
        Event::Loaded { path, messages } => {
            (DIM, format!("loaded {messages} messages from {path}"))
        }
        _ => return None,
    })
}

/// What `/tokens` says of a `Stats` event: the context used against the
/// window, and what the next request would cost (`None` for other events).
pub fn context_text(stats: &Event) -> Option<String> {
    let Event::Stats {
        context_tokens,
        context_window,
        next_request_usd,
        messages,
        ..
    } = stats
    else {
        return None;
    };
    let window = match context_window {
        Some(w) => format!(
            "{context_tokens} of {w} tokens ({:.0}% of the context window)",
            *context_tokens as f64 * 100.0 / f64::from((*w).max(1))
        ),
        None => format!("{context_tokens} tokens (the model's context window is unknown)"),
    };
    let next = next_request_usd.map_or_else(
        || "unknown (no prices for this model)".to_owned(),
        |c| format!("about ${c:.4}"),
    );
    Some(format!(
        "context: {window}, {messages} messages\nnext request: {next}"
    ))
}

/// What `/cost` says of a `Stats` event: the session's requests, tokens
/// and cost (`None` for other events).
pub fn cost_text(stats: &Event) -> Option<String> {
    let Event::Stats {
        total,
        cost_usd,
        requests,
        ..
    } = stats
    else {
        return None;
    };
    let cost = cost_usd.map_or_else(
        || "unknown (no prices for this model)".to_owned(),
        |c| format!("${c:.4}"),
    );
    Some(format!(
        "this session: {requests} requests, {} tokens in ({} from the cache), {} out\ncost: {cost}",
        total.input_tokens, total.cached_input_tokens, total.output_tokens
    ))
}

/// `512 B`, `3.4 KB`, `200.0 MB`, `1.2 GB`.
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KB", "MB", "GB", "TB"];
    if bytes < 1000 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1000.0;
    let mut unit = 0;
    while value >= 1000.0 && unit + 1 < UNITS.len() {
        value /= 1000.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::View;
    use oi_protocol::RunId;
    use pretty_assertions::assert_eq;

    fn render(events: &[Event]) -> String {
        let mut r = View::new(Vec::new());
        for e in events {
            r.event(e).unwrap();
        }
        String::from_utf8(r.into_inner()).unwrap()
    }

    #[test]
    fn shows_code_output_and_how_runs_ended() {
        let id = RunId(1);
        let text = render(&[
            Event::TextDelta {
                delta: "Let me look.".into(),
            },
            Event::CodeProposed {
                id,
                language: "python".into(),
                code: "print(1)".into(),
            },
            Event::RunStarted {
                id,
                language: "python".into(),
                code: "print(1)".into(),
            },
            Event::OutputDelta {
                id,
                stream: OutputStream::Stdout,
                text: "1".into(),
            },
            Event::RunFinished {
                id,
                status: RunStatus::Failed {
                    exit_code: Some(2),
                    error: None,
                },
                duration_ms: 1500,
                output_bytes: 1,
            },
        ]);
        let expected = format!(
            "Let me look.\n{DIM}── python {rule}{DIM:#}\nprint(1)\n{DIM}{line}{DIM:#}\n1\n{RED}✗ exit code 2 (1.5 s){RED:#}\n",
            rule = "─".repeat(30),
            line = "─".repeat(40)
        );
        assert_eq!(text, expected);
    }

    #[test]
    fn reasoning_shows_dimmed_before_the_reply_and_changes_after_a_run() {
        let id = RunId(1);
        let text = render(&[
            Event::ReasoningDelta {
                delta: "The user wants\na sum\x1b[2J".into(),
            },
            Event::ReasoningDelta {
                delta: " of two.".into(),
            },
            Event::TextDelta { delta: "4".into() },
            Event::FilesChanged {
                id,
                changes: (0..10)
                    .map(|i| oi_protocol::FileChange {
                        path: format!("f{i}.txt"),
                        kind: if i == 0 {
                            FileChangeKind::Deleted
                        } else {
                            FileChangeKind::Added
                        },
                    })
                    .collect(),
            },
        ]);
        let expected = format!(
            "{ITALIC_DIM}thinking: The user wants{ITALIC_DIM:#}\n{ITALIC_DIM}a sum\u{241b}[2J of two.{ITALIC_DIM:#}\n4\n{DIM}changed: -f0.txt +f1.txt +f2.txt +f3.txt +f4.txt +f5.txt +f6.txt +f7.txt … and 2 more{DIM:#}\n"
        );
        assert_eq!(text, expected);
    }

    #[test]
    fn output_cannot_drive_the_terminal() {
        let mut f = TerminalFilter::default();
        // Colours pass; clearing the screen, moving the cursor, setting the
        // title and ringing the bell do not.
        assert_eq!(
            f.filter("\x1b[31mred\x1b[0m \x1b[2J\x1b[H\x1b]0;pwned\x07ok\x07\n"),
            "\x1b[31mred\x1b[0m ok\u{2407}\n"
        );
        // A sequence split between pieces is still recognised.
        assert_eq!(f.filter("a\x1b["), "a");
        assert_eq!(f.filter("1;32"), "");
        assert_eq!(f.filter("mgreen\x1b]8;;http://x\x1b"), "\x1b[1;32mgreen");
        assert_eq!(f.filter("\\link"), "link");
        // Binary bytes (decoded lossily upstream) become visible symbols.
        assert_eq!(
            f.filter("\0\x01\u{fffd}\x7f\u{9b}2J"),
            "\u{2400}\u{2401}\u{fffd}\u{2421}\u{fffd}2J"
        );
        // Progress bars keep their carriage returns and backspaces.
        assert_eq!(f.filter("10%\r20%\x08\t|\n"), "10%\r20%\x08\t|\n");
    }

    #[test]
    fn skipped_output_and_big_runs_are_summarised() {
        let id = RunId(1);
        let text = render(&[
            Event::OutputSkipped {
                id,
                bytes: 123_456_789,
            },
            Event::RunFinished {
                id,
                status: RunStatus::Ok,
                duration_ms: 2000,
                output_bytes: 200_000_000,
            },
        ]);
        assert!(
            text.contains("[… 123.5 MB of output skipped here"),
            "{text}"
        );
        assert!(
            text.contains("✓ ran in 2.0 s, 200.0 MB of output"),
            "{text}"
        );
        assert_eq!(human_bytes(999), "999 B");
        assert_eq!(human_bytes(1_500), "1.5 KB");
        assert_eq!(human_bytes(2_000_000_000), "2.0 GB");
    }

    #[test]
    fn errors_come_with_their_hint() {
        let text = render(&[Event::Error {
            message: "boom".into(),
            hint: Some("try again".into()),
        }]);
        assert!(
            text.contains("boom\n") && text.contains("try again\n"),
            "{text}"
        );
    }
}
